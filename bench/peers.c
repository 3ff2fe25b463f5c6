/* The peers benchmark: whole-process wall time and peak RSS of a guest
 * that exits at once, under `qemu-system-x86_64 -M microvm -enable-kvm`
 * (our 64 KiB firmware writing to isa-debug-exit) and under `coldstart run
 * --stop-at ready -q`, interleaved; reported as QEMU/coldstart ratios.
 * Without QEMU (none in PATH, or one that cannot use KVM here) coldstart
 * is measured alone and the document records QEMU as left out. */
#include "peers.h"

#include "args.h"
#include "child.h"
#include "cli.h"
#include "err.h"
#include "output.h"
#include "result.h"
#include "result_new.h"
#include "timeline.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char peer_bios_start[], peer_bios_end[];

enum peer { OURS, QEMU, NR_PEERS };

static const char *const peer_names[NR_PEERS] = { "coldstart", "qemu.microvm" };

struct peers_opts {
	struct bench_common c;
	const char *qemu;
};

struct peers {
	struct peers_opts o;
	char qemu_path[PATH_MAX];
	char bios[64];          /* the temporary firmware file */
	char *argv[NR_PEERS][24];
	double *wall[NR_PEERS]; /* ns */
	double *rss[NR_PEERS];  /* peak RSS, KiB */
	char left_out[NR_PEERS][320]; /* why a peer was not measured, or "" */
};

/* QEMU from --qemu or PATH; -ENOTSUP when it is not there. */
static int find_qemu(struct peers *p)
{
	const char *path = getenv("PATH");
	char *dirs, *save = NULL;

	if (p->o.qemu) {
		if (access(p->o.qemu, X_OK) < 0)
			return err__set(ENOTSUP, "QEMU '%s' is not an "
					"executable file", p->o.qemu);
		snprintf(p->qemu_path, sizeof(p->qemu_path), "%s", p->o.qemu);
		return 0;
	}
	dirs = strdup(path ? path : "/usr/bin:/bin");
	if (!dirs)
		return err__set(ENOMEM, "copying PATH");
	for (char *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(p->qemu_path, sizeof(p->qemu_path),
			 "%s/qemu-system-x86_64", d);
		if (access(p->qemu_path, X_OK) == 0) {
			free(dirs);
			return 0;
		}
	}
	free(dirs);
	return err__set(ENOTSUP, "qemu-system-x86_64 is not installed (Debian: "
			"apt-get install qemu-system-x86)");
}

static int write_bios(struct peers *p)
{
	size_t len = (size_t)(peer_bios_end - peer_bios_start);
	int fd;

	snprintf(p->bios, sizeof(p->bios), "/tmp/coldstart-peer-XXXXXX");
	fd = mkstemp(p->bios);
	if (fd < 0)
		return err__sys(errno, "creating the peer firmware file");
	if (write(fd, peer_bios_start, len) != (ssize_t)len) {
		int ret = err__sys(errno ? errno : EIO, "writing %s", p->bios);

		close(fd);
		unlink(p->bios);
		return ret;
	}
	close(fd);
	return 0;
}

static void build_argv(struct peers *p, const char *exe)
{
	static const char *const qemu_args[] = {
		"-M", "microvm", "-enable-kvm", "-m", "16M", "-nodefaults",
		"-no-user-config", "-display", "none", "-device",
		"isa-debug-exit,iobase=0xf4,iosize=0x04", "-bios", NULL };
	char **q = p->argv[QEMU], **c = p->argv[OURS];
	int n = 0;

	q[n++] = p->qemu_path;
	for (int i = 0; qemu_args[i]; i++)
		q[n++] = (char *)qemu_args[i];
	q[n++] = p->bios;
	q[n] = NULL;
	n = 0;
	c[n++] = (char *)exe;
	c[n++] = "run";
	c[n++] = "--stop-at=ready";
	c[n++] = "-q";
	if (p->o.c.kvm_path) {
		c[n++] = "--kvm";
		c[n++] = (char *)p->o.c.kvm_path;
	}
	c[n] = NULL;
}

/* One run; its wall time and peak RSS. QEMU must end with the guest's
 * status, coldstart with 0: anything else is a failure, not a sample. */
