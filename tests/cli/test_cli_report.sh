#!/bin/bash
# `coldstart report` as a black box, no KVM needed: synthetic result
# documents of several drivers (generated here, fixed seed) give every file
# (report.md, CSV, PNG and SVG with gnuplot really run where installed);
# without gnuplot on PATH the Markdown and CSV still appear with a warning;
# bad inputs are clear errors that write nothing.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch
dir=$tmp

python3 - "$dir" <<'PY'
import json, math, random, sys
d = sys.argv[1]
rnd = random.Random(7)
def samples(median, n=20):
    return [round(median * math.exp(rnd.gauss(0, 0.05))) for _ in range(n)]
sysinfo = {"schema": 1, "hostname": "testhost", "cpu": {"model": "Test CPU",
           "online_cpus": 2}, "kernel": {"release": "6.1-test"},
           "memory": {"total_kib": 1048576}, "kvm": {"flavour": "vmx"}}
def doc(bench, series, **extra):
    x = {"schema": 1, "bench": bench, "coldstart": {"version": "0.1.0",
         "commit": "abc123"}, "sysinfo": sysinfo, "config": {"guest": "probe"},
         "series": series, "warnings": ["a warning about %s" % bench]}
    x.update(extra)
    json.dump(x, open("%s/%s.json" % (d, bench), "w"))
doc("lifecycle", [{"name": n, "unit": "ns", "samples_ns": samples(m)}
                  for n, m in (("inproc.coldstart", 1.4e6), ("inproc.floor", 1.2e6))],
    memory={"vmm_overhead_kib": 76})
ser = []
for strat, f in (("mmap", 3), ("prefetch", 1)):
    for cache in ("warm", "cold"):
        for mem in (64, 256):
            for ph, base in (("first_run", 0.5e6), ("first_progress", 0.6e6),
                             ("done", 5e6 * f), ("request", 4e6 * f)):
                ser.append({"name": "%s/mem%dM/ws16M/%s/%s" % (strat, mem, cache, ph),
                            "unit": "ns", "params": {"strategy": strat,
                            "mem_bytes": mem << 20, "ws_bytes": 16 << 20,
                            "cache": cache, "phase": ph},
                            "samples_ns": samples(base * (2 if cache == "cold" else 1), 5),
                            "faults_mean": 4096.0, "bytes_read_mean": 16777216.0})
for mem in (64, 256):
    ser.append({"name": "never-stopped/mem%dM/ws16M/request" % mem, "unit": "ns",
                "params": {"strategy": "never-stopped", "mem_bytes": mem << 20,
                           "ws_bytes": 16 << 20, "phase": "request"},
                "samples_ns": samples(1e6, 5)})
doc("restore", ser, ratios=[{"mem_bytes": 64 << 20, "ws_bytes": 16 << 20,
    "cache": "warm", "prefetch_done_ns": 5e6, "prefetch_request_ns": 4e6,
    "mmap_done_ns": 15e6, "never_stopped_request_ns": 1e6,
    "prefetch_vs_never_stopped": 5.0, "prefetch_speedup_over_mmap": 3.0}])
doc("rate", [{"name": "%s.w%d" % (m, w), "unit": "ns", "params": {"mode": m,
     "kind": "sustained", "workers": w}, "samples_ns": samples(2e6 * w),
     "vms_per_s": 500.0 * w} for m in ("inproc", "process") for w in (1, 2, 4)])
doc("density", [{"name": "fresh.pss_per_vm", "unit": "kib",
     "samples": [5000.0, 5100.0, 4900.0]}],
    density={m: {"vms": 3, "marginal_kib_per_vm": k, "vms_per_gib": 1048576 / k,
                 "curve": [{"vms": n, "rss_kib": 7000.0 * n, "pss_kib": k * n,
                            "uss_kib": 0.8 * k * n, "kernel_kib": 300.0 * n}
                           for n in (1, 2, 3)]}
             for m, k in (("fresh", 5000.0), ("clone", 900.0))})
PY
docs="$dir/lifecycle.json $dir/restore.json $dir/rate.json $dir/density.json"

# Every file, with gnuplot where it is installed.
expect 0 "report written" report $docs --out "$dir/r"
for f in report.md series.csv cdf.csv restore.csv rate.csv density.csv; do
	if [ -s "$dir/r/$f" ]; then ok; else
		echo "FAIL: $f missing or empty"; failed=$((failed + 1)); fi
