#!/bin/bash
# The CLI's contract without KVM: help, version, usage errors, exit codes.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1

expect 0 '^coldstart [0-9]+\.[0-9]+\.[0-9]+ ' --version
expect 0 'Commands:' --help
expect 0 'Usage: coldstart run' help run
expect 0 'Usage: coldstart run' run --help
expect 0 'Usage: coldstart bench DRIVER' bench --help
expect 0 'Usage: coldstart bench lifecycle' bench lifecycle --help
expect 0 'Usage: coldstart sysinfo' sysinfo --help
expect 2 'Usage: coldstart COMMAND'
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "no command 'frobnicate'" help frobnicate
# `help` names every driver of `bench` (from its table), and `help CMD
# SUB` is SUB's help.
drivers=$(timeout 10 "$COLDSTART" bench --help | sed -n 's/^  \([a-z]\+\) .*/\1/p')
[ "$(echo "$drivers" | wc -l)" -ge 10 ] && ok || fail "bench --help lists fewer than 10 drivers"
for d in $drivers; do
	expect 0 "^  bench +benchmark drivers:.* $d(,|\$)" help
done
expect 0 'Usage: coldstart bench restore' help bench restore
expect 0 'Usage: coldstart bench floor' help bench floor
# A typo is refused before anything runs: without KVM, before an emulated
# host boots (minutes) to run the suite.
expect 2 "bench suite: unknown or incomplete option '--bogus'" bench suite --bogus &&
	if grep -q 'emulated SVM host' "$err"; then
		echo "FAIL: bench suite --bogus went to the emulated host before refusing the option"
		failed=$((failed + 1))
	fi
# The suite with the user's own guest: its options are checked here too,
# before any emulated host boots.
expect 2 "bench suite: --initrd, --cmdline, --mem, --vcpus and --allow-pvm describe the guest of --kernel, which is missing" bench suite --initrd /nonexistent/initrd
expect 2 "bench suite: kernel /nonexistent/vmlinuz: No such file or directory" bench suite --kernel /nonexistent/vmlinuz
expect 2 "bench suite: initrd /nonexistent/initrd: No such file" bench suite --kernel "$COLDSTART" --initrd /nonexistent/initrd
expect 2 "bench suite: --only: lifecycle measures only the built-in probe guest" bench suite --kernel "$COLDSTART" --only boot,lifecycle
expect 2 "bench suite: --mem: '3X' is not a size" bench suite --kernel "$COLDSTART" --mem 3X
expect 0 "^  --kernel FILE .*boot, rate and density boot it" bench suite --help
# peers and session measure the user's guest only on its root disk
expect 2 "bench suite: --only: peers needs a guest on its root disk: --kernel K --initrd I --rootfs R" bench suite --kernel "$COLDSTART" --only peers
expect 2 "bench suite: --only: peers needs a guest on its root disk" bench suite --kernel "$COLDSTART" --rootfs "$COLDSTART" --only density,peers
expect 0 "peers and session run only with --rootfs" bench suite --help
expect 0 'Usage: coldstart snapshot create' help snapshot
# snapshot's usage errors: one line saying what is wrong, then where help
# is, not the whole help; a mistyped DIR is "no such snapshot" (checked
# before KVM is opened, so it holds on hosts without KVM too).
expect 2 '^coldstart: snapshot needs an action: create, restore, merge or inspect$' snapshot
expect 2 "^Try 'coldstart snapshot --help'.\$" snapshot
expect 2 "^coldstart: snapshot: unknown action 'bogus'" snapshot bogus
expect 2 "^coldstart: snapshot create: needs the snapshot's directory DIR first\$" snapshot create
expect 2 "^coldstart: snapshot restore: needs the snapshot's directory DIR first\$" snapshot restore
expect 2 "^coldstart: snapshot inspect: needs the snapshot's directory DIR first\$" snapshot inspect
expect 2 "^coldstart: snapshot inspect: takes DIR and at most --json\$" snapshot inspect /tmp --csv
for args in "" "create" "restore" "inspect" "bogus"; do
	timeout 10 "$COLDSTART" snapshot $args >/dev/null 2>"$err.snap"
	[ "$(wc -l <"$err.snap")" -le 2 ] && ok || fail "snapshot $args: $(wc -l <"$err.snap") lines on stderr"
