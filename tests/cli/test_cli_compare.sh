#!/bin/bash
# `coldstart compare` as a black box, no KVM needed: result files are
# generated here (lognormal samples with a fixed seed), then exit codes,
# the '~' marker, refusals, error messages and both export formats.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch
dir=$tmp

# gen FILE [key=value...]: a lifecycle-like result. Keys: seed, n, shift
# (applied to inproc.coldstart), host, cpu, flavour, mem, bench, schema,
# emulated (sysinfo schema 2's kvm.emulated label; empty: null).
gen() {
	python3 - "$@" <<'EOF'
import json, math, random, sys
path, args = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
n = int(args.get("n", 20))
rnd = random.Random(int(args.get("seed", 1)))
def samples(median):
    return [round(median * math.exp(rnd.gauss(0, 0.03))) for _ in range(n)]
doc = {
    "schema": int(args.get("schema", 1)), "bench": args.get("bench", "lifecycle"),
    "config": {"guest": "probe", "mem_bytes": int(args.get("mem", 2097152)),
               "vcpus": 1, "count": n, "warmup": 2},
    "sysinfo": {"schema": 1, "hostname": args.get("host", "hostA"),
                "cpu": {"model": args.get("cpu", "AMD EPYC")},
                "kvm": {"flavour": args.get("flavour", "vmx")}},
    "series": [
        {"name": "inproc.coldstart", "mode": "in-process", "impl": "coldstart",
         "unit": "ns", "samples_ns": samples(1.5e6 * (1 + float(args.get("shift", 0))))},
        {"name": "inproc.floor", "mode": "in-process", "impl": "bare ioctls",
         "unit": "ns", "samples_ns": samples(1.2e6)},
    ],
    "memory": None,
}
if "emulated" in args:
    doc["sysinfo"]["schema"] = 2
    doc["sysinfo"]["kvm"]["emulated"] = args["emulated"] or None
json.dump(doc, open(path, "w"), indent=1)
EOF
}

gen "$dir/base.json" seed=1
gen "$dir/aa.json" seed=2
gen "$dir/slow.json" seed=3 shift=0.2
gen "$dir/fast.json" seed=4 shift=-0.2
gen "$dir/other-host.json" seed=2 host=hostB
gen "$dir/other-cpu.json" seed=2 cpu="Intel Xeon"
gen "$dir/other-kvm.json" seed=2 flavour=pvm
gen "$dir/other-mem.json" seed=2 mem=4194304
gen "$dir/more.json" seed=5 n=40
gen "$dir/rate.json" seed=2 bench=rate
gen "$dir/schema7.json" seed=2 schema=7
echo '{"schema": 1, "bench": "lifecycle", "series": []}' >"$dir/empty.json"
echo 'this is { not json' >"$dir/garbage.json"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
for s in d['series']:
    s['name'] = 'renamed.' + s['name']
json.dump(d, open(sys.argv[2], 'w'))" "$dir/aa.json" "$dir/renamed.json"
B=$dir/base.json

# Usage.
expect 0 'Usage: coldstart compare BASE.json NEW.json' compare --help
expect 0 'Usage: coldstart compare' help compare
expect 0 '^  compare ' --help
expect 2 'needs two result files' compare "$B"
expect 2 "unexpected argument 'extra'" compare "$B" "$B" extra
expect 2 "--threshold: 'lots' is not a percentage" compare "$B" "$B" --threshold lots
expect 2 "--threshold: '-1' is not a percentage" compare "$B" "$B" --threshold -1
expect 2 "--alpha: '2' is not a probability" compare "$B" "$B" --alpha 2
expect 2 "'floor' is not NAME=PCT" compare "$B" "$B" --metric-threshold floor
expect 2 'not one of: utest, permutation' compare "$B" "$B" --test ttest
expect 2 "unknown or incomplete option '--bogus'" compare "$B" "$B" --bogus

