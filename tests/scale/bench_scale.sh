#!/bin/bash
# bench_scale.sh COLDSTART [OLD_COLDSTART] [--quick]: how long `coldstart
# report` takes on documents of 100, 1,000 and 10,000 series (100 samples
# each) and `coldstart compare` on two documents of one series of 10^4,
# 10^5, 10^6 and 10^7 samples per side (NEW 1 % slower; 10^7 is above
# compare's default --max-samples: refused, then run with the bound
# lifted). A benchmark,
# not a test: it prints a table (wall seconds, user+sys CPU seconds, peak
# RSS) and fails only when a command does. With OLD_COLDSTART (another
# build, e.g. of the commit before a change) each row is timed for both,
# the old one cut off after $BENCH_CAP seconds (default 60: "> 60").
# --quick stops at 1,000 series and 10^6 samples. Documents are made by
# gen_result.py (python3) in a temporary directory, removed at exit.
set -euo pipefail
new=$1
old=${2:-}
[ "$old" = --quick ] && old=
quick=false
for a in "$@"; do [ "$a" = --quick ] && quick=true; done
cap=${BENCH_CAP:-60}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run BIN ARGS...: "wall cpu rss_mib" of one run, or "> cap" when cut off
run() {
	local t=$tmp/time rc=0
	timeout "$cap" /usr/bin/time -f '%e %U %S %M' -o "$t" "$@" \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" = 124 ]; then
		echo "> $cap - -"
		return
	fi
	# compare's exit 1 and 3 are verdicts, not failures; its refusal of
	# more samples than --max-samples (exit 2) is timed and marked
	if [ "$rc" = 2 ] && grep -q 'compare takes at most' "$tmp/err"; then
		tail -1 "$t" | awk '{ printf "%.2f %.2f %.0f refused\n", $1, $2 + $3, $4 / 1024 }'
		return
	fi
	if [ "$rc" != 0 ] && [ "$rc" != 1 ] && [ "$rc" != 3 ]; then
		echo "bench_scale: $* failed (exit $rc):" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
	# the last line: /usr/bin/time puts "Command exited with non-zero
	# status N" before it
	tail -1 "$t" | awk '{ printf "%.2f %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }'
}

row() { # what, then the command after the binary
	local what=$1 n o
	shift
	n=$(run "$new" "$@")
	if [ -n "$old" ]; then
		o=$(run "$old" "$@")
		printf '%-34s %-22s %s\n' "$what" "$o" "$n"
	else
		printf '%-34s %s\n' "$what" "$n"
	fi
}

if [ -n "$old" ]; then
	printf '%-34s %-22s %s\n' "" "old: wall cpu MiB" "new: wall cpu MiB"
else
	printf '%-34s %s\n' "" "wall s, cpu s, peak MiB"
fi
series="100 1000 10000"
samples="10000 100000 1000000 10000000"
$quick && series="100 1000" && samples="10000 100000 1000000"
for n in $series; do
	python3 "$here/gen_result.py" "$tmp/r$n.json" --series "$n" \
		--samples 100
	row "report, $n series (md)" report "$tmp/r$n.json" --format md \
		--out "$tmp/out-$n" -q
	rm -rf "$tmp/out-$n" "$tmp/r$n.json"
done
for n in $samples; do
	python3 "$here/gen_result.py" "$tmp/b.json" --series 1 --samples "$n"
	python3 "$here/gen_result.py" "$tmp/n.json" --series 1 --samples "$n" \
		--seed 2 --shift 1.01
	row "compare, $n samples per side" compare "$tmp/b.json" "$tmp/n.json"
	# above the default bound, what lifting it costs
	if [ "$n" -gt 4000000 ]; then
		row "compare, $n, --max-samples 0" compare "$tmp/b.json" \
			"$tmp/n.json" --max-samples 0
	fi
	rm -f "$tmp/b.json" "$tmp/n.json"
done
