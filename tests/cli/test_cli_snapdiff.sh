#!/bin/bash
# Diff snapshots and merges end to end, and the huge-page strategies' exit
# 77 when the host has no huge pages reserved.
. "$(dirname "$0")/lib.sh"
COLDSTART=$1
need_kvm
scratch

expect 0 "snapshot $tmp/base" snapshot create "$tmp/base" --mem 32M \
	--init 8M --ws 4M --pattern random --op write
# 1024 working-set pages and one more the probe guest writes; on VMX/SVM the CPU
# also sets accessed/dirty bits in the guest's page tables (up to 19 pages
# for 32 MiB), which PVM's shadow paging does not write back.
expect 0 "10[2-4][0-9] pages \(4.0 MiB\) written" snapshot create "$tmp/d" --diff-from "$tmp/base"
expect 0 "diff of .*base" snapshot inspect "$tmp/d"
timeout 60 "$COLDSTART" snapshot inspect "$tmp/d" --json >"$tmp/i.json"
json_check "1025 <= d['diff']['dirty_pages'] <= 1044 and d['probe']['phase'] == 3" \
	"$tmp/i.json"
# The diff holds the dirty pages only; the base holds the init region.
if [ "$(du -k "$tmp/d/memory" | cut -f1)" -lt 6000 ]; then ok
else fail "the diff's memory file is not smaller than the base's"; fi
expect 0 "matches the prediction" snapshot restore "$tmp/d" --mem-restore uffd
expect 0 "merged" snapshot merge "$tmp/base" "$tmp/d" "$tmp/m"
expect 0 "matches the prediction" snapshot restore "$tmp/m" --mem-restore eager
timeout 60 "$COLDSTART" snapshot merge "$tmp/base" "$tmp/d" "$tmp/m" --force \
	--json >"$tmp/m.json"
json_check "d['command'] == 'snapshot merge' and d['diffs'] == ['$tmp/d']" \
	"$tmp/m.json"
# A diff of a diff at an earlier PHASE than its base reached is refused.
expect 1 "ended before every vCPU reported PHASE compute" \
	snapshot create "$tmp/dd" --diff-from "$tmp/d"
[ -e "$tmp/dd" ] && fail "a failed diff left $tmp/dd"
# Wrong or missing inputs.
expect 0 "" snapshot create "$tmp/other" --mem 32M --init 8M --ws 4M
expect 1 "was not taken against" snapshot merge "$tmp/other" "$tmp/d" "$tmp/x"
expect 1 "not a diff" snapshot merge "$tmp/base" "$tmp/other" "$tmp/x"
expect 2 "exists" snapshot merge "$tmp/base" "$tmp/d" "$tmp/m"
expect 2 "needs BASE, at least one DIFF and OUT" snapshot merge "$tmp/base" "$tmp/m"
expect 2 "--pause-at" snapshot create "$tmp/x" --diff-from "$tmp/base" \
	--pause-at lunch
expect 2 "workload comes from BASE" snapshot create "$tmp/x" \
	--diff-from "$tmp/base" --ws 8M
[ -e "$tmp/x" ] && fail "a refused command left $tmp/x"
mv "$tmp/base" "$tmp/base.moved"
expect 1 "whose base .* cannot be used" snapshot restore "$tmp/d"
mv "$tmp/base.moved" "$tmp/base"
# hugetlb strategies without a pool: a clear message and exit 77.
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
if [ "$free" -lt 16 ]; then
	expect 77 "nr_hugepages" snapshot restore "$tmp/m" --mem-restore uffd-huge
	expect 77 "nr_hugepages" snapshot restore "$tmp/m" --mem-restore eager-huge
fi
expect 0 "faults served" snapshot restore "$tmp/m" --mem-restore uffd
finish
