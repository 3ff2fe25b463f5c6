#!/bin/bash
# `coldstart export prometheus` as a black box, no KVM and no servers
# needed: usage, missing and malformed inputs, the text checked line by
# line against the JSON it came from (the committed reference results, a
# hand-made pool result, a host name and series name built to break the
# format), the atomic textfile write, and a push nobody answers.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
REF=$(cd "$(dirname "$0")/../../results/reference-pvm-2core" && pwd)
scratch

# Usage.
expect 0 '^  export ' --help
expect 0 'Usage: coldstart export prometheus' export --help
expect 0 'Usage: coldstart export prometheus' export prometheus --help
expect 0 'Usage: coldstart export prometheus' help export
expect 2 'Usage: coldstart export' export
expect 2 "no format 'influx'" export influx "$REF"
expect 2 'needs result directories or files' export prometheus
expect 2 "unknown or incomplete option '--bogus'" export prometheus --bogus "$REF"
expect 2 "--name: '../x.prom' is not a file name" export prometheus --name ../x.prom "$REF"
expect 2 "--name: 'x.txt' is not a file name" export prometheus --name x.txt "$REF"
expect 2 '--job: the job name is empty' export prometheus --job '' "$REF"

# Missing and malformed inputs: exit 2, naming the file and the problem,
# and nothing written.
mkdir "$tmp/empty" "$tmp/bad" "$tmp/notres"
echo 'this is { not json' >"$tmp/bad/lifecycle.json"
echo '{"hello": "world"}' >"$tmp/notres/x.json"
expect 2 "cannot read $tmp/missing: No such file" export prometheus "$tmp/missing"
expect 2 "$tmp/empty holds no result documents" export prometheus "$tmp/empty"
mkdir "$tmp/never"
expect 2 "$tmp/bad/lifecycle.json is not a readable JSON document" \
	export prometheus "$REF" "$tmp/bad" --textfile-dir "$tmp/never"
[ -z "$(ls -A "$tmp/never")" ] && ok || fail "a failed export wrote into its textfile dir"
expect 2 "x.json: not a coldstart result" export prometheus "$tmp/notres/x.json"
expect 2 'give the same metric .*: the same run twice' \
	export prometheus "$REF" "$REF/lifecycle.json"

# A hand-made pool result (one series without samples) and a lifecycle
# result whose host, kernel and one series name hold quotes, backslashes,
# newlines and braces.
mkdir "$tmp/pool" "$tmp/hostile"
python3 - "$REF/lifecycle.json" "$tmp/pool/pool.json" "$tmp/hostile/lifecycle.json" <<'EOF'
import json, sys
ref = json.load(open(sys.argv[1]))
pool = {k: ref[k] for k in ("schema", "coldstart", "sysinfo", "guest")}
# a host of its own: the reference results hold a pool.json of their own
pool["sysinfo"] = dict(ref["sysinfo"], hostname="pool-host")
pool.update(bench="pool", config={"strategy": "uffd", "count": 4},
            series=[{"name": "arrival_to_first_run.all", "unit": "ns",
                     "params": {"requests": "all"},
                     "samples_ns": [2e6, 1e6, 4e6, 3e6],
                     "summary": {"p50": 2.5e6, "p90": 3.7e6, "p99": 3.97e6,
                                 "p99_9": 3.997e6}},
                    {"name": "arrival_to_first_run.miss", "unit": "ns",
                     "params": {"requests": "miss"}, "samples_ns": [],
                     "summary": None}],
            pool={"hit_ratio": 1.0, "failed": 0, "offered_rate": 50.0,
                  "refill_vms_per_s": 312.5,
                  "stats": {"hits": 4, "misses": 0, "waits": 0},
                  "memory": {"rss_kib_per_vm": 2100.5, "pss_kib_per_vm": 900,
                             "uss_kib_per_vm": 800}})
json.dump(pool, open(sys.argv[2], "w"))
ref["sysinfo"]["hostname"] = 'evil "host" \\ {x="y"}\nline2'
ref["sysinfo"]["kernel"]["release"] = '6.1\\"\n'
ref["coldstart"]["commit"] = "hostile"
ref["series"][0]["name"] = 'we"ird\\name\n{}'
json.dump(ref, open(sys.argv[3], "w"))
EOF

