#!/bin/bash
# Crash consistency of `snapshot create --force` and `snapshot merge
# --force` under SIGKILL: a few kills of each here (crash_consistency.sh
# by hand takes N=100), every one leaving the old or the new snapshot
# whole, and the next run removing the temporaries the kills left. In the
# emulated host (COLDSTART_EMULATED_RECORD set) every process start takes
# seconds, so 10 kills of each took 6-10 minutes of the CI budget: 4 there.
default=10
[ -n "${COLDSTART_EMULATED_RECORD:-}" ] && default=4
exec bash "$(dirname "$0")/crash_consistency.sh" "$1" "${2:-$default}"
