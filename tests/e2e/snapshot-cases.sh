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

# A rootfs guest's snapshot (taken when its agent listens) carries its
# disk's written blocks and its vsock device: every strategy restores it
# and runs python3 through the agent; a restore's writes stay in that VM;
# an image changed since the snapshot is refused. The image is a sparse
# copy, so that changing it leaves the rig's own alone.
rootfs_snapshot_cases() {
	local s out img=/tmp/rsnap-rootfs.ext4
	case_start snap_rootfs_create
	rm -rf /tmp/rsnap
	if [ ! -s $L2/rootfs.ext4 ]; then
		no "the image has no rootfs.ext4 (image build --rootfs)"
		case_end
		return
	fi
	cp --sparse=always $L2/rootfs.ext4 $img
	run 0 snapshot create /tmp/rsnap --kernel $L2/vmlinuz \
		--initrd $L2/initramfs.cpio.gz --rootfs $img --timeout 200s \
		--console /tmp/$CUR.console
	has /tmp/$CUR.console '^coldstart-agent: listening on vsock port 1024' \
		"the agent did not listen before the snapshot"
	[ -f /tmp/rsnap/disk.0 ] || no "the snapshot has no disk.0"
	case_end
	[ -e /tmp/rsnap/state ] || return
	# the huge-page strategies need 2 MiB pages reserved
	echo 256 >/proc/sys/vm/nr_hugepages
	for s in eager mmap populate uffd prefetch eager-thp eager-huge \
		uffd-huge prefetch-thp; do
		case_start snap_rootfs_$s
		run 0 snapshot restore /tmp/rsnap --mem-restore $s \
			--timeout 100s --exec "python3 -c 'print(6*7)'"
		[ "$(cat /tmp/$CUR.out)" = 42 ] ||
			no "stdout is '$(head -c 200 /tmp/$CUR.out)', not 42"
		case_end
	done
	case_start snap_rootfs_state
	sum=$(md5sum <$img)
	run 0 snapshot restore /tmp/rsnap --timeout 100s --json \
		--exec "echo one >/root/f && cat /root/f"
	run 1 snapshot restore /tmp/rsnap --timeout 100s \
		--exec "cat /root/f"
	has /tmp/$CUR.err 'No such file' \
		"a restore saw the file an earlier restore wrote"
	[ "$(md5sum <$img)" = "$sum" ] || no "a restore changed the image"
	run 0 bench restore --snapshot /tmp/rsnap -n 1 -w 0 --cache warm \
		--strategy mmap --json
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["done_is"] == "the command'"'"'s first output byte", d["config"]
s = [x for x in d["series"] if x["params"]["phase"] == "done"]
assert s and all(v > 0 for x in s for v in x["samples_ns"]), s' \
		/tmp/$CUR.out 2>/tmp/$CUR.py || no "bench restore: $(tail -n 1 /tmp/$CUR.py)"
	case_end
	# a pool of it: each request runs its command through the agent of
	# a VM restored for it (one held, then refilled; the others' misses)
	# and gets its own status and output. Refill workers make a drive's
	# overlay with O_TMPFILE only (seccomp), which the emulated host's
	# overlayfs /tmp lacks: TMPDIR on a tmpfs.
	case_start snap_rootfs_pool
	# the host's /tmp shows through (a pool killed there leaves its
	# directory): only a directory new since counts
	ls -d /tmp/coldstart-pool-* 2>/dev/null >/tmp/$CUR.before
	TMPDIR=/dev/shm run 0 pool run --snapshot /tmp/rsnap --size 1 -n 3 \
		--timeout 100s --fill-timeout 300s --json \
		--exec "python3 -c 'print(6*7)'; exit 3"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = d["commands"]
assert d["served"] == 3 and d["failed"] == 0, d
assert c["ran"] == 3 and c["exited_0"] == 0 and c["distinct_stdout"] == 1, c
assert c["stdout_first"] == "42\n" and c["first_output_us_p50"] > 0, c
assert d["stats"]["hits"] >= 1, d["stats"]' /tmp/$CUR.out 2>/tmp/$CUR.py ||
		no "pool run: $(tail -n 1 /tmp/$CUR.py)"
	left=$(ls -d /tmp/coldstart-pool-* 2>/dev/null |
		grep -vxF -f /tmp/$CUR.before)
	[ -z "$left" ] || no "the pool left its socket directory $left"
	# jailed: each VM is restored inside the jail (the image and disk.0
	# kept open from before it, the overlays in memory)
	jail=$(mktemp -d /dev/shm/$CUR.jail.XXXXXX) && chmod 711 $jail
	run 0 pool run --snapshot /tmp/rsnap --size 1 -n 2 --timeout 100s \
		--fill-timeout 300s --json --jail $jail \
		--exec "python3 -c 'print(6*7)'"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["served"] == 2 and d["failed"] == 0, d
assert d["commands"]["stdout_first"] == "42\n", d["commands"]' /tmp/$CUR.out \
		2>/tmp/$CUR.py || no "jailed pool run: $(tail -n 1 /tmp/$CUR.py)"
	rmdir $jail || no "the jail's directory is not left empty"
	case_end
	# an image changed since the snapshot: refused, naming the drive
	case_start snap_rootfs_changed
	# (then put back: the same contents, a new mtime, still accepted)
	cp --sparse=always $img $img.orig
	printf 'x' | dd of=$img bs=1 seek=4096 conv=notrunc status=none
	run 1 snapshot restore /tmp/rsnap --timeout 100s --exec true
	has /tmp/$CUR.err "drive 0, $img, changed since the snapshot" \
		"a changed image was not refused"
	mv $img.orig $img
	case_end
	# a multi-turn session: 22 turns of diffs and merges, each checking
	# every earlier turn's state; the chain kept, then broken
	case_start session_turns
	rm -rf /tmp/sess && mkdir /tmp/sess
	# about 5 to 10 s a turn in the emulated host
	RUN_TIMEOUT=600 run 0 bench session --snapshot /tmp/rsnap --turns 22 --merge chain:3 \
		--exec 'echo turn' --work-dir /tmp/sess --keep --json
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = d["turns"]
assert len(t) == 22, len(t)
assert [x["chain_length"] for x in t[:5]] == [2, 3, 4, 1, 2], t[:5]
assert sum(x["merged"] for x in t) == 5, t
assert all(x["resume_to_first_output_ns"] > 0 and x["mem_bytes"] > 0 for x in t), t
assert d["resume_over_boot"] > 0, d.get("resume_over_boot")' \
		/tmp/$CUR.out 2>/tmp/$CUR.py || no "bench session: $(tail -n 1 /tmp/$CUR.py)"
	# turns 21 and 22 are diffs above the merged turn 20: without 21,
	# a resume of 22 names the missing link
	top=$(ls -d /tmp/sess/*/turn-0022 2>/dev/null)
	if [ -n "$top" ]; then
		rm -rf "${top%22}21"
		run 1 snapshot restore "$top" --exec true
		has /tmp/$CUR.err "turn-0022 is a diff whose base .*turn-0021 cannot be used" \
			"a broken chain was not refused naming the link"
	else
		no "no turn-0022 kept in /tmp/sess"
	fi
	rm -rf /tmp/sess
	# a turn that loses an earlier turn's file stops the run naming it
	run 1 bench session --snapshot /tmp/rsnap --turns 3 --baseline 0 \
		--exec 'rm -f /var/lib/coldstart-session/turn-1'
	has /tmp/$CUR.err 'turn 2: state of earlier turns is lost: turn 2: file turn-1' \
		"a lost file was not reported"
	case_end
	# tune session: two policies of four turns each, interleaved turn
	# by turn; the document holds both candidates' turns and names one
	# of them
	case_start tune_session
	RUN_TIMEOUT=600 run 0 tune session --snapshot /tmp/rsnap --turns 4 \
		--policies never,every:2 --exec 'echo turn' --json
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = d["candidates"]
assert [x["merge"] for x in c] == ["never", "every:2"], c
assert all(len(x["turns"]) == 4 for x in c), c
assert [x["chain_length"] for x in c[0]["turns"]] == [2, 3, 4, 5], c[0]
assert sum(x["merged"] for x in c[1]["turns"]) == 2, c[1]
assert all(x["bytes_written_per_turn"] > 0 for x in c), c
assert d["recommendation"]["merge"] in ("never", "every:2"), d["recommendation"]
assert "interleaved turn by turn" in d["config"]["measured_as"], d["config"]
assert [s["name"] for s in d["series"]] == ["never/resume_to_first_output",
    "every:2/resume_to_first_output"], [s["name"] for s in d["series"]]' \
		/tmp/$CUR.out 2>/tmp/$CUR.py || no "tune session: $(tail -n 1 /tmp/$CUR.py)"
	# interleaved: round 2 rotates the order, every:2 first
	has /tmp/$CUR.err 'tune session: round 4/4: policy every:2 \(2/2\)' \
		"no progress naming the round and the policy"
	order=$(grep -o 'round [0-9]/4: policy [^ ]*' /tmp/$CUR.err | tr '\n' ' ')
	[ "$order" = "round 1/4: policy never round 1/4: policy every:2 round 2/4: policy every:2 round 2/4: policy never round 3/4: policy never round 3/4: policy every:2 round 4/4: policy every:2 round 4/4: policy never " ] ||
		no "the policies' turns are not interleaved, rotating: $order"
	case_end
	# kills at random points of turns and merges (short form; the full
	# one: bench session --kills 100): after each the link written is
	# absent or complete, and the session goes on from its last complete
	# turn with all its state (every:1: the first merge, unkilled, then
	# one after each completed turn); the seed is in the log to redo a
	# failure
	case_start session_kills
	rm -rf /tmp/skills && mkdir /tmp/skills
	RUN_TIMEOUT=600 run 0 bench session --snapshot /tmp/rsnap --kills 10 \
		--merge every:1 --exec 'echo turn' --work-dir /tmp/skills --json
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
k = d["kills"]
assert k["ok"] and k["failure"] is None, k.get("failure")
assert k["made"] == k["requested"] == 10 and len(k["events"]) == 10, k
assert all(e["verdict"] in ("done", "undone") for e in k["events"]), k["events"]
assert k["last_turn"] == k["turns_completed"] + 2 == d["config"]["turns"], k
assert 1 <= len(d["turns"]) <= k["last_turn"], d["turns"]
assert k["turn_ms"] > 0 and k["merge_ms"] > 0, k
assert k["temporaries_left"] >= 0 and k["temporaries_removed_by_next_writer"] >= 0, k' \
		/tmp/$CUR.out 2>/tmp/$CUR.py ||
		no "bench session --kills ($(grep -o 'seed [0-9]*' /tmp/$CUR.err)): $(tail -n 1 /tmp/$CUR.py)"
	has /tmp/$CUR.err '^coldstart: session: kill 10/10: (turn|the merge after turn) [0-9]+ after [0-9.]+ ms \((killed|finished first)\): (done|undone)$' \
		"no progress line per kill"
	[ -z "$(ls -A /tmp/skills)" ] ||
		no "left in the work directory: $(ls -A /tmp/skills | head -3)"
	# a command that loses an earlier turn's file: turn 2 finds it
	# missing, or, when killed after its save but before its report,
	# turn 3 finds turn 2's log line missing (the check stopped before
	# it); exit 1, the loss recorded
	run 1 bench session --snapshot /tmp/rsnap --kills 1 --seed 1 \
		--exec 'rm -f /var/lib/coldstart-session/turn-1' --json
	python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["kills"]["failure"]
assert f["verdict"] == "lost", f
assert (f["turn"], f["what"].split(": ")[-1].split(",")[0]) in (
    (2, "file turn-1"), (3, "the log has 1 lines; turns 1 to 2 wrote 2")), f' \
		/tmp/$CUR.out 2>/tmp/$CUR.py || no "a loss under --kills: $(tail -n 1 /tmp/$CUR.py)"
	rm -rf /tmp/skills
	case_end
	rm -rf /tmp/rsnap $img
}
