#!/bin/bash
# tune session's refusals that need no guest: each one error line naming
# the problem, exit 2, before any snapshot is read or turn runs.
# Usage: test_cli_tune_session.sh COLDSTART
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch

expect 0 'Recommends, among the policies' tune session --help
expect 2 'tune session: --snapshot DIR is needed' tune session
expect 2 '--turns: 0 is outside' tune session --snapshot "$tmp" --turns 0
expect 2 "--policies: --merge 'bogus': expected never, every:K" \
	tune session --snapshot "$tmp" --policies never,bogus
expect 2 '--merge: 0 is outside 1..32' tune session --snapshot "$tmp" \
	--policies chain:0
expect 2 '--policies: chain:4 is named twice' tune session \
	--snapshot "$tmp" --policies chain:4,never,chain:4
expect 2 "--policies 'never,': an empty policy" tune session \
	--snapshot "$tmp" --policies never,
expect 2 "--policies '': an empty policy" tune session \
	--snapshot "$tmp" --policies ""
expect 2 '--policies never keeps every diff' tune session \
	--snapshot "$tmp" --turns 33 --policies chain:8,never
expect 2 '--exec: an empty command' tune session --snapshot "$tmp" --exec ''
expect 2 "--strategy: 'nosuch' is not one of" tune session --snapshot "$tmp" --strategy nosuch
# not a snapshot: refused before any KVM is opened, nothing written
expect 2 "tune session: $tmp is not a snapshot" tune session \
	--snapshot "$tmp" --out "$tmp/out"
[ ! -e "$tmp/out" ] || fail "a refused tune session wrote $tmp/out"
finish
