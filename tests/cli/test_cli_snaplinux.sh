#!/bin/bash
# Linux-guest snapshots as a black box with the ring-0 test kernel: create
# at boot complete, inspect, restore with several strategies to the
# guest's exit (the rest of its console output), input errors and the
# PVM refusal. Usage: test_cli_snaplinux.sh COLDSTART TESTKERNEL.elf
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
scratch

# --- input errors, on any host ---------------------------------------------
# bench session: its options, before any snapshot is read
expect 2 'bench session: --snapshot DIR is needed' bench session
expect 2 '--merge: 0 is outside 1..32' bench session --snapshot "$tmp" --merge chain:0
expect 2 '--merge goes with --snapshots diff' bench session --snapshot "$tmp" \
	--snapshots full --merge chain:8
expect 2 '--merge never keeps every diff' bench session --snapshot "$tmp" \
	--merge never --turns 33
expect 1 'kernel .*no-such-kernel' snapshot create "$tmp/x" \
	--kernel "$tmp/no-such-kernel"
expect 1 "initrd" snapshot create "$tmp/x" --kernel "$TK_ELF" \
	--initrd "$tmp/no-such-initrd" --allow-pvm --mem 32M
[ ! -e "$tmp/x" ] || fail "a failed create left $tmp/x"

if [ ! -c /dev/kvm ]; then
	echo "skipping the KVM part: no /dev/kvm"
	finish || exit 1
	exit 77
fi
if [ -d /sys/module/kvm_pvm ]; then
	expect 77 'PVM' snapshot create "$tmp/x" --kernel "$TK_ELF" --mem 32M
fi

# --- create at boot complete ---------------------------------------------------
expect 0 'Linux guest paused at boot complete' snapshot create "$tmp/s" \
	--kernel "$TK_ELF" --allow-pvm --mem 32M --vcpus 2 \
	--console "$tmp/create.console"
grep -q 'boot complete' "$out" || fail "no boot complete in the timeline"
grep -q 'rtc: year' "$tmp/create.console" && ! grep -q 'workload done' "$tmp/create.console" ||
	{ echo "FAIL: create console"; cat "$tmp/create.console"; failed=$((failed + 1)); }
expect 2 'exists' snapshot create "$tmp/s" --kernel "$TK_ELF" --allow-pvm --mem 32M
# A guest that never signals boot complete: the error says what did not
# happen and how far the guest got (it once read "vCPUs did not pause"),
# and no snapshot is left behind.
expect 1 'the guest did not signal boot complete within 0.500 s .*its vCPUs made [0-9]+ exits and it wrote [1-9][0-9]* bytes to its console' \
	snapshot create "$tmp/never" --kernel "$TK_ELF" --allow-pvm --mem 32M \
	--timeout 500ms --cmdline "tk.signal=none tk.exit=hang"
[ -e "$tmp/never/state" ] && fail "a snapshot of a guest that never completed its boot"
# One that ends before it signals boot complete says so, and why it ended
# (it once read "the VM ended before it paused").
expect 1 'the guest ended before it signalled boot complete \(the snapshot is taken there\): guest kernel panic: Kernel panic' \
	snapshot create "$tmp/panicked" --kernel "$TK_ELF" --allow-pvm --mem 32M \
	--cmdline "tk.signal=none tk.exit=panic"
[ -e "$tmp/panicked/state" ] && fail "a snapshot of a guest that ended before its boot completed"

# --quiet prints nothing, the guest's console included (it printed the
# whole console inside bench suite --kernel). Without --cmdline, the
# default command line; inside the emulated host it gets
# coldstart.done=mmio, as a restored guest's port I/O from user space
# faults there (QEMU TCG).
expect 0 '' snapshot create "$tmp/q" --kernel "$TK_ELF" --allow-pvm --mem 32M --quiet
[ -s "$out" ] && fail "snapshot create --quiet printed: $(head -c 200 "$out")"
expect 0 '^cmdline: console=ttyS0 ' snapshot inspect "$tmp/q"
if grep -q 'coldstart.emulated=' /proc/cmdline; then
	grep -q '^cmdline: .* coldstart.done=mmio$' "$out" && ok ||
		fail "the emulated host's snapshot lacks coldstart.done=mmio"
