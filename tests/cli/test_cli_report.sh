#!/bin/bash
# `coldstart report` as a black box, no KVM needed: synthetic result
# documents of several drivers (generated here, fixed seed) give every file
# (report.md, CSV, PNG and SVG with gnuplot really run where installed);
# the summary, throughput, peers ratios, restore work columns, unit-aware
# tables, latency-only CDFs split at 16 series and collapsed outlier
# warnings, each checked against values the generator computes itself;
# without gnuplot on PATH the Markdown and CSV still appear with a warning;
# bad inputs are clear errors that write nothing.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch
dir=$tmp

python3 - "$dir" <<'PY'
import json, math, random, statistics, sys
d = sys.argv[1]
rnd = random.Random(7)
expect = []  # lines report.md must hold, computed here independently
def samples(median, n=20):
    return [round(median * math.exp(rnd.gauss(0, 0.05))) for _ in range(n)]
def ms(ns):  # times in the unit their size suits, as report.md shows them
    if ns < 1e3:
        return "%.1f ns" % ns
    return "%.2f us" % (ns / 1e3) if ns < 1e6 else "%.3f ms" % (ns / 1e6)
def p99(v):  # type-7 percentile
    return statistics.quantiles(v, n=100, method="inclusive")[98]
def outlier(name):
    return ("%s: 1 of 20 samples are outliers (more than 3 robust standard "
            "deviations from the median)" % name)
sysinfo = {"schema": 1, "hostname": "testhost", "cpu": {"model": "Test CPU",
           "online_cpus": 2}, "kernel": {"release": "6.1-test"},
           "memory": {"total_kib": 1048576}, "kvm": {"flavour": "vmx"}}
def doc(bench, series, warnings=(), **extra):
    x = {"schema": 1, "bench": bench, "coldstart": {"version": "0.1.0",
         "commit": "abc123"}, "sysinfo": sysinfo, "config": {"guest": "probe"},
         "series": series,
         "warnings": ["a warning about %s" % bench] + list(warnings)}
    x.update(extra)
    json.dump(x, open("%s/%s.json" % (d, bench), "w"))
life = {n: samples(m) for n, m in (("inproc.coldstart", 1.4e6),
        ("inproc.floor", 1.2e6), ("process.coldstart", 2.6e6),
        ("process.floor", 2.0e6))}
doc("lifecycle", [{"name": n, "unit": "ns", "samples_ns": v}
                  for n, v in life.items()],
    [outlier("inproc.floor"), outlier("process.floor")],
    memory={"vmm_overhead_kib": 76})
med = {n: statistics.median(v) for n, v in life.items()}
expect.append("- lifecycle: in-process %s median (%.2fx the floor), "
              "process-per-VM %s median (%.2fx the floor)" % (
              ms(med["inproc.coldstart"]),
              med["inproc.coldstart"] / med["inproc.floor"],
              ms(med["process.coldstart"]),
              med["process.coldstart"] / med["process.floor"]))
# 5 strategies x 2 sizes x 2 working sets: 20 DONE series per cache state,
# more than one CDF plot shows. prefetch has the host's work fields, the
# others are documents from before they existed.
ser, done = [], {}
strats = (("mmap", 3), ("prefetch", 1), ("eager", 2), ("populate", 2.5),
          ("uffd", 4))
for strat, f in strats:
    for cache in ("warm", "cold"):
        for ws in (16, 32):
            for mem in (64, 256):
                for ph, base in (("first_run", 0.5e6), ("first_progress", 0.6e6),
                                 ("done", 5e6 * f), ("request", 4e6 * f)):
                    v = samples(base * (2 if cache == "cold" else 1), 5)
                    s = {"name": "%s/mem%dM/ws%dM/%s/%s" % (strat, mem, ws, cache, ph),
                         "unit": "ns", "params": {"strategy": strat,
                         "mem_bytes": mem << 20, "ws_bytes": ws << 20,
                         "cache": cache, "phase": ph}, "samples_ns": v,
                         "faults_mean": 4096.0, "bytes_read_mean": 16777216.0}
                    if strat == "prefetch":
                        s.update(host_faults_mean=4100.0, major_faults_mean=3.0,
                                 disk_read_bytes_mean=16777216.0 if cache == "cold" else 0.0)
                    ser.append(s)
                    done[(strat, cache, ws, mem, ph)] = statistics.median(v)
