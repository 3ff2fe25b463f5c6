#!/bin/bash
# `coldstart tune host` as a black box, no KVM needed: a hand-made trace
# of three 100 MiB functions in 200 MiB (f0 busy in minutes 1-3 and 6,
# f1 in 4, f2 in 5), in both Azure formats, whose cold starts per policy
# are worked out in tests/unit/test_hostsim.c (greedy-dual 3, keepalive 4)
# and here: ours keeps f0 one minute after its busy ones (its idle times
# are all 1), so minute 6 is cold: 4; the hybrid histogram has too few
# idle times and keeps 240 minutes, evicting as keepalive: 4. The memory
# greedy-dual and keepalive need for 4 cold starts: 100 MiB (each cold
# start then evicts the one idle VM: 4; below 100 MiB none is kept and
# every busy minute is cold: 6), found by bisection to 0.5 %. Then
# --guests, --out, and refusals (exit 2, one line).
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch

cat >"$tmp/t19.csv" <<'EOF'
HashOwner,HashApp,HashFunction,Trigger,1,2,3,4,5,6
o,a,f0,http,1,1,1,0,0,1
o,a,f1,http,0,0,0,1,0,0
o,b,f2,timer,0,0,0,0,1,0
EOF
cat >"$tmp/t21.csv" <<'EOF'
app,func,end_timestamp,duration
a,f0,10.5,0.5
a,f0,71,1
a,f0,132,2
a,f1,190.25,0.25
b,f2,251,1
a,f0,310,0
EOF

for t in t19 t21; do
	expect 0 '' tune host --trace "$tmp/$t.csv" --mem 100M --cold 1s \
		--warm 0 --memory-budget 200M --json
	cp "$out" "$tmp/$t.json"
	json_check 'len(d["functions"]) == 3 and d["trace"]["functions"] == 3' "$tmp/$t.json"
	json_check '[p["cold_starts"] for p in d["policies"]] == [4, 4, 3, 4]' "$tmp/$t.json"
	json_check '[p["policy"] for p in d["policies"]] == ["ours", "hybrid-histogram", "greedy-dual", "keepalive"]' "$tmp/$t.json"
	json_check 'all(p["invocations"] == 6 for p in d["policies"])' "$tmp/$t.json"
	json_check '100 <= d["policies"][2]["mib_for_ours_cold_starts"] <= 101' "$tmp/$t.json"
	json_check '100 <= d["policies"][3]["mib_for_ours_cold_starts"] <= 101' "$tmp/$t.json"
	json_check 'd["policies"][2]["peak_mib_there"] == 100' "$tmp/$t.json"
	json_check 'd["versus_greedy_dual"]["mib_for_its_cold_starts"] is None' "$tmp/$t.json"
	json_check 'd["budget_mib"] == 200 and d["all_vms_mib"] == 300 and d["busy_peak_mib"] == 100' "$tmp/$t.json"
	json_check '[f["window_from_min"] for f in d["functions"] if f["function"] == "f0"] == [1]' "$tmp/$t.json"
done
json_check 'd["trace"]["format"] == "azure2021"' "$tmp/t21.json"

# the report, and --out's two files
expect 0 '\| greedy-dual \| 3 \|' tune host --trace "$tmp/t19.csv" \
	--mem 100M --cold 1s --warm 0 --memory-budget 200M --out "$tmp/o"
grep -q 'Against greedy-dual' "$out" || fail "no comparison line"
[ -s "$tmp/o/tune-host.json" ] && [ -s "$tmp/o/tune-host.md" ] && ok ||
	fail "--out wrote no tune-host.json or tune-host.md"
json_check 'd["tool"] == "tune host"' "$tmp/o/tune-host.json"
ls -A "$tmp/o" | grep -q '^\.' && fail "a temporary file left in --out" || ok

# written into a results directory, it is a tuner's document there:
# compare and export skip it with a note (they exited 2 on it: "no
# schema version"), and report.md gains its summary line and section
cp -r "$(dirname "$0")/../../results/reference-pvm-2core" "$tmp/r"
expect 0 '' tune host --trace "$tmp/t19.csv" --mem 100M --cold 1s \
	--warm 0 --memory-budget 200M --out "$tmp/r"
