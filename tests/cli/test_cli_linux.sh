#!/bin/bash
# `coldstart run --kernel` as a black box: input errors (any host, before
# KVM), the PVM refusal, and boots of the ring-0 test kernel as ELF and as
# a synthetic bzImage (hosts with /dev/kvm); then `bench boot` and `bench
# rate` over the test kernel.
# Usage: test_cli_linux.sh COLDSTART TESTKERNEL.elf TESTKERNEL.bin
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
TK_BIN=$3
scratch

# A bzImage header around the flat test kernel (protocol 2.15, 64-bit
# entry, 4 setup sectors, loaded at 16 MiB); $2 patches one field.
mkbz() {
	python3 - "$TK_BIN" "$1" "${2:-}" <<'PY'
import struct, sys
body = open(sys.argv[1], 'rb').read()
s = bytearray(5 * 512)
s[0x1f1] = 4
s[0x1fe:0x200] = b'\x55\xaa'
s[0x201] = 0x6a
s[0x202:0x206] = b'HdrS'
struct.pack_into('<H', s, 0x206, 0x020f)
s[0x211] = 1
struct.pack_into('<I', s, 0x22c, 0x7fffffff)
struct.pack_into('<H', s, 0x236, 1)
struct.pack_into('<I', s, 0x238, 2047)
struct.pack_into('<Q', s, 0x258, 0x1000000)
struct.pack_into('<I', s, 0x260, 1 << 20)
if sys.argv[3] == 'magic':
    s[0x202:0x206] = b'HdrX'
elif sys.argv[3] == 'old':
    struct.pack_into('<H', s, 0x206, 0x020a)
elif sys.argv[3] == 'no64':
    struct.pack_into('<H', s, 0x236, 0)
open(sys.argv[2], 'wb').write(bytes(s) + body)
PY
}

mkbz "$tmp/bz"
mkbz "$tmp/bz-magic" magic
mkbz "$tmp/bz-old" old
mkbz "$tmp/bz-no64" no64
head -c 300 "$tmp/bz" > "$tmp/bz-short"
truncate -s 40M "$tmp/initrd-40M"
printf 'x' > "$tmp/initrd-1"

# Input errors: a clear message and exit 1, whatever the host.
expect 1 "kernel $tmp/none: No such file or directory" run --kernel "$tmp/none"
expect 1 "is not a regular file" run --kernel "$tmp"
expect 1 'no "HdrS" magic at offset 0x202' run --kernel "$tmp/bz-magic"
expect 1 'protocol 2.10 is older than 2.12' run --kernel "$tmp/bz-old"
expect 1 'no 64-bit entry point' run --kernel "$tmp/bz-no64"
expect 1 'too short for a bzImage setup header' run --kernel "$tmp/bz-short"
expect 1 'no boot flag 0xaa55' run --kernel /etc/passwd
expect 1 "initrd $tmp/initrd-40M: initrd too large for guest memory" \
	run --kernel "$TK_ELF" --initrd "$tmp/initrd-40M" --mem 32M
expect 1 'initrd too large for guest memory' \
	run --kernel "$tmp/bz" --initrd "$tmp/initrd-40M" --mem 32M
expect 1 "initrd $tmp/none: No such file" run --kernel "$TK_ELF" --initrd "$tmp/none"
expect 1 'the kernel needs guest memory up to 0x10[0-9a-f]{5} \(18 MiB\); raise --mem' \
	run --kernel "$TK_ELF" --mem 16M
expect 1 'up to 3 GiB' run --kernel "$TK_ELF" --mem 4G
expect 1 'the kernel accepts at most 2047' \
	run --kernel "$tmp/bz" --cmdline "$(head -c 3000 /dev/zero | tr '\0' x)"
# An ELF vmlinux has no cmdline_size: x86 Linux's 2048 bytes apply.
expect 1 'the kernel accepts at most 2047' \
	run --kernel "$TK_ELF" --allow-pvm --mem 32M --cmdline "$(head -c 2048 /dev/zero | tr '\0' x)"

# Usage errors: exit 2.
expect 2 '--initrd needs --kernel' run --initrd "$tmp/initrd-1"
expect 2 '--console needs --kernel' run --console "$tmp/c"
expect 2 '--ws applies to the probe guest' run --kernel "$TK_ELF" --ws 4M
expect 2 '--stop-at ready applies to the probe guest' \
	run --kernel "$TK_ELF" --stop-at ready
