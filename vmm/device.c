/* The save and restore checks shared by devices with versioned state. */
#include "device.h"

#include "err.h"

#include <string.h>

int device__check_save(const char *name, size_t size, size_t len)
{
	if (len != size)
		return err__set(EINVAL, "%s: %zu bytes of state requested, "
				"%zu exist", name, len, size);
	return 0;
}

int device__check_restore(const char *name, size_t size, uint32_t version,
			  const void *buf, size_t len)
{
	uint32_t v;

	if (len != size)
		return err__set(EINVAL, "%s: state of %zu bytes, expected %zu",
				name, len, size);
	memcpy(&v, buf, sizeof(v));
	if (v != version)
		return err__set(EINVAL, "%s: state version %u, this build "
				"reads %u", name, v, version);
	return 0;
}