# check.py PROM JSON...: the text is well-formed (every family under
# one HELP and TYPE, label values unescape to the JSON's strings) and
# holds the JSON's numbers: each series' quantiles, _count and _sum in
# base units, vms_per_s, density, pool.
cat >"$tmp/check.py" <<'EOF'
import json, math, re, sys
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LINE = re.compile(r"^(%s)\{(.*)\} (\S+)$" % NAME)
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')
def unescape(v):
    return re.sub(r'\\(.)', lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), v)
fams, samples, cur = {}, {}, None
for n, line in enumerate(open(sys.argv[1]).read().split("\n")[:-1], 1):
    if line.startswith("# HELP "):
        cur = line.split(" ")[2]
        assert cur not in fams, "family %s twice (line %d)" % (cur, n)
        fams[cur] = None
        continue
    if line.startswith("# TYPE "):
        _, _, name, typ = line.split(" ")
        assert name == cur and typ in ("summary", "gauge"), line
        fams[cur] = typ
        continue
    m = LINE.match(line)
    assert m, "line %d is not a sample: %r" % (n, line)
    name, labels, value = m.groups()
    base = re.sub(r"_(sum|count)$", "", name) if fams.get(cur) == "summary" else name
    assert base == cur, "line %d: %s outside its family %s" % (n, name, cur)
    pos, lab = 0, {}
    while pos < len(labels):
        lm = LABEL.match(labels, pos)
        assert lm, "line %d: bad labels at %r" % (n, labels[pos:])
        assert lm.group(1) not in lab, "line %d: label %s twice" % (n, lm.group(1))
        lab[lm.group(1)] = unescape(lm.group(2))
        pos = lm.end()
    key = (name, tuple(sorted(lab.items())))
    assert key not in samples, "line %d: sample twice" % n
    samples[key] = float(value)
def find(name, **want):
    got = [v for (n, lab), v in samples.items() if n == name and
           all(dict(lab).get(k) == w for k, w in want.items())]
    assert len(got) == 1, "%s %s: %d samples" % (name, want, len(got))
    return got[0]
def close(a, b):
    assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), (a, b)
checked = 0
for path in sys.argv[2:]:
    d = json.load(open(path))
    host, bench = d["sysinfo"]["hostname"], d["bench"]
    ident = dict(host=host, kernel=d["sysinfo"]["kernel"]["release"],
                 guest=d["guest"]["name"],
                 guest_sha256=d["guest"]["sha256"],
                 kvm_flavour=d["sysinfo"]["kvm"]["flavour"], kvm_mode="native")
    for s in d["series"]:
        unit, div = {"ns": ("seconds", 1e9), "kib": ("bytes", 1 / 1024),
                     "vms_per_s": ("block_vms_per_second", 1),
                     "vms_per_gib": ("vms_per_gib", 1)}[s["unit"]]
        name = "coldstart_%s_%s" % (bench, unit)
        raw = s.get("samples_ns", s.get("samples"))
        lab = dict(ident, series=s["name"])
        close(find(name + "_count", **lab), len(raw))
        close(find(name + "_sum", **lab), sum(raw) / div)
        for q, k in (("0.5", "p50"), ("0.9", "p90"), ("0.99", "p99"), ("0.999", "p99_9")):
            if raw:
                close(find(name, quantile=q, **lab), s["summary"][k] / div)
        if "vms_per_s" in s:
            close(find("coldstart_%s_vms_per_second" % bench, **lab), s["vms_per_s"])
        checked += 1
    for mode, m in d.get("density", {}).items():
        close(find("coldstart_density_vms_per_gibibyte", mode=mode, **ident), m["vms_per_gib"])
        close(find("coldstart_density_marginal_bytes", mode=mode, **ident),
              m["marginal_kib_per_vm"] * 1024)
    if "pool" in d:
        p = d["pool"]
        sl = {"strategy": d["config"]["strategy"]} if d["config"].get("strategy") else {}
        close(find("coldstart_pool_hit_ratio", **sl, **ident), p["hit_ratio"])
        close(find("coldstart_pool_refill_vms_per_second", **ident), p["refill_vms_per_s"])
        close(find("coldstart_pool_requests", outcome="miss", **ident), p["stats"]["misses"])
        close(find("coldstart_pool_vm_memory_bytes", memory="rss", **ident),
              p["memory"]["rss_kib_per_vm"] * 1024)
        miss = [x for x in d["series"] if x["name"] == "arrival_to_first_run.miss"]
        assert not (miss and not miss[0]["samples_ns"]) or not [
            k for k in samples if k[0] == "coldstart_pool_seconds" and
            ("series", "arrival_to_first_run.miss") in k[1] and
            ("host", host) in k[1] and "quantile" in dict(k[1])], "quantiles of an empty series"
    find("coldstart_run_timestamp_seconds", bench=bench, **ident)
    # version and commit once per host and build, not on every sample
    close(find("coldstart_build_info", host=host, version=d["coldstart"]["version"],
               commit=d["coldstart"]["commit"]), 1)
