#!/bin/bash
# run_kvm_suites.sh's boots, with a stand-in for `coldstart emulate`: a
# host that dies after each suite gets further boots (a CI run once gave
# up after the second and waited 2400 s on a stalled one), a boot that
# records nothing ends the retries, a healthy host boots once, and a
# suite that needed a second run is named.
# Usage: test_fixture.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0 passed=0
ok() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# The stand-in: FAKE_MODE one (record the first suite asked for, then
# die), none (die at once) or all (record every suite, exit 0). It lists
# the suites asked for with ctest -N, as the real host would run them.
cat >"$tmp/coldstart" <<'FAKE'
#!/bin/bash
while [ "$1" != -- ]; do shift; done
shift
rec= dir= args=()
while [ $# -gt 0 ]; do
	case $1 in
	COLDSTART_EMULATED_RECORD=*) rec=${1#*=} ;;
	--test-dir) dir=$2; shift ;;
	-L | -R) args+=("$1" "$2"); shift ;;
	esac
	shift
done
names=$(ctest --test-dir "$dir" -N "${args[@]}" | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p' | grep -v '^emulated\.')
echo "fake host: asked for $(echo $names | wc -w) suites"
case $FAKE_MODE in
one) n=$(echo "$names" | head -n 1); echo 0 >"$rec/$n.rc"; echo 1 >"$rec/$n.secs"; exit 1 ;;
none) exit 1 ;;
all) for n in $names; do echo 0 >"$rec/$n.rc"; echo 1 >"$rec/$n.secs"; done
	echo "kvm_suite: FLAKE $(echo "$names" | head -n 1) failed (exit 1) in the emulated host; running it once more" >"$rec/$(echo "$names" | head -n 1).flake.note"
	exit 0 ;;
esac
FAKE
chmod +x "$tmp/coldstart"
run() { # MODE: runs the fixture into $tmp/r, output in $tmp/out
	rm -rf "$tmp/r"
	COLDSTART_TEST_EMULATED=1 FAKE_MODE=$1 bash "$here/run_kvm_suites.sh" "$tmp/coldstart" "$build" "$tmp/r" >"$tmp/out" 2>&1
	code=$?
	recorded=$(ls "$tmp/r"/*.rc 2>/dev/null | wc -l)
}

run one
[ "$code" = 1 ] && ok || fail "a host that dies each boot: fixture exit $code, want 1"
[ "$recorded" = 3 ] && ok || fail "three boots should record 3 suites, recorded $recorded: $(cat "$tmp/out")"
grep -q "once more for those (boot 3)" "$tmp/out" && ok || fail "no third boot: $(cat "$tmp/out")"
! grep -q "(boot 4)" "$tmp/out" && ok || fail "more than COLDSTART_EMULATED_BOOTS boots"

run none
[ "$code" = 1 ] && [ "$recorded" = 0 ] && ok || fail "a host that records nothing: exit $code, $recorded recorded"
# a boot that records nothing still gets one more (a fault may come
# early), up to the limit
grep -q "boot 2 recorded no suite" "$tmp/out" && grep -q "once more for those (boot 3)" "$tmp/out" &&
	ok || fail "no third boot after one that recorded nothing: $(cat "$tmp/out")"
! grep -q "(boot 4)" "$tmp/out" && ok || fail "more than COLDSTART_EMULATED_BOOTS boots"

run all
[ "$code" = 0 ] && ok || fail "a healthy host: fixture exit $code: $(cat "$tmp/out")"
! grep -q "once more for those" "$tmp/out" && ok || fail "a healthy host booted twice"
grep -q "run_kvm_suites: kvm_suite: FLAKE .* its second run: exit 0" "$tmp/out" && ok || fail "the flaky suite is not named: $(cat "$tmp/out")"

echo "test_fixture: $passed passed, $failed failed"
[ "$failed" = 0 ]
