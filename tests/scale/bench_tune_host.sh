#!/bin/bash
# bench_tune_host.sh COLDSTART [--quick]: `coldstart tune host` on 100
# functions x 1 day of per-minute counts, synthetic traces in the Azure
# 2019 and 2021 formats (gen_functions_trace.py, seed 1; not the public
# traces), with one 256 MiB guest for all and with three guest types
# (--guests). Per budget (a quarter, half and three quarters of every
# VM at once) it prints each policy's cold starts, mean start latency,
# peak memory, idle GiB-seconds and the budget (and peak) it needs for
# ours's cold starts, ours against greedy-dual,
# and tune host's wall time. Then ours's price chosen on the first 12
# hours only (--minutes 720) and applied to the whole day (--price): the
# price was not fitted on the second half. A benchmark, not a test: it
# fails only when a command does. --quick: the 2019 trace, one guest.
set -euo pipefail
bin=$1
quick=false
[ "${2:-}" = --quick ] && quick=true
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in azure2019 azure2021; do
	python3 "$here/gen_functions_trace.py" --format $f --functions 100 \
		--minutes 1440 --seed 1 --guests "$tmp/guests.json" "$tmp/$f.csv"
done

# show JSON: one line per policy and the comparison
show() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["policies"]:
    need = p["mib_for_ours_cold_starts"]
    label = p["policy"] + (" (price %g)" % p["price"] if "price" in p else "")
    print("  %-28s cold %7d (%5.2f %%)  mean start %6.2f ms  peak %6.0f MiB  idle %9.0f GiB-s  for ours's cold starts: %s"
          % (label, p["cold_starts"], p["cold_pct"],
             1e3 * p["start_s"] / p["invocations"], p["peak_mib"],
             p["idle_gib_s"], "not reached" if need is None else
             "budget %.0f MiB, peak %.0f MiB" % (need, p["peak_mib_there"])))
v = d["versus_greedy_dual"]
less = v["less_memory_pct"]
print("  ours vs greedy-dual: %.1f %% fewer cold starts at the budget; greedy-dual's cold starts with a budget of %s MiB, peak %s MiB (%s less than greedy-dual's peak)"
      % (v["fewer_cold_starts_pct"],
         "-" if v["mib_for_its_cold_starts"] is None else "%.0f" % v["mib_for_its_cold_starts"],
         "-" if v["peak_mib_there"] is None else "%.0f" % v["peak_mib_there"],
         "-" if less is None else "%.1f %%" % less))
print("  %d functions x %d minutes, %d invocations; busy peak %.0f MiB, all VMs %.0f MiB; %d simulations in %.2f s"
      % (d["trace"]["functions"], d["trace"]["minutes"], d["trace"]["invocations"],
         d["busy_peak_mib"], d["all_vms_mib"], d["simulations"], d["elapsed_s"]))
PY
}

field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

formats="azure2019 azure2021"
guests="one three"
$quick && formats=azure2019 && guests=one
for f in $formats; do
	for g in $guests; do
		gopt=()
		[ $g = three ] && gopt=(--guests "$tmp/guests.json")
		# every VM at once: from a first run's document
		"$bin" tune host --trace "$tmp/$f.csv" "${gopt[@]}" \
			--memory-budget 1T --json >"$tmp/all.json"
		all=$(field "$tmp/all.json" '["all_vms_mib"]')
		for frac in 25 50 75; do
			mib=$(python3 -c "print(int($all * $frac / 100))")
			echo "== $f, $g guest type(s), budget ${mib} MiB ($frac % of every VM at once)"
			/usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" tune host \
				--trace "$tmp/$f.csv" "${gopt[@]}" \
				--memory-budget "${mib}M" --json >"$tmp/r.json"
			show "$tmp/r.json"
			read -r wall rss <"$tmp/time"
			echo "  tune host: ${wall} s wall, $((rss / 1024)) MiB peak RSS"
			if [ $frac = 50 ]; then
				"$bin" tune host --trace "$tmp/$f.csv" "${gopt[@]}" \
					--memory-budget "${mib}M" --minutes 720 \
					--json >"$tmp/half.json"
				p=$(field "$tmp/half.json" '["policies"][0]["price"]')
				echo "  -- price from the first 12 h only ($p), the whole day:"
				"$bin" tune host --trace "$tmp/$f.csv" "${gopt[@]}" \
					--memory-budget "${mib}M" --price "$p" \
					--json >"$tmp/held.json"
				show "$tmp/held.json"
			fi
		done
	done
done
