/* Saving and restoring the state of every registered device. */
#include "devstate.h"

#include "err.h"
#include "vm.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int save_one(const struct device *d, uint32_t index,
		    struct snap_writer *w)
{
	size_t len = d->ops->state_size(d->dev);
	void *buf = calloc(1, len ? len : 1);
	int ret;

	if (!buf)
		return err__set(ENOMEM, "saving device '%s'", d->ops->name);
	ret = d->ops->save(d->dev, buf, len);
	if (ret == 0)
		snap__add_device(w, index, d->ops->name, buf, len);
	free(buf);
	return ret;
}

int devstate__save(const struct vm *vm, struct snap_writer *w)
{
	for (unsigned int i = 0; i < vm->nr_devices; i++) {
		const struct device *d = &vm->devices[i];
		int ret;

		if (strlen(d->ops->name) >= SNAP_DEVICE_NAME_MAX)
			return err__set(EINVAL, "device name '%s' is longer "
					"than %d bytes", d->ops->name,
					SNAP_DEVICE_NAME_MAX - 1);
		ret = save_one(d, i, w);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of the device sections, each well-formed; *n gets how many.
 * A state file holds at most one section per 48 bytes (a section header
 * and a name), so `r->len / 48 + 1` pointers always suffice. */
static int device_names(const struct snap_reader *r, const char ***out,
			size_t *n)
{
	const char **names = malloc((r->len / 48 + 1) * sizeof(*names));
	struct snap_section sec;
	const void *payload, *state;
	size_t cursor = 0, len;

	if (!names)
		return err__set(ENOMEM, "checking the device sections");
	*n = 0;
	while (snap__next(r, &cursor, &sec, &payload)) {
		if (sec.type != SNAP_DEVICE)
			continue;
		if (snap__device(payload, (size_t)sec.len, &names[*n], &state,
				 &len) < 0) {
			free(names);
			return -EINVAL;
		}
		(*n)++;
	}
	*out = names;
	return 0;
}

/* Sorted, so a name twice is two neighbours: n log n, not n squared (a
 * state file may hold a million sections). */
int devstate__check(const struct snap_reader *r)
{
	const char **names = NULL;
	size_t n = 0;
	int ret = device_names(r, &names, &n);

	if (ret < 0)
		return ret;
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 1; ret == 0 && i < n; i++)
		if (!strcmp(names[i - 1], names[i]))
			ret = err__set(EINVAL, "snapshot holds device '%s' "
				       "twice", names[i]);
	free(names);
	return ret;
}

static int restore_one(struct vm *vm, const void *payload, size_t sec_len,
		       bool *done)
{
	const void *state;
	const char *name;
	struct device *d;
	size_t len, want;
	int ret = snap__device(payload, sec_len, &name, &state, &len);

	if (ret < 0)
		return ret;
	d = vm__find_device(vm, name);
	if (!d)
		return err__set(EINVAL, "snapshot holds state of device '%s', "
				"which the restored VM does not have", name);
	want = d->ops->state_size(d->dev);
	if (len != want)
		return err__set(EINVAL, "device '%s': the snapshot's state is "
				"%zu bytes, the device expects %zu", name, len,
				want);
	done[d - vm->devices] = true;
	return d->ops->restore(d->dev, state, len);
}

int devstate__restore(struct vm *vm, const struct snap_reader *r)
{
	bool done[VM_MAX_DEVICES] = { false };
	struct snap_section sec;
	const void *payload;
	size_t cursor = 0;
	int ret = devstate__check(r);

	while (ret == 0 && snap__next(r, &cursor, &sec, &payload))
		if (sec.type == SNAP_DEVICE)
			ret = restore_one(vm, payload, (size_t)sec.len, done);
	for (unsigned int i = 0; ret == 0 && i < vm->nr_devices; i++)
		if (!done[i])
			ret = err__set(EINVAL, "device '%s' of the restored VM "
				       "has no state in the snapshot",
				       vm->devices[i].ops->name);
	return ret;
}
