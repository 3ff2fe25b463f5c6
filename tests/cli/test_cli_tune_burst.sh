#!/bin/bash
# `coldstart tune pool` on bursty traffic, no KVM needed: the sweep goes on
# past its first grid to the fixed size a batch needs (where it once said
# that nothing meets the SLO), stops at the bound the user set and says
# what it would take; --holdout parts the arrivals exactly and recommends
# what holds on the held-out part; what-if costs (--costs, --cost) give
# what a pool.json with the same samples gives; any percentile SLO.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch

# A results directory: 40 hits of about 1 ms, 20 misses of about 50 ms
# (also the making times: no refill series), 4 MiB per VM, one worker.
python3 - "$tmp/host" "$tmp/costs.json" <<'EOF'
import json, os, random, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
r = random.Random(1)
hit = [int(r.uniform(0.8e6, 1.2e6)) for _ in range(40)]
miss = [int(r.uniform(40e6, 60e6)) for _ in range(20)]
def series(name, v):
    return {"name": name, "unit": "ns", "params": {}, "samples_ns": v}
json.dump({"schema": 1, "bench": "pool", "sysinfo": {"hostname": "h"},
           "config": {"source": "probe", "workers": 1, "on_empty": "make"},
           "series": [series("arrival_to_first_run.hit", hit),
                      series("arrival_to_first_run.miss", miss)],
           "pool": {"stats": {"make_s": 0.05},
                    "memory": {"pss_kib_per_vm": 4096}}},
          open(d + "/pool.json", "w"))
# the same samples as given costs, in seconds
json.dump({"hit_s": [v / 1e9 for v in hit], "miss_s": [v / 1e9 for v in miss],
           "make_s": [v / 1e9 for v in miss], "vm_mib": 4},
          open(sys.argv[2], "w"))
EOF

# A hand-made bursty trace: one arrival a second for 240 s, and a batch
# of 60 at once at 100.5 s. The first grid (sized from the busiest
# second) reached 10 VMs, and every policy missed hits=99%.
python3 - "$tmp/burst.csv" <<'EOF'
import sys
t = [float(i) for i in range(240)] + [100.5] * 60
open(sys.argv[1], "w").write("timestamp\n" + "".join("%g\n" % x for x in sorted(t)))
EOF
B0=(--host "$tmp/host" --arrivals "trace:$tmp/burst.csv")
B=("${B0[@]}" --slo hits=99%)
expect 0 'Recommendation' tune pool "${B[@]}" --policies fixed \
	--out "$tmp/b1"
# at most 3 of the 300 miss: the batch needs 57 VMs held
json_check 'd["recommendation"]["params"] == "n=57"
	and d["recommendation"]["meets_slo"]
	and not any(c["meets_slo"] for c in d["configurations"]
		    if c["policy"] == "fixed" and int(c["params"][2:]) < 57)' \
	"$tmp/b1/tune-pool.json"
grep -q 'swept on up to' "$err" && ok || fail "the sweep's progress on stderr"
# every policy is swept on, or says how close it came and that fixed
# meets the SLO
expect 0 'Recommendation' tune pool "${B[@]}"
grep -Eq '^\| (fixed|ttl|hybrid|follow|marginal|cover) \| [0-9]+ \| (n=|halflife|miss_cost|q=|none meets the SLO, though fixed n=57: closest)' \
	"$out" && ok || fail "each policy's row: its best, or its closest"
# a bound below it: exit 1, the closest, and what it would take
expect 1 'What it would take: more than 20 warm VMs .*the bound \(--max-vms 20\)' \
	tune pool "${B[@]}" --policies fixed --max-vms 20
grep -q 'none meets the SLO: closest [0-9.]* % with n=20 ' "$out" && ok ||
	fail "the closest fixed pool within the bound"
# a percentile SLO that nothing meets ties at the miss latency (given
# costs: exactly 50 ms for every configuration with over 1 % misses):
# the closest is then the one with the most hits, not an empty pool
expect 1 'none meets the SLO: closest 50\.000 ms with n=20 ' tune pool \
	--cost hit=1ms,make=50ms,mem=4M --arrivals "trace:$tmp/burst.csv" \
	--slo p99=10ms --policies fixed --max-vms 20
# the memory budget is a bound too: 64 MiB holds 16 VMs of 4 MiB
expect 1 'more than 16 warm VMs .*--memory-budget: 16 VMs of 4.00 MiB' \
	tune pool "${B[@]}" --policies fixed --memory-budget 64M
# no pool beats its own hits: said, and no sweep to the bound
expect 1 'faster hits. .* p99 = 1\.[0-9]+ ms \(the hit latencies alone\)' \
	tune pool "${B0[@]}" --slo p99=500us --policies fixed
! grep -q 'swept on' "$err" && ok || fail "a hopeless SLO is not swept on"

# any percentile: p95 (and p99.5)
expect 0 'Recommendation' tune pool "${B0[@]}" --slo p95=5ms
expect 0 'Recommendation' tune pool "${B0[@]}" --slo p99.5=60ms

# the command that applies a recommendation writes each value as typed:
# --cover-quantile 0.8, not 0.80000000000000004
expect 0 'Apply it with' tune pool --cost hit=1ms,make=50ms,mem=4M \
	--arrivals poisson:2 --duration 10m --slo hits=90% --policies cover
grep -Eq -- '--cover-quantile 0\.[0-9]{1,6} ' "$out" && ok ||
	fail "the quantile in the fewest digits that read back exactly"