static int one_run(struct peers *p, enum peer who, double *wall, double *rss)
{
	int want = who == QEMU ? PEERS_QEMU_GUEST_STATUS : 0, status, ret;
	struct rusage ru;
	uint64_t t0 = timeline__now();
	char buf[32];

	ret = child__run(p->argv[who], true, &status, &ru);
	*wall = (double)(timeline__now() - t0);
	*rss = (double)ru.ru_maxrss;
	if (ret == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != want))
		ret = err__set(who == QEMU ? ENOTSUP : EIO, "%s %s (want exit "
			       "%d)%s", who == QEMU ? "QEMU" : "coldstart run",
			       child__status_text(status, buf, sizeof(buf)),
			       want, who == QEMU ? ": it cannot run the guest "
			       "with KVM on this host" : "");
	return ret;
}

static void leave_out(struct peers *p, enum peer who, const char *why)
{
	snprintf(p->left_out[who], sizeof(p->left_out[who]), "%s", why);
	fprintf(stderr, "coldstart: bench peers: %s left out: %s\n",
		peer_names[who], why);
}

/* Alternates which peer goes first, so neither always inherits the
 * other's cache state. */
static int measure(struct peers *p)
{
	uint64_t total = p->o.c.warmup + p->o.c.count;
	int ret = 0;

	for (uint64_t i = 0; ret == 0 && i < total; i++) {
		for (int k = 0; ret == 0 && k < NR_PEERS; k++) {
			enum peer who = (enum peer)((k + i) % NR_PEERS);
			double wall, rss;

			if (p->left_out[who][0])
				continue;
			ret = one_run(p, who, &wall, &rss);
			/* a QEMU that cannot use KVM here fails at once; the
			 * comparison is then left out, not the whole run */
			if (ret == -ENOTSUP && who == QEMU && i == 0) {
				leave_out(p, QEMU, err__last());
				ret = 0;
				continue;
			}
			if (ret == 0 && i >= p->o.c.warmup) {
				p->wall[who][i - p->o.c.warmup] = wall;
				p->rss[who][i - p->o.c.warmup] = rss;
			}
		}
		output__progress("peers", (unsigned long)(i + 1),
				 (unsigned long)total);
	}
	output__progress_done();
	return ret;
}

static int add_series(json_t *doc, const struct peers *p)
{
	json_t *ratios = json_object();
	double ours_wall = 0, ours_rss = 0;
	char name[64];

	for (int k = 0; k < NR_PEERS; k++) {
		json_t *w, *r;

		if (p->left_out[k][0]) {
			result__skip(doc, peer_names[k], "%s", p->left_out[k]);
			continue;
		}
		w = result__add_series(doc, peer_names[k], "ns", RESULT_LOWER,
				       json_pack("{s:s, s:s}", "impl",
						 peer_names[k], "metric", "wall"),
				       p->wall[k], p->o.c.count);
		snprintf(name, sizeof(name), "rss.%s", peer_names[k]);
		r = result__add_series(doc, name, "kib", RESULT_LOWER,
				       json_pack("{s:s, s:s}", "impl",
						 peer_names[k], "metric",
						 "peak_rss"),
				       p->rss[k], p->o.c.count);
		if (!w || !r) {
			json_decref(ratios);
			return -ENOMEM;
		}
		if (k == OURS) {
			ours_wall = result__stat(w, "p50");
			ours_rss = result__stat(r, "p50");
			continue;
		}
		json_object_set_new(ratios, peer_names[k], json_pack(
			"{s:f, s:f}", "wall_median", result__stat(w, "p50") /
			ours_wall, "peak_rss_median", result__stat(r, "p50") /
			ours_rss));
	}
	json_object_set_new(doc, "ratios", ratios);
	return 0;
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *series = json_object_get(doc, "series");
	const json_t *ratios = json_object_get(doc, "ratios"), *r;
	const char *key;

	fprintf(out, "# coldstart peers benchmark\n\nA guest that exits at "
		"once, whole process from spawn to exit, %" JSON_INTEGER_FORMAT
		" interleaved runs each.\n\n| implementation | median ms | "
		"p90 ms | min ms | peak RSS MiB (median) |\n|---|--:|--:|--:|"
		"--:|\n", json_integer_value(json_object_get(
			json_object_get(doc, "config"), "count")));
	for (size_t i = 0; i + 1 < json_array_size(series); i += 2) {
		const json_t *w = json_array_get(series, i);
		const json_t *m = json_array_get(series, i + 1);

		fprintf(out, "| %s | %.3f | %.3f | %.3f | %.1f |\n",
			json_string_value(json_object_get(w, "name")),
			result__stat(w, "p50") / 1e6,
			result__stat(w, "p90") / 1e6,
			result__stat(w, "min") / 1e6,
			result__stat(m, "p50") / 1024);
	}
	fputc('\n', out);
	json_object_foreach((json_t *)ratios, key, r)
		fprintf(out, "%s / coldstart: %.1fx the median wall time, "
			"%.1fx the peak RSS\n", key,
			json_number_value(json_object_get(r, "wall_median")),
			json_number_value(json_object_get(r, "peak_rss_median")));
	result__print_skipped(out, doc, true);
	result__md_warnings(out, doc);
}