expect 2 '--stop-at boot needs --kernel' run --stop-at boot
expect 0 '--kernel FILE' run --help

# bench density with a Linux guest: usage errors exit 2, input errors 1,
# both before any VM.
expect 2 '--initrd needs --kernel' bench density --initrd "$tmp/initrd-1"
expect 2 '--cmdline needs --kernel' bench density --cmdline x
expect 2 '--ws is the probe guest.s workload' bench density --kernel "$TK_ELF" --ws 4M
expect 2 '--init is the probe guest.s workload' bench density --kernel "$TK_ELF" --init 4M
expect 2 '--settle must be above 0' bench density --kernel "$TK_ELF" --settle 0
expect 2 '--timeout must be above 0' bench density --kernel "$TK_ELF" --timeout 0
expect 2 '--timeout needs --kernel' bench density --timeout 10s
expect 1 "kernel $tmp/none: No such file" bench density --kernel "$tmp/none"
expect 1 "initrd $tmp/none: No such file" bench density --kernel "$TK_ELF" --initrd "$tmp/none"
expect 1 'raise --mem' bench density --kernel "$TK_ELF" --mem 16M
# --rootfs: only with --kernel, not with the probe guest's workload or
# --settle; --exec only with it; the image checked before any VM.
expect 2 '--rootfs needs --kernel' bench density --rootfs "$tmp/initrd-1"
expect 2 '--rootfs needs --kernel' bench density --rootfs "$tmp/initrd-1" --init 4M
expect 2 '--init is the probe guest.s workload' bench density --kernel "$TK_ELF" \
	--rootfs "$tmp/initrd-1" --init 4M
expect 2 '--ws is the probe guest.s workload' bench density --kernel "$TK_ELF" \
	--rootfs "$tmp/initrd-1" --ws 4M
expect 2 '--exec needs --rootfs' bench density --kernel "$TK_ELF" --exec true
expect 2 '--settle does not apply with --rootfs' bench density --kernel "$TK_ELF" \
	--rootfs "$tmp/initrd-1" --settle 2s
expect 2 '--rootfs needs an image' bench density --kernel "$TK_ELF" --rootfs ''
expect 1 "rootfs $tmp/none: No such file" bench density --kernel "$TK_ELF" --rootfs "$tmp/none"
expect 1 "rootfs $tmp: not a regular file" bench density --kernel "$TK_ELF" --rootfs "$tmp"
expect 1 'rootfs .*: 1 bytes is not a disk' bench density --kernel "$TK_ELF" \
	--rootfs "$tmp/initrd-1"

if [ -d /sys/module/kvm_pvm ]; then
	# PVM: an ordinary kernel is refused before any VM exists.
	expect 77 'PVM .* cannot boot here' run --kernel "$tmp/bz"
	expect 77 'allow-pvm' run --kernel "$TK_ELF" --json
	expect 77 'bench density --kernel: .*PVM' bench density --kernel "$TK_ELF" -n 1
fi

if [ ! -c /dev/kvm ]; then
	echo "no /dev/kvm: boots not tested"
	finish
	exit $?
fi

# Boots of the test kernel (it runs where ring 0 is interpreted, too).
expect 0 'outcome: completed: guest reset through the i8042' \
	run --kernel "$TK_ELF" --allow-pvm --mem 32M --cmdline "tk.signal=both"
for line in 'coldstart test kernel' 'cmdline: tk.signal=both' 'mptable: 1 cpus' \
	'cpuid: KVMKVMKVM' 'uart: 16550A' 'i8042: ok' 'workload done' \
	'boot complete' 'guest DONE' 'guest exit' 'teardown done' \
	'boot signal: port \(then also mmio\); guest-done signals: 1'; do
	grep -Eq "$line" "$out" || fail "output lacks '$line'"
done
grep -q BAD "$out" && { echo "FAIL: a test-kernel check failed"; cat "$out"; failed=$((failed + 1)); }

