#!/bin/bash
# coldstart pool and bench pool: usage errors, a pool of fresh probe guests
# and of restored snapshots (warm and shells) serving every request with
# the right checksum, a burst larger than the pool (misses counted, none
# lost), waiting for refills, failing guests replaced, a following target,
# the marginal target with its peak rate, pool serve's idle timeout,
# bench pool's document for Poisson, MMPP and trace arrivals, and pools of
# a Linux guest's snapshot (the ring-0 test kernel, TK_ELF).
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
scratch

expect 2 'run or serve' pool
expect 2 "unknown subcommand 'frob'" pool frob
expect 2 'serve needs --socket' pool serve
expect 2 "for 'pool serve'" pool run --socket /tmp/x
expect 2 '--size 9 is above --max 4' pool run --size 9 --max 4
expect 2 'needs --snapshot' pool run --hold shell
expect 2 '--abort-every needs the probe guest' pool run --snapshot /nonexistent --abort-every 2
expect 2 'no such|No such|not found|cannot' pool run --snapshot "$tmp/none"
# A snapshot that is none is said so before KVM is opened, on any host.
mkdir "$tmp/notsnap"
expect 2 'is not a snapshot coldstart can restore' pool run --snapshot "$tmp/notsnap" --kvm /nonexistent/kvm
expect 2 'is not a snapshot coldstart can restore' bench pool --snapshot "$tmp/notsnap" --kvm /nonexistent/kvm
expect 2 "'lifo' is not" pool run --policy lifo
expect 2 'peak half-life 100000 s \(0, or at most a day\)' pool run --policy marginal --peak-halflife 100000s
expect 2 "'-1s' is not a duration" pool run --policy marginal --peak-halflife -1s
expect 0 'Usage: coldstart pool run' pool --help
# --exec runs through a guest's agent: refused for guests without one,
# before KVM is opened, and for an empty or overlong command.
expect 2 '--exec: the guest has no agent' pool run --exec true --kvm /nonexistent/kvm
expect 2 '--exec: the guest has no agent' pool run --kernel /nonexistent --exec true
expect 2 '--exec: a command of 1 to 4096 bytes, not 0' pool serve --socket "$tmp/x.sock" --exec ''
expect 2 '--exec: a command of 1 to 4096 bytes, not 4097' pool run --exec "$(head -c 4097 /dev/zero | tr '\0' x)"
expect 77 '/nonexistent/kvm' pool run --kvm /nonexistent/kvm

# Fresh probe guests held at READY: every request served and checked.
expect 0 '' pool run -n 30 --size 3 --json
json_check 'd["served"] == 30 and d["failed"] == 0 and d["stats"]["hits"] + d["stats"]["misses"] == 30 and d["stats"]["made"] >= 3 and d["stats"]["guest_failures"] == 0 and d["hit_first_run_us_p50"] > 0' "$out"
# A burst larger than the pool, back to back with one refill thread:
# misses are counted, none lost; with --on-empty wait none is a miss.
# Each VM touches 32 MiB before READY and a request 4 KiB, so refills are
# slower than requests on any host (with the defaults, the emulated
# host's Release build once served all 20 from the pool).
expect 0 '' pool run -n 20 --size 2 --init 32M --ws 4k --json
json_check 'd["served"] == 20 and d["stats"]["misses"] >= 1 and d["stats"]["made_on_demand"] == d["stats"]["misses"]' "$out"
expect 0 '' pool run -n 12 --size 2 --on-empty wait --json
json_check 'd["served"] == 12 and d["stats"]["misses"] == 0 and d["stats"]["hits"] + d["stats"]["waits"] == 12' "$out"
# Waiting for a pool that will not refill (target 0) makes its own VM
# instead of waiting forever.
expect 0 '' pool run -n 3 --size 0 --on-empty wait --json
json_check 'd["served"] == 3 and d["stats"]["misses"] == 3 and d["stats"]["waits"] == 0' "$out"
# Every 3rd VM made aborts after READY: each is counted, never handed out
# again, and its request is served by another VM.
expect 0 '' pool run -n 12 --size 2 --abort-every 3 --json
json_check 'd["served"] == 12 and d["failed"] == 0 and d["stats"]["guest_failures"] >= 2 and "did not complete" in d["stats"]["last_error"]' "$out"
# Every VM the refills make aborts: each hit fails once and is served by
# a VM made for it.
expect 0 '' pool run -n 6 --size 2 --abort-every 1 --json
json_check 'd["served"] == 6 and d["stats"]["guest_failures"] == d["stats"]["hits"] and d["stats"]["made_on_demand"] == 6' "$out"

