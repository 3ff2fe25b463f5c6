#!/bin/bash
# What coldstart derives from stored results, byte for byte: the report
# (Markdown and CSV), compare in every format, the Prometheus export and
# tune pool's document with a fixed seed, all from the committed reference
# results (and a copy of them changed by tests/golden/derive.py), against
# the outputs in tests/golden/. A restructuring of the code must leave
# every one of them unchanged; no KVM needed.
#
# An intended change of output is recorded with
#   bash tests/cli/test_cli_golden.sh build/coldstart --update
# and the diff of tests/golden/ reviewed like code.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
scratch
here=$(cd "$(dirname "$0")/../.." && pwd)
ref=$here/results/reference-pvm-2core
golden=$here/tests/golden
o=$tmp/out
mkdir -p "$o"

python3 "$golden/derive.py" "$ref" "$tmp/new" || fail "derive.py"

# run NAME CODE ARGS...: the command's stdout into $o/NAME
run() {
	local name=$1 want=$2 code
	shift 2
	timeout 300 "$COLDSTART" "$@" >"$o/$name" 2>"$err"
	code=$?
	if [ "$code" -ne "$want" ]; then
		fail "coldstart $* exited $code, expected $want"
		sed 's/^/  | /' "$err" | head -5
	fi
}

run report.out 0 report "$ref" --format md --out "$o/report"
run compare.txt 1 compare "$ref" "$tmp/new"
run compare.md 1 compare "$ref" "$tmp/new" --format markdown
run compare.json 1 compare "$ref" "$tmp/new" --format json
run compare.junit.xml 1 compare "$ref" "$tmp/new" --format junit
run export.prom 0 export prometheus "$ref"
run tune.out 0 tune pool --host "$ref" --arrivals poisson:20 \
	--duration 2m --slo p99=10ms --seed 1 --out "$o/tune"
# Neither the paths of this checkout and scratch directory nor the host
# that runs the test are part of the output: tune pool records this host's
# facts (sysinfo) and the commit of the binary beside what it derived, and
# they are left out here.
find "$o" -type f -exec sed -i "s#$tmp#TMP#g; s#$ref#REF#g" {} +
python3 - "$o/tune/tune-pool.json" <<'PY' || fail "tune-pool.json is not JSON"
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
d["sysinfo"] = "(this host)"
d["coldstart"]["commit"] = "(this build)"
with open(sys.argv[1], "w") as f:
    json.dump(d, f, indent=1, sort_keys=True)
PY
rm -f "$o/tune/pareto.png"

# Small text outputs are kept whole, to be read in a diff; large ones as
# their sha256 only.
large="report/cdf.csv compare.json export.prom tune/tune-pool.json tune/pareto.csv"
if [ "${2:-}" = --update ]; then
	(cd "$o" && find . -type f | sort | sed 's#^\./##') | while read -r f; do
		case " $large " in *" $f "*) continue ;; esac
		mkdir -p "$golden/$(dirname "$f")"
		cp "$o/$f" "$golden/$f"
	done
	(cd "$o" && sha256sum $large) >"$golden/SHA256SUMS"
	echo "golden outputs written to $golden"
	exit 0
fi

count=0
for f in $(cd "$o" && find . -type f | sort | sed 's#^\./##'); do
	case " $large " in *" $f "*) continue ;; esac
	count=$((count + 1))
	if [ ! -f "$golden/$f" ]; then
		fail "$f: a new output, not in tests/golden"
	elif diff -u "$golden/$f" "$o/$f" >"$tmp/diff"; then
		ok
	else
		fail "$f differs from tests/golden/$f"
		head -20 "$tmp/diff" | sed 's/^/  | /'
	fi
done
# Every kept output was made again.
for f in $(cd "$golden" && find . -type f ! -name '*.py' ! -name SHA256SUMS | sort | sed 's#^\./##'); do
	[ -f "$o/$f" ] || fail "$f: in tests/golden, no longer written"
done
if (cd "$o" && sha256sum --quiet -c "$golden/SHA256SUMS") >"$tmp/sums" 2>&1; then
	ok
else
	fail "large outputs differ from tests/golden/SHA256SUMS:"
	sed 's/^/  | /' "$tmp/sums"
fi
[ "$count" -ge 10 ] || fail "only $count outputs compared"
finish
