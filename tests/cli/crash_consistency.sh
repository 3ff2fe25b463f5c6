#!/bin/bash
# Crash consistency of snapshot writes: kills `snapshot create DIR --force`
# and `snapshot merge BASE DIFF OUT --force` with SIGKILL at N random
# points each (uniform over 0..1.2 x the command's measured run time) and
# checks that DIR (OUT) then holds the old complete snapshot or the new
# complete one, never a torn one; then that the next run removes the
# temporaries the killed ones left, saying so.
# Usage: crash_consistency.sh COLDSTART [N] [SEED]   (N default 100)
# Exit: 0 when every kill left old or new and the temporaries were
# removed; 1 otherwise; 77 without /dev/kvm (making snapshots needs it).
set -u
cs=$1 n=${2:-100} seed=${3:-$$}
if [ ! -c /dev/kvm ]; then
	echo "skipping: no /dev/kvm"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RANDOM=$seed
bad=0
echo "crash_consistency: $n kills per command, seed $seed"

die() {
	echo "FAIL: $*" >&2
	exit 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The shortest of three uninterrupted runs of the command in "$@", in ms,
# after one more that warms the caches (the binary's first start can
# take many times longer); each starts from the old snapshot, as the
# kills will.
runtime_ms() {
	local i t0 t times=()
	for i in 0 1 2 3; do
		reset_old
		t0=$(now_ms)
		"$@" >/dev/null 2>&1 || die "uninterrupted run failed: $*"
		t=$(($(now_ms) - t0))
		[ "$i" -gt 0 ] && times+=("$t")
	done
	printf '%s\n' "${times[@]}" | sort -n | head -1
}

# identity DIR: the sha256 of its state and memory files.
identity() { cat "$1/state" "$1/memory" 2>/dev/null | sha256sum | cut -d' ' -f1; }

# inspect DIR: the JSON of `snapshot inspect DIR`, failing when inspect
# refuses DIR (a state file whose CRC-32 is wrong, a memory file of the
# wrong size, files missing). Plain text tools: python3 takes seconds to
# start in the emulated host.
inspect() { "$cs" snapshot inspect "$1" --json 2>/dev/null; }

temps_of() { ls -d "$1".tmp.* 2>/dev/null | wc -l; }

# kill_at DELAY_MS CMD...: runs CMD, SIGKILLs it after DELAY_MS; prints
# "killed" or "finished" (it ended before the kill).
kill_at() {
	local delay=$1 pid
	shift
	"$@" >"$work/run.log" 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	case $? in
	137) echo killed ;;
	0) echo finished ;;
	*) echo "failed" ;;
	esac
}

# campaign NAME DIR IS_NEW_FN CMD...: N kills of CMD writing DIR, each
# from the old snapshot (reset_old); is_new DIR says whether DIR is the
# new snapshot, complete.
campaign() {
	local name=$1 dir=$2 is_new=$3 old max kills=0 nold=0 nnew=0 torn=0
	local finished=0 left=0 how t k
	shift 3
	t=$(runtime_ms "$@") || exit 1
	max=$((t * 12 / 10))
	echo "$name: a run takes $t ms (shortest of 3); kills at 0..$max ms"
	for i in $(seq "$n"); do
		reset_old
		old=$(identity "$dir")
		t=$(((RANDOM * 32768 + RANDOM) % (max + 1)))
		how=$(kill_at "$t" "$@")
		kills=$((kills + 1))
		[ "$how" = finished ] && finished=$((finished + 1))
		case $how in
		killed | finished) ;;
		*)
			bad=1
			echo "FAIL: $name $i: the command $how by itself:"
			sed 's/^/  | /' "$work/run.log" | head -5
			;;
		esac
		k=$(temps_of "$dir")
		[ "$k" -gt 0 ] && left=$((left + 1))
		if inspect "$dir" >/dev/null && [ "$(identity "$dir")" = "$old" ]; then
			nold=$((nold + 1)) verdict=old
		elif $is_new "$dir" "$old"; then
			nnew=$((nnew + 1)) verdict=new
		else
			torn=$((torn + 1)) verdict=TORN
			ls -la "$dir" 2>&1 | sed 's/^/  | /'
		fi
		echo "  $name kill $i at $t ms ($how): $verdict; temporaries beside it: $k"
	done
	# The next run removes what the killed ones left, and says so.
	k=$(temps_of "$dir")
	reset_old
	"$@" >"$work/next.log" 2>&1 || { sed 's/^/  | /' "$work/next.log"; die "$name: the run after the kills failed"; }
	removed=$(grep -c "^coldstart: removed $dir\.tmp\." "$work/next.log")
	[ "$(temps_of "$dir")" -eq 0 ] || { bad=1; echo "FAIL: $name: temporaries remain after the next run: $(ls -d "$dir".tmp.*)"; }
	[ "$removed" -eq "$k" ] || { bad=1; echo "FAIL: $name: $k temporaries were left, the next run reported removing $removed"; }
	$is_new "$dir" "" || { bad=1; echo "FAIL: $name: the uninterrupted run did not leave the new snapshot"; }
	echo "$name: $kills kills: $nold old, $nnew new, $torn torn ($finished ended before their kill); $left left temporaries, $k beside DIR before the next run, which removed $removed"
	[ "$torn" -eq 0 ] || bad=1
}

# ---- snapshot create DIR --force: old --init 1M, new --init 2M ----
snap=$work/snap
"$cs" snapshot create "$work/old" --mem 4M --init 1M >/dev/null ||
	die "making the old snapshot failed"
reset_old() { rm -rf "$snap" && cp -a "$work/old" "$snap"; }
# new: a complete snapshot of the new options (inspect checks the state
# file's CRC-32 and the memory file's size), not the old one.
create_is_new() {
	inspect "$1" | grep -Eq '"init_bytes": 2097152([^0-9]|$)' &&
		[ "$(identity "$1")" != "$2" ]
}
campaign "snapshot create" "$snap" create_is_new \
	"$cs" snapshot create "$snap" --force --mem 4M --init 2M
"$cs" snapshot restore "$snap" >/dev/null ||
	{ bad=1; echo "FAIL: the last created snapshot does not restore"; }

# ---- snapshot merge BASE DIFF OUT --force: old = BASE's copy ----
"$cs" snapshot create "$work/base" --mem 4M --init 1M --ws 1M --op write \
	>/dev/null || die "making the base failed"
"$cs" snapshot create "$work/diff" --diff-from "$work/base" >/dev/null ||
	die "making the diff failed"
"$cs" snapshot merge "$work/base" "$work/diff" "$work/ref" >/dev/null ||
	die "the reference merge failed"
out=$work/out
reset_old() { rm -rf "$out" && cp -a "$work/old" "$out"; }
# new: the merge, complete: a valid full snapshot whose memory is the
# reference merge's, byte for byte.
merge_is_new() {
	inspect "$1" >"$work/i.json" && ! grep -q '"diff":' "$work/i.json" &&
		cmp -s "$1/memory" "$work/ref/memory" &&
		[ "$(identity "$1")" != "$2" ]
}
campaign "snapshot merge" "$out" merge_is_new \
	"$cs" snapshot merge "$work/base" "$work/diff" "$out" --force
"$cs" snapshot restore "$out" >/dev/null ||
	{ bad=1; echo "FAIL: the last merged snapshot does not restore"; }
[ "$bad" -eq 0 ] && echo "crash_consistency: passed" || echo "crash_consistency: FAILED"
exit "$bad"
