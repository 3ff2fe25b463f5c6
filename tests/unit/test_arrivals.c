/* Unit tests for sim/arrivals.c: the --arrivals text, the drawn processes
 * (rate, reproducibility, MMPP's two regimes) and the three trace formats,
 * from small files written into a temporary directory with known answers. */
#include "arrivals.h"
#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#define assert_close(a, b, tol)                                                \
	assert_true(fabs((double)(a) - (double)(b)) <= (tol))

/* The error message holds `needle`; printed when it does not. */
static void assert_msg(const char *needle)
{
	if (!strstr(err__last(), needle))
		fail_msg("message '%s' lacks '%s'", err__last(), needle);
}

/* ---- the temporary directory ---- */

struct fixture {
	char dir[64];
};

static int group_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/test_arrivals-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(f->dir);

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Writes `text` to DIR/name and leaves its path in `path`. */
static void write_file(void **state, const char *name, const char *text,
		       char *path)
{
	struct fixture *f = *state;
	FILE *fp;

	snprintf(path, PATH_MAX, "%s/%s", f->dir, name);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
}

/* arrivals__make for "trace:PATH" plus `opts` (",format=..." or ""). */
static int make_trace(const char *path, const char *opts, double duration,
		      double scale, uint64_t seed, struct arrivals *a)
{
	char text[PATH_MAX + 64];
	struct arrivals_spec spec;

	snprintf(text, sizeof(text), "trace:%s%s", path, opts);
	assert_int_equal(arrivals__parse_spec(text, &spec), 0);
	return arrivals__make(&spec, duration, scale, seed, a);
}

/* Writes a trace and expects arrivals__make to refuse it with -EINVAL and
 * a message naming the file and holding `needle`. */
static void expect_bad(void **state, const char *name, const char *text,
		       const char *opts, const char *needle)
{
	char path[PATH_MAX];
	struct arrivals a;

	write_file(state, name, text, path);
	assert_int_equal(make_trace(path, opts, 0, 1, 1, &a), -EINVAL);
	assert_msg(path);
	assert_msg(needle);
	assert_null(a.t);
	assert_int_equal(a.n, 0);
}

static void assert_ascending(const struct arrivals *a)
{
	for (size_t i = 1; i < a->n; i++)
		assert_true(a->t[i - 1] <= a->t[i]);
}

/* ---- the --arrivals text ---- */

static void spec_good(void **state)
{
	struct arrivals_spec s;

	(void)state;
	assert_int_equal(arrivals__parse_spec("poisson:50", &s), 0);
	assert_int_equal(s.kind, ARRIVALS_POISSON);
	assert_close(s.rate, 50, 0);
	assert_int_equal(arrivals__parse_spec("poisson:2.5e3", &s), 0);
	assert_close(s.rate, 2500, 0);

	assert_int_equal(arrivals__parse_spec("mmpp:10,200,5,0.5", &s), 0);
	assert_int_equal(s.kind, ARRIVALS_MMPP);
	assert_close(s.mmpp_rate[0], 10, 0);
	assert_close(s.mmpp_rate[1], 200, 0);
	assert_close(s.mmpp_dwell[0], 5, 0);
	assert_close(s.mmpp_dwell[1], 0.5, 0);
	/* on/off: a silent state is allowed */
	assert_int_equal(arrivals__parse_spec("mmpp:0,100,1,1", &s), 0);
	/* dwell times take units like every other duration */
	assert_int_equal(arrivals__parse_spec("mmpp:10,200,2m,500ms", &s), 0);
	assert_close(s.mmpp_dwell[0], 120, 0);
	assert_close(s.mmpp_dwell[1], 0.5, 1e-12);
	assert_int_equal(arrivals__parse_spec("mmpp:1,2,1.5s,1h", &s), 0);
	assert_close(s.mmpp_dwell[0], 1.5, 0);
	assert_close(s.mmpp_dwell[1], 3600, 0);
	assert_int_equal(arrivals__parse_spec("mmpp:1,2,250us,1e3ns", &s), 0);
	assert_close(s.mmpp_dwell[0], 250e-6, 1e-15);
	assert_close(s.mmpp_dwell[1], 1e-6, 1e-15);

	assert_int_equal(arrivals__parse_spec("trace:f.csv", &s), 0);
	assert_int_equal(s.kind, ARRIVALS_TRACE);
	assert_string_equal(s.path, "f.csv");
	assert_int_equal(s.format, ARRIVALS_AUTO);
	assert_string_equal(s.column, "");

	/* options come off the end; the path keeps its comma */
	assert_int_equal(
		arrivals__parse_spec("trace:a,b.csv,format=azure2021", &s), 0);
	assert_string_equal(s.path, "a,b.csv");
	assert_int_equal(s.format, ARRIVALS_AZURE2021);
	assert_int_equal(
		arrivals__parse_spec("trace:d/x.csv,column=start_ts", &s), 0);
	assert_string_equal(s.path, "d/x.csv");
	assert_int_equal(s.format, ARRIVALS_CSV);
	assert_string_equal(s.column, "start_ts");
	assert_int_equal(
		arrivals__parse_spec("trace:x,column=t,format=csv", &s), 0);
	assert_string_equal(s.path, "x");
	assert_string_equal(s.column, "t");
	assert_int_equal(s.format, ARRIVALS_CSV);
	assert_int_equal(arrivals__parse_spec("trace:y,format=azure2019", &s),
			 0);
	assert_int_equal(s.format, ARRIVALS_AZURE2019);
	assert_string_equal(arrivals__format_name(s.format), "azure2019");
}

