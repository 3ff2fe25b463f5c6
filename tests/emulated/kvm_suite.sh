#!/bin/bash
# Runs one test suite that needs KVM, wherever KVM is:
#   - with a usable /dev/kvm here, the suite runs here, held to TIMEOUT s;
#   - inside the emulated SVM host (COLDSTART_EMULATED_RECORD set by
#     run_kvm_suites.sh), it runs, held to 6 x TIMEOUT s (an emulated
#     CPU), and leaves its exit status and output in that directory;
#   - without a usable /dev/kvm, it replays what the emulated host recorded
#     for it, so ctest reports each suite's pass or fail by name.
# Usage: kvm_suite.sh NAME TIMEOUT RESULTS_DIR COMMAND [ARGS...]
set -u
name=$1 limit=$2 results=$3
shift 3

# emulated_attempt LOG COMMAND...: one run inside the emulated host.
emulated_attempt() {
	local log=$1
	shift
	timeout -k 10 $((limit * 6)) "$@" 2>&1 | tee "$log"
	code=${PIPESTATUS[0]}
	[ "$code" -eq 124 ] && echo "kvm_suite: $name timed out after $((limit * 6)) s in the emulated host" | tee -a "$log"
	return 0
}

if [ -n "${COLDSTART_EMULATED_RECORD:-}" ]; then
	rec=$COLDSTART_EMULATED_RECORD
	t0=$(date +%s)
	emulated_attempt "$rec/$name.log" "$@"
	# Under QEMU's TCG a nested (L2) guest now and then goes wrong
	# whatever the guest: it triple-faults into the reset vector (KVM
	# reports a shutdown at rip 0xfff0), or a restored probe guest that
	# completes in a second natively is still running after 30 s (about
	# one run in 30 of kvm.snapshot, looped). A suite that failed here
	# gets one more run; both are in the log, the first marked FLAKE, and
	# run_kvm_suites.sh lists the suites that needed it. Natively there is
	# no second run.
	if [ "$code" -ne 0 ] && [ "$code" -ne 77 ]; then
		mv "$rec/$name.log" "$rec/$name.flake.log"
		why="exit $code"
		grep -q 'guest shut down.*rip 0xfff0' "$rec/$name.flake.log" &&
			why="$why, by an L2 triple fault at the reset vector"
		echo "kvm_suite: FLAKE $name failed ($why) in the emulated host; running it once more" | tee "$rec/$name.flake.note"
		emulated_attempt "$rec/$name.log" "$@"
		{ cat "$rec/$name.flake.note"; sed 's/^/  first run | /' "$rec/$name.flake.log"; } >>"$rec/$name.log"
	fi
	echo "$code" >"$rec/$name.rc"
	echo "$(($(date +%s) - t0))" >"$rec/$name.secs"
	exit "$code"
fi
# -c first: bash's <> would create a missing /dev/kvm as a plain file.
if [ "${COLDSTART_TEST_EMULATED:-0}" != 1 ] && [ -c /dev/kvm ] &&
	(exec 3<>/dev/kvm) 2>/dev/null; then
	exec timeout -k 10 "$limit" "$@"
fi
if [ ! -s "$results/$name.rc" ]; then
	echo "kvm_suite: no usable /dev/kvm here, and the emulated host recorded no result for $name" >&2
	[ -s "$results/$name.log" ] && { echo "kvm_suite: its output so far:" >&2; cat "$results/$name.log" >&2; }
	echo "kvm_suite: (see the output of the test emulated.kvm_suites)" >&2
	exit 1
fi
echo "kvm_suite: no usable /dev/kvm here; $name ran inside the emulated SVM host (QEMU TCG), its output:"
cat "$results/$name.log"
exit "$(cat "$results/$name.rc")"