# pool serve: SIGINT drains and exits 0, the socket removed.
timeout 60 "$COLDSTART" pool serve --socket "$tmp/p.sock" --size 1 >"$out" 2>"$err" &
pid=$!
for i in $(seq 300); do [ -S "$tmp/p.sock" ] && break; sleep 0.1; done
[ -S "$tmp/p.sock" ] && ok || fail "pool serve made no socket: $(cat "$err")"
kill -INT $pid
wait $pid
code=$?
[ "$code" = 0 ] && [ ! -e "$tmp/p.sock" ] && ok ||
	fail "SIGINT to pool serve: exit $code, socket $(ls "$tmp/p.sock" 2>&1)"

# pool serve: acquire's "exec" is checked before a VM is taken: a string
# of 1 to 4096 bytes, for a guest with an agent; a plain acquire's reply
# has no command's fields.
timeout 60 "$COLDSTART" pool serve --socket "$tmp/e.sock" --size 1 >"$tmp/e.out" 2>&1 &
pid=$!
for i in $(seq 300); do grep -q 'listening on' "$tmp/e.out" && break; sleep 0.1; done
python3 - "$tmp/e.sock" <<'PY' && ok || { fail "pool serve acquire exec"; sed 's/^/  | /' "$tmp/e.out" | tail -5; }
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
def ask(req):
    f.write(json.dumps(req) + "\n"); f.flush()
    return json.loads(f.readline())
r = ask({"op": "acquire", "exec": 5})
assert not r["ok"] and r["error"].startswith('"exec" must be a string'), r
r = ask({"op": "acquire", "exec": "x" * 4097})
assert not r["ok"] and "1 to 4096 bytes" in r["error"], r
r = ask({"op": "acquire", "exec": ""})
assert not r["ok"] and "1 to 4096 bytes" in r["error"], r
r = ask({"op": "acquire", "exec": "true"})
assert not r["ok"] and "no agent" in r["error"], r
r = ask({"op": "stats"})
assert r["stats"]["requests"] == 0, r
r = ask({"op": "acquire"})
assert r["ok"] and "status" not in r and "stdout" not in r, r
ask({"op": "drain"})
PY
wait $pid

# pool serve --idle-timeout: idle clients are closed (as many as the
# server holds: a second client process is still served meanwhile, the
# place of the one idle longest given to it), with the default jail and
# seccomp filters.
expect 2 "--idle-timeout is for 'pool serve'" pool run --idle-timeout 1s
expect 2 "--idle-timeout: '1s ' is not a duration" pool serve --socket "$tmp/i.sock" --idle-timeout '1s '
expect 2 '--idle-timeout 25h: at most a day' pool serve --socket "$tmp/i.sock" --idle-timeout 25h
expect 0 'idle-timeout DUR' pool --help
timeout 120 "$COLDSTART" pool serve --socket "$tmp/i.sock" --size 1 --idle-timeout 1s --client-conns 0 >"$tmp/i.out" 2>&1 &
pid=$!
for i in $(seq 300); do grep -q 'listening on' "$tmp/i.out" && break; sleep 0.1; done
python3 - "$tmp/i.sock" <<'PY' && ok || { fail "pool serve --idle-timeout"; sed 's/^/  | /' "$tmp/i.out" | tail -5; }
import json, select, socket, subprocess, sys
path = sys.argv[1]
def stats(s):
    s.sendall(b'{"op": "stats"}\n')
    f = s.makefile("r")
    return json.loads(f.readline())
