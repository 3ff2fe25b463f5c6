#!/bin/bash
# `coldstart probe` and `coldstart run --probes` end to end: exit codes,
# the breakdown, the JSON "probes" object, "not observed" for events that
# never fired. Skips (77) where the probes cannot run.
. "$(dirname "$0")/../cli/lib.sh"
COLDSTART=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"; [ -n "${sleeper:-}" ] && kill $sleeper 2>/dev/null' EXIT

# Usage errors come first: they need neither BPF nor KVM.
expect 0 'Usage: coldstart probe' probe --help
expect 2 'give either --pid N or -- COMMAND' probe
expect 2 'give either --pid N or -- COMMAND' probe --pid 1 -- true
expect 2 'not a duration' probe --pid 1 --duration soon
expect 1 'no process 2147483000' probe --pid 2147483000
# The parser's error and the help texts name the same probes (the table's).
expect 2 "'nosuch' is not a probe: give default, all or a list of kvmexit, " probe --pid 1 --probes nosuch
names=$(sed -n 's/.* or a list of //p' "$err" | tr -d ' ')
expect 0 "^ +of $names\$" probe --help
expect 0 "^ +$names\$" run --help

if [ ! -c /dev/kvm ]; then
	echo "skipping the rest: no /dev/kvm"
	finish || exit 1
	exit 77
fi
timeout 60 "$COLDSTART" run --probes -q >/dev/null 2>"$err"
if [ $? -eq 77 ]; then
	echo "skipping the rest: $(cat "$err")"
	finish || exit 1
	exit 77
fi

# run --probes: 16 MiB first-touched = 4096 guest faults before READY;
# port-I/O exits equal the ucalls; MMIO never fires for this guest.
expect 0 '' run --probes --json --init 16M
cp "$out" "$tmp/run.json"
json_check '4096 <= d["probes"]["faults"]["guest"] <= 4096 + 256' "$tmp/run.json"
json_check 'd["probes"]["exits"]["by_kind"]["pio_out"] + d["probes"]["exits"]["by_kind"]["pio_in"] == d["ucalls"] == 5' "$tmp/run.json"
json_check 'd["probes"]["tracepoints"]["kvm:kvm_mmio"]["attached"] and d["probes"]["tracepoints"]["kvm:kvm_mmio"]["count"] is None and d["probes"]["tracepoints"]["kvm:kvm_mmio"]["status"] == "not observed on this host" and d["probes"]["exits"]["by_kind"]["mmio_write"] is None' "$tmp/run.json"
json_check '[p for p in d["probes"]["phases"] if p["name"] == "boot"][0]["guest_faults"] >= 4096' "$tmp/run.json"
json_check 'd["probes"]["ioctls"]["KVM_CREATE_VM"]["count"] == 1 and d["probes"]["ioctls"]["KVM_RUN"]["count"] >= 5' "$tmp/run.json"
json_check 'sum(1 for t in d["probes"]["threads"] if t["vcpu"]) == 1' "$tmp/run.json"
expect 0 'not observed on this host: .*kvm:kvm_mmio' run --probes --init 4M
expect 0 'guest memory faults \(kvmmmu:kvm_mmu_spte_requested\): 10[0-9][0-9] ' run --probes --init 4M
expect 0 'by phase:' run --probes --init 4M

# probe -- COMMAND: observed from its first instruction.
expect 0 '' probe --json -- "$COLDSTART" run -q --vcpus 2
cp "$out" "$tmp/probe.json"
json_check 'd["command"] == "probe" and d["probes"]["exits"]["by_kind"]["pio_out"] == 10 and d["probes"]["ioctls"]["KVM_CREATE_VCPU"]["count"] == 2' "$tmp/probe.json"
# memfd: 4 KiB pages on any host (anonymous memory got transparent huge
# pages in the emulated host, and one fault per 2 MiB)
expect 0 '' probe --csv "$tmp/faults.csv" -- "$COLDSTART" run -q --init 2M --mem-backend memfd
if [ "$(grep -c ',guest,' "$tmp/faults.csv")" -ge 512 ] && head -1 "$tmp/faults.csv" | grep -q '^time_ms,kind,tid,addr,dur_us$'; then
	pass=$((pass + 1))
