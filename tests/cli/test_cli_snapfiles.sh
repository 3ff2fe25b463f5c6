#!/bin/bash
# Snapshot files made by hand (tests/unit/snapforge, no VM or KVM needed)
# read by `coldstart snapshot` inspect, merge and restore: a valid one is
# shown, hostile ones are clear errors that exit 1, never a crash (139 or
# a sanitizer's report), a hang, or an empty JSON document. restore checks
# the files before it opens /dev/kvm, so these hold on any host.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
FORGE=$2
scratch

forge() {
	"$FORGE" "$@" || fail "snapforge $* failed"
}

# check CODE REGEX ARGS...: expect, and no sanitizer report (ASan's exit
# code is 1 too).
check() {
	local ret
	expect "$@"
	ret=$?
	if grep -Eq 'Sanitizer|runtime error' "$err"; then
		fail "coldstart ${*:3}: $(grep -Em1 'Sanitizer|runtime error' "$err")"
		return 1
	fi
	return $ret
}

# A valid forged snapshot is inspected in both modes.
forge "$tmp/good"
check 0 'CPU vendor GenuineIntel' snapshot inspect "$tmp/good"
check 0 '' snapshot inspect "$tmp/good" --json &&
	json_check 'd["cpu_vendor"] == "GenuineIntel" and d["sections"]' "$out"

# snapfiles.inspect_not_utf8: jansson refuses strings that are not UTF-8;
# inspect used to read the array json_pack had freed (and --json printed
# an empty document, exit 0). A directory name need not be UTF-8: it is
# shown with U+FFFD in JSON. A vendor field that is not NUL-terminated
# ASCII is refused by the format.
bad=$tmp/$'snap\xff\xfe'
forge "$bad"
check 0 'CPU vendor GenuineIntel' snapshot inspect "$bad"
grep -q 'sections:' "$out" || fail "inspect of a non-UTF-8 directory lacks its sections"
check 0 '' snapshot inspect "$bad" --json &&
	json_check 'd["dir"].endswith("snap\ufffd\ufffd") and len(d["sections"]) == 3' "$out"
forge "$tmp/vendor" --vendor ffffffffffffffffffffffffffffffff
check 1 'CPU vendor is not a NUL-terminated ASCII string' snapshot inspect "$tmp/vendor"
check 1 'CPU vendor is not a NUL-terminated ASCII string' snapshot inspect "$tmp/vendor" --json
[ -s "$out" ] && fail "inspect --json of a refused snapshot printed a document"
forge "$tmp/vendor8" --vendor 47656e75696e65c3a9000000
check 1 'CPU vendor is not' snapshot inspect "$tmp/vendor8"

# snapfiles.merge_smaller_diff: a diff whose own memory is smaller than
# the base it names (the recorded base size matching) made merge read past
# the diff's bitmap (SIGSEGV, exit 139).
forge "$tmp/base" --mem 4
forge "$tmp/small" --mem 2 --diff-of "$tmp/base"
check 1 'small has 2097152 bytes of memory, its base .*base 4194304' \
	snapshot merge "$tmp/base" "$tmp/small" "$tmp/merged"
[ -e "$tmp/merged" ] && fail "a refused merge left $tmp/merged"
forge "$tmp/diff" --mem 4 --diff-of "$tmp/base"
check 0 'merged' snapshot merge "$tmp/base" "$tmp/diff" "$tmp/merged"

# snapfiles.compressed_chunks: a frame larger than the decompression
# buffer (inside the file) overflowed it on restore; overlapping frames
# were accepted. Both are refused when the snapshot is opened.
forge "$tmp/z" --compress
check 0 'GenuineIntel' snapshot inspect "$tmp/z"
forge "$tmp/zbig" --compress --zmem-bad oversize
check 1 'chunk 0 claims 131072 compressed bytes' snapshot restore "$tmp/zbig"
check 1 'chunk 0 claims' snapshot restore "$tmp/zbig" --mem-restore uffd
forge "$tmp/zover" --compress --zmem-bad overlap
check 1 'chunks 0 and 1 overlap' snapshot restore "$tmp/zover" --mem-restore eager