static void spec_bad(void **state)
{
	static const struct {
		const char *text, *needle;
	} bad[] = {
		{ "poisson:", "rate ''" },
		{ "poisson:-1", "rate '-1'" },
		{ "poisson:0", "rate '0'" },
		{ "poisson:5x", "rate '5x'" },
		{ "poisson:inf", "rate 'inf'" },
		{ "poisson: 5", "rate ' 5'" },
		{ "mmpp:1,2,3", "four numbers" },
		{ "mmpp:1,2,3,4,5", "four numbers" },
		{ "mmpp:1,x,3,4", "R1 'x'" },
		{ "mmpp:1,2,0,4", "D0 '0'" },
		{ "mmpp:1,2,0ms,4", "D0 '0ms' is not a positive duration" },
		{ "mmpp:1,2,3,4x", "D1 '4x'" },
		{ "mmpp:1,2,3,ms", "D1 'ms'" },
		{ "mmpp:1,2,3,5 s", "D1 '5 s'" },
		{ "mmpp:1,2ms,3,4", "R1 '2ms'" },
		{ "mmpp:1,-2,3,4", "R1 '-2'" },
		{ "mmpp:0,0,1,1", "both 0" },
		{ "uniform:5", "unknown arrival process 'uniform'" },
		{ "poisson", "unknown arrival process 'poisson'" },
		{ "trace:", "needs a FILE" },
		{ "trace:,format=csv", "needs a FILE" },
		{ "trace:f,format=xml", "'format=xml'" },
		{ "trace:f,format=csv,format=csv", "given twice" },
		{ "trace:f,column=", "'column='" },
		{ "trace:f,format=azure2019,column=t", "format=csv only" },
	};
	struct arrivals_spec s;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(arrivals__parse_spec(bad[i].text, &s),
				 -EINVAL);
		assert_msg(bad[i].needle);
		assert_msg("accepted: poisson:RATE, mmpp:R0,R1,D0,D1, trace:");
	}
}

/* ---- drawn processes ---- */

/* 100000 expected arrivals: the count's standard deviation is 316, so 3 %
 * is over 9 of them. */
static void poisson_rate(void **state)
{
	struct arrivals_spec s;
	struct arrivals a;

	(void)state;
	assert_int_equal(arrivals__parse_spec("poisson:1000", &s), 0);
	assert_int_equal(arrivals__make(&s, 100, 0.5, 7, &a), 0);
	assert_close(a.n, 100000, 3000);
	assert_close(arrivals__mean_rate(&a), 1000, 30);
	assert_ascending(&a);
	assert_true(a.t[0] >= 0 && a.t[a.n - 1] < 100);
	assert_string_equal(a.desc, "poisson 1000/s, 100 s, seed 7");
	arrivals__free(&a);
	assert_null(a.t);
	assert_int_equal(a.n, 0);
}

