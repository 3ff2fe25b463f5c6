# Snapshot cases of the e2e rig (Linux snapshots), sourced by
# l1-init.sh: boot, snapshot at boot complete, restore with mmap and with
# uffd; the restored guest runs the command named at boot and prints its
# output.
snap_create() {
	case_start snap_create
	rm -rf /tmp/snap
	# coldstart.done=mmio: after a restore the emulated CPU (QEMU TCG)
	# refuses user-space port I/O (it checks the TSS I/O bitmap only for
	# an "available" TR; KVM restores it "busy", as hardware keeps it),
	# and Debian's cloud kernel has no /dev/port; an MMIO write goes
	# through page tables only.
	run 0 snapshot create /tmp/snap --kernel $L2/vmlinuz \
		--initrd $L2/initramfs.cpio.gz --vcpus 1 --mem 256M \
		--timeout 60s --console /tmp/$CUR.console \
		--cmdline "$BASE coldstart.done=mmio coldstart.run=\"echo e2e-restored-\$((7*6))\""
	# The VM pauses inside the init's boot-complete port write: the init
	# started, and printed nothing after the signal.
	has /tmp/$CUR.console '^coldstart-init: start' "no init output before the snapshot"
	if tr -d '\r' </tmp/$CUR.console | grep -Eq '^coldstart-init: (boot complete|output begin)'; then
		no "the guest ran past boot complete before the snapshot"
	fi
	case_end
}

snapshot_cases() {
	local s
	attempt snap_create
	for s in mmap uffd; do
		case_start snap_restore_$s
		# without a snapshot the restore cases would only fail on
		# its absence: say so once per case, not as six symptoms
		if [ ! -e /tmp/snap/state ]; then
			no "not run: snap_create made no snapshot"
			case_end
			continue
		fi
		run 0 snapshot restore /tmp/snap --mem-restore $s \
			--timeout 100s --json --console /tmp/$CUR.console
		has /tmp/$CUR.out '"success": true' "restore did not succeed"
		has /tmp/$CUR.out '"guest_done_signals": 1' \
			"the restored init's done signal did not arrive"
		has /tmp/$CUR.console '^coldstart-init: boot complete signal=port' \
			"the restored init did not continue after its boot signal"
		has /tmp/$CUR.console '^coldstart-init: output end status 0' \
			"restored workload did not exit 0"
		has /tmp/$CUR.console '^coldstart-init: done, rebooting' \
			"restored init did not reach its end"
		workload_output /tmp/$CUR.console | grep -qx 'e2e-restored-42' ||
			no "restored workload output lacks e2e-restored-42"
		case_end
	done
	rm -rf /tmp/snap
}
