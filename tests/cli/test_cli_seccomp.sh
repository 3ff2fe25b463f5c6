#!/bin/bash
# seccomp filters per thread role: a call outside a thread's list kills
# the VMM by SIGSYS with the call named (test hook COLDSTART_SECCOMP_TEST,
# in the vCPU, uffd, refill and main threads), so do the forms of allowed
# calls the argument filters refuse (fork-like or namespace clones, open
# flags, prctl options, signals to other processes); log mode lets them
# through and names them at exit; and with filters on (the default) a
# run, every restore strategy (compressed snapshots too), a pool of
# shells restored with uffd, the Linux boot of the test kernel and bench
# lifecycle's document all work.
# Usage: test_cli_seccomp.sh COLDSTART TESTKERNEL_ELF
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
TK_ELF=$2
scratch

expect 2 "'frob' is not kill, log or off" run --seccomp frob
expect 2 "'frob' is not kill, log or off" pool run --seccomp frob
need_kvm
ulimit -c 0 # SIGSYS dumps core by default

# The kill path, one role at a time: 128 + SIGSYS (31) from timeout.
COLDSTART_SECCOMP_TEST=vcpu expect 159 'the vcpu thread made system call socket \(41\)' run -q
# Sanitizer builds leave the control thread unfiltered (LeakSanitizer's
# exit-time tracer would inherit its filter), so there the hook is inert.
if ldd "$COLDSTART" 2>/dev/null | grep -q libasan; then
	COLDSTART_SECCOMP_TEST=main expect 0 '' run -q
else
	COLDSTART_SECCOMP_TEST=main expect 159 'the main thread made system call socket \(41\)' run -q
fi
expect 0 '' snapshot create "$tmp/s" --init 4M --ws 2M
COLDSTART_SECCOMP_TEST=uffd expect 159 'the uffd thread made system call socket \(41\)' \
	snapshot restore "$tmp/s" --mem-restore uffd
COLDSTART_SECCOMP_TEST=refill expect 159 'the refill thread made system call socket \(41\)' pool run -n 2
# The argument filters: each role's forbidden forms of calls it may make
# in another form (a thread's clone, its own open flags, its prctl
# options, signals to its own threads) kill it too.
declare -A CALLNR=([fork]='clone \(56\)' [newns]='clone \(56\)' [opath]='openat \(257\)'
	[ocreat]='openat \(257\)' [prctl]='prctl \(157\)' [tgkill]='tgkill \(234\)')
forbidden() { # ROLE CALL COMMAND...
	local role=$1 call=$2
	shift 2
	COLDSTART_SECCOMP_TEST=$role:$call expect 159 "the $role thread made system call ${CALLNR[$call]}" "$@"
}
# Sanitizer builds allow any clone, openat and prctl (their own rows, SAN)
# and leave the control thread unfiltered: there only tgkill is checked.
refill_calls="fork newns opath ocreat prctl tgkill" main_calls="fork newns opath prctl tgkill"
io_calls="fork opath tgkill"
ldd "$COLDSTART" 2>/dev/null | grep -q libasan && refill_calls=tgkill main_calls= io_calls=tgkill
forbidden vcpu tgkill run -q
# A virtio device's I/O thread (a disk here) has a filter of its own.
truncate -s 1M "$tmp/disk.img"
for call in $io_calls; do
	forbidden io $call run --kernel "$TK_ELF" --allow-pvm --mem 32M -q \
		--cmdline tk.signal=port --drive "$tmp/disk.img"
done
forbidden uffd tgkill snapshot restore "$tmp/s" --mem-restore uffd
for call in $refill_calls; do
	forbidden refill $call pool run -n 2
done
for call in $main_calls; do
	forbidden main $call run -q
done
# In log mode the same call goes through and is named.
COLDSTART_SECCOMP_TEST=refill:tgkill expect 0 'thread cs-refill made system call tgkill \(234\)|type=1326' \
	pool run -n 2 --seccomp log
# Log mode: the call goes through, the run succeeds, the call is named
# (from the kernel log; where that cannot be read, where to look).
COLDSTART_SECCOMP_TEST=vcpu expect 0 'thread cs-vcpu made system call socket \(41\)|type=1326' \
	run -q --seccomp log
# No hook: nothing outside the lists, under kill and under log.
expect 0 '' run -q --vcpus 2 --init 4M --ws 4M
expect 0 '' run -q --seccomp log
grep -q 'outside its list' "$err" && fail "log mode found calls outside the lists: $(cat "$err")" || ok
# Every restore strategy with filters on: the hugetlb ones with 2 MiB
# pages reserved for the test (the host's setting is put back).
hugepages=$(cat /proc/sys/vm/nr_hugepages)
trap 'echo "$hugepages" >/proc/sys/vm/nr_hugepages; rm -rf "$tmp" "$out" "$err"' EXIT
echo $((hugepages + 64)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
strategies="eager mmap populate uffd prefetch eager-thp prefetch-thp"
[ "$(cat /proc/sys/vm/nr_hugepages)" -ge 64 ] && strategies+=" eager-huge uffd-huge" ||
	echo "note: no 2 MiB hugetlb pages here: eager-huge and uffd-huge left out"
for st in $strategies; do
	expect 0 'checksum' snapshot restore "$tmp/s" --mem-restore $st
	expect 0 'checksum' snapshot restore "$tmp/s" --mem-restore $st --seccomp log
	grep -q 'outside its list' "$err" && fail "$st: log mode found calls outside the lists: $(cat "$err")" || ok
done
# A pool restores in its refill threads: every strategy there too, with
# the working set the prefetch restore above recorded (read through
# regfile__open, sorted by glibc's qsort).
# And jailed, where /sys is gone (the THP and hugetlb strategies read the
# host's settings before the jail) and new VMs get their uffd through the
# /dev/userfaultfd kept open.
for st in $strategies; do
	expect 0 '' pool run -n 4 --size 2 --snapshot "$tmp/s" --mem-restore $st --json
	json_check 'd["served"] == 4 and d["failed"] == 0' "$out"
	mkdir "$tmp/jail"
	expect 0 '' pool run -n 4 --size 2 --snapshot "$tmp/s" --mem-restore $st --json --jail "$tmp/jail"
	json_check 'd["served"] == 4 and d["failed"] == 0' "$out"
	rmdir "$tmp/jail"
done
expect 0 '' snapshot create "$tmp/z" --init 4M --ws 2M --compress
for st in eager uffd; do
	expect 0 'checksum' snapshot restore "$tmp/z" --mem-restore $st
done
expect 0 "" pool run -n 6 --size 2 --snapshot "$tmp/s" --hold shell --mem-restore uffd --timeout 60s --json
json_check 'd["served"] == 6 and d["failed"] == 0' "$out"
expect 0 '' run --kernel "$TK_ELF" --mem 32M --allow-pvm -q
# The guest console on a character device: stdio asks whether it is a
# terminal at the vCPU thread's first write.
expect 0 '' run --kernel "$TK_ELF" --mem 32M --allow-pvm -q --console /dev/null
expect 0 '' bench lifecycle -n 3 -w 1 --json
json_check 'd["seccomp"]["mode"] == "kill" and d["seccomp"]["installed"]["vcpu"] >= 4 and "process_added_ns_median" in d["seccomp"]' "$out"
expect 0 '' bench lifecycle -n 2 -w 0 --mode in-process --seccomp off --json
json_check 'd["seccomp"]["mode"] == "off" and d["seccomp"]["installed"]["vcpu"] == 0' "$out"
finish