static void drawn_refusals(void **state)
{
	struct arrivals_spec s;
	struct arrivals a;

	(void)state;
	assert_int_equal(arrivals__parse_spec("poisson:10", &s), 0);
	assert_int_equal(arrivals__make(&s, 0, 1, 1, &a), -EINVAL);
	assert_msg("duration > 0");
	assert_int_equal(arrivals__make(&s, -1, 1, 1, &a), -EINVAL);
	assert_int_equal(arrivals__make(&s, NAN, 1, 1, &a), -EINVAL);
	assert_int_equal(arrivals__make(&s, 2e10, 1, 1, &a), -EINVAL);
	assert_msg("from 0 to 1e+10 s");
	/* 10^9 expected arrivals are refused before any is drawn */
	assert_int_equal(arrivals__parse_spec("poisson:1e9", &s), 0);
	assert_int_equal(arrivals__make(&s, 1, 1, 1, &a), -E2BIG);
	assert_msg("more than 50000000 arrivals");
	assert_int_equal(arrivals__parse_spec("mmpp:1,1,1e-9,1", &s), 0);
	assert_int_equal(arrivals__make(&s, 600, 1, 1, &a), -E2BIG);
	assert_msg("state changes");
	assert_null(a.t);
}

static void expect_same(const struct arrivals *a, const struct arrivals *b)
{
	assert_int_equal(a->n, b->n);
	assert_memory_equal(a->t, b->t, a->n * sizeof(*a->t));
}

static bool differ(const struct arrivals *a, const struct arrivals *b)
{
	return a->n != b->n || memcmp(a->t, b->t, a->n * sizeof(*a->t));
}

static void drawn_reproducible(void **state)
{
	static const char *const texts[] = { "poisson:200", "mmpp:5,300,2,1" };
	struct arrivals a, b, c;
	struct arrivals_spec s;

	(void)state;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(arrivals__parse_spec(texts[i], &s), 0);
		assert_int_equal(arrivals__make(&s, 60, 1, 42, &a), 0);
		assert_int_equal(arrivals__make(&s, 60, 1, 42, &b), 0);
		assert_int_equal(arrivals__make(&s, 60, 1, 43, &c), 0);
		assert_true(a.n > 100);
		expect_same(&a, &b);
		assert_true(differ(&a, &c));
		arrivals__free(&a);
		arrivals__free(&b);
		arrivals__free(&c);
	}
}

/* Rates 10/s and 200/s, 10 s mean dwell, 2000 s: about 100 visits to each
 * state, so about 800 one-second bins lie wholly in each. A quiet bin
 * (Poisson 10) almost never holds 40, a busy one (Poisson 200) almost never
 * fewer than 120; a plain Poisson process at the mean rate (105/s) would
 * fill neither kind. */
static void mmpp_two_regimes(void **state)
{
	struct arrivals_spec s;
	struct arrivals a;
	size_t bins[2000] = { 0 }, quiet = 0, busy = 0;

	(void)state;
	assert_int_equal(arrivals__parse_spec("mmpp:10,200,10,10", &s), 0);
	assert_int_equal(arrivals__make(&s, 2000, 1, 3, &a), 0);
	assert_ascending(&a);
	for (size_t i = 0; i < a.n; i++)
		bins[(size_t)a.t[i]]++;
	for (size_t i = 0; i < 2000; i++) {
		quiet += bins[i] < 40;
		busy += bins[i] > 120;
	}
	assert_true(quiet > 500);
	assert_true(busy > 500);
	assert_close(arrivals__mean_rate(&a), 105, 105 * 0.15);
	assert_non_null(strstr(a.desc, "mmpp 10/s (mean 10 s) <-> 200/s"));
	arrivals__free(&a);
}

