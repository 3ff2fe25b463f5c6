#!/bin/bash
# --jail DIR: a jailed run of the probe guest, restores of a snapshot by
# uffd and mmap, a Linux boot and a pool server (jailed by default) all
# succeed, and what the jailed VMM sees (test hook COLDSTART_JAIL_SELFTEST
# =FILE, written right after entering the jail) is the jail: the given
# uid and gid, no capabilities, no_new_privs, PID 1, only `lo`, no host
# file, its own /proc; cgroup limits are joined and removed after.
# Usage: test_cli_jail.sh COLDSTART TESTKERNEL_ELF
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
scratch

# the usage errors come before KVM is touched
expect 2 "--jail $tmp/none: No such file or directory" run --jail "$tmp/none"
need_kvm
ulimit -c 0

# sees FILE KEY VALUE: the selftest's line KEY=VALUE.
sees() {
	if grep -qx "$2=$3" "$1"; then
		ok
	else
		fail "the jailed VMM saw $2=$(sed -n "s/^$2=//p" "$1"), not $3"
		sed 's/^/  | /' "$1"
	fi
}

# the jail's view, for each command
check_view() { # FILE UID GID
	[ -s "$1" ] || { fail "the jailed VMM wrote no $1"; return; }
	sees "$1" uid "$2"
	sees "$1" gid "$3"
	sees "$1" pid 1
	sees "$1" net lo
	sees "$1" host_file ENOENT
	sees "$1" caps 0000000000000000
	sees "$1" no_new_privs 1
	sees "$1" proc_self ok
}

# empty_after DIR: the jail's directory is left as it was given, empty.
empty_after() {
	if [ -d "$1" ] && [ -z "$(ls -A "$1")" ]; then ok; else
		fail "$1 is not left empty: $(ls -A "$1" 2>&1)"; fi
}

mkdir "$tmp/j"
COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 '' run --jail "$tmp/j" --uid 12345 --gid 23456 --json
json_check 'd["success"] and d["memory"] is not None and d["memory"]["rss_kib"] > 0' "$out"
cp "$out" "$tmp/jailed.json"
check_view "$tmp/see" 12345 23456
sees "$tmp/see" cgroup none
empty_after "$tmp/j"
# the same document as an unjailed run, keys and checksum alike
expect 0 '' run --json
python3 - "$tmp/jailed.json" "$out" <<'PY' && ok || fail "jailed and unjailed documents differ in keys or checksum"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
def keys(d, p=""):
    return {p + k for k in d} | {x for k, v in d.items() if isinstance(v, dict) for x in keys(v, p + k + ".")}
sys.exit(0 if keys(a) == keys(b) and a["checksum"] == b["checksum"] else 1)
PY
# the default ids, nobody
rm -f "$tmp/see"
COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 'checksum: 0x[0-9a-f]{16} \(matches the prediction' run --jail "$tmp/j"
check_view "$tmp/see" 65534 65534
# cgroup limits: joined, the cgroups removed after
rm -f "$tmp/see"
COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 '' run --jail "$tmp/j" --cpus 1.5 --memory 512M --json
json_check 'd["success"]' "$out"
sees "$tmp/see" cgroup joined
left=$(find /sys/fs/cgroup -name 'coldstart-*' 2>/dev/null)
[ -z "$left" ] && ok || fail "cgroups left after the run: $left"

. "$(dirname "$0")/jail_nested.sh"
nested_cgroups
# a guest that fails still fails through the parent, with its code
expect 1 'run failed' run --jail "$tmp/j" --misbehave abort -q

# DIR in a parent like /tmp (sticky, world-writable), and named with a
# trailing slash: both fine
mkdir "$tmp/sticky" && chmod 1777 "$tmp/sticky" && mkdir "$tmp/sticky/j"
expect 0 'checksum: 0x[0-9a-f]{16} \(matches the prediction' run --jail "$tmp/sticky/j/"
empty_after "$tmp/sticky/j"
# DIR is looked up once, at the checks: swapped for a link to / after
# them (while the jailed VMM waits to open its console, a FIFO), the
# jail is still the directory checked, not the host's root
mkdir -p "$tmp/swap/j" && mkfifo "$tmp/con"
rm -f "$tmp/see"
COLDSTART_JAIL_SELFTEST=$tmp/see "$COLDSTART" run --kernel "$TK_ELF" --mem 32M \
	--allow-pvm -q --jail "$tmp/swap/j" --console "$tmp/con" >"$tmp/swap.out" 2>&1 &
