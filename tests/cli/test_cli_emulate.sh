#!/bin/bash
# coldstart emulate: what it says when a piece is missing (exit 77), bad
# options (exit 2), a host that runs out of time, whose kernel dies or
# stalls (exit 1), and one real run in the emulated SVM host: the
# command's exit status, output, environment and working directory, KVM
# inside, --out written back and nothing else.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch

expect 2 'no command' emulate
expect 2 'unknown or incomplete option' emulate --bogus -- true
expect 2 "below 512 MiB" emulate --mem 1M -- true
expect 2 "between 1 s and 7 days" emulate --timeout 0 -- true
# Missing pieces: exit 77 naming what to install.
code=0
PATH=/nonexistent "$COLDSTART" emulate -- true 2>"$err" || code=$?
[ "$code" = 77 ] && grep -q 'qemu-system-x86_64 not found: install the Debian package qemu-system-x86' "$err" &&
	ok || fail "without QEMU: exit $code, $(cat "$err")"
command -v qemu-system-x86_64 >/dev/null || { echo "skipping the rest: no QEMU"; finish; exit; }
expect 77 "lacks modules/.*coldstart image build --force" emulate --image "$tmp" -- true

# A real run. The image comes from the cache (built if missing).
mkdir -p "$tmp/out" "$tmp/cwd"
cd "$tmp/cwd" || exit 1
code=0
COLDSTART_TEST_VALUE="it's here" timeout 600 "$COLDSTART" emulate --out "$tmp/out" \
	--console "$tmp/console.log" -- bash -c '
	echo "out: $COLDSTART_TEST_VALUE in $PWD"
	echo "err: to stderr" >&2
	test -c /dev/kvm && echo "kvm: yes"
	[ -t 1 ] || echo "stdout: not a terminal"
	grep -o "coldstart.emulated=[a-z-]*" /proc/cmdline
	echo written >"'"$tmp"'/out/back"
	echo lost >"'"$tmp"'/cwd/lost"
	exit 7' >"$out" 2>"$err" || code=$?
cd / || exit 1
if [ "$code" = 77 ]; then
	echo "skipping the real run: $(tail -n 1 "$err")"
	finish
	exit
fi
[ "$code" = 7 ] && ok || fail "exit $code, want the command's 7: $(tail -n 5 "$err")"
grep -qx "out: it's here in $tmp/cwd" "$out" && ok || fail "environment or working directory not passed: $(head -3 "$out")"
grep -qx "err: to stderr" "$err" && ok || fail "stderr not forwarded"
grep -qx "kvm: yes" "$out" && ok || fail "no /dev/kvm inside"
grep -qx "stdout: not a terminal" "$out" && ok || fail "stdout is a terminal inside but a file here"
grep -qx "coldstart.emulated=qemu-tcg-svm" "$out" && ok || fail "no emulation marker on the host's command line"
[ "$(cat "$tmp/out/back" 2>/dev/null)" = written ] && ok || fail "--out was not written back"
[ ! -e "$tmp/cwd/lost" ] && ok || fail "a write outside --out reached this machine"
grep -q "COLDSTART-EMULATE-EXIT 7" "$tmp/console.log" && ok || fail "--console lacks the exit marker"
grep -q "the command exited with status 7" "$err" && ok || fail "no closing progress line"

# Every boot below gets its time: a loaded CI machine boots slower, and
# a boot that does not come up is tried once more.
export EXPECT_TIMEOUT=400
# A boot that never comes up (a test hook keeps the first one from it) is
# stopped after --boot-timeout and booted once more: the command runs
# once, in the second.
export COLDSTART_EMULATE_TEST_NO_READY=1
expect 0 "did not come up within 20 s \(--boot-timeout\).*; booting it once more" \
	emulate --work-dir "$tmp" --boot-timeout 20s --console "$tmp/twice.log" -- true
grep -q "host up after" "$err" && ok || fail "no second boot came up: $(tail -n 3 "$err")"
[ "$(grep -c "COLDSTART-EMULATE-READY" "$tmp/twice.log")" = 1 ] &&
	grep -q "COLDSTART-EMULATE-EXIT 0" "$tmp/twice.log" && ok ||
	fail "the console log lacks the second boot: $(grep COLDSTART "$tmp/twice.log" | head -5)"
# ... and a second boot that does not come up either fails the run.
export COLDSTART_EMULATE_TEST_NO_READY=all
expect 1 "did not come up within 15 s \(--boot-timeout\).*, twice" \
	emulate --work-dir "$tmp" --boot-timeout 15s -- true
unset COLDSTART_EMULATE_TEST_NO_READY
# A host that cannot even boot in its time: exit 1, the reason named.
expect 1 'ran out of its 1 s \(--timeout\)' emulate --work-dir "$tmp" --timeout 1s -- true
# A host whose kernel dies: exit 1, the kernel's own reason in the message
# and the console's last lines on stderr (a CI run once lost both).
expect 1 "its kernel said: .*Kernel panic" emulate --work-dir "$tmp" -- \
	sh -c 'echo c >/proc/sysrq-trigger; sleep 60'
grep -q "^  console: " "$err" && ok || fail "no console lines after a kernel panic"
# A host whose kernel stalls (its init sees an RCU stall, dumps the
# stacks and says STALLED on the console) is stopped at once, exit 1;
# here the command writes the kernel's report. It is the report of the
# CPU that saw another stuck: one stuck in a nested guest takes no
# interrupts and reports nothing itself (a CI run waited 2400 s on one).
expect 1 "kernel stalled.*its kernel said: .*detected stalls on CPUs" emulate --work-dir "$tmp" -- \
	sh -c 'echo "<3>rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:" >/dev/kmsg; sleep 120'
# A wedged host whose kernel still prints (RCU reports every minute) but
# whose init beats no more is stopped after --stall: here the command
# stops the heartbeat and keeps the kernel printing.
expect 1 "stalled: no heartbeat from its init for 25 s" emulate --work-dir "$tmp" --stall 25s -- \
	sh -c 'kill -STOP $(cat /run/coldstart-emulate/heartbeat.pid); while :; do echo "<2>coldstart test: still printing" >/dev/kmsg; sleep 3; done'
finish
