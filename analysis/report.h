/* `coldstart report RESULTS.json...`: report.md, CSV files for plotting
 * and gnuplot plots (PNG, SVG) from stored result documents (schema 1).
 *
 * CSV files (header row, comma-separated; ns values shown in ms):
 *   series.csv  label,bench,series,unit,n,min,p50,p90,p99,p99_9,max,mean,
 *               stddev,cv,ci95_lo,ci95_hi,better   every series' summary
 *               (better: "lower" or "higher", e.g. VMs/s)
 *   cdf.csv     label,group,series,unit,value,fraction
 *               every sample, sorted per series (plots/cdf.gp draws
 *               the time series: unit ms)
 *   restore.csv strategy,cache,mem_mib,ws_mib,n,first_run_ms,
 *               first_progress_ms,done_ms,done_p90_ms,request_ms,faults,
 *               mib_read,host_faults,major_faults,disk_mib_read
 *               medians per restore cell, work columns means per restore
 *               (ws_mib empty where the working set is not known, a
 *               Linux guest's snapshot; the last three empty when the
 *               document lacks them)
 *                                          (plots/restore.gp)
 *   rate.csv    mode,concurrency,vms_per_s,p50_ms,p99_ms (plots/rate.gp)
 *   density.csv variant,vms,rss_mib,pss_mib,uss_mib,kernel_mib
 *                                               (plots/density.gp)
 * `label` names a document: its bench, with "-2", "-3"... when several
 * documents of one bench are reported together. */
#ifndef COLDSTART_REPORT_H
#define COLDSTART_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct report_opts {
	const char *out_dir; /* default: the first input's directory */
	bool md, png, svg;   /* formats; CSV is always written */
	char **inputs;
	size_t nr_inputs;
	/* NULL: each input is read from its file; else docs[i] is inputs[i]
	 * already parsed, which the report reads (and may change) instead:
	 * a caller that built the document, as a fuzz target does */
	json_t **docs;
	bool quiet;          /* no "wrote ..." lines on stdout */
};

/* Reads every input (schema 1 result documents; -EINVAL naming the file
 * and the problem otherwise) and writes the report into o->out_dir.
 * Plots are skipped with a warning on stderr when gnuplot is missing;
 * *plots_skipped tells the caller. 0 or -errno with a message. */
int report__generate(const struct report_opts *o, bool *plots_skipped);

/* When dir holds a report.md, writes it (and its CSV files and plots)
 * anew from every result document in dir, the tuners' included: what
 * `coldstart tune ... --out DIR` does so that its recommendation joins the
 * results directory's report. *refreshed says whether it did. 0 or
 * -errno with a message. */
int report__refresh_dir(const char *dir, bool *refreshed);

/* For a tuner `who` that wrote into dir: report__refresh_dir, saying on
 * stdout (unless quiet) that report.md includes it now, or warning on
 * stderr. */
void report__join(const char *who, const char *dir, bool quiet);

/* One Markdown line on KSM with mode `mode`'s last VMs alive, from the
 * mode's object `m` of density.json's "density" (nothing without "ksm");
 * the density driver's own Markdown prints it too. */
void report__md_ksm(FILE *out, const char *mode, const json_t *m);

/* The guest a density document measured, for a planner: "probe
 * `d1cac105`" (the sha256's start) or "linux `3f2a9c01`, 256 MiB, 1
 * vCPU" (its kernel's, and the config's guest memory and vCPUs), with
 * ", rootfs NAME (N MiB)" when its VMs had one. */
void report__density_guest(char *buf, size_t len, const json_t *doc);

/* A density document's root disk (--rootfs): the image, what disk per
 * VM and shared mean, and --exec's command, a Markdown paragraph;
 * nothing without one. */
void report__density_rootfs(FILE *out, const json_t *doc);

/* LEAD "disk per VM N KiB (shared M KiB)" of a mode's object `m` with
 * --rootfs; nothing otherwise. */
void report__density_disk(FILE *out, const json_t *m, const char *lead);

/* Where a density document's VMs were held while measured, as a
 * sentence for the Markdown (ends with a period). */
const char *report__density_held(const json_t *doc);

/* Where a Linux guest's clones were restored from a snapshot taken with
 * another command line than the fresh VMs' (config.clone_cmdline: inside
 * the emulated host `snapshot create` adds coldstart.done=mmio), a
 * Markdown paragraph naming both; nothing otherwise. */
void report__density_cmdline(FILE *out, const json_t *doc);

/* 1 when path holds a result document (any driver's or a tuner's), 0
 * for other JSON, -EINVAL with a message naming the file and the JSON
 * error when it is not JSON. */
int report__classify(const char *path);

#endif
