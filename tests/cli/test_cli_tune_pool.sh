#!/bin/bash
# `coldstart tune pool` as a black box, no KVM needed: a results directory
# is written here by hand (pool.json with known hit and miss samples,
# density.json, a sysinfo), then the recommendation against the SLO, the
# cheapest for a trivial SLO, an impossible SLO (exit 1), refusals (exit
# 2 naming the file), the emulated-host warning, reproducibility with a
# seed, and the `coldstart pool` command line.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch

# gen DIR [key=value...]: keys emulated (a label; default null), mem
# (0: no pool.memory, the memory comes from density.json), miss (0: no
# miss series), make (pool.stats.make_s, default 0.05), rate
# (pool.offered_rate, arrivals/s; default: absent), kib (pool.memory's
# pss_kib_per_vm, default 4096), marginal (density.json's KiB per VM,
# default 8192).
gen() {
	python3 - "$@" <<'EOF'
import json, os, random, sys
d, args = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
os.makedirs(d, exist_ok=True)
r = random.Random(1)
def series(name, v):
    return {"name": name, "unit": "ns", "better": "lower", "params": {},
            "samples_ns": v}
hit = [int(r.uniform(0.8e6, 1.2e6)) for _ in range(40)]
miss = [int(r.uniform(40e6, 60e6)) for _ in range(20)]
sysinfo = {"schema": 2, "hostname": "h",
           "kvm": {"flavour": "vmx", "emulated": args.get("emulated") or None}}
ss = [series("arrival_to_first_run.hit", hit)]
if args.get("miss", "1") != "0":
    ss.append(series("arrival_to_first_run.miss", miss))
ss.append(series("arrival_to_first_run.all", []))
pool = {"stats": {"make_s": float(args.get("make", 0.05))},
        "refill_vms_per_s": 20}
if "rate" in args:
    pool["offered_rate"] = float(args["rate"])
if args.get("mem", "1") != "0":
    pool["memory"] = {"rss_kib_per_vm": 5000,
                      "pss_kib_per_vm": json.loads(args.get("kib", "4096"))}
json.dump({"schema": 1, "bench": "pool", "sysinfo": sysinfo,
           "config": {"source": "probe", "workers": 1, "on_empty": "make"},
           "series": ss, "pool": pool}, open(d + "/pool.json", "w"))
json.dump({"schema": 1, "bench": "density", "sysinfo": sysinfo, "config": {},
           "series": [{"name": "n", "unit": "kib", "samples": [1]}],
           "density": {"fresh": {"marginal_kib_per_vm":
                                 json.loads(args.get("marginal", "8192"))}}},
          open(d + "/density.json", "w"))
EOF
}

gen "$tmp/host"
A=(--host "$tmp/host" --arrivals poisson:5 --duration 5m --seed 3)

# a recommendation that meets the SLO, with its pool command and costs
expect 0 'Recommendation' tune pool "${A[@]}" --slo p99=10ms \
	--memory-budget 1G --out "$tmp/o1"
grep -q 'arrival_to_first_run.hit (40 samples)' "$out" && ok ||
	fail "the Costs section names the hit samples"
grep -qx "    coldstart pool serve --config $tmp/o1/tune-pool.json --socket $tmp/o1/pool.sock" "$out" && ok ||
	fail "a coldstart pool command line naming tune-pool.json is printed"
json_check 'd["pool_config"]["policy"] == d["recommendation"]["policy"]
	and d["recommendation"]["pool_command"].startswith("coldstart pool serve --config ")' \
	"$tmp/o1/tune-pool.json"
grep -q 'warm VMs that fit: 256' "$out" && ok ||
	fail "1 GiB holds 256 VMs of 4 MiB"
for f in tune-pool.json tune-pool.md pareto.csv; do
	[ -s "$tmp/o1/$f" ] && ok || fail "$f written"
