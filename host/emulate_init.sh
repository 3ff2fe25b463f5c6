#!/bin/busybox sh
# /init of the emulated SVM host that `coldstart emulate` boots (embedded in
# the coldstart binary). It loads KVM and the virtio modules, makes a root
# for the command out of the real host's files (virtiofs, read-only) under
# an overlay whose writes land on the scratch disk, binds the --out
# directories writable, runs the command with its stdout on ttyS1 and its
# stderr on ttyS2, and prints its exit status on the console (ttyS0) as
# the line "COLDSTART-EMULATE-EXIT <status>". Lines that start with
# "COLDSTART-EMULATE-" are for coldstart; everything else is the log.
/bin/busybox mkdir -p /dev /proc /sys /tmp /host /scratch /newroot
/bin/busybox mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
hostname "$(cat /emulate/hostname)" 2>/dev/null

fail() {
	echo "COLDSTART-EMULATE-FAIL $*"
	sync
	poweroff -f
	sleep 60
}

for m in $(cat /modules/order); do
	insmod "/modules/$m" || fail "insmod $m"
done
[ -c /dev/kvm ] || fail "no /dev/kvm after loading kvm-amd (does the emulated CPU have svm?)"
mount -t virtiofs hostroot /host || fail "mounting the host's files (virtiofs)"
for i in 1 2 3 4 5 6 7 8 9 10; do
	[ -b /dev/vda ] && break
	sleep 0.2
done
mount -t ext4 /dev/vda /scratch || fail "mounting the scratch disk /dev/vda"
mkdir -p /scratch/upper /scratch/work
mount -t overlay -o lowerdir=/host,upperdir=/scratch/upper,workdir=/scratch/work \
	root /newroot || fail "mounting the overlay root"
R=/newroot
mount -t proc proc $R/proc
mount -t sysfs sys $R/sys
mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm $R/run $R/tmp
mount -t devpts devpts $R/dev/pts
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
mount -t tmpfs shm $R/dev/shm
mount -t tmpfs run $R/run
chmod 1777 $R/tmp
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
mount -t bpf bpf $R/sys/fs/bpf 2>/dev/null
G=$R/sys/fs/cgroup
if grep -q coldstart.cgroup=v1 /proc/cmdline; then
	# `emulate --cgroup v1`: laid out as systemd does on a cgroup v1
	# host, a tmpfs with one hierarchy per controller set and cpu and
	# cpuacct as links to theirs; no cgroup2, so no cgroup.controllers
	mount -t tmpfs -o mode=755 cgroup $G ||
		fail "mounting a tmpfs on /sys/fs/cgroup"
	mkdir $G/cpu,cpuacct $G/memory
	mount -t cgroup -o cpu,cpuacct cgroup $G/cpu,cpuacct ||
		fail "mounting the cgroup v1 cpu,cpuacct hierarchy"
	mount -t cgroup -o memory cgroup $G/memory ||
		fail "mounting the cgroup v1 memory hierarchy"
	ln -s cpu,cpuacct $G/cpu
	ln -s cpu,cpuacct $G/cpuacct
else
	mount -t cgroup2 cgroup2 $G 2>/dev/null
fi
# The directories the command may write on the real host.
while read -r d; do
	[ -n "$d" ] || continue
	mkdir -p "$R$d" && mount --bind "/host$d" "$R$d" || fail "binding $d"
done </emulate/outs
mkdir -p $R/run/coldstart-emulate
cp /emulate/cmd.sh $R/run/coldstart-emulate/cmd.sh
for t in /dev/ttyS1 /dev/ttyS2; do
	stty -F $t raw -echo 2>/dev/null
done
echo 30 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

# An idle VM for the host's lifetime: KVM's static keys then stop flipping
# between the command's VMs, which now and then froze the emulated host.
chroot $R "$(cat /emulate/self)" emulate --hold-kvm >/tmp/hold.out 2>&1 &
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	grep -qs holding /tmp/hold.out && break
	sleep 0.25
