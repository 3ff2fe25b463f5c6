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
guest = {"name": "probe", "bytes": 1836, "sha256": "ab" * 32}
def doc(bench, series, warnings=(), config=None, **extra):
    x = {"schema": 1, "bench": bench, "coldstart": {"version": "0.1.0",
         "commit": "abc123"}, "sysinfo": sysinfo,
         "config": config or {"guest": "probe"}, "guest": guest,
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
# every driver's Summary line names its guest, as rate's does
expect.append("- lifecycle (probe `abababab`): in-process %s median (%.2fx the floor), "
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
expect.append("- restore (probe `abababab`), medians from restore start:")
for cache in ("warm", "cold"):
    best = min((done[(st, cache, 16, 64, "done")], st) for st, _ in strats)
    expect.append("  - mem 64 MiB, ws 16 MiB, %s: fastest %s, %s to DONE; "
                  "mmap first KVM_RUN %s" % (cache, best[1], ms(best[0]),
                  ms(done[("mmap", cache, 16, 64, "first_run")])))
# the DONE overview: a column per cache state and size, in ms
cells = [(c, ws, mem) for c in ("warm", "cold") for ws in (16, 32)
         for mem in (64, 256)]
expect.append("| strategy | " + " | ".join("%s %d/%d" % (c, mem, ws)
              for c, ws, mem in cells) + " |")
expect.append("| prefetch | " + " | ".join("%.2f" % (done[("prefetch", c, ws,
              mem, "done")] / 1e6) for c, ws, mem in cells) + " |")
doc("restore", ser, ["eager/mem64M/ws16M/warm/done: 1 of 5 samples are "
    "outliers (more than 3 robust standard deviations from the median)"],
    ratios=[{"mem_bytes": 64 << 20, "ws_bytes": 16 << 20,
    "cache": "warm", "prefetch_done_ns": 5e6, "prefetch_request_ns": 4e6,
    "mmap_done_ns": 15e6, "never_stopped_request_ns": 1e6,
    "prefetch_vs_never_stopped": 5.0, "prefetch_speedup_over_mmap": 3.0}])
rate = [{"name": "%s.w%d" % (m, w), "unit": "ns", "params": {"mode": m,
         "kind": "sustained", "workers": w}, "samples_ns": samples(2e6 * w),
         "vms_per_s": 500.0 * w + (100 if m == "process" else 0)}
        for m in ("in-process", "process") for w in (1, 2, 4)]
# a burst of 8 in two rounds: 8 VMs in 8 ms, then in 16 ms
burst = {"name": "process.burst8", "unit": "ns", "params": {"mode": "process",
         "kind": "burst", "workers": 8}, "samples_ns": samples(3e6, 16),
         "vms_per_s": 16 / 24e-3, "makespan_ns": [8000000, 16000000]}
doc("rate", rate + [burst])
# every per-VM latency column in one unit (ms), the rates beside
for r in rate:
    p = r["params"]
    expect.append("| %s | sustained | %d | %d | %.3f |" % (p["mode"],
                  p["workers"], r["vms_per_s"],
                  statistics.median(r["samples_ns"]) / 1e6))
# sustained and burst rates on lines of their own
# (each line names the guest: its name and the start of its sha256)
expect.append("- rate (probe `abababab`), sustained: peak 2000 VMs/s "
              "in-process (4 workers), 2100 VMs/s process (4 workers)")
expect.append("- rate (probe `abababab`), burst: 667 VMs/s process "
              "(8 started at once)")
# documents from before the VMs/s series get them: a burst's per round
# (1000 and 500 VMs/s), a sustained level's one overall rate
expect.append("| process.burst8.vms_per_s | 2 | 750 | 950 | 995 | "
              "500 | 1000 | 500 .. 1000 * |")
expect.append("| in-process.w4.vms_per_s | 1 | 2000 | 2000 |")
dens_sys = dict(sysinfo, memory={"total_kib": 16777216})  # a 16 GiB host
doc("density", [{"name": "fresh.pss_per_vm", "unit": "kib",
     "samples": [5000.0, 5100.0, 4900.0]}],
    config={"guest": "probe", "init_bytes": 4 << 20, "ws_bytes": 2 << 20},
    sysinfo=dens_sys,
    density={m: {"vms": 3, "marginal_kib_per_vm": k, "vms_per_gib": 1048576 / k,
                 "fixed_kib": fixed,
                 "stopped_by": "count",
                 "ksm": {"run": 0, "run_text": "off", "pages_shared": 0,
                         "pages_sharing": 0, "mergeable_vms": 0},
                 "curve": [{"vms": n, "rss_kib": 7000.0 * n, "pss_kib": k * n,
                            "uss_kib": 0.8 * k * n, "kernel_kib": 300.0 * n,
                            "rss_beyond_guest_kib": 1200.0 * n,
                            "pss_beyond_guest_kib": 700.0 * n,
                            "uss_beyond_guest_kib": 90.0 * n,
                            "cost_kib": fixed + k * n + (n == 2) * 100}
                           for n in (1, 2, 3)]}
             for m, k, fixed in (("fresh", 5000.0, 600.0),
                                 ("clone", 900.0, 4000.0))})
# Capacity: floor((16 GiB - max(1 GiB, 10 %) - fixed) / marginal) VMs per
# host; the fresh ones filled at process-per-VM's best sustained rate
reserve = max(1048576, 16777216 / 10)
vms = {m: math.floor((16777216 - reserve - f) / k)
       for m, k, f in (("fresh", 5000.0, 600.0), ("clone", 900.0, 4000.0))}
expect.append("| probe `abababab` | fresh | 5000 | 600 | %d | memory | "
              "2100 VMs/s (process, 4 workers) | %.1f s |" % (vms["fresh"],
              vms["fresh"] / 2100))
expect.append("| probe `abababab` | clone | 900 | 4000 | %d | memory | - "
              "(bench rate starts fresh VMs only) | - |" % vms["clone"])
expect.append("- Host `testhost`: MemTotal 16.0 GiB, 2 CPUs (the document's "
              "sysinfo); a reserve of max(1 GiB, 10 % of MemTotal) = 1.60 GiB "
              "stays with the host's kernel, services and page cache.")
expect.append("- The guests as measured: 4 MiB of guest memory touched before "
              "READY and 2 MiB read after it; a guest that touches more costs "
              "more per VM.")
expect.append("- Memory only: no per-VM CPU figure was measured (the held VMs "
              "idle: halted or paused vCPUs), so the 2 CPUs do not bound these "
              "counts; guests that compute are bound by CPU too.")
# VMs per GiB per VM after the first: 1 GiB over what it added (5100 and
# 4900 KiB for fresh), in a table of its own unit
expect.append("| fresh.vms_per_gib | 2 | %.1f |" % statistics.median(
              [1048576 / 5100, 1048576 / 4900]))
expect.append("- density (probe `abababab`): 209.7 VMs per GiB fresh, "
              "1165.1 VMs per GiB clone")
expect.append("- fresh: 3 VMs (stopped by count), marginal cost 5000 KiB per VM "
              "(PSS + kernel memory), 209.7 VMs per GiB; beyond guest memory "
              "per VM: RSS 1200, PSS 700, USS 90 KiB")
expect.append("- KSM with 3 clone VMs alive: run=0 (off), pages_shared=0, "
              "pages_sharing=0; guest memory not marked mergeable, so KSM "
              "cannot share it")
# peers: wall time (ns) and peak RSS (kib) series side by side
doc("peers", config={"guest": "exit at once"}, series=[
              {"name": "coldstart", "unit": "ns", "samples_ns": samples(2e6, 10)},
              {"name": "rss.coldstart", "unit": "kib", "samples": [1584.0] * 10},
              {"name": "qemu.microvm", "unit": "ns", "samples_ns": samples(30e6, 10)},
              {"name": "rss.qemu.microvm", "unit": "kib", "samples": [31680.0] * 10}],
    ratios={"qemu.microvm": {"wall_median": 15.0, "peak_rss_median": 20.0}})
expect.append("- peers (probe `abababab`): qemu.microvm / coldstart 15.00x "
              "the wall-time median, 20.00x the peak-RSS median")
expect.append("- qemu.microvm / coldstart: 15.00x the wall-time median, "
              "20.00x the peak-RSS median")
# the suite's harness: tens of ns per sample
h = [48.0] * 19 + [51.0]
doc("suite", [{"name": "harness.per_sample", "unit": "ns", "samples_ns": h}],
    config={"level": "quick"},
    harness={"overhead_ns_p50": 48.0, "overhead_ns_p99": 51.0})
# a table's columns share the unit its header names
expect.append("| series | n | median ns | p90 ns | p99 ns | min ns | max ns | "
              "95% CI of median, ns |")
expect.append("| harness.per_sample | 20 | 48.0 | 48.0 | %.1f | 48.0 "
              "| 51.0 | 48.0 .. 48.0 |" % p99(h))
# memory in KiB or MiB as the column's median suits, never "kib" or
# e-notation: peers' 1584 and 31680 KiB read as MiB
expect.append("| series | n | median MiB | p90 MiB | p99 MiB | min MiB | max MiB | "
              "95% CI of median, MiB |")
expect.append("| rss.coldstart | 10 | 1.55 | 1.55 | 1.55 | 1.55 | 1.55 | "
              "1.55 .. 1.55 |")
expect.append("| rss.qemu.microvm | 10 | 30.94 |")
# a caveat under a table with fewer than 10 samples in a row
expect.append("\\* n=2..3: with fewer than 10 samples the 95 % interval of the "
              "median spans about min..max; take it with care.")
# outliers judged only from 20 samples
expect.append("- MAD outliers not judged in 1 series with fewer than 20 "
              "samples, too few to tell an outlier from the spread (the JSON "
              "document lists them)")
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
	# the help names every CSV file the report writes (it once left
	# out pool.csv: the list was kept by hand)
	case $f in *.csv)
		"$COLDSTART" help report | tr '\n' ' ' |
			grep -q "[ (]$f[,)]" && ok ||
			fail "help report does not name $f" ;;
	esac
done
"$COLDSTART" help report | tr '\n' ' ' | grep -q "pool.csv[,)].* and gnuplot plots" && ok ||
	fail "help report does not name pool.csv"
R=$dir/r/report.md
grep -q "| inproc.coldstart | 20 |" "$R" &&
	grep -q "Test CPU" "$R" &&
	grep -q "commit abc123" "$R" &&
	grep -q "a warning about restore" "$R" &&
	grep -q "| prefetch | warm | 256 | 32 |" "$R" &&
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
[ "$(grep -n '^## ' "$R" | head -2 | cut -d: -f2 | tr '\n' ' ')" = "## Summary ## Capacity " ] &&
	! grep -q "1/mean" "$R" && ok || fail "summary placement or 1/mean column"
# The outlier warnings are one line; other warnings stay whole.
! grep -q "inproc.floor: 1 of 20 samples" "$R" &&
	grep -q "a warning about lifecycle" "$R" && ok || fail "outlier warnings"
# Restore work columns at the largest cell only (every cell is in
# restore.csv): the host's faults and storage reads where the document has
# them, "-" where it does not; no row per restore series.
grep -q "| prefetch | cold | 256 | 32 | .* | 4096 | 16.0 | 4100 | 3 | 16.0 |$" "$R" &&
	grep -q "| mmap | cold | 256 | 32 | .* | 4096 | 16.0 | - | - | - |$" "$R" &&
	! grep -q "| prefetch | cold | 64 | 16 |" "$R" &&
	! grep -q "^| [a-z]*/mem" "$R" &&
	grep -q "^All 164 restore series .* are in series.csv" "$R" &&
	ok || fail "restore work columns in report.md"
# Units a reader knows, never e-notation; no guest line where the guest
# object does not describe what ran (peers' firmware, the suite).
! grep -qw "kib" "$R" && ! grep -Eq "[0-9]e[+-][0-9]" "$R" &&
	[ "$(sed -n '/^## peers/,/^## rate/p' "$R" | grep -c '^Guest:')" -eq 0 ] &&
	[ "$(sed -n '/^## suite/,$p' "$R" | grep -c '^Guest:')" -eq 0 ] &&
	[ "$(sed -n '/^## lifecycle/,/^## restore/p' "$R" | grep -c '^Guest: probe')" -eq 1 ] &&
	ok || fail "units or guest lines in report.md"
# The capacity section comes right after the summary; VMs/GiB and VMs/s
# are bigger-is-better series (series.csv's last column).
[ "$(grep '^## ' "$R" | head -3 | tr '\n' ' ')" = "## Summary ## Capacity ## lifecycle " ] &&
	grep -q "^density,density,fresh.vms_per_gib,vms_per_gib,2,.*,higher$" "$dir/r/series.csv" &&
	grep -q "^rate,rate,process.burst8.vms_per_s,vms_per_s,2,.*,higher$" "$dir/r/series.csv" &&
	grep -q "^lifecycle,lifecycle,inproc.coldstart,ms,20,.*,lower$" "$dir/r/series.csv" &&
	ok || fail "capacity section placement or the series' direction"
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
	for p in cdf-lifecycle cdf-rate cdf-peers cdf-suite \
		cdf-restore-done-warm-mem64M cdf-restore-done-cold-mem256M \
		restore rate density; do
		if head -c 8 "$dir/r/$p.png" | grep -q PNG &&
		   grep -q "<svg" "$dir/r/$p.svg"; then ok; else
			echo "FAIL: plot $p.png/.svg missing or not PNG/SVG"
			failed=$((failed + 1)); fi
	done
	grep -q "](restore.png)" "$dir/r/report.md" && ok ||
		fail "report.md does not show restore.png"
	# 20 DONE series per cache state: a plot per memory size, each with
	# its 10 (5 strategies x 2 working sets), none skipped; a strategy
	# keeps its colour in every plot, a working set its dash pattern
	for c in warm cold; do for m in 64 256; do
		f=$dir/r/cdf-restore-done-$c-mem${m}M.svg
		[ "$(grep -c ">[a-z]*/mem${m}M/ws[0-9]*M/$c/done<" "$f")" -eq 10 ] &&
			grep -q "](cdf-restore-done-$c-mem${m}M.png)" "$dir/r/report.md" &&
			ok || fail "restore's DONE CDF $c mem ${m}M"
	done; done
	[ "$(grep -o "stroke='[^']*'" "$dir/r/cdf-restore-done-warm-mem64M.svg" | sort -u | grep -c "rgb(")" -ge 5 ] &&
		! grep -q "too many for" "$dir/r/report.md" &&
		ok || fail "restore's DONE CDFs do not tell strategies apart by colour"
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

# The user's own Linux guest (bench boot --kernel, restore --snapshot,
# density --kernel) and a pool: each Summary line names the guest from the
# document's "guest" object; a Linux snapshot's working set is not known
# (absent), so no table or plot shows it as 0; the clones' snapshot command
# line is shown where it differs from the fresh VMs'. Documents from before
# the guest object name none (and do not crash the report).
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
base = json.load(open("%s/lifecycle.json" % d))
linux = {"name": "linux", "kernel": {"path": "/boot/vmlinuz", "bytes": 4096,
         "sha256": "cd" * 32}, "initrd": None}
def own(bench, series, guest=linux, config=None, out="own", **extra):
    x = dict(base, bench=bench, series=series, warnings=[],
             config=config or {"guest": guest and guest["name"]}, **extra)
    x.pop("memory", None)
    if guest:
        x["guest"] = guest
    else:
        x.pop("guest")
    json.dump(x, open("%s/%s-%s.json" % (d, out, bench), "w"))
own("boot", [{"name": "total", "unit": "ns", "samples_ns": [3e6, 3.2e6]}])
ser = []
for strat, f in (("mmap", 1), ("eager", 2)):
    for mem in (32, 64):
        for ph, t in (("first_run", 1e6), ("first_progress", 2e6),
                      ("done", 5e6 * f), ("request", 4e6 * f)):
            ser.append({"name": "%s/snapshot-linux/mem%dM/warm/%s" % (
                        strat, mem, ph), "unit": "ns", "params": {
                        "strategy": strat, "mem_bytes": mem << 20,
                        "cache": "warm", "phase": ph},
                        "samples_ns": [t, t * 1.1, t * 0.9]})
own("restore", ser, config={"guest": "linux", "snapshot": "/snap"})
own("density", [{"name": "fresh.pss_per_vm", "unit": "kib",
     "samples": [9000.0, 9100.0]}],
    config={"guest": "linux", "kernel": "/boot/vmlinuz", "initrd": None,
            "cmdline": "console=ttyS0", "clone_cmdline":
            "console=ttyS0 coldstart.done=mmio", "mem_bytes": 32 << 20,
            "vcpus": 1},
    density={m: {"vms": 2, "marginal_kib_per_vm": k,
                 "vms_per_gib": 1048576 / k, "fixed_kib": 100.0,
                 "stopped_by": "count", "curve": [{"vms": n,
                 "rss_kib": k * n, "pss_kib": k * n, "uss_kib": k * n,
                 "kernel_kib": 10.0 * n, "cost_kib": 100 + k * n}
                 for n in (1, 2)]}
             for m, k in (("fresh", 8192.0), ("clone", 2048.0))})
pool = {"hit_ratio": 0.75, "offered_rate": 20.0, "failed": 0,
        "refill_vms_per_s": 30.0, "stats": {"requests": 40, "hits": 30,
        "misses": 10, "waits": 0, "idle_vm_s": 2.5, "refill_cpu_s": 0.1},
        "memory": {"rss_kib_per_vm": 2000, "pss_kib_per_vm": 1500},
        "occupancy": [[0.0, 4, 0, 4, 0], [1.0, 3, 1, 4, 20]]}
pser = [{"name": "arrival_to_first_run.hit", "unit": "ns",
         "samples_ns": [2e5] * 3},
        {"name": "arrival_to_done.all", "unit": "ns",
         "samples_ns": [1e6] * 3}]
own("pool", pser, guest=base["guest"],
    config={"guest": "probe", "arrivals": "poisson"}, pool=pool)
# from before the guest object: a lifecycle and a pool document
own("lifecycle", base["series"], guest=None, out="old")
own("pool", pser, guest=None, config={"arrivals": "poisson"}, pool=pool,
    out="old")
PY
expect 0 "report written" report "$dir/own-boot.json" "$dir/own-restore.json" \
	"$dir/own-density.json" "$dir/own-pool.json" --out "$dir/own"
O=$dir/own/report.md
grep -qF -- '- boot (linux `cdcdcdcd`): total (process start -> teardown done) 3.100 ms median' "$O" &&
	grep -qF -- '- restore (linux `cdcdcdcd`), medians from restore start:' "$O" &&
	grep -qF -- '  - mem 32 MiB, warm: fastest mmap, 5.000 ms to DONE' "$O" &&
	grep -qF -- '- density (linux `cdcdcdcd`): 128.0 VMs per GiB fresh, 512.0 VMs per GiB clone' "$O" &&
	grep -qF -- '- pool (probe `abababab`): 75.0 % hits at 20.0 requests/s (poisson)' "$O" &&
	ok || fail "the Summary lines do not name their guest: $(sed -n '/^## Summary/,/^## Cap/p' "$O")"
# no "0" working set: "-" in the work table, the overview's columns and
# the sizes by memory alone (not "32/-", a pair made for the probe's
# mem/ws), an empty ws_mib in restore.csv (not 0, a size)
grep -qF 'per page-cache state and memory size:' "$O" &&
	grep -qF '| strategy | warm 32 MiB | warm 64 MiB |' "$O" &&
	grep -qF '| mmap | warm | 64 | - | 1.000 | 5.000 |' "$O" &&
	! grep -q '| 64 | 0 |\|/0 |\|/- |\|ws 0 MiB' "$O" &&
	ok || fail "a Linux snapshot's unknown working set in report.md: $(grep -A3 '^restore -> DONE' "$O")"
grep -q '^mmap,warm,32,,3,1.0000,2.0000,5.0000,' "$dir/own/restore.csv" &&
	grep -q '^eager,warm,64,,3,' "$dir/own/restore.csv" &&
	! grep -q '^[^,]*,[^,]*,[0-9]*,0,' "$dir/own/restore.csv" &&
	ok || fail "a Linux snapshot's unknown working set in restore.csv: $(cat "$dir/own/restore.csv")"
grep -qF 'The clones'"'"' snapshot was taken with another command line than the fresh VMs boot with: `console=ttyS0 coldstart.done=mmio` (fresh: `console=ttyS0`).' "$O" &&
	grep -qF 'cmdline `console=ttyS0` (clones'"'"' snapshot: `console=ttyS0 coldstart.done=mmio`), 32 MiB' "$O" &&
	ok || fail "report.md does not show the clones' snapshot command line"
if command -v gnuplot >/dev/null; then
	# the x axis: "32 MiB" for a Linux snapshot, MEM / WS for the probe's;
	# each strategy's point at both sizes (its legend's is a third),
	# found by the empty ws_mib
	grep -q '>32 MiB<' "$dir/own/restore.svg" &&
		[ "$(grep -o "#gpPt0'" "$dir/own/restore.svg" | wc -l)" -eq 3 ] &&
		[ "$(grep -o "#gpPt1'" "$dir/own/restore.svg" | wc -l)" -eq 3 ] &&
		! grep -q '>32 / 0<' "$dir/own/restore.svg" &&
		! grep -q 'never stopped' "$dir/own/restore.svg" &&
		grep -q '](restore.png)' "$O" &&
		grep -q '>64 / 16<' "$dir/r/restore.svg" &&
		grep -q 'never stopped' "$dir/r/restore.svg" &&
		ok || fail "the restore plot's sizes"
fi
expect 0 "report written" report "$dir/old-lifecycle.json" "$dir/old-pool.json" \
	--out "$dir/old"
grep -q '^- lifecycle: in-process ' "$dir/old/report.md" &&
	grep -q '^- pool: 75.0 % hits' "$dir/old/report.md" &&
	ok || fail "documents without a guest object"

# --format md: no plots; the default output directory is the first input's.
expect 0 "" report "$dir/lifecycle.json" --format md -q
[ -s "$dir/report.md" ] && [ ! -e "$dir/cdf-lifecycle.png" ] &&
	ok || fail "--format md"

# One worker is "1 worker", in the Summary and in the Capacity table.
mkdir "$dir/one"
python3 - "$dir/rate.json" "$dir/one/rate.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["series"] = [s for s in d["series"] if s["params"].get("workers") == 1 and s["params"]["kind"] == "sustained"]
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "" report "$dir/one/rate.json" "$dir/density.json" --format md -q --out "$dir/one/r"
grep -q "sustained: peak .* in-process (1 worker), .* process (1 worker)$" "$dir/one/r/report.md" &&
	grep -q "(process, 1 worker) |" "$dir/one/r/report.md" &&
	ok || fail "one worker is not said so: $(grep -n 'worker' "$dir/one/r/report.md" | head -3)"

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
	grep -Eq "^- peers \(probe \`abababab\`\): coldstart [0-9.]+ ms median, no peer measured \(see Left out\)$" "$E" &&
	ok || fail "report.md does not list what was left out"
[ "$(grep '^## ' "$E" | head -3 | tr '\n' ' ')" = "## Summary ## Left out ## lifecycle " ] &&
	ok || fail "the Left out section is not after the summary"
expect 0 "report written" report "$dir/emu-lifecycle.json" "$dir/peers.json" \
	--out "$dir/mixed" --format md
head -4 "$dir/mixed/report.md" | grep -qF "functional timings only: lifecycle; the others are native" &&
	ok || fail "report.md of mixed results does not name the emulated ones"
! grep -qi "emulated" "$R" && ! grep -q "^## Left out" "$R" &&
	ok || fail "report.md of native results mentions emulation or left-out parts"

# VMs per GiB compare bigger-is-better: fewer per GiB is a regression,
# more an improvement.
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
base = json.load(open("%s/density.json" % d))
for name, v in (("gib-base", 200.0), ("gib-less", 150.0), ("gib-more", 260.0)):
    x = dict(base, series=[{"name": "fresh.vms_per_gib", "unit": "vms_per_gib",
             "better": "higher", "samples": [v + k for k in range(10)]}],
             warnings=[])
    json.dump(x, open("%s/%s.json" % (d, name), "w"))
PY
expect 1 'REGRESSION in 1 of 1 series: fresh\.vms_per_gib' compare "$dir/gib-base.json" "$dir/gib-less.json"
expect 0 'improved' compare "$dir/gib-base.json" "$dir/gib-more.json"

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

# report.outputs_never_follow_links: gnuplot drew each plot into
# OUT/.NAME.tmp, a name anyone who can write to OUT could plant a symlink
# at, and the link was written through (a file outside OUT clobbered) and
# renamed into place. Every output is now a new file under a random name,
# written through its descriptor and renamed; a link planted at a final
# name is replaced, never written through.
if command -v gnuplot >/dev/null; then
	mkdir -p "$dir/sl/out"
	echo victim >"$dir/sl/victim"
	for p in cdf-lifecycle.png cdf-lifecycle.svg report.md; do
		ln -s ../victim "$dir/sl/out/.$p.tmp"
	done
	ln -s ../victim "$dir/sl/out/series.csv"
	mask=$(umask)
	umask 027
	expect 0 "report written" report "$dir/lifecycle.json" --out "$dir/sl/out"
	umask "$mask"
	[ "$(cat "$dir/sl/victim")" = victim ] && ok ||
		fail "report wrote through a planted link: $(head -c 40 "$dir/sl/victim" | tr -dc '[:print:]')"
	head -c 8 "$dir/sl/out/cdf-lifecycle.png" | grep -q PNG &&
		grep -q "<svg" "$dir/sl/out/cdf-lifecycle.svg" &&
		[ ! -L "$dir/sl/out/cdf-lifecycle.png" ] &&
		[ ! -L "$dir/sl/out/series.csv" ] &&
		grep -q "^label,bench,series," "$dir/sl/out/series.csv" &&
		grep -q "inproc.coldstart" "$dir/sl/out/report.md" &&
		ok || fail "report's outputs beside planted links: $(ls -l "$dir/sl/out")"
	# the umask, not a chmod, gives the mode: 0666 less 027
	[ "$(stat -c %a "$dir/sl/out/report.md" "$dir/sl/out/cdf-lifecycle.png" |
		sort -u)" = 640 ] && ok ||
		fail "outputs' modes: $(stat -c '%n %a' "$dir/sl/out"/*)"
	[ "$(ls -A "$dir/sl/out" | grep -c '^\.')" -eq 3 ] && ok ||
		fail "temporaries left in --out: $(ls -A "$dir/sl/out")"
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
expect 0 "unless it already holds a report.md" report --help
# Data loss: without --out a report goes next to its first input, but never
# over a report already there (a suite's, of every driver): a copy of the
# committed reference results keeps report.md, cdf.csv and series.csv
# byte for byte, and nothing else appears or changes.
REF=$(dirname "$0")/../../results/reference-pvm-2core
cp -r "$REF" "$dir/ref"
(cd "$dir/ref" && sha256sum -- * | sort) >"$dir/ref.sums"
expect 2 "report: $dir/ref already holds a report \(report.md, CSV, plots\) that this one would replace; nothing written. Give --out DIR" report "$dir/ref/lifecycle.json"
expect 2 "already holds a report" report "$dir/ref/lifecycle.json" --format md -q
(cd "$dir/ref" && sha256sum -- * | sort) | cmp -s - "$dir/ref.sums" &&
	ok || fail "report without --out changed the reference results"
for f in report.md cdf.csv series.csv; do
	cmp -s "$REF/$f" "$dir/ref/$f" && ok || fail "$f was replaced"
done
# --out names the destination: a new one, or the same one on purpose.
expect 0 "report written to $dir/ref-life/" report "$dir/ref/lifecycle.json" --out "$dir/ref-life" --format md
grep -q "lifecycle" "$dir/ref-life/report.md" && ok || fail "report --out wrote no report"
expect 0 "report written" report "$dir/ref/lifecycle.json" --out "$dir/ref" --format md
cmp -s "$REF/report.md" "$dir/ref/report.md" && fail "--out to the input's own directory did not replace the report" || ok
# Results directories: one stands for its documents (its own report.md
# is not replaced without --out); several make the cross-host report.
rm -rf "$dir/hosts" && mkdir -p "$dir/hosts"
cp -r "$REF" "$dir/hosts/a" && cp -r "$REF" "$dir/hosts/b"
python3 - "$dir/hosts/b" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f))
    if "sysinfo" in d:
        d["sysinfo"]["hostname"] = "host-b"
        json.dump(d, open(f, "w"))
PY
expect 2 'already holds a report' report "$dir/hosts/a"
expect 0 'report written' report "$dir/hosts/a" --out "$dir/hosts/one"
grep -q '^## Capacity' "$dir/hosts/one/report.md" && grep -q '`density.json`' "$dir/hosts/one/report.md" &&
	ok || fail "report DIR reports every document in DIR"
expect 2 'give --out DIR' report "$dir/hosts/a" "$dir/hosts/b"
expect 0 'cross-host report written' report "$dir/hosts/a" "$dir/hosts/b" --out "$dir/hosts/fleet"
grep -q '^| host-b | ' "$dir/hosts/fleet/report.md" && grep -q '^| vm | ' "$dir/hosts/fleet/report.md" &&
	ok || fail "the cross-host report has a row per host"
! grep -q ' kib ' "$dir/hosts/fleet/report.md" && grep -q ' KiB |' "$dir/hosts/fleet/report.md" &&
	ok || fail "the cross-host report writes KiB"
expect 2 'not both' report "$dir/hosts/a" "$dir/hosts/b/lifecycle.json" --out "$dir/hosts/x"
mkdir -p "$dir/hosts/empty"
expect 2 'no result documents in it' report "$dir/hosts/empty" --out "$dir/hosts/y"
# A broken document in the directory is named with its JSON error, not
# left out of the report without a word (exit 0 once).
mkdir -p "$dir/hosts/broken"
cp "$dir/hosts/a/lifecycle.json" "$dir/hosts/broken/"
echo '{"schema": 1, "bench": "boot", oops' >"$dir/hosts/broken/boot.json"
expect 2 "report: $dir/hosts/broken: $dir/hosts/broken/boot.json is not JSON: .* \\(line 1, column [0-9]+\\)$" \
	report "$dir/hosts/broken" --out "$dir/hosts/z"
[ ! -e "$dir/hosts/z/report.md" ] && ok || fail "a report was written past a broken document"
# peers' Linux guest on its root disk: its own series names, and the read
# throughput ratio beside wall time and RSS in the Summary and section.
mkdir -p "$dir/rootfs"
python3 - "$dir/rootfs/peers.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1].replace("rootfs/peers.json", "peers.json")))
def s(name, unit, v):
    return {"name": name, "unit": unit, ("samples_ns" if unit == "ns" else "samples"): [v] * 5}
d["config"] = {"guest": "Linux, root on a read-only virtio-mmio disk: boot, one command, reboot"}
d["series"] = [s("rootfs.coldstart", "ns", 4e9), s("rss.rootfs.coldstart", "kib", 90000.0),
               s("read_mib_s.coldstart", "mib_per_s", 20.0), s("rootfs.qemu.microvm", "ns", 8e9),
               s("rss.rootfs.qemu.microvm", "kib", 180000.0), s("read_mib_s.qemu.microvm", "mib_per_s", 16.0)]
d["ratios"] = {"rootfs.qemu.microvm": {"wall_median": 2.0, "peak_rss_median": 2.0, "read_mib_s_median": 0.8}}
json.dump(d, open(sys.argv[1], "w"))
PY
expect 0 "report written" report "$dir/rootfs/peers.json" --out "$dir/rootfs/r"
grep -qF -- "rootfs.qemu.microvm / coldstart 2.00x the wall-time median, 2.00x the peak-RSS median, 0.80x the read-throughput median" "$dir/rootfs/r/report.md" &&
	grep -qF -- "- rootfs.qemu.microvm / coldstart: 2.00x the wall-time median, 2.00x the peak-RSS median, 0.80x the read-throughput median" "$dir/rootfs/r/report.md" &&
	grep -q "^| read_mib_s.qemu.microvm | 5 | 16.00 |" "$dir/rootfs/r/report.md" &&
	grep -q "| series | n | median MiB/s |" "$dir/rootfs/r/report.md" &&
	ok || fail "the report lacks the rootfs guest's read-throughput ratio"
finish
