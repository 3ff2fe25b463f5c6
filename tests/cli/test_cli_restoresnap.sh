#!/bin/bash
# `bench restore --snapshot DIR` on the user's own snapshots (KVM): a
# probe snapshot, a diff of it and a Linux one of the ring-0 test kernel,
# each restored with two strategies, warm (and cold where it means
# something), interleaved; the document names the snapshot and its guest
# (a Linux guest's kernel by sha256), its series are what compare matches
# across runs, the report renders it, and the snapshot is left as it was.
# Usage: test_cli_restoresnap.sh COLDSTART TESTKERNEL.elf
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
need_kvm
scratch

# --- a probe snapshot ------------------------------------------------------------
expect 0 "" snapshot create "$tmp/p" --mem 16M --init 4M --ws 4M -q
before=$(sums "$tmp/p")
expect 0 '"bench": "restore"' bench restore --snapshot "$tmp/p" -n 2 -w 0 \
	--cache warm --strategy mmap,eager --json
cp "$out" "$tmp/p1.json"
P=$tmp/p1.json
json_check "d['config']['snapshot'] == '$tmp/p' and d['config']['guest'] == 'probe' and d['guest']['name'] == 'probe' and d['config']['mem_bytes'] == 16 << 20 and d['config']['ws_bytes'] == 4 << 20" "$P"
json_check "sorted(s['name'] for s in d['series'] if s['name'].endswith('/done')) == ['eager/snapshot-probe/mem16M/warm/done', 'mmap/snapshot-probe/mem16M/warm/done']" "$P"
json_check "len(d['series']) == 2 * 4 and all(len(s['samples_ns']) == 2 and s['samples_ns'][0] > 0 for s in d['series'] if s['params']['phase'] == 'done')" "$P"
json_check "not any(s['name'].startswith('never-stopped') for s in d['series']) and d['skipped'] == []" "$P"
[ "$(sums "$tmp/p")" = "$before" ] && ok || fail "bench restore --snapshot changed the snapshot"
# A second run matches the first series by series (2 samples a side
# cannot decide: inconclusive, 3, not 2 for results that do not match);
# the report renders it.
expect 0 "" bench restore --snapshot "$tmp/p" -n 2 -w 0 --cache warm \
	--strategy mmap,eager --out "$tmp/p2"
expect 3 "mmap/snapshot-probe/mem16M/warm/done" compare "$P" "$tmp/p2/restore.json"
grep -q "snapshot $tmp/p (probe guest, mem 16 MiB ws 4 MiB)" "$tmp/p2/restore.md" &&
	ok || fail "restore.md does not name the snapshot"
expect 0 "" report "$tmp/p2/restore.json" --format md -q --out "$tmp/p2r"
grep -q "^- restore (probe \`[0-9a-f]\{8\}\`), medians from restore start:" "$tmp/p2r/report.md" &&
	grep -q "^  - mem 16 MiB, ws 4 MiB, warm: fastest " "$tmp/p2r/report.md" &&
	grep -q '"snapshot":"'"$tmp/p"'"' "$tmp/p2r/report.md" &&
	grep -qF '| strategy | warm 16/4 |' "$tmp/p2r/report.md" &&
	grep -q '^mmap,warm,16,4,2,' "$tmp/p2r/restore.csv" &&
	ok || fail "report.md of bench restore --snapshot"

# --- a diff of it: cold caches mean nothing there (merged into memory) ------
expect 0 "" snapshot create "$tmp/d" --diff-from "$tmp/p"
expect 0 "cold cache left out: a diff snapshot" bench restore --snapshot "$tmp/d" \
	-n 1 -w 0 --strategy mmap --out "$tmp/d1"
json_check "d['config']['diff'] is True and d['config']['cache'] == ['warm'] and [x['what'] for x in d['skipped']] == ['cold cache'] and {s['params']['cache'] for s in d['series']} == {'warm'}" "$tmp/d1/restore.json"
expect 2 "cold means nothing here: a diff" bench restore --snapshot "$tmp/d" \
	--cache cold --strategy mmap

# --- a Linux snapshot of the ring-0 test kernel ----------------------------------
expect 0 "" snapshot create "$tmp/l" --kernel "$TK_ELF" --allow-pvm --mem 32M -q
if [ -d /sys/module/kvm_pvm ]; then
	expect 77 'PVM' bench restore --snapshot "$tmp/l" -n 1 -w 0
fi
before=$(sums "$tmp/l")
expect 0 '"guest": "linux"' bench restore --snapshot "$tmp/l" --allow-pvm -n 2 \
	-w 0 --cache warm --strategy mmap,eager --json
cp "$out" "$tmp/l1.json"
L=$tmp/l1.json
json_check "d['config']['guest'] == 'linux' and d['config']['kernel'].endswith('testkernel.elf') and d['config']['initrd'] is None and d['guest']['name'] == 'linux' and len(d['guest']['kernel']['sha256']) == 64" "$L"
json_check "sorted(s['name'] for s in d['series'] if s['name'].endswith('/done')) == ['eager/snapshot-linux/mem32M/warm/done', 'mmap/snapshot-linux/mem32M/warm/done']" "$L"
json_check "all(len(s['samples_ns']) == 2 and s['samples_ns'][0] > 0 and 'ws_bytes' not in s['params'] for s in d['series'] if s['params']['phase'] == 'done')" "$L"
[ "$(sums "$tmp/l")" = "$before" ] && ok || fail "bench restore --snapshot changed the Linux snapshot"
expect 0 "" report "$L" --format md -q --out "$tmp/lr"
grep -q "^Guest: linux; kernel \`.*testkernel.elf\` (.* sha256 \`[0-9a-f]\{64\}\`)" "$tmp/lr/report.md" &&
	grep -q "^  - mem 32 MiB, warm: fastest " "$tmp/lr/report.md" &&
	grep -q "^- restore (linux \`$(sha256sum "$TK_ELF" | cut -c1-8)\`), medians from restore start:" "$tmp/lr/report.md" &&
	ok || fail "report.md does not name the Linux guest"
# its working set is not known: sizes by memory alone, ws_mib empty
grep -qF '| strategy | warm 32 MiB |' "$tmp/lr/report.md" &&
	grep -q '^mmap,warm,32,,2,' "$tmp/lr/restore.csv" &&
	ok || fail "a Linux snapshot's unknown working set in the report"
finish
