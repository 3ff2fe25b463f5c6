/* Capacity figures for planners: VMs per GiB and VMs per second as
 * series of samples (bigger is better) that `coldstart compare` can gate,
 * and how many VMs of a measured guest fit a host.
 *
 * Series (unit, "better": "higher"):
 *   MODE.vms_per_gib      (density; "vms_per_gib") one sample per VM
 *                         after the first: 1 GiB over the memory that VM
 *                         added to the curve (PSS + kernel memory)
 *   NAME.vms_per_s        (rate; "vms_per_s") beside the latency series
 *                         NAME: sustained levels one sample per block of
 *                         successive completions, bursts one per round
 * Documents from before these series get them derived at report time
 * (capacity__derive_series), from what the document holds. */
#ifndef COLDSTART_CAPACITY_H
#define COLDSTART_CAPACITY_H

#include <jansson.h>
#include <stddef.h>

/* A sustained level's completions are cut into this many blocks (fewer
 * when fewer VMs completed). */
#define CAPACITY_RATE_BLOCKS 8

/* VMs per GiB from a density curve's costs (KiB with 1, 2, ... n VMs
 * alive): 1 GiB / (cost[i] - cost[i-1]) for i >= 1; an increment that is
 * not positive (noise in the kernel's memory counters) is left out. With
 * n == 1, the one sample 1 GiB / cost[0]. Returns the number of samples
 * written to out (room for n). */
size_t capacity__vms_per_gib(const double *cost_kib, size_t n, double *out);

/* VMs per second over successive blocks of completions: ends_ns holds n
 * completion times (ns since the counted part began, any order; sorted
 * in place), cut into min(blocks, n) blocks of about equal count; each
 * sample is the block's count over the time from the previous block's
 * last completion (0 for the first) to its own. Returns the number of
 * samples written to out (room for blocks); 0 when a block took no
 * time. */
size_t capacity__block_rates(double *ends_ns, size_t n, size_t blocks,
			     double *out);

/* What the host keeps for itself: max(1 GiB, 10 % of MemTotal). */
double capacity__reserve_kib(double total_kib);

/* VMs per host by memory: floor((total - reserve - fixed) / marginal),
 * fixed (memory the VMs share, counted once) taken as 0 when negative;
 * 0 when nothing fits, -1 when marginal is not positive. */
double capacity__vms_by_memory(double total_kib, double fixed_kib,
			       double marginal_kib);

/* Adds doc's density series MODE.vms_per_gib from its curve
 * ("density": {MODE: {"curve": [{"cost_kib"}...]}}) unless present.
 * 0 or -ENOMEM with a message. */
int capacity__add_density_series(json_t *doc, const char *mode);

/* Adds the series LAT.vms_per_s beside rate's latency series `lat`
 * (its params copied) with n samples. 0 or -ENOMEM with a message. */
int capacity__add_rate_series(json_t *doc, const json_t *lat,
			      const double *samples, size_t n);

/* For a document written before the capacity series existed: density's
 * MODE.vms_per_gib from each mode's curve; rate's NAME.vms_per_s from
 * a burst's per-round makespans, else the level's one overall
 * "vms_per_s". Series present already are kept. 0 or -ENOMEM. */
int capacity__derive_series(json_t *doc);

#endif