idle = []
for _ in range(256):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    idle.append(s)
assert stats(idle[-1])["ok"], "the 256th connection is not served"
# another process, while all 256 places are taken
other = subprocess.run([sys.executable, "-c", """
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])
s.sendall(b'{"op": "stats"}\\n')
print(json.loads(s.makefile("r").readline()))
""", path], capture_output=True, text=True, timeout=60)
assert "'ok': True" in other.stdout, other.stdout + other.stderr
# every idle one is closed by the server (EOF) within 30 s
for s in idle:
    r, _, _ = select.select([s], [], [], 30)
    assert r and s.recv(1) == b"", "an idle connection stayed open"
s = socket.socket(socket.AF_UNIX)
s.connect(path)
assert stats(s)["ok"]
PY
grep -q 'no request line within the idle timeout, 1 s' "$tmp/i.out" && ok || fail "pool serve did not log the idle timeout"
kill -TERM $pid
wait $pid
code=$?
[ "$code" = 0 ] && ok || { fail "pool serve --idle-timeout exited $code"; sed 's/^/  | /' "$tmp/i.out" | tail -5; }

# pool serve --client-conns: one client process cannot take every place
# even with connections that stay busy (requests piped in, no reply
# read: each thread waits to send), its next one is refused, naming it,
# and another process is served; under the default jail, whose PID
# namespace shows every client as pid 0.
expect 2 "--client-conns is for 'pool serve'" pool run --client-conns 2
expect 2 "--client-conns: 257 is outside 0..256" pool serve --socket "$tmp/c.sock" --client-conns 257
expect 0 'client-conns N' pool --help
timeout 120 "$COLDSTART" pool serve --socket "$tmp/c.sock" --size 1 --idle-timeout 0 --client-conns 3 >"$tmp/c.out" 2>&1 &
pid=$!
for i in $(seq 300); do grep -q 'listening on' "$tmp/c.out" && break; sleep 0.1; done
python3 - "$tmp/c.sock" <<'PY' && ok || { fail "pool serve --client-conns"; sed 's/^/  | /' "$tmp/c.out" | tail -5; }
import json, socket, subprocess, sys, time
path = sys.argv[1]
busy = []
for _ in range(3):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.setblocking(False)
    # requests until the server stops reading: its reply is stuck
    full = 0
    while full < 20:
        try:
            s.send(b'{"op": "stats"}\n' * 64)
            full = 0
        except BlockingIOError:
            full += 1
            time.sleep(0.05)
    busy.append(s)
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(path)
r = json.loads(s.makefile("r").readline())
assert not r["ok"] and "has 3 connections open, the most one client may" in r["error"], r
other = subprocess.run([sys.executable, "-c", """
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])
s.sendall(b'{"op": "stats"}\\n')
print(json.loads(s.makefile("r").readline()))
""", path], capture_output=True, text=True, timeout=60)
assert "'ok': True" in other.stdout, other.stdout + other.stderr
PY
grep -q "connection refused: this client, a process outside the server's PID namespace (uid [0-9]*), has 3 connections open" "$tmp/c.out" &&
	grep -q "connection 1 opened by a process outside the server's PID namespace (uid [0-9]*)$" "$tmp/c.out" &&
	ok || fail "pool serve did not log the refusal and whom"
kill -TERM $pid
wait $pid
code=$?
[ "$code" = 0 ] && ok || { fail "pool serve --client-conns exited $code"; sed 's/^/  | /' "$tmp/c.out" | tail -5; }