static json_t *config_json(const struct peers *p)
{
	json_t *qemu = json_array();

	for (int i = 1; p->argv[QEMU][i]; i++)
		json_array_append_new(qemu, json_string(
			p->argv[QEMU][i] == p->bios ? "PEER_BIOS"
						    : p->argv[QEMU][i]));
	return json_pack("{s:s, s:s, s:o, s:o, s:I, s:I}", "guest",
			 "exit at once", "coldstart_cmd",
			 "run --stop-at=ready -q", "qemu_args", qemu,
			 "qemu_path", p->left_out[QEMU][0] ? json_null()
			 : json_string(p->qemu_path), "count",
			 (json_int_t)p->o.c.count, "warmup",
			 (json_int_t)p->o.c.warmup);
}

static int alloc_samples(struct peers *p)
{
	for (int k = 0; k < NR_PEERS; k++) {
		p->wall[k] = calloc(p->o.c.count, sizeof(double));
		p->rss[k] = calloc(p->o.c.count, sizeof(double));
		if (!p->wall[k] || !p->rss[k])
			return err__set(ENOMEM, "allocating samples");
	}
	return 0;
}

static int measure_all(struct peers *p)
{
	const char *exe = cli__self_exe();
	json_t *doc;
	int ret;

	if (!exe)
		return err__set(ENOENT, "cannot find the coldstart binary");
	ret = find_qemu(p);
	/* QEMU named with --qemu must be there; one looked up may not be */
	if (ret == -ENOTSUP && !p->o.qemu) {
		leave_out(p, QEMU, err__last());
		ret = 0;
	}
	if (ret == 0)
		ret = alloc_samples(p);
	if (ret == 0)
		ret = write_bios(p);
	if (ret < 0)
		return ret;
	build_argv(p, exe);
	ret = measure(p);
	unlink(p->bios);
	if (ret < 0)
		return ret;
	doc = result__new("peers", config_json(p));
	if (!doc)
		return -ENOMEM;
	ret = add_series(doc, p);
	if (ret == 0)
		ret = result__emit(doc, p->o.c.json, p->o.c.out_dir, report);
	json_decref(doc);
	return ret < 0 ? -EIO : 0;
}

static int run(void *opts)
{
	struct peers *p = opts;
	int ret = measure_all(p);

	for (int k = 0; k < NR_PEERS; k++) {
		free(p->wall[k]);
		free(p->rss[k]);
	}
	return ret;
}

static void init(void *opts)
{
	struct peers *p = opts;

	p->o.c = (struct bench_common){ .count = 20, .warmup = 3,
					.count_max = 100000,
					.warmup_max = 100000 };
}

static int set_qemu(void *opts, const char *arg)
{
	((struct peers *)opts)->o.qemu = arg;
	return 0;
}

static const struct opt table[] = {
	{ "qemu", 0, "PATH", false, "the QEMU binary (default: "
	  "qemu-system-x86_64 in PATH)", set_qemu, NULL },
	OPT_END,
};

const struct bench_driver peers_driver = {
	.name = "peers",
	.summary = "the trivial-guest lifecycle under QEMU microvm beside "
		   "ours, as ratios",
	.usage = "Usage: coldstart bench peers [OPTIONS]\n"
		 "Whole-process wall time and peak RSS of a guest that exits "
		 "at once, under\nQEMU (-M microvm -enable-kvm, our 64 KiB "
		 "firmware writing to isa-debug-exit)\nand under `coldstart "
		 "run --stop-at ready -q`, interleaved; reported as\n"
		 "QEMU/coldstart ratios of the medians. Without QEMU in PATH "
		 "(or one that cannot use KVM\nhere) coldstart runs alone and "
		 "the results say QEMU was left out. A sample is\none run of "
		 "each; --kvm is coldstart's device.\n",
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON | BENCH_OUT |
		  BENCH_KVM,
	.opts = table,
	.size = sizeof(struct peers),
	.common_at = offsetof(struct peers, o.c),
	.init = init,
	.run = run,
	.suite = { .quick = "-n 10 -w 2", .smoke = "-n 2 -w 1" },
};