for ws in (16, 32):
    for mem in (64, 256):
        ser.append({"name": "never-stopped/mem%dM/ws%dM/request" % (mem, ws),
                    "unit": "ns", "params": {"strategy": "never-stopped",
                    "mem_bytes": mem << 20, "ws_bytes": ws << 20,
                    "phase": "request"}, "samples_ns": samples(1e6, 5)})
for cache in ("warm", "cold"):
    best = min((done[(st, cache, 16, 64, "done")], st) for st, _ in strats)
    expect.append("  - mem 64 MiB, ws 16 MiB, %s: fastest %s, %s to DONE; "
                  "mmap first KVM_RUN %s" % (cache, best[1], ms(best[0]),
                  ms(done[("mmap", cache, 16, 64, "first_run")])))
doc("restore", ser, ratios=[{"mem_bytes": 64 << 20, "ws_bytes": 16 << 20,
    "cache": "warm", "prefetch_done_ns": 5e6, "prefetch_request_ns": 4e6,
    "mmap_done_ns": 15e6, "never_stopped_request_ns": 1e6,
    "prefetch_vs_never_stopped": 5.0, "prefetch_speedup_over_mmap": 3.0}])
rate = [{"name": "%s.w%d" % (m, w), "unit": "ns", "params": {"mode": m,
         "kind": "sustained", "workers": w}, "samples_ns": samples(2e6 * w),
         "vms_per_s": 500.0 * w + (100 if m == "process" else 0)}
        for m in ("in-process", "process") for w in (1, 2, 4)]
doc("rate", rate)
for r in rate:
    p = r["params"]
    expect.append("| %s | sustained | %d | %d | %s |" % (p["mode"],
                  p["workers"], r["vms_per_s"], ms(statistics.median(r["samples_ns"]))))
expect.append("- rate: peak 2000 VMs/s in-process (4 workers, sustained), "
              "2100 VMs/s process (4 workers, sustained)")
doc("density", [{"name": "fresh.pss_per_vm", "unit": "kib",
     "samples": [5000.0, 5100.0, 4900.0]}],
    density={m: {"vms": 3, "marginal_kib_per_vm": k, "vms_per_gib": 1048576 / k,
                 "stopped_by": "count",
                 "ksm": {"run": 0, "run_text": "off", "pages_shared": 0,
                         "pages_sharing": 0, "mergeable_vms": 0},
                 "curve": [{"vms": n, "rss_kib": 7000.0 * n, "pss_kib": k * n,
                            "uss_kib": 0.8 * k * n, "kernel_kib": 300.0 * n,
                            "rss_beyond_guest_kib": 1200.0 * n,
                            "pss_beyond_guest_kib": 700.0 * n,
                            "uss_beyond_guest_kib": 90.0 * n}
                           for n in (1, 2, 3)]}
             for m, k in (("fresh", 5000.0), ("clone", 900.0))})
expect.append("- density: 209.7 VMs per GiB fresh, 1165.1 VMs per GiB clone")
expect.append("- fresh: 3 VMs (stopped by count), marginal cost 5000 KiB per VM "
              "(PSS + kernel memory), 209.7 VMs per GiB; beyond guest memory "
              "per VM: RSS 1200, PSS 700, USS 90 KiB")
expect.append("- KSM with 3 clone VMs alive: run=0 (off), pages_shared=0, "
              "pages_sharing=0; guest memory not marked mergeable, so KSM "
              "cannot share it")
# peers: wall time (ns) and peak RSS (kib) series side by side
doc("peers", [{"name": "coldstart", "unit": "ns", "samples_ns": samples(2e6, 10)},
              {"name": "rss.coldstart", "unit": "kib", "samples": [1584.0] * 10},
              {"name": "qemu.microvm", "unit": "ns", "samples_ns": samples(30e6, 10)},
              {"name": "rss.qemu.microvm", "unit": "kib", "samples": [31680.0] * 10}],
    ratios={"qemu.microvm": {"wall_median": 15.0, "peak_rss_median": 20.0}})
