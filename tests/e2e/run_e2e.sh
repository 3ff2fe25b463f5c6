#!/bin/bash
# The end-to-end rig: in the emulated SVM host of `coldstart emulate`
# (QEMU TCG, Debian's cloud kernel with kvm_amd), boots Linux guests from
# `coldstart image build` with the statically linked coldstart (cases.sh
# runs the cases). Timings are functional only.
# Usage: run_e2e.sh --coldstart BIN --work DIR (--source DIR | --static BIN)
#   --coldstart  the coldstart that builds the image and runs `emulate`
#   --static     a statically linked coldstart to test inside the host;
#                default: $COLDSTART_E2E_STATIC, else built in WORK/static
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

t_start=$(date +%s.%N)
log() { printf 'e2e: %s\n' "$*"; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
command -v readelf >/dev/null || { log "SKIP: readelf not found: install binutils"; exit 77; }

mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)

# 1. The statically linked coldstart under test.
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
	static=$work/static/coldstart
	log "static build took $(elapsed "$t") s"
fi
if readelf -l "$static" 2>/dev/null | grep -q INTERP; then
	log "FAIL: $static is dynamically linked"
	exit 1
fi

# 2. The guest: kernel (also the emulated host's kernel) and initramfs.
t=$(date +%s.%N)
image=$("$coldstart" image build --rootfs) || { log "FAIL: coldstart image build --rootfs"; exit 1; }
log "guest image $image ($(elapsed "$t") s); manifest:"
sed -n 's/^ *"\(sha256\|package\|version\)": \(.*\)/    \1 \2/p' "$image/manifest.json" | head -6
for f in vmlinuz initramfs.cpio.gz rootfs.ext4; do
	[ -s "$image/$f" ] || { log "FAIL: $image/$f missing"; exit 1; }
done

# 3. Every case in one boot of the emulated host. A host that stalls,
# times out or dies without E2E-END gets one more boot: the first is
# printed as E2E-FLAKE with its markers, so it stays visible; the second
# decides.
out=$work/cases.out
console=$work/l1-console.log
host_broke() { # the host failed, or ended without its E2E-END
	[ "$code" -ne 0 ] || ! grep -q '^E2E-END' "$out"
}
flakes=0
for try in 1 2; do
	t=$(date +%s.%N)
	log "running the cases in the emulated SVM host (coldstart emulate)"
	"$coldstart" emulate --timeout "${COLDSTART_E2E_TIMEOUT:-1200}" \
		--stall "${COLDSTART_E2E_STALL:-150}" --console "$console" \
		-- bash "$here/cases.sh" "$static" "$image" >"$out" 2>"$work/emulate.err"
	code=$?
	log "emulated host ran $(elapsed "$t") s (coldstart emulate exit $code)"
	[ "$code" -eq 77 ] && { cat "$work/emulate.err"; log "SKIP: the emulated host cannot run here"; exit 77; }
	host_broke && ! grep -q '^E2E-FAIL' "$out" || break
	[ $try = 2 ] && break
	flakes=$((flakes + 1))
	log "E2E-FLAKE: the emulated host failed (exit $code) or ended without E2E-END; its markers and errors:"
	grep '^E2E-' "$out" | sed 's/^/  first boot: /' | tail -n 150
	grep -v '^coldstart emulate:' "$work/emulate.err" | tail -n 40 | sed 's/^/  first boot: /'
	cp "$console" "$work/l1-console.flake.log" 2>/dev/null
	log "booting the emulated host once more"
done

# 4. Verdict from the markers.
grep '^E2E-' "$out" | sed 's/^/  /' | head -n 400
failed=0
verdict() { log "FAIL: $*"; failed=1; }
[ "$code" -ne 0 ] && verdict "coldstart emulate exited $code: $(grep -v '^coldstart emulate:' "$work/emulate.err" | head -n 3)"
grep -q '^E2E-HANG' "$out" && verdict "a coldstart hung in the host's kernel (E2E-HANG above)"
grep -q '^E2E-END' "$out" || verdict "no E2E-END marker: the cases did not finish"
grep -q '^E2E-FAIL' "$out" && verdict "a case failed (E2E-FAIL above)"
for c in boot_1vcpu boot_2vcpu_mmio boot_both_signals init_bad_option neg_missing_kernel \
	neg_corrupt_bzimage neg_initrd_too_large probes_61 rootfs_exec snap_create snap_restore_mmap \
	snap_restore_uffd; do
	grep -q "^E2E-PASS $c " "$out" || verdict "case $c did not pass"
done
log "total $(elapsed "$t_start") s, host flakes $flakes (functional timing: emulated CPU, nested KVM)"
[ $failed -eq 0 ] && log "PASS" && exit 0
log "the host console's last lines (kernel messages):"
grep -v '^COLDSTART-EMULATE-ALIVE' "$console" 2>/dev/null | tr -d '\r' | grep -v '^$' | tail -n 40 | sed 's/^/  console: /'
exit 1