else
	grep -q 'coldstart.done=mmio' "$out" && fail "coldstart.done=mmio on a native host"
fi

# --- inspect -------------------------------------------------------------------
expect 0 'linux guest, paused at boot complete: kernel /.*testkernel.elf' \
	snapshot inspect "$tmp/s"
for sec in vm.pic_master vm.pic_slave vm.ioapic vm.pit vm.guest vcpu.lapic \
	dev.serial.com1 dev.i8042 dev.boottimer; do
	grep -q "^  $sec " "$out" || fail "inspect lists no $sec"
done
grep -q 'in-kernel irqchip (PICs, IOAPIC, LAPICs, PIT); devices: .*boottimer' "$out" ||
	fail "inspect machine line"
expect 0 '' snapshot inspect "$tmp/s" --json
cp "$out" "$tmp/inspect.json"
json_check 'd["guest"] == "linux" and d["irqchip"] is True and "boottimer" in d["devices"] and "serial.com1" in d["devices"] and d["linux"]["kernel"].endswith("testkernel.elf") and d["linux"]["kernel_bytes"] > 0 and "probe" not in d and d["vcpus"] == 2' "$tmp/inspect.json"
json_check '{("vcpu.lapic", 0), ("vcpu.lapic", 1), ("dev.boottimer", 2)} <= {(s["name"], s["index"]) for s in d["sections"]}' "$tmp/inspect.json"

# --- restore to the guest's exit -------------------------------------------------
if [ -d /sys/module/kvm_pvm ]; then
	expect 77 'PVM' snapshot restore "$tmp/s"
fi
for m in mmap uffd eager; do
	expect 0 'guest exit' snapshot restore "$tmp/s" --allow-pvm --mem-restore "$m" \
		--console "$tmp/restore.$m"
	grep -q 'outcome: completed: guest reset through the i8042' "$out" ||
		{ echo "FAIL: $m outcome"; cat "$out"; failed=$((failed + 1)); }
	[ "$(cat "$tmp/restore.$m")" = "workload done" ] ||
		{ echo "FAIL: $m console: $(cat "$tmp/restore.$m")"; failed=$((failed + 1)); }
done
expect 0 '' snapshot restore "$tmp/s" --allow-pvm --json --console "$tmp/restore.json.console"
cp "$out" "$tmp/restore.json"
json_check 'd["guest"] == "linux" and d["success"] is True and d["guest_done_signals"] == 1 and all(k in d["timeline_ns"] for k in ("restore_start", "state_loaded", "memory_ready", "first_run", "done", "guest_exit"))' "$tmp/restore.json"
expect 2 "unknown or incomplete option '--bogus'" snapshot restore "$tmp/s" --bogus

# --- a damaged vm.guest section is refused -----------------------------------
cp -r "$tmp/s" "$tmp/bad"
python3 - "$tmp/bad/state" <<'PY'
import struct, sys, zlib
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
at = 64
while at < len(d) - 8:
    t, i, l = struct.unpack_from('<IIQ', d, at)
    if t == 7:  # vm.guest: fill its kernel path, dropping the terminator
        d[at + 16 + 32:at + 16 + 32 + 1024] = b'x' * 1024
    at += 16 + ((l + 7) & ~7)
struct.pack_into('<I', d, len(d) - 8, zlib.crc32(bytes(d[:-8])))
open(p, 'wb').write(d)
PY
expect 1 'vm.guest has an unterminated string' snapshot inspect "$tmp/bad"
expect 1 'vm.guest has an unterminated string' snapshot restore "$tmp/bad" --allow-pvm

# --- drives and a vsock device ------------------------------------------------
# The test kernel has no virtio drivers: the devices are there, idle, and
# the snapshot must still carry them (record, disk.N, device state).
head -c 1048576 /dev/urandom >"$tmp/disk.img"
head -c 65536 /dev/zero >"$tmp/ro.img"
expect 0 '' snapshot create "$tmp/d" \
	--kernel "$TK_ELF" --allow-pvm --mem 32M --drive "$tmp/disk.img" \
	--drive "$tmp/ro.img,ro" --vsock "$tmp/create.sock" --quiet \
	--cmdline "console=ttyS0 tk.vsock=idle"
