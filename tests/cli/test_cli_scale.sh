#!/bin/bash
# `coldstart report` and `compare` on large documents, no KVM needed
# (tests/scale/gen_result.py makes them): 5,000 series each of the
# lifecycle, restore and rate shapes report with every series, every
# restore row and every rate mode present; compare matches two documents
# of 5,000 series and compares 10^6 samples per side; the permutation test
# refuses more than 20,000 samples in all, naming the series (exit 2);
# the reference results' report is the committed one, row for row.
# The ctest TIMEOUT (120 s; this takes about 30 s on a loaded machine)
# is the guard against quadratic paths: the report of 2,500 series once
# took 158 s, of 5,000 over 300 s, and compare's bootstrap of 10^6
# samples minutes.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch
gen="python3 $(dirname "$0")/../scale/gen_result.py"

for b in lifecycle restore rate; do
	$gen "$tmp/$b.json" --bench "$b" --series 5000 --samples 20
	expect 0 "" report "$tmp/$b.json" --format md --out "$tmp/$b" -q
done

# every series in series.csv and in lifecycle's tables, every sample in
# cdf.csv
n=$(grep -c '^lifecycle,lifecycle,s0' "$tmp/lifecycle/series.csv")
[ "$n" = 5000 ] && ok || fail "series.csv has $n lifecycle series, not 5000"
n=$(grep -c '^| s0' "$tmp/lifecycle/report.md")
[ "$n" = 5000 ] && ok || fail "report.md has $n series rows, not 5000"
n=$(grep -c ',s0' "$tmp/lifecycle/cdf.csv")
[ "$n" = 100000 ] && ok || fail "cdf.csv has $n samples, not 100000"

# restore: a row per strategy, cache and size the generator made
want=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(len({(s["params"]["strategy"], s["params"]["cache"],
            s["params"]["mem_bytes"], s["params"]["ws_bytes"])
           for s in d["series"]}))' "$tmp/restore.json")
n=$(($(wc -l <"$tmp/restore/restore.csv") - 1))
[ "$n" = "$want" ] && ok || fail "restore.csv has $n rows, not $want"

# rate: the peak of each of the 625 modes on the Summary's sustained line
n=$(grep -m1 'sustained: peak' "$tmp/rate/report.md" | grep -o ' mode[0-9]* ' |
	sort -u | wc -l)
[ "$n" = 625 ] && ok || fail "the sustained peaks name $n modes, not 625"

# compare: 5,000 series matched by name (no verdict is asked for here)
$gen "$tmp/new.json" --series 5000 --samples 20 --seed 2
expect 0 "" compare "$tmp/lifecycle.json" "$tmp/new.json" --threshold 1000 \
	--json
json_check 'len(d["series"]) == 5000 and not d["only_base"]' "$out"

# 10^6 samples per side: the order-statistic interval of the median
$gen "$tmp/big-base.json" --series 1 --samples 1000000
$gen "$tmp/big-new.json" --series 1 --samples 1000000 --seed 2 --shift 1.01
expect 0 "\+1\.0[0-9]%.*within 5%" compare "$tmp/big-base.json" \
	"$tmp/big-new.json"

# the permutation test's bound: 12,001 + 8,000 samples are one too many
$gen "$tmp/p-base.json" --series 1 --samples 12001
$gen "$tmp/p-new.json" --series 1 --samples 8000 --seed 2
expect 2 "series 's000000': 20001 samples .* more than the permutation test takes \(20000" \
	compare "$tmp/p-base.json" "$tmp/p-new.json" --test permutation
$gen "$tmp/p-new.json" --series 1 --samples 7999 --seed 2
expect 0 "" compare "$tmp/p-base.json" "$tmp/p-new.json" --test permutation
# the reference results report as committed: the same CSV files and the
# same report.md but for the images (gnuplot's, left out with md alone)
root=$(cd "$(dirname "$0")/../.." && pwd)
(cd "$root" && "$COLDSTART" report results/reference-pvm-2core --format md \
	--out "$tmp/ref" -q) && ok || fail "report of the reference results"
for f in series.csv cdf.csv restore.csv rate.csv density.csv; do
	cmp -s "$root/results/reference-pvm-2core/$f" "$tmp/ref/$f" && ok ||
		fail "the reference results' $f differs from the committed one"
done
if diff <(grep -v '^!\[' "$root/results/reference-pvm-2core/report.md" |
	  cat -s) <(grep -v '^!\[' "$tmp/ref/report.md" | cat -s) >/dev/null; then
	ok
else
	fail "the reference results' report.md differs from the committed one"
fi
finish