runner=$!
# the jail's child exists: the checks are done and DIR is open
for i in $(seq 600); do
	[ -n "$(cat /proc/$runner/task/*/children 2>/dev/null)" ] && break
	kill -0 $runner 2>/dev/null || break
	sleep 0.1
done
mv "$tmp/swap/j" "$tmp/swap/real" && ln -s / "$tmp/swap/j"
# the reader lets the console's open go on (a run that died first leaves
# none to wait for: the timeout)
kill -0 $runner 2>/dev/null && timeout 120 cat "$tmp/con" >/dev/null
wait $runner && ok || { fail "the run after the swap failed"; sed 's/^/  | /' "$tmp/swap.out"; }
check_view "$tmp/see" 65534 65534
empty_after "$tmp/swap/real"

expect 0 '' snapshot create "$tmp/s" --init 4M --ws 2M ||
	{ finish; exit 1; } # what follows needs it
for st in uffd mmap; do
	rm -f "$tmp/see"
	COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 '' snapshot restore "$tmp/s" \
		--mem-restore $st --jail "$tmp/j" --uid 4242 --gid 4242 --json
	json_check 'd["success"] and d["mem_restore"] == "'$st'"' "$out"
	check_view "$tmp/see" 4242 4242
	empty_after "$tmp/j"
done

# the Linux boot of the test kernel
rm -f "$tmp/see"
COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 '' run --kernel "$TK_ELF" --mem 32M --allow-pvm -q --jail "$tmp/j"
check_view "$tmp/see" 65534 65534
# a Linux guest with a drive and a vsock device, jailed: the devices'
# I/O threads start after the jail, so every thread of the VMM is inside
# it (the hook's thread lines: root, namespaces, uid, capabilities); the
# guest reads and writes its disk, a host client's CONNECT round trip
# goes through the socket bound before the jail (removed after by the
# parent), and the guest's own connection to a host port is refused, a
# reset: a jailed VMM looks no host path up
truncate -s 1M "$tmp/disk.img"
printf 'coldstart disk!\0' | dd of="$tmp/disk.img" conv=notrunc status=none
python3 - "$tmp/v.sock" >"$tmp/host.out" 2>&1 <<'PY' &
import socket, sys, time
# a connection made before the guest's driver is up is closed at once
# (nobody to connect to): a client tries again until OK comes
for _ in range(1200):
    try:
        h = socket.socket(socket.AF_UNIX); h.connect(sys.argv[1])
        h.settimeout(60)
        h.sendall(b"CONNECT 5000\n")
        line = h.recv(100).decode().strip()
        if line:
            break
    except OSError:
        pass
    h.close()
    time.sleep(0.05)
print("ok line", line)
h.sendall(b"ping")
print("answer", h.recv(100).decode())
PY
host=$!
rm -f "$tmp/see"
COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 'vsock: served the host' run --kernel "$TK_ELF" \
	--mem 32M --allow-pvm --cmdline tk.signal=port --drive "$tmp/disk.img,overlay=$tmp/disk.ovl" \
	--vsock "$tmp/v.sock" --jail "$tmp/j"
wait $host
grep -q 'virtio-blk: sector 0: 636f6c647374617274206469736b2100' "$out" &&
	grep -q 'virtio-blk: write read back ok' "$out" && ok ||
	fail "the jailed guest's disk: $(grep virtio-blk "$out")"
[ -s "$tmp/disk.ovl" ] && ok || fail "the named overlay, opened before the jail, got no write"
grep -q 'vsock: connect BAD' "$out" && ok || fail "the guest's connection to a host port was not refused"
grep -q '^ok line OK [0-9]' "$tmp/host.out" && grep -q '^answer echo: ping$' "$tmp/host.out" && ok ||
	fail "the host's CONNECT round trip: $(cat "$tmp/host.out")"