# bench pool: SIGINT ends the run with 130 and says so (it once printed
# the name of its stop flag), and writes no document.
timeout 120 "$COLDSTART" bench pool --arrivals poisson:20 --duration 60s --size 1 --out "$tmp/pbint" >"$out" 2>"$err" &
pid=$!
sleep 3
kill -INT $pid
wait $pid
code=$?
[ "$code" = 130 ] && grep -q "bench pool: interrupted" "$err" && [ ! -e "$tmp/pbint/pool.json" ] && ok ||
	fail "SIGINT to bench pool: exit $code, $(tail -n 2 "$err"), $(ls "$tmp/pbint" 2>&1)"

# Snapshots restored into held VMs, warm or as shells, for two strategies.
expect 0 "" snapshot create "$tmp/snap" --mem 16M
for s in mmap eager; do
	for h in warm shell; do
		expect 0 '' pool run -n 10 --size 2 --snapshot "$tmp/snap" \
			--mem-restore $s --hold $h --json
		json_check "d['served'] == 10 and d['failed'] == 0 and d['config']['hold'] == '$h' and d['config']['mem_restore'] == '$s'" "$out"
	done
done

# With a snapshot, the baselines and the ratios the pool is judged by.
expect 0 '' bench pool --snapshot "$tmp/snap" --arrivals poisson:40 --duration 1s --size 2 --baseline 3 --json
json_check '(lambda s: len(s["baseline.fresh_restore_to_first_run"]["samples_ns"]) == 3 and len(s["baseline.shell_restore_to_first_run"]["samples_ns"]) == 3)({x["name"]: x for x in d["series"]}) and d["ratios"]["hit_first_run_vs_fresh_restore"] > 0 and d["ratios"]["fresh_restore_vs_shell_restore"] > 0' "$out"

# bench pool: Poisson arrivals open loop; the document's series, counts
# and occupancy.
expect 0 'hits' bench pool --arrivals poisson:40 --duration 1s --size 2 --out "$tmp/pb"
json_check 'd["bench"] == "pool" and d["config"]["count"] > 10 and len(d["pool"]["occupancy"]) >= 5 and d["pool"]["failed"] == 0 and d["pool"]["memory"]["held"] == 2' "$tmp/pb/pool.json"
json_check '(lambda s: len(s["refill.make"]["samples_ns"]) == d["pool"]["stats"]["made"] > 0)({x["name"]: x for x in d["series"]})' "$tmp/pb/pool.json"
json_check '(lambda n, s: len(s["arrival_to_first_run.all"]["samples_ns"]) == n and len(s["arrival_to_first_run.hit"]["samples_ns"]) + len(s["arrival_to_first_run.miss"]["samples_ns"]) == n and d["pool"]["stats"]["requests"] == n)(d["config"]["count"], {x["name"]: x for x in d["series"]})' "$tmp/pb/pool.json"
grep -q '^- hits ' "$tmp/pb/pool.md" && ok || fail "pool.md lacks the hit line"

# --config: a pool result's configuration (its size 2), every other
# option overriding it, before or after it; a malformed one is one line
# and exit 2
expect 0 '' pool run --config "$tmp/pb/pool.json" --size 1 -n 5 --json
json_check 'd["served"] == 5 and d["config"]["size"] == 1 and d["config"]["max"] == 64 and d["config"]["policy"] == "fixed"' "$out"
expect 0 '' pool run --size 1 --policy follow --config="$tmp/pb/pool.json" -n 3 --json
json_check 'd["served"] == 3 and d["config"]["size"] == 1 and d["config"]["policy"] == "follow"' "$out"
expect 0 '' bench pool --size 1 --config "$tmp/pb/pool.json" --arrivals poisson:20 --duration 200ms --json
json_check 'd["config"]["size"] == 1 and d["config"]["arrivals"] == "poisson:20" and d["pool"]["failed"] == 0' "$out"
expect 2 'give it as --config FILE or --config=FILE' pool run --conf "$tmp/pb/pool.json"
echo '{"policy": "ttl"}' >"$tmp/bad-config.json"
expect 2 "bad-config.json: field policy: --policy: 'ttl' is not one of: fixed, follow, marginal" \
	pool run --config "$tmp/bad-config.json"
