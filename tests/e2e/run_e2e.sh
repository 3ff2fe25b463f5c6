#!/bin/bash
# The end-to-end rig: boots an emulated x86 host with SVM (QEMU TCG, Debian's
# cloud kernel with kvm_amd, see shared PLATFORM.md), and inside it boots
# Linux guests from `coldstart image build` with the statically linked
# coldstart (l1-init.sh runs the cases). Timings are functional only.
# Usage: run_e2e.sh --coldstart BIN --source DIR --work DIR [--static BIN]
#   --coldstart  the coldstart that builds the guest image (any build)
#   --static     a statically linked coldstart for inside the host; default:
#                $COLDSTART_E2E_STATIC, else built in WORK/static from DIR
# Exit: 0 every case passed, 1 a case failed, 77 a tool is missing.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
coldstart="" source="" work="" static=${COLDSTART_E2E_STATIC:-}
while [ $# -gt 0 ]; do
	case $1 in
	--coldstart) coldstart=$2; shift 2 ;;
	--source) source=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--static) static=$2; shift 2 ;;
	*) echo "run_e2e.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -z "$coldstart" ] || [ -z "$work" ] || { [ -z "$static" ] && [ -z "$source" ]; }; then
	echo "usage: run_e2e.sh --coldstart BIN --work DIR (--source DIR | --static BIN)" >&2
	exit 2
fi

QEMU_TIMEOUT=${COLDSTART_E2E_TIMEOUT:-240}
t_start=$(date +%s.%N)
log() { printf 'e2e: %s\n' "$*"; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

need() { # TOOL PACKAGE
	command -v "$1" >/dev/null && return
	log "SKIP: $1 not found: install the Debian package $2 (./run.sh test does)"
	exit 77
}
need qemu-system-x86_64 qemu-system-x86
need cpio cpio
need gzip gzip
need readelf binutils
[ -x /bin/busybox ] || { log "SKIP: /bin/busybox missing: install busybox-static"; exit 77; }

mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)

# 1. The statically linked coldstart that runs inside the emulated host.
if [ -z "$static" ]; then
	t=$(date +%s.%N)
	# Warnings are the other builds' gate; this one only needs a binary.
	log "building a static coldstart in $work/static"
	if ! { cmake -S "$source" -B "$work/static" -DCMAKE_BUILD_TYPE=Release \
		-DCOLDSTART_STATIC=ON -DBUILD_TESTING=OFF \
		-DCOLDSTART_WERROR=OFF &&
		cmake --build "$work/static" -j"$(nproc)" --target coldstart; } \
		>"$work/static-build.log" 2>&1; then
		tail -n 30 "$work/static-build.log"
		log "FAIL: building the static coldstart (log: $work/static-build.log)"
		exit 1
	fi
	static=$work/static/bench/coldstart
	log "static build took $(elapsed "$t") s"
fi
if readelf -l "$static" 2>/dev/null | grep -q INTERP; then
	log "FAIL: $static is dynamically linked; the emulated host has no libraries"
	exit 1
fi

# kvm-hold keeps an idle VM open in the host: see kvm-hold.c.
if ! "${CC:-cc}" -static -O2 -o "$work/kvm-hold" "$here/kvm-hold.c" 2>"$work/kvm-hold.log"; then
	cat "$work/kvm-hold.log"
	log "FAIL: building kvm-hold"
	exit 1
fi

# 2. The guest: kernel (also the host's kernel) and initramfs.
t=$(date +%s.%N)
image=$("$coldstart" image build) || { log "FAIL: coldstart image build"; exit 1; }
log "guest image $image ($(elapsed "$t") s); manifest:"
sed -n 's/^ *"\(sha256\|package\|version\)": \(.*\)/    \1 \2/p' "$image/manifest.json" | head -6
for f in vmlinuz initramfs.cpio.gz modules/irqbypass.ko modules/kvm.ko modules/kvm-amd.ko; do
	[ -s "$image/$f" ] || { log "FAIL: $image/$f missing"; exit 1; }
done