check_view "$tmp/see" 65534 65534
sees "$tmp/see" threads_outside 0
[ "$(grep -c '^thread=' "$tmp/see")" -ge 4 ] && ok ||
	fail "the hook saw $(grep -c '^thread=' "$tmp/see") threads, not the control, vCPU and two I/O threads"
[ ! -e "$tmp/v.sock" ] && ok || fail "the jailed run left its vsock socket behind"
empty_after "$tmp/j"
# --exec jailed: the agent is sought through the vsock device itself
# (the test kernel has none: the guest ends first, one line says so)
expect 1 'the guest ended \(guest reset through the i8042\) before its agent ran the command' \
	run --kernel "$TK_ELF" --mem 32M --allow-pvm --cmdline tk.signal=port \
	--rootfs "$tmp/disk.img" --exec true --timeout 30s --jail "$tmp/j"
empty_after "$tmp/j"
# a --vsock path that was there before is not the run's: refused, and
# left alone by the jail's parent
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/v.sock"
expect 1 'the file exists' run --kernel "$TK_ELF" --mem 32M --allow-pvm \
	--cmdline tk.signal=port --vsock "$tmp/v.sock" --jail "$tmp/j"
[ -S "$tmp/v.sock" ] && ok || fail "the jail's parent removed a socket it did not make"
rm -f "$tmp/v.sock"
# a Linux guest's snapshot restored jailed, with uffd (its handler starts
# after the jail) and mmap
expect 0 '' snapshot create "$tmp/ls" --kernel "$TK_ELF" --mem 32M --allow-pvm -q
for st in uffd mmap; do
	rm -f "$tmp/see"
	COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 '' snapshot restore "$tmp/ls" \
		--mem-restore $st --allow-pvm --jail "$tmp/j" --uid 4242 --gid 4242 --json
	json_check 'd["success"] and d["guest"] == "linux" and d["guest_done_signals"] == 1' "$out"
	check_view "$tmp/see" 4242 4242
	empty_after "$tmp/j"
done
# a pool of the Linux guest booted fresh, jailed after its kernel opened
rm -f "$tmp/see"
COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 '' pool run -n 3 --size 1 --kernel "$TK_ELF" --mem 32M --allow-pvm --jail "$tmp/j" --json
json_check 'd["served"] == 3 and d["failed"] == 0' "$out"
check_view "$tmp/see" 65534 65534

# pool serve: jailed by default in a private directory it removes after
rm -f "$tmp/see"
sock=$tmp/pool.sock
COLDSTART_JAIL_SELFTEST=$tmp/see timeout 120 "$COLDSTART" pool serve --socket "$sock" \
	--size 2 --snapshot "$tmp/s" --hold shell --mem-restore uffd >"$tmp/serve.out" 2>&1 &
server=$!
for i in $(seq 900); do grep -q 'listening on' "$tmp/serve.out" && break; sleep 0.1; done
python3 - "$sock" <<'PY' && ok || fail "pool serve's acquire failed"
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
for _ in range(3):
    f.write('{"op": "acquire"}\n'); f.flush()
    r = json.loads(f.readline())
    print(r)
    assert r["ok"], r
PY
kill -TERM $server
wait $server
code=$?
[ "$code" -eq 0 ] && ok || { fail "pool serve exited $code"; sed 's/^/  | /' "$tmp/serve.out"; }
check_view "$tmp/see" 65534 65534
[ ! -e "$sock" ] && ok || fail "pool serve left its socket $sock"
# its own private directory (other tests' servers may have theirs now)
jdir=$(sed -n 's/.*listening on .* (jailed in \(.*\))$/\1/p' "$tmp/serve.out")
case $jdir in /tmp/coldstart-jail-*) ok ;; *) fail "pool serve did not name its jail directory" ;; esac
[ -n "$jdir" ] && [ ! -e "$jdir" ] && ok || fail "pool serve left its private jail directory $jdir"
# --jail off: as before, no jail
rm -f "$tmp/see"
COLDSTART_JAIL_SELFTEST=$tmp/see expect 0 '' pool run -n 2 --size 1 --snapshot "$tmp/s" --jail off
[ ! -e "$tmp/see" ] && ok || fail "pool run --jail off entered a jail"
finish
