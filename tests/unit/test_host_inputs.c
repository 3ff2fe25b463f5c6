/* Unit tests for `tune host`'s inputs: multi-function traces
 * (sim/arrivals_functions.c) in both Azure formats, from small files
 * with known counts, and the --guests document (sim/hostsim_guests.c). */
#include "arrivals_functions.h"
#include "err.h"
#include "hostsim.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static void assert_msg(const char *needle)
{
	if (!strstr(err__last(), needle))
		fail_msg("message '%s' lacks '%s'", err__last(), needle);
}

static char path[PATH_MAX];

static void write_trace(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/test_host_inputs-%d.csv",
		 (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static uint32_t at(const struct fn_trace *t, size_t f, size_t m)
{
	return t->count[f * t->nmin + m];
}

/* Rows of one function are summed; functions keep their first row's
 * order; --minutes cuts. */
static void azure2019_per_function(void **state)
{
	struct fn_trace t;

	(void)state;
	write_trace("HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
		    "o,a,f,http,2,0,1\no,b,g,timer,0,5,0\n"
		    "o,a,f,queue,1,1,0\n");
	assert_int_equal(arrivals__functions_read(path, ARRIVALS_AUTO, 0, &t),
			 0);
	assert_int_equal(t.format, ARRIVALS_AZURE2019);
	assert_int_equal(t.nfn, 2);
	assert_int_equal(t.nmin, 3);
	assert_string_equal(t.name[0], "f");
	assert_string_equal(t.name[1], "g");
	assert_int_equal(at(&t, 0, 0), 3);
	assert_int_equal(at(&t, 0, 1), 1);
	assert_int_equal(at(&t, 0, 2), 1);
	assert_int_equal(at(&t, 1, 1), 5);
	assert_int_equal(t.total, 10);
	arrivals__functions_free(&t);
	assert_int_equal(arrivals__functions_read(path, ARRIVALS_AZURE2019, 1,
						  &t), 0);
	assert_int_equal(t.nmin, 1);
	assert_int_equal(t.total, 3);
	arrivals__functions_free(&t);
}

/* Starts (end - duration) binned by minute from the earliest: 100 s,
 * 130 s, 165 s and 290 s are minutes 0, 0, 1 and 3. */
static void azure2021_binned(void **state)
{
	struct fn_trace t;

	(void)state;
	write_trace("app,func,end_timestamp,duration\n"
		    "a,x,101.5,1.5\nb,y,131,1\na,x,170,5\nb,y,290,0\n");
	assert_int_equal(arrivals__functions_read(path, ARRIVALS_AUTO, 0, &t),
			 0);
	assert_int_equal(t.format, ARRIVALS_AZURE2021);
	assert_int_equal(t.nfn, 2);
	assert_int_equal(t.nmin, 4);
	assert_int_equal(at(&t, 0, 0), 1);
	assert_int_equal(at(&t, 0, 1), 1);
	assert_int_equal(at(&t, 1, 0), 1);
	assert_int_equal(at(&t, 1, 3), 1);
	assert_int_equal(t.total, 4);
	arrivals__functions_free(&t);
}

static void refuse(const char *text, enum arrivals_format format,
		   int code, const char *needle)
{
	struct fn_trace t;

	write_trace(text);
	assert_int_equal(arrivals__functions_read(path, format, 0, &t), code);
	assert_msg(needle);
	assert_null(t.count);
	assert_null(t.name);
}

/* A file with NUL bytes: its length given. */
static void refuse_n(const char *text, size_t len, const char *needle)
{
	struct fn_trace t;
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(arrivals__functions_read(path, ARRIVALS_AUTO, 0, &t),
			 -EINVAL);
	assert_msg(needle);
}

static void refused_traces(void **state)
{
	(void)state;
	refuse("timestamp\n1\n2\n", ARRIVALS_AUTO, -EINVAL,
	       "not a multi-function trace");
	refuse("timestamp\n1\n", ARRIVALS_CSV, -EINVAL, "has no functions");
	refuse("", ARRIVALS_AUTO, -EINVAL, "empty");
	refuse("HashOwner,HashApp,HashFunction,Trigger,1,2\no,a,f,t,0,0\n",
	       ARRIVALS_AUTO, -EINVAL, "no invocations");
	refuse("HashOwner,HashApp,HashFunction,Trigger,1\no,a,f,t,-1\n",
	       ARRIVALS_AUTO, -EINVAL, "line 2: count '-1'");
	refuse("HashOwner,HashApp,HashFunction,Trigger,1\no,a,f,t,4294967296\n",
	       ARRIVALS_AUTO, -EINVAL, "below 2^32");
	/* two rows of one function whose sum passes a cell's 32 bits */
	refuse("HashOwner,HashApp,HashFunction,Trigger,1\no,a,f,t,4294967295\n"
	       "o,a,f,u,1\n", ARRIVALS_AUTO, -E2BIG, "add up past 2^32");
	refuse("HashOwner,HashApp,HashFunction,Trigger,1\no,a,,t,1\n",
	       ARRIVALS_AUTO, -EINVAL, "function name");
	refuse_n("app,func,end_timestamp,duration\na,\0f1,1,0\n", 42,
		 "holds a NUL byte");
	refuse("HashOwner,HashApp,HashFunction,Trigger,1,3\no,a,f,t,1,1\n",
	       ARRIVALS_AUTO, -EINVAL, "not a multi-function trace");
	refuse("app,func,end_timestamp,duration\na,f,1,-2\n", ARRIVALS_AUTO,
	       -EINVAL, "negative duration");
	refuse("app,func,end_timestamp,duration\na,f,1\n", ARRIVALS_AUTO,
	       -EINVAL, "3 columns");
	refuse("app,func,end_timestamp,duration\na,f,1e300,0\nb,g,0,0\n",
	       ARRIVALS_AUTO, -E2BIG, "spans more than");
	refuse("app,func,end_timestamp,duration\n", ARRIVALS_AZURE2019,
	       -EINVAL, "not a multi-function trace");
}

/* 70 functions over 500,000 minutes: 35 million cells, past the
 * 2^25 held; refused before anything that size is allocated. */
static void too_many_cells(void **state)
{
	char *text = malloc(70 * 32 + 64), *p = text;
	struct fn_trace t;

	(void)state;
	assert_non_null(text);
	p += sprintf(p, "app,func,end_timestamp,duration\n");
	for (int i = 0; i < 70; i++)
		p += sprintf(p, "a,f%d,%d,0\n", i, i ? 60 : 30000000);
	write_trace(text);
	free(text);
	assert_int_equal(arrivals__functions_read(path, ARRIVALS_AUTO, 0, &t),
			 -E2BIG);
	assert_msg("70 functions x 500000 minutes");
	/* the first minutes alone fit */
	assert_int_equal(arrivals__functions_read(path, ARRIVALS_AUTO, 10, &t),
			 0);
	assert_int_equal(t.nmin, 10);
	assert_int_equal(t.total, 69);
	arrivals__functions_free(&t);
}

/* Two functions of the trace, guests by list and by default. */
static void trace2(struct fn_trace *t)
{
	static char a[] = "fa", b[] = "fb";
	static char *names[] = { a, b };
	static uint32_t counts[2] = { 1, 1 };

	memset(t, 0, sizeof(*t));
	t->nfn = 2;
	t->nmin = 1;
	t->name = names;
	t->count = counts;
	t->total = 2;
}

static int guests(const char *text, struct hostsim_guests *gs)
{
	struct fn_trace t;
	json_error_t je;
	json_t *root = json_loads(text, 0, &je);
	int err;

	assert_non_null(root);
	trace2(&t);
	err = hostsim__guests_from_json(root, "g.json", &t, gs);
	json_decref(root);
	return err;
}

static void guests_mapped(void **state)
{
	struct hostsim_guests gs;

	(void)state;
	assert_int_equal(guests("{\"guests\": [{\"name\": \"big\", \"mem_mib\":"
				" 512, \"cold_ms\": 300, \"hit_ms\": 3, "
				"\"functions\": [\"fb\", \"gone\"]}, {\"name\":"
				" \"small\", \"mem_mib\": 128, \"cold_ms\": 100,"
				" \"hit_ms\": 1, \"idle_weight\": 2}]}", &gs),
			 0);
	assert_int_equal(gs.ntype, 2);
	assert_int_equal(gs.fn_type[0], 1);
	assert_int_equal(gs.fn_type[1], 0);
	assert_true(gs.fn[1].mem_mib == 512);
	assert_true(fabs(gs.fn[1].cold_s - 0.3) < 1e-12);
	assert_true(gs.fn[0].idle_weight == 2);
	assert_true(gs.fn[1].idle_weight == 1);
	assert_int_equal(gs.absent, 1);
	assert_int_equal(gs.type[0].nfn, 1);
	hostsim__guests_free(&gs);
}

static void guests_refused(void **state)
{
	struct hostsim_guests gs;

	(void)state;
#define NO(text, needle)                                                       \
	do {                                                                   \
		assert_int_equal(guests(text, &gs), -EINVAL);                  \
		assert_msg(needle);                                            \
		assert_null(gs.type);                                          \
	} while (0)
	NO("[]", "expected {\"guests\"");
	NO("{\"guests\": []}", "1 to 4096 guests");
	NO("{\"guests\": [{\"name\": \"a\", \"mem_mib\": 1, \"cold_ms\": 1, "
	   "\"hit_ms\": 0, \"memory\": 3}]}", "unknown key \"memory\"");
	NO("{\"guests\": [{\"name\": \"a\", \"mem_mib\": 0, \"cold_ms\": 1, "
	   "\"hit_ms\": 0}]}", "guests[0].mem_mib is 0");
	NO("{\"guests\": [{\"name\": \"a\", \"mem_mib\": 1, \"cold_ms\": 1, "
	   "\"hit_ms\": 2}]}", "guests[0].hit_ms is 2");
	NO("{\"guests\": [{\"name\": \"a\", \"mem_mib\": 1, \"cold_ms\": 1}]}",
	   "needs a number \"hit_ms\"");
	NO("{\"guests\": [{\"name\": \"a\", \"mem_mib\": 1, \"cold_ms\": 1, "
	   "\"hit_ms\": 0, \"functions\": [\"fa\"]}]}",
	   "function fb is in no guest");
	NO("{\"guests\": [{\"name\": \"a\", \"mem_mib\": 1, \"cold_ms\": 1, "
	   "\"hit_ms\": 0, \"functions\": [\"fa\"]}, {\"name\": \"b\", "
	   "\"mem_mib\": 1, \"cold_ms\": 1, \"hit_ms\": 0, \"functions\": "
	   "[\"fa\", \"fb\"]}]}", "function fa is in two guests' lists");
	NO("{\"guests\": [{\"name\": \"a\", \"mem_mib\": 1, \"cold_ms\": 1, "
	   "\"hit_ms\": 0}, {\"name\": \"b\", \"mem_mib\": 1, \"cold_ms\": 1, "
	   "\"hit_ms\": 0}]}", "only one guest may be the default");
	NO("{\"guests\": [{\"name\": \"a\", \"mem_mib\": 1, \"cold_ms\": 1, "
	   "\"hit_ms\": 0}, {\"name\": \"a\", \"mem_mib\": 1, \"cold_ms\": 1, "
	   "\"hit_ms\": 0, \"functions\": []}]}", "two guests are named");
#undef NO
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(azure2019_per_function),
		cmocka_unit_test(azure2021_binned),
		cmocka_unit_test(refused_traces),
		cmocka_unit_test(too_many_cells),
		cmocka_unit_test(guests_mapped),
		cmocka_unit_test(guests_refused),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
