#!/bin/bash
# The fixture of every test suite that needs KVM (label kvm): on a host
# without a usable /dev/kvm it boots the emulated SVM host once and runs
# all of them there with ctest, each recording its exit status and output
# for kvm_suite.sh to replay under its own name. With a usable /dev/kvm it
# does nothing: the suites run here.
# Usage: run_kvm_suites.sh COLDSTART BUILD_DIR RESULTS_DIR
set -u
coldstart=$1 build=$2 results=$3

# -c first: bash's <> would create a missing /dev/kvm as a plain file.
if [ -c /dev/kvm ] && (exec 3<>/dev/kvm) 2>/dev/null; then
	echo "run_kvm_suites: /dev/kvm is usable here: the KVM suites run natively"
	exit 0
fi
rm -rf "$results" && mkdir -p "$results" || exit 1
echo "run_kvm_suites: no usable /dev/kvm here; running every suite labelled kvm inside the emulated SVM host"
t0=$(date +%s)
# Writes inside land on the emulated host's scratch disk, except the
# results directory; the tests' own fixture (this script) sees /dev/kvm
# there and does nothing.
"$coldstart" emulate --out "$results" --timeout "${COLDSTART_EMULATED_TIMEOUT:-2400}" \
	--console "$results/console.log" -- \
	env COLDSTART_EMULATED_RECORD="$results" \
	ctest --test-dir "$build" -L '^kvm$' -j2 --timeout 900 --output-on-failure
code=$?
echo "run_kvm_suites: the emulated host's ctest exited $code after $(($(date +%s) - t0)) s"
ls "$results"/*.rc >/dev/null 2>&1 || { echo "run_kvm_suites: no suite recorded a result" >&2; exit 1; }
# A failing suite fails under its own name; this fixture fails only when
# the emulated host itself did (exit codes of coldstart emulate other
# than ctest's 0 or 8).
case $code in
0 | 8) exit 0 ;;
*) exit "$code" ;;
esac
