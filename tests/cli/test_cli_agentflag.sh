#!/bin/bash
# Whether a snapshot's guest has an agent is what its record says, not its
# vsock device: the test kernel's snapshot given --vsock has the device
# and no agent, so a pool runs it to its done signal (no default command)
# and every command for it is refused; the same record as an older
# coldstart wrote it (version 1, no flags) keeps counting as an agent,
# and a pool whose guests then all fail exits 1 naming how many and why.
# Usage: test_cli_agentflag.sh COLDSTART TESTKERNEL.elf SNAPFORGE
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
SNAPFORGE=$3
scratch
need_kvm

expect 0 '' snapshot create "$tmp/v" --kernel "$TK_ELF" --allow-pvm \
	--mem 32M --vsock "$tmp/c.sock" --quiet \
	--cmdline "console=ttyS0 tk.vsock=idle"
expect 0 '^agent: none recorded' snapshot inspect "$tmp/v"
expect 0 '' snapshot inspect "$tmp/v" --json
json_check 'd["linux"]["virtio"]["agent"] is False and d["linux"]["virtio"]["version"] == 2 and d["linux"]["virtio"]["vsock_cid"] == 3' "$out"

# --- a vsock device without an agent ---------------------------------------
# the pool restores it and the guest runs to its done signal
expect 0 '' pool run --snapshot "$tmp/v" --allow-pvm -n 3 --size 1 \
	--timeout 10s --json
json_check 'd["served"] == 3 and d["failed"] == 0 and d["stats"]["guest_failures"] == 0 and "exec" not in d["config"] and "commands" not in d' "$out"
expect 2 "pool: --exec: the guest of $tmp/v has no agent" pool run \
	--snapshot "$tmp/v" --allow-pvm -n 1 --exec true
[ "$(wc -l <"$err")" -le 2 ] || fail "pool --exec refusal: $(cat "$err")"
expect 2 'has no agent' pool serve --socket "$tmp/p.sock" \
	--snapshot "$tmp/v" --allow-pvm --exec true
[ -e "$tmp/p.sock" ] && fail "a refused pool serve left its socket"
# snapshot restore: to the guest's exit, or serving the user's own
# client on --vsock; a command has nothing to run it
expect 0 'guest exit' snapshot restore "$tmp/v" --allow-pvm
expect 0 'guest exit' snapshot restore "$tmp/v" --allow-pvm \
	--vsock "$tmp/r.sock"
expect 2 "--exec: $tmp/v holds a guest with a vsock device but no agent" \
	snapshot restore "$tmp/v" --allow-pvm --exec true
# the commands whose timed runs go through an agent refuse it
expect 2 'bench restore: the snapshot holds no guest with an agent' \
	bench restore --snapshot "$tmp/v" --allow-pvm -n 1 -w 0
expect 2 'tune restore: the snapshot holds no guest with an agent' \
	tune restore "$tmp/v" --allow-pvm
expect 2 'bench session: .* holds no guest with an agent' bench session \
	--snapshot "$tmp/v" --allow-pvm
expect 2 'tune session: .* holds no guest with an agent' tune session \
	--snapshot "$tmp/v" --allow-pvm --turns 2

# --- the flag, and the older record ----------------------------------------
cp -r "$tmp/v" "$tmp/old"
"$SNAPFORGE" "$tmp/old" --virtio v1 && ok || fail "snapforge --virtio v1"
expect 0 '^agent: assumed' snapshot inspect "$tmp/old"
expect 0 '' snapshot inspect "$tmp/old" --json
json_check 'd["linux"]["virtio"]["agent"] is True and d["linux"]["virtio"]["version"] == 1' "$out"
# taken for an agent's guest: the default command, which nothing answers;
# every request fails and the run says so
expect 1 'pool: 2 of 2 requests failed; the first: the guest failed' \
	pool run --snapshot "$tmp/old" --allow-pvm -n 2 --size 1 --timeout 10s
grep -q '^requests: 0 served, 2 failed' "$out" || fail "pool run: $(head -n 3 "$out")"
expect 1 'requests failed' pool run --snapshot "$tmp/old" --allow-pvm \
	-n 2 --size 1 --timeout 10s --json
json_check 'd["served"] == 0 and d["failed"] == 2 and d["commands"]["ran"] == 0' "$out"
cp -r "$tmp/v" "$tmp/flagged"
"$SNAPFORGE" "$tmp/flagged" --virtio agent && ok || fail "snapforge --virtio agent"
expect 0 '^agent: listened when the snapshot was taken' snapshot inspect \
	"$tmp/flagged"
expect 2 'runs commands through its agent: give --exec CMD' \
	snapshot restore "$tmp/flagged" --allow-pvm
expect 1 'pool: 1 of 1 requests failed' pool run --snapshot "$tmp/flagged" \
	--allow-pvm -n 1 --size 1 --timeout 10s --exec true

finish