done
grep -q "| inproc.coldstart | 20 |" "$dir/r/report.md" &&
	grep -q "Test CPU" "$dir/r/report.md" &&
	grep -q "commit abc123" "$dir/r/report.md" &&
	grep -q "a warning about restore" "$dir/r/report.md" &&
	grep -q "| prefetch | warm | 64 | 16 |" "$dir/r/report.md" &&
	grep -q "= 5.00x never-stopped" "$dir/r/report.md" &&
	grep -q "VMs per GiB" "$dir/r/report.md" &&
	ok || { echo "FAIL: report.md lacks a table, host or warning";
	failed=$((failed + 1)); }
[ "$(head -1 "$dir/r/restore.csv")" = "strategy,cache,mem_mib,ws_mib,n,first_run_ms,first_progress_ms,done_ms,done_p90_ms,request_ms,faults,mib_read" ] &&
	grep -q "^prefetch,warm,64,16,5," "$dir/r/restore.csv" &&
	grep -q "^never-stopped,-,256,16," "$dir/r/restore.csv" &&
	grep -q "^inproc-sustained,4,2000.000," "$dir/r/rate.csv" &&
	grep -q "^clone,3," "$dir/r/density.csv" &&
	[ "$(grep -c ',inproc.floor,' "$dir/r/cdf.csv")" -eq 20 ] &&
	ok || fail "CSV contents"
if command -v gnuplot >/dev/null; then
	for p in cdf-lifecycle cdf-rate restore rate density; do
		if head -c 8 "$dir/r/$p.png" | grep -q PNG &&
		   grep -q "<svg" "$dir/r/$p.svg"; then ok; else
			echo "FAIL: plot $p.png/.svg missing or not PNG/SVG"
			failed=$((failed + 1)); fi
	done
	grep -q "](restore.png)" "$dir/r/report.md" && ok ||
		fail "report.md does not show restore.png"
	ls "$dir/r" | grep -q "\.tmp" && { echo "FAIL: temporary files left";
		failed=$((failed + 1)); } || ok
else
	echo "gnuplot not installed: plot checks skipped"
fi

# --format md: no plots; the default output directory is the first input's.
expect 0 "" report "$dir/lifecycle.json" --format md -q
[ -s "$dir/report.md" ] && [ ! -e "$dir/cdf-lifecycle.png" ] &&
	ok || fail "--format md"

# Without gnuplot: Markdown and CSV with a warning, exit 0.
printf '#!/bin/sh\nPATH=/nonexistent exec "%s" "$@"\n' "$COLDSTART" >"$dir/nogp"
chmod +x "$dir/nogp"
real=$COLDSTART
COLDSTART=$dir/nogp
expect 0 "gnuplot is not installed" report $docs --out "$dir/np"
COLDSTART=$real
[ -s "$dir/np/report.md" ] && [ -s "$dir/np/restore.csv" ] &&
	[ -z "$(ls "$dir/np" | grep -E '\.(png|svg)$')" ] &&
	ok || fail "without gnuplot"

# Bad inputs: usage errors naming the file and the problem; nothing written.
echo 'this is { not json' >"$dir/garbage.json"
echo '{"schema": 2, "bench": "lifecycle", "series": []}' >"$dir/schema2.json"
echo '{"schema": 1, "bench": "lifecycle", "series": []}' >"$dir/noseries.json"
echo '[1, 2]' >"$dir/array.json"
expect 2 "garbage.json: not a readable JSON" report "$dir/garbage.json" --out "$dir/bad"
expect 2 "schema2.json: result schema other than 1" report "$dir/schema2.json" --out "$dir/bad"
expect 2 "noseries.json" report "$dir/noseries.json" --out "$dir/bad"
expect 2 "array.json: not a coldstart result" report "$dir/array.json" --out "$dir/bad"
expect 2 "missing.json: not a readable" report "$dir/lifecycle.json" "$dir/missing.json" --out "$dir/bad"
[ ! -e "$dir/bad" ] && ok || fail "bad input wrote files"
expect 2 "no result documents" report
expect 2 "--format" report "$dir/lifecycle.json" --format jpeg
expect 0 "Usage: coldstart report" report --help
finish
