#!/bin/bash
# Smoke runs of the boot, rate, density and peers drivers with tiny
# parameters: exit codes, the result schema, --out files; and their
# option errors. Needs /dev/kvm (exit 77 without).
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
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
expect 2 "unexpected argument" bench peers extra
expect 77 "is not an executable file" bench peers --qemu /nonexistent/qemu

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
	expect 77 "PVM, which cannot boot a Linux guest" bench boot --kernel /nonexistent/vmlinuz -n 1
fi

expect 0 '"series"' bench rate -n 2 -w 0 --workers 1,2 --burst 2 --rounds 2 --json
cp "$out" "$tmp/rate.json"
json_check "$schema"' and [s["name"] for s in d["series"]] == ["inproc.w1", "inproc.w2", "inproc.burst2", "process.w1", "process.w2", "process.burst2"] and all(s["vms_per_s"] > 0 for s in d["series"]) and len(d["series"][1]["samples_ns"]) == 4 and len(d["series"][2]["makespan_ns"]) == 2' "$tmp/rate.json"

# 4 MiB + 4 MiB per guest: the pages clones share must stand out from
# the per-process noise of the ASan build (about 8 MiB of shadow and
# allocator state per VMM, varying by a few hundred KiB).
expect 0 'results written to' bench density -n 2 -w 0 --init 4M --ws 4M --out "$tmp/density"
json_check "$schema"' and d["density"]["fresh"]["vms"] == 2 and d["density"]["clone"]["vms"] == 2 and d["density"]["fresh"]["vms_per_gib"] > 0 and len(d["density"]["clone"]["curve"]) == 2 and d["density"]["clone"]["curve"][1]["pss_kib"] > 0 and "run" in d["ksm"]' "$tmp/density/density.json"
# Clones share their guest pages: the second clone adds less PSS than
# the second fresh VM.
c='d["density"]["clone"]["curve"]' f='d["density"]["fresh"]["curve"]'
json_check "$c[1]['pss_kib'] - $c[0]['pss_kib'] < $f[1]['pss_kib'] - $f[0]['pss_kib']" "$tmp/density/density.json"

if command -v qemu-system-x86_64 >/dev/null; then
	expect 0 'qemu.microvm / coldstart' bench peers -n 2 -w 0 --out "$tmp/peers"
	json_check "$schema"' and [s["name"] for s in d["series"]] == ["coldstart", "rss.coldstart", "qemu.microvm", "rss.qemu.microvm"] and d["ratios"]["qemu.microvm"]["wall_median"] > 0' "$tmp/peers/peers.json"
else
	expect 77 "not installed" bench peers -n 1
fi
finish