expect 2 "no-such.json" bench pool --config "$tmp/no-such.json"

# tune pool on these costs prints the command that applies its
# recommendation; run as printed, it serves a request and drains.
expect 0 'Recommendation' tune pool --host "$tmp/pb" --arrivals poisson:40 \
	--duration 1m --slo hits=50% --out "$tmp/tp"
cmd=$(sed -n 's/^    coldstart pool serve /pool serve /p' "$out" | head -n 1)
[ "$cmd" = "pool serve --config $tmp/tp/tune-pool.json --socket $tmp/tp/pool.sock" ] && ok ||
	fail "tune pool printed '$cmd'"
eval "set -- $cmd"
timeout 60 "$COLDSTART" "$@" >"$tmp/tp.out" 2>&1 &
pid=$!
for i in $(seq 300); do [ -S "$tmp/tp/pool.sock" ] && break; sleep 0.1; done
python3 - "$tmp/tp/pool.sock" "$tmp/tp/tune-pool.json" <<'PY' && ok || fail "the printed pool command: $(tail -n 3 "$tmp/tp.out")"
import json, socket, sys
want = json.load(open(sys.argv[2]))["pool_config"]
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])
f = s.makefile("r")
s.sendall(b'{"op": "acquire"}\n'); a = json.loads(f.readline())
s.sendall(b'{"op": "stats"}\n'); st = json.loads(f.readline())
s.sendall(b'{"op": "drain"}\n'); f.readline()
assert a["ok"] and st["stats"]["requests"] == 1, (a, st)
assert want["policy"] in ("fixed", "follow", "marginal"), want
PY
wait $pid
code=$?
[ "$code" = 0 ] && grep -q "serving .* on $tmp/tp/pool.sock" "$tmp/tp.out" && ok ||
	fail "the printed pool command exited $code: $(tail -n 3 "$tmp/tp.out")"
# The same seed gives the same arrivals; MMPP and a trace work too.
expect 0 '' bench pool --arrivals poisson:40 --duration 1s --size 2 --json
cp "$out" "$tmp/a.json"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(0 if a["config"]["count"] == b["config"]["count"] else 1)' "$tmp/a.json" "$tmp/pb/pool.json" &&
	ok || fail "the same seed gave a different number of arrivals"
expect 0 '' bench pool --arrivals mmpp:5,80,0.3,0.2 --duration 1s --size 2 --policy follow --halflife 200ms --json
json_check 'd["config"]["policy"] == "follow" and d["pool"]["failed"] == 0' "$out"
printf 'timestamp\n0\n0.02\n0.04\n0.3\n0.31\n' >"$tmp/t.csv"
expect 0 '' bench pool --arrivals "trace:$tmp/t.csv" --duration 0 --size 2 --json
json_check 'd["config"]["count"] == 5' "$out"
# marginal with its peak rate (clustered arrivals): the pool takes it and
# serves every request; its document names the peak's half-life.
expect 0 '' bench pool --arrivals "trace:$tmp/t.csv" --duration 0 --size 0 --min 0 --policy marginal --miss-cost 10s --halflife 1s --burst-halflife 300ms --peak-halflife 10s --json
json_check 'd["config"]["policy"] == "marginal" and d["config"]["marginal"]["peak_halflife_s"] == 10 and d["pool"]["failed"] == 0 and d["pool"]["stats"]["requests"] == 5' "$out"
expect 0 '' pool run -n 8 --size 2 --policy marginal --peak-halflife 5s --json
json_check 'd["served"] == 8 and d["failed"] == 0 and d["config"]["marginal"]["peak_halflife_s"] == 5' "$out"
# A Linux guest's snapshot (taken at boot complete): each request runs it
# on to its done signal, warm and as shells, with and without a pool hit;
# bench pool names the guest by the kernel it was booted from, and its
# baselines restore the same guest.
expect 0 "" snapshot create "$tmp/lsnap" --kernel "$TK_ELF" --allow-pvm --mem 32M -q
for h in warm shell; do
	expect 0 '' pool run -n 6 --size 2 --snapshot "$tmp/lsnap" --hold $h --allow-pvm --json
	json_check "d['served'] == 6 and d['failed'] == 0 and d['stats']['guest_failures'] == 0 and d['config']['guest'] == 'linux' and d['config']['kernel'].endswith('testkernel.elf') and d['hit_first_run_us_p50'] > 0" "$out"
