#!/bin/bash
# fleet/ansible/coldstart-suite.yml against localhost (-c local, no ssh):
# copies COLDSTART, runs `coldstart bench suite --smoke --only lifecycle`
# and fetches the result directory; the fetched suite.json must be a valid
# result. Without a usable /dev/kvm the run is --no-emulate (its driver is
# then recorded as skipped: the emulated host would take minutes here);
# COLDSTART_FLEET_EMULATE=1 runs it in the emulated host instead. A run
# that fails (bad options) must fail the playbook.
# Usage: test_ansible.sh COLDSTART SOURCE-DIR WORK-DIR
. "$(dirname "$0")/../cli/lib.sh"
COLDSTART=$1
src=$2
work=$3
playbook=$src/fleet/ansible/coldstart-suite.yml
rm -rf "$work"
mkdir -p "$work"
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=false \
	ANSIBLE_LOCAL_TEMP=$work/tmp ANSIBLE_REMOTE_TEMP=$work/tmp \
	ANSIBLE_ASYNC_DIR=$work/async ANSIBLE_HOME=$work/ansible

args="--smoke --only lifecycle"
[ "${COLDSTART_FLEET_EMULATE:-0}" = 1 ] || args="$args --no-emulate"
play() { # LOG ARGS...
	local log=$1
	shift
	timeout 900 ansible-playbook -i localhost, -c local "$playbook" \
		-e ansible_python_interpreter=/usr/bin/python3 \
		-e coldstart_become=false -e coldstart_poll=1 \
		-e coldstart_binary="$COLDSTART" \
		-e coldstart_remote_dir="$work/remote" \
		-e coldstart_fetch_dir="$work/fetched" "$@" >"$log" 2>&1
}

ansible-playbook -i localhost, --syntax-check "$playbook" >"$work/syntax.log" 2>&1 && ok ||
	{ cat "$work/syntax.log"; fail "syntax check"; }
# (-e NAME=VALUE would split VALUE at its spaces: JSON keeps it whole.)
if play "$work/run.log" -e "{\"coldstart_args\": \"$args\"}"; then
	ok
else
	tail -30 "$work/run.log"
	fail "the playbook failed"
fi
runs=("$work"/fetched/localhost/localhost-*/)
if [ ${#runs[@]} -eq 1 ] && [ -d "${runs[0]}" ]; then
	ok
	run=${runs[0]%/}
	echo "fetched: ${run#"$work"/}: $(cd "$run" && echo *)"
	S=$run/suite.json
	json_check "d['bench'] == 'suite' and d['config']['level'] == 'smoke' and [x['name'] for x in d['drivers']] == ['lifecycle']" "$S"
	# Measured where KVM (or the emulated host) was there, else skipped.
	if [ "${COLDSTART_FLEET_EMULATE:-0}" = 1 ] ||
		python3 -c 'import os; os.close(os.open("/dev/kvm", os.O_RDWR))' 2>/dev/null; then
		json_check "d['drivers'][0]['status'] == 'ok'" "$S"
		json_check "d['bench'] == 'lifecycle' and all(s['summary']['p50'] > 0 for s in d['series'])" "$run/lifecycle.json"
	else
		json_check "d['drivers'][0]['status'] == 'skipped' and d['sysinfo']['kvm']['usable'] is False" "$S"
	fi
	# The same run stays on the host; no packed copy is left either side.
	cmp -s "$S" "$work/remote/results/$(basename "$run")/suite.json" && ok ||
		fail "the fetched suite.json differs from the host's"
	[ -z "$(find "$work/remote" "$work/fetched" -name '*.tar.gz')" ] && ok ||
		fail "a packed copy was left behind"
else
	fail "no result directory fetched: $(ls -R "$work/fetched" 2>&1 | head)"
fi

# A run that fails fails the playbook, and nothing is fetched for it.
if play "$work/bad.log" -e '{"coldstart_args": "--no-emulate --bogus"}' \
	-e coldstart_fetch_dir="$work/bad"; then
	fail "the playbook succeeded with a failing run"
else
	grep -q '"rc": 2' "$work/bad.log" && ok || { tail -20 "$work/bad.log"; fail "the failing run's exit code 2 is not reported"; }
fi
[ ! -e "$work/bad" ] && ok || fail "a failed run fetched something"
finish
