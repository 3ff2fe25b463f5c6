#!/bin/bash
# `coldstart bench ab`: one driver as A and B in interleaved blocks (A B,
# then B A), the samples pooled per side into a.json and b.json, gated as
# compare gates; a failing block names its side and log; --until-decided
# stops when decided or when its budget is spent. Needs KVM (lifecycle).
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
need_kvm
scratch
L=(lifecycle -n 4 -w 1 --mode in-process)

expect 0 'Usage: coldstart bench ab' bench ab --help
expect 0 '^  ab ' bench --help
expect 2 'needs a driver' bench ab --blocks 2
expect 2 "'suite' cannot be run as A and B" bench ab -- suite
expect 2 "--blocks: 0 is outside 1..100000" bench ab --blocks 0 -- "${L[@]}"

# Two blocks a side with one binary: 8+8 samples per series, whatever
# the verdict (0 or 3 on a shared host; never a refusal).
timeout 120 "$COLDSTART" bench ab --blocks 2 --out "$tmp/ab" -- "${L[@]}" >"$out" 2>"$err"
code=$?
[ $code -eq 0 ] || [ $code -eq 3 ] || [ $code -eq 1 ] && ok || fail "bench ab exited $code: $(cat "$err")"
grep -q '^bench ab: blocks done' "$out" && grep -q '^lifecycle: BASE A, NEW B' "$out" &&
	grep -qE '^inproc\.coldstart .* 8\+8 ' "$out" && ok || fail "bench ab table: $(cat "$out")"
json_check '[len(s["samples_ns"]) for s in d["series"]] == [8, 8] and all("summary" not in s for s in d["series"])' "$tmp/ab/a.json"
json_check '[len(s["samples_ns"]) for s in d["series"]] == [8, 8]' "$tmp/ab/b.json"
# interleaved: A B, then B A
t() { stat -c %.9Y "$tmp/ab/$1.log"; }
python3 -c "import sys; a0, b0, b1, a1 = map(float, sys.argv[1:]); sys.exit(0 if a0 < b0 < b1 < a1 else 1)" \
	"$(t a-000)" "$(t b-000)" "$(t b-001)" "$(t a-001)" && ok || fail "blocks not in the order A B, B A"
# the pooled documents are what compare reads
expect "$code" '' compare "$tmp/ab/a.json" "$tmp/ab/b.json"

# One side's options break its driver: named, with its log.
expect 2 "block 0 of B exited 2 \\(see $tmp/ab2/b-000.log\\)" bench ab --blocks 1 --out "$tmp/ab2" --b-opts '--no-such-option' -- "${L[@]}"
grep -q 'no-such-option' "$tmp/ab2/b-000.log" && ok || fail "the failing block's log"

# --format: compare's Markdown and JUnit writers for the pair, headed
# bench ab, with what A and B ran; the progress line goes to stderr.
expect 2 "--format: 'yaml' is not one of" bench ab --format yaml -- "${L[@]}"
timeout 120 "$COLDSTART" bench ab --blocks 1 --format markdown --out "$tmp/abm" --b-opts '-w 2' -- "${L[@]}" >"$out" 2>"$err"
code=$?
[ $code -ne 2 ] && grep -qE '^### coldstart bench ab: (no regression|INCONCLUSIVE|REGRESSION)$' "$out" &&
	grep -q "^\`lifecycle\`, A: \`.*coldstart bench\`; B: \`.*coldstart bench\` with \`-w 2\`; interleaved in blocks on one host (blocks done, 1 per side)$" "$out" &&
	grep -qE '^\| inproc\.coldstart \| .* \| 4\+4 \| ' "$out" && ok || fail "bench ab --format markdown: $(cat "$out" "$err")"
grep -q '^bench ab: blocks done' "$err" && ! grep -q '^bench ab: blocks done' "$out" && ok || fail "the progress line is not on stderr"
timeout 120 "$COLDSTART" bench ab --blocks 1 --format junit --out "$tmp/abj" -- "${L[@]}" >"$out" 2>"$err"
[ $? -eq "$(python3 - "$out" <<'PY'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
assert s.get("name") == "coldstart bench ab", s.get("name")
t = s.find("testsuite")
assert int(t.get("tests")) == 2 and [c.get("classname") for c in t.iter("testcase")] == ["coldstart.lifecycle"] * 2
print(1 if int(t.get("failures")) else 3 if int(t.get("errors")) else 0)
PY
)" ] && ok || fail "bench ab --format junit: $(cat "$out" "$err")"

# --until-decided ends, decided or out of budget, and says which.
timeout 120 "$COLDSTART" bench ab --blocks 2 --until-decided --budget 1s --out "$tmp/ab3" -- "${L[@]}" >"$out" 2>"$err"
grep -qE '^bench ab: (decided|budget spent), ' "$out" && ok || fail "--until-decided: $(cat "$out" "$err")"
finish