done
expect 0 '' bench pool --snapshot "$tmp/lsnap" --allow-pvm --arrivals poisson:20 --duration 1s --size 2 --baseline 2 --out "$tmp/lpb"
json_check "d['guest']['name'] == 'linux' and len(d['guest']['kernel']['sha256']) == 64 and d['pool']['failed'] == 0 and (lambda s: len(s['baseline.fresh_restore_to_first_run']['samples_ns']) == 2 and len(s['arrival_to_done.all']['samples_ns']) == d['config']['count'])({x['name']: x for x in d['series']})" "$tmp/lpb/pool.json"
# The same guest booted fresh and held paused at boot complete: each
# request runs it on to its done signal. Kernel errors come before KVM.
expect 0 '' pool run -n 6 --size 2 --kernel "$TK_ELF" --mem 32M --allow-pvm --json
json_check "d['served'] == 6 and d['failed'] == 0 and d['stats']['guest_failures'] == 0 and d['config']['source'] == 'linux' and d['config']['mem_bytes'] == 32 << 20 and d['hit_first_run_us_p50'] > 0" "$out"
expect 0 '' bench pool --kernel "$TK_ELF" --mem 32M --allow-pvm --arrivals poisson:20 --duration 1s --size 2 --json
json_check "d['guest']['name'] == 'linux' and d['pool']['failed'] == 0 and d['pool']['stats']['made'] >= 2" "$out"
expect 1 "pool run: kernel $tmp/none: No such file" pool run --kernel "$tmp/none" --kvm /nonexistent/kvm
expect 2 'need --kernel' pool run --cmdline x
expect 2 'one guest' pool run --kernel "$TK_ELF" --snapshot "$tmp/lsnap"
expect 2 'held warm' pool run --kernel "$TK_ELF" --hold shell
# A fresh guest that never completes its boot fails to be made, with why.
expect 1 'the guest did not signal boot complete within 1.000 s; its vCPUs made [0-9]+ exits and it wrote [0-9]+ bytes to its console' pool run -n 1 --size 1 --kernel "$TK_ELF" --mem 32M --allow-pvm --cmdline "tk.signal=none tk.exit=hang" --timeout 1s --fill-timeout 5s
expect 1 'the guest ended before it signalled boot complete: guest kernel panic' pool run -n 1 --size 1 --kernel "$TK_ELF" --mem 32M --allow-pvm --cmdline "tk.signal=none tk.exit=panic" --timeout 5s --fill-timeout 5s
# A guest that never sends its done signal fails its requests, with why.
expect 0 "" snapshot create "$tmp/lsilent" --kernel "$TK_ELF" --allow-pvm --mem 32M -q --cmdline "tk.done=none"
expect 1 'did not complete|done signal' pool run -n 1 --size 1 --snapshot "$tmp/lsilent" --allow-pvm --timeout 2s
printf 'timestamp\n0\nsoon\n' >"$tmp/bad.csv"
expect 2 'bad.csv.*line 3' bench pool --arrivals "trace:$tmp/bad.csv" --duration 0
expect 2 'poisson' bench pool --arrivals poisson:-3
expect 2 'needs a length' bench pool --arrivals poisson:5 --duration 0
finish