# A vmlinux linked high (segments and entry at virtual addresses, as
# Linux's are): the loader loads at p_paddr and translates the entry.
python3 - "$TK_ELF" "$tmp/high.elf" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
HIGH = 0xffffffff80000000
entry, phoff = struct.unpack_from('<QQ', b, 24)
phentsize, phnum = struct.unpack_from('<HH', b, 54)
struct.pack_into('<Q', b, 24, entry + HIGH)
for i in range(phnum):
    o = phoff + i * phentsize
    if struct.unpack_from('<I', b, o)[0] == 1:  # PT_LOAD
        paddr = struct.unpack_from('<Q', b, o + 24)[0]
        struct.pack_into('<Q', b, o + 16, paddr + HIGH)
open(sys.argv[2], 'wb').write(b)
PY
expect 0 'outcome: completed: guest reset through the i8042' \
	run --kernel "$tmp/high.elf" --allow-pvm --mem 32M
grep -q 'workload done' "$out" || fail "high-linked ELF: the test kernel did not run"
# Its entry moved outside every segment: refused, not jumped to.
python3 - "$tmp/high.elf" "$tmp/badentry.elf" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<Q', b, 24, 0xffffffffff000000)
open(sys.argv[2], 'wb').write(b)
PY
expect 1 'entry point 0xffffffffff000000 is in no loadable segment' \
	run --kernel "$tmp/badentry.elf" --allow-pvm --mem 32M

expect 0 '' run --kernel "$tmp/bz" --allow-pvm --mem 32M --vcpus 2 \
	--initrd "$tmp/initrd-1" --cmdline "tk.signal=mmio" --json \
	--console "$tmp/console.txt"
cp "$out" "$tmp/run.json"
json_check 'd["success"] and d["outcome"] == "completed" and d["boot_signal"] == "mmio" and d["boot_signals"] == ["mmio"] and d["guest_done_signals"] == 1 and d["config"]["kernel_format"] == "bzImage" and d["config"]["vcpus"] == 2 and len(d["vcpu_exits"]) == 2 and d["vcpu_exits"][0] > 0 and d["timeline_ns"]["guest_exit"] >= d["timeline_ns"]["done"] >= d["timeline_ns"]["boot_complete"] > d["timeline_ns"]["first_run"] and d["console_bytes"] > 100' "$tmp/run.json"
if grep -q 'mptable: 2 cpus' "$tmp/console.txt" && grep -q 'initrd: 1 bytes fnv1a 0x00000000fd0c5087' "$tmp/console.txt"; then
	ok
else
	echo "FAIL: --console file lacks the test kernel's checks"; cat "$tmp/console.txt"
	failed=$((failed + 1))
fi

expect 0 'stopped at boot complete' run --kernel "$TK_ELF" --allow-pvm --mem 32M --stop-at boot

# linux.console_never_follows_links: --console FILE was opened with
# fopen "w", writing through a symlink left at FILE (a file elsewhere
# clobbered); a link there is now refused before the VM is made.
echo victim >"$tmp/victim"
ln -s victim "$tmp/linked.console"
expect 1 'console .*linked.console is a symbolic link; not writing through it' \
	run --kernel "$TK_ELF" --allow-pvm --mem 32M --stop-at boot \
	--console "$tmp/linked.console"
[ "$(cat "$tmp/victim")" = victim ] && ok ||
	fail "run --console wrote through a link"
grep -q 'workload done' "$out" && fail "ran past boot complete"
expect 1 'guest shut down' run --kernel "$TK_ELF" --allow-pvm --mem 32M --cmdline tk.exit=shutdown
expect 1 'guest kernel panic: Kernel panic - not syncing' run --kernel "$TK_ELF" \
	--allow-pvm --mem 32M --cmdline tk.exit=panic
expect 1 'timed out after 0.300 s' run --kernel "$TK_ELF" --allow-pvm --mem 32M \
	--cmdline tk.exit=hang --timeout 300ms
expect 0 '' run --kernel "$TK_ELF" --allow-pvm --mem 32M --quiet
[ -s "$out" ] && fail "--quiet printed to stdout"

# The boot driver over a Linux-style guest: its phases, and the result
# names the exact kernel by sha256.
expect 0 '"phase.boot_complete"' bench boot --kernel "$TK_ELF" --allow-pvm \
	--mem 32M -n 2 -w 0 --json
