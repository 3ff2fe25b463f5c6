#!/bin/bash
# The two entry points of coldstart, for a fresh Debian 12 machine as root:
#   ./run.sh bench   install, build, run the quick benchmark suite and write
#                    results/<host>-<date>/ (every result, report.md, plots)
#   ./run.sh test    install (also the Prometheus servers the export
#                    test runs), build (plus an ASan/UBSan build and the
#                    libFuzzer build) and run every test with ctest
#   ./run.sh fuzz [SECONDS [TARGET...]]
#                    install, build the libFuzzer targets and run each
#                    for SECONDS (default 60)
# Each installs only the Debian packages that are missing.
set -euo pipefail
cd "$(dirname "$0")"

# Everything coldstart needs to build, benchmark and test, from Debian's
# archive.
PACKAGES=(gcc libc6-dev make cmake pkg-config libjansson-dev libcmocka-dev zlib1g-dev libzstd-dev python3 git clang libclang-rt-14-dev bpftool libbpf-dev libelf-dev gnuplot-nox nettle-dev libcsv-dev libseccomp-dev libcurl4-openssl-dev qemu-system-x86 busybox-static cpio e2fsprogs debootstrap)
# What only the tests need: the Prometheus servers `coldstart export
# prometheus` is tested against (the test starts its own on loopback
# ports; the packages' services are not used), the Ansible playbook's
# and the Kubernetes manifest's tests, the man page's rendering, ACPICA's
# disassembler for the guests' ACPI tables.
TEST_PACKAGES=(prometheus prometheus-node-exporter prometheus-pushgateway curl
	ansible python3-yaml groff-base acpica-tools)

log() { printf '==> %s\n' "$*" >&2; }

# timed WHAT COMMAND...: runs COMMAND and logs how long it took.
timed() {
	local what=$1 t0=$SECONDS code=0
	shift
	"$@" || code=$?
	log "$what took $((SECONDS - t0)) s"
	return $code
}

install_missing() { # PACKAGE...
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	log "installing Debian packages: ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "run.sh: installing packages needs root (or install: ${missing[*]})" >&2
		exit 1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() { # DIR CMAKE-ARGS...
	local dir=$1
	shift
	log "building in $dir"
	cmake -S . -B "$dir" "$@" >/dev/null
	cmake --build "$dir" -j"$(nproc)"
}

cmd_bench() {
	local out="results/$(hostname)-$(date -u +%Y%m%d-%H%M%S)"
	build build-static -DCMAKE_BUILD_TYPE=Release -DCOLDSTART_STATIC=ON -DBUILD_TESTING=OFF
	log "running the quick benchmark suite -> $out/"
	build-static/coldstart bench suite --quick --out "$out" "$@"
}

# The fuzz targets of tests/fuzz: clang with libFuzzer, ASan and UBSan.
build_fuzz() {
	build build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCOLDSTART_FUZZ=ON
}

cmd_fuzz() {
	local secs=${1:-60} t failed=() targets
	[[ $secs =~ ^[1-9][0-9]*$ ]] || {
		echo "run.sh fuzz: SECONDS must be a positive number, not '$secs'" >&2
		exit 2
	}
	shift $(($# ? 1 : 0))
	timed "the fuzz build" build_fuzz
	read -r -a targets <build-fuzz/tests/fuzz/targets
	[ $# -gt 0 ] && targets=("$@")
	for t in "${targets[@]}"; do
		[ -x "build-fuzz/tests/fuzz/fuzz_$t" ] || {
			echo "run.sh fuzz: no target '$t' (targets: $(cat build-fuzz/tests/fuzz/targets))" >&2
			exit 2
		}
		# The corpus in build-fuzz/fuzz/TARGET/ grows from run to run.
		tests/fuzz/fuzz_run.sh "build-fuzz/tests/fuzz/fuzz_$t" \
			"build-fuzz/tests/fuzz/seeds/$t" "tests/fuzz/regressions/$t" \
			"$secs" "build-fuzz/fuzz/$t" || failed+=("$t")
	done
	if [ ${#failed[@]} -gt 0 ]; then
		log "fuzz: findings in ${failed[*]} (inputs in build-fuzz/fuzz/TARGET/findings/)"
		exit 1
	fi
	log "fuzz: no findings in ${targets[*]}"
}

cmd_test() {
	# The tests' helpers (python3 for JSON checks, cmake, ...) are the
	# Debian packages above, not a version manager's shims earlier in
	# PATH: pyenv's python3 shim costs about 4 s a call here and 30 s in
	# the emulated host, where the KVM suites make about a hundred calls.
	export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"
	timed "the release build" build build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON
	timed "the ASan/UBSan build" build build-asan -DCMAKE_BUILD_TYPE=Debug -DCOLDSTART_SANITIZE=ON -DBUILD_TESTING=ON
	# The e2e rig runs this static coldstart inside its emulated host.
	timed "the static build" build build-static -DCMAKE_BUILD_TYPE=Release -DCOLDSTART_STATIC=ON -DBUILD_TESTING=OFF
	timed "the fuzz build" build_fuzz
	# Without a usable /dev/kvm the suites labelled kvm run inside the
	# emulated SVM host (the test emulated.kvm_suites), each reported by name.
	log "running every test (ASan/UBSan build; in an emulated host the KVM suites from the Release build; e2e with build-static)"
	# The package test (package.deb) packages build-static.
	# Where the KVM suites run in the emulated host, they run from the
	# Release build (see tests/emulated/run_kvm_suites.sh).
	COLDSTART_E2E_STATIC=$PWD/build-static/coldstart \
		COLDSTART_STATIC_BUILD=$PWD/build-static \
		COLDSTART_EMULATED_BUILD=$PWD/build \
		timed "ctest" ctest --test-dir build-asan --output-on-failure -j2 "$@"
	# Each fuzz target: its regression inputs, then 10 s of fuzzing.
	log "running the fuzz targets (label fuzz)"
	timed "ctest of the fuzz targets" ctest --test-dir build-fuzz --output-on-failure -j2 "$@"
}

case "${1:-}" in
bench | test | fuzz)
	cmd=$1
	shift
	if [ "$cmd" = test ]; then
		timed "installing packages" install_missing "${PACKAGES[@]}" "${TEST_PACKAGES[@]}"
	else
		timed "installing packages" install_missing "${PACKAGES[@]}"
	fi
	"cmd_$cmd" "$@"
	;;
*)
	echo "usage: ./run.sh bench [coldstart bench suite options] | ./run.sh test [ctest options] | ./run.sh fuzz [SECONDS [TARGET...]]" >&2
	exit 2
	;;
esac
