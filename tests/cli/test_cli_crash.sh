#!/bin/bash
# Crash consistency of `snapshot create --force` and `snapshot merge
# --force` under SIGKILL: a few kills of each here (crash_consistency.sh
# by hand takes N=100), every one leaving the old or the new snapshot
# whole, and the next run removing the temporaries the kills left.
exec bash "$(dirname "$0")/crash_consistency.sh" "$1" "${2:-10}"