sum=$(sha256sum "$TK_ELF" | cut -d' ' -f1)
json_check 'd["guest"]["name"] == "linux" and d["guest"]["kernel"]["sha256"] == "'"$sum"'" and d["guest"]["kernel"]["bytes"] == '"$(stat -c %s "$TK_ELF")"' and d["guest"]["initrd"] is None and "phase.guest_exit" in [s["name"] for s in d["series"]]' "$out"

# The density driver over the same guest: fresh VMs held paused at boot
# complete, clones resumed to the test kernel's done signal (it resets
# right after) and held there; every VM's memory read while held.
expect 0 '"curve"' bench density --kernel "$TK_ELF" --allow-pvm --mem 32M \
	-n 3 -w 0 --json --out "$tmp/density"
json_check 'd["guest"]["name"] == "linux" and d["guest"]["kernel"]["sha256"] == "'"$sum"'" and d["config"]["mem_bytes"] == 32 << 20 and d["config"]["vcpus"] == 1 and d["config"]["cmdline"] and d["density"]["fresh"]["held_at"] == {"boot": 3} and d["density"]["clone"]["held_at"] == {"done": 3} and all(d["density"][m]["vms"] == 3 and all(p["pss_kib"] > 0 and p["rss_kib"] > 0 and p["cost_kib"] > 0 for p in d["density"][m]["curve"]) for m in ("fresh", "clone")) and all(min(s["samples"]) > 0 for s in d["series"] if s["name"].endswith(".pss_per_vm"))' "$out"
grep -q "^Guest: linux \`${sum:0:8}\`, 32 MiB, 1 vCPU. Linux-guest VMMs held paused" \
	"$tmp/density/density.md" && ok || fail "density.md does not name the Linux guest"
# The clones' snapshot command line, read back from it: inside the
# emulated host `snapshot create` adds coldstart.done=mmio to the default,
# natively it is the fresh VMs' and not recorded twice.
json_check 'd["config"].get("clone_cmdline") == (d["config"]["cmdline"] + " coldstart.done=mmio" if d["sysinfo"]["kvm"].get("emulated") else None)' "$out"
expect 0 'report written' report "$tmp/density/density.json" --out "$tmp/density"
grep -q "^| linux \`${sum:0:8}\`, 32 MiB, 1 vCPU | fresh |" "$tmp/density/report.md" &&
	grep -q "The guest as measured: Linux kernel \`${sum:0:8}\`, initrd none" "$tmp/density/report.md" &&
	grep -q "^- density (linux \`${sum:0:8}\`): [0-9.]* VMs per GiB fresh" "$tmp/density/report.md" &&
	ok || fail "the report's capacity section does not name the Linux guest"
if python3 -c 'import json, sys; sys.exit(not json.load(open(sys.argv[1]))["sysinfo"]["kvm"].get("emulated"))' \
	"$tmp/density/density.json"; then
	grep -q "^The clones' snapshot was taken with another command line than the fresh VMs boot with: \`.* coldstart.done=mmio\`" \
		"$tmp/density/report.md" && grep -q "coldstart.done=mmio" "$tmp/density/density.md" &&
		ok || fail "the report's density section does not show the clones' command line"
fi
# The report of a --rootfs document (the one above, given the fields a
# rootfs run adds): the image named, disk per VM in the density section
# and as a column of the Capacity table.
python3 - "$tmp/density/density.json" "$tmp/density-root.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["rootfs"] = {"path": "/img/root.ext4", "size_bytes": 64 << 20,
               "allocated_bytes": 20 << 20, "snapshot_disk_bytes": 4096,
               "unchanged": True}
d["config"]["rootfs"], d["config"]["exec"] = "/img/root.ext4", "true"
for m, kib in (("fresh", 20356), ("clone", 8156)):
    d["density"][m]["disk_per_vm_kib"] = kib
    d["density"][m]["shared_disk_kib"] = 20484
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 'report written' report "$tmp/density-root.json" --out "$tmp/density-root"
r=$tmp/density-root/report.md
grep -q '^| guest | variant | memory per VM, [KMG]iB | disk per VM, KiB | shared' "$r" &&
	grep -q "^| linux \`${sum:0:8}\`, 32 MiB, 1 vCPU, rootfs root.ext4 (64 MiB) | fresh | [0-9.]* | 20356 |" "$r" &&
	grep -q "^| linux .* | clone | [0-9.]* | 8156 |" "$r" &&
	grep -q '^- Disk: every VM.s root disk is `/img/root.ext4` (64 MiB)' "$r" &&
	grep -q '^Root disk: `/img/root.ext4` (64.00 MiB, 20.00 MiB allocated).*unchanged after the run.* Each VM ran `true`' "$r" &&
	grep -q '^- fresh: .*; disk per VM 20356 KiB (shared 20484 KiB)$' "$r" &&
	ok || fail "the report of a --rootfs document lacks its disk: $(grep -n 'disk\|rootfs' "$r" | head -5)"
