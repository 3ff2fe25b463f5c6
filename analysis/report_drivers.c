/* The table of the drivers' report parts (report_driver.h), in the
 * Summary's order: report.c and report_summary.c iterate it, and no
 * driver's part calls back into either. */
#include "report_driver.h"

#include <string.h>

const struct report_driver *const report__drivers[] = {
	&report_driver_lifecycle, &report_driver_boot, &report_driver_restore,
	&report_driver_rate,      &report_driver_density, &report_driver_peers,
	&report_driver_pool,      &report_driver_session,
	&report_driver_suite,
};

const size_t report__nr_drivers =
	sizeof(report__drivers) / sizeof(report__drivers[0]);

const struct report_driver *report__driver(const char *name)
{
	for (size_t i = 0; i < report__nr_drivers; i++)
		if (!strcmp(report__drivers[i]->name, name))
			return report__drivers[i];
	return NULL;
}
