/* The probes in a build without BPF support: attaching fails with
 * -ENOTSUP and says what the build lacked. */
#include "probes.h"

#include "err.h"

bool probes__built(void)
{
	return false;
}

int probes__attach(pid_t tgid, unsigned int set, struct probes **out)
{
	(void)tgid;
	(void)set;
	*out = NULL;
	return err__set(ENOTSUP, "this coldstart was built without eBPF "
			"probes (%s); install clang, bpftool, "
			"libbpf-dev, libelf-dev and zlib1g-dev on a kernel "
			"with BTF, then rebuild", COLDSTART_BPF_MISSING);
}

int probes__load(pid_t tgid, unsigned int set, struct probes **out)
{
	return probes__attach(tgid, set, out);
}

int probes__start(struct probes *p)
{
	(void)p;
	return err__set(ENOTSUP, "probes are not built");
}

int probes__finish(struct probes *p, struct probes_report **out)
{
	(void)p;
	*out = NULL;
	return err__set(ENOTSUP, "probes are not built");
}

void probes__destroy(struct probes *p)
{
	(void)p;
}
