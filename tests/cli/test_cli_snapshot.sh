#!/bin/bash
# Snapshots end to end on a host with KVM: create, inspect, restore with each
# memory strategy, and memory whose content a guest finds wrong. Damaged
# files, refused before KVM is opened, are cli.snapfiles' (any host).
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
need_kvm
scratch

# leftovers: temporary directories of a save, left next to its target.
leftovers() {
	find "$tmp" -maxdepth 1 -name '*.tmp.*' | sed "s|^$tmp/||"
}

no_leftovers() {
	local left
	left=$(leftovers)
	if [ -z "$left" ]; then ok; else fail "$1 left behind: $left"; fi
}

# copy NAME: a fresh copy of the reference snapshot, to damage.
copy() {
	rm -rf "${tmp:?}/$1"
	cp -a "$tmp/s" "$tmp/$1"
	echo "$tmp/$1"
}

# --- create and inspect ---------------------------------------------------
# Everything below needs this reference snapshot.
if ! expect 0 'snapshot .*/s: state [0-9]+ bytes, memory 10\.0 MiB' \
	snapshot create "$tmp/s" --init 4M --ws 8M --pattern random; then
	finish
	exit 1
fi
for f in state memory; do
	if [ -f "$tmp/s/$f" ]; then ok; else fail "create made no $f"; fi
done
no_leftovers "create"
ref=$(sums "$tmp/s")

expect 0 'format version 1, checksum ok, 1 vCPU\(s\)' snapshot inspect "$tmp/s"
expect 0 'init 4096 KiB, working set 8192 KiB, paused at READY' \
	snapshot inspect "$tmp/s"
for sec in vm.config memory device.probe vcpu.regs vcpu.sregs vcpu.msrs; do
	grep -q "^  $sec " "$out" || fail "inspect lists no $sec"
done
expect 0 '"format_version": 1' snapshot inspect "$tmp/s" --json
cp "$out" "$tmp/inspect.json"
json_check 'd["format_version"] == 1 and d["vcpus"] == 1 and d["checksum"] == "ok" and d["mem_bytes"] == 10 << 20 and d["probe"]["init_bytes"] == 4 << 20 and d["probe"]["ws_bytes"] == 8 << 20 and d["probe"]["ready"] == 1' "$tmp/inspect.json"
json_check '{"vcpu.regs", "vcpu.sregs", "vcpu.msrs", "device.probe", "vm.config", "memory"} <= {s["name"] for s in d["sections"]}' "$tmp/inspect.json"
# Memory the guest never touched is holes: data covers the 4M init at
# least, and the file does not occupy its full size on disk.
json_check '4 << 20 <= d["mem_data_bytes"] <= d["mem_bytes"] and d["mem_allocated_bytes"] < d["mem_bytes"]' "$tmp/inspect.json"
expect 0 '"mem_data_bytes"' snapshot create "$tmp/sj" --init 2M --json
cp "$out" "$tmp/create.json"
json_check 'd["command"] == "snapshot create" and d["state_bytes"] > 64 and 2 << 20 <= d["mem_data_bytes"] <= d["mem_bytes"]' "$tmp/create.json"
expect 2 "snapshot inspect: needs the snapshot's directory DIR first" snapshot inspect --json "$tmp/s"
# -q/--quiet as `run` takes it: the snapshot is written, nothing printed.
expect 0 '' snapshot create "$tmp/sq" --init 2M -q
[ ! -s "$out" ] && [ -s "$tmp/sq/state" ] && ok || fail "snapshot create -q printed something or wrote no snapshot"
expect 0 'checksum' snapshot restore "$tmp/sq"

# --- restore with each memory strategy ------------------------------------
for m in eager mmap populate; do
	expect 0 'checksum: 0x[0-9a-f]{16} \(matches the prediction' \
		snapshot restore "$tmp/s" --mem-restore "$m"
	grep -q "strategy $m:" "$out" || fail "restore --mem-restore $m: output names no strategy"
	expect 0 '' snapshot restore "$tmp/s" --mem-restore "$m" --json
	cp "$out" "$tmp/restore-$m.json"
	json_check "d['success'] is True and d['outcome'] == 'completed' and d['mem_restore'] == '$m' and d['pages_touched'] == 2048" "$tmp/restore-$m.json"
	json_check 'd["timeline_ns"]["restore_start"] < d["timeline_ns"]["first_run"] < d["timeline_ns"]["done"]' "$tmp/restore-$m.json"
done
# What each strategy reads: eager the data extents, populate everything,
# mmap nothing up front.
json_check 'd["memory"]["bytes_read"] >= 4 << 20' "$tmp/restore-eager.json"
json_check 'd["memory"]["bytes_read"] == 10 << 20' "$tmp/restore-populate.json"
json_check 'd["memory"]["bytes_read"] == 0' "$tmp/restore-mmap.json"
# Restoring reads the snapshot only.
if [ "$(sums "$tmp/s")" = "$ref" ]; then ok; else fail "restore modified the snapshot"; fi

# --- the working set, recorded beside planted links --------------------------
# snapshot.wset_never_follows_links: prefetch recorded DIR/wset through
# DIR/wset.tmp.TID, opened with O_CREAT | O_TRUNC: a symlink planted at
# that name (the thread IDs come next to the last pid) was written
# through, clobbering a file outside DIR, and renamed in as DIR/wset. The
# temporary is now a new file under a random name. Links at every name
# the next thread IDs could give; the restore runs under the default
# --seccomp kill.
d=$(copy wsetlink)
echo victim >"$tmp/victim"
python3 - "$d" <<'PY'
import os, sys
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for tid in range(last + 1, last + 3000):
    os.symlink("../victim", "%s/wset.tmp.%d" % (sys.argv[1], tid))