/* An on/off process (state 0 silent) leaves gaps as long as its dwells. */
static void mmpp_on_off(void **state)
{
	struct arrivals_spec s;
	struct arrivals a;
	double longest = 0;

	(void)state;
	assert_int_equal(arrivals__parse_spec("mmpp:0,100,5,5", &s), 0);
	assert_int_equal(arrivals__make(&s, 500, 1, 9, &a), 0);
	for (size_t i = 1; i < a.n; i++)
		longest = fmax(longest, a.t[i] - a.t[i - 1]);
	/* ~50 silent dwells with mean 5 s; no busy gap reaches 1 s */
	assert_true(longest > 5);
	arrivals__free(&a);

	/* It starts in state 0: silent for a mean 10^6 s, then loud... */
	assert_int_equal(arrivals__parse_spec("mmpp:0,1000,1e6,1", &s), 0);
	assert_int_equal(arrivals__make(&s, 10, 1, 9, &a), 0);
	assert_int_equal(a.n, 0);
	arrivals__free(&a);
	/* ...or loud first, then silent. */
	assert_int_equal(arrivals__parse_spec("mmpp:1000,0,1e6,1", &s), 0);
	assert_int_equal(arrivals__make(&s, 10, 1, 9, &a), 0);
	assert_close(a.n, 10000, 1000);
	arrivals__free(&a);
}

/* ---- CSV traces ---- */

static void csv_seconds(void **state)
{
	char path[PATH_MAX];
	struct arrivals a;

	/* unsorted, first time column named "timestamp" */
	write_file(state, "sec.csv",
		   "id,timestamp,other\n3,12.5,x\n1,10,y\n2,11.25,z\n", path);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), 0);
	assert_int_equal(a.n, 3);
	assert_close(a.t[0], 0, 1e-12);
	assert_close(a.t[1], 1.25, 1e-12);
	assert_close(a.t[2], 2.5, 1e-12);
	assert_close(a.span_s, 2.5, 1e-12);
	assert_close(arrivals__mean_rate(&a), 3 / 2.5, 1e-12);
	assert_non_null(strstr(a.desc, "sec.csv (csv), 3 of 3 arrivals"));
	arrivals__free(&a);

	/* time x2, then cut to [0, 3): 0, 2.5 */
	assert_int_equal(make_trace(path, "", 3, 2, 1, &a), 0);
	assert_int_equal(a.n, 2);
	assert_close(a.t[1], 2.5, 1e-12);
	assert_close(a.span_s, 3, 0);
	assert_non_null(strstr(a.desc, "2 of 3 arrivals, first 3 s, time x2"));
	arrivals__free(&a);
}

static void csv_datetimes(void **state)
{
	char path[PATH_MAX];
	struct arrivals a;

	/* No "timestamp": the first column containing "time"; a day and a
	 * minute boundary crossed; 'T', 'Z' and 1 to 9 fraction digits. */
	write_file(state, "iso.csv",
		   "name,start_time,end_time\n"
		   "a,2023-11-16 23:59:59.5,x\n"
		   "b,2023-11-17T00:00:00.25Z,x\n"
		   "c,2023-11-16 23:59:03.9799600,x\n"
		   "d,2023-11-17 00:01:00.000000001,x\n"
		   "e,2023-11-16 23:59:04,x\n",
		   path);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), 0);
	assert_int_equal(a.n, 5);
	assert_close(a.t[0], 0, 1e-9);
	assert_close(a.t[1], 0.02004, 1e-9);
	assert_close(a.t[2], 55.52004, 1e-9);
	assert_close(a.t[3], 56.27004, 1e-9);
	assert_close(a.t[4], 116.020040001, 1e-9);
	arrivals__free(&a);

	/* column= picks another column: end_time holds no dates */
	assert_int_equal(make_trace(path, ",column=END_TIME", 0, 1, 1, &a),
			 -EINVAL);
	assert_msg("line 2: end_time 'x' is neither seconds nor a UTC date");
	assert_int_equal(make_trace(path, ",column=begin", 0, 1, 1, &a),
			 -EINVAL);
	assert_msg("line 1: no column named 'begin'");
}