# Missing or malformed inputs: exit 2, naming the file and the problem.
expect 2 "cannot read $dir/missing.json: No such file" compare "$B" "$dir/missing.json"
# A FIFO where a result should be is an error, not a wait for a writer.
mkfifo "$dir/fifo.json"
expect 2 "cannot read $dir/fifo.json: not a regular file" compare "$B" "$dir/fifo.json"
expect 2 "garbage.json is not JSON" compare "$dir/garbage.json" "$B"
expect 2 "schema7.json: result schema version 7 is not supported" compare "$B" "$dir/schema7.json"
expect 2 'empty.json: no "series"' compare "$B" "$dir/empty.json"
expect 2 "no common series" compare "$B" "$dir/renamed.json"
expect 2 "different benches: 'lifecycle' vs 'rate'" compare "$B" "$dir/rate.json"
expect 2 "different benches" compare "$B" "$dir/rate.json" --force

# Different hosts or configurations: refused unless --force.
expect 2 "different hosts: hostname 'hostA' vs 'hostB'; use --force" compare "$B" "$dir/other-host.json"
expect 2 "different hosts: CPU model 'AMD EPYC' vs 'Intel Xeon'" compare "$B" "$dir/other-cpu.json"
expect 2 "different hosts: KVM flavour 'vmx' vs 'pvm'" compare "$B" "$dir/other-kvm.json"
expect 2 "config.mem_bytes 2097152 vs 4194304" compare "$B" "$dir/other-mem.json"
expect 0 "comparing anyway \(--force\): different hosts" compare "$B" "$dir/other-host.json" --force
# An emulated host against a native one: refused (exit 2, as any results
# that are not comparable), also when the native side's sysinfo predates
# the label; --force compares with a warning. Two results of one emulated
# host compare, with a reminder that their timings are functional.
gen "$dir/emu.json" seed=2 emulated=qemu-tcg-svm
gen "$dir/emu2.json" seed=3 emulated=qemu-tcg-svm
gen "$dir/native2.json" seed=2 emulated=
gen "$dir/emu-other.json" seed=2 emulated=other-emu
expect 2 "not comparable: one was measured inside an emulated host and the other not: BASE native, NEW emulated: qemu-tcg-svm .*; use --force" compare "$B" "$dir/emu.json"
expect 2 "BASE emulated: qemu-tcg-svm, NEW native" compare "$dir/emu.json" "$dir/native2.json"
expect 2 "NEW emulated: other-emu" compare "$dir/emu.json" "$dir/emu-other.json"
expect 0 "warning: comparing anyway \\(--force\\): one was measured inside an emulated host" compare "$B" "$dir/emu.json" --force
expect 0 "no regression" compare "$B" "$dir/emu.json" --force
expect 0 "both results were measured inside an emulated host \\(qemu-tcg-svm\\)" compare "$dir/emu.json" "$dir/emu2.json"
expect 0 "no regression" compare "$B" "$dir/native2.json"
expect 0 "no regression" compare "$B" "$dir/other-mem.json" --force
# Another sample count is the same configuration.
expect 0 " 20\+40$" compare "$B" "$dir/more.json"