expect.append("- peers: qemu.microvm / coldstart 15.00x the wall-time median, "
              "20.00x the peak-RSS median")
expect.append("- qemu.microvm / coldstart: 15.00x the wall-time median, "
              "20.00x the peak-RSS median")
# the suite's harness: tens of ns per sample
h = [48.0] * 19 + [51.0]
doc("suite", [{"name": "harness.per_sample", "unit": "ns", "samples_ns": h}],
    harness={"overhead_ns_p50": 48.0, "overhead_ns_p99": 51.0})
expect.append("| harness.per_sample | 20 | 48.0 ns | 48.0 ns | %s | 48.0 ns "
              "| 51.0 ns | 48.0 ns .. 48.0 ns |" % ms(p99(h)))
expect.append("- 2 series have MAD outliers (samples more than 3 robust standard "
              "deviations from the median): inproc.floor, process.floor; each "
              "is a warning in the JSON document")
open("%s/expect.txt" % d, "w").write("\n".join(expect) + "\n")
PY
docs="$dir/lifecycle.json $dir/restore.json $dir/rate.json $dir/density.json $dir/peers.json $dir/suite.json"

# Every file, with gnuplot where it is installed.
expect 0 "report written" report $docs --out "$dir/r"
for f in report.md series.csv cdf.csv restore.csv rate.csv density.csv; do
	if [ -s "$dir/r/$f" ]; then ok; else
		echo "FAIL: $f missing or empty"; failed=$((failed + 1)); fi
done
R=$dir/r/report.md
grep -q "| inproc.coldstart | 20 |" "$R" &&
	grep -q "Test CPU" "$R" &&
	grep -q "commit abc123" "$R" &&
	grep -q "a warning about restore" "$R" &&
	grep -q "| prefetch | warm | 64 | 16 |" "$R" &&
	grep -q "= 5.00x never-stopped" "$R" &&
	grep -q "VMs per GiB" "$R" &&
	ok || { echo "FAIL: report.md lacks a table, host or warning";
	failed=$((failed + 1)); }
# Every line the generator computed: summary, throughput, ratios, units,
# the collapsed outlier warnings.
while IFS= read -r line; do
	grep -qF -- "$line" "$R" && ok || fail "report.md lacks: $line"
done <"$dir/expect.txt"
# The summary comes before the documents; the rate section no longer
# shows one worker's 1/mean as a rate.
[ "$(grep -n '^## ' "$R" | head -2 | cut -d: -f2 | tr '\n' ' ')" = "## Summary ## lifecycle " ] &&
	! grep -q "1/mean" "$R" && ok || fail "summary placement or 1/mean column"
# The outlier warnings are one line; other warnings stay whole.
! grep -q "inproc.floor: 1 of 20 samples" "$R" &&
	grep -q "a warning about lifecycle" "$R" && ok || fail "outlier warnings"
# Restore work columns: the host's faults and storage reads where the
# document has them, "-" where it does not.
grep -q "| prefetch | cold | 64 | 16 | .* | 4096 | 16.0 | 4100 | 3 | 16.0 |$" "$R" &&
	grep -q "| mmap | cold | 64 | 16 | .* | 4096 | 16.0 | - | - | - |$" "$R" &&
	ok || fail "restore work columns in report.md"
[ "$(head -1 "$dir/r/restore.csv")" = "strategy,cache,mem_mib,ws_mib,n,first_run_ms,first_progress_ms,done_ms,done_p90_ms,request_ms,faults,mib_read,host_faults,major_faults,disk_mib_read" ] &&
	grep -q "^prefetch,warm,64,16,5,.*,4096,16.00,4100,3,0.00$" "$dir/r/restore.csv" &&
	grep -q "^prefetch,cold,64,16,5,.*,4096,16.00,4100,3,16.00$" "$dir/r/restore.csv" &&
	grep -q "^mmap,warm,64,16,5,.*,4096,16.00,,,$" "$dir/r/restore.csv" &&
	grep -q "^never-stopped,-,256,16," "$dir/r/restore.csv" &&
	grep -q "^in-process-sustained,4,2000.000," "$dir/r/rate.csv" &&
	grep -q "^clone,3," "$dir/r/density.csv" &&
	[ "$(grep -c ',inproc.floor,' "$dir/r/cdf.csv")" -eq 20 ] &&
	ok || fail "CSV contents"
