# nested_cgroups (sourced by test_cli_jail.sh and test_cli_jail_cgv1.sh,
# after lib.sh; uses $COLDSTART, $tmp/j, $out, $err):
# Started in a cgroup of its own, the VMM's cgroup is made inside it, so
# that cgroup's limits still hold (they did not when it went to the
# hierarchy's root). v1 nests it there. v2 gives controllers to the
# children of a group without processes only: started in $name/leaf
# (which holds the starting shell; $name gives it cpu and memory), the
# VMM's cgroup goes to $name, and stderr says so; in a cgroup namespace
# rooted at $name/leaf no group can take it, and the run fails (exit 1).
nested_cgroups() {
	local cg=/sys/fs/cgroup name=coldstart-test-$$ start code=0 d n
	local dirs=() joins=() want="cgroup_in=/$name/coldstart-[0-9]+"
	if [ -e $cg/cgroup.controllers ]; then
		start=$cg/$name/leaf
		dirs=("$start" "$cg/$name")
		joins=("$start")
		echo "+cpu +memory" >$cg/cgroup.subtree_control 2>/dev/null
		mkdir "$cg/$name" &&
			echo "+cpu +memory" >"$cg/$name/cgroup.subtree_control" &&
			mkdir "$start" || { fail "making $start"; return; }
	elif [ -d $cg/cpu/. ] && [ -d $cg/memory/. ]; then
		dirs=("$cg/cpu/$name" "$cg/memory/$name")
		mkdir -p "${dirs[@]}" || { fail "mkdir ${dirs[*]}"; return; }
		joins=("${dirs[@]}")
	else
		echo "no cgroup v2 or v1 cpu and memory hierarchies: nesting not checked"
		return
	fi
	rm -f "$tmp/see"
	(
		for d in "${joins[@]}"; do
			echo $BASHPID >"$d/cgroup.procs" || exit 99
		done
		COLDSTART_JAIL_SELFTEST=$tmp/see exec "$COLDSTART" run \
			--jail "$tmp/j" --cpus 1.5 --memory 512M -q
	) >"$out" 2>"$err" || code=$?
	[ "$code" = 0 ] && ok ||
		fail "run from cgroups ${joins[*]} exited $code: $(tail -n 3 "$err")"
	# v1: in both hierarchies; v2: one line
	n=$(grep -cEx "$want" "$tmp/see" 2>/dev/null)
	[ "$n" = "$(grep -c '^cgroup_in=' "$tmp/see" 2>/dev/null)" ] &&
		[ "${n:-0}" -ge 1 ] && ok ||
		fail "the VMM's cgroups are not /$name/coldstart-PID: $(grep cgroup "$tmp/see" 2>&1)"
	if [ -n "${start:-}" ]; then
		grep -q "the VMM's cgroup is made in $cg/$name, not in this process's own $start, which cannot let a child have the cpu memory controller(s): processes are in it" "$err" &&
			ok || fail "v2: no word that the cgroup went up to $cg/$name: $(cat "$err")"
	else
		[ -s "$err" ] && fail "v1: stderr not empty: $(cat "$err")" || ok
	fi
	if [ -n "${start:-}" ]; then
		# a cgroup namespace rooted at $start: no group up to the root
		# it sees can give a child controllers, so the run must fail
		code=0
		(
			echo $BASHPID >"$start/cgroup.procs" || exit 99
			exec unshare --cgroup --mount sh -c 'umount /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup && exec "$0" run --jail "$1" --cpus 1.5 --memory 512M -q' \
				"$COLDSTART" "$tmp/j"
		) >"$out" 2>"$err" || code=$?
		[ "$code" = 1 ] &&
			grep -q "no cgroup v2 group from this process's own $cg up to the root seen here, $cg, can let a child have the cpu memory controller(s): $cg: processes are in it" "$err" &&
			ok || fail "v2 in a cgroup namespace rooted at a group with processes: exit $code (want 1): $(cat "$err")"
	fi
	left=$(find $cg -name 'coldstart-[0-9]*' 2>/dev/null)
	[ -z "$left" ] && ok || fail "cgroups left after the nested runs: $left"
	for d in "${dirs[@]}"; do
		rmdir "$d" || fail "rmdir $d"
	done
}