PY
expect 0 'matches the prediction' snapshot restore "$d" --mem-restore prefetch
[ "$(cat "$tmp/victim")" = victim ] && ok ||
	fail "recording the working set wrote through a planted link"
[ -f "$d/wset" ] && [ ! -L "$d/wset" ] && head -c 8 "$d/wset" | grep -q CSWSET01 &&
	ok || fail "no working set recorded beside the links: $(ls -l "$d/wset")"
[ "$(ls -A "$d" | grep -cv '^wset\.tmp\.[0-9]*$')" -eq 3 ] && ok ||
	fail "temporaries left in $d: $(ls -A "$d" | grep -v '^wset\.tmp\.[0-9]*$')"
expect 0 '"success": true' snapshot restore "$d" --mem-restore prefetch --json
json_check 'd["memory"]["bytes_read"] > 0' "$out"
rm -rf "$d"

# --- two vCPUs --------------------------------------------------------------
expect 0 'memory 10\.0 MiB' snapshot create "$tmp/s2" --vcpus 2 --init 4M \
	--ws 8M --pattern random --op write --seed 5
expect 0 '' snapshot inspect "$tmp/s2" --json
cp "$out" "$tmp/inspect2.json"
json_check 'd["vcpus"] == 2 and {(s["name"], s["index"]) for s in d["sections"]} >= {(n, i) for n in ("vcpu.regs", "vcpu.sregs", "vcpu.msrs") for i in (0, 1)}' "$tmp/inspect2.json"
for m in eager mmap populate; do
	expect 0 'matches the prediction' snapshot restore "$tmp/s2" --mem-restore "$m"
done

# --- the guest's own failures after a restore -------------------------------
expect 0 '' snapshot create "$tmp/abort" --misbehave abort
expect 1 'guest aborted on vCPU 0 with code 42' snapshot restore "$tmp/abort"
expect 1 '"success": false' snapshot restore "$tmp/abort" --json
expect 0 '' snapshot create "$tmp/hang" --misbehave hang
expect 1 'timed out after 0\.300 s' snapshot restore "$tmp/hang" --timeout 300ms

# --- create onto an existing directory ---------------------------------------
d=$(copy forced)
before=$(sums "$d")
expect 2 'exists \(replace it with --force\)' snapshot create "$d" --init 2M
if [ "$(sums "$d")" = "$before" ]; then ok; else fail "create without --force modified $d"; fi
expect 0 'memory 6\.0 MiB' snapshot create "$d" --force --init 2M --ws 4M
expect 0 'init 2048 KiB, working set 4096 KiB' snapshot inspect "$d"
expect 0 'matches the prediction' snapshot restore "$d"
no_leftovers "create --force"
# A failed create leaves nothing behind.
expect 1 'creating a directory next to' snapshot create "$tmp/nodir/x"
no_leftovers "a failed create"

# --- damaged snapshots ---------------------------------------------------------
# Damaged state and memory files are refused before /dev/kvm is opened:
# cli.snapfiles checks those on any host with forged snapshots. What
# needs a guest to run stays here.
# Memory of the right size but other content: the run fails, not hangs.
d=$(copy zeroed)
truncate -s 0 "$d/memory"
truncate -s $((10 << 20)) "$d/memory"
for m in eager mmap populate; do
	expect 1 'outcome: (failed|stopped)' snapshot restore "$d" \
		--mem-restore "$m" --timeout 10s
done
expect 0 '' snapshot create "$tmp/seed9" --init 4M --ws 8M --pattern random --seed 9
d=$(copy swapped)
cp "$tmp/seed9/memory" "$d/memory"
for m in eager mmap populate; do
	expect 1 'WRONG, the host predicted' snapshot restore "$d" --mem-restore "$m"
done

# BUG: --force onto a path that is not a directory (a plain file) exchanges
# it into DIR.tmp.XXXXXX and then cannot remove it: exit 0, a leftover.
echo "not a snapshot" >"$tmp/plain"
timeout 120 "$COLDSTART" snapshot create "$tmp/plain" --force >"$out" 2>"$err"
code=$?
if [ "$code" -ne 0 ] && [ "$(cat "$tmp/plain" 2>/dev/null)" != "not a snapshot" ]; then
	fail "create --force onto a plain file failed (exit $code) and changed it"
fi
no_leftovers "create --force onto a plain file (exit $code)"
rm -rf "$tmp"/plain*

# The reference snapshot survived everything above.
if [ "$(sums "$tmp/s")" = "$ref" ]; then ok; else fail "the reference snapshot changed"; fi
expect 0 'matches the prediction' snapshot restore "$tmp/s"

# --force replaces snapshots only: a directory holding anything else stays.
mkdir -p "$tmp/mine" && echo keep > "$tmp/mine/notes.txt"
expect 2 'is not a coldstart snapshot; not replacing it' snapshot create "$tmp/mine" --force
if [ "$(cat "$tmp/mine/notes.txt" 2>/dev/null)" = keep ] && ! ls -d "$tmp"/mine.tmp.* >/dev/null 2>&1; then
	ok
else
	echo "FAIL: --force onto a non-snapshot directory touched it"; failed=$((failed + 1))
fi
finish
