/* Not a test: prints how long devstate__check takes on a state file of N
 * device sections (default 100,000), all distinct so every one is
 * compared: build/tests/unit/devstate_bench [N]. */
#include "devstate.h"
#include "err.h"
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
	struct snap_header h = { .nr_vcpus = 1 };
	struct snap_writer w;
	struct snap_reader r;
	char name[SNAP_DEVICE_NAME_MAX];
	double t0;
	int ret;

	if (n < 1) {
		fprintf(stderr, "usage: devstate_bench [SECTIONS]\n");
		return 2;
	}
	snap__begin(&w, &h);
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "d%ld", i);
		snap__add_device(&w, (uint32_t)i, name, "", 0);
	}
	if (snap__finish(&w) < 0 || snap__parse(&r, w.buf, w.len) < 0) {
		fprintf(stderr, "devstate_bench: %s\n", err__last());
		return 1;
	}
	t0 = now_s();
	ret = devstate__check(&r);
	printf("devstate__check: %ld device sections (%zu-byte state) in "
	       "%.3f s: %s\n", n, w.len, now_s() - t0,
	       ret == 0 ? "valid" : err__last());
	free(w.buf);
	return ret == 0 ? 0 : 1;
}
