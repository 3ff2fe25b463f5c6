/* `coldstart tune pool`: a simulated configuration as the pool's own
 * (pool_config.h), built on the one the results directory's pool.json was
 * measured with; the command that runs it, and the JSON it is handed
 * over in (tune-pool.json's "pool_config", and --validate's children's
 * file). */
#include "tune_pool_int.h"

#include "err.h"
#include "output.h"
#include "pool_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the pool measured with, from pool.json's "config" (its bench
 * keys left alone); -EINVAL naming the file and field. */
int tune_pool__stored_config(struct costs *c)
{
	char what[PATH_MAX + 16];

	pool_config__defaults(&c->stored);
	if (!c->pool.config)
		return 0;
	snprintf(what, sizeof(what), "%s: config", c->pool_path);
	return pool_config__from_json(&c->stored, c->pool.config, what);
}

bool tune_pool__applies(const struct cand *x)
{
	return x->cfg.policy < POOL_POLICIES;
}

void tune_pool__pool_config(const struct costs *c, const struct cand *x,
			    struct pool_config *pc)
{
	const struct poolsim_params *p = &x->cfg.params;

	*pc = c->stored;
	pc->workers = c->workers;
	pc->on_empty = c->wait_on_empty ? POOL_WAIT : POOL_MAKE;
	pc->policy = (enum pool_policy)x->cfg.policy;
	pc->min = 0;
	pc->max = x->cfg.max;
	pc->max_set = true;
	if (x->cfg.policy == POOL_FIXED) {
		pc->size = p->fixed.n;
		pc->max = p->fixed.n > 64 ? p->fixed.n : 64;
		return;
	}
	/* the pool's own policies are the simulator's, parameters and all */
	pc->size = p->pool.size;
	pc->min = p->pool.min;
	pc->params = p->pool.params;
}

char *tune_pool__command(const struct costs *c, const struct cand *x,
			 const char *dir)
{
	struct pool_config pc;
	char *text = NULL, *opts;
	size_t len = 0;
	FILE *f;

	if (!tune_pool__applies(x))
		return strdup("");
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	if (dir) {
		fputs("coldstart pool serve --config ", f);
		output__shell_word(f, dir);
		fputs("/tune-pool.json --socket ", f);
		output__shell_word(f, dir);
		fputs("/pool.sock", f);
	} else {
		tune_pool__pool_config(c, x, &pc);
		opts = pool_config__options_text(&pc);
		fprintf(f, "coldstart pool serve --socket pool.sock%s",
			opts ? opts : "");
		free(opts);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

json_t *tune_pool__config_json(const struct costs *c, const struct cand *x)
{
	struct pool_config pc;

	tune_pool__pool_config(c, x, &pc);
	return pool_config__to_json(&pc);
}

int tune_pool__config_file(const struct costs *c, const struct cand *x,
			   char *path, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	json_t *j;
	FILE *f;
	int fd, ret = 0;

	snprintf(path, size, "%s/coldstart-pool-config-XXXXXX.json",
		 tmp && *tmp ? tmp : "/tmp");
	fd = mkstemps(path, 5);
	if (fd < 0)
		return err__sys(errno, "%s", path);
	j = tune_pool__config_json(c, x);
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	if (!j || !f || json_dumpf(j, f, JSON_INDENT(2)) < 0)
		ret = err__set(EIO, "writing %s", path);
	if (f && fclose(f) != 0 && ret == 0)
		ret = err__sys(errno, "%s", path);
	json_decref(j);
	if (ret < 0)
		unlink(path);
	return ret;
}
