#!/bin/bash
# `bench restore` and `bench suite` smoke runs with tiny parameters (KVM):
# the restore document's series, cache states, ratios and the host's work
# per restore, option errors (exit 2) against run failures (exit 1), and a
# whole smoke suite writing every driver's JSON, suite.json (harness
# overhead) and the report with its summary.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
need_kvm
scratch
dir=$tmp

expect 0 "prefetch, mem 8 MiB ws 4 MiB warm" bench restore -n 2 -w 0 \
	--mem 8M --ws 4M --strategy mmap,prefetch --out "$dir/r"
R=$dir/r/restore.json
json_check "d['schema'] == 1 and d['bench'] == 'restore' and d['coldstart']['version']" "$R"
json_check "len(d['series']) == 2 * 2 * 4 + 1" "$R"
json_check "{s['params']['cache'] for s in d['series'] if 'cache' in s['params']} == {'warm', 'cold'}" "$R"
json_check "all(len(s['samples_ns']) == 2 and s['summary']['p50'] > 0 for s in d['series'])" "$R"
json_check "all(s['samples_ns'][0] > 0 for s in d['series'] if s['params']['phase'] == 'done')" "$R"
json_check "d['config']['cold_method'].startswith('fsync') and d['config']['snapshot_fs'] == 'disk'" "$R"
json_check "[r['cache'] for r in d['ratios']] == ['warm', 'cold'] and all(r['prefetch_vs_never_stopped'] > 0 and r['prefetch_speedup_over_mmap'] > 0 for r in d['ratios'])" "$R"
json_check "all(s['bytes_read_mean'] > 0 for s in d['series'] if s['params']['strategy'] == 'prefetch')" "$R"
json_check "all(r['strategy'] == 'prefetch' for r in d['ratios'])" "$R"
# prefetch-thp gets its own ratios, beside prefetch's (where THP is on).
if ! grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
	expect 0 "prefetch-thp, mem 8 MiB ws 4 MiB warm" bench restore -n 2 -w 0 \
		--mem 8M --ws 4M --strategy mmap,prefetch-thp --cache warm --out "$dir/thp"
	json_check "[r['strategy'] for r in d['ratios']] == ['prefetch-thp'] and d['ratios'][0]['prefetch_speedup_over_mmap'] > 0" "$dir/thp/restore.json"
	expect 0 '' report "$dir/thp/restore.json" --format md -q
	grep -q '^- mem 8 MiB, ws 4 MiB, warm cache: prefetch-thp [0-9.]* ms' "$dir/thp/report.md" &&
		ok || fail "report.md lacks prefetch-thp's ratios"
fi
# The host's work: every restore faults pages in (prefetch's reads into
# anonymous memory at least); a cold restore reads the disk, unless the
# kernel has no I/O accounting (null); major faults are part of all.
W="[s for s in d['series'] if s['params']['phase'] == 'done']"
json_check "all(s['host_faults_mean'] >= s['major_faults_mean'] >= 0 for s in $W)" "$R"
json_check "all(s['host_faults_mean'] > 0 for s in $W if s['params']['strategy'] == 'prefetch')" "$R"
json_check "all(s['disk_read_bytes_mean'] is None or s['disk_read_bytes_mean'] > 0 for s in $W if s['params']['cache'] == 'cold')" "$R"
[ -s "$dir/r/restore.md" ] && grep -q "| host faults | major faults | disk MiB |" "$dir/r/restore.md" &&
	ok || fail "restore.md or its work columns"
[ -z "$(ls /var/tmp | grep coldstart-restore-)" ] && ok ||
	fail "snapshot directories left in /var/tmp"

expect 2 "--strategy: .*nope" bench restore --strategy nope
expect 2 "--cache" bench restore --cache lukewarm
expect 2 "no memory size fits" bench restore --mem 4M --ws 4M
expect 2 "--mem" bench restore --mem 3k
# A failure while running (here KVM_GET_API_VERSION's EINVAL on a device
# that is not KVM) exits 1, not 2 as if the options were wrong.
if [ -r /dev/userfaultfd ] && [ -w /dev/userfaultfd ]; then
	expect 1 "KVM_GET_API_VERSION" bench restore -n 1 -w 0 --mem 8M --ws 4M \
		--strategy mmap --cache warm --kvm /dev/userfaultfd
fi
# What the host cannot do is left out and recorded, the rest measured:
# cold caches of snapshots on tmpfs (cold alone stays a usage error:
# nothing would be left), a strategy that needs huge pages none reserved.
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	expect 2 "tmpfs" bench restore -n 1 -w 0 --mem 8M --ws 4M --strategy mmap \
		--cache cold --snapshot-dir /dev/shm
	expect 0 "left out: cold cache: the snapshot directory /dev/shm/coldstart-restore-[^ ]* is in memory \(tmpfs\)" \
		bench restore -n 1 -w 0 --mem 8M --ws 4M --strategy mmap --no-baseline \
		--snapshot-dir /dev/shm --out "$dir/shm"
	json_check "d['config']['cache'] == ['warm'] and d['config']['snapshot_fs'] == 'tmpfs' and {s['params']['cache'] for s in d['series']} == {'warm'} and [x['what'] for x in d['skipped']] == ['cold cache'] and 'tmpfs' in d['skipped'][0]['why']" "$dir/shm/restore.json"
	grep -q "^- cold cache: the snapshot directory " "$dir/shm/restore.md" && ok ||
		fail "restore.md does not list the cold cache as left out"
	expect 0 "" report "$dir/shm/restore.json" --format md -q
	grep -q "^- restore: cold cache: the snapshot directory " "$dir/shm/report.md" && ok ||
		fail "report.md does not list the cold cache as left out"