done
json_check 'd["bench"] == "tune-pool" and d["recommendation"]["meets_slo"]
	and d["recommendation"]["latency_s"]["p99"] <= 0.010
	and len(d["configurations"]) >= 100
	and all(c["idle_vm_s"] >= d["recommendation"]["idle_vm_s"]
		for c in d["configurations"] if c["meets_slo"])
	and d["costs"]["emulated"] is None' "$tmp/o1/tune-pool.json"
# marginal's grid reaches a 1 s half-life, each with a burst count faster
# than its slow one (at equal half-lives bursts would go unseen)
json_check 'any(c["policy"] == "marginal"
		and "halflife=1s burst=0.333s" in c["params"]
		for c in d["configurations"])
	and all(float(c["params"].split("halflife=")[1].split("s")[0]) >
		float(c["params"].split("burst=")[1].split("s")[0])
		for c in d["configurations"] if c["policy"] == "marginal")' \
	"$tmp/o1/tune-pool.json"
# and sweeps the peak rate's half-life, off included; each marginal
# configuration's pool command names it
json_check 'set(c["params"].split("peak=")[1] for c in d["configurations"]
		if c["policy"] == "marginal") == {"0s", "3s", "10s", "30s"}
	and all("--peak-halflife " + c["params"].split("peak=")[1]
		in c["pool_command"]
		for c in d["configurations"] if c["policy"] == "marginal")' \
	"$tmp/o1/tune-pool.json"
[ "$(grep -c ',1$' "$tmp/o1/pareto.csv")" -ge 2 ] && ok ||
	fail "pareto.csv marks a frontier"

# hits=0%: everything meets it, so the cheapest is the empty pool
expect 0 '^    coldstart pool serve --socket pool.sock .*--policy fixed .*--size 0 ' \
	tune pool "${A[@]}" --slo hits=0%
grep -q '0.0 idle VM-seconds' "$out" && ok || fail "hits=0% costs nothing"

# a fixed pool alone, under a hit-ratio SLO
expect 0 '--policy fixed --size [1-9]' tune pool "${A[@]}" --slo hits=90% \
	--policies fixed

# impossible: no hit is faster than 0.8 ms
expect 1 'No configuration meets p50=1us' tune pool "${A[@]}" --slo p50=1us

# same seed, same output; the memory from density.json without pool.memory
expect 0 '' tune pool "${A[@]}" --slo p99=10ms --json
cp "$out" "$tmp/j1"
expect 0 '' tune pool "${A[@]}" --slo p99=10ms --json
python3 - "$tmp/j1" "$out" <<'EOF' && ok || fail "same seed, same configurations"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if a["configurations"] == b["configurations"] else 1)
EOF
gen "$tmp/nomem" mem=0
expect 0 'density.json: density.fresh.marginal_kib_per_vm = 8192' tune pool \
	--host "$tmp/nomem" --arrivals poisson:5 --duration 1m --slo p99=10ms

# making times (the misses', 50 ms) far from the refills' own mean: said
gen "$tmp/fast" make=0.005
expect 0 "the pool's own refills 5.000 ms" tune pool --host "$tmp/fast" \
	--arrivals poisson:5 --duration 1m --slo p99=10ms

# costs measured at 10x the simulated rate: said, with the command that
# measures them at this load; at 1.5x (or with no rate recorded) not
gen "$tmp/load" rate=50
expect 0 'Warning: the costs were measured at 50 arrivals/s .*, the simulation runs at [0-9.]+/s: .* Measure them at this load \(.coldstart bench pool --arrivals poisson:5 --out DIR.' \
	tune pool --host "$tmp/load" --arrivals poisson:5 --duration 5m \
	--slo p99=10ms --out "$tmp/o3"
json_check 'any("measured at 50 arrivals/s" in w for w in d["warnings"])' \
	"$tmp/o3/tune-pool.json"
# and when nothing meets the SLO, measuring at this load comes first
expect 1 'No configuration meets p50=1us among the [0-9]+ simulated. First measure the costs at this load' \
	tune pool --host "$tmp/load" --arrivals poisson:5 --duration 1m \
	--slo p50=1us