# Without one, no disk column.
grep -q 'disk per VM' "$tmp/density/report.md" &&
	fail "the report of a document without --rootfs has a disk column" || ok
# A --rootfs VM whose agent never answers (the test kernel has none: it
# ends after its vsock negotiation) is an error naming the VM, fresh or
# clone, and leaves no overlay behind.
truncate -s 1M "$tmp/root.img"
mkdir "$tmp/root-ovl"
for mode in fresh clone; do
	TMPDIR=$tmp/root-ovl expect 1 "bench density: $mode VM 1 did not start" \
		bench density --kernel "$TK_ELF" --allow-pvm --mem 32M -n 1 -w 0 \
		--mode $mode --rootfs "$tmp/root.img" --cmdline "tk.signal=port tk.vsock=idle"
	grep -q 'the VM ended before its guest agent listened on vsock port 1024' "$err" &&
		ok || fail "--rootfs $mode: the agent's failure is not named"
	[ -z "$(ls -A "$tmp/root-ovl")" ] && ok || fail "--rootfs $mode left $(ls "$tmp/root-ovl")"
done
# A fresh guest that ends before its boot complete cannot be held: the
# hold's error says so, and why.
expect 1 'the guest ended before it signalled boot complete \(it is held there\): guest kernel panic' \
	bench density --kernel "$TK_ELF" --allow-pvm --mem 32M -n 1 -w 0 \
	--mode fresh --cmdline "tk.signal=none tk.exit=panic" --out "$tmp/density-panic"

# --timeout is the boot limit of the clones' snapshot (it was a fixed
# 60 s) and of each fresh VM: a guest that never signals boot complete
# fails after it, the error naming the limit and the option.
expect 1 "the clones' snapshot: its guest did not signal boot complete within --timeout 1.000 s .*raise --timeout" \
	bench density --kernel "$TK_ELF" --allow-pvm --mem 32M -n 1 -w 0 \
	--mode clone --cmdline "tk.signal=none tk.exit=hang" --timeout 1s
grep -q 'snapshot create: the guest did not signal boot complete within 1.000 s' "$err" &&
	ok || fail "the snapshot's child did not have --timeout's limit"
expect 1 "within 1.000 s \(it is held there\).*bench density's --timeout sets that limit" \
	bench density --kernel "$TK_ELF" --allow-pvm --mem 32M -n 1 -w 0 \
	--mode fresh --cmdline "tk.signal=none tk.exit=hang" --timeout 1s

# The rate driver over a Linux-style guest: one `coldstart run --kernel
# --stop-at boot` process per VM; the result names the kernel by sha256,
# the report and rate.md say which guest.
expect 0 '"process.burst2"' bench rate --kernel "$TK_ELF" --allow-pvm \
	--mem 32M --workers 1,2 -n 2 -w 0 --burst 2 --rounds 1 --json \
	--out "$tmp/rate"
json_check 'd["bench"] == "rate" and d["guest"]["name"] == "linux" and d["guest"]["kernel"]["sha256"] == "'"$sum"'" and d["config"]["guest"] == "linux" and d["config"]["kernel"] == "'"$TK_ELF"'" and d["config"]["stop_at"] == "boot" and d["config"]["mem_bytes"] == 32 << 20 and [s["name"] for s in d["series"]] == [n + x for n in ("process.w1", "process.w2", "process.burst2") for x in ("", ".vms_per_s")] and all(s["vms_per_s"] > 0 and s["params"]["mode"] == "process" for s in d["series"] if "vms_per_s" in s) and len(d["series"][2]["samples_ns"]) == 4 and len(d["series"][4]["makespan_ns"]) == 1' "$out"
grep -q "boot complete -> destroy of the linux guest (kernel \`$TK_ELF\`, sha256 \`${sum:0:16}\`" \
	"$tmp/rate/rate.md" && ok || fail "rate.md does not name the linux guest"
