#!/bin/bash
# `coldstart tune restore` as a black box: usage errors and bad snapshot
# directories (exit 2, named), then real runs on a small probe-guest
# snapshot: every strategy measured or left out with a reason, the
# verdict's fields and its --mem-restore line, the budget, cold caches
# left out on tmpfs, and a Linux snapshot of the ring-0 test kernel (77 on
# PVM without --allow-pvm). The verdict logic itself is tested with
# synthetic samples in tests/unit/test_tune_restore.c.
# Usage: test_cli_tune.sh COLDSTART [TESTKERNEL.elf]
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
scratch

# --- usage, on any host ----------------------------------------------------------
expect 2 'tune: what to tune' tune
expect 2 "unknown tuner 'warp'" tune warp
expect 0 'pool +which warm-pool policy' tune --help
expect 0 'restore +which memory-restore strategy' tune --help
expect 0 'Usage: coldstart tune restore SNAPSHOT_DIR' tune restore --help
expect 0 'Usage: coldstart tune TUNER' help tune
expect 2 'SNAPSHOT_DIR missing' tune restore
expect 2 "unknown or incomplete option '--bogus'" tune restore "$tmp" --bogus
expect 2 "--alpha: '2' is not a probability" tune restore "$tmp" --alpha 2
expect 2 '--budget: must be more than 0' tune restore "$tmp" --budget 0
expect 2 "--budget: 'soon' is not a duration" tune restore "$tmp" --budget soon
expect 2 '--count: 0 is outside' tune restore "$tmp" -n 0
expect 2 "--cache: 'hot' is not one of: warm, cold" tune restore "$tmp" --cache hot
expect 2 '--strategy: mmap is named twice' tune restore "$tmp" --strategy mmap,mmap
expect 2 "--strategy: 'fast' is not one of" tune restore "$tmp" --strategy fast
expect 2 "unexpected argument 'more'" tune restore "$tmp" more

# Bad snapshot directories are usage errors naming the directory, found
# before KVM is opened (so never "no KVM").
expect 2 "snapshot directory $tmp/none: No such file" tune restore "$tmp/none" \
	--kvm /nonexistent/kvm
touch "$tmp/file"
expect 2 "$tmp/file is not a directory" tune restore "$tmp/file"
mkdir "$tmp/empty"
expect 2 "$tmp/empty is not a snapshot coldstart can restore: .*state file" \
	tune restore "$tmp/empty" --kvm /nonexistent/kvm

need_kvm

# --- a real run -------------------------------------------------------------------
expect 0 'snapshot .*saved' snapshot create "$tmp/s" --mem 16M --init 8M --ws 4M
# -n 3 is below what the test needs: raised, with a note. The budget
# leaves room for the emulated host's slow CPU (and a verdict counts on
# none of this host's timings).
expect 0 'Use: `--mem-restore [a-z-]+`' tune restore "$tmp/s" -n 3 --budget 90s \
	--out "$tmp/o"
grep -Eq -- '-n 3 raised to [0-9]+' "$err" && ok ||
	fail "no note that -n 3 was raised"
[ -s "$tmp/o/tune-restore.json" ] && [ -s "$tmp/o/tune-restore.md" ] && ok ||
	fail "--out did not write tune-restore.json and .md"
grep -Eq '^Use: `--mem-restore [a-z-]+`' "$tmp/o/tune-restore.md" && ok ||
	fail "tune-restore.md has no --mem-restore line"
