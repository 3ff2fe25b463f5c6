#!/bin/bash
# `coldstart export prometheus` against the real servers from Debian's
# packages, started here on loopback ports picked here, with their own
# config and storage in a temporary directory (never the packages'
# services, ports or files):
#   node_exporter's textfile collector reads what --textfile-dir wrote,
#   a Pushgateway takes what --push sent, and a Prometheus server scrapes
#   both every second; its HTTP API must then give the numbers the JSON
#   holds, and label values built to break the format must come back
#   unchanged. Exit 77 when the servers are not installed (./run.sh test
#   installs them).
# Usage: test_export_servers.sh COLDSTART
set -u
COLDSTART=$1
REF=$(cd "$(dirname "$0")/../../results/reference-pvm-2core" && pwd)
for b in prometheus promtool prometheus-node-exporter prometheus-pushgateway; do
	if ! command -v "$b" >/dev/null; then
		echo "skipping: $b is not installed (Debian packages prometheus," \
			"prometheus-node-exporter, prometheus-pushgateway)"
		exit 77
	fi
done

pass=0
failed=0
pids=()
tmp=$(mktemp -d)
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
ok() { pass=$((pass + 1)); }
fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}

# Three free loopback ports: bound to port 0 at once, so they differ.
read -r prom_port node_port gw_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in ss))')

# wait_http URL WHAT: up to 30 s for URL to answer 200.
wait_http() {
	local i
	for i in $(seq 300); do
		curl -fs -o /dev/null "$1" && return 0
		sleep 0.1
	done
	fail "$2 did not answer on $1 within 30 s"
	sed 's/^/  | /' "$tmp/$2.log" | tail -5
	return 1
}

# The hostile result: a copy of the reference lifecycle result whose host
# name, kernel and one series name hold quotes, backslashes, a newline,
# braces and UTF-8, measured (so it says) at another commit.
mkdir -p "$tmp/hostile" "$tmp/textfile"
HOSTILE='evil "host" \ {x="y"}
line2 ü'
HOSTILE_SERIES='we"ird\name
{}'
HOSTILE="$HOSTILE" HOSTILE_SERIES="$HOSTILE_SERIES" python3 - "$REF/lifecycle.json" "$tmp/hostile/lifecycle.json" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
d["sysinfo"]["hostname"] = os.environ["HOSTILE"]
d["sysinfo"]["kernel"]["release"] = '6.1\\"\n'
d["coldstart"]["commit"] = "hostile"
d["series"][0]["name"] = os.environ["HOSTILE_SERIES"]
json.dump(d, open(sys.argv[2], "w"))
EOF

# export ARGS...: coldstart export prometheus ARGS, which must succeed.
export_ok() {
	if timeout 60 "$COLDSTART" export prometheus "$@" >"$tmp/export.out" 2>&1; then
		ok
	else
		fail "coldstart export prometheus $* failed:"
		sed 's/^/  | /' "$tmp/export.out" | head -5
	fi
}

# promtool accepts both texts.
for input in "$REF" "$tmp/hostile/lifecycle.json"; do
	"$COLDSTART" export prometheus "$input" >"$tmp/check.prom"
	if promtool check metrics <"$tmp/check.prom" >"$tmp/promtool.out" 2>&1; then
		ok
	else
		fail "promtool check metrics refused the export of $input:"
		sed 's/^/  | /' "$tmp/promtool.out" | head -5
	fi
done

export_ok "$REF" --textfile-dir "$tmp/textfile"
export_ok "$tmp/hostile" --textfile-dir "$tmp/textfile" --name hostile.prom

prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$tmp/textfile" >"$tmp/node.log" 2>&1 &
pids+=($!)
prometheus-pushgateway --web.listen-address="127.0.0.1:$gw_port" \
	--persistence.file="$tmp/pushgateway.data" >"$tmp/gateway.log" 2>&1 &
pids+=($!)
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$node_port']
  - job_name: pushgateway
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$gw_port']
EOF
prometheus --config.file="$tmp/prometheus.yml" \
	--storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$node_port/metrics" node || { echo "$pass passed, $failed failed"; exit 1; }
wait_http "http://127.0.0.1:$gw_port/-/ready" gateway || { echo "$pass passed, $failed failed"; exit 1; }
wait_http "http://127.0.0.1:$prom_port/-/ready" prometheus || { echo "$pass passed, $failed failed"; exit 1; }

# node_exporter read both files without an error.
curl -fs "http://127.0.0.1:$node_port/metrics" >"$tmp/node.metrics"
grep -q '^node_textfile_scrape_error 0$' "$tmp/node.metrics" && ok ||
	fail "node_exporter's textfile collector failed: $(grep -i 'textfile' "$tmp/node.metrics" | head -3)"

# The Pushgateway: a push per host, under the gateway's base64 form for
# the hostile host; a push to a path it does not serve fails with its
# HTTP status.
export_ok "$REF/rate.json" "$REF/density.json" "$tmp/hostile/lifecycle.json" \
	--push "http://127.0.0.1:$gw_port/" --job coldstart-test
grep -q "^pushed to http://127.0.0.1:$gw_port/metrics/job/coldstart-test/instance/vm$" \
	"$tmp/export.out" && ok || fail "no push of host vm: $(cat "$tmp/export.out")"
