#!/bin/bash
# The CLI end to end on a host with KVM: runs, results, failures, files.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
need_kvm
scratch

expect 0 'checksum: 0x[0-9a-f]{16} \(matches the prediction' run
for ev in 'process start' '/dev/kvm opened' 'VM created' 'memory ready' \
	'vCPUs ready' 'first KVM_RUN' 'guest READY' 'guest DONE' 'teardown done'; do
	grep -q "$ev" "$out" || fail "timeline lacks '$ev'"
done
expect 0 'VMM overhead \(USS - guest\) [0-9]+ KiB' run --vcpus 2 --init 4M --ws 8M \
	--pattern random --op write --compute 10000
expect 0 'matches the prediction' run --ws 4M --pattern stride --stride 3 --mem-backend memfd
expect 0 'matches the prediction' run --cpuid host --vcpus 3 --init 2M
expect 0 'matches the prediction' run --ws 4k --pattern random
expect 0 '' run --json --init 2M --ws 4M
cp "$out" "$tmp/run.json"
json_check 'd["success"] and d["checksum_ok"] and d["checksum"] == d["expected_checksum"] and d["pages_touched"] == 1024 and d["timeline_ns"]["done"] > d["timeline_ns"]["ready"] > 0 and d["memory"]["guest_rss_kib"] >= 2048' "$tmp/run.json"
expect 0 '' run --quiet --stop-at ready
[ -s "$out" ] && fail "--quiet printed to stdout"

# Guest misbehaviour: a clear reason and exit 1.
expect 1 'guest aborted on vCPU 0 with code 42' run --misbehave abort
expect 1 'unclaimed 4-byte write of port 0x99' run --misbehave bad-port
expect 1 'guest shut down' run --misbehave fault
expect 1 'timed out after 0.300 s' run --misbehave hang --timeout 300ms
expect 1 '"outcome": "failed"' run --json --misbehave abort

# Ctrl-C stops a hung guest cleanly.
timeout 30 "$COLDSTART" run --misbehave hang --timeout 0 >"$out" 2>"$err" &
pid=$!
wait_catching $pid 2
sleep 0.2 # past the handler, into the hung guest
kill -INT $pid
wait $pid
code=$?
if [ "$code" -eq 1 ] && grep -q 'interrupted by a signal' "$err"; then
	ok
else
	echo "FAIL: SIGINT to a hung run: exit $code"; cat "$err"
	failed=$((failed + 1))
fi

# Hugetlb without reserved pages: the host cannot run it (77).
if [ "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)" -eq 0 ]; then
	expect 77 'nr_hugepages' run --mem-backend hugetlb
fi

# The benchmark writes complete results.
expect 0 'results written to' bench lifecycle -n 3 -w 1 --out "$tmp/res"
json_check 'd["bench"] == "lifecycle" and len(d["series"]) == 4 and all(len(s["samples_ns"]) == 3 and s["summary"]["p50"] > 0 for s in d["series"]) and d["sysinfo"]["kvm"]["flavour"] and d["memory"]["vmm_overhead_kib"] > 0' "$tmp/res/lifecycle.json"
if grep -q '| in-process | coldstart |' "$tmp/res/lifecycle.md"; then
	ok
else
	echo "FAIL: lifecycle.md lacks the table"; failed=$((failed + 1))
fi
expect 0 '"series"' bench lifecycle -n 2 -w 0 --mode in-process --json
cp "$out" "$tmp/inproc.json"
json_check '[s["name"] for s in d["series"]] == ["inproc.coldstart", "inproc.floor"]' "$tmp/inproc.json"
expect 0 '' bench floor -n5
# An unwritable output directory is an error, not a crash.
expect 1 'creating /proc/coldstart' bench lifecycle -n 1 -w 0 --mode in-process --out /proc/coldstart/x
finish
