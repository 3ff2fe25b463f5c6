#!/bin/bash
# N VMs at once on one rootfs: each restored from one snapshot of a
# rootfs guest, each writes its own number to the same file, reads it
# back after the others wrote theirs, and is saved as a diff (whose disk
# blocks are what the VM wrote). Checks that no VM saw another's file,
# that the image is unchanged (md5), and prints the disk written per VM
# (median, from the diffs' disk.0) and the wall time. The image is
# checked even when a VM failed; a failed VM's result, stderr and
# console are copied to $ISO_KEEP (a directory) when it is set.
# Usage: bench_rootfs_isolation.sh COLDSTART KERNEL INITRD ROOTFS [N [STRATEGY]]
#   (N default 50, STRATEGY: a --mem-restore name, default the restore's
# own). Boots a Linux guest: inside `coldstart emulate` on a PVM host.
set -u
cs=$1 kernel=$2 initrd=$3 rootfs=$4 n=${5:-50} strategy=${6:-}
work=$(mktemp -d /var/tmp/coldstart-iso-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
sum=$(md5sum <"$rootfs")
echo "snapshot of the rootfs guest..." >&2
"$cs" snapshot create "$work/s" --kernel "$kernel" --initrd "$initrd" \
	--rootfs "$rootfs" --timeout 300s --quiet || fail "snapshot create"
t0=$(date +%s%N)
for i in $(seq 1 "$n"); do
	"$cs" snapshot restore "$work/s" --timeout 600s --json \
		${strategy:+--mem-restore "$strategy"} --console "$work/con$i" \
		--save "$work/d$i" --diff \
		--exec "cat /root/who 2>/dev/null; echo $i >/root/who; sleep 5; cat /root/who" \
		>"$work/out$i" 2>"$work/err$i" &
done
# the restores take minutes in the emulated host: say how far they are
for i in $(seq 1 "$n"); do
	wait -n
	echo "$i of $n VMs done after $((($(date +%s%N) - t0) / 1000000000)) s" >&2
done
t1=$(date +%s%N)
python3 - "$work" "$n" "${ISO_KEEP:-}" <<'PY'
import json, os, shutil, statistics, sys
work, n, keep = sys.argv[1], int(sys.argv[2]), sys.argv[3]
bad, disk, failed = [], [], set()
for i in range(1, n + 1):
    before = len(bad)
    try:
        d = json.load(open(f"{work}/out{i}"))
    except Exception as e:
        bad.append(f"VM {i}: no result ({open(f'{work}/err{i}').read()[-200:]})")
        failed.add(i)
        continue
    out = d.get("exec", {}).get("stdout")
    if out != f"{i}\n":
        bad.append(f"VM {i} read {out!r}, not only its own {i}")
    if "saved" not in d:
        bad.append(f"VM {i}: not saved (outcome {d.get('outcome')}, "
                   f"{d.get('reason')!r}; {open(f'{work}/err{i}').read()[-200:]!r})")
        failed.add(i)
        continue
    disk.append(d["saved"]["disk_bytes"])
    if len(bad) > before:
        failed.add(i)
for i in sorted(failed if keep else ()):
    os.makedirs(keep, exist_ok=True)
    for f in ("out", "err", "con"):
        if os.path.exists(f"{work}/{f}{i}"):
            shutil.copy(f"{work}/{f}{i}", f"{keep}/{f}{i}")
    print(f"VM {i}: result, stderr and console kept in {keep}")
for b in bad:
    print("FAIL:", b)
if disk:
    print(f"{len(disk)} VMs: disk written per VM median {statistics.median(disk) / 1024:.0f} KiB "
          f"(min {min(disk) / 1024:.0f}, max {max(disk) / 1024:.0f})")
sys.exit(1 if bad else 0)
PY
vms=$?
[ "$(md5sum <"$rootfs")" = "$sum" ] || fail "the image changed"
[ "$vms" = 0 ] || fail "see above (the image is unchanged)"
echo "$n VMs on one image, none saw another's file, image unchanged; wall $(((t1 - t0) / 1000000)) ms for all"