# snapfiles.fifo_state: a FIFO where DIR/state (or DIR/memory) should be
# hung restore, which read the state through fopen before KVM was opened.
for f in state memory; do
	forge "$tmp/fifo-$f"
	rm "$tmp/fifo-$f/$f"
	mkfifo "$tmp/fifo-$f/$f"
	for cmd in restore inspect; do
		timeout 30 "$COLDSTART" snapshot $cmd "$tmp/fifo-$f" >"$out" 2>"$err"
		code=$?
		if [ $code -ne 1 ] || ! grep -q "fifo-$f/$f is not a regular file" "$err"; then
			fail "snapshot $cmd with a FIFO as $f exited $code: $(head -c 300 "$err")"
		else
			ok
		fi
	done
done

# --- damaged snapshots are refused and left alone ---------------------------
# (These ran in cli.snapshot on a snapshot made by a VM; restore refuses
# them before it opens /dev/kvm, so a forged one serves on any host.)

# copy NAME: a fresh copy of the reference snapshot, to damage.
copy() {
	rm -rf "${tmp:?}/$1"
	cp -a "$tmp/good" "$tmp/$1"
	echo "$tmp/$1"
}

# rejected DIR REGEX [RESTORE OPTIONS]: inspect and restore both exit 1
# with REGEX, and leave the directory exactly as it was.
rejected() {
	local dir=$1 pattern=$2 before action
	shift 2
	before=$(sums "$dir")
	for action in inspect restore; do
		if [ "$action" = inspect ]; then
			check 1 "$pattern" snapshot inspect "$dir"
		else
			check 1 "$pattern" snapshot restore "$dir" "$@"
		fi
		if [ "$(sums "$dir")" = "$before" ]; then
			ok
		else
			fail "snapshot $action $dir modified it"
		fi
	done
}
ref=$(sums "$tmp/good")
mem=$(stat -c %s "$tmp/good/memory")

# No state file at all: inspect says it is not a snapshot (exit 1);
# restore calls it a mistyped DIR, a usage error (exit 2).
mkdir "$tmp/empty"
d=$(copy nostate)
rm "$d/state"
for x in "$tmp/none" "$tmp/empty" "$d"; do
	check 1 'not a snapshot: cannot open its state file' snapshot inspect "$x"
	check 2 "no such snapshot '$x'" snapshot restore "$x"
done

d=$(copy magic)
printf 'XXXXXXXX' | dd of="$d/state" conv=notrunc status=none
rejected "$d" 'not a coldstart snapshot \(bad magic\)'

size=$(stat -c %s "$tmp/good/state")
for n in 0 10 63 64 71 72 $((size / 2)) $((size - 8)) $((size - 1)); do
	d=$(copy "trunc$n")
	truncate -s "$n" "$d/state"
	rejected "$d" 'state file is truncated|checksum'
done
rejected "$tmp/trunc0" 'state file is truncated \(0 bytes\)'
rejected "$tmp/trunc10" 'state file is truncated \(10 bytes\)'
d=$(copy longer)
printf 'garbage!' >>"$d/state"
rejected "$d" 'trailing data'

d=$(copy flipped)
python3 - "$d/state" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0xff
open(p, "wb").write(b)
PY
rejected "$d" 'checksum mismatch .*corrupt'

d=$(copy memshort)
truncate -s -4096 "$d/memory"
rejected "$d" "memory file .* is $((mem - 4096)) bytes, the state says $mem"
d=$(copy memlong)
truncate -s +4096 "$d/memory"
rejected "$d" "memory file .* is $((mem + 4096)) bytes"
d=$(copy nomem)
rm "$d/memory"
rejected "$d" 'cannot open the memory file'
# A memory file replaced by a shorter one is refused by every strategy.
d=$(copy replaced)
head -c $((mem / 2)) "$tmp/good/memory" >"$tmp/short"
mv "$tmp/short" "$d/memory"
for m in eager mmap populate; do
	check 1 "memory file .* is $((mem / 2)) bytes" snapshot restore "$d" --mem-restore "$m"
done

check 2 "'bogus' is not one of: eager, mmap, populate" \
	snapshot restore "$tmp/good" --mem-restore bogus
check 2 "unknown or incomplete option '--mem-restore'" \
	snapshot restore "$tmp/good" --mem-restore

# The reference survived everything above.
[ "$(sums "$tmp/good")" = "$ref" ] && ok || fail "the reference snapshot changed"

finish