/* Quoted fields (commas, quotes, line breaks) are the CSV's business, and
 * line numbers stay physical. */
static void csv_quoted(void **state)
{
	char path[PATH_MAX];
	struct arrivals a;

	write_file(state, "quoted.csv",
		   "\"time\",\"note\"\n"
		   "\"1.5\",\"a, \"\"b\"\"\"\n"
		   "0.5,\"two\nlines\"\n"
		   "\n"
		   "  2.5 ,c\n",
		   path);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), 0);
	assert_int_equal(a.n, 3);
	assert_close(a.t[1], 1, 1e-12);
	assert_close(a.t[2], 2, 1e-12);
	arrivals__free(&a);

	expect_bad(state, "quoted_bad.csv",
		   "time,note\n1,\"two\nlines\"\n\n2,c,d\n", "",
		   "line 5: 3 columns, the header has 2");
	expect_bad(state, "quote_open.csv", "time,note\n1,x\n2,\"open\n", "",
		   "line 3: a quoted field is not closed");
	expect_bad(state, "quote_stray.csv", "time,note\n1,x\n2,a\"b\"c\n", "",
		   "line 3: malformed quotes");
}

static void csv_malformed(void **state)
{
	expect_bad(state, "cols.csv", "id,timestamp\n1,2\n2,3,4\n", "",
		   "line 3: 3 columns, the header has 2");
	expect_bad(state, "few.csv", "id,timestamp\n1,2\n2,3\n4\n", "",
		   "line 4: 1 columns, the header has 2");
	expect_bad(state, "nan.csv", "id,timestamp\n1,2\n2,3\n3,soon\n", "",
		   "line 4: timestamp 'soon' is neither seconds nor");
	expect_bad(state, "date.csv",
		   "timestamp\n2023-02-28 10:00:00\n2023-02-30 10:00:00\n", "",
		   "line 3: timestamp '2023-02-30 10:00:00'");
	expect_bad(state, "frac.csv",
		   "timestamp\n2023-02-28 10:00:00."
		   "1234567891\n",
		   "", "line 2:");
	expect_bad(state, "tz.csv", "timestamp\n2023-02-28 10:00:00+01:00\n",
		   "", "line 2:");
	expect_bad(state, "notime.csv", "a,b\n1,2\n", "",
		   "line 1: no timestamp column in the header 'a,b'");
}

/* CRLF line ends, with and without a final one; line numbers still count
 * lines, not CR and LF apart. */
static void csv_crlf(void **state)
{
	char path[PATH_MAX];
	struct arrivals a;

	write_file(state, "crlf.csv", "timestamp,x\r\n4,a\r\n\r\n1,b\r\n3,c",
		   path);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), 0);
	assert_int_equal(a.n, 3);
	assert_close(a.t[1], 2, 0);
	assert_close(a.t[2], 3, 0);
	arrivals__free(&a);

	expect_bad(state, "crlf_bad.csv",
		   "timestamp,x\r\n4,a\r\n\r\n1,b\r\nq,c\r\n", "",
		   "line 5: timestamp 'q'");
	expect_bad(state, "crlf_head.csv", "timestamp,x\r\n", "",
		   "has no arrivals (only a header line)");
}

/* ---- Azure Functions 2019 ---- */

static const char azure2019[] = "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
				"o1,a1,f1,http,2,0,1\n"
				"o2,a2,f2,timer,1,0,3\n";

static void count_minutes(const struct arrivals *a, size_t *per, size_t n,
			  double minute)
{
	memset(per, 0, n * sizeof(*per));
	for (size_t i = 0; i < a->n; i++) {
		size_t m = (size_t)(a->t[i] / minute);

		assert_true(m < n);
		per[m]++;
	}
}