expect 0 "" report "$tmp/rate/rate.json" --format md -q
grep -q "^- rate (linux \`${sum:0:8}\`), sustained: peak [0-9.]* VMs/s process" \
	"$tmp/rate/report.md" && ok || fail "the report's summary does not name the linux guest"
# Virtio disks and vsock (--drive, --vsock): refused without --kernel or
# with bad values; the test kernel drives a disk in each mode (the file
# changes only with rw) and talks to the host over vsock both ways, with
# the default seccomp filters (the devices' I/O threads have their own).
expect 2 'run: --drive needs --kernel' run --drive "$tmp/disk.img"
expect 2 "run: --drive ',ro': no path" run --kernel "$TK_ELF" --drive ,ro
expect 2 'run: --drive: at most 4 drives' run --kernel "$TK_ELF" \
	--drive a --drive b --drive c --drive d --drive e
expect 2 'run: --vsock cid: 2 is outside 3..4294967294' run --kernel "$TK_ELF" \
	--vsock "$tmp/v.sock,cid=2"
expect 1 'drive /nonexistent.img: No such file' run --kernel "$TK_ELF" \
	--allow-pvm --mem 32M --drive /nonexistent.img
mkdisk() {
	rm -f "$1"
	truncate -s 1M "$1" && printf 'coldstart disk!\0' | dd of="$1" conv=notrunc status=none
}
# Each on KVM's eventfd paths, then on the exit paths
# (COLDSTART_VIRTIO_EXITS=1), where each of the guest's notifications is
# a VM exit more.
declare -A exits
mkdir "$tmp/ovl" # the unnamed overlays' directory, empty after each run
for paths in 0 1; do
for mode in cow rw ro overlay default; do
	mkdisk "$tmp/disk.img"
	want='write read back ok'
	[ $mode = ro ] && want='write refused \(read-only\)'
	drive=$tmp/disk.img
	[ $mode = default ] || drive=$drive,$mode
	TMPDIR=$tmp/ovl COLDSTART_VIRTIO_EXITS=$paths expect 0 "virtio-blk: $want" run \
		--kernel "$TK_ELF" --allow-pvm --mem 32M --cmdline tk.signal=port \
		--drive "$drive"
	grep -q 'virtio-blk: sector 0: 636f6c647374617274206469736b2100' "$out" &&
		grep -q 'virtio-blk: past the end: error status' "$out" && ok ||
		fail "--drive $mode: the guest's reads"
	byte=$(od -An -tu1 -j 513 -N 1 "$tmp/disk.img" | tr -d ' ')
	[ "$byte" = "$([ $mode = rw ] && echo 4 || echo 0)" ] && ok ||
		fail "--drive $mode: byte 513 of the file is $byte"
	[ -z "$(ls -A "$tmp/ovl")" ] && ok || fail "--drive $mode left $(ls "$tmp/ovl")"
	exits[$paths,$mode]=$(cat "$out" "$err" |
		sed -n 's/.* \([0-9]*\) VM exits (vCPUs.*/\1/p')
done
done
[ "${exits[0,rw]}" -lt "${exits[1,rw]}" ] && ok ||
	fail "notifications through an ioeventfd: ${exits[0,rw]} exits, ${exits[1,rw]} without"
# 20 VMs at once on one image, each with its overlay, each writing its
# own sector: none sees another's, the image is unchanged, each overlay
# holds about the one 4 KiB block written; an overlay reopened shows its
# VM's write. reflink=FILE works where the filesystem shares extents and
# is one clear error elsewhere (ext4, tmpfs).
mkdisk "$tmp/base.img"
sum0=$(sha256sum <"$tmp/base.img")
pids=()
for i in $(seq 20); do
	"$COLDSTART" run --kernel "$TK_ELF" --allow-pvm --mem 32M \
		--cmdline "tk.signal=port tk.sector=$i tk.scan=20" \
		--drive "$tmp/base.img,overlay=$tmp/vm$i.ovl" >"$tmp/vm$i.out" 2>&1 &
	pids+=($!)
