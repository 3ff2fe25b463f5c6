#!/bin/bash
# bench_ab_drift.sh COLDSTART [BLOCKS] [TRIALS] [KEEP]: how many samples per
# side the gate needs to decide a change of about 5 % in one series, with
# `bench ab` (A and B interleaved in blocks of 10 on this host) and with
# two separate runs (all of A, then all of B) gated by `compare`, side by
# side. A benchmark, not a test: it prints a table and fails only when a
# command does.
#
# The change is real: `bench boot` of the probe guest with `--init 40M`
# (A) and `--init 42M` (B: 5 % more memory written before READY, both
# whole 2 MiB pages), so phase.ready grows by about 5 % and no other
# phase changes (total grows by less). Each trial runs BLOCKS blocks a side (default 30) both ways;
# then, for n = 10, 20, ... samples per side, the first n of each side
# (for bench ab: its first n/10 blocks, in the order they ran) are gated
# with compare --threshold 2 (so that a 5 % change can be decided: it
# must come out significant and beyond 2 %). "needed" is the least n
# from which phase.ready's verdict stays "regressed", the right one
# (">N" when it never does); "at N" is the verdict on all of them, and
# the medians' ratio over all samples the change each way measured (a
# drift between separate runs adds to it). KEEP: a directory the trials'
# documents stay in (default: a temporary one, removed).
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
drv=(boot -w 2 --init 40M)
a=() b=(--init 42M)
per=10

verdicts() { # DIR: the table row's cells for the trial in DIR
	python3 - "$bin" "$1" "$per" <<'PY'
import json, os, statistics, subprocess, sys
bin, d, per = sys.argv[1], sys.argv[2], int(sys.argv[3])
SERIES = "phase.ready"

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

def needed(a, b):
    most = min(len(s["samples_ns"]) for doc in (a, b) for s in doc["series"]
               if s["name"] == SERIES)
    ns = list(range(per, most + 1, per))
    v = [decided(a, b, n) for n in ns]
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
print("| %s | %s | %s | %s |" % (needed(*ab), ratio(*ab), needed(*sep),
                                 ratio(*sep)))
PY
}

echo "bench ab against two separate runs: $blocks blocks of $per samples a side," \
	"$trials trial(s), phase.ready of bench boot, --init 40M (A) and 42M (B)" >&2
rows=()
for t in $(seq "$trials"); do
	d=$tmp/$t
	mkdir -p "$d"
	echo "trial $t: bench ab" >&2
	"$bin" bench ab --blocks "$blocks" --out "$d/ab" --b-opts "${b[*]}" \
		-- "${drv[@]}" -n "$per" >"$d/ab.out" 2>"$d/ab.err" || [ $? -ne 2 ] ||
		{ cat "$d/ab.err" >&2; exit 1; }
	echo "trial $t: separate runs" >&2
	"$bin" bench "${drv[@]}" "${a[@]}" -n $((blocks * per)) --out "$d/sep-a" >/dev/null 2>&1
	"$bin" bench "${drv[@]}" "${b[@]}" -n $((blocks * per)) --out "$d/sep-b" >/dev/null 2>&1
	rows+=("$(verdicts "$d")")
done

echo "| bench ab: samples per side to stay regressed | bench ab: at $((blocks * per)) | bench ab: B/A medians | separate: samples per side to stay regressed | separate: at $((blocks * per)) | separate: B/A medians |"
echo "|---:|---|---:|---:|---|---:|"
printf '%s\n' "${rows[@]}"