# 3. The emulated host's initramfs.
t=$(date +%s.%N)
root=$work/l1root
rm -rf "$root" && mkdir -p "$root/bin" "$root/modules" "$root/l2" || exit 1
cp /bin/busybox "$root/bin/busybox" &&
	cp "$here/l1-init.sh" "$root/init" &&
	cp "$here/snapshot-cases.sh" "$root/snapshot-cases.sh" &&
	cp "$static" "$root/coldstart" &&
	cp "$work/kvm-hold" "$root/kvm-hold" &&
	cp "$image"/modules/*.ko "$root/modules/" &&
	cp "$image/vmlinuz" "$image/initramfs.cpio.gz" "$root/l2/" &&
	chmod 755 "$root/init" || exit 1
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) \
	>"$work/l1.cpio.gz" || { log "FAIL: packing the host initramfs"; exit 1; }
log "host initramfs $(du -h "$work/l1.cpio.gz" | cut -f1) ($(elapsed "$t") s)"

# 4. Boot the emulated SVM host; its /init runs every case, then powers off.
# A host whose console stays silent for STALL_AFTER seconds has stalled
# (a case prints at least every 135 s, see l1-init.sh's hang_report) and
# is stopped. A stalled host, or a host kernel panic, gets one more boot:
# the first is printed as E2E-FLAKE with its console's last lines, so it
# stays visible; the second decides.
STALL_AFTER=${COLDSTART_E2E_STALL:-150}
console=$work/l1-console.log
# boot_host: boots the host once; sets qemu_code (124: timed out) and
# stalled (1: silent for STALL_AFTER s, stopped).
boot_host() {
	local qpid size last=-1 quiet=0 waited=0
	stalled=0
	timeout "$QEMU_TIMEOUT" qemu-system-x86_64 -accel tcg -cpu EPYC,+svm,+npt \
		-smp 2 -m 2048 -nographic -no-reboot -monitor none \
		-kernel "$image/vmlinuz" -initrd "$work/l1.cpio.gz" \
		-append "console=ttyS0 panic=-1 softlockup_panic=1 quiet" \
		</dev/null >"$console" 2>"$work/qemu.err" &
	qpid=$!
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 5
		waited=$((waited + 5))
		size=$(stat -c %s "$console" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size quiet=0
		else
			quiet=$((quiet + 5))
		fi
		if [ $quiet -ge "$STALL_AFTER" ]; then
			stalled=1
			kill "$qpid" 2>/dev/null
			break
		fi
		[ $((waited % 60)) -eq 0 ] &&
			log "host running for ${waited} s; last case: $(tr -d '\r' <"$console" | grep '^E2E-CASE' | tail -n 1)"
	done
	wait "$qpid"
	qemu_code=$?
}
# console_tail N: the console's last N lines that are not markers (the
# kernels' own messages: lockups, panics, blocked tasks).
console_tail() {
	tr -d '\r' <"$console" | grep -v '^E2E-' | grep -v '^$' | tail -n "$1" |
		sed 's/^/  console: /'
}
host_broke() { # the host stalled, timed out or died without its E2E-END
	[ "$stalled" = 1 ] || [ "$qemu_code" -eq 124 ] ||
		! tr -d '\r' <"$console" | grep -q '^E2E-END'
}
flakes=0
for try in 1 2; do
	t=$(date +%s.%N)
	log "booting the emulated SVM host (QEMU TCG, timeout ${QEMU_TIMEOUT}s, stall ${STALL_AFTER}s)"
	boot_host
	log "emulated host ran $(elapsed "$t") s (exit $qemu_code; console: $console)"
	host_broke && ! tr -d '\r' <"$console" | grep -q '^E2E-FAIL' || break
	[ $try = 2 ] && break
	flakes=$((flakes + 1))
	why="ended without E2E-END"
	tr -d '\r' <"$console" | grep -q '^E2E-HANG' && why="had a coldstart hung in its kernel"
	[ "$stalled" = 1 ] && why="stalled (console silent for ${STALL_AFTER} s)"
	[ "$qemu_code" -eq 124 ] && why="timed out after ${QEMU_TIMEOUT} s"
	log "E2E-FLAKE: the emulated host $why; its markers and console:"
	tr -d '\r' <"$console" | grep '^E2E-' | sed 's/^/  first boot: /' | tail -n 150
	console_tail 40
	log "booting the emulated host once more"
	cp "$console" "$work/l1-console.flake.log"
done

# 5. Verdict from the markers.
tr -d '\r' <"$console" | grep '^E2E-' | sed 's/^/  /' | head -n 400
failed=0
verdict() { log "FAIL: $*"; failed=1; }
[ "$qemu_code" -eq 124 ] && verdict "the emulated host timed out after ${QEMU_TIMEOUT}s"
tr -d '\r' <"$console" | grep -q '^E2E-HANG' && verdict "a coldstart hung in the host's kernel (E2E-HANG above)"
[ "$stalled" = 1 ] && verdict "the emulated host stalled: no console output for ${STALL_AFTER}s"
tr -d '\r' <"$console" | grep -q '^E2E-END' || verdict "no E2E-END marker: the host's /init did not finish"
tr -d '\r' <"$console" | grep -q '^E2E-FAIL' && verdict "a case failed (E2E-FAIL above)"
for c in boot_1vcpu boot_2vcpu_mmio boot_both_signals init_bad_option neg_missing_kernel \
	neg_corrupt_bzimage neg_initrd_too_large; do
	tr -d '\r' <"$console" | grep -q "^E2E-PASS $c " || verdict "case $c did not pass"
done
if ! tr -d '\r' <"$console" | grep -q '^E2E-SKIP snapshot_linux'; then
	for c in snap_create snap_restore_mmap snap_restore_uffd; do
		tr -d '\r' <"$console" | grep -q "^E2E-PASS $c " || verdict "case $c did not pass"
	done
fi
log "total $(elapsed "$t_start") s, host flakes $flakes (functional timing: emulated CPU, nested KVM)"
[ $failed -eq 0 ] && log "PASS" && exit 0
log "the host console's last lines (kernel messages):"
console_tail 40
[ -s "$work/qemu.err" ] && { log "qemu stderr:"; grep -v 'TCG doesn' "$work/qemu.err" | head -n 10; }
exit 1
