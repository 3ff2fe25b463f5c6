#!/bin/bash
# Crash consistency of a multi-turn session: each turn (`snapshot restore
# LAST --exec TEXT --save NEXT --diff`, TEXT from `bench session
# --turn-command K`) and every fourth a merge of the chain (`snapshot
# merge`) is killed with SIGKILL at a random point (uniform over 0..1.2 x
# its measured run time, so some finish). After each kill NEXT (the
# merge's output) must be absent or a complete snapshot; the session then
# goes on from its last complete turn, whose continuity check (every
# earlier turn's files, log lines and in-memory counter) must pass. At the
# end one more turn runs unkilled and checks everything.
# Usage: session_kills.sh COLDSTART KERNEL INITRD ROOTFS [N] [SEED]
#   (N kills, default 100). It boots a Linux guest: on a host whose KVM
# cannot (PVM), run it inside `coldstart emulate`.
# Exit: 0 when no state was lost or torn; 1 otherwise.
set -u
cs=$1 kernel=$2 initrd=$3 rootfs=$4 n=${5:-100} seed=${6:-$$}
work=$(mktemp -d /var/tmp/coldstart-kills-XXXXXX)
trap 'rm -rf "$work"' EXIT
RANDOM=$seed
echo "session_kills: $n kills, seed $seed"

die() {
	echo "FAIL: $*" >&2
	exit 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The guest's chain: the full snapshot first, then the diffs above it.
chain=()
k=1

# Runs "$@" and kills it after $1 ms (0: never); returns its status, or
# 137 when killed.
killed_run() {
	local after=$1 pid status
	shift
	"$@" >"$work/out" 2>"$work/err" &
	pid=$!
	if [ "$after" -gt 0 ]; then
		sleep "$(printf '%d.%03d' $((after / 1000)) $((after % 1000)))"
		kill -9 $pid 2>/dev/null
	fi
	wait $pid 2>/dev/null
	status=$?
	return $status
}

complete() {
	[ -e "$1/state" ] && "$cs" snapshot inspect "$1" >/dev/null 2>&1
}

# One turn from the chain's top into $work/turn-K, killed after $1 ms.
turn() {
	local next=$work/turn-$k text
	text=$("$cs" bench session --turn-command $k --exec "echo turn $k") ||
		die "bench session --turn-command"
	killed_run "$1" "$cs" snapshot restore "${chain[-1]}" --exec "$text" \
		--save "$next" --diff --timeout 300s
	local status=$?
	# a turn's check that fails is a loss, saved or not
	grep -q "^coldstart-session: MISSING" "$work/out" &&
		die "$(grep "^coldstart-session: MISSING" "$work/out")"
	if complete "$next"; then
		[ $status = 0 ] || [ $status = 137 ] ||
			die "turn $k saved a snapshot but exited $status: $(tail -n 2 "$work/err")"
		chain+=("$next")
		k=$((k + 1))
		return 0
	fi
	[ -e "$next" ] && die "turn $k left $next, which is not a complete snapshot"
	[ $status = 137 ] || die "turn $k failed (exit $status): $(tail -n 3 "$work/out" "$work/err")"
	return 1
}

# Merges the chain into $work/merged-K, killed after $1 ms.
merge() {
	local out=$work/merged-$k status
	killed_run "$1" "$cs" snapshot merge "${chain[@]}" "$out"
	status=$?
	if complete "$out"; then
		chain=("$out")
		return 0
	fi
	[ -e "$out" ] && die "a merge left $out, which is not a complete snapshot"
	[ $status = 137 ] || die "merge failed (exit $status): $(tail -n 3 "$work/err")"
	return 1
}

"$cs" snapshot create "$work/s0" --kernel "$kernel" --initrd "$initrd" \
	--rootfs "$rootfs" --timeout 300s --quiet || die "snapshot create"
chain=("$work/s0")
t0=$(now_ms)
turn 0 || die "the first turn, unkilled"
turn_ms=$(($(now_ms) - t0))
t0=$(now_ms)
merge 0 || die "the first merge, unkilled"
merge_ms=$(($(now_ms) - t0))
echo "session_kills: a turn takes $turn_ms ms, a merge $merge_ms ms"
done_turns=0 done_merges=0 kills=0
while [ $kills -lt $n ]; do
	if [ $((kills % 4)) = 3 ] && [ ${#chain[@]} -gt 1 ]; then
		merge $((RANDOM % (merge_ms * 12 / 10 + 1) + 1)) &&
			done_merges=$((done_merges + 1))
	else
		turn $((RANDOM % (turn_ms * 12 / 10 + 1) + 1)) &&
			done_turns=$((done_turns + 1))
	fi
	kills=$((kills + 1))
	# a resume reads at most 32 diffs: merge unkilled before that
	if [ ${#chain[@]} -gt 24 ]; then
		merge 0 || die "a merge, unkilled"
	fi
done
turn 0 || die "the last turn, unkilled"
# a killed writer's temporary goes when its directory is written next
echo "session_kills: $(ls -d "$work"/*.tmp.* 2>/dev/null | wc -l) temporaries of killed writers left"
echo "session_kills: $kills kills; $done_turns turns and $done_merges merges completed despite them; turn $((k - 1)) found every earlier turn's state"