J=$tmp/o/tune-restore.json
json_check 'd["schema"] == 1 and d["bench"] == "tune-restore" and d["guest"]["name"] == "probe" and d["config"]["guest"] == "probe" and d["config"]["cache"] == ["warm", "cold"] and d["config"]["snapshot_fs"] == "disk" and d["config"]["count_asked"] == 3 and d["config"]["count"] >= 5' "$J"
# Every strategy asked for is measured under both cache states or left
# out with a reason.
json_check 'all((s + "/warm/done" in [x["name"] for x in d["series"]] and s + "/cold/done" in [x["name"] for x in d["series"]]) != any(k["what"] == "strategy " + s and k["why"] for k in d["skipped"]) for s in d["config"]["strategies"])' "$J"
json_check 'any(w.startswith("-n 3 raised to") for w in d["warnings"])' "$J"
# Raw samples and the work of each restore, one value per sample.
json_check 'all(len(s["samples_ns"]) == d["budget"]["rounds"] and all(len(s["work"][k]["samples"]) == len(s["samples_ns"]) for k in ("first_run_ns", "guest_rss_kib", "guest_pss_kib", "guest_anon_kib", "host_faults", "major_faults") ) and s["work"]["guest_anon_kib"]["median"] <= s["work"]["guest_rss_kib"]["median"] for s in d["series"])' "$J"
# The verdict: the test named, per cache state an outcome, the fastest by
# median first, a winner only with every other strategy significantly
# slower, and the flag naming the fastest.
verdict='d["verdict"]'
json_check "$verdict['test'].startswith('mann-whitney-u') and $verdict['correction'] == 'holm' and $verdict['alpha'] == 0.01 and set(('warm', 'cold')) <= set($verdict)" "$J"
for c in warm cold; do
	v="d['verdict']['$c']"
	json_check "$v['outcome'] in ('winner', 'tied', 'inconclusive') and $v['flag'] == '--mem-restore ' + $v['fastest'] and $v['ranking'][0]['strategy'] == $v['fastest'] and $v['ranking'][0]['status'] == 'fastest' and [r['median_ns'] for r in $v['ranking']] == sorted(r['median_ns'] for r in $v['ranking']) and all(r['ci95_median_ns'][0] <= r['median_ns'] <= r['ci95_median_ns'][1] for r in $v['ranking'])" "$J"
	json_check "($v['outcome'] == 'winner') == ($v['winner'] == $v['fastest']) and ($v['outcome'] != 'winner' or all(r['status'] == 'slower' and r['p_holm'] < 0.01 for r in $v['ranking'][1:])) and ($v['outcome'] != 'tied' or ($v['fastest'] in $v['equivalent'] and all(r['status'] in ('slower', 'equivalent') for r in $v['ranking'][1:])))" "$J"
done
# prefetch recorded its working set in the snapshot, as snapshot restore does.
json_check 'd["config"]["wset"] in ("recorded by this run", "existing")' "$J"
[ -e "$tmp/s/wset" ] && ok || fail "prefetch recorded no $tmp/s/wset"

# --json, a subset of strategies, warm cache only.
expect 0 '"bench": "tune-restore"' tune restore "$tmp/s" --strategy eager,mmap \
	--cache warm -n 5 --json
cp "$out" "$tmp/sub.json"
json_check '[s["name"] for s in d["series"]] == ["eager/warm/done", "mmap/warm/done"] and all(len(s["samples_ns"]) == 5 for s in d["series"]) and "cold" not in d["verdict"] and d["verdict"]["warm"]["comparisons"] == 1' "$tmp/sub.json"

# A budget spent before the first counted round: nothing measured, said so.
expect 0 'budget was spent after 0 of' tune restore "$tmp/s" --budget 1ms \
	--strategy eager,mmap --json
cp "$out" "$tmp/budget.json"
json_check 'd["budget"]["spent"] is True and d["budget"]["rounds"] == 0 and d["verdict"]["warm"]["outcome"] == "inconclusive" and d["verdict"]["warm"]["flag"] is None and any("budget" in w for w in d["warnings"])' "$tmp/budget.json"

# --- cold caches on tmpfs --------------------------------------------------------
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	shm=$(mktemp -d -p /dev/shm)
	trap 'rm -rf "$tmp" "$shm" "$out" "$err"' EXIT
	cp -r "$tmp/s" "$shm/s"
	expect 0 'cold cache left out' tune restore "$shm/s" --strategy eager,mmap \
		-n 5 --json
	cp "$out" "$tmp/shm.json"
	json_check 'd["config"]["cache"] == ["warm"] and d["config"]["snapshot_fs"] == "tmpfs" and any(k["what"] == "cold cache" and "tmpfs" in k["why"] for k in d["skipped"]) and "cold" not in d["verdict"]' "$tmp/shm.json"
	expect 2 'cold means nothing here: .*tmpfs' tune restore "$shm/s" --cache cold
fi

# --- a Linux snapshot (the ring-0 test kernel) -------------------------------------
if [ -n "$TK_ELF" ]; then
	expect 0 'Linux guest paused at boot complete' snapshot create "$tmp/l" \
		--kernel "$TK_ELF" --allow-pvm --mem 32M --console /dev/null
	if [ -d /sys/module/kvm_pvm ]; then
		expect 77 'a Linux snapshot.*PVM' tune restore "$tmp/l" -n 5
	fi
	expect 0 'Use: `--mem-restore (eager|mmap)`' tune restore "$tmp/l" --allow-pvm \
		--strategy eager,mmap -n 5 --out "$tmp/lo"
	json_check 'd["config"]["guest"] == "linux" and d["guest"]["name"] == "linux" and d["config"]["kernel"].endswith("testkernel.elf") and len(d["series"]) == 4 and all(len(s["samples_ns"]) == 5 and min(s["samples_ns"]) > 0 for s in d["series"])' "$tmp/lo/tune-restore.json"
fi

finish
