#!/bin/bash
# bench_ab_drift.sh COLDSTART [BLOCKS] [TRIALS] [KEEP] [WORK]: how many
# samples per side the gate needs to decide a change of about 5 % in one
# series, with `bench ab` (A and B interleaved in blocks of 10 on this
# host) and with two separate runs (all of one side, then all of the
# other) gated by `compare`, side by side. A benchmark, not a test: it
# prints a table and fails only when a command does.
#
# The change is real, in the probe guest of `bench boot`; WORK picks it:
#   init     (default) `--init 40M` (A) against `--init 42M` (B): 5 % more
#            memory written before READY, so phase.ready grows by about
#            5 % (a series whose samples spread by about 10 %);
#   compute  `--compute 20000000` against `21000000`: 5 % more spin
#            iterations after READY, so phase.done grows by about 5 % (a
#            CPU-bound series whose samples spread by 1-2 %, so that the
#            drift between runs, not the noise within one, dominates).
# Each trial runs BLOCKS blocks a side (default 30) both ways; the
# separate runs go A then B in odd trials and B then A in even ones (a
# baseline taken at another time may drift either way). Then, for n =
# 10, 20, ... samples per side, the first n of each side (for bench ab:
# its first n/10 blocks, in the order they ran) are gated with compare
# --threshold 2 (so that a 5 % change can be decided: it must come out
# significant and beyond 2 %). Per trial, "needed" is the least n from
# which the series' verdict stays "regressed", the right one (">N" when
# it never does); "at N" is the verdict on all of them, and the medians'
# ratio over all samples the change each way measured (a drift between
# separate runs adds to it). Over all trials, the last lines give each
# way's least n from which at least 80 % of the trials (rounded up), and
# then all of them, are right at every n, and the ratio of the two. KEEP: a directory the
# trials' documents stay in (default: a temporary one, removed).
set -euo pipefail
bin=$(realpath "$1")
blocks=${2:-30}
trials=${3:-1}
if [ -n "${4:-}" ]; then
	tmp=$4
	mkdir -p "$tmp"
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi
work=${5:-init}
case $work in
init)
	drv=(boot -w 2 --init 40M) a=() b=(--init 42M) series=phase.ready ;;
compute)
	drv=(boot -w 2 --compute 20000000) a=() b=(--compute 21000000)
	series=phase.done ;;
*)
	echo "bench_ab_drift.sh: WORK is init or compute, not '$work'" >&2
	exit 2 ;;
esac
per=10

verdicts() { # DIR: the table row's cells for the trial in DIR; each
	# n's verdicts both ways in DIR/verdicts.json
	python3 - "$bin" "$1" "$per" "$series" <<'PY'
import json, os, statistics, subprocess, sys
bin, d, per, SERIES = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def load(p):
    doc = json.load(open(p))
    for s in doc["series"]:
        s.pop("summary", None)
    return doc

def cut(doc, n, path):
    doc = json.loads(json.dumps(doc))
    for s in doc["series"]:
        s["samples_ns"] = s["samples_ns"][:n]
    json.dump(doc, open(path, "w"))

def decided(a, b, n):
    cut(a, n, d + "/cut-a.json")
    cut(b, n, d + "/cut-b.json")
    r = subprocess.run([bin, "compare", "--format", "json", "--force",
                        "--threshold", "2", d + "/cut-a.json",
                        d + "/cut-b.json"], capture_output=True, text=True)
    if r.returncode == 2:
        sys.exit("compare: " + r.stderr)
    rows = {s["name"]: s for s in json.loads(r.stdout)["series"]}
    return rows[SERIES]["verdict"]

every = {}

def needed(a, b, way):
    most = min(len(s["samples_ns"]) for doc in (a, b) for s in doc["series"]
               if s["name"] == SERIES)
    ns = list(range(per, most + 1, per))
    v = [decided(a, b, n) for n in ns]
    every[way] = dict(zip(ns, v))
    for i in range(len(ns)):
        if all(x == "regressed" for x in v[i:]):
            return "%d | %s" % (ns[i], v[-1])
    return ">%d | %s" % (most, v[-1])

def ratio(a, b):
    m = [statistics.median(next(s for s in doc["series"]
                                if s["name"] == SERIES)["samples_ns"])
         for doc in (a, b)]
    return "%+.1f %%" % (100 * (m[1] / m[0] - 1))

ab = [load(d + "/ab/a.json"), load(d + "/ab/b.json")]
sep = [load(d + "/sep-a/boot.json"), load(d + "/sep-b/boot.json")]
print("| %s | %s | %s | %s |" % (needed(*ab, "ab"), ratio(*ab),
                                 needed(*sep, "separate"), ratio(*sep)))
json.dump(every, open(d + "/verdicts.json", "w"))
PY
}

summary() { # DIR...: each way's n for 80 % of the trials right, and all
	python3 - "$@" <<'PY'
import json, math, sys
trials = [json.load(open(d + "/verdicts.json")) for d in sys.argv[1:]]
ns = sorted(int(n) for n in trials[0]["ab"])
right = {}
for way in ("ab", "separate"):
    right[way] = [sum(t[way][str(n)] == "regressed" for t in trials) for n in ns]
    print("%s: right in %s of %d trials at n = %s" % (
        "bench ab" if way == "ab" else "separate runs",
        "/".join(str(r) for r in right[way]), len(trials),
        "/".join(str(n) for n in ns)))
for want in sorted({math.ceil(0.8 * len(trials)), len(trials)}):
    least = {way: next((ns[i] for i in range(len(ns))
                        if all(r >= want for r in right[way][i:])), None)
             for way in right}
    fmt = lambda n: str(n) if n else ">%d" % ns[-1]
    ratio = ""
    if least["ab"] and least["separate"]:
        ratio = "; separate/ab %.1fx" % (least["separate"] / least["ab"])
    elif least["ab"]:
        ratio = "; separate/ab above %.1fx" % (ns[-1] / least["ab"])
    print("samples per side for the right verdict in %d of %d trials: "
          "bench ab %s, separate runs %s%s" % (want, len(trials),
          fmt(least["ab"]), fmt(least["separate"]), ratio))
PY
}

echo "bench ab against two separate runs: $blocks blocks of $per samples a side," \
	"$trials trial(s), $series of bench ${drv[*]} (A) and ${b[*]} (B)" >&2
rows=() dirs=()
for t in $(seq "$trials"); do
	d=$tmp/$t
	mkdir -p "$d"
	echo "trial $t: bench ab" >&2
	"$bin" bench ab --blocks "$blocks" --out "$d/ab" --b-opts "${b[*]}" \
		-- "${drv[@]}" -n "$per" >"$d/ab.out" 2>"$d/ab.err" || [ $? -ne 2 ] ||
		{ cat "$d/ab.err" >&2; exit 1; }
	echo "trial $t: separate runs" >&2
	for side in $( ((t % 2)) && echo a b || echo b a); do
		if [ "$side" = a ]; then opts=("${a[@]}"); else opts=("${b[@]}"); fi
		"$bin" bench "${drv[@]}" "${opts[@]}" -n $((blocks * per)) \
			--out "$d/sep-$side" >/dev/null 2>&1
	done
	rows+=("$(verdicts "$d")")
	dirs+=("$d")
done

echo "| bench ab: samples per side to stay regressed | bench ab: at $((blocks * per)) | bench ab: B/A medians | separate: samples per side to stay regressed | separate: at $((blocks * per)) | separate: B/A medians |"
echo "|---:|---|---:|---:|---|---:|"
printf '%s\n' "${rows[@]}"
summary "${dirs[@]}"
