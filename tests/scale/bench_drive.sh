#!/bin/bash
# bench_drive.sh COLDSTART TESTKERNEL_ELF [MIB] [RUNS]: the copy-on-write
# mechanisms of --drive side by side on one image (MIB+2 MiB, default
# MIB 32, RUNS 5): cow (MAP_PRIVATE), overlay=FILE (a sparse per-VM
# file), reflink=FILE (where the filesystem of $TMPDIR shares extents)
# and rw (the image itself, for reference). Per mode: the median time
# from process start to the first KVM_RUN of the test kernel stopped at
# boot (RUNS runs, modes interleaved); after the guest wrote MIB MiB
# (tk.blkbench, 64 KiB requests) the VMM's resident, proportional and
# private memory (/proc/PID/smaps_rollup), the disk used by the VM's own
# file (st_blocks), and the guest's write and read throughput (TSC
# cycles at the host's "cpu MHz", medians of RUNS). A benchmark, not a
# test: it prints a table and fails only when a command does.
set -euo pipefail
cs=$1 tk=$2 mib=${3:-32} runs=${4:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=$tmp/base.img
truncate -s $((mib + 2))M "$base"
mhz=$(awk -F: '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo)
modes="cow overlay reflink rw"
if ! cp --reflink=always "$base" "$tmp/probe" 2>/dev/null; then
	modes="cow overlay rw"
	echo "reflink: the filesystem of $tmp shares no extents (FICLONE); left out" >&2
fi
rm -f "$tmp/probe"

# drive MODE N: the --drive argument of run N in MODE (its own file new)
drive() {
	rm -f "$tmp/own$2"
	case $1 in
	overlay | reflink) echo "$base,$1=$tmp/own$2" ;;
	*) echo "$base,$1" ;;
	esac
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# start MODE: ms to the first KVM_RUN of one run
start() {
	"$cs" run --kernel "$tk" --allow-pvm --mem 64M --stop-at boot \
		--drive "$(drive "$1" s)" 2>&1 | awk '/first KVM_RUN/ { print $1 }'
}

# written MODE: "rss_mib pss_mib private_mib disk_kib write_mbs read_mbs"
# of a VM held (tk.exit=hang) after the guest wrote MIB MiB
written() {
	local con=$tmp/console pid kb
	: >"$con"
	"$cs" run --kernel "$tk" --allow-pvm --mem 64M --timeout 120s -q \
		--console "$con" --drive "$(drive "$1" w)" \
		--cmdline "tk.signal=port tk.exit=hang tk.blkbench=$mib" 2>/dev/null &
	pid=$!
	for _ in $(seq 1200); do
		grep -q 'bench done\|bench BAD' "$con" && break
		sleep 0.1
	done
	grep -q 'bench done' "$con" || { kill -INT $pid; wait $pid || true; echo "bench failed: $(cat "$con")" >&2; exit 1; }
	awk '/^Rss:/ { r = $2 } /^Pss:/ { p = $2 } /^Private_(Clean|Dirty):/ { v += $2 }
	     END { printf "%.1f %.1f %.1f ", r / 1024, p / 1024, v / 1024 }' \
		"/proc/$pid/smaps_rollup"
	kb=0
	[ -e "$tmp/ownw" ] && kb=$(du -k "$tmp/ownw" | cut -f1)
	echo -n "$kb "
	awk -v mib="$mib" -v mhz="$mhz" '
	     / bench write / { w = $4 } / bench read / { r = $4 }
	     END { printf "%.0f %.0f\n", mib * mhz * 1e6 / w, mib * mhz * 1e6 / r }' "$con"
	kill -INT $pid
	wait $pid || true
}

declare -A st wr
for i in $(seq "$runs"); do
	echo "run $i of $runs" >&2
	for m in $modes; do
		st[$m]+="$(start "$m") "
		wr[$m]+="$(written "$m")
"
	done
done
printf '%-8s %10s %9s %9s %12s %11s %10s %10s\n' mode "start ms" "RSS MiB" \
	"PSS MiB" "private MiB" "disk KiB" "write MB/s" "read MB/s"
for m in $modes; do
	col() { echo "${wr[$m]}" | awk -v c="$1" 'NF { print $c }' | median; }
	printf '%-8s %10s %9s %9s %12s %11s %10s %10s\n' "$m" \
		"$(echo "${st[$m]}" | tr ' ' '\n' | grep . | median)" \
		"$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)"
done
echo "guest writes $mib MiB; the test kernel in 64 MiB of guest memory; medians of $runs runs"