done
for i in $(seq 20); do
	wait "${pids[$((i - 1))]}" &&
		grep -q 'virtio-blk: write read back ok' "$tmp/vm$i.out" &&
		grep -q 'virtio-blk: sectors 1-20: 0 written by others' "$tmp/vm$i.out" &&
		[ "$(du -k "$tmp/vm$i.ovl" | cut -f1)" -le 16 ] && ok ||
		fail "overlay VM $i: $(grep -a 'virtio-blk\|coldstart:' "$tmp/vm$i.out")"
done
[ "$(sha256sum <"$tmp/base.img")" = "$sum0" ] && ok || fail "the base image changed"
expect 0 'virtio-blk: sectors 1-20: 1 written by others' run --kernel "$TK_ELF" \
	--allow-pvm --mem 32M --cmdline "tk.signal=port tk.sector=2 tk.scan=20" \
	--drive "$tmp/base.img,overlay=$tmp/vm1.ovl"
truncate -s 512 "$tmp/small.img"
expect 1 "overlay $tmp/vm1.ovl: 1048576 bytes, the image 512" run \
	--kernel "$TK_ELF" --allow-pvm --mem 32M --drive "$tmp/small.img,overlay=$tmp/vm1.ovl"
expect 2 "--drive 'a,overlay=': no FILE after 'overlay='" run --kernel "$TK_ELF" \
	--drive a,overlay=
if "$COLDSTART" run --kernel "$TK_ELF" --allow-pvm --mem 32M -q \
	--cmdline tk.signal=port --drive "$tmp/base.img,reflink=$tmp/r.img" \
	>"$out" 2>"$err"; then
	[ "$(od -An -tu1 -j 513 -N 1 "$tmp/r.img" | tr -d ' ')" = 4 ] &&
		[ "$(sha256sum <"$tmp/base.img")" = "$sum0" ] && ok ||
		fail "reflink: the copy lacks the write, or the base changed"
else
	grep -q "reflink $tmp/r.img of $tmp/base.img: its filesystem cannot share" "$err" &&
		[ ! -e "$tmp/r.img" ] && ok || fail "reflink's error: $(cat "$err")"
fi
# A hostile guest (tk.hostile), on both notification paths: a queue size
# not a power of two, a descriptor loop, an address outside guest memory
# and a huge length each make the disk ask for a reset; the VMM goes on,
# the disk works after a reset, and nothing reaches the base image.
for paths in 0 1; do
	rm -f "$tmp/h.ovl"
	COLDSTART_VIRTIO_EXITS=$paths expect 0 'virtio-blk: hostile huge length: reset asked' \
		run --kernel "$TK_ELF" --allow-pvm --mem 32M \
		--cmdline 'tk.signal=port tk.hostile' --drive "$tmp/base.img,overlay=$tmp/h.ovl"
	grep -q 'hostile queue size 6: refused' "$out" &&
		grep -q 'hostile descriptor loop: reset asked' "$out" &&
		grep -q 'hostile address outside memory: reset asked' "$out" &&
		[ "$(grep -c 'write read back ok' "$out")" = 2 ] && ! grep -q BAD "$out" &&
		[ "$(sha256sum <"$tmp/base.img")" = "$sum0" ] && ok ||
		fail "hostile guest ($paths): $(grep virtio-blk "$out")"
done
# vsock: the host's half in Python, beside the run, on both paths
for paths in 0 1; do
rm -f "$tmp/v.sock_1234"
python3 - "$tmp/v.sock" >"$tmp/host.out" 2>&1 <<'PY' &
import os, socket, sys, time
path = sys.argv[1]
l = socket.socket(socket.AF_UNIX); l.bind(path + "_1234"); l.listen(1)
l.settimeout(60)
c, _ = l.accept(); c.settimeout(60)
print("heard", c.recv(100).decode())
c.sendall(b"hi guest"); c.recv(10); c.close()
for _ in range(600):
    try:
        h = socket.socket(socket.AF_UNIX); h.connect(path); break
    except OSError:
        time.sleep(0.05)
h.settimeout(60)
h.sendall(b"CONNECT 5000\n")
print("ok line", h.recv(100).decode().strip())
h.sendall(b"ping")
print("answer", h.recv(100).decode())
h.close()
PY
host=$!
for i in $(seq 100); do [ -S "$tmp/v.sock_1234" ] && break; sleep 0.1; done
COLDSTART_VIRTIO_EXITS=$paths expect 0 'vsock: served the host' run \
	--kernel "$TK_ELF" --allow-pvm --mem 32M --cmdline tk.signal=port \
	--vsock "$tmp/v.sock"