done
rm -f "$err.snap"
expect 2 "^coldstart: snapshot restore: no such snapshot '/nonexistent/snap' \(/nonexistent/snap/state: No such file or directory\)\$" snapshot restore /nonexistent/snap
expect 2 "no such snapshot" snapshot restore /nonexistent/snap --kvm /nonexistent/kvm --json
# options only a Linux snapshot takes do not hide a missing DIR (CI once
# saw "unknown or incomplete option '--console'" after a failed create)
expect 2 "^coldstart: snapshot restore: no such snapshot '/nonexistent/snap'" snapshot restore /nonexistent/snap --mem-restore uffd --console /dev/null
expect 0 'Usage: coldstart snapshot' snapshot restore --help
expect 0 'Usage: coldstart snapshot' snapshot create --help
# create takes run's -q/--quiet (both with --json are refused, as by run).
expect 2 "--json and --quiet exclude each other" snapshot create /tmp/x -q --json
# The lists tools read (bash completion, man page), one name a line.
expect 0 '^sysinfo$' help --commands
expect 0 '^lifecycle$' help --commands bench
expect 0 '^restore$' help --commands tune
expect 0 '^inspect$' help --commands snapshot
expect 2 "no command 'frobnicate'" help --commands frobnicate
expect 2 "unexpected argument 'x'" help --commands bench x
expect 0 'Usage: coldstart snapshot' snapshot restore --help
expect 0 'Usage: coldstart snapshot' snapshot inspect -h
expect 2 "unknown driver 'nope'" bench nope
expect 2 "multiple of 2 MiB" run --mem 3M
expect 2 "is not a size" run --mem lots
expect 2 "needs at least 10 MiB" run --ws 8M --mem 4M
expect 2 "multiples of 4 KiB" run --ws 5000
expect 2 "not one of: seq, random, stride" run --pattern zigzag
expect 2 "outside 1..64" run --vcpus 0
expect 2 "outside 1..64" run --vcpus 65
expect 2 "not a duration" run --timeout soon
expect 2 "unexpected argument 'extra'" run extra
expect 2 "unknown or incomplete option '--bogus'" run --bogus
expect 2 "exclude each other" run --json --quiet
expect 2 "not one of: none, host" run --cpuid guest
expect 2 "not one of: anon, memfd, hugetlb" run --mem-backend nvdimm
expect 2 "outside 1..1000000" bench lifecycle -n 0
expect 2 "unexpected argument" sysinfo extra
# A host without KVM: clear message, exit 77.
expect 77 "/nonexistent/kvm not found" run --kvm /nonexistent/kvm
expect 77 "not found" bench lifecycle --kvm /nonexistent/kvm -n 1
expect 77 "not found" bench floor --kvm /nonexistent/kvm
# density's VMs are held by child processes: one that cannot run here
# (77) is the driver's 77, not a failure (it exited 1)
if [ ! -e /dev/kvm ]; then
	expect 77 "exited 77 before it was held" bench density -n 1 -w 0
fi
expect 2 "outside 1..100000000" bench floor -n0

# bench rate of the user's own Linux guest: option errors, and a kernel
# that cannot boot is refused before /dev/kvm is opened (--kvm would be
# missing here) or any VM starts.
expect 0 '--kernel FILE' bench rate --help
expect 2 "--initrd needs --kernel" bench rate --initrd /x
expect 2 "--cmdline needs --kernel" bench rate --cmdline quiet
expect 2 "--allow-pvm needs --kernel" bench rate --allow-pvm
expect 2 "--mode in-process: a Linux guest .*use --mode process" \
	bench rate --kernel /x --mode in-process
