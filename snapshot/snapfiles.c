/* The names of a snapshot directory's files (snapshot.h), for every
 * writer that replaces, removes or cleans one and for the page-cache
 * states: one list. */
#include "guest.h"
#include "snapshot.h"

#include <stdbool.h>
#include <string.h>

const char *snapshot__file_name(unsigned int i)
{
	static const char *const names[] = {
		SNAPSHOT_STATE_FILE, SNAPSHOT_MEMORY_FILE, SNAPSHOT_WSET_FILE,
		"disk.0", "disk.1", "disk.2", "disk.3", "disk.4", "disk.5",
		"disk.6", "disk.7",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == 3 + SNAP_MAX_DRIVES,
		       "a disk.N name per drive");

	return i < sizeof(names) / sizeof(names[0]) ? names[i] : NULL;
}

bool snapshot__is_file(const char *name)
{
	const char *n;

	for (unsigned int i = 0; (n = snapshot__file_name(i)); i++)
		if (!strcmp(name, n))
			return true;
	return false;
}