# Verdicts and the '~' marker.
expect 0 'no regression in 2 series' compare "$B" "$B"
expect 0 '^inproc\.coldstart +[0-9.]+ ms ± [0-9]+% +[0-9.]+ ms ± [0-9]+% +~ +1\.000 +20\+20$' compare "$B" "$B"
expect 0 '^inproc\.floor .* ~ ' compare "$B" "$dir/aa.json"
expect 1 'REGRESSION in 1 of 2 series: inproc\.coldstart \(\+[0-9.]+%\)' compare "$B" "$dir/slow.json"
expect 1 '^inproc\.coldstart .* \+[12][0-9]\.[0-9]+% +0\.000 +20\+20 +REGRESSION beyond 5%$' compare "$B" "$dir/slow.json"
expect 1 'REGRESSION' compare "$B" "$dir/slow.json" --test permutation
expect 0 '^inproc\.coldstart .* -[12][0-9]\.[0-9]+% .*improved beyond 5%$' compare "$B" "$dir/fast.json"
# A practical threshold above the shift, globally or for that series.
expect 0 'within 30%' compare "$B" "$dir/slow.json" --threshold 30
expect 0 'within 30%' compare "$B" "$dir/slow.json" --metric-threshold 'inproc.cold*=30%'
expect 1 'REGRESSION' compare "$B" "$dir/slow.json" --metric-threshold 'inproc.floor=30'
# A stricter alpha than any p these samples reach.
expect 0 'no regression' compare "$B" "$dir/slow.json" --alpha 1e-12

# Exports describe NEW; written even when the gate fails.
expect 1 'REGRESSION' compare "$B" "$dir/slow.json" --export-github "$dir/gh.json" --export-gobench "$dir/go.txt"
json_check 'isinstance(d, list) and [e["name"] for e in d] == ["lifecycle/inproc.coldstart", "lifecycle/inproc.floor"] and all(e["unit"] == "ms" for e in d)' "$dir/gh.json"
python3 - "$dir/gh.json" "$dir/slow.json" <<'EOF' && ok || fail "github values are not NEW's medians in ms"
import json, statistics, sys
gh, new = (json.load(open(p)) for p in sys.argv[1:])
want = [statistics.median(s["samples_ns"]) / 1e6 for s in new["series"]]
sys.exit(0 if all(abs(e["value"] - w) < 1e-9 for e, w in zip(gh, want)) else 1)
EOF
if [ "$(grep -cE '^BenchmarkLifecycle/inproc\.coldstart 1 [0-9]+ ns/op$' "$dir/go.txt")" -eq 20 ] &&
	[ "$(grep -cE '^BenchmarkLifecycle/inproc\.floor 1 [0-9]+ ns/op$' "$dir/go.txt")" -eq 20 ] &&
	grep -q '^pkg: coldstart/lifecycle$' "$dir/go.txt" &&
	grep -q '^cpu: AMD_EPYC$' "$dir/go.txt"; then
	ok
else
	echo "FAIL: Go benchmark export"
	sed 's/^/  | /' "$dir/go.txt" | head -8
	failed=$((failed + 1))
fi
first=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['series'][0]['samples_ns'][0])" "$dir/slow.json")
if grep -q "^BenchmarkLifecycle/inproc.coldstart 1 $first ns/op\$" "$dir/go.txt"; then
	ok
else
	echo "FAIL: Go benchmark export lacks NEW's first sample $first"
	failed=$((failed + 1))
fi
expect 1 "cannot|No such file" compare "$B" "$B" --export-github "$dir/no/such/dir/gh.json"
# --json: the verdicts, machine-readable, with the same exit codes.
timeout 60 "$COLDSTART" compare "$B" "$dir/slow.json" --json >"$dir/verdicts.json" 2>/dev/null
[ $? -eq 1 ] && ok || fail "compare --json exit code"
json_check 'd["bench"] == "lifecycle" and d["regressions"] == 1 and [(r["name"], r["verdict"]) for r in d["series"]] == [("inproc.coldstart", "regressed"), ("inproc.floor", "same")] and 0.15 < d["series"][0]["delta"] < 0.25 and d["series"][0]["p"] < 0.01 and d["series"][0]["n_new"] == 20' "$dir/verdicts.json"
timeout 60 "$COLDSTART" compare "$B" "$dir/aa.json" --json >"$dir/aa-verdicts.json" 2>/dev/null
[ $? -eq 0 ] && ok || fail "compare --json A/A exit code"
json_check 'd["regressions"] == 0 and all(r["verdict"] != "regressed" for r in d["series"])' "$dir/aa-verdicts.json"
finish
