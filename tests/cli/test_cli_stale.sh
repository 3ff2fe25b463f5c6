#!/bin/bash
# Temporaries that a killed `snapshot create` or `snapshot merge` left
# beside DIR: the next command writing DIR removes those whose writer is
# gone and says so, reports the ones it must not remove, and leaves live
# writers' temporaries and other names alone. Needs no KVM: the cleaning
# comes before the command's own work (which then fails here).
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch

# A pid that is surely gone: a child that has exited.
sh -c 'exit 0' &
dead=$!
wait "$dead"
make_temps() {
	rm -rf "$tmp"/s*
	mkdir "$tmp/snap.tmp.$dead.abcDEF" "$tmp/snap.tmp.$dead.zzzzz9" \
		"$tmp/snap.tmp.$$.live01" "$tmp/snap.tmp.QWErty" \
		"$tmp/snap.tmp.5" "$tmp/snapx.tmp.$dead.abcdef" "$tmp/snap"
	touch "$tmp/snap.tmp.$dead.abcDEF/state" \
		"$tmp/snap.tmp.$dead.abcDEF/memory" \
		"$tmp/snap.tmp.$dead.zzzzz9/memory" \
		"$tmp/snap.tmp.$dead.zzzzz9/notes.txt"
	ln -s "$tmp/snap" "$tmp/snap.tmp.$dead.link01"
}
# left: what must still be there afterwards, and nothing else of them.
left() {
	local want="snap snap.tmp.$$.live01 snap.tmp.$dead.link01 snap.tmp.$dead.zzzzz9 snap.tmp.5 snap.tmp.QWErty snapx.tmp.$dead.abcdef"
	local got
	got=$(cd "$tmp" && ls -d snap* | sort | tr '\n' ' ')
	want=$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')
	if [ "$got" = "$want" ]; then ok; else fail "$1: left '$got', expected '$want'"; fi
	if [ -f "$tmp/snap.tmp.$dead.zzzzz9/memory" ]; then ok
	else fail "$1: emptied a temporary that holds foreign files"; fi
}

make_temps
expect 1 "removed $tmp/snap.tmp.$dead.abcDEF: a temporary left by process $dead, which is gone" \
	snapshot merge "$tmp/nobase" "$tmp/nodiff" "$tmp/snap" --force
grep -q "snap.tmp.$dead.zzzzz9 was left by process $dead, which is gone, but cannot be removed: it holds files that are not a snapshot's" "$err" && ok || fail "no report of the temporary with foreign files"
grep -q "snap.tmp.$dead.link01 was left by process $dead, which is gone, but cannot be removed" "$err" && ok || fail "no report of the symlink"
grep -q "snap.tmp.QWErty looks like a temporary left by an older coldstart" "$err" && ok || fail "no report of the pid-less temporary"
if grep -Eq "live01|snap\.tmp\.5[^0-9]|snapx" "$err"; then fail "reported a live writer's temporary or another snapshot's name"; else ok; fi
grep -q "nobase is not a snapshot" "$err" && ok || fail "merge did not go on to its own error"
left "merge"

# The same from `snapshot create` (a trailing slash on DIR changes
# nothing), before it finds no KVM device.
make_temps
expect 77 "removed $tmp/snap.tmp.$dead.abcDEF" snapshot create "$tmp/snap/" \
	--kvm "$tmp/no-such-kvm" --force
left "create"
make_temps
expect 77 "removed $tmp/snap.tmp.$dead.abcDEF" snapshot create "$tmp/snap" \
	--diff-from "$tmp/nobase" --kvm "$tmp/no-such-kvm"
left "create --diff-from"
# A usage error writes nothing and cleans nothing.
make_temps
expect 2 "" snapshot merge "$tmp/snap"
[ -d "$tmp/snap.tmp.$dead.abcDEF" ] && ok || fail "a refused command cleaned"
finish
