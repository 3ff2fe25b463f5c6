#!/bin/bash
# fuzz_run.sh [--fresh] FUZZER SEEDS REGRESSIONS SECONDS WORKDIR
# Runs one fuzz target: replays every file in REGRESSIONS (crashers kept
# once fixed) and SEEDS, then fuzzes for SECONDS, growing WORKDIR/corpus
# (kept between runs, emptied first with --fresh) from SEEDS. Prints the
# executions and executions per second; a finding (crash, sanitizer
# report, leak, timeout, out of memory) is saved in WORKDIR/findings/, its
# report shown, and the exit status is 1.
set -uo pipefail
fresh=0
if [ "${1:-}" = --fresh ]; then
	fresh=1
	shift
fi
if [ $# -ne 5 ]; then
	echo "usage: fuzz_run.sh [--fresh] FUZZER SEEDS REGRESSIONS SECONDS WORKDIR" >&2
	exit 2
fi
bin=$1 seeds=$2 regress=$3 secs=$4 work=$5
name=$(basename "$bin")
name=${name#fuzz_}
# The targets' own messages (refused inputs) are noise: fds 1 and 2 are
# closed for them, libFuzzer and the sanitizers still report.
opts=(-close_fd_mask=3 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048)

mkdir -p "$work"
inputs=()
for f in "$regress"/* "$seeds"/*; do
	[ -f "$f" ] && inputs+=("$f")
done
if [ ${#inputs[@]} -eq 0 ]; then
	echo "fuzz $name: no seeds in $seeds (build the fuzz configuration first)" >&2
	exit 1
fi
if ! "$bin" "${opts[@]}" "${inputs[@]}" >"$work/replay.log" 2>&1; then
	echo "fuzz $name: FAILED replaying its regression inputs and seeds:" >&2
	tail -n 60 "$work/replay.log" >&2
	exit 1
fi
echo "fuzz $name: replayed ${#inputs[@]} regression inputs and seeds"

[ $fresh -eq 1 ] && rm -rf "$work/corpus"
mkdir -p "$work/corpus" "$work/findings"
touch "$work/.started" # findings of earlier runs stay, but are not this run's
"$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 \
	-artifact_prefix="$work/findings/" "$work/corpus" "$seeds" \
	>"$work/fuzz.log" 2>&1
rc=$?
runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$work/fuzz.log")
rate=$(awk '/stat::average_exec_per_sec/ { print $2 }' "$work/fuzz.log")
echo "fuzz $name: ${runs:-?} executions in $secs s (${rate:-?}/s), corpus" \
	"$(find "$work/corpus" -type f | wc -l) inputs"
findings=$(find "$work/findings" -type f -newer "$work/.started" | sort)
if [ $rc -ne 0 ] || [ -n "$findings" ]; then
	echo "fuzz $name: FINDING (exit $rc); the report:" >&2
	grep -v '^#\|^INFO\|^stat::\|^MS:\|^Done\|^Loaded\|^Running' \
		"$work/fuzz.log" | tail -n 80 >&2
	for f in $findings; do
		echo "fuzz $name: input saved as $f" >&2
	done
	echo "fuzz $name: replay with: $bin $work/findings/FILE; once fixed," \
		"keep it: cp FILE tests/fuzz/regressions/$name/" >&2
	exit 1
fi
