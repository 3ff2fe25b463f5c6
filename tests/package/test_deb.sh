#!/bin/bash
# The Debian package: built with cpack from a static build, checked
# (fields, contents), installed with `apt-get install ./coldstart_*.deb`
# into a fresh directory root (this machine's own packages stay as they
# are), then the installed coldstart runs, its man page renders and lists
# every command, and its bash completion completes every command, driver,
# tuner and action the help texts list; purged at the end.
# Usage: test_deb.sh SOURCE-DIR WORK-DIR
# The static build: $COLDSTART_STATIC_BUILD (./run.sh test passes
# build-static), else one made in WORK-DIR/static.
set -uo pipefail
src=$1
work=$2
pass=0
failed=0
ok() { pass=$((pass + 1)); }
fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}
die() {
	echo "FAIL: $*"
	exit 1
}

rm -rf "$work/pkg" "$work/root"
mkdir -p "$work/pkg" || die "cannot make $work"

# 1. The static build, brought up to date, and the package.
static=${COLDSTART_STATIC_BUILD:-}
if [ -z "$static" ]; then
	static=$work/static
	echo "building a static coldstart in $static (set COLDSTART_STATIC_BUILD to reuse one)"
	cmake -S "$src" -B "$static" -DCMAKE_BUILD_TYPE=Release -DCOLDSTART_STATIC=ON \
		-DBUILD_TESTING=OFF >"$work/static.log" 2>&1 ||
		{ tail -20 "$work/static.log"; die "configuring the static build"; }
fi
cmake --build "$static" -j2 >"$work/static-build.log" 2>&1 ||
	{ tail -20 "$work/static-build.log"; die "building $static"; }
grep -q '^COLDSTART_STATIC:BOOL=ON' "$static/CMakeCache.txt" ||
	die "$static is not a -DCOLDSTART_STATIC=ON build"
(cd "$work/pkg" && cpack --config "$static/CPackConfig.cmake" -G DEB -B "$work/pkg") \
	>"$work/cpack.log" 2>&1 || { tail -20 "$work/cpack.log"; die "cpack -G DEB"; }
debs=("$work"/pkg/coldstart_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -s "${debs[0]}" ] || die "cpack made no single coldstart_*.deb"
deb=${debs[0]}
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"

# 2. Its fields and contents.
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$static/CMakeCache.txt")
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = coldstart ] && [ "$(field Architecture)" = amd64 ] &&
	[ -n "$version" ] && [ "$(field Version)" = "$version" ] && ok ||
	fail "Package/Architecture/Version: $(field Package) $(field Architecture) $(field Version) (project $version)"
# A static binary needs no shared library: no Depends at all.
[ -z "$(field Depends)" ] && ok || fail "Depends of a static coldstart: $(field Depends)"
[[ $(field Recommends) == *gnuplot-nox* ]] && ok || fail "Recommends lacks gnuplot-nox"
[[ $(field Suggests) == *qemu-system-x86* ]] && ok || fail "Suggests lacks qemu-system-x86"
contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
for f in ./usr/bin/coldstart ./usr/share/man/man1/coldstart.1.gz \
	./usr/share/bash-completion/completions/coldstart \
	./usr/share/doc/coldstart/copyright ./usr/share/doc/coldstart/changelog.gz \
	./usr/share/doc/coldstart/README.md.gz \
	./usr/share/doc/coldstart/docs/commands.md.gz \
	./usr/share/doc/coldstart/docs/internals.md.gz \
	./usr/share/doc/coldstart/docs/fleet.md.gz \
	./usr/share/doc/coldstart/docs/security.md.gz; do
	grep -qxF -- "$f" <<<"$contents" && ok || fail "the package lacks $f"
