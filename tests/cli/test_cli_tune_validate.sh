#!/bin/bash
# `coldstart tune pool --validate` on this host (KVM): a real results
# directory from `bench pool`, then the same arrivals replayed through a
# real fixed pool at three given sizes beside their simulation, and with
# each run's own costs (its documents kept under --out); a bad
# size list is refused, and a host without KVM is told so (exit 77); a
# pool of a Linux guest (the ring-0 test kernel, TK_ELF) is replayed with
# the same guest.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
scratch

expect 2 "validate-sizes: 'x'" tune pool --host "$tmp" --arrivals \
	poisson:40 --slo hits=90% --validate-sizes 1,x
expect 2 'at most 8' tune pool --host "$tmp" --arrivals poisson:40 \
	--slo hits=90% --validate-sizes 1,2,3,4,5,6,7,8,9
need_kvm

expect 0 '' bench pool --arrivals poisson:40 --duration 2s --size 2 \
	--out "$tmp/host"
# Exit 0 or 1 (hits=90% may be out of reach): validation never changes it.
timeout 200 "$COLDSTART" tune pool --host "$tmp/host" --arrivals poisson:40 \
	--duration 3s --slo hits=90% --validate --validate-sizes 1,2,4 \
	--json --out "$tmp/tune" >"$out" 2>"$err"
code=$?
if [ "$code" -eq 0 ] || [ "$code" -eq 1 ]; then ok; else
	fail "tune pool --validate exited $code"
	sed 's/^/  | /' "$err" | head -5
fi
json_check 'len(d["validation"]["rows"]) == 3 and [r["size"] for r in d["validation"]["rows"]] == [1, 2, 4]' "$out"
json_check 'all(0 <= r["simulated"]["hit_ratio"] <= 1 and r["measured"] is not None and 0 <= r["measured"]["hit_ratio"] <= 1 and r["measured"]["p99_s"] > 0 and r["simulated"]["p99_s"] > 0 for r in d["validation"]["rows"])' "$out"
# A larger pool does not hit less often, in the simulation.
json_check 'd["validation"]["rows"][0]["simulated"]["hit_ratio"] <= d["validation"]["rows"][2]["simulated"]["hit_ratio"]' "$out"
# Each size is simulated again with its own run's costs, and the run's
# document is kept under --out: the own simulation's making time is the
# mean of that document's refills (the results directory's when it has
# none), and its measured hit ratio is the one reported.
json_check 'all(r["document"] == "validation/size-%d.json" % r["size"] and 0 <= r["simulated_own_costs"]["hit_ratio"] <= 1 and r["simulated_own_costs"]["p99_s"] > 0 for r in d["validation"]["rows"])' "$out"
python3 - "$out" "$tmp/tune" "$tmp/host/pool.json" <<'PY' && ok || fail "the own-cost simulation does not use its run's document"
import json, sys
d = json.load(open(sys.argv[1]))
def make_mean(doc):
    s = [x for x in doc["series"] if x["name"] == "refill.make"]
    v = s[0]["samples_ns"] if s else []
    return sum(v) / len(v) / 1e9 if v else None
base = make_mean(json.load(open(sys.argv[3])))
for r in d["validation"]["rows"]:
    run = json.load(open(sys.argv[2] + "/" + r["document"]))
    want = make_mean(run) or base
    assert run["bench"] == "pool" and run["config"]["size"] == r["size"], r
    assert abs(run["pool"]["hit_ratio"] - r["measured"]["hit_ratio"]) < 1e-9, r
    assert abs(r["simulated_own_costs"]["make_mean_s"] - want) <= 1e-9 * want, (r, want)
PY
if grep -q '^## Validation' "$tmp/tune/tune-pool.md" &&
	grep -q "simulated with each run's own costs" "$tmp/tune/tune-pool.md"; then
	ok
else
	fail "tune-pool.md lacks the own-cost validation table"
fi
if grep -q '^## Validation' "$tmp/tune/tune-pool.md" &&
	grep -Eq '^\| 4 \| [0-9.]+ % \| [0-9.]+ % \|' "$tmp/tune/tune-pool.md"; then
	ok
else
	fail "tune-pool.md lacks the validation table"
fi
# A pool of a Linux guest booted fresh: --validate boots the same kernel
# (gone, the replay says so).
cp "$TK_ELF" "$tmp/tk.elf"
expect 0 '' bench pool --kernel "$tmp/tk.elf" --mem 32M --allow-pvm \
	--arrivals poisson:5 --duration 2s --size 1 --out "$tmp/lhost"
json_check 'd["config"]["source"] == "linux" and d["guest"]["name"] == "linux"' "$tmp/lhost/pool.json"
timeout 200 "$COLDSTART" tune pool --host "$tmp/lhost" --arrivals poisson:5 \
	--duration 2s --slo hits=50% --validate --validate-sizes 1 --json \
	>"$out" 2>"$err"
json_check 'd["validation"]["rows"][0]["measured"] is not None and d["validation"]["rows"][0]["measured"]["p99_s"] > 0 and d["validation"]["rows"][0]["document"] is None' "$out"
rm "$tmp/tk.elf"
timeout 200 "$COLDSTART" tune pool --host "$tmp/lhost" --arrivals poisson:5 \
	--duration 2s --slo hits=50% --validate --validate-sizes 1 --json \
	>"$out" 2>"$err"
grep -q 'tk.elf: No such file' "$err" && ok ||
	fail "--validate did not boot the pool's own kernel: $(tail -n 3 "$err")"
# A KVM device that is not there: exit 77, saying why, before the sweep.
expect 77 'validate runs VMs.*/nonexistent/kvm' tune pool --host \
	"$tmp/host" --arrivals poisson:40 --duration 3s --slo hits=90% \
	--validate --kvm /nonexistent/kvm

finish