if command -v gnuplot >/dev/null; then
	for p in cdf-lifecycle cdf-rate cdf-peers cdf-suite cdf-restore-done-warm-1 \
		cdf-restore-done-warm-2 cdf-restore-done-cold-1 \
		cdf-restore-done-cold-2 restore rate density; do
		if head -c 8 "$dir/r/$p.png" | grep -q PNG &&
		   grep -q "<svg" "$dir/r/$p.svg"; then ok; else
			echo "FAIL: plot $p.png/.svg missing or not PNG/SVG"
			failed=$((failed + 1)); fi
	done
	grep -q "](restore.png)" "$dir/r/report.md" && ok ||
		fail "report.md does not show restore.png"
	# 20 DONE series per cache state: two plots of 10, none skipped
	[ "$(grep -c ">[a-z]*/mem.*/warm/done<" "$dir/r/cdf-restore-done-warm-1.svg")" -eq 10 ] &&
		[ "$(grep -c ">[a-z]*/mem.*/warm/done<" "$dir/r/cdf-restore-done-warm-2.svg")" -eq 10 ] &&
		grep -q "](cdf-restore-done-warm-2.png)" "$dir/r/report.md" &&
		! grep -q "too many for" "$dir/r/report.md" &&
		ok || fail "restore's DONE CDFs are not split in two"
	# Latency only: no KiB series on a latency axis, no density CDF; the
	# axis unit suits the values (ns for tens of ns).
	grep -q "qemu.microvm" "$dir/r/cdf-peers.svg" &&
		! grep -q "rss" "$dir/r/cdf-peers.svg" &&
		grep -q "latency (ms, log scale)" "$dir/r/cdf-peers.svg" &&
		grep -q "latency (ns, log scale)" "$dir/r/cdf-suite.svg" &&
		[ ! -e "$dir/r/cdf-density.png" ] &&
		ok || fail "CDF plots mix units or pick the wrong axis unit"
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

# From an emulated host (sysinfo schema 2 with kvm.emulated): report.md
# says so in its first lines and on the host line; what the drivers left
# out (a document's "skipped", the suite's drivers that exited 77) is
# listed after the summary. Native results say nothing of the kind.
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
kvm = {"device": "/dev/kvm", "usable": True, "flavour": "svm",
       "api_version": 12, "reason": None, "modules": {},
       "emulated": "qemu-tcg-svm"}
for name in ("lifecycle", "peers", "suite"):
    x = json.load(open("%s/%s.json" % (d, name)))
    x["sysinfo"] = dict(x["sysinfo"], schema=2, kvm=kvm)
    if name == "peers":  # QEMU left out: coldstart's series alone
        x["series"] = [s for s in x["series"] if "qemu" not in s["name"]]
        x["ratios"] = {}
        x["skipped"] = [{"what": "qemu.microvm", "why":
                         "qemu-system-x86_64 is not installed"}]
    if name == "suite":
        x["drivers"] = [{"name": "lifecycle", "args": "", "status": "ok",
                         "exit": 0, "wall_s": 1.0},
                        {"name": "boot", "args": "", "status": "skipped",
                         "exit": 77, "wall_s": 0.1}]
    json.dump(x, open("%s/emu-%s.json" % (d, name), "w"))
PY
E=$dir/emu/report.md
expect 0 "report written" report "$dir/emu-lifecycle.json" "$dir/emu-peers.json" \
	"$dir/emu-suite.json" --out "$dir/emu" --format md
