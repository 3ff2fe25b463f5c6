/* `coldstart bench lifecycle`: create -> READY -> destroy of the minimal
 * probe guest, in-process and process-per-VM, beside the bare-ioctl floor
 * measured in the same run. */
#ifndef COLDSTART_LIFECYCLE_H
#define COLDSTART_LIFECYCLE_H

#include "driver.h"
#include "seccomp.h"

#include <stdbool.h>
#include <stdint.h>

struct lifecycle_opts {
	/* count: cycles per series; json: JSON instead of the table */
	struct bench_common c;
	bool in_process;
	bool process;
	unsigned int probes; /* enum probes_set over the in-process series */
	enum seccomp_mode seccomp; /* the VMs' filters (default kill) */
};

extern const struct bench_driver lifecycle_driver;

#endif