else
	echo "FAIL: the fault CSV lacks 512 guest faults"; head -3 "$tmp/faults.csv"
	failed=$((failed + 1))
fi
# probe.csv_never_follows_links: --csv FILE was opened with fopen "w",
# writing through a symlink left at FILE (a file elsewhere clobbered);
# it is now a new file beside FILE renamed over it, replacing the link.
echo victim >"$tmp/victim"
ln -s victim "$tmp/linked.csv"
expect 0 '' probe --csv "$tmp/linked.csv" -- "$COLDSTART" run -q --init 2M --mem-backend memfd
if [ "$(cat "$tmp/victim")" = victim ] && [ ! -L "$tmp/linked.csv" ] &&
   head -1 "$tmp/linked.csv" | grep -q '^time_ms,kind,'; then
	pass=$((pass + 1))
else
	echo "FAIL: probe --csv wrote through a link: $(head -c 40 "$tmp/victim")"
	failed=$((failed + 1))
fi
expect 1 'probe: false exited with 1' probe -- false

# Without permission to load BPF (an unprivileged user): 77 and why.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$COLDSTART" run --probes >"$out" 2>"$err"
	code=$?
	if [ "$code" -eq 77 ] && grep -q 'not permitted' "$err"; then
		pass=$((pass + 1))
	else
		echo "FAIL: run --probes as nobody: exit $code"; cat "$err"
		failed=$((failed + 1))
	fi
fi

# The overhead benchmark runs pairs and reports each span (numbers are
# measured, not judged: timing has no place in pass/fail tests).
expect 0 '' bench probes -n 2 -w 0 --init 2M --json
cp "$out" "$tmp/overhead.json"
json_check 'd["bench"] == "probes" and d["config"]["pairs"] == 2 and [s["span"] for s in d["spans"]] == ["start", "boot", "vm"] and all(len(s["with_ns"]) == 2 and s["without"]["p50"] > 0 for s in d["spans"])' "$tmp/overhead.json"
expect 0 '' bench probes -n 1 -w 0 --init 2M --attach matched --json
cp "$out" "$tmp/matched.json"
json_check 'd["config"]["attach"] == "matched" and all(len(s["with_ns"]) == 1 for s in d["spans"])' "$tmp/matched.json"
expect 2 "'frobs' is not a probe" bench probes --probes kvmexit,frobs

# probe --pid: a process that is no VMM shows no KVM events at all.
sleep 30 &
sleeper=$!
expect 0 '' probe --json --pid $sleeper --duration 200ms
cp "$out" "$tmp/sleep.json"
json_check 'd["probes"]["faults"]["guest"] is None and d["probes"]["exits"]["by_kind"]["pio_out"] is None and d["probes"]["ioctls"] is None' "$tmp/sleep.json"
# Ctrl-C ends observing and prints the breakdown.
timeout 30 "$COLDSTART" probe --pid $sleeper >"$out" 2>"$err" &
pid=$!
wait_catching $pid 2
kill -INT $pid
wait $pid
code=$?
if [ "$code" -eq 0 ] && grep -q "probes: process $sleeper observed" "$out"; then
	pass=$((pass + 1))
else
	echo "FAIL: SIGINT to probe --pid: exit $code"; cat "$out" "$err" | head -5
	failed=$((failed + 1))
fi

# bench lifecycle --probes: the in-process series (coldstart and the floor,
# 3 warmup + 4 counted cycles each) creates exactly 14 VMs in this process.
expect 0 'results written to' bench lifecycle -n 4 -w 3 --mode in-process --probes --out "$tmp/lc"
json_check 'd["probes"]["ioctls"]["KVM_CREATE_VM"]["count"] == 14 and d["probes"]["ioctls"]["KVM_CREATE_VCPU"]["count"] == 14' "$tmp/lc/lifecycle.json"
if grep -q 'Where the time goes' "$tmp/lc/lifecycle.md"; then
	pass=$((pass + 1))
else
	echo "FAIL: lifecycle.md lacks the probes section"; failed=$((failed + 1))
fi
expect 2 "'nosuchprobe' is not a probe" bench lifecycle -n 1 --probes=nosuchprobe
finish
