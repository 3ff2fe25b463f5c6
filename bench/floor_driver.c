/* `coldstart bench floor`: N bare-ioctl cycles, silently; a child of the
 * lifecycle driver, and alone a check that a host can run VMs at all. */
#include "floor.h"

#include "driver.h"

#include <errno.h>
#include <stddef.h>

struct floor_opts {
	struct bench_common c;
};

static void init(void *opts)
{
	struct floor_opts *o = opts;

	o->c = (struct bench_common){ .count = 1, .count_max = 100000000 };
}

static int run(void *opts)
{
	struct floor_opts *o = opts;
	struct floor f;
	int ret = floor__open(&f, o->c.kvm_path);

	if (ret < 0)
		return ret;
	for (uint64_t i = 0; ret == 0 && i < o->c.count; i++)
		ret = floor__cycle(&f);
	floor__close(&f);
	/* a cycle that fails on a host that opened KVM is a failure, not
	 * a host that cannot run VMs */
	return ret < 0 ? -EIO : 0;
}

const struct bench_driver floor_driver = {
	.name = "floor",
	.summary = "the bare-ioctl cycle alone (the process-per-VM floor)",
	.usage = "Usage: coldstart bench floor [-nN] [--kvm PATH]\n"
		 "Runs N (default 1) create -> run -> destroy cycles with "
		 "bare KVM ioctls;\nprints nothing, exits 0 when all "
		 "succeeded.\n",
	.common = BENCH_COUNT | BENCH_KVM,
	.size = sizeof(struct floor_opts),
	.common_at = offsetof(struct floor_opts, c),
	.init = init,
	.run = run,
};