assert not [k for k in samples if k[0] != "coldstart_build_info" and
            {"version", "commit"} & set(dict(k[1]))], "version or commit on a sample"
print("checked %d series in %d families" % (checked, len(fams)))
EOF

# check PROM JSON...: check.py, counted.
check() {
	if python3 "$tmp/check.py" "$@" >"$tmp/check.out" 2>&1; then
		ok
	else
		fail "the text in $1 does not match its JSON:"
		sed 's/^/  | /' "$tmp/check.out" | tail -5
	fi
}

# promtool PROM: Prometheus' own check of the text, when installed
# (./run.sh test installs it; the export test proves it with servers).
promcheck() {
	if ! command -v promtool >/dev/null; then
		echo "note: promtool not installed; its check left to the export tests"
	elif promtool check metrics <"$1" >"$tmp/promtool.out" 2>&1; then
		ok
	else
		fail "promtool check metrics refused $1:"
		sed 's/^/  | /' "$tmp/promtool.out" | head -5
	fi
}

expect 0 '' export prometheus "$REF" "$tmp/pool" "$tmp/hostile/lifecycle.json"
cp "$out" "$tmp/all.prom"
check "$tmp/all.prom" "$REF"/*.json "$tmp/pool/pool.json" "$tmp/hostile/lifecycle.json"
promcheck "$tmp/all.prom"
grep -q '^# EOF' "$tmp/all.prom" && fail "an OpenMetrics '# EOF' in the Prometheus text" || ok

# The textfile: written whole under its name, no temporary file left, a
# second export replaces it (a new file renamed over it, not rewritten
# in place).
tf=$tmp/textfile/sub
# node_exporter reads only its own directory: one that does not exist is
# a usage error (a typo), not made
expect 2 "export: --textfile-dir $tf: No such file or directory" export prometheus "$REF" --textfile-dir "$tf"
[ ! -e "$tmp/textfile" ] && ok || fail "--textfile-dir made a directory"
mkdir -p "$tf"
expect 0 '' export prometheus "$REF" --textfile-dir "$tf"
[ ! -s "$out" ] && ok || fail "--textfile-dir also wrote stdout"
[ "$(ls -A "$tf")" = coldstart.prom ] && ok || fail "textfile dir holds: $(ls -A "$tf")"
expect 0 '' export prometheus "$REF"
cmp -s "$out" "$tf/coldstart.prom" && ok || fail "the textfile differs from stdout"
inode=$(stat -c %i "$tf/coldstart.prom")
expect 0 '' export prometheus "$REF/rate.json" --textfile-dir "$tf"
expect 0 '' export prometheus "$REF/rate.json"
cmp -s "$out" "$tf/coldstart.prom" && ok || fail "the second textfile is not the rate export alone"
[ "$(stat -c %i "$tf/coldstart.prom")" != "$inode" ] && ok || fail "the textfile was rewritten in place"
[ "$(ls -A "$tf")" = coldstart.prom ] && ok || fail "textfile dir holds: $(ls -A "$tf")"
check "$tf/coldstart.prom" "$REF/rate.json"
expect 0 '' export prometheus "$REF/boot.json" --textfile-dir "$tf" --name boot.prom
[ "$(ls -A "$tf" | tr '\n' ' ')" = "boot.prom coldstart.prom " ] && ok || fail "--name: $(ls -A "$tf")"
touch "$tmp/plainfile"
expect 2 "export: --textfile-dir $tmp/plainfile/dir: Not a directory" export prometheus "$REF" --textfile-dir "$tmp/plainfile/dir"
expect 2 "export: --textfile-dir $tmp/plainfile: not a directory" export prometheus "$REF" --textfile-dir "$tmp/plainfile"

# A push nobody answers, and one to a scheme that is not HTTP: exit 1
# with curl's reason and the group's URL.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
expect 1 "pushing to http://127.0.0.1:$port/metrics/job/coldstart/instance/vm: .*(connect|refused)" \
	export prometheus "$REF/rate.json" --push "http://127.0.0.1:$port"
expect 1 'pushing to file:///tmp/metrics/job/j/instance/vm: .*(Protocol|protocol)' \
	export prometheus "$REF/rate.json" --push file:///tmp --job j

finish