expect 2 "--mode both: a Linux guest" bench rate --kernel /x --mode both
expect 2 "not a multiple of 2 MiB" bench rate --mem 3M
expect 2 "outside 1..64" bench rate --vcpus 65
expect 2 "not a duration" bench rate --timeout soon
expect 1 "bench rate: kernel /nonexistent/vmlinuz: No such file" \
	bench rate --kernel /nonexistent/vmlinuz --kvm /nonexistent/kvm
expect 1 "no boot flag 0xaa55" bench rate --kernel /etc/passwd \
	--kvm /nonexistent/kvm

# sysinfo needs no KVM and is valid JSON with the fields reports rely on.
expect 0 '"flavour"' sysinfo
cp "$out" "$out.json"
json_check 'd["schema"] == 2 and d["kvm"]["flavour"] in ("vmx","svm","pvm","other","none") and d["cpu"]["online_cpus"] >= 1 and d["coldstart"]["version"]' "$out.json"
# kvm describes a usable device, or none and why: a loaded module that
# did not bind is no device. python opens /dev/kvm as coldstart would.
if python3 -c 'import os; os.close(os.open("/dev/kvm", os.O_RDWR))' 2>/dev/null; then
	json_check 'd["kvm"]["usable"] is True and d["kvm"]["device"] == "/dev/kvm" and d["kvm"]["flavour"] != "none" and d["kvm"]["api_version"] == 12 and d["kvm"]["reason"] is None' "$out.json"
else
	json_check 'd["kvm"]["usable"] is False and d["kvm"]["device"] is None and d["kvm"]["flavour"] == "none" and d["kvm"]["api_version"] is None and len(d["kvm"]["reason"]) > 10 and "/dev/kvm" in d["kvm"]["reason"]' "$out.json"
fi
# The emulated SVM host's label, exactly when the kernel command line
# carries the marker as a word of its own.
if grep -Eq '(^| )coldstart\.emulated=' /proc/cmdline; then
	json_check 'd["kvm"]["emulated"] == open("/proc/cmdline").read().split("coldstart.emulated=")[1].split()[0]' "$out.json"
else
	json_check 'd["kvm"]["emulated"] is None' "$out.json"
fi
rm -f "$out.json"

# Cold caches on tmpfs: alone a usage error (nothing left to measure);
# with warm ones the run goes on (here to the missing device) and leaves
# cold out instead of refusing.
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	expect 2 "tmpfs" bench restore --cache cold --snapshot-dir /dev/shm
	expect 77 "/nonexistent/kvm not found" bench restore --snapshot-dir /dev/shm \
		--kvm /nonexistent/kvm
fi

# bench restore --snapshot DIR: the options that shape the driver's own
# probe snapshots are refused with the reason, and a missing or malformed
# DIR is a usage error found before /dev/kvm is opened.
snapd=$(mktemp -d)
for o in "--mem 64M" "--ws 16M" "--pattern seq" "--op write" --no-baseline \
	"--snapshot-dir /var/tmp"; do
	# shellcheck disable=SC2086 # the option and its value
	expect 2 "${o%% *} does not apply with --snapshot: " bench restore \
		--snapshot "$snapd" $o
done
expect 2 "--allow-pvm applies only with --snapshot" bench restore --allow-pvm
expect 2 "snapshot directory $snapd/none: No such file" bench restore \
	--snapshot "$snapd/none" --kvm /nonexistent/kvm
expect 2 "$snapd is not a snapshot coldstart can restore" bench restore \
	--snapshot "$snapd" --kvm /nonexistent/kvm
: >"$snapd/file"
expect 2 "$snapd/file is not a directory" bench restore --snapshot "$snapd/file"
expect 2 "--snapshot: empty directory name" bench restore --snapshot ""
rm -rf "$snapd"
finish
