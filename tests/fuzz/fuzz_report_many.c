/* Fuzz target: `coldstart report` (report__generate, report.md and the
 * CSV files) on documents of many series made from the input, where
 * fuzz_report mutates JSON text and rarely gets past a few series. The
 * document is built in memory and given to the report as parsed (the
 * JSON text's reader is fuzz_report's and fuzz_result's), so that the
 * time goes to reading and planning the series. The first byte picks
 * the bench (which driver's parts run) and with its top two bits set
 * the next two how many series (up to 319; else the next one, up to
 * 47), and then a few bytes per series its unit,
 * params from small pools (phase, cache, memory and working-set sizes,
 * strategy, mode, kind, workers: so groups, rows, cells and modes repeat
 * and collide, names that need making safe among them) and samples; an
 * input that runs out goes on with bytes of its own hash. Hundreds of
 * series exercise the CDF groups split into plots, restore's rows and
 * cells, rate's peaks, the tables per unit and the derived series. */
#include "fuzz.h"

#include "report.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char input[PATH_MAX], out[PATH_MAX];

struct bytes {
	const uint8_t *data;
	size_t size, pos;
	uint64_t state; /* splitmix64 of the input's hash, once it ran out */
};

static unsigned int byte(struct bytes *b)
{
	uint64_t z;

	if (b->pos < b->size)
		return b->data[b->pos++];
	z = (b->state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (unsigned int)((z ^ (z >> 31)) & 0xff);
}

#define PICK(b, pool) (pool)[byte(b) % (sizeof(pool) / sizeof((pool)[0]))]

static const char *const benches[] = { "restore", "rate", "lifecycle",
	"boot", "peers", "density", "pool", "suite", "other" };
static const char *const units[] = { "ns", "ns", "ns", "ns", "kib",
	"vms_per_s", "vms_per_gib", "u1", "u2" };
static const char *const phases[] = { "first_run", "first_progress", "done",
	"request", NULL, "done x" };
static const char *const caches[] = { "warm", "cold", "-", NULL,
	"warm ish" };
static const char *const strategies[] = { "mmap", "prefetch", "uffd",
	"never-stopped", "a b", "a_b", "prefetch-thp", NULL,
	"a-strategy-name-longer-than-a-row-holds-it" };
static const char *const modes[] = { "process", "in-process", "m1", "m2",
	NULL };
static const char *const kinds[] = { "sustained", "burst", NULL };

/* A size param: MiB from a pool, or odd values (negative, real, -0.0). */
static json_t *size_param(struct bytes *b)
{
	unsigned int k = byte(b);

	switch (k % 8) {
	case 0: return NULL;
	case 1: return json_real(-0.0);
	case 2: return json_real(0.0);
	case 3: return json_integer(-(json_int_t)(k << 20));
	default: return json_integer((json_int_t)(16 << (k % 5)) << 20);
	}
}

static void set_string(json_t *o, const char *key, const char *v)
{
	if (v)
		json_object_set_new(o, key, json_string(v));
}

static void set_new(json_t *o, const char *key, json_t *v)
{
	if (v)
		json_object_set_new(o, key, v);
}

static json_t *params(struct bytes *b)
{
	json_t *p = json_object();
	unsigned int w = byte(b);

	set_string(p, "phase", PICK(b, phases));
	set_string(p, "cache", PICK(b, caches));
	set_new(p, "mem_bytes", size_param(b));
	set_new(p, "ws_bytes", size_param(b));
	set_string(p, "strategy", PICK(b, strategies));
	set_string(p, "mode", PICK(b, modes));
	set_string(p, "kind", PICK(b, kinds));
	if (w % 4)
		json_object_set_new(p, "workers", w % 4 == 3 ?
				    json_real(w / 7.0) :
				    json_integer(w % 9));
	return p;
}

static json_t *series(struct bytes *b, unsigned int i)
{
	const char *unit = PICK(b, units);
	bool ns = !strcmp(unit, "ns");
	unsigned int n = byte(b) % 9, flags = byte(b);
	json_t *s = json_object(), *arr = json_array();
	char name[32];

	/* now and then a name used before: the document is refused */
	snprintf(name, sizeof(name), "s%u", flags == 0xff ? i / 2 : i);
	json_object_set_new(s, "name", json_string(name));
	json_object_set_new(s, "unit", json_string(unit));
	json_object_set_new(s, "better", json_string(flags & 1 ? "higher"
							       : "lower"));
	json_object_set_new(s, "params", params(b));
	for (unsigned int k = 0; k < n; k++) {
		json_int_t v = (json_int_t)(byte(b) | byte(b) << 8) *
			       (flags & 2 ? 1000 : 1);

		json_array_append_new(arr, ns ? json_integer(v)
					      : json_real((double)v / 3));
	}
	json_object_set_new(s, ns ? "samples_ns" : "samples", arr);
	if (flags & 4)
		json_object_set_new(s, "vms_per_s", json_real(byte(b) + 0.5));
	if (flags & 8)
		json_object_set_new(s, "makespan_ns", json_pack("[i, i]",
				    byte(b), byte(b) << 10));
	return s;
}

/* density's modes, each a curve of memory costs. */
static json_t *density(struct bytes *b)
{
	json_t *d = json_object();
	unsigned int nm = byte(b) % 4;

	for (unsigned int m = 0; m < nm; m++) {
		json_t *curve = json_array();
		unsigned int np = byte(b) % 6;
		char name[16];

		for (unsigned int k = 0; k < np; k++)
			json_array_append_new(curve, json_pack("{s:i, s:i}",
				"vms", k + 1, "cost_kib", byte(b) * 1000));
		snprintf(name, sizeof(name), "mode%u", m);
		json_object_set_new(d, name, json_pack("{s:o}", "curve",
						       curve));
	}
	return d;
}

static json_t *document(struct bytes *b)
{
	unsigned int first = byte(b), n = byte(b);
	const char *bench = benches[(first & 0x3f) % (sizeof(benches) /
						       sizeof(benches[0]))];
	/* a document of hundreds of series costs milliseconds under ASan:
	 * inputs ask for one with the first byte's top bits; 319 at most,
	 * past which more series only repeat the same groups and rows */
	n = (first & 0xc0) == 0xc0 ? (n | byte(b) << 8) % 320 : n % 48;
	json_t *doc = json_pack("{s:i, s:s, s:{s:s, s:{s:s, s:i}, s:{s:s}}, "
				"s:{}, s:[], s:[]}", "schema", 1, "bench",
				bench, "sysinfo", "hostname", "fuzz", "cpu",
				"model", "fuzz", "online_cpus", 2, "kvm",
				"flavour", "pvm", "config", "series",
				"warnings");
	json_t *arr = json_object_get(doc, "series");

	for (unsigned int i = 0; i < n; i++)
		json_array_append_new(arr, series(b, i));
	if (!strcmp(bench, "density"))
		json_object_set_new(doc, "density", density(b));
	return doc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz__report_paths("report_many", input, out, sizeof(input));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bytes b = { .data = data, .size = size,
			   .state = 0xcbf29ce484222325ull };
	char *inputs[] = { input };
	json_t *docs[1];
	struct report_opts o = { .out_dir = out, .md = true,
				 .inputs = inputs, .nr_inputs = 1,
				 .docs = docs, .quiet = true };
	bool plots_skipped;

	for (size_t i = 0; i < size; i++) /* FNV-1a */
		b.state = (b.state ^ data[i]) * 0x100000001b3ull;
	docs[0] = document(&b);
	if (docs[0])
		report__generate(&o, &plots_skipped);
	json_decref(docs[0]);
	return 0;
}
