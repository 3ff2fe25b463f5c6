#!/bin/bash
# tune session's refusals that need no guest: each one error line naming
# the problem, exit 2, before any snapshot is read or turn runs.
# Usage: test_cli_tune_session.sh COLDSTART
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch

expect 0 'Recommends, among the policies' tune session --help
expect 2 'tune session: --snapshot DIR is needed' tune session
expect 2 '--turns: 0 is outside' tune session --snapshot "$tmp" --turns 0
expect 2 "--policies: --merge 'bogus': expected never, every:K" \
	tune session --snapshot "$tmp" --policies never,bogus
expect 2 '--merge: 0 is outside 1..32' tune session --snapshot "$tmp" \
	--policies chain:0
expect 2 '--policies: chain:4 is named twice' tune session \
	--snapshot "$tmp" --policies chain:4,never,chain:4
expect 2 "--policies 'never,': an empty policy" tune session \
	--snapshot "$tmp" --policies never,
expect 2 "--policies '': an empty policy" tune session \
	--snapshot "$tmp" --policies ""
expect 2 '--policies never keeps every diff' tune session \
	--snapshot "$tmp" --turns 33 --policies chain:8,never
expect 2 '--exec: an empty command' tune session --snapshot "$tmp" --exec ''
expect 2 "--strategy: 'nosuch' is not one of" tune session --snapshot "$tmp" --strategy nosuch
# not a snapshot: refused before any KVM is opened, nothing written
expect 2 "tune session: $tmp is not a snapshot" tune session \
	--snapshot "$tmp" --out "$tmp/out"
[ ! -e "$tmp/out" ] || fail "a refused tune session wrote $tmp/out"
# Its document written into a results directory (tune session --out
# DIR) is a tuner's document there, as tune-restore.json is: compare and
# export skip it with a note, and report.md gains a summary line and a
# section from it. Before, each policy's series had the same name, so
# report, compare and export refused the whole directory ("series
# 'resume_to_first_output' appears twice"). The document is made here as
# the tuner makes it, from a real session's turns (no guest runs here).
cp -r "$(dirname "$0")/../../results/reference-pvm-2core" "$tmp/r"
python3 - "$(dirname "$0")/fixtures/session/diff.json" "$tmp/r" <<'PY'
import copy, json, statistics, sys
s = json.load(open(sys.argv[1]))
doc = {k: s[k] for k in ("schema", "coldstart", "sysinfo", "warnings",
                         "skipped", "seccomp", "guest")}
doc["bench"] = "tune-session"
doc["config"] = {"snapshot": s["config"]["snapshot"], "turns": 6,
                 "policies": ["never", "chain:2"]}
doc["series"], doc["candidates"] = [], []
for policy, drift, per_turn in (("never", 1.31, 6.0e6), ("chain:2", 0.69, 9.5e6)):
    turns = s["turns"]
    r = [t["resume_to_first_output_ns"] for t in turns]
    doc["series"].append({"name": "%s/resume_to_first_output" % policy,
                          "unit": "ns", "better": "lower",
                          "params": {"merge": policy, "per": "turn"},
                          "samples_ns": r})
    doc["candidates"].append({
        "merge": policy, "resume_drift": drift,
        "resume_median_ns": statistics.median(r),
        "bytes_written_per_turn": per_turn,
        "merges": 0 if policy == "never" else sum(t["merged"] for t in turns),
        "merge_ns_total": 0 if policy == "never" else
            sum(t["merge_ns"] for t in turns),
        "within_target": drift <= 1.2, "turns": copy.deepcopy(turns)})
doc["recommendation"] = {"merge": "chain:2", "met_target": True,
                         "target_drift": 1.2, "rule": "the rule"}
json.dump(doc, open(sys.argv[2] + "/tune-session.json", "w"))
PY
expect 3 'tune-session.json skipped: a tuner' compare "$tmp/r" "$tmp/r"
expect 0 '' export prometheus "$tmp/r"
grep -q 'tune-session.json skipped' "$err" && ok || fail "export's note"
expect 0 '' report "$tmp/r" --format md --out "$tmp/rep"
grep -q '^- tune session (6 turns per policy, 2 policies): --merge chain:2, drift 0.69x, 9.06 MiB written per turn$' \
	"$tmp/rep/report.md" && ok || fail "report.md's tune session summary line"
grep -q '^### Session merge policy' "$tmp/rep/report.md" &&
	grep -Eq '^\| never \| 1.31x \| [0-9.]+ \| 5.72 \| 0 \| 0.0 \| no \|$' "$tmp/rep/report.md" &&
	grep -q '^Recommended: `--merge chain:2`' "$tmp/rep/report.md" && ok ||
	fail "report.md's tune session section"
finish
