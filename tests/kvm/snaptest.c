/* The KVM snapshot tests' shared setup: KVM, a temporary directory. */
#include "snaptest.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>

struct kvm_host kvm;
char tmpdir[64];

void snaptest__path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
}

void snaptest__start_paused(const struct vm_config *cfg,
			    struct probe_params *p, struct vm **vm,
			    struct probe *probe)
{
	p->pause_at_ready = true;
	assert_int_equal(vm__create(&kvm, cfg, NULL, vm), 0);
	assert_int_equal(probe__setup(probe, *vm, p), 0);
	assert_int_equal(vm__start(*vm), 0);
	assert_int_equal(vm__wait_paused(*vm, 30 * 1000000000ull), 0);
}

static void remove_tree(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int snaptest__run(const char *name, const struct CMUnitTest *tests,
		  size_t n, void (*after)(void))
{
	int ret = kvm__open(&kvm, NULL);

	if (ret < 0) {
		fprintf(stderr, "skipping: %s\n", err__last());
		return 77;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/coldstart-%s.XXXXXX", name);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		kvm__close(&kvm);
		return 1;
	}
	/* "tests": the group name cmocka_run_group_tests(tests, ...) shows. */
	ret = _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
	if (after)
		after();
	remove_tree(tmpdir);
	kvm__close(&kvm);
	return ret;
}