done
grep -qs holding /tmp/hold.out || fail "holding an idle VM: $(cat /tmp/hold.out)"
# Likewise the scheduler's CFS-bandwidth key, which counts cgroups with a
# CPU quota (the jail's --cpus), and the memory controller's, switched on
# by the first memory cgroup: a cgroup holding a quota for the host's
# lifetime keeps them on. (A host froze with cli.jail running, in the
# same way as above.)
if [ -f $G/cgroup.subtree_control ]; then
	echo "+cpu +memory" >$G/cgroup.subtree_control 2>/dev/null
	mkdir -p $G/emulated-host-hold &&
		echo "1000000 100000" >$G/emulated-host-hold/cpu.max 2>/dev/null ||
		echo "coldstart emulate: no cgroup with a CPU quota held" >&2
elif [ -d $G/cpu,cpuacct ]; then
	# v1 sets a quota through the same scheduler code (the same key),
	# so the hold is the same quota, 10 CPUs. A v1 memory cgroup turns
	# on the kernel-memory accounting key, for good, when it is made:
	# made here, it is on before the first jailed run.
	H=$G/cpu,cpuacct/emulated-host-hold
	{ mkdir -p $H && echo 100000 >$H/cpu.cfs_period_us &&
		echo 1000000 >$H/cpu.cfs_quota_us; } 2>/dev/null ||
		echo "coldstart emulate: no cgroup with a CPU quota held" >&2
	mkdir -p $G/memory/emulated-host-hold
fi

# A heartbeat: a console that stays silent means a stalled host. A CPU
# stuck in the kernel or in a nested guest (an RCU stall: reported by the
# CPU itself, or by another when the stuck one takes no interrupts at
# all) leaves the other one beating: then the stacks of every CPU and
# blocked task go to the console, and STALLED tells coldstart emulate to
# stop this host.
echo 1 >/proc/sys/kernel/sysrq 2>/dev/null
stall_re='self-detected stall|detected stalls on CPUs|detected expedited stalls'
(while :; do
	sleep 10
	echo "COLDSTART-EMULATE-ALIVE $(cut -d' ' -f1 /proc/uptime)"
	if [ -z "$stalled" ] && dmesg | grep -Eq "$stall_re"; then
		stalled=1
		dmesg -n 8
		echo l >/proc/sysrq-trigger
		echo w >/proc/sysrq-trigger
		sleep 2
		echo "COLDSTART-EMULATE-STALLED $(dmesg | grep -Em1 "$stall_re")"
	fi
done) &
echo $! >$R/run/coldstart-emulate/heartbeat.pid
# a test's way to have a boot never come up (COLDSTART_EMULATE_TEST_NO_READY)
grep -q coldstart.test.noready /proc/cmdline && exec sleep 100000
echo "COLDSTART-EMULATE-READY $(cut -d' ' -f1 /proc/uptime)"
# stdout and stderr are terminals where they are on the real host
# (/emulate/tty: "11", "10"...), else pipes, so isatty() answers alike.
out=/dev/ttyS1 err=/dev/ttyS2
tty=$(cat /emulate/tty)
if [ "${tty%?}" = 0 ]; then
	mkfifo /tmp/out || fail "mkfifo"
	cat /tmp/out >/dev/ttyS1 &
	out=/tmp/out
fi
if [ "${tty#?}" = 0 ]; then
	mkfifo /tmp/err || fail "mkfifo"
	cat /tmp/err >/dev/ttyS2 &
	err=/tmp/err
fi
chroot $R /bin/sh /run/coldstart-emulate/cmd.sh </dev/null >$out 2>$err
code=$?
wait_pipes() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pidof cat >/dev/null || return
		sleep 0.1
	done
}
wait_pipes
sync
echo "COLDSTART-EMULATE-EXIT $code"
poweroff -f
