/* `coldstart tune restore`: every memory-restore strategy that applies to
 * one snapshot on this host, timed with the page cache warm and cold, and
 * a verdict that names a winner only when the data can tell. */
#include "tune_restore.h"
#include "tune_restore_int.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "mem_restore.h"
#include "output.h"
#include "report.h"
#include "restore.h"
#include "result.h"
#include "result_new.h"
#include "snap_linux.h"
#include "snapshot.h"
#include "stats.h"
#include "timeline.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- options ---- */

void tune_restore__defaults(struct tune_opts *o)
{
	const struct guest_mem_ops *const *s = mem_restore__strategies();

	*o = (struct tune_opts){ .budget_ns = DEFAULT_BUDGET, .alpha = 0.01,
				 .warm = true, .cold = true };
	for (; *s && o->nr_strategies < TUNE_MAX; s++)
		o->strategies[o->nr_strategies++] = *s;
}

/* ---- the measurement ---- */

/* err__last() prefixed with the strategy and cache state. */
static int annotate(int ret, const struct guest_mem_ops *ops, bool cold)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", err__last());
	return err__set(-ret, "restore with %s, %s cache: %s", ops->name,
			tune_restore__cache_name(cold), why);
}

/* One uncounted restore per strategy, cache warm: prefetch records its
 * working set here, the first-run costs fall outside the samples, and a
 * strategy this host (-ENOTSUP: no huge pages) or this snapshot
 * (-EINVAL: compressed memory, which the strategies that map the file or
 * read regions of it refuse) cannot do is left out with the reason. */
static int trial_restores(struct tune *t)
{
	for (size_t i = 0; i < t->o.nr_strategies; i++) {
		const struct guest_mem_ops *ops = t->o.strategies[i];
		struct restore_sample s;
		int ret = restore__cache(t->o.dir, RESTORE_WARM);

		if (ret == 0)
			ret = t->once(&t->kvm, t->o.dir, t->o.exec, ops, 0, &s);
		if (ret == -ENOTSUP || (ret == -EINVAL && t->info.compressed)) {
			t->skip[i] = true;
			snprintf(t->why[i], sizeof(t->why[i]), "%s: %s",
				 ret == -ENOTSUP ? "this host cannot do it"
						 : "this snapshot cannot",
				 err__last());
			continue;
		}
		if (ret < 0)
			return annotate(ret, ops, false);
	}
	return 0;
}

static int alloc_cells(struct tune *t)
{
	for (int cold = 0; cold < 2; cold++)
		for (size_t i = 0; i < t->o.nr_strategies; i++) {
			struct cell *c = &t->cells[cold][i];

			*c = (struct cell){ .ops = t->o.strategies[i],
					    .cold = cold };
			c->s = calloc(t->count, sizeof(*c->s));
			if (!c->s)
				return err__set(ENOMEM, "allocating samples");
		}
	return 0;
}

static void free_cells(struct tune *t)
{
	for (int cold = 0; cold < 2; cold++)
		for (size_t i = 0; i < t->o.nr_strategies; i++)
			free(t->cells[cold][i].s);
}

/* One restore of cell `c`, recorded when `counted`. */
static int sample(struct tune *t, struct cell *c, bool counted)
{
	struct restore_sample scratch;
	double resident = 0;
	int ret = restore__cache(t->o.dir, c->cold ? RESTORE_COLD
						   : RESTORE_WARM);

	if (ret == 0 && c->cold)
		resident = restore__resident_share(t->o.dir);
	if (ret == 0)
		ret = t->once(&t->kvm, t->o.dir, t->o.exec, c->ops,
			      RESTORE_HELD, counted ? &c->s[c->n] : &scratch);
	if (ret < 0)
		return annotate(ret, c->ops, c->cold);
	if (!counted)
		return 0;
	c->n++;
	if (resident > c->resident_max)
		c->resident_max = resident;
	return 0;
}

/* Every (cache state, strategy) once, the order rotating each round so
 * none always follows the same neighbour and drift hits all alike. */
