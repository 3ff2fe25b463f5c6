#!/bin/bash
# Writes the coldstart(1) man page (roff) on stdout, made from the CLI's own
# help texts so that it lists every command, driver and tuner the binary
# has, with their options; the build runs it (packaging/CMakeLists.txt).
# Usage: coldstart-man.sh COLDSTART VERSION
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 COLDSTART VERSION" >&2; exit 2; }
C=$1
VERSION=$2

# roff: backslashes and hyphens escaped, no line may start a request.
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^[.']/\\\\\\&&/"; }

# help_block TITLE ARGS...: a subsection with `coldstart ARGS --help`
# verbatim.
help_block() {
	local title=$1 text
	shift
	text=$("$C" "$@" --help) || {
		echo "coldstart-man.sh: 'coldstart $* --help' failed" >&2
		exit 1
	}
	printf '.SS "%s"\n.nf\n' "$title"
	printf '%s\n' "$text" | esc
	printf '.fi\n'
}

usage=$("$C" --help)
cat <<EOF
.TH COLDSTART 1 "" "coldstart $VERSION" "User Commands"
.SH NAME
coldstart \\- measure and tune how fast and densely a Linux host starts microVMs
.SH SYNOPSIS
.B coldstart
.I COMMAND
.RI [ OPTIONS ]
.br
.B coldstart
.BR \\-\\-version " | " \\-\\-help
.br
.B coldstart help
.RI [ COMMAND ]
.SH DESCRIPTION
.B coldstart
measures how fast, and how densely, this host starts sandboxed microVMs on
KVM (x86\\-64): a small reference VMM with a built\\-in synthetic guest,
benchmark drivers that time the VM lifecycle against a bare\\-ioctl floor
measured in the same run, snapshot restore strategies, a warm pool,
tuners that recommend settings from this host's own measurements, reports
with plots, and a regression gate that compares two results.
.PP
Every benchmark driver writes a JSON result document (and a Markdown
table) into its
.B \\-\\-out
directory;
.B coldstart report
turns result documents into report.md, CSV files and plots, and
.B coldstart compare
compares two of them.
.B coldstart bench suite
runs every driver in turn and then the report.
On a host without a usable /dev/kvm, the suite runs inside an emulated SVM
host
.RB ( "coldstart emulate" ,
QEMU TCG): every driver works there, but timings are functional only.
.SH COMMANDS
EOF
# The command table, as `coldstart --help` prints it.
printf '%s\n' "$usage" | sed -n '/^Commands:/,/^$/p' | sed '1d;/^$/d' |
	while read -r name summary; do
		printf '.TP\n.B %s\n%s\n' "$name" "$(printf '%s\n' "$summary" | esc)"
	done

printf '.SH "COMMANDS IN DETAIL"\n'
printf 'Each command'"'"'s own help text, as\n.B coldstart COMMAND \\-\\-help\nprints it.\n'
for cmd in $("$C" help --commands); do
	[ "$cmd" = help ] && continue
	help_block "coldstart $cmd" "$cmd"
	# Drivers and tuners have help texts of their own; the actions of
	# snapshot, pool and image share their command's.
	case $cmd in
	bench | tune)
		for sub in $("$C" help --commands "$cmd"); do
			help_block "coldstart $cmd $sub" "$cmd" "$sub"
		done
		;;
	esac
done

printf '.SH "EXIT STATUS"\n'
# "Exit codes: 0 ok, 1 failure, ..." from `coldstart --help`, one entry
# per code.
printf '%s\n' "$usage" | sed -n '/^Exit codes:/,/\.$/p' | paste -sd ' ' |
	sed -e 's/^Exit codes: *//' -e 's/\. .*$//' -e 's/, */\n/g' |
	while read -r code meaning; do
		[ -n "$code" ] || continue
		printf '.TP\n.B %s\n%s\n' "$code" "$(printf '%s\n' "$meaning" | esc)"
	done
cat <<'EOF'
.PP
Commands that say more (a regression found, a guest whose checksum is
wrong) describe it under their own help text above.
.SH ENVIRONMENT
.TP
.B TMPDIR
where
.B coldstart bench restore
makes its snapshot directories (default /var/tmp).
.TP
.BR XDG_CACHE_HOME ", " HOME
the guest image cache of a user other than root
($XDG_CACHE_HOME/coldstart/images, else ~/.cache/coldstart/images).
.TP
.B PATH
where gnuplot (the report's plots), qemu\-system\-x86_64
.RB ( "coldstart bench peers" ,
.BR "coldstart emulate" )
and mkfs.ext4 are looked up.
.SH FILES
.TP
.I /dev/kvm
the KVM device every VM needs (or
.B \-\-kvm
.IR PATH ).
.TP
.I /var/cache/coldstart/images
the guest and emulated host kernels
.B coldstart image build
caches (as root).
.TP
.I results/HOST\-DATE
where
.B coldstart bench suite
writes by default.
.TP
.I /usr/share/coldstart/plots
the gnuplot scripts of the report's plots (the binary carries its own
copies), and fault_timeline.gp for
.BR "coldstart probe \-\-csv" .
.TP
.I /usr/share/doc/coldstart/README.md.gz
the full documentation: every driver's method, result fields and caveats.
.SH EXAMPLES
Run the quick suite and write results, report and plots:
.PP
.nf
.RS
coldstart bench suite \-\-quick \-\-out results/myhost
.RE
.fi
.PP
Compare a new result with a baseline; exit status 1 on a regression:
.PP
.nf
.RS
coldstart compare base/lifecycle.json new/lifecycle.json
.RE
.fi
.SH "SEE ALSO"
.BR gnuplot (1),
.BR qemu\-system\-x86_64 (1)
EOF