grep -q "instance@base64/" "$tmp/export.out" && ok || fail "the hostile host was not pushed as base64"
timeout 60 "$COLDSTART" export prometheus "$REF/rate.json" \
	--push "http://127.0.0.1:$gw_port/nowhere" >"$tmp/export.out" 2>&1
code=$?
[ "$code" -eq 1 ] && grep -q 'HTTP status 404' "$tmp/export.out" && ok ||
	fail "a push to a wrong path exited $code: $(cat "$tmp/export.out")"

# Prometheus' answers against the JSON: each instant query is polled
# (up to 30 s for the first scrapes) until it gives exactly one series,
# whose value must equal the JSON's number converted to base units and
# whose labels must be the JSON's strings, however hostile. Prints each
# answer and "N passed, M failed".
cat >"$tmp/queries.py" <<'EOF'
import json, os, sys, time, urllib.parse, urllib.request
port, ref = sys.argv[1], sys.argv[2]
def load(name):
    return json.load(open(os.path.join(ref, name)))
def series(doc, name):
    return [s for s in doc["series"] if s["name"] == name][0]
life, rate, dens, rest = (load(n + ".json") for n in ("lifecycle", "rate", "density", "restore"))
p50 = series(life, "inproc.coldstart")["summary"]["p50"] / 1e9
n = len(series(life, "inproc.coldstart")["samples_ns"])
w2 = series(rate, "inproc.w2")["vms_per_s"]
gib = dens["density"]["fresh"]["vms_per_gib"]
ref_commit = life["coldstart"]["commit"]
p99 = series(rest, "uffd/mem64M/ws16M/cold/request")["summary"]["p99"] / 1e9
host, name = os.environ["HOSTILE"], os.environ["HOSTILE_SERIES"]
node = 'job="node",host="vm"'
gw = 'job="coldstart-test",host="vm",instance="vm"'
checks = [
    ('coldstart_lifecycle_seconds{%s,series="inproc.coldstart",quantile="0.5"}' % node,
     lambda v, m: v == p50 and m["kvm_flavour"] == "pvm" and m["kvm_mode"] == "native"
     and m["mode"] == "in-process" and m["guest"] == "probe"),
    ('coldstart_lifecycle_seconds_count{%s,series="inproc.coldstart"}' % node,
     lambda v, m: v == n),
    ('coldstart_rate_vms_per_second{%s,series="inproc.w2"}' % node,
     lambda v, m: v == w2 and m["workers"] == "2"),
    ('coldstart_density_vms_per_gibibyte{%s,mode="fresh"}' % node,
     lambda v, m: v == gib),
    ('coldstart_restore_seconds{%s,strategy="uffd",mem_bytes="67108864",cache="cold",'
     'phase="request",quantile="0.99"}' % node, lambda v, m: v == p99),
    # the build once per host, joined where wanted
    ('coldstart_build_info{%s}' % node,
     lambda v, m: v == 1 and m["version"] == "0.1.0" and m["commit"] == ref_commit),
    # the hostile labels came through the textfile unchanged
    ('coldstart_lifecycle_seconds_count{job="node",mode="in-process",impl="coldstart"}'
     ' * on(host) group_left(version, commit) coldstart_build_info{job="node",commit="hostile"}',
     lambda v, m: v == n and m["host"] == host
     and m["series"] == name and m["kernel"] == '6.1\\"\n' and m["commit"] == "hostile"),
    # and through the Pushgateway, whose instance is the host
    ('coldstart_rate_vms_per_second{%s,series="inproc.w2"}' % gw, lambda v, m: v == w2),
    ('coldstart_density_vms_per_gibibyte{%s,mode="fresh"}' % gw, lambda v, m: v == gib),
    ('coldstart_lifecycle_seconds_count{job="coldstart-test",mode="in-process",'
     'impl="coldstart"} * on(host) group_left(commit) '
     'coldstart_build_info{job="coldstart-test",commit="hostile"}',
     lambda v, m: v == n and m["instance"] == m["host"] == host),
]
passed = failed = 0
deadline = time.time() + 30
for expr, check in checks:
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr}))
    while True:
        res = json.load(urllib.request.urlopen(url, timeout=10))["data"]["result"]
        if res or time.time() > deadline:
            break
        time.sleep(0.5)
    if len(res) != 1:
        print("FAIL: query %s: %d series" % (expr, len(res)))
        failed += 1
        continue
    m, v = res[0]["metric"], res[0]["value"][1]
    print(json.dumps({"query": expr, "value": v, "labels": m}, ensure_ascii=False))
    if check(float(v), m):
        passed += 1
    else:
        print("FAIL: query %s: the answer differs from the JSON" % expr)
        failed += 1
print("%d passed, %d failed" % (passed, failed))
EOF
HOSTILE="$HOSTILE" HOSTILE_SERIES="$HOSTILE_SERIES" \
	python3 "$tmp/queries.py" "$prom_port" "$REF" >"$tmp/answers" 2>&1
sed 's/^/  /' "$tmp/answers"
read -r qpass _ qfail _ < <(tail -1 "$tmp/answers")
if [ "${qpass:-}" -gt 0 ] 2>/dev/null && [ "${qfail:-1}" -eq 0 ]; then
	pass=$((pass + qpass))
else
	fail "Prometheus' answers (above) do not match the JSON"
fi

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