static int round_once(struct tune *t, bool counted)
{
	struct cell *order[2 * TUNE_MAX];
	size_t k = 0;
	int ret = 0;

	for (int cold = 0; cold < 2; cold++)
		for (size_t i = 0; tune_restore__measured(t, cold) && i < t->o.nr_strategies;
		     i++)
			if (!t->skip[i])
				order[k++] = &t->cells[cold][i];
	for (size_t j = 0; ret == 0 && j < k; j++)
		ret = sample(t, order[(j + t->rounds) % k], counted);
	return ret;
}

/* An uncounted round first (the trials ran warm only: the first cold
 * restores pay first-run costs), then rounds until `count`, or until the
 * next round (as long as the last one) would end past the budget. */
static int sample_rounds(struct tune *t)
{
	uint64_t deadline = t->start_ns + t->o.budget_ns, last;
	int ret = 0;

	last = timeline__now();
	if (last < deadline)
		ret = round_once(t, false);
	last = timeline__now() - last;
	while (ret == 0 && t->rounds < t->count) {
		uint64_t now = timeline__now();

		if (now + last > deadline) {
			t->budget_spent = true;
			break;
		}
		ret = round_once(t, true);
		last = timeline__now() - now;
		t->rounds++;
		output__progress("tune restore", (unsigned long)t->rounds,
				 (unsigned long)t->count);
	}
	output__progress_done();
	t->elapsed_ns = timeline__now() - t->start_ns;
	return ret;
}

/* The samples the test needs for the strategies that apply (known after
 * the trials); -n below that is raised, with a note. */
static void plan_count(struct tune *t)
{
	char note[256];

	t->min_count = tune_restore__min_samples(nr_applicable(t),
						 t->o.alpha);
	t->count = t->o.count ? t->o.count : DEFAULT_COUNT;
	tune_restore__raised_text(note, sizeof(note), t);
	if (*note)
		fprintf(stderr, "coldstart: tune restore: %s\n", note);
	if (t->count < t->min_count)
		t->count = t->min_count;
}

/* ---- the command ---- */

/* The budget's clock starts before the trial restores. */
static int measure(struct tune *t)
{
	int ret = kvm__open(&t->kvm, t->o.kvm_path);

	if (ret < 0)
		return ret;
	t->start_ns = timeline__now();
	ret = trial_restores(t);
	if (ret == 0) {
		plan_count(t);
		ret = alloc_cells(t);
	}
	if (ret == 0)
		ret = sample_rounds(t);
	kvm__close(&t->kvm);
	return ret;
}

/* What can be known before any restore (restore__check_user): 2 for the
 * snapshot, 77 for a Linux guest on PVM; CLI_OK to go on. */
static int check_run(struct tune *t)
{
	int code = restore__check_user("tune restore", t->o.dir,
				       t->o.allow_pvm, &t->o.warm, &t->o.cold,
				       &t->info, &t->cold_why);

	if (code == CLI_OK)
		code = restore__agent_exec("tune restore", &t->info,
					   &t->o.exec);
	t->once = restore__once_for(&t->info);
	return code;
}

static int emit(struct tune *t)
{
	json_t *doc = result__new("tune-restore", tune_restore__config_json(t));
	int ret = doc ? 0 : -ENOMEM;

	if (ret == 0)
		ret = tune_restore__fill_doc(doc, t);
	if (ret == 0)
		ret = result__emit(doc, t->o.json, t->o.out_dir, tune_restore__report);
	if (ret == 0 && t->o.out_dir)
		report__join("tune restore", t->o.out_dir, t->o.json);
	json_decref(doc);
	return ret;
}

static int run(struct tune *t)
{
	int ret = check_run(t);

	if (ret != CLI_OK)
		return ret;
	ret = measure(t);
	if (ret == 0)
		ret = emit(t);
	free_cells(t);
	if (ret < 0)
		return ret;
	if (t->budget_spent)
		fprintf(stderr, "coldstart: tune restore: the --budget was "
			"spent after %zu of %zu rounds; the verdict uses what "
			"was measured\n", t->rounds, t->count);
	return CLI_OK;
}

int tune_restore__run(const struct tune_opts *o)
{
	struct tune *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return err__set(ENOMEM, "out of memory");
	t->o = *o;
	ret = run(t);
	free(t);
	return ret;
}
