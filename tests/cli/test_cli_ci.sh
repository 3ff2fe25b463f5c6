#!/bin/bash
# The CI wiring under docs/ci, dry-run here: the shell steps of the GitHub
# Actions workflow and of the GitLab CI job, taken from their YAML and run
# in order as a runner would (the quick suite made a smoke run of one
# driver to stay short), through a first run without a baseline, its
# promotion, an inconclusive gate (exit 3, or 0 with ALLOW_INCONCLUSIVE=1)
# and a real regression (exit 1, Markdown summary, JUnit report).
. "$(dirname "$0")/lib.sh"
COLDSTART=$(realpath "$1")
need_kvm
scratch
CI=$(realpath "$(dirname "$0")/../../docs/ci")
work=$tmp/repo
mkdir -p "$work/docs"
ln -s "$CI" "$work/docs/ci"
export COLDSTART COLDSTART_SUITE=--smoke COLDSTART_ONLY=lifecycle
# the suite's harness overhead (ns, 200 samples) is a real series but
# moves between two runs on a shared host: not what is tested here
export COLDSTART_COMPARE="--metric-threshold harness.per_sample=1000"
unset GITHUB_STEP_SUMMARY GITHUB_ACTIONS

# steps FILE: "NAME<TAB>COMMAND" for every shell step of the workflow
# (GitHub: run; GitLab: script lines, named by position).
steps() {
	python3 - "$1" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
if "jobs" in doc:
    for s in doc["jobs"]["gate"]["steps"]:
        if "run" in s:
            print("%s\t%s" % (s["name"], s["run"].strip()))
else:
    for i, line in enumerate(doc["coldstart-gate"]["script"]):
        print("%d\t%s" % (i, line))
PY
}
steps "$CI/github-actions.yml" >"$tmp/gh.steps" && steps "$CI/gitlab-ci.yml" >"$tmp/gl.steps" &&
	ok || fail "the workflow files do not parse as YAML"

# gh STEP: runs the GitHub step named STEP in the work tree; its exit code.
gh() {
	local cmd
	cmd=$(awk -F '\t' -v n="$1" '$1 == n {print $2}' "$tmp/gh.steps")
	[ -n "$cmd" ] || { fail "no GitHub step '$1'"; return 99; }
	(cd "$work" && sh -c "$cmd") >"$tmp/step.out" 2>&1
}

# Every shell step but the pull-request comment (gh needs GitHub) is
# coldstart-gate.sh's, so running those runs the workflow.
[ "$(cut -f1 "$tmp/gh.steps" | tr '\n' ' ')" = "build bench gate comment promote " ] &&
	ok || fail "GitHub steps: $(cut -f1 "$tmp/gh.steps" | tr '\n' ' ')"
grep -q $'^comment\tgh pr comment .* --body-file gate/summary.md$' "$tmp/gh.steps" &&
	ok || fail "the comment step does not post gate/summary.md"

# A push to main without a baseline: passes, and its results become it.
gh build && grep -q "using $COLDSTART" "$tmp/step.out" && ok || fail "build step: $(cat "$tmp/step.out")"
gh bench && [ -f "$work/results/lifecycle.json" ] && ok || fail "bench step: $(tail -3 "$tmp/step.out")"
gh gate && grep -q '^no baseline yet' "$work/gate/summary.md" && ok || fail "gate without a baseline: $(cat "$tmp/step.out")"
gh promote && [ -f "$work/baseline/lifecycle.json" ] && ok || fail "promote step: $(cat "$tmp/step.out")"

# A pull request: 3 samples a side decide nothing, so the gate fails
# (exit 3) unless told to let that pass; the summary says why.
rm -rf "$work/results" "$work/gate"
gh bench
gh gate
[ $? -eq 3 ] && ok || fail "inconclusive gate: $(cat "$tmp/step.out")"
grep -q '^### coldstart compare: INCONCLUSIVE$' "$work/gate/summary.md" && ok ||
	fail "summary: $(head -3 "$work/gate/summary.md")"
python3 -c "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])" "$work/gate/junit.xml" &&
	ok || fail "junit.xml is not XML"
export GITHUB_STEP_SUMMARY=$tmp/step-summary.md GITHUB_ACTIONS=true
ALLOW_INCONCLUSIVE=1 gh gate && grep -q '^::warning::benchmark gate inconclusive' "$tmp/step.out" &&
	ok || fail "ALLOW_INCONCLUSIVE=1: $(cat "$tmp/step.out")"
grep -q '^### coldstart compare: INCONCLUSIVE$' "$GITHUB_STEP_SUMMARY" && ok ||
	fail "the summary did not reach GITHUB_STEP_SUMMARY"
unset GITHUB_STEP_SUMMARY GITHUB_ACTIONS

# A real regression: 20 samples a side, NEW 30 % slower (the measured
# documents with their samples replaced, so host and config match).
python3 - "$work/baseline/lifecycle.json" "$work/results/lifecycle.json" <<'PY'
import json, math, random, sys
for path, seed, scale in ((sys.argv[1], 1, 1.0), (sys.argv[2], 2, 1.3)):
    d = json.load(open(path))
    r = random.Random(seed)
    for s in d["series"]:
        s["samples_ns"] = [round(1.5e6 * scale * math.exp(r.gauss(0, 0.02))) for _ in range(20)]
        s.pop("summary", None)
    json.dump(d, open(path, "w"))
PY
rm -f "$work/baseline/suite.json" "$work/results/suite.json"
gh gate
[ $? -eq 1 ] && ok || fail "regression gate: $(cat "$tmp/step.out")"
grep -q '^### coldstart compare: REGRESSION$' "$work/gate/summary.md" &&
	grep -q '| :x: REGRESSION beyond 5% |$' "$work/gate/summary.md" && ok ||
	fail "summary: $(cat "$work/gate/summary.md")"
python3 - "$work/gate/junit.xml" <<'PY' && ok || fail "junit.xml of a regression"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert int(s.get("failures")) >= 1
PY
[ -s "$work/gate/gh.json" ] && ok || fail "no github-action-benchmark JSON"

# GitLab's job: its script lines in order, stopping at the first failure
# as the runner does; on the default branch a pass is promoted.
rm -rf "$work/baseline" "$work/results" "$work/gate"
gl() {
	(cd "$work" && export CI_COMMIT_BRANCH=$1 CI_DEFAULT_BRANCH=main &&
		while IFS=$'\t' read -r n cmd; do
			sh -c "$cmd" || exit $?
		done <"$tmp/gl.steps") >"$tmp/step.out" 2>&1
}
gl main && [ -f "$work/baseline/lifecycle.json" ] && ok || fail "GitLab job on main: $(tail -5 "$tmp/step.out")"
gl feature; code=$?
[ $code -eq 3 ] && ok || fail "GitLab job on a branch: exit $code: $(tail -5 "$tmp/step.out")"
[ -f "$work/gate/junit.xml" ] && ok || fail "GitLab's JUnit report is missing"
grep -q 'promote' "$tmp/gl.steps" && [ "$(grep -c . "$tmp/gl.steps")" -eq 4 ] && ok ||
	fail "GitLab script lines: $(cat "$tmp/gl.steps")"

# The script itself refuses what it does not know.
(cd "$work" && docs/ci/coldstart-gate.sh frobnicate) >/dev/null 2>&1
[ $? -eq 2 ] && ok || fail "an unknown step is not a usage error"
finish