head -4 "$E" | grep -qF "> **Measured inside an emulated SVM host (QEMU TCG): timings are functional; compare only ratios within this run.**" &&
	ok || fail "report.md of emulated results does not say so first"
grep -q "^- host: .*, KVM svm (emulated host qemu-tcg-svm)$" "$E" && ok ||
	fail "report.md's host line lacks the emulated host"
grep -qxF -- "- peers: qemu.microvm: qemu-system-x86_64 is not installed" "$E" &&
	grep -qxF -- "- suite: bench boot: this host cannot run it (exit 77)" "$E" &&
	! grep -q "bench lifecycle: this host" "$E" &&
	grep -Eq "^- peers: coldstart [0-9.]+ ms median, no peer measured \(see Left out\)$" "$E" &&
	ok || fail "report.md does not list what was left out"
[ "$(grep '^## ' "$E" | head -3 | tr '\n' ' ')" = "## Summary ## Left out ## lifecycle " ] &&
	ok || fail "the Left out section is not after the summary"
expect 0 "report written" report "$dir/emu-lifecycle.json" "$dir/peers.json" \
	--out "$dir/mixed" --format md
head -4 "$dir/mixed/report.md" | grep -qF "functional timings only: lifecycle; the others are native" &&
	ok || fail "report.md of mixed results does not name the emulated ones"
! grep -qi "emulated" "$R" && ! grep -q "^## Left out" "$R" &&
	ok || fail "report.md of native results mentions emulation or left-out parts"

# report.plot_names_stay_in_out: plot file names come from the inputs
# (a series' phase names its CDF group); a '/' or '..' there used to
# reach outside --out once a directory of the made-up name existed.
python3 - "$dir" <<'PY'
import json, sys
json.dump({"schema": 1, "bench": "lifecycle", "series": [{"name": "x",
           "unit": "ns", "params": {"phase": "../../../esc"},
           "samples_ns": [1000000, 1100000, 1200000, 1300000, 1400000]}]},
          open(sys.argv[1] + "/hostile.json", "w"))
PY
mkdir -p "$dir/hp/out/cdf-lifecycle-.."
expect 0 "report written" report "$dir/hostile.json" --out "$dir/hp/out"
if ls "$dir/hp" "$dir" | grep -q '^esc'; then
	fail "report wrote a plot outside --out: $(ls "$dir/hp" "$dir" | grep '^esc')"
else
	ok
fi
if command -v gnuplot >/dev/null; then
	ls "$dir/hp/out" | grep -qx 'cdf-lifecycle-..-..-..-esc.png' &&
		grep -qF '(cdf-lifecycle-..-..-..-esc.png)' "$dir/hp/out/report.md" &&
		ok || fail "the hostile group's plot is not in --out: $(ls "$dir/hp/out")"
fi

# Bad inputs: usage errors naming the file and the problem; nothing written.
echo 'this is { not json' >"$dir/garbage.json"
echo '{"schema": 2, "bench": "lifecycle", "series": []}' >"$dir/schema2.json"
echo '{"schema": 1, "bench": "lifecycle", "series": []}' >"$dir/noseries.json"
echo '[1, 2]' >"$dir/array.json"
expect 2 "garbage.json: not a readable JSON" report "$dir/garbage.json" --out "$dir/bad"
expect 2 "schema2.json: result schema version 2 is not supported" report "$dir/schema2.json" --out "$dir/bad"
expect 2 "noseries.json" report "$dir/noseries.json" --out "$dir/bad"
expect 2 "array.json: not a coldstart result" report "$dir/array.json" --out "$dir/bad"
expect 2 "missing.json: not a readable" report "$dir/lifecycle.json" "$dir/missing.json" --out "$dir/bad"
mkfifo "$dir/fifo.json"
expect 2 "fifo.json: not a readable JSON document: .*fifo.json is not a regular file" report "$dir/fifo.json" --out "$dir/bad"
[ ! -e "$dir/bad" ] && ok || fail "bad input wrote files"
expect 2 "no result documents" report
expect 2 "--format" report "$dir/lifecycle.json" --format jpeg
expect 0 "Usage: coldstart report" report --help
finish