gen "$tmp/load" rate=7.5
expect 0 '' tune pool --host "$tmp/load" --arrivals poisson:5 \
	--duration 5m --slo p99=10ms
! grep -q 'costs were measured at' "$out" && ok ||
	fail "a rate within 2x of the simulated one is not warned about"
grep -q 'costs were measured at' "$tmp/o1/tune-pool.md" &&
	fail "warned without a recorded rate" || ok

# a pool that never missed: misses from its refills' making times
python3 - "$tmp/host/pool.json" "$tmp/nomiss2" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
d["series"] = [s for s in d["series"] if s["name"] != "arrival_to_first_run.miss"]
d["series"].append({"name": "refill.make", "unit": "ns", "params": {},
                    "samples_ns": [30000000 + 1000 * i for i in range(25)]})
os.makedirs(sys.argv[2], exist_ok=True)
json.dump(d, open(sys.argv[2] + "/pool.json", "w"))
EOF
expect 0 'miss latency \(the request makes its VM\): pool.json: refill.make \(25 samples\), mean 30.012 ms' \
	tune pool --host "$tmp/nomiss2" --arrivals poisson:5 --duration 1m \
	--slo p99=10ms

# no miss series: misses from restore.json's warm first_run times
gen "$tmp/rest" miss=0
python3 - "$tmp/rest/restore.json" <<'EOF'
import json, sys
def s(strategy, cache, ms):
    return {"name": "%s/mem4M/ws1M/%s/first_run" % (strategy, cache),
            "unit": "ns", "params": {"strategy": strategy, "cache": cache,
                                     "phase": "first_run"},
            "samples_ns": [int(ms * 1e6) + i for i in range(10)]}
json.dump({"schema": 1, "bench": "restore", "sysinfo": {}, "config": {},
           "series": [s("mmap", "cold", 90), s("mmap", "warm", 30)]},
          open(sys.argv[1], "w"))
EOF
expect 0 'restore.json: mmap/mem4M/ws1M/warm/first_run \(10 samples\), mean 30' \
	tune pool --host "$tmp/rest" --arrivals poisson:5 --duration 1m \
	--slo p99=10ms

# a probe pool without miss samples: making times from lifecycle.json
python3 -c 'import json, sys; json.dump({"schema": 1, "bench": "lifecycle",
	"sysinfo": {}, "config": {}, "series": [{"name": "inproc.coldstart",
	"unit": "ns", "samples_ns": [20000000 + i for i in range(12)]}]},
	open(sys.argv[1], "w"))' "$tmp/rest/lifecycle.json"
expect 0 'lifecycle.json: inproc.coldstart \(12 samples\), mean 20' \
	tune pool --host "$tmp/rest" --arrivals poisson:5 --duration 1m \
	--slo p99=10ms

# a CSV trace, and a malformed one (exit 2 with its line)
printf 'timestamp\n' >"$tmp/trace.csv"
for i in $(seq 0 299); do echo "$((i / 4)).$((i % 4 * 25))"; done \
	>>"$tmp/trace.csv"
expect 0 'Recommendation' tune pool --host "$tmp/host" \
	--arrivals "trace:$tmp/trace.csv" --slo hits=50%
printf 'timestamp\n1.0\nsoon\n' >"$tmp/bad.csv"
expect 2 "$tmp/bad.csv.*line 3" tune pool --host "$tmp/host" \
	--arrivals "trace:$tmp/bad.csv" --slo hits=50%

# Azure 2019 counts, each valid, that add up to 2^64 (some 240 MB): once
# a wrapped sum sized the array, now exit 2 naming the file and the line
python3 - "$tmp/wrap2019.csv" <<'EOF'
import sys
k, n = 1440, 18446744  # minutes a row, counts of 999999999999
row = "\no,a,f,http" + ",999999999999" * k
last = ([999999999999] * (n % k) + [2**64 - n * 999999999999] +
        [0] * (k - n % k - 1))