fi
if [ "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)" -lt 4 ]; then
	expect 0 '"skipped"' bench restore -n 1 -w 0 --mem 8M --ws 4M --no-baseline \
		--strategy mmap,eager-huge --cache warm --json
	json_check "[x['what'] for x in d['skipped']] == ['strategy eager-huge'] and 'free 2 MiB pages' in d['skipped'][0]['why'] and {s['params']['strategy'] for s in d['series']} == {'mmap'} and not any('eager-huge' in w for w in d['warnings'])" "$out"
fi

# The whole suite, smoke-sized (in the emulated host it has taken up to
# two minutes).
EXPECT_TIMEOUT=300 expect 0 "suite: results and report" bench suite --smoke --out "$dir/s"
S=$dir/s/suite.json
json_check "d['bench'] == 'suite' and d['config']['level'] == 'smoke'" "$S"
json_check "{x['name'] for x in d['drivers']} >= {'lifecycle', 'restore'} and all(x['status'] in ('ok', 'skipped') for x in d['drivers'])" "$S"
json_check "0 < d['harness']['overhead_ns_p50'] < 1e6 and len(d['series'][0]['samples_ns']) == 200" "$S"
for f in lifecycle.json restore.json report.md series.csv cdf.csv restore.csv; do
	[ -s "$dir/s/$f" ] && ok || fail "suite wrote no $f"
done
grep -q "Harness overhead per sample" "$dir/s/report.md" && ok ||
	fail "report.md lacks the harness overhead"
grep -q "^## Summary" "$dir/s/report.md" && grep -q "^- lifecycle (probe \`[0-9a-f]\{8\}\`): in-process " "$dir/s/report.md" &&
	grep -q "^- restore (probe \`[0-9a-f]\{8\}\`), medians from restore start:" "$dir/s/report.md" &&
	ok || fail "report.md lacks the summary"
# The suite over the user's own guest (the ring-0 test kernel): boot,
# rate and density boot it, restore and pool restore a snapshot of it
# that the suite made and removed; the probe-only drivers are not run,
# nor those that need a root disk.
export TMPDIR=$dir/tmp
mkdir "$TMPDIR"
sum=$(sha256sum "$TK_ELF" | cut -d' ' -f1)
EXPECT_TIMEOUT=300 expect 0 "suite: results and report" bench suite --smoke \
	--kernel "$TK_ELF" --allow-pvm --mem 32M --cmdline "tk.signal=port tk.exit=reset" \
	--out "$dir/k"
grep -q "bench lifecycle: not run (it measures only the built-in probe guest)" "$err" &&
	ok || fail "the suite does not say lifecycle was not run"
# peers measures the user's guest only on its root disk (--rootfs)
grep -q "bench peers: not run (it needs a guest on its root disk: --kernel K --initrd I --rootfs R)" "$err" &&
	ok || fail "the suite does not say peers needs --rootfs"
K=$dir/k/suite.json
json_check "[x['name'] for x in d['drivers']] == ['boot', 'density', 'restore', 'rate', 'pool'] and all(x['status'] == 'ok' for x in d['drivers'])" "$K"
json_check "'--snapshot' in [x for x in d['drivers'] if x['name'] == 'pool'][0]['args'] and '--kernel' not in [x for x in d['drivers'] if x['name'] == 'pool'][0]['args']" "$K"
json_check "d['guest']['name'] == 'linux' and d['guest']['kernel']['sha256'] == '$sum' and d['config']['cmdline'] == 'tk.signal=port tk.exit=reset'" "$K"
json_check "\"--kernel $TK_ELF\" in [x for x in d['drivers'] if x['name'] == 'rate'][0]['args'] and \"--cmdline 'tk.signal=port tk.exit=reset'\" in [x for x in d['drivers'] if x['name'] == 'boot'][0]['args']" "$K"
for b in boot density restore rate pool; do
	json_check "d['guest']['name'] == 'linux' and d['guest']['kernel']['sha256'] == '$sum'" "$dir/k/$b.json"
done
json_check "d['config']['guest'] == 'linux' and all('snapshot-linux' in s['name'] for s in d['series'])" "$dir/k/restore.json"
[ -z "$(ls -A "$TMPDIR")" ] && ok || fail "the suite left its guest snapshot: $(ls -A "$TMPDIR")"
grep -q "^| linux \`${sum:0:8}\`, 32 MiB, 1 vCPU | fresh |" "$dir/k/report.md" &&
	ok || fail "the report's capacity table does not name the guest"
for b in boot density restore; do
	grep -q "^- $b (linux \`${sum:0:8}\`)[:,]" "$dir/k/report.md" &&
		ok || fail "the report's $b Summary line does not name the guest"
done
unset TMPDIR
expect 2 "unexpected argument" bench suite extra
expect 2 "--only: 'floor' is not a driver of the suite" bench suite --only lifecycle,floor --out "$dir/x"
[ ! -e "$dir/x" ] && ok || fail "a refused suite wrote files"
finish