static void azure2019_counts(void **state)
{
	char path[PATH_MAX];
	struct arrivals a, b;
	size_t per[3];

	write_file(state, "inv2019.csv", azure2019, path);
	assert_int_equal(make_trace(path, "", 0, 1, 5, &a), 0);
	assert_int_equal(a.n, 7);
	assert_ascending(&a);
	count_minutes(&a, per, 3, 60);
	assert_int_equal(per[0], 3);
	assert_int_equal(per[1], 0);
	assert_int_equal(per[2], 4);
	assert_close(a.span_s, 180, 0);
	assert_non_null(strstr(a.desc, "(azure2019), 7 of 7 arrivals, seed 5"));

	/* same seed, same spread; another seed, another */
	assert_int_equal(make_trace(path, ",format=azure2019", 0, 1, 5, &b), 0);
	expect_same(&a, &b);
	arrivals__free(&b);
	assert_int_equal(make_trace(path, "", 0, 1, 6, &b), 0);
	assert_true(differ(&a, &b));
	arrivals__free(&b);
	arrivals__free(&a);

	/* x0.5: minutes last 30 s; a 90 s window holds all three of them */
	assert_int_equal(make_trace(path, "", 90, 0.5, 5, &a), 0);
	count_minutes(&a, per, 3, 30);
	assert_int_equal(per[0], 3);
	assert_int_equal(per[2], 4);
	arrivals__free(&a);

	/* the first 90 s: minute 1 and the empty minute 2 */
	assert_int_equal(make_trace(path, "", 90, 1, 5, &a), 0);
	assert_true(a.n == 3);
	assert_true(a.t[a.n - 1] < 60);
	assert_non_null(strstr(a.desc, "3 of 7 arrivals, first 90 s"));
	arrivals__free(&a);
	assert_int_equal(make_trace(path, "", 150, 1, 5, &a), 0);
	assert_true(a.n >= 3 && a.n <= 7);
	assert_true(a.t[a.n - 1] < 150);
	arrivals__free(&a);

	/* the first 30 s of a trace whose minute 1 is quiet: refused */
	write_file(
		state, "quiet2019.csv",
		"HashOwner,HashApp,HashFunction,Trigger,1,2\no,a,f,http,0,5\n",
		path);
	assert_int_equal(make_trace(path, "", 30, 1, 1, &a), -EINVAL);
	assert_msg("no arrivals in the first 30 s");
}

static void azure2019_malformed(void **state)
{
	expect_bad(state, "neg2019.csv",
		   "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
		   "o,a,f,http,1,2\no,a,g,http,-1,2\n",
		   "", "line 3: negative count '-1' in minute 1");
	expect_bad(state, "nan2019.csv",
		   "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
		   "o,a,f,http,1,x\n",
		   "", "line 2: count 'x' in minute 2 is not a whole number");
	expect_bad(state, "frac2019.csv",
		   "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
		   "o,a,f,http,1,1.5\n",
		   "", "line 2: count '1.5'");
	expect_bad(state, "cols2019.csv",
		   "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
		   "o,a,f,http,1,2\r\no,a,f,http,1\r\n",
		   "", "line 3: 5 columns, the header has 6");
	expect_bad(state, "zero2019.csv",
		   "HashOwner,HashApp,HashFunction,Trigger,1,2\n"
		   "o,a,f,http,0,0\n",
		   "", "no arrivals (every count is 0");
	expect_bad(state, "head2019.csv",
		   "HashOwner,HashApp,HashFunction,Trigger,1,3\n"
		   "o,a,f,http,0,0\n",
		   "", "line 1: not an Azure 2019 header");
	/* forced on a file of another format */
	expect_bad(state, "forced2019.csv", "timestamp\n1\n",
		   ",format=azure2019", "line 1: not an Azure 2019 header");
}

/* ---- Azure Functions 2021 ---- */

