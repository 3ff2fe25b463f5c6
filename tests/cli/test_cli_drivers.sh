#!/bin/bash
# Smoke runs of the boot, rate, density and peers drivers with tiny
# parameters: exit codes, the result schema, --out files; and their
# option errors. Needs /dev/kvm (exit 77 without).
# Usage: test_cli_drivers.sh COLDSTART TESTKERNEL_ELF
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TESTKERNEL=$2
scratch

# Option errors need no KVM.
for d in boot rate density peers; do
	expect 0 "Usage: coldstart bench $d" bench $d --help
	expect 2 "unknown or incomplete option '--bogus'" bench $d --bogus
done
expect 2 "outside 1..1000000" bench boot -n 0
expect 2 "--initrd needs --kernel" bench boot --initrd /x
expect 2 "'--quiet' is not a boot option" bench boot --quiet
expect 2 "'sideways' is not one of" bench rate --mode sideways
expect 2 "--workers" bench rate --workers 1,,x
expect 2 "multiples of 4 KiB" bench density --init 5000
expect 2 "--mem needs --kernel" bench density --mem 32M
expect 2 "unexpected argument" bench peers extra
expect 77 "is not an executable file" bench peers --qemu /nonexistent/qemu
# peers' Linux guest: its options need --kernel, which needs the
# initramfs and the root disk; missing files fail before KVM is asked.
expect 2 "--rootfs needs --kernel" bench peers --rootfs /x
expect 2 "--read needs --kernel" bench peers --read 16M
expect 2 "--timeout needs --kernel" bench peers --timeout 10s
expect 2 "--initrd needs --kernel" bench peers --initrd /x
expect 2 "--kernel needs --initrd and --rootfs" bench peers --kernel /x --initrd /y
expect 2 "--read: a whole number of MiB" bench peers --kernel /x --initrd /y --rootfs /z --read 3k
expect 1 "bench peers: kernel $tmp/none: No such file" bench peers --kernel "$tmp/none" --initrd /y --rootfs /z
echo initrd >"$tmp/initrd"
expect 1 "bench peers: --rootfs $tmp/none: No such file" bench peers --kernel "$TESTKERNEL" --initrd "$tmp/initrd" --rootfs "$tmp/none"

[ -e /dev/kvm ] || { echo "no /dev/kvm: skipping the runs"; finish; exit 77; }

# The schema every driver shares.
schema='d["schema"] == 1 and d["coldstart"]["version"] and d["sysinfo"]["kvm"] and isinstance(d["warnings"], list) and all(s["better"] in ("lower", "higher") and isinstance(s["params"], dict) and len(s.get("samples_ns", s.get("samples", []))) == s["summary"]["n"] and len(s["summary"]["ci95_median"]) == 2 and s["summary"]["min"] <= s["summary"]["p50"] <= s["summary"]["max"] for s in d["series"])'

expect 0 'results written to' bench boot -n 3 -w 1 --out "$tmp/boot"
json_check "$schema"' and d["bench"] == "boot" and [s["name"] for s in d["series"]][-1] == "total" and "phase.ready" in [s["name"] for s in d["series"]]' "$tmp/boot/boot.json"
grep -q '| total |' "$tmp/boot/boot.md" && ok || fail "boot.md lacks the total"
# The built-in probe guest is named by the sha256 of its image.
json_check 'd["guest"]["name"] == "probe" and len(d["guest"]["sha256"]) == 64 and d["guest"]["bytes"] > 0' "$tmp/boot/boot.json"
expect 0 '"phase.kvm_opened"' bench boot -n 2 -w 0 --mode process --init 1M --json
if [ -d /sys/module/kvm_pvm ]; then
	expect 77 "PVM, which cannot boot an ordinary Linux guest" bench boot --kernel /nonexistent/vmlinuz -n 1
fi

