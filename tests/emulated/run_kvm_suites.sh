#!/bin/bash
# The fixture of every test suite that needs KVM (label kvm): on a host
# without a usable /dev/kvm it boots the emulated SVM host once and runs
# all of them there with ctest, each recording its exit status and output
# for kvm_suite.sh to replay under its own name. With a usable /dev/kvm it
# does nothing: the suites run here.
# Usage: run_kvm_suites.sh COLDSTART BUILD_DIR RESULTS_DIR
# COLDSTART_EMULATED_BUILD names another build tree whose suites run
# there instead (./run.sh test: the Release build, whose processes start
# about twice as fast under TCG as the sanitizer build's, and whose
# seccomp lists are the ones users get; natively the suites stay ASan).
set -u
coldstart=$1 build=${COLDSTART_EMULATED_BUILD:-$2} results=$3

# -c first: bash's <> would create a missing /dev/kvm as a plain file.
# COLDSTART_TEST_EMULATED=1 takes the emulated path on a host with KVM.
if [ "${COLDSTART_TEST_EMULATED:-0}" != 1 ] && [ -c /dev/kvm ] &&
	(exec 3<>/dev/kvm) 2>/dev/null; then
	echo "run_kvm_suites: /dev/kvm is usable here: the KVM suites run natively"
	exit 0
fi
rm -rf "$results" && mkdir -p "$results" || exit 1
if [ "${COLDSTART_TEST_EMULATED:-0}" = 1 ]; then
	echo "run_kvm_suites: COLDSTART_TEST_EMULATED=1: running every suite labelled kvm inside the emulated SVM host"
else
	echo "run_kvm_suites: no usable /dev/kvm here; running every suite labelled kvm inside the emulated SVM host"
fi
t0=$(date +%s)
# Writes inside land on the emulated host's scratch disk, except the
# results directory; the tests' own fixture (this script) sees /dev/kvm
# there and does nothing. Usage: in_host CTEST-ARGS...
in_host() {
	"$coldstart" emulate --out "$results" --mem "${COLDSTART_EMULATED_MEM:-6G}" \
		--timeout "${COLDSTART_EMULATED_TIMEOUT:-2400}" \
		--console "$results/console.$boot.log" -- \
		env COLDSTART_EMULATED_RECORD="$results" COLDSTART_TEST_EMULATED=0 \
		ctest --test-dir "$build" -j2 --timeout 900 --output-on-failure "$@"
}

# The suites labelled kvm that have no recorded result yet.
missing_suites() {
	local name
	for name in $(ctest --test-dir "$build" -N -L '^kvm$' | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p'); do
		[ "$name" = emulated.kvm_suites ] || [ -s "$results/$name.rc" ] || echo "$name"
	done
}

boot=1
in_host -L '^kvm$'
code=$?
echo "run_kvm_suites: the emulated host's ctest exited $code after $(($(date +%s) - t0)) s"
# A host that died (a kernel fault, a stall) left some suites without a
# result: they get another boot, so one fault is named in this output
# (console.N.log) without failing every suite after it. Up to three boots
# in all: a CI run once lost its second boot to the same kind of fault 47 s
# in, before it recorded anything.
while [ "$code" != 0 ] && [ "$code" != 8 ] && [ "$boot" -lt "${COLDSTART_EMULATED_BOOTS:-3}" ]; do
	missing=($(missing_suites))
	[ ${#missing[@]} -gt 0 ] || break
	if [ "$boot" -gt 1 ] && [ "${#missing[@]}" -eq "$before" ]; then
		echo "run_kvm_suites: boot $boot recorded no suite"
	fi
	before=${#missing[@]}
	echo "run_kvm_suites: the emulated host ended before ${missing[*]} finished; once more for those (boot $((boot + 1)))"
	for name in "${missing[@]}"; do rm -f "$results/$name.log"; done
	boot=$((boot + 1))
	re=$(IFS='|'; echo "${missing[*]}")
	in_host -R "^(${re//./\\.})\$"
	code=$?
	echo "run_kvm_suites: boot $boot's ctest exited $code after $(($(date +%s) - t0)) s in all"
done
# What each suite took in the emulated host (TCG is about 30x slower),
# slowest first: where the CI time goes.
echo "run_kvm_suites: seconds per suite in the emulated host:"
for f in "$results"/*.secs; do
	[ -s "$f" ] && printf '  %6s  %s\n' "$(cat "$f")" "$(basename "$f" .secs)"
done | sort -rn
# Suites that failed once in the emulated host and ran again
# (kvm_suite.sh): named here so a flaky suite is seen even when its
# second run passed.
for f in "$results"/*.flake.note; do
	[ -s "$f" ] && echo "run_kvm_suites: $(cat "$f"); its second run: exit $(cat "${f%.flake.note}.rc" 2>/dev/null || echo '?')"
done
ls "$results"/*.rc >/dev/null 2>&1 || { echo "run_kvm_suites: no suite recorded a result" >&2; exit 1; }
# A failing suite fails under its own name; this fixture fails only when
# the emulated host itself did (exit codes of coldstart emulate other
# than ctest's 0 or 8).
case $code in
0 | 8) exit 0 ;;
*) exit "$code" ;;
esac
