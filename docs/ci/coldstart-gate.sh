#!/bin/sh
# The shell steps of coldstart's CI benchmark gate, shared by the GitHub
# Actions workflow and the GitLab CI job beside this file:
#
#   coldstart-gate.sh build                 configure and build (or use $COLDSTART)
#   coldstart-gate.sh bench DIR             the quick suite into DIR
#   coldstart-gate.sh gate BASE NEW OUT     compare: OUT/summary.md, OUT/junit.xml,
#                                           OUT/gh.json; exit code of compare
#   coldstart-gate.sh promote NEW BASE      NEW becomes the baseline
#
# Environment: COLDSTART (the binary; default build/coldstart),
# COLDSTART_SUITE (suite options, default --quick), COLDSTART_ONLY
# (drivers, default all), COLDSTART_COMPARE (more compare options, e.g.
# "--threshold 10"), ALLOW_INCONCLUSIVE=1 (let exit 3 pass with a
# warning), GITHUB_STEP_SUMMARY (the summary is appended there too).
set -eu

COLDSTART=${COLDSTART:-build/coldstart}

warn() {
	if [ -n "${GITHUB_ACTIONS:-}" ]; then
		echo "::warning::$*"
	else
		echo "warning: $*" >&2
	fi
}

build() {
	if [ -x "$COLDSTART" ] && [ "$COLDSTART" != build/coldstart ]; then
		echo "using $COLDSTART"
		return 0
	fi
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j"$(nproc)"
}

bench() {
	[ -e /dev/kvm ] || warn "no /dev/kvm on this runner: the suite runs emulated and the gate compares functional timings"
	only=
	[ -n "${COLDSTART_ONLY:-}" ] && only="--only $COLDSTART_ONLY"
	# shellcheck disable=SC2086 # option lists
	"$COLDSTART" bench suite ${COLDSTART_SUITE:---quick} $only --no-report --out "$1"
}

gate() {
	base=$1 new=$2 out=$3
	mkdir -p "$out"
	if [ ! -d "$base" ] || [ -z "$(ls "$base"/*.json 2>/dev/null)" ]; then
		echo "no baseline yet ($base): nothing to gate; this run's results can become it" |
			tee "$out/summary.md"
		return 0
	fi
	set +e
	# shellcheck disable=SC2086
	"$COLDSTART" compare "$base" "$new" --format markdown \
		--export-github "$out/gh.json" ${COLDSTART_COMPARE:-} >"$out/summary.md"
	code=$?
	# shellcheck disable=SC2086
	"$COLDSTART" compare "$base" "$new" --format junit \
		${COLDSTART_COMPARE:-} >"$out/junit.xml" 2>/dev/null
	set -e
	cat "$out/summary.md"
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
	fi
	if [ "$code" -eq 3 ] && [ "${ALLOW_INCONCLUSIVE:-0}" = 1 ]; then
		warn "benchmark gate inconclusive: take more samples (see the summary)"
		code=0
	fi
	return "$code"
}

promote() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	cp -r "$1" "$2"
	echo "baseline updated: $2"
}

step=${1:-}
[ $# -gt 0 ] && shift
case "$step" in
build) build ;;
bench) [ $# -eq 1 ] || { echo "usage: $0 bench DIR" >&2; exit 2; }; bench "$1" ;;
gate) [ $# -eq 3 ] || { echo "usage: $0 gate BASE NEW OUT" >&2; exit 2; }; gate "$@" ;;
promote) [ $# -eq 2 ] || { echo "usage: $0 promote NEW BASE" >&2; exit 2; }; promote "$@" ;;
*) echo "usage: $0 build | bench DIR | gate BASE NEW OUT | promote NEW BASE" >&2; exit 2 ;;
esac
