/* What the KVM snapshot tests share: the KVM handle and a temporary
 * directory for their snapshots, both set up by snaptest__main(). */
#ifndef COLDSTART_SNAPTEST_H
#define COLDSTART_SNAPTEST_H

#include "kvm.h"
#include "probe.h"
#include "vm.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>

extern struct kvm_host kvm;
extern char tmpdir[64];

/* tmpdir/name into out. */
void snaptest__path(char *out, size_t size, const char *name);

/* Creates a VM with `cfg`, sets the probe guest up with `p` and runs it
 * until every vCPU paused at READY (p->pause_at_ready is set here). */
void snaptest__start_paused(const struct vm_config *cfg,
			    struct probe_params *p, struct vm **vm,
			    struct probe *probe);

/* Runs `tests` (in order) with `kvm` open and a new
 * /tmp/coldstart-NAME.XXXXXX as tmpdir, then `after` (may be NULL), then
 * removes the directory. The exit code for main(): cmocka's, 77 when KVM
 * cannot be opened, 1 when the directory cannot be made. */
int snaptest__run(const char *name, const struct CMUnitTest *tests,
		  size_t n, void (*after)(void));

#define snaptest__main(name, tests, after) \
	snaptest__run(name, tests, sizeof(tests) / sizeof((tests)[0]), after)

#endif
