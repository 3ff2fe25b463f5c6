#!/bin/bash
# bench session --kills' refusals, each one error line naming the problem
# and exit 2, before any turn runs or anything is written: --kills 0,
# negative or not a number, --seed not a number or without --kills, no
# snapshot, a snapshot without an agent (a probe guest's, made here; a
# Linux guest needs the emulated host: tests/e2e, case session_kills).
# Usage: test_cli_session_kills.sh COLDSTART
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
need_kvm
scratch

expect 0 '--kills N .*crash consistency' bench session --help
expect 0 '--seed S ' bench session --help
expect 2 '--kills: 0 is outside 1\.\.100000' bench session \
	--snapshot "$tmp" --kills 0
expect 2 "--kills: '-3' is not a whole number" bench session \
	--snapshot "$tmp" --kills -3
expect 2 "--kills: 'many' is not a whole number" bench session \
	--snapshot "$tmp" --kills many
expect 2 "--seed: 'x1' is not a whole number" bench session \
	--snapshot "$tmp" --kills 3 --seed x1
expect 2 "--seed: '' is not a whole number" bench session \
	--snapshot "$tmp" --kills 3 --seed ''
expect 2 '--seed goes with --kills' bench session --snapshot "$tmp" \
	--seed 5
expect 2 'bench session: --snapshot DIR is needed' bench session --kills 3
expect 2 "bench session: $tmp is not a snapshot" bench session \
	--snapshot "$tmp" --kills 3 --out "$tmp/out"
# a snapshot of a guest without an agent (the probe guest)
expect 0 '' snapshot create "$tmp/s" --mem 4M
expect 2 'holds no guest with an agent' bench session --snapshot "$tmp/s" \
	--kills 3 --seed 1 --allow-pvm --out "$tmp/out"
# each refusal is one line
[ "$(wc -l <"$err")" = 1 ] || fail "more than one line: $(cat "$err")"
[ ! -e "$tmp/out" ] || fail "a refused bench session --kills wrote $tmp/out"
finish