with open(sys.argv[1], "w") as f:
    f.write("HashOwner,HashApp,HashFunction,Trigger," +
            ",".join(str(m) for m in range(1, k + 1)))
    for _ in range(n // k):
        f.write(row)
    f.write("\no,a,f,http," + ",".join(map(str, last)) + "\n")
EOF
expect 2 "tune pool: trace $tmp/wrap2019.csv line 12812: the counts add up to more than 2\^64 arrivals" \
	tune pool --host "$tmp/host" --arrivals "trace:$tmp/wrap2019.csv" \
	--slo hits=50%
rm -f "$tmp/wrap2019.csv"
# a trace spanning 10^16 s (whose 100 ms ticks the simulator could not
# advance), one whose times differ by more than a double holds, and a
# time scale out of range: exit 2, at once
printf 'timestamp\n0\n1e16\n' >"$tmp/far.csv"
EXPECT_TIMEOUT=30 expect 2 "trace $tmp/far.csv spans 1e\+16 s \(time x1\), more than the 1e\+10 s" \
	tune pool --host "$tmp/host" --arrivals "trace:$tmp/far.csv" \
	--slo hits=50%
printf 'timestamp\n-1e308\n1e308\n' >"$tmp/inf.csv"
expect 2 "trace $tmp/inf.csv spans inf s" tune pool --host "$tmp/host" \
	--arrivals "trace:$tmp/inf.csv" --slo hits=50%
expect 2 "time scale 1e\+300 is not a number from 1e-06 to 1e\+06" \
	tune pool --host "$tmp/host" --arrivals "trace:$tmp/trace.csv" \
	--slo hits=50% --time-scale 1e300

# refusals: exit 2 naming the file or the text
expect 2 "--slo: 'p99=50'" tune pool "${A[@]}" --slo p99=50
expect 2 "--slo: 'hits=99'" tune pool "${A[@]}" --slo hits=99
expect 2 "--slo: 'p100=5ms'" tune pool "${A[@]}" --slo p100=5ms
expect 2 "--slo: 'p0=5ms'" tune pool "${A[@]}" --slo p0=5ms
expect 2 "--slo: 'px=5ms'" tune pool "${A[@]}" --slo px=5ms
expect 2 'slo missing' tune pool "${A[@]}"
expect 2 "$tmp/none" tune pool --host "$tmp/none" --arrivals poisson:5 \
	--slo p99=10ms
mkdir -p "$tmp/empty"
# a directory without pool.json: the message says what makes one
expect 2 "$tmp/empty/pool.json: no such file: --host takes a results directory holding this host.s pool.json \(made by .coldstart bench pool --out $tmp/empty. or .coldstart bench suite" tune pool --host "$tmp/empty" \
	--arrivals poisson:5 --slo p99=10ms
mkdir -p "$tmp/bad"
printf '{"schema": 1,\n "bench": "pool",\n oops\n' >"$tmp/bad/pool.json"
expect 2 "$tmp/bad/pool.json: line 3" tune pool --host "$tmp/bad" \
	--arrivals poisson:5 --slo p99=10ms
gen "$tmp/nomiss" miss=0 mem=0
rm "$tmp/nomiss/density.json"
expect 2 "pool.json: no miss latency" tune pool --host "$tmp/nomiss" \
	--arrivals poisson:5 --slo p99=10ms

# a memory per VM, or a budget, past 2^50 bytes (or a VM below a byte):
# exit 2 naming the file and key, not a 309-digit count of VMs that fit
gen "$tmp/huge" kib=1e308
expect 2 "$tmp/huge/pool.json: pool.memory.pss_kib_per_vm = 1e\+308 KiB is not a memory per VM from 1 byte to 2\^50 bytes" \
	tune pool --host "$tmp/huge" --arrivals poisson:5 --slo p99=10ms \
	--memory-budget 1G
gen "$tmp/tiny" kib=1e-300
expect 2 "pss_kib_per_vm = 1e-300 KiB is not a memory per VM" tune pool \
	--host "$tmp/tiny" --arrivals poisson:5 --slo p99=10ms
gen "$tmp/hugeden" mem=0 marginal=1e308
expect 2 "$tmp/hugeden/density.json: density.fresh.marginal_kib_per_vm = 1e\+308 KiB is not" \
	tune pool --host "$tmp/hugeden" --arrivals poisson:5 --slo p99=10ms
gen "$tmp/peta" kib=1099511627776
expect 0 'pss_kib_per_vm = 1099511627776 KiB' tune pool --host "$tmp/peta" \
	--arrivals poisson:5 --duration 1m --slo hits=50% --memory-budget 1024T
grep -q 'warm VMs that fit: 1 ' "$out" && ok || fail "1 PiB holds one VM of 1 PiB"
for b in 1025T 16777215T 0; do
	expect 2 "--memory-budget: '$b' is not from 1 byte to 1024T" tune pool \
		"${A[@]}" --slo p99=10ms --memory-budget "$b"
done

# an emulated host: accepted, with a warning in the output and document
gen "$tmp/emu" emulated=qemu-tcg-svm
expect 0 'emulated host \(qemu-tcg-svm\)' tune pool --host "$tmp/emu" \
	--arrivals poisson:5 --duration 1m --slo p99=10ms --out "$tmp/o2"
json_check 'd["costs"]["emulated"] == "qemu-tcg-svm" and
	any("emulated" in w for w in d["warnings"])' "$tmp/o2/tune-pool.json"

# the recommendation joins a results directory's report.md: tune --out
# into a directory that has one refreshes it; report finds tune-pool.json
# beside its inputs; a pool.json with an empty series (no misses) reports
gen "$tmp/res"
expect 0 'report written' report "$tmp/res/pool.json" "$tmp/res/density.json" \
	--out "$tmp/res"
! grep -q '^## Tuning' "$tmp/res/report.md" && ok || fail "no tuning yet"
expect 0 'report.md now includes it' tune pool --host "$tmp/res" \
	--arrivals poisson:5 --duration 5m --seed 3 --slo p99=10ms \
	--out "$tmp/res"
grep -q '^## Tuning' "$tmp/res/report.md" && ok ||
	fail "report.md has a Tuning section after tune --out"
grep -q '^- tune pool (poisson 5/s, 300 s, seed 3, SLO p99=10ms): ' \
	"$tmp/res/report.md" && ok || fail "the summary has the tune line"
grep -q "^    coldstart pool serve --config $tmp/res/tune-pool.json " "$tmp/res/report.md" &&
	ok || fail "report.md carries the pool command"
grep -q 'full report: tune-pool.md' "$tmp/res/report.md" && ok ||
	fail "report.md points to tune-pool.md beside it"
rm -rf "$tmp/r2"
expect 0 'report written' report "$tmp/res/density.json" --out "$tmp/r2"
grep -q '^### Warm pool' "$tmp/r2/report.md" && ok ||
	fail "report finds tune-pool.json beside its input"
! grep -q 'full report: tune-pool.md' "$tmp/r2/report.md" && ok ||
	fail "no pointer to a tune-pool.md that is not beside report.md"
expect 0 'report written' report "$tmp/res/tune-pool.json" --out "$tmp/r3"
grep -q '^# coldstart benchmark report' "$tmp/r3/report.md" &&
	grep -q '^### Warm pool' "$tmp/r3/report.md" && ok ||
	fail "a tuner's document alone makes a report"
printf '{"schema": 1, "bench": "tune-pool"' >"$tmp/res/tune-pool.json"
expect 0 'tune-pool.json left out' report "$tmp/res/density.json" \
	--out "$tmp/r4"
! grep -q '^## Tuning' "$tmp/r4/report.md" && ok ||
	fail "a malformed tuner's document beside the input is left out"
# tune --out into a directory without report.md writes none
expect 0 'results written' tune pool "${A[@]}" --slo p99=10ms --out "$tmp/o5"
[ ! -e "$tmp/o5/report.md" ] && ok || fail "no report.md made from nothing"

# tune_pool.outputs_never_follow_links: pareto.png was drawn into
# OUT/.pareto.png.tmp and pareto.csv opened with fopen "w", both writing
# through a symlink planted there (a file outside OUT clobbered). Each is
# now a new file under a random name in OUT, renamed into place; a link
# at the final name is replaced, never written through.
mkdir -p "$tmp/o6"
echo victim >"$tmp/victim"
ln -s ../victim "$tmp/o6/.pareto.png.tmp"
ln -s ../victim "$tmp/o6/pareto.csv"
expect 0 'results written' tune pool "${A[@]}" --slo p99=10ms --out "$tmp/o6"
[ "$(cat "$tmp/victim")" = victim ] && ok ||
	fail "tune pool wrote through a planted link: $(head -c 40 "$tmp/victim" | tr -dc '[:print:]')"
[ ! -L "$tmp/o6/pareto.csv" ] && grep -q '^policy,params,' "$tmp/o6/pareto.csv" &&
	ok || fail "pareto.csv beside a planted link: $(ls -l "$tmp/o6")"
if command -v gnuplot >/dev/null; then
	[ ! -L "$tmp/o6/pareto.png" ] &&
		head -c 8 "$tmp/o6/pareto.png" | grep -q PNG &&
		[ "$(ls -A "$tmp/o6" | grep -c '^\.')" -eq 1 ] &&
		ok || fail "pareto.png beside a planted link: $(ls -lA "$tmp/o6")"
fi

expect 0 'Usage: coldstart tune pool' tune pool --help
# Without --out nothing is written, and the output names no file as
# written (it once pointed at tune-pool.json and pareto.png).
expect 0 'Recommendation' tune pool "${A[@]}" --slo p99=10ms
grep -q 'tune-pool.json\|pareto.csv\|pareto.png' "$out" &&
	fail "tune pool without --out names files it did not write" || ok
# README's flow: tune pool --out into the results directory it read, then
# compare and export that directory: the tuner's document is skipped with
# a note, not a malformed result (exit 2).
cp -r "$tmp/host" "$tmp/flow"
expect 0 'results written to' tune pool --host "$tmp/flow" --arrivals poisson:5 \
	--duration 5m --seed 3 --slo p99=10ms --out "$tmp/flow"
expect 3 "^note: $tmp/flow/tune-pool.json skipped: a tuner's document, not a benchmark result$" \
	compare "$tmp/flow" "$tmp/flow"
grep -q 'pool/arrival_to_first_run.hit' "$out" && ok ||
	fail "compare DIR DIR beside tune-pool.json compares the results"
expect 0 "^note: $tmp/flow/tune-pool.json skipped: a tuner's document" \
	export prometheus "$tmp/flow"
grep -q '^coldstart_pool_seconds{' "$out" && ok ||
	fail "export prometheus DIR beside tune-pool.json exports the results"
# named alone, it is still no result to compare or export
expect 2 "tune-pool.json is a tuner's document \\(tune-pool\\), not a benchmark result" \
	compare "$tmp/flow/tune-pool.json" "$tmp/flow/tune-pool.json"
# The committed reference results hold every document tune pool reads
# (pool.json measured at 50/s): a newcomer's first `tune pool --host`
# runs on them as they are, without a warning about the load.
REF=$(dirname "$0")/../../results/reference-pvm-2core
expect 0 'Recommendation' tune pool --host "$REF" --arrivals poisson:50 \
	--duration 60s --slo p99=20ms --seed 1
grep -q 'were measured at' "$out" "$err" && fail "tune pool on the reference warned about its load" || ok
finish