[ -f "$tmp/d/disk.0" ] && [ ! -e "$tmp/d/disk.1" ] ||
	fail "disk.0 (the overlay drive's blocks) alone expected: $(ls "$tmp/d")"
[ -e "$tmp/create.sock" ] && fail "create left its vsock socket behind"
# the test kernel writes a sector: one block kept
expect 0 "^drive 0: $tmp/disk.img \(1048576 bytes, CRC-32 0x[0-9a-f]{8}\), overlay; written blocks disk.0 \(4.0 KiB\)" \
	snapshot inspect "$tmp/d"
grep -q "^drive 1: $tmp/ro.img (65536 bytes, .*read-only" "$out" || fail "inspect: drive 1"
grep -q '^vsock: guest CID 3$' "$out" || fail "inspect: vsock"
grep -q 'devices: .*virtio-blk.0 virtio-blk.1 virtio-vsock' "$out" || fail "inspect: device states"
expect 0 '' snapshot inspect "$tmp/d" --json
json_check 'd["linux"]["virtio"]["vsock_cid"] == 3 and [x["mode"] for x in d["linux"]["virtio"]["drives"]] == ["overlay", "ro"] and d["linux"]["virtio"]["drives"][0]["written_file"] == "disk.0" and d["linux"]["virtio"]["drives"][0]["written_bytes"] == 4096 and "written_file" not in d["linux"]["virtio"]["drives"][1]' "$out"
expect 0 'guest exit' snapshot restore "$tmp/d" --allow-pvm --vsock "$tmp/r.sock"
[ -e "$tmp/r.sock" ] && fail "restore left its vsock socket behind"
# a vsock device without an agent: the guest runs to its exit
expect 0 'guest exit' snapshot restore "$tmp/d" --allow-pvm
expect 2 'without a vsock device' snapshot restore "$tmp/s" --allow-pvm --exec true
expect 2 'holds no guest with an agent' bench session --snapshot "$tmp/s" \
	--allow-pvm
expect 2 'tune session: .* holds no guest with an agent' tune session \
	--snapshot "$tmp/s" --allow-pvm --turns 2
# the image's contents decide, not its mtime
touch "$tmp/disk.img"
expect 0 'guest exit' snapshot restore "$tmp/d" --allow-pvm --vsock "$tmp/r.sock"
mkdir -m 755 "$tmp/jail"
# a guest with a drive, restored and pooled jailed: its image and disk
# layer are opened before the jail (kept open for a fault handler's
# restore, whose thread enters it before the drives open, and for the
# pool's refill workers, inside it), the I/O threads start inside, and
# the hook sees every thread in the jail
expect 0 '' snapshot create "$tmp/dj" --kernel "$TK_ELF" --allow-pvm --mem 32M \
	--drive "$tmp/disk.img" --quiet --cmdline "console=ttyS0 tk.signal=port"
for st in mmap uffd; do
	rm -f "$tmp/see"
	COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 'outcome: completed' \
		snapshot restore "$tmp/dj" --allow-pvm --jail "$tmp/jail" --mem-restore $st
	grep -qx 'threads_outside=0' "$tmp/see" && grep -qx 'uid=65534' "$tmp/see" && ok ||
		fail "restore --mem-restore $st: not every thread jailed: $(cat "$tmp/see")"
done
rm -f "$tmp/see"
# unjailed, a pool's overlays are unnamed files in TMPDIR, which must
# take them; jailed they are in memory, so a TMPDIR that cannot (an
# overlayfs /tmp, as in the emulated host) does not stop the pool
TMPDIR=$tmp/none expect 2 "unnamed files in $tmp/none \\(O_TMPFILE\\)" \
	pool run --snapshot "$tmp/dj" --allow-pvm -n 1