done
for gp in "$src"/plots/*.gp; do
	grep -qxF -- "./usr/share/coldstart/plots/$(basename "$gp")" <<<"$contents" && ok ||
		fail "the package lacks plots/$(basename "$gp")"
done
dpkg-deb -c "$deb" | awk '$2 != "root/root" { bad = 1 } END { exit bad }' && ok ||
	fail "files not owned by root/root"

# 3. apt-get install into a fresh root: apt's and dpkg's state live there,
# dpkg unpacks there (--root); this machine's apt hooks are not run.
root=$work/root
mkdir -p "$root"/var/lib/dpkg/{info,updates} "$root"/var/lib/apt/lists/partial \
	"$root"/var/cache/apt/archives/partial "$root"/var/log/apt \
	"$root"/etc/apt/{apt.conf.d,preferences.d,sources.list.d}
: >"$root/var/lib/dpkg/status"
cat >"$work/apt.conf" <<EOF
Dir "$root/";
Dir::State::status "$root/var/lib/dpkg/status";
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$root/etc/apt/sources.list.d";
#clear DPkg::Options;
DPkg::Options { "--root=$root"; "--log=$root/var/log/dpkg.log"; };
#clear DPkg::Pre-Invoke;
#clear DPkg::Post-Invoke;
#clear DPkg::Pre-Install-Pkgs;
EOF
apt_root() { DEBIAN_FRONTEND=noninteractive apt-get -c "$work/apt.conf" -y -q "$@"; }
(cd "$work/pkg" && apt_root install --no-install-recommends "./$(basename "$deb")") \
	>"$work/apt-install.log" 2>&1 && ok ||
	{ tail -20 "$work/apt-install.log"; die "apt-get install ./$(basename "$deb") into $root"; }
dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}' coldstart | grep -q 'install ok installed' &&
	ok || fail "dpkg in $root does not list coldstart as installed"

# 4. The installed coldstart.
C=$root/usr/bin/coldstart
readelf -l "$C" 2>/dev/null | grep -q INTERP && fail "the installed coldstart is dynamically linked" || ok
out=$("$C" --version) && [[ $out =~ ^coldstart\ $version\ \(.+\)$ ]] && ok ||
	fail "coldstart --version: '$out'"
out=$("$C" help) && grep -q '^Commands:' <<<"$out" && grep -q '^Exit codes:' <<<"$out" && ok ||
	fail "coldstart help"
commands=$("$C" help --commands) || die "coldstart help --commands"
# What the help texts list, read as a user reads them: the commands of
# `coldstart help`, the drivers and tuners of bench and tune, the actions
# in the usage lines of the others.
listed() { # COMMAND HEADING: the first words of the lines under HEADING
	"$C" $1 --help | sed -n "/^$2:/,/^\$/p" | sed '1d' | awk 'NF { print $1 }'
}
[ "$(listed '' Commands)" = "$commands" ] && ok ||
	fail "help --commands differs from the commands 'coldstart help' lists"

# 5. The man page renders without warnings and documents every command,
# every driver and tuner, and the exit codes.
man=$root/usr/share/man/man1/coldstart.1.gz
warn=$(zcat "$man" | groff -man -Tutf8 -ww -z 2>&1) && [ -z "$warn" ] && ok ||
	fail "the man page renders with warnings: $warn"
page=$(zcat "$man" | groff -man -Tutf8 -P-cbou 2>/dev/null)
for w in "EXIT STATUS" "77" "COMMANDS IN DETAIL"; do
	grep -q "$w" <<<"$page" && ok || fail "the man page lacks '$w'"
done
for cmd in $commands; do
	[ "$cmd" = help ] && continue
	grep -q "^   coldstart $cmd\$" <<<"$page" && ok || fail "the man page has no section for '$cmd'"
done
for sub in $(listed bench Drivers); do
	grep -q "^   coldstart bench $sub\$" <<<"$page" && ok || fail "the man page lacks bench $sub"
done
for sub in $(listed tune Tuners); do
	grep -q "^   coldstart tune $sub\$" <<<"$page" && ok || fail "the man page lacks tune $sub"
done

# 6. The bash completion: loads in a plain bash and completes what the
# help texts list.
comp=$root/usr/share/bash-completion/completions/coldstart
complete_words() { # WORDS...: the completions of the last word
	PATH=$root/usr/bin:$PATH bash --norc --noprofile -c '
		. "$0" || exit 1
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_coldstart && printf "%s\n" "${COMPREPLY[@]}"' "$comp" "$@"
}
bash --norc --noprofile -c '. "$0" && complete -p coldstart' "$comp" 2>&1 |
	grep -q -- '-F _coldstart coldstart$' && ok || fail "the completion does not register for coldstart"
[ "$(complete_words coldstart '')" = "$(listed '' Commands)" ] && ok ||
	fail "completing 'coldstart ' does not give the commands of 'coldstart help'"
[ "$(complete_words coldstart help '')" = "$(listed '' Commands)" ] && ok ||
	fail "completing 'coldstart help ' does not give the commands"
[ "$(complete_words coldstart bench '')" = "$(listed bench Drivers)" ] && ok ||
	fail "completing 'coldstart bench ' does not give the drivers"
[ "$(complete_words coldstart tune '')" = "$(listed tune Tuners)" ] && ok ||
	fail "completing 'coldstart tune ' does not give the tuners"
for cmd in $commands; do
	# Actions named in the command's usage lines ("coldstart pool serve").
	case $cmd in bench | tune | help) continue ;; esac
	want=$("$C" "$cmd" --help 2>/dev/null | grep -oE "coldstart $cmd [a-z]+" | awk '{ print $3 }' | sort -u)
	got=$(complete_words coldstart "$cmd" '' | sort -u)
	[ "$got" = "$want" ] && ok ||
		fail "completing 'coldstart $cmd ': got '$(echo $got)', its help lists '$(echo $want)'"
done
grep -qx -- --quick <<<"$(complete_words coldstart bench suite --qu)" && ok ||
	fail "completing 'coldstart bench suite --qu'"
grep -qx -- --threshold <<<"$(complete_words coldstart compare --thr)" && ok ||
	fail "completing 'coldstart compare --thr'"

# 7. lintian, where installed: no errors or warnings (the static binary's
# tags are overridden in the package, with the reason).
if command -v lintian >/dev/null; then
	lintian --fail-on error,warning "$deb" >"$work/lintian.log" 2>&1 && ok ||
		{ cat "$work/lintian.log"; fail "lintian"; }
else
	echo "lintian is not installed: not run"
fi

# 8. Purged again, with apt-get: nothing of the package is left.
apt_root purge coldstart >"$work/apt-purge.log" 2>&1 && ok ||
	{ tail -20 "$work/apt-purge.log"; fail "apt-get purge coldstart"; }
left=$(find "$root/usr" -type f 2>/dev/null)
[ -z "$left" ] && ok || fail "left after the purge: $left"
rm -rf "$root"

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
