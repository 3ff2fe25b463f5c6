/* `coldstart compare --hosts DIR...`: many hosts' result directories side
 * by side, one row per host, grouped by CPU model, kernel and KVM flavour
 * (an emulated host is its own flavour), each driver's headline medians
 * in the columns. */
#include "hosts.h"

#include "err.h"
#include "result_set.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The series a driver is summed up by. A pattern matching several
 * series picks the best median among them (restore: the fastest
 * strategy and size). */
static const struct headline {
	const char *bench, *pattern, *label;
} headlines[] = {
	{ "lifecycle", "inproc.coldstart", "lifecycle in-process" },
	{ "lifecycle", "process.coldstart", "lifecycle process" },
	{ "boot", "total", "boot total" },
	{ "restore", "*/warm/done", "restore warm done, best" },
	{ "rate", "inproc.w1", "rate in-process, 1 worker" },
	{ "peers", "coldstart", "peers coldstart" },
	{ "peers", "qemu.microvm", "peers QEMU microvm" },
	{ "density", "fresh.pss_per_vm", "density PSS per VM" },
};

#define NR_HEADLINES (sizeof(headlines) / sizeof(headlines[0]))

struct host {
	struct result_set set;
	const char *name, *cpu, *kernel, *flavour;
	char group[512];
	double value[NR_HEADLINES]; /* NaN: not measured there */
	const char *unit[NR_HEADLINES];
};

static const char *text_at(const json_t *sys, const char *a, const char *b)
{
	const char *s = json_string_value(json_object_get(
		json_object_get(sys, a), b));

	return s && *s ? s : "?";
}

/* Host metadata from the directory's first document with a sysinfo. */
static void describe(struct host *h)
{
	const json_t *sys = json_null();
	const char *emu, *name;

	for (size_t i = 0; i < h->set.n && json_is_null(sys); i++)
		sys = h->set.docs[i].doc.sysinfo;
	name = json_string_value(json_object_get(sys, "hostname"));
	h->name = name && *name ? name : "?";
	h->cpu = text_at(sys, "cpu", "model");
	h->kernel = text_at(sys, "kernel", "release");
	h->flavour = text_at(sys, "kvm", "flavour");
	emu = result__sysinfo_emulated(sys);
	snprintf(h->group, sizeof(h->group), "%s; kernel %s; KVM %s%s%s",
		 h->cpu, h->kernel, h->flavour, emu ? ", emulated: " : "",
		 emu ? emu : "");
}

static void headline(struct host *h, size_t k)
{
	const struct result_entry *e = result__set_find(&h->set,
							headlines[k].bench);
	double m;

	h->value[k] = NAN;
	for (size_t i = 0; e && i < e->doc.nr_series; i++) {
		const struct result_series *s = &e->doc.series[i];

		if (fnmatch(headlines[k].pattern, s->name, 0) ||
		    stats__median(s->samples, s->n, &m) < 0)
			continue;
		if (isnan(h->value[k]) ||
		    (s->higher_is_better ? m > h->value[k] : m < h->value[k])) {
			h->value[k] = m;
			h->unit[k] = s->unit;
		}
	}
}

static int by_group(const void *a, const void *b)
{
	const struct host *x = a, *y = b;
	int c = strcmp(x->group, y->group);

	return c ? c : strcmp(x->name, y->name);
}

static void cell(FILE *out, double v, const char *unit)
{
	if (isnan(v))
		fputs(" - |", out);
	else if (!strcmp(unit, "ns"))
		fprintf(out, " %.4g ms |", v / 1e6);
	else if (!strcmp(unit, "kib"))
		fprintf(out, " %.0f KiB |", v);
	else
		fprintf(out, " %.4g %s |", v, unit);
}

static void table_head(FILE *out, const bool *shown)
{
	fputs("| host | results |", out);
	for (size_t k = 0; k < NR_HEADLINES; k++)
		if (shown[k])
			fprintf(out, " %s |", headlines[k].label);
	fputs("\n|---|---|", out);
	for (size_t k = 0; k < NR_HEADLINES; k++)
		if (shown[k])
			fputs("---:|", out);
	fputc('\n', out);
}

static void print_hosts(const struct host *h, size_t n, FILE *out)
{
	bool shown[NR_HEADLINES] = { false };

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < NR_HEADLINES; k++)
			shown[k] |= !isnan(h[i].value[k]);
	fprintf(out, "# Hosts\n\n%zu result directories; medians of each "
		"driver's headline series (- : not measured there). Timings "
		"from an emulated host are functional only.\n", n);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(h[i].group, h[i - 1].group)) {
			fprintf(out, "\n## %s\n\n", h[i].group);
			table_head(out, shown);
		}
		fprintf(out, "| %s | %s |", h[i].name, h[i].set.where);
		for (size_t k = 0; k < NR_HEADLINES; k++)
			if (shown[k])
				cell(out, h[i].value[k], h[i].unit[k]);
		fputc('\n', out);
	}
}

int hosts__table(char *const dirs[], size_t n, FILE *out)
{
	struct host *h = calloc(n, sizeof(*h));
	int ret = h ? 0 : err__set(ENOMEM, "allocating hosts");

	for (size_t i = 0; ret == 0 && i < n; i++) {
		ret = result__load_set(dirs[i], &h[i].set);
		if (ret == 0 && !h[i].set.is_dir)
			ret = err__set(EINVAL, "%s is not a directory of "
				       "results", dirs[i]);
		if (ret < 0)
			break;
		describe(&h[i]);
		for (size_t k = 0; k < NR_HEADLINES; k++)
			headline(&h[i], k);
	}
	if (ret == 0) {
		qsort(h, n, sizeof(*h), by_group);
		print_hosts(h, n, out);
	}
	for (size_t i = 0; h && i < n; i++)
		result__free_set(&h[i].set);
	free(h);
	return ret;
}
