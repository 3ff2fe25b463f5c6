#!/bin/bash
# The warm-pool policy table: for each arrival process (poisson, mmpp,
# batch, and three synthetic bursty traces in the CSV, Azure 2021 and
# Azure 2019 formats from gen_bursty_traces.py, NOT the public traces),
# and two kinds of refill (cheap: 12 ms, SLO hits=99%; sandbox-like: a
# Linux guest restored in 150 ms, SLO hits=95%), the idle VM-seconds of
# each policy's cheapest configuration meeting the SLO, or "miss" and
# the closest it came; then cover against fixed, and how long one sweep
# of 10,000 arrivals takes on one core. Prints numbers; passes or fails
# nothing.
# Usage: tests/scale/policy_table.sh [COLDSTART [TRACE-SPEC...]]
#   (default build/coldstart); each TRACE-SPEC, e.g. a public trace as
#   trace:FILE,format=azure2019, or Azure's LLM inference traces of 2023
#   (data/AzureLLMInferenceTrace_{code,conv}.csv of the AzurePublicDataset
#   repository, one request per line) as trace:FILE, is a row of every
#   table beside ours.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
COLDSTART=${1:-$here/../../build/coldstart}
shift $(($# > 0 ? 1 : 0))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$here/gen_bursty_traces.py" "$tmp" --seed 1 | sed 's/^/# /'
arrivals=(poisson:2.6 mmpp:0.5,10,300,60 batch:0.8,pareto:1.2:60,within=1s
	"trace:$tmp/bursty.csv" "trace:$tmp/bursty-azure2021.csv"
	"trace:$tmp/bursty-azure2019.csv" "$@")
scenarios=("hit=1ms,make=12ms,mem=64M hits=99%"
	"hit=1ms,make=150ms,mem=256M hits=95%")

for s in "${scenarios[@]}"; do
	set -- $s
	echo
	echo "## refills: --cost $1, SLO $2 (idle VM-s of each policy's cheapest configuration meeting it)"
	echo
	printf '| arrivals | fixed | ttl | hybrid | follow | marginal | cover | cover vs fixed |\n'
	printf '|---|---|---|---|---|---|---|---|\n'
	for a in "${arrivals[@]}"; do
		nice -n 19 "$COLDSTART" tune pool --cost "$1" --arrivals "$a" \
			--duration 1h --slo "$2" --json >"$tmp/out.json" \
			2>/dev/null || true
		python3 - "$tmp/out.json" "${a/$tmp\//}" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
cells, best = [], {}
for p in ("fixed", "ttl", "hybrid", "follow", "marginal", "cover"):
    cs = [c for c in d["configurations"] if c["policy"] == p]
    ok = [c for c in cs if c["meets_slo"]]
    if ok:
        b = min(ok, key=lambda c: c["idle_vm_s"])
        best[p] = b["idle_vm_s"]
        cells.append("%.0f" % b["idle_vm_s"])
    else:
        close = max(c["slo_metric"] for c in cs)
        cells.append("miss (%.2f %%)" % close)
vs = ("%+.0f %%" % (100 * (best["cover"] / best["fixed"] - 1))
      if "cover" in best and best.get("fixed") else "")
print("| %s | %s | %s |" % (sys.argv[2], " | ".join(cells), vs))
EOF
	done
done

# out of sample: tuned on the first three quarters of each trace
echo
echo "## --holdout 0.25, refills --cost hit=1ms,make=12ms,mem=64M, SLO hits=99%"
echo
printf '| trace | tuning part'"'"'s choice | on the held-out part | recommended (holds on both) | its held-out idle VM-s |\n'
printf '|---|---|---|---|---|\n'
for a in "${arrivals[@]:3}"; do
	nice -n 19 "$COLDSTART" tune pool --cost hit=1ms,make=12ms,mem=64M \
		--arrivals "$a" --slo hits=99% --holdout 0.25 --json \
		>"$tmp/out.json" 2>/dev/null || true
	python3 - "$tmp/out.json" "${a/$tmp\//}" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
h, r = d["holdout"], d["recommendation"]
t = [c for c in d["configurations"]
     if c["params"] == h["tuning_choice"] and c["policy"] == h["tuning_choice_policy"]]
held = ("%s (%.2f %%)" % ("met" if t[0]["holdout"]["meets_slo_held_out"] else "missed",
                          t[0]["holdout"]["slo_metric_held_out"]) if t else "")
print("| %s | %s %s | %s | %s | %s |" % (
    sys.argv[2], h["tuning_choice_policy"], h["tuning_choice"], held,
    "%s %s" % (r["policy"], r["params"]) if r else "none",
    "%.0f" % r["holdout"]["idle_vm_s_held_out"] if r else ""))
EOF2
done

# one sweep of 10,000 arrivals on one core
echo
nice -n 19 "$COLDSTART" tune pool --cost hit=1ms,make=12ms,mem=64M \
	--arrivals poisson:2.7777 --duration 1h --seed 2 --slo hits=99% --json \
	>"$tmp/t.json" 2>/dev/null
/usr/bin/time -f '%e s wall, %U s user' taskset -c 0 nice -n 19 \
	"$COLDSTART" tune pool --cost hit=1ms,make=12ms,mem=64M \
	--arrivals poisson:2.7777 --duration 1h --seed 2 --slo hits=99% --json \
	2>"$tmp/time" >/dev/null || true
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print("# tune pool: %d arrivals x %d configurations: %s" % (d["config"]["count"], len(d["configurations"]), open(sys.argv[2]).read().strip().splitlines()[-1]))' "$tmp/t.json" "$tmp/time"