json_check 'd["bench"] == "tune-host" and d["schema"] >= 1 and "guest" not in d' \
	"$tmp/r/tune-host.json"
expect 3 'tune-host.json skipped: a tuner' compare "$tmp/r" "$tmp/r"
expect 0 '' export prometheus "$tmp/r"
grep -q 'tune-host.json skipped' "$err" && ok || fail "export's note"
expect 0 '' report "$tmp/r" --format md --out "$tmp/rep"
grep -q '^- tune host (3 functions of .*, 200 MiB): ours has 33.3 % more cold starts than greedy-dual$' \
	"$tmp/rep/report.md" && ok || fail "report.md's tune host summary line"
grep -q '^### Many guests on one host' "$tmp/rep/report.md" &&
	grep -q '^| greedy-dual | 3 | 50.0 | 200 ' "$tmp/rep/report.md" && ok ||
	fail "report.md's tune host section"

# guests: f0 in a 50 MiB guest, the rest in the default
cat >"$tmp/g.json" <<'EOF'
{"guests": [
  {"name": "small", "mem_mib": 50, "cold_ms": 1000, "hit_ms": 0,
   "functions": ["f0"]},
  {"name": "big", "mem_mib": 100, "cold_ms": 1000, "hit_ms": 0}
]}
EOF
expect 0 '' tune host --trace "$tmp/t19.csv" --guests "$tmp/g.json" \
	--memory-budget 250M --json
cp "$out" "$tmp/g.out"
json_check '[(g["name"], g["functions"]) for g in d["guests"]] == [("small", 1), ("big", 2)]' "$tmp/g.out"
json_check 'd["all_vms_mib"] == 250' "$tmp/g.out"
# all three fit in 250 MiB: nothing is evicted, greedy-dual's 3 cold starts
json_check 'd["policies"][2]["cold_starts"] == 3 and d["policies"][2]["evictions"] == 0' "$tmp/g.out"

# refusals: exit 2, one line naming the problem
b="--memory-budget 1G"
expect 2 '--trace FILE missing' tune host $b
expect 2 '--memory-budget SIZE missing' tune host --trace "$tmp/t19.csv"
printf 'timestamp\n1\n2\n' >"$tmp/plain.csv"
expect 2 'not a multi-function trace' tune host --trace "$tmp/plain.csv" $b
expect 2 'No such file' tune host --trace "$tmp/none.csv" $b
expect 2 'exclude each other' tune host --trace "$tmp/t19.csv" $b \
	--guests "$tmp/g.json" --mem 1G
expect 2 'guests .*missing.json' tune host --trace "$tmp/t19.csv" $b \
	--guests "$tmp/missing.json"
echo '{"guests": [{"name": "x", "mem_mib": 1, "cold_ms": 1, "hit_ms": 0, "functions": ["f0"]}]}' >"$tmp/g2.json"
expect 2 'function f1 is in no guest' tune host --trace "$tmp/t19.csv" $b \
	--guests "$tmp/g2.json"
[ "$(wc -l <"$err")" = 1 ] && ok || fail "a refusal took more than one line"
expect 2 '--format' tune host --trace "$tmp/t19.csv" $b --format csv
expect 2 'not an Azure 2021 header' tune host --trace "$tmp/t19.csv" $b \
	--format azure2021
expect 2 '--keepalive' tune host --trace "$tmp/t19.csv" $b --keepalive 0
expect 2 '--warm is longer than --cold' tune host --trace "$tmp/t19.csv" \
	$b --cold 1ms --warm 2ms
expect 2 '--memory-budget' tune host --trace "$tmp/t19.csv" \
	--memory-budget 1k
expect 2 '--price' tune host --trace "$tmp/t19.csv" $b --price -1
expect 0 'Usage: coldstart tune host' tune host --help
expect 0 'host' tune --help
finish
