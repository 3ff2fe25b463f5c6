#!/bin/bash
# The jail's cgroup limits on cgroup v1: in the emulated host
# booted with `emulate --cgroup v1` (a tmpfs on /sys/fs/cgroup with the
# cpu,cpuacct and memory hierarchies, no cgroup2), a jailed VMM run with
# --cpus and --memory gets v1 cgroups coldstart-PID with the quota,
# period and memory limit asked for; it and all its threads are in them,
# the quota throttles its spinning vCPU, its guest's memory is charged
# there; both are gone after it exits. A --memory-only run makes no cpu
# cgroup; without the memory hierarchy the run fails naming it and
# leaves no cgroup. Started in cgroups of its own, the VMM's cgroups are
# made inside them. Needs QEMU (else skipped, 77); one emulated boot,
# ~70 s.
# Usage: test_cli_jail_cgv1.sh COLDSTART [inside]
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jail_nested.sh"
COLDSTART=$1
scratch
V1=/sys/fs/cgroup
CPUS=0.29 PERIOD=100000 MEMORY=256M MEMORY_BYTES=$((256 << 20))
INIT_MIB=8

# cg_value FILE WANT: the cgroup file holds WANT.
cg_value() {
	local v
	v=$(cat "$1" 2>&1)
	[ "$v" = "$2" ] && ok || fail "$1 is '$v', not $2"
}

