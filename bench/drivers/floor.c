/* `coldstart bench floor`: the bare-ioctl cycle alone, the command over
 * floor_<arch>.c's cycle. */
#include "floor.h"

#include "args.h"
#include "cli.h"
#include "err.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* N bare-ioctl cycles, silently: used as a child by the lifecycle driver
 * and usable alone to check that a host can run VMs at all. */
int cmd_bench_floor(int argc, char **argv)
{
	const char *kvm_path = NULL;
	uint64_t n = 1;
	struct floor f;
	int ret = 0;

	for (int i = 1; ret == 0 && i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs("Usage: coldstart bench floor [-nN] [--kvm PATH]\n"
			      "Runs N (default 1) create -> run -> destroy "
			      "cycles with bare KVM ioctls;\nprints nothing, "
			      "exits 0 when all succeeded.\n", stdout);
			return CLI_OK;
		}
		if (!strncmp(argv[i], "-n", 2) && argv[i][2])
			ret = args__u64("-n", argv[i] + 2, 1, 100000000, &n);
		else if (!strcmp(argv[i], "--kvm") && i + 1 < argc)
			kvm_path = argv[++i];
		else
			ret = err__set(EINVAL, "unexpected argument '%s'",
				       argv[i]);
	}
	if (ret < 0)
		return cli__parse_error("bench floor", "bench floor");
	ret = floor__open(&f, kvm_path);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench floor: %s",
				  err__last());
	for (uint64_t i = 0; ret == 0 && i < n; i++)
		ret = floor__cycle(&f);
	floor__close(&f);
	if (ret < 0)
		return cli__error(CLI_FAIL, "bench floor: %s", err__last());
	return CLI_OK;
}