expect 0 '"series"' bench rate -n 2 -w 0 --workers 1,2 --burst 2 --rounds 2 --json
cp "$out" "$tmp/rate.json"
lat='[s for s in d["series"] if s["unit"] == "ns"]'
json_check "$schema"' and [s["name"] for s in '"$lat"'] == ["inproc.w1", "inproc.w2", "inproc.burst2", "process.w1", "process.w2", "process.burst2"] and all(s["vms_per_s"] > 0 for s in '"$lat"') and len('"$lat"'[1]["samples_ns"]) == 4 and len('"$lat"'[2]["makespan_ns"]) == 2' "$tmp/rate.json"
# VMs/s as series beside each level (bigger is better): a sample per block
# of completions (4 VMs at w2: 4 blocks), one per burst round
json_check '[s["name"] for s in d["series"] if s["unit"] == "vms_per_s"] == [n + ".vms_per_s" for n in ("inproc.w1", "inproc.w2", "inproc.burst2", "process.w1", "process.w2", "process.burst2")] and all(s["better"] == "higher" and min(s["samples"]) > 0 for s in d["series"] if s["unit"] == "vms_per_s") and len(d["series"][3]["samples"]) == 4 and len(d["series"][5]["samples"]) == 2' "$tmp/rate.json"

# 16 MiB + 16 MiB per guest: the pages clones share must stand out from
# the per-process noise of the ASan build (about 8 MiB of shadow and
# allocator state per VMM, varying by a few hundred KiB, and by more in
# the emulated SVM host, where 4 MiB once did not stand out).
expect 0 'KSM with 2 clone VMs alive: run=[0-9?]+ \(' bench density -n 2 -w 0 --init 16M --ws 16M --out "$tmp/density"
json_check "$schema"' and d["density"]["fresh"]["vms"] == 2 and d["density"]["clone"]["vms"] == 2 and d["density"]["fresh"]["vms_per_gib"] > 0 and len(d["density"]["clone"]["curve"]) == 2 and d["density"]["clone"]["curve"][1]["pss_kib"] > 0 and all(m["stopped_by"] == "count" for m in d["density"].values())' "$tmp/density/density.json"
# VMs per GiB as a series (bigger is better): one sample per VM after the
# first (2 VMs: one), 1 GiB over what that VM added to the curve; a clone
# whose increment drowned in the ASan build's noise (not positive) has none
json_check 'all(len(s["samples"]) == 1 and s["better"] == "higher" and abs(s["samples"][0] * (c[1]["cost_kib"] - c[0]["cost_kib"]) - 1048576) < 1 for m in ("fresh", "clone") for s in d["series"] if s["name"] == m + ".vms_per_gib" for c in [d["density"][m]["curve"]]) and "fresh.vms_per_gib" in [s["name"] for s in d["series"]] and ("clone.vms_per_gib" in [s["name"] for s in d["series"]]) == (d["density"]["clone"]["curve"][1]["cost_kib"] > d["density"]["clone"]["curve"][0]["cost_kib"])' "$tmp/density/density.json"
# Clones share their guest pages: the second clone adds less PSS than
# the second fresh VM.
c='d["density"]["clone"]["curve"]' f='d["density"]["fresh"]["curve"]'
json_check "$c[1]['pss_kib'] - $c[0]['pss_kib'] < $f[1]['pss_kib'] - $f[0]['pss_kib']" "$tmp/density/density.json"
# Beyond guest memory: below the totals, for RSS, PSS and USS alike; USS
# beyond the guest is the overhead reported before.
pts='[p for m in d["density"].values() for p in m["curve"]]'
json_check "all(0 < p[k + '_beyond_guest_kib'] < p[k + '_kib'] for p in $pts for k in ('rss', 'pss', 'uss')) and all(p['uss_beyond_guest_kib'] == p['overhead_kib'] for p in $pts) and all(m + '.' + k + '_beyond_guest_per_vm' in [s['name'] for s in d['series']] for m in ('fresh', 'clone') for k in ('rss', 'pss', 'uss'))" "$tmp/density/density.json"
# KSM is read at every point, while the VMs live; our guest memory is
# never madvise(MADV_MERGEABLE), and the report says so.
json_check "'ksm' not in d and all(p['ksm']['mergeable_vms'] == 0 and 'pages_sharing' in p['ksm'] and 'run' in p['ksm'] for p in $pts) and all(m['ksm'] == m['curve'][-1]['ksm'] for m in d['density'].values())" "$tmp/density/density.json"
grep -Eq '^- KSM with 2 fresh VMs alive: run=.*pages_sharing=.*; guest memory not marked mergeable' "$tmp/density/density.md" && ok || fail "density.md lacks the KSM state"