TMPDIR=$tmp/none COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 '' pool run --snapshot "$tmp/dj" --allow-pvm \
	-n 3 --size 2 --jail "$tmp/jail" --json
json_check 'd["served"] == 3 and d["failed"] == 0' "$out"
grep -qx 'threads_outside=0' "$tmp/see" && [ "$(grep -c '^thread=' "$tmp/see")" -ge 5 ] && ok ||
	fail "pool run: not every thread of its VMs jailed: $(cat "$tmp/see")"
[ -z "$(ls -A "$tmp/jail")" ] && ok || fail "the jail's directory is not left empty"
# a guest that drives its disk once restored (tk.late): the disk's reads
# and writes come from the device thread of a restore and of a pool's
# VMs, whose filters stack on their starter's (a pool's refill worker:
# a preadv missing there killed the pool with SIGSYS)
expect 0 '' snapshot create "$tmp/dl" --kernel "$TK_ELF" --allow-pvm --mem 32M \
	--drive "$tmp/disk.img" --quiet --cmdline "console=ttyS0 tk.signal=port tk.late"
expect 0 'virtio-blk: sector 0: ' snapshot restore "$tmp/dl" --allow-pvm
grep -q 'BAD' "$out" && fail "restore of a late disk: $(grep BAD "$out")"
expect 0 '' pool run --snapshot "$tmp/dl" --allow-pvm -n 3 --size 2 --json
json_check 'd["served"] == 3 and d["failed"] == 0' "$out"
expect 0 '' pool run --snapshot "$tmp/dl" --allow-pvm -n 2 --jail "$tmp/jail" --json
json_check 'd["served"] == 2 and d["failed"] == 0' "$out"
# with vsock, restored jailed: --vsock's socket is bound before the jail
# (and removed after by the jail's parent); with a fault handler, which
# enters the jail before the devices are made, it is refused
expect 0 'guest exit' snapshot restore "$tmp/d" --allow-pvm --vsock "$tmp/r.sock" --jail "$tmp/jail"
[ -e "$tmp/r.sock" ] && fail "a jailed restore left its vsock socket behind"
expect 2 'snapshot restore: --jail, --vsock and --mem-restore uffd: the socket would be made after the strategy.s fault handler entered the jail' \
	snapshot restore "$tmp/d" --allow-pvm --vsock "$tmp/r.sock" --jail "$tmp/jail" --mem-restore uffd
expect 2 'snapshot restore: --save and --jail exclude each other' \
	snapshot restore "$tmp/d" --allow-pvm --exec true --save "$tmp/saved" --jail "$tmp/jail"
printf x | dd of="$tmp/disk.img" bs=1 seek=100 conv=notrunc status=none
# the pool checks the images once, when it opens the snapshot
expect 2 "drive 0, $tmp/disk.img, changed since the snapshot was taken" \
	pool run --snapshot "$tmp/d" --allow-pvm -n 1
expect 1 "drive 0, $tmp/disk.img, changed since the snapshot was taken \(CRC-32" \
	snapshot restore "$tmp/d" --allow-pvm --vsock "$tmp/r.sock"
head -c 4096 /dev/zero >>"$tmp/disk.img"
expect 1 "drive 0, $tmp/disk.img, has 1052672 bytes; it had 1048576" \
	snapshot restore "$tmp/d" --allow-pvm --vsock "$tmp/r.sock"
rm "$tmp/d/disk.0"
expect 1 "drive 0's written blocks, $tmp/d/disk.0, are missing" \
	snapshot inspect "$tmp/d"
# writes that would not be kept, and a command before there is an agent
expect 1 'drive 0 .*not mode rw' snapshot create "$tmp/rw" --kernel "$TK_ELF" \
	--allow-pvm --mem 32M --drive "$tmp/ro.img,rw" --quiet
[ -e "$tmp/rw" ] && fail "a refused create left $tmp/rw"
expect 1 'give --exec to .snapshot restore.' snapshot create "$tmp/x2" \
	--kernel "$TK_ELF" --allow-pvm --mem 32M --rootfs "$tmp/ro.img" --exec true

finish