wait $host
grep -q '^heard hello from the guest$' "$tmp/host.out" &&
	grep -q '^ok line OK [0-9]' "$tmp/host.out" &&
	grep -q '^answer echo: ping$' "$tmp/host.out" && ok ||
	fail "the host's side of vsock: $(cat "$tmp/host.out")"
[ ! -e "$tmp/v.sock" ] && ok || fail "the vsock socket was left behind"
done
# A host connection closed while the guest does not answer it (its driver
# idle, the vCPU halted): the device's thread waits, it does not spin on
# the hang-up (it did, a CPU for as long as the guest was silent: every
# VM bench density --rootfs held paused).
# (A long --timeout, the run stopped by SIGTERM once measured: on a busy
# host the VM may take seconds to start. Idle, the VMM takes 0-1 ticks;
# spinning, 294 on a quiet host, 14-43 at nice 19 on a host loaded 15x.)
"$COLDSTART" run --kernel "$TK_ELF" --allow-pvm --mem 32M --timeout 120s \
	--cmdline "tk.signal=port tk.vsock=idle tk.exit=hang" \
	--vsock "$tmp/hup.sock" >"$tmp/hup.out" 2>&1 &
vmm=$!
for i in $(seq 600); do [ -S "$tmp/hup.sock" ] && break; sleep 0.05; done
ticks=$(python3 - "$tmp/hup.sock" "$vmm" <<'PY'
import os, socket, sys, time
h = socket.socket(socket.AF_UNIX); h.connect(sys.argv[1])
h.sendall(b"CONNECT 5000\n"); time.sleep(0.5); h.close()
def cpu():  # the VMM's user + system ticks, all its threads
    f = open("/proc/%s/stat" % sys.argv[2]).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
time.sleep(0.5); t0 = cpu(); time.sleep(3); print(cpu() - t0)
PY
)
kill -TERM $vmm
wait $vmm
[ -n "$ticks" ] && [ "$ticks" -lt 10 ] && ok ||
	fail "the VMM used ${ticks:-?} ticks of CPU in 3 s with its guest silent and the host's end closed: $(tail -n 3 "$tmp/hup.out")"

# --rootfs and --exec: a guest without the agent (the test kernel) ends
# first; the run fails with one line saying so (not exit 0, not a wait to
# the timeout), and leaves no socket directory behind
expect 2 'run: --exec needs --rootfs' run --kernel "$TK_ELF" --exec true
mkdisk "$tmp/disk.img"
before=$(ls -d /tmp/coldstart-exec-* 2>/dev/null | wc -l)
expect 1 'the guest ended \(guest reset through the i8042\) before its agent ran the command' \
	run --kernel "$TK_ELF" --allow-pvm --mem 32M --cmdline tk.signal=port \
	--rootfs "$tmp/disk.img" --exec true --timeout 30s
[ "$(ls -d /tmp/coldstart-exec-* 2>/dev/null | wc -l)" -le "$before" ] && ok ||
	fail "run --exec left its socket directory in /tmp"

# in-process runs the probe guest only; a VM that fails names the child's
# exit and what it said; a kernel that cannot boot stops the run first
expect 2 'a Linux guest \(--kernel\) runs as one' bench rate --kernel "$TK_ELF" \
	--mode in-process
expect 1 "'coldstart run' exited 1: coldstart: run failed: timed out" \
	bench rate --kernel "$TK_ELF" --allow-pvm --mem 32M --workers 1 -n 1 \
	-w 0 --burst 0 --timeout 1ns
expect 1 'bench rate: .*entry point 0xffffffffff000000 is in no loadable' \
	bench rate --kernel "$tmp/badentry.elf" --allow-pvm --mem 32M
expect 1 "initrd $tmp/none: No such file" bench rate --kernel "$TK_ELF" \
	--initrd "$tmp/none" --mem 32M
if [ -d /sys/module/kvm_pvm ]; then
	expect 77 'PVM' bench rate --kernel "$TK_ELF" --mem 32M --workers 1
fi
finish