static void azure2021_trace(void **state)
{
	char path[PATH_MAX];
	struct arrivals a;

	/* arrivals 10, 3, 20: relative to 3 they are 0, 7, 17 */
	write_file(state, "inv2021.csv",
		   "app,func,end_timestamp,duration\n"
		   "a,f,10.5,0.5\na,g,5.0,2.0\nb,h,20,0\n",
		   path);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), 0);
	assert_int_equal(a.n, 3);
	assert_close(a.t[0], 0, 1e-12);
	assert_close(a.t[1], 7, 1e-12);
	assert_close(a.t[2], 17, 1e-12);
	assert_non_null(strstr(a.desc, "(azure2021), 3 of 3 arrivals"));
	arrivals__free(&a);

	/* ten times faster, first second */
	assert_int_equal(make_trace(path, "", 1, 0.1, 1, &a), 0);
	assert_int_equal(a.n, 2);
	assert_close(a.t[1], 0.7, 1e-12);
	assert_non_null(
		strstr(a.desc, "2 of 3 arrivals, first 1 s, time x0.1"));
	arrivals__free(&a);

	/* read as a plain CSV, end_timestamp is the time column */
	assert_int_equal(make_trace(path, ",format=csv", 0, 1, 1, &a), 0);
	assert_close(a.t[2], 20 - 5, 1e-12);
	arrivals__free(&a);

	assert_int_equal(make_trace(path, "", 0, 0, 1, &a), -EINVAL);
	assert_msg("time scale 0");
}

static void azure2021_malformed(void **state)
{
	expect_bad(state, "neg2021.csv",
		   "app,func,end_timestamp,duration\na,f,1,0.5\na,f,2,-0.5\n",
		   "", "line 3: negative duration '-0.5'");
	expect_bad(state, "nan2021.csv",
		   "app,func,end_timestamp,duration\na,f,1,0.5\n\na,f,x,1\n",
		   "", "line 4: end_timestamp 'x' is not a number");
	expect_bad(state, "cols2021.csv",
		   "app,func,end_timestamp,duration\na,f,1\n", "",
		   "line 2: 3 columns, the header has 4");
	expect_bad(state, "forced2021.csv", "timestamp\n1\n",
		   ",format=azure2021", "line 1: not an Azure 2021 header");
	expect_bad(state, "head2021.csv", "app,func,end_timestamp,duration\n",
		   "", "has no arrivals (only a header line)");
}

/* ---- sums and spans past what the numbers hold ---- */

/* An Azure 2019 trace in memory (some 240 MB) whose counts, each valid,
 * add up to exactly 2^64: 18446744 of 999999999999 and one remainder,
 * in rows of 1440 minutes. Wrapped, the sum asked for no memory at all. */
static int wrapping_2019(void)
{
	enum { K = 1440, ROWS = 18446744 / K, LEFT = 18446744 % K };
	static char row[16 + K * 13];
	int fd = memfd_create("wrap2019", 0);
	size_t len = 0;
	FILE *fp;

	assert_true(fd >= 0);
	fp = fdopen(dup(fd), "w");
	assert_non_null(fp);
	fputs("HashOwner,HashApp,HashFunction,Trigger", fp);
	for (int m = 1; m <= K; m++)
		fprintf(fp, ",%d", m);
	len = (size_t)sprintf(row, "o,a,f,http");
	for (int m = 0; m < K; m++)
		len += (size_t)sprintf(row + len, ",999999999999");
	for (int i = 0; i < ROWS; i++)
		fprintf(fp, "\n%s", row);
	fputs("\no,a,f,http", fp);
	for (int m = 0; m < K; m++)
		fprintf(fp, ",%" PRIu64,
			m < LEFT    ? UINT64_C(999999999999)
			: m == LEFT ? UINT64_C(0) - UINT64_C(18446744) *
					  UINT64_C(999999999999)
				    : 0);
	fputs("\n", fp);
	assert_int_equal(fclose(fp), 0);
	return fd;
}

static void azure2019_sum_wraps(void **state)
{
	char path[64];
	struct arrivals a;
	int fd = wrapping_2019();

	(void)state;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), -E2BIG);
	assert_msg(path);
	assert_msg("line 12812: the counts add up to more than 2^64 arrivals "
		   "by minute 345");
	assert_null(a.t);
	close(fd);
}

