#!/bin/bash
# `coldstart report` on `bench session` documents, no KVM needed: two real
# runs (fixtures/session: six diff turns merged chain:2, three full turns)
# give the Summary lines, the per-turn tables and session.csv with one row
# per turn, each checked against values computed here from the fixtures;
# the "which policy" paragraph appears with two policies and not with
# one; documents whose "turns" is missing, mistyped or holds turns of the
# wrong types are reported with "-" and never crash the report.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch
fix=$(dirname "$0")/fixtures/session
cp "$fix/diff.json" "$tmp/diff.json"
cp "$fix/full.json" "$tmp/full.json"

# The lines report.md must hold, from the fixtures' turns alone.
python3 - "$tmp" >"$tmp/expect" <<'PY'
import json, statistics, sys
d = sys.argv[1]
MiB = 1048576
for name in ("diff", "full"):
    doc = json.load(open("%s/%s.json" % (d, name)))
    turns = doc["turns"]
    for t in turns:
        merge = "%.1f" % (t["merge_ns"] / 1e6) if t["merged"] else "-"
        print("| %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %d | %s |" % (
            t["turn"], t["resume_to_first_output_ns"] / 1e6,
            t["command_ns"] / 1e6, (t["pause_ns"] + t["save_ns"]) / 1e6,
            (t["mem_bytes"] + t["disk_bytes"]) / MiB,
            t["changed_bytes"] / MiB, t["saved_per_changed"],
            t["chain_length"], merge))
    r = [t["resume_to_first_output_ns"] for t in turns]
    drift = statistics.median(r[-3:]) / statistics.median(r[:3])
    print("%d turns of %s snapshots, merge policy %s; .*drift %.2fx\\); "
          "snapshot %.2f MiB per turn \\(median\\), saved/changed %.2f; "
          "%d merges" % (len(turns), doc["config"]["snapshots"],
          doc["config"]["merge"], drift,
          statistics.median((t["mem_bytes"] + t["disk_bytes"]) / MiB
                            for t in turns),
          statistics.median(t["saved_per_changed"] for t in turns),
          sum(t["merged"] for t in turns)))
PY
expect 0 '' report "$tmp/diff.json" "$tmp/full.json" --out "$tmp/both" --format md,png -q
md=$tmp/both/report.md
while IFS= read -r line; do
	case $line in
	'|'*) grep -qxF -- "$line" "$md" && ok ||
		fail "report.md lacks the turn row '$line'" ;;
	*) grep -Eq -- "^- session.*: $line" "$md" && ok ||
		fail "report.md's Summary lacks /$line/" ;;
	esac
done <"$tmp/expect"
[ "$(grep -c '^session/chain:2,' "$tmp/both/session.csv")" = 6 ] &&
	[ "$(grep -c '^session-2/chain:8,' "$tmp/both/session.csv")" = 3 ] &&
	[ "$(wc -l <"$tmp/both/session.csv")" = 10 ] &&
	ok || fail "session.csv has one row per turn of each document"
head -1 "$tmp/both/session.csv" | grep -qx \
	'session,turn,resume_ms,command_ms,snapshot_ms,saved_mib,changed_mib,chain,merged' &&
	ok || fail "session.csv's header"
grep -qx 'session/chain:2,3,4807.169,3615.197,299.946,9.426,9.726,1,1' \
	"$tmp/both/session.csv" && ok || fail "session.csv's merged turn 3"
# full's drift is 1.00 (three turns), diff's 0.69: both within 1.20x,
# so tune session's rule takes the fewer bytes per turn: the diffs
grep -q '^Which policy: of these runs only, merge policy chain:2 (session) kept resume to first output within 1.20x of its first turns. writing the fewest bytes per turn: its last three turns over its first three 0.69x.*the rule, as tune session.s: among the policies' "$md" &&
	ok || fail "the which-policy paragraph names the pick of tune session's rule"
if command -v gnuplot >/dev/null; then
	[ -s "$tmp/both/session.png" ] && grep -qF '](session.png)' "$md" &&
		ok || fail "session.png drawn and shown"
fi
expect 0 '' report "$tmp/diff.json" --out "$tmp/one" --format md -q
! grep -q '^Which policy' "$tmp/one/report.md" && ok ||
	fail "one policy alone gets no which-policy paragraph"

# Hostile documents: turns missing, not an array, of the wrong types.
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
doc = json.load(open(d + "/diff.json"))
def write(name, turns, config=None):
    x = dict(doc)
    if turns is None:
        x.pop("turns")
    else:
        x["turns"] = turns
    if config is not None:
        x["config"] = config
    json.dump(x, open("%s/h-%s.json" % (d, name), "w"))
write("missing", None)
write("string", "six")
write("object", {"turn": 1})
write("empty", [])
write("types", [1, "two", None, [3], {"turn": "x", "resume_to_first_output_ns":
      "1", "mem_bytes": [], "merged": "yes", "merge_ns": {}},
      {"turn": 6, "merged": True}], config="chain:2")
PY
for h in missing string object empty types; do
	expect 0 '' report "$tmp/h-$h.json" --out "$tmp/out-$h" --format md -q &&
		grep -q '^- session' "$tmp/out-$h/report.md" && ok ||
		fail "a session document with $h turns is reported"
done
grep -q '^The document has no turns table' "$tmp/out-string/report.md" &&
	ok || fail "turns not an array: said so"
grep -qxF '| 2 | - | - | - | - | - | - | - | - |' "$tmp/out-types/report.md" &&
	grep -qxF '| 6 | - | - | - | - | - | - | - | - |' "$tmp/out-types/report.md" &&
	ok || fail "turns of the wrong types shown as -"
[ "$(wc -l <"$tmp/out-types/session.csv")" = 7 ] && ok ||
	fail "session.csv: a row per turn, even a broken one"
expect 0 '' report "$tmp/h-types.json" "$tmp/h-missing.json" "$tmp/full.json" \
	--out "$tmp/out-mixed" --format md -q
# bench session --kills (fixtures/session/kills.json: a real run, 10
# kills, every:2): one line on the kills survived; and, in a copy whose
# "failure" says a turn's state was lost, that line instead
grep -q '^Crash consistency' "$tmp/one/report.md" && fail "a line on kills without --kills"
cp "$fix/kills.json" "$tmp/kills.json"
expect 0 '' report "$tmp/kills.json" --out "$tmp/out-kills" --format md -q
grep -qxF "Crash consistency (--kills, seed 938357455904): the session survived 10 SIGKILLs of its turns and merges (5 finished first): 4 turns and 1 merges completed despite them, 0 temporaries of killed writers; turn 6 found every earlier turn's state." \
	"$tmp/out-kills/report.md" && ok || fail "report.md's line on the kills survived"
python3 - "$tmp/kills.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["kills"]["ok"] = False
d["kills"]["failure"] = {"kill": 7, "of": "turn", "turn": 6, "link": "/w/turn-0006",
                         "verdict": "lost", "what": "turn 6: the counter process counts 1; 6 expected"}
json.dump(d, open(sys.argv[1], "w"))
PY
expect 0 '' report "$tmp/kills.json" --out "$tmp/out-lost" --format md -q
grep -qxF "Crash consistency (--kills, seed 938357455904): the session's state was lost at kill 7 of 10 (turn 6): turn 6: the counter process counts 1; 6 expected." \
	"$tmp/out-lost/report.md" && ok || fail "report.md's line on the state lost"
finish
