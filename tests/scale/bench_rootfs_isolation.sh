#!/bin/bash
# N VMs at once on one rootfs: each restored from one snapshot of a
# rootfs guest, each writes its own number to the same file, reads it
# back after the others wrote theirs, and is saved as a diff (whose disk
# blocks are what the VM wrote). Checks that no VM saw another's file,
# that the image is unchanged (md5), and prints the disk written per VM
# (median, from the diffs' disk.0) and the wall time.
# Usage: bench_rootfs_isolation.sh COLDSTART KERNEL INITRD ROOTFS [N]
#   (N default 50). Boots a Linux guest: inside `coldstart emulate` on
# a PVM host.
set -u
cs=$1 kernel=$2 initrd=$3 rootfs=$4 n=${5:-50}
work=$(mktemp -d /var/tmp/coldstart-iso-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
sum=$(md5sum <"$rootfs")
"$cs" snapshot create "$work/s" --kernel "$kernel" --initrd "$initrd" \
	--rootfs "$rootfs" --timeout 300s --quiet || fail "snapshot create"
t0=$(date +%s%N)
for i in $(seq 1 "$n"); do
	"$cs" snapshot restore "$work/s" --timeout 600s --json \
		--save "$work/d$i" --diff \
		--exec "cat /root/who 2>/dev/null; echo $i >/root/who; sleep 5; cat /root/who" \
		>"$work/out$i" 2>"$work/err$i" &
done
wait
t1=$(date +%s%N)
python3 - "$work" "$n" <<'PY' || fail "see above"
import json, statistics, sys
work, n = sys.argv[1], int(sys.argv[2])
bad, disk = [], []
for i in range(1, n + 1):
    try:
        d = json.load(open(f"{work}/out{i}"))
    except Exception as e:
        bad.append(f"VM {i}: no result ({open(f'{work}/err{i}').read()[-200:]})")
        continue
    out = d.get("exec", {}).get("stdout")
    if out != f"{i}\n":
        bad.append(f"VM {i} read {out!r}, not only its own {i}")
    if "saved" not in d:
        bad.append(f"VM {i}: not saved (outcome {d.get('outcome')}, "
                   f"{d.get('reason')!r}; {open(f'{work}/err{i}').read()[-200:]!r})")
        continue
    disk.append(d["saved"]["disk_bytes"])
for b in bad:
    print("FAIL:", b)
if disk:
    print(f"{len(disk)} VMs: disk written per VM median {statistics.median(disk) / 1024:.0f} KiB "
          f"(min {min(disk) / 1024:.0f}, max {max(disk) / 1024:.0f})")
sys.exit(1 if bad else 0)
PY
[ "$(md5sum <"$rootfs")" = "$sum" ] || fail "the image changed"
echo "$n VMs on one image, none saw another's file, image unchanged; wall $(((t1 - t0) / 1000000)) ms for all"