static void spans(void **state)
{
	char path[PATH_MAX], head[4096];
	struct arrivals a;

	/* 10^16 s apart: a double's tick there is 2 s */
	write_file(state, "far.csv", "timestamp\n0\n1e16\n", path);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), -EINVAL);
	assert_msg("far.csv spans 1e+16 s (time x1), more than the 1e+10 s");
	assert_int_equal(make_trace(path, "", 100, 1, 1, &a), 0);
	assert_int_equal(a.n, 1);
	arrivals__free(&a);
	assert_int_equal(make_trace(path, "", 2e10, 1, 1, &a), -EINVAL);
	/* and a span too short to divide by: no rate, not an infinite one */
	write_file(state, "near.csv", "timestamp\n0\n5e-324\n", path);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), 0);
	assert_true(arrivals__mean_rate(&a) == 0);
	arrivals__free(&a);
	/* finite times whose difference is not */
	expect_bad(state, "inf.csv", "timestamp\n-1e308\n1e308\n", "",
		   "spans inf s");
	expect_bad(state, "inf2021.csv",
		   "app,func,end_timestamp,duration\na,f,-1e308,1e308\n", "",
		   "line 2: end_timestamp - duration is out of range");
	/* 200 minutes a million times slower: 1.2e10 s */
	strcpy(head, "HashOwner,HashApp,HashFunction,Trigger");
	for (int m = 1; m <= 200; m++)
		snprintf(head + strlen(head), sizeof(head) - strlen(head),
			 ",%d", m);
	strcat(head, "\no,a,f,http,1");
	for (int m = 1; m < 200; m++)
		strcat(head, ",0");
	write_file(state, "slow2019.csv", strcat(head, "\n"), path);
	assert_int_equal(make_trace(path, "", 0, 1e6, 1, &a), -EINVAL);
	assert_msg("slow2019.csv spans 1.2e+10 s (time x1e+06)");
	assert_int_equal(make_trace(path, "", 0, 1e5, 1, &a), 0);
	arrivals__free(&a);
	assert_int_equal(make_trace(path, "", 0, 1e7, 1, &a), -EINVAL);
	assert_msg("time scale 1e+07 is not a number from 1e-06 to 1e+06");
	assert_int_equal(make_trace(path, "", 0, 1e-7, 1, &a), -EINVAL);
	assert_int_equal(make_trace(path, "", 0, INFINITY, 1, &a), -EINVAL);
}

/* ---- files that are not traces ---- */

static void not_traces(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	struct arrivals a;

	/* A FIFO without a writer: refused at once, never read. */
	snprintf(path, sizeof(path), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), -EINVAL);
	assert_msg("is a FIFO, not a regular file");
	assert_int_equal(make_trace(f->dir, "", 0, 1, 1, &a), -EINVAL);
	assert_msg("is a directory");

	snprintf(path, sizeof(path), "%s/missing.csv", f->dir);
	assert_int_equal(make_trace(path, "", 0, 1, 1, &a), -ENOENT);
	assert_msg(path);

	expect_bad(state, "empty.csv", "", "", "is empty (no header line)");
	expect_bad(state, "blank.csv", "\n\r\n", "", "is empty");
	expect_bad(state, "head.csv", "timestamp\n", "",
		   "has no arrivals (only a header line)");
	expect_bad(state, "head_nonl.csv", "timestamp", "",
		   "has no arrivals (only a header line)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spec_good),
		cmocka_unit_test(spec_bad),
		cmocka_unit_test(poisson_rate),
		cmocka_unit_test(drawn_refusals),
		cmocka_unit_test(drawn_reproducible),
		cmocka_unit_test(mmpp_two_regimes),
		cmocka_unit_test(mmpp_on_off),
		cmocka_unit_test(csv_seconds),
		cmocka_unit_test(csv_datetimes),
		cmocka_unit_test(csv_quoted),
		cmocka_unit_test(csv_malformed),
		cmocka_unit_test(csv_crlf),
		cmocka_unit_test(azure2019_counts),
		cmocka_unit_test(azure2019_malformed),
		cmocka_unit_test(azure2021_trace),
		cmocka_unit_test(azure2021_malformed),
		cmocka_unit_test(azure2019_sum_wraps),
		cmocka_unit_test(spans),
		cmocka_unit_test(not_traces),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
