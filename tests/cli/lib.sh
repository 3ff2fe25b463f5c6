# Helpers for black-box tests of the coldstart binary: each check runs the
# binary under a timeout and asserts its exit code and output.
# Usage: . lib.sh; COLDSTART=path; expect CODE PATTERN -- ARGS...

pass=0
failed=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect CODE REGEX ARGS...: exit code CODE and REGEX in stdout+stderr,
# within EXPECT_TIMEOUT seconds (default 120).
expect() {
	local want=$1 pattern=$2 code
	shift 2
	timeout "${EXPECT_TIMEOUT:-120}" "$COLDSTART" "$@" >"$out" 2>"$err"
	code=$?
	if [ "$code" -ne "$want" ]; then
		echo "FAIL: coldstart $* exited $code, expected $want"
		sed 's/^/  | /' "$err" | head -5
		failed=$((failed + 1))
		return 1
	fi
	if [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$out" "$err"; then
		echo "FAIL: coldstart $*: output lacks /$pattern/"
		cat "$out" "$err" | sed 's/^/  | /' | head -8
		failed=$((failed + 1))
		return 1
	fi
	pass=$((pass + 1))
}

# json_check PYTHON-EXPR FILE: the expression over `d` (the parsed JSON)
# must be true.
json_check() {
	if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$2"; then
		pass=$((pass + 1))
	else
		echo "FAIL: JSON check '$1' on $2"
		head -c 600 "$2" | sed 's/^/  | /'
		failed=$((failed + 1))
	fi
}

# ok / fail MESSAGE: count a check of the test's own.
# Names, sizes, types, mtimes and contents of a directory's entries; never
# opens anything but regular files (a FIFO would block).
sums() {
	stat -c '%n %s %F %Y' "$1" "$1"/* 2>&1
	find "$1" -maxdepth 1 -type f -exec sha256sum {} + 2>&1 | sort
}

ok() { pass=$((pass + 1)); }
fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}

# need_kvm: exit 77 (skipped) on a host without /dev/kvm.
need_kvm() {
	if [ ! -c /dev/kvm ]; then
		echo "skipping: no /dev/kvm"
		exit 77
	fi
}

# scratch: a new directory in $tmp, removed (with $out and $err) at exit.
scratch() {
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp" "$out" "$err"' EXIT
}

finish() {
	echo "$pass passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# wait_catching PID SIGNAL: waits (up to 60 s) until PID has a handler for
# SIGNAL (a number; for `timeout ... CMD &`, until CMD has), so a signal
# sent next tests the handler and not how fast the process started (slow
# under ASan and in the emulated host).
wait_catching() {
	local mask i p
	for i in $(seq 600); do
		p=$1
		# timeout(1) catches SIGINT itself and passes it on: wait for
		# the command it runs instead
		if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = timeout ]; then
			p=$(cat "/proc/$1/task/$1/children" 2>/dev/null)
			p=${p%% *}
		fi
		mask=$(sed -n 's/^SigCgt:\t*//p' "/proc/$p/status" 2>/dev/null)
		[ -n "$p" ] && [ -n "$mask" ] && [ $(((16#$mask >> ($2 - 1)) & 1)) -eq 1 ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