# --budget: a first VM that alone exceeds it stops the run at 1 VM, with
# a warning.
expect 0 'the first VM alone costs [0-9]+ KiB .*above --budget 1024 KiB; stopped at 1 VM' bench density --budget 1M -n 4 -w 0 --mode fresh
grep -q '^| fresh | 1 | budget |' "$out" && ok || fail "--budget 1M did not stop at 1 VM"
# A budget of 3 first VMs: another VM starts only while the last cost
# plus the marginal cost so far stays within it, replayed from the
# curve; the run stops on the budget, never on the count.
budget=$(python3 -c 'import json,sys; print(int(3 * json.load(open(sys.argv[1]))["density"]["fresh"]["curve"][0]["cost_kib"]))' "$tmp/density/density.json")
expect 0 '"curve"' bench density --budget "${budget}K" -n 6 -w 0 --mode fresh --init 16M --ws 16M --json
python3 - "$out" <<'EOF' && ok || fail "--budget ${budget}K stopped at the wrong count"
import json, sys
d = json.load(open(sys.argv[1]))
m, budget = d["density"]["fresh"], d["config"]["budget_bytes"] / 1024
cost = [p["cost_kib"] for p in m["curve"]]
def predict(k):  # the cost with k + 1 VMs, knowing k points
    x, y = range(1, k + 1), cost[:k]
    slope = y[0]
    if k >= 2:
        mx, my = sum(x) / k, sum(y) / k
        slope = sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)
    return y[-1] + max(slope, 0)
n = len(cost)
started_right = all(predict(k) <= budget and cost[k - 1] <= budget for k in range(1, n))
stopped_right = predict(n) > budget or cost[-1] > budget
print("budget", budget, "costs", cost, "stopped by", m["stopped_by"])
sys.exit(0 if m["vms"] == n and 2 <= n < 6 and m["stopped_by"] == "budget" and started_right and stopped_right else 1)
EOF

if command -v qemu-system-x86_64 >/dev/null; then
	expect 0 'qemu.microvm / coldstart' bench peers -n 2 -w 0 --out "$tmp/peers"
	json_check "$schema"' and [s["name"] for s in d["series"]] == ["coldstart", "rss.coldstart", "qemu.microvm", "rss.qemu.microvm"] and d["ratios"]["qemu.microvm"]["wall_median"] > 0 and d["skipped"] == []' "$tmp/peers/peers.json"
fi
# Without QEMU in PATH peers measures coldstart alone, says QEMU was left
# out and why, and succeeds.
printf '#!/bin/sh\nPATH=/nonexistent exec "%s" "$@"\n' "$COLDSTART" >"$tmp/noqemu"
chmod +x "$tmp/noqemu"
real=$COLDSTART
COLDSTART=$tmp/noqemu
expect 0 'left out: qemu-system-x86_64 is not installed' \
	bench peers -n 2 -w 0 --out "$tmp/peers-alone"
COLDSTART=$real
json_check "$schema"' and [s["name"] for s in d["series"]] == ["coldstart", "rss.coldstart"] and d["ratios"] == {} and d["config"]["qemu_path"] is None and [x["what"] for x in d["skipped"]] == ["qemu.microvm"] and "apt-get install qemu-system-x86" in d["skipped"][0]["why"]' "$tmp/peers-alone/peers.json"
grep -q "^- qemu.microvm: qemu-system-x86_64 is not installed" "$tmp/peers-alone/peers.md" &&
	ok || fail "peers.md does not list QEMU as left out"
finish
