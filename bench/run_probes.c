/* The probes around one `coldstart run`. */
#include "run_probes.h"

#include "cli.h"
#include "err.h"

#include <string.h>
#include <unistd.h>

int run_probes__attach(unsigned int set, struct run_probes *rp)
{
	uint64_t t0 = timeline__now();
	int ret;

	memset(rp, 0, sizeof(*rp));
	if (!set)
		return 0;
	ret = probes__attach(getpid(), set, &rp->probes);
	rp->attach_ns = timeline__now() - t0;
	return ret;
}

void run_probes__finish(struct run_probes *rp)
{
	if (!rp->probes)
		return;
	if (probes__finish(rp->probes, &rp->report) < 0)
		cli__error(CLI_FAIL, "probes: %s (no breakdown)", err__last());
	probes__destroy(rp->probes);
	rp->probes = NULL;
}

void run_probes__print(const struct run_probes *rp, const struct timeline *tl)
{
	struct probe_report_opts o;

	if (!rp->report)
		return;
	probe_report__run_phases(tl, &o);
	printf("probes attached in %.3f ms, before /dev/kvm was opened\n",
	       (double)rp->attach_ns / 1e6);
	probe_report__print(stdout, rp->report, &o);
}

void run_probes__add_json(const struct run_probes *rp,
			  const struct timeline *tl, json_t *doc)
{
	struct probe_report_opts o;
	json_t *obj;

	if (!rp->report)
		return;
	probe_report__run_phases(tl, &o);
	obj = probe_report__json(rp->report, &o);
	if (!obj)
		return;
	json_object_set_new(obj, "attach_ns", json_integer(
		(json_int_t)rp->attach_ns));
	json_object_set_new(doc, "probes", obj);
}

void run_probes__free(struct run_probes *rp)
{
	probes__destroy(rp->probes);
	probes__report_free(rp->report);
	memset(rp, 0, sizeof(*rp));
}
