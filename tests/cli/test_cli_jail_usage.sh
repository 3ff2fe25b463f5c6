#!/bin/bash
# --jail's usage errors, on any host (they come before KVM is opened): a
# missing DIR, a file, a non-empty DIR, jail options without --jail, bad
# ids and limits (garbage around a number too), DIR or its parent open to
# others, DIR a symbolic link, for run, snapshot restore and pool serve.
# Usage: test_cli_jail_usage.sh COLDSTART
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch

mkdir "$tmp/full" "$tmp/empty"
touch "$tmp/full/x" "$tmp/file"
expect 2 "--jail $tmp/none: No such file or directory" run --jail "$tmp/none"
expect 2 "--jail $tmp/file: not a directory" run --jail "$tmp/file"
expect 2 "--jail $tmp/full: not empty" run --jail "$tmp/full"
mkdir -m 0700 "$tmp/closed"
expect 2 "--jail $tmp/closed: mode 700: uid 65534 cannot search it" run --jail "$tmp/closed"
expect 2 "--jail $tmp/full: not empty" run --kernel /nonexistent --jail "$tmp/full"
# DIR and its parent: only root or this user may change them, and DIR is
# not a symbolic link (the jail would follow it to wherever it points)
mkdir -m 0775 "$tmp/gw" && chmod 0775 "$tmp/gw"
mkdir -m 0777 "$tmp/ww" && chmod 0777 "$tmp/ww"
mkdir "$tmp/sticky" && chmod 1777 "$tmp/sticky"
expect 2 "--jail $tmp/gw: it \(mode 775\) is writable by group or others" run --jail "$tmp/gw"
expect 2 "--jail $tmp/ww: it \(mode 777\) is writable by group or others" run --jail "$tmp/ww"
expect 2 "--jail $tmp/sticky: it \(mode 1777\) is writable" run --jail "$tmp/sticky"
ln -s empty "$tmp/link"
expect 2 "--jail $tmp/link: a symbolic link" run --jail "$tmp/link"
expect 2 "--jail $tmp/link/: a symbolic link" run --jail "$tmp/link/"
expect 2 "--jail $tmp/link: a symbolic link" pool serve --socket "$tmp/s" --jail "$tmp/link"
mkdir -m 0777 "$tmp/open" && chmod 0777 "$tmp/open" && mkdir "$tmp/open/j"
expect 2 "--jail $tmp/open/j: its parent directory \(mode 777\) is writable" run --jail "$tmp/open/j"
if [ "$(id -u)" -eq 0 ]; then
	mkdir "$tmp/theirs" && chown 4242:4242 "$tmp/theirs"
	expect 2 "--jail $tmp/theirs: it is owned by uid 4242, not by root or this user" run --jail "$tmp/theirs"
	mkdir "$tmp/up" && mkdir "$tmp/up/j" && chown 4242:4242 "$tmp/up"
	expect 2 "--jail $tmp/up/j: its parent directory is owned by uid 4242" run --jail "$tmp/up/j"
	expect 2 "--jail $tmp/up/j: its parent directory is owned by uid 4242" pool serve --socket "$tmp/s" --jail "$tmp/up/j"
	# the parent checked is DIR's own "..", not what the path names
	ln -s up/j "$tmp/via"
	expect 2 "--jail $tmp/via/.: its parent directory is owned by uid 4242" run --jail "$tmp/via/."
fi
expect 2 'need --jail DIR' run --uid 1000
expect 2 'need --jail DIR' run --memory 1G --jail off
expect 2 "--uid: 'bob' is not a numeric id" run --jail "$tmp/empty" --uid bob
expect 2 "--gid: '-1' is not a numeric id" run --jail "$tmp/empty" --gid -1
expect 2 "--cpus: '0' is not a number" run --jail "$tmp/empty" --cpus 0
expect 2 "--memory: '12X' is not a size" run --jail "$tmp/empty" --memory 12X
# garbage around a size or a CPU count is refused, not read as a suffix
# (a trailing space was once 1024 TiB)
for m in '1024 ' ' 1024' '' '-1' '0' '5T' '1.5G' '99999999999999999999'; do
	expect 2 "--memory: '$m' is not a size" run --jail "$tmp/empty" --memory "$m"
done
for c in '1 ' ' 1' '' '-1' '1e0' '0x1p0' 'inf' '4097'; do
	expect 2 "--cpus: '$c' is not a number" run --jail "$tmp/empty" --cpus "$c"
done
expect 2 '--probes and --jail exclude each other' run --jail "$tmp/empty" --probes
# snapshot restore checks DIR before it looks for KVM (a snapshot is
# made by a KVM host: a state file is enough to reach the jail's check)
mkdir "$tmp/snap" && : >"$tmp/snap/state"
expect 2 "--jail $tmp/full: not empty" snapshot restore "$tmp/snap" --jail "$tmp/full"
expect 2 "no such snapshot '$tmp/empty'" snapshot restore "$tmp/empty" --jail "$tmp/full"
expect 2 "--jail $tmp/none: No such file" pool serve --socket "$tmp/s" --jail "$tmp/none"
expect 2 "--jail $tmp/full: not empty" pool serve --socket "$tmp/s" --jail "$tmp/full"
expect 2 'need --jail DIR' pool serve --socket "$tmp/s" --jail off --uid 5
# the checks leave DIR alone, and nothing was created
[ -z "$(ls -A "$tmp/empty")" ] && [ -e "$tmp/full/x" ] && ok || fail "a usage check changed DIR"
expect 0 '--jail DIR' run --help
expect 0 '--jail DIR' snapshot --help
expect 0 '--jail DIR' pool --help
finish