# The part that runs inside the emulated host.
inside() {
	[ -c /dev/kvm ] || { fail "no /dev/kvm in the emulated host"; return; }
	if [ -e $V1/cgroup.controllers ] || [ ! -d $V1/cpu/. ] ||
		[ ! -d $V1/memory/. ]; then
		fail "the host has no cgroup v1 layout: $(ls $V1)"
		return
	fi
	mkdir "$tmp/j"
	# The guest spins after READY (--misbehave hang), busy enough to be
	# throttled, until SIGTERM once the checks are done (--timeout: in
	# case the test does not get there).
	COLDSTART_JAIL_SELFTEST=$tmp/see "$COLDSTART" run --jail "$tmp/j" \
		--cpus $CPUS --memory $MEMORY --init ${INIT_MIB}M \
		--misbehave hang --timeout 300s -q >"$tmp/run.out" 2>&1 &
	local parent=$! cpu mem child= i p g
	cpu=$V1/cpu/coldstart-$parent
	mem=$V1/memory/coldstart-$parent
	# the selftest is written once the VMM is in the jail, its cgroups
	# joined; READY (its guest memory touched) comes after
	for i in $(seq 300); do
		[ -s "$tmp/see" ] &&
			[ "$(cat $mem/memory.max_usage_in_bytes 2>/dev/null ||
				echo 0)" -ge $((INIT_MIB << 20)) ] && break
		sleep 0.1
	done
	grep -qx cgroup=joined "$tmp/see" 2>/dev/null && ok ||
		fail "the jailed VMM saw no cgroup joined: $(cat "$tmp/see" 2>&1)"
	[ -d "$cpu" ] && [ -d "$mem" ] && ok ||
		fail "no v1 cgroups $cpu and $mem: $(ls $V1/cpu/ $V1/memory/)"
	cg_value "$cpu/cpu.cfs_period_us" $PERIOD
	# (0.29 CPUs: 29000 us, not the 28999 that truncating gave)
	cg_value "$cpu/cpu.cfs_quota_us" \
		"$(awk "BEGIN { printf \"%d\", $CPUS * $PERIOD + 0.5 }")"
	cg_value "$mem/memory.limit_in_bytes" $MEMORY_BYTES
	# the guest memory it touched is charged there
	[ "$(cat "$mem/memory.max_usage_in_bytes" 2>&1)" -ge \
		$((INIT_MIB << 20)) ] 2>/dev/null && ok ||
		fail "$mem: at most $(cat "$mem/memory.max_usage_in_bytes" \
			2>&1) bytes used, below the guest's ${INIT_MIB} MiB"
	# the VMM, the jail's PID 1 and the parent's child, is in both,
	# with every thread it started; the parent is in neither. Beside
	# it only KVM's kernel workers for its VM (kvm-nx-lpage-recovery-
	# PID), which the kernel puts in the VM owner's cgroups.
	for p in $(cat "$cpu/cgroup.procs" 2>/dev/null); do
		grep -q "^PPid:[[:space:]]*$parent$" /proc/"$p"/status && child=$p
	done
	grep -q "^NSpid:.*[[:space:]]1$" /proc/"$child"/status 2>/dev/null &&
		ok || fail "no jailed VMM in $cpu: $(cat "$cpu/cgroup.procs")"
	for g in "$cpu" "$mem"; do
		for p in $(cat "$g/cgroup.procs"); do
			[ "$p" = "$child" ] ||
				grep -q "^kvm-.*-$child$" /proc/"$p"/comm ||
				fail "$g holds $p ($(cat /proc/"$p"/comm)), not the VMM"
		done
		grep -qx "$parent" "$g/cgroup.procs" && fail "the parent is in $g"
	done
	ok
	for t in /proc/"$child"/task/*; do
		t=${t##*/}
		grep -qx "$t" "$cpu/tasks" && grep -qx "$t" "$mem/tasks" ||
			fail "thread $t of the VMM is not in $cpu and $mem"
	done
	ok
	grep -q ":cpu,cpuacct:/coldstart-$parent$" /proc/"$child"/cgroup &&
		grep -q ":memory:/coldstart-$parent$" /proc/"$child"/cgroup &&
		ok || fail "/proc/$child/cgroup: $(cat /proc/"$child"/cgroup)"
	# the quota holds the spinning vCPU back
	for i in $(seq 300); do
		[ "$(awk '$1 == "nr_throttled" { print $2 }' \
			"$cpu/cpu.stat" 2>/dev/null || echo 0)" -gt 0 ] && break
		sleep 0.1
	done
	[ "$i" -lt 300 ] && ok ||
		fail "not throttled: $(tr '\n' ' ' <"$cpu/cpu.stat" 2>&1)"
	# ended by SIGTERM, which the parent passes on to the VMM
	kill -TERM $parent
	wait $parent
	local code=$?
	[ "$code" = 1 ] && grep -q "interrupted by a signal" "$tmp/run.out" &&
		ok ||
		fail "the run ended by SIGTERM exited $code: $(tail -3 "$tmp/run.out")"
	grep -q "stays" "$tmp/run.out" && fail "$(grep stays "$tmp/run.out")"
	[ ! -e "$cpu" ] && [ ! -e "$mem" ] && ok ||
		fail "cgroups left after the run: $(ls -d "$cpu" "$mem" 2>&1)"

	# --memory alone: a memory cgroup, no cpu one, gone after
	rm -f "$tmp/see"
	COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 'matches the prediction' \
		run --jail "$tmp/j" --memory $MEMORY
	grep -qx cgroup=joined "$tmp/see" && ok ||
		fail "--memory alone: no cgroup joined"
	left=$(ls -d $V1/cpu/coldstart-* $V1/memory/coldstart-* 2>/dev/null)
	[ -z "$left" ] && ok || fail "cgroups left after --memory alone: $left"

	# started in cgroups of its own: the VMM's are made inside them
	nested_cgroups

	# a host without the v1 memory hierarchy (in a mount namespace of
	# its own): the error names it, and the cpu cgroup made before is
	# removed
	code=0
	unshare -m sh -c "umount $V1/memory && exec \"\$@\"" sh \
		"$COLDSTART" run --jail "$tmp/j" --cpus $CPUS --memory $MEMORY \
		>"$tmp/nomem.out" 2>&1 || code=$?
	[ "$code" = 1 ] && grep -q "no cgroup v1 memory hierarchy at $V1/memory" \
		"$tmp/nomem.out" && ok ||
		fail "without a memory hierarchy: exit $code, $(cat "$tmp/nomem.out")"
	left=$(ls -d $V1/cpu/coldstart-* 2>/dev/null)
	[ -z "$left" ] && ok || fail "cgroups left after the failure: $left"
}

if [ "$2" = inside ]; then
	inside
	finish
	exit
fi
expect 2 "--cgroup: 'v3' is not v1 or v2" emulate --cgroup v3 -- true
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "skipping: no QEMU"; finish; exit 77; }
code=0
timeout 600 "$COLDSTART" emulate --cgroup v1 --timeout 500 --stall 60s \
	--quiet -- bash "$0" "$COLDSTART" inside >"$out" 2>"$err" || code=$?
sed 's/^/  inside: /' "$out"
if [ "$code" = 77 ]; then
	echo "skipping: $(tail -n 1 "$err")"
	exit 77
fi
[ "$code" = 0 ] && ok || {
	fail "the checks in the emulated host exited $code"
	sed 's/^/  | /' "$err" | tail -n 15
}
finish
