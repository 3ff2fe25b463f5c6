#!/bin/bash
# Not a test (timings vary by host): how repeatable `coldstart tune restore`
# is on this host. Runs it RUNS times (default 10) on one snapshot and
# prints, per cache state, each run's verdict and how often the most
# frequent winner was named ("named X in K of RUNS runs"). The issue's
# target: the same winner in 9 of 10 runs when it is at least 20 % faster.
# Usage: tune_repeat.sh COLDSTART SNAPSHOT_DIR [RUNS] [TUNE OPTIONS...]
set -eu
coldstart=$1 snap=$2 runs=${3:-10}
shift $(($# < 3 ? $# : 3))
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

for i in $(seq "$runs"); do
	"$coldstart" tune restore "$snap" --json "$@" >"$dir/$i.json" 2>/dev/null
	python3 - "$dir/$i.json" "$i" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for cache, v in d["verdict"].items():
    if not isinstance(v, dict):
        continue
    r = v["ranking"]
    second = (" (next %s %+.1f %%)" % (r[1]["strategy"], 100 * r[1]["delta_vs_fastest"])
              if len(r) > 1 and r[1]["median_ns"] is not None else "")
    print("run %s %s: %s, fastest %s %.3f ms%s" % (sys.argv[2], cache, v["outcome"],
          v["fastest"], r[0]["median_ns"] / 1e6 if r[0]["median_ns"] else 0, second))
EOF
done
python3 - "$dir" "$runs" <<'EOF'
import collections, glob, json, sys
by_cache = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for cache, v in json.load(open(f))["verdict"].items():
        if isinstance(v, dict):
            by_cache[cache].append(v["winner"])
for cache, winners in by_cache.items():
    named = collections.Counter(w for w in winners if w)
    if named:
        w, k = named.most_common(1)[0]
        print("%s cache: named %s in %d of %s runs (%d runs named no winner)"
              % (cache, w, k, sys.argv[2], winners.count(None)))
    else:
        print("%s cache: no run named a winner" % cache)
EOF