# --holdout: 100 arrivals, a quarter held out: exactly 75 and 25. The
# last quarter holds a batch of 20 the first three quarters never saw.
python3 - "$tmp/shift.csv" <<'EOF'
import sys
t = [float(i) for i in range(80)] + [78.5] * 20
open(sys.argv[1], "w").write("timestamp\n" + "".join("%g\n" % x for x in sorted(t)))
EOF
[ "$(tail -n +2 "$tmp/shift.csv" | wc -l)" -eq 100 ] && ok || fail "100 rows"
H=(--host "$tmp/host" --arrivals "trace:$tmp/shift.csv" --slo hits=90%
	--policies fixed --holdout 0.25)
expect 0 'Tuned on the first 75 arrivals .* on the 25 held out' \
	tune pool "${H[@]}" --out "$tmp/h1"
json_check 'd["holdout"]["tuning_arrivals"] == 75
	and d["holdout"]["held_out_arrivals"] == 25
	and d["holdout"]["tuning_arrivals"] + d["holdout"]["held_out_arrivals"] == d["config"]["count"]
	and d["holdout"]["tuning_choice_holds"] is False
	and d["recommendation"]["holdout"]["meets_slo_held_out"]
	and d["recommendation"]["holdout"]["meets_slo_tuning"]' \
	"$tmp/h1/tune-pool.json"
grep -q 'recommended, the cheapest that holds out of sample' "$out" && ok ||
	fail "the report says the recommendation holds out of sample"
# an odd count: round((1 - 0.3) x 99) = 69 tuned, 30 held out
head -n 100 "$tmp/shift.csv" >"$tmp/odd.csv"
expect 0 'Tuned on the first 69 arrivals .* on the 30 held out' tune pool \
	--host "$tmp/host" --arrivals "trace:$tmp/odd.csv" --slo hits=50% \
	--policies fixed --holdout 0.3
for h in 0 1 1.5 x; do
	expect 2 "--holdout: '$h' is not" tune pool "${H[@]}" --holdout "$h"
done
expect 2 '--holdout 0.999 of 100 arrivals leaves the tuning part empty' \
	tune pool "${H[@]}" --holdout 0.999

# what-if costs: the same samples give the same sweep as the pool.json
A=(--arrivals poisson:5 --duration 5m --seed 3 --slo p99=10ms --json)
expect 0 '' tune pool --host "$tmp/host" "${A[@]}"
cp "$out" "$tmp/measured.json"
expect 0 '' tune pool --costs "$tmp/costs.json" "${A[@]}"
cp "$out" "$tmp/given.json"
python3 - "$tmp/measured.json" "$tmp/given.json" <<'EOF' && ok || fail "given costs differ from the pool.json's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
keys = ("policy", "params", "hits", "misses", "idle_vm_s", "slo_metric",
        "meets_slo", "peak_mib")
pick = lambda d: [tuple(c[k] for k in keys) for c in d["configurations"]]
sys.exit(0 if pick(a) == pick(b) and len(pick(a)) > 100
         and b["costs"]["given"] and not a["costs"]["given"]
         and b["recommendation"]["params"] == a["recommendation"]["params"]
         else 1)
EOF
expect 0 'Given \(--costs or --cost\), not measured on a host' tune pool \
	--costs "$tmp/costs.json" --arrivals poisson:5 --duration 1m \
	--slo p99=10ms --out "$tmp/g1"
# and the report made from its document says so too
expect 0 'report written' report "$tmp/g1/tune-pool.json" --out "$tmp/g1r"
grep -q 'Simulated with given costs, not measured on a host' \
	"$tmp/g1r/report.md" && ok || fail "report.md says the costs were given"
expect 0 'hit latency .*given: --cost hit, mean 1.000 ms' tune pool \
	--cost hit=1ms,make=150ms,mem=256M,workers=2 --arrivals poisson:2 \
	--duration 10m --slo hits=95%
grep -q 'refill workers: 2' "$out" && ok || fail "--cost workers=2"
# refusals: exit 2, naming the text, file or key
expect 2 "--cost: 'hit=1ms,mem=1G' is not hit=DUR,make=DUR,mem=SIZE" \
	tune pool --cost hit=1ms,mem=1G --arrivals poisson:1 --slo hits=50%
expect 2 "--cost: 'hit=1ms,make=0s,mem=1G'" tune pool \
	--cost hit=1ms,make=0s,mem=1G --arrivals poisson:1 --slo hits=50%
expect 2 'give one of --host RESULTS_DIR' tune pool --host "$tmp/host" \
	--cost hit=1ms,make=1s,mem=1G --arrivals poisson:1 --slo hits=50%
expect 2 'give one of --host RESULTS_DIR' tune pool --arrivals poisson:1 \
	--slo hits=50%
expect 2 '--validate runs the pool measured in --host' tune pool \
	--cost hit=1ms,make=1s,mem=1G --arrivals poisson:1 --slo hits=50% \
	--validate
echo '{"hit_s": 0.001, "make_s": -1, "vm_mib": 4}' >"$tmp/bad.json"
expect 2 "$tmp/bad.json: make_s is not a time in seconds above 0" tune pool \
	--costs "$tmp/bad.json" --arrivals poisson:1 --slo hits=50%
echo '{"hit_s": 0.001, "make_s": 0.1}' >"$tmp/nomem.json"
expect 2 "--costs $tmp/nomem.json: a JSON object with hit_s, make_s" \
	tune pool --costs "$tmp/nomem.json" --arrivals poisson:1 --slo hits=50%
printf '{"hit_s": \n' >"$tmp/broken.json"
expect 2 "--costs $tmp/broken.json: line 2" tune pool \
	--costs "$tmp/broken.json" --arrivals poisson:1 --slo hits=50%
finish
