/* Multi-function traces read with libcsv: Azure 2019 and 2021 as
 * invocation counts per function and minute. */
#include "arrivals_functions.h"
#include "arrivals_int.h"

#include "err.h"

#include <csv.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define FN_MAX_COLUMNS 65536
#define FN_MAX_FIELD   (1u << 20)

struct inv {
	uint32_t fn;
	double start;
};

/* One pass with libcsv's callbacks; the first error is kept in err. */
struct fnreader {
	const char *path;
	enum arrivals_format format;
	size_t max_minutes;
	int err;
	size_t line, row_line, field;
	bool last_cr;
	size_t ncols;	  /* 0 before the header */
	bool head_ok[4];  /* the header's first four names */
	bool numbered;	  /* 2019: columns 5.. are 1, 2, ... */
	size_t nmin;	  /* 2019: minutes held */
	size_t fn;	  /* the current row's function */
	double v[2];	  /* 2021: end_timestamp, duration */
	struct fn_trace t;
	size_t fn_cap;
	uint32_t *slot;	  /* hash: 1 + function index, 0 empty */
	size_t nslot;
	struct inv *inv;  /* 2021 */
	size_t ninv, inv_cap;
};

static const char *const head2019[] = { "HashOwner", "HashApp",
					"HashFunction", "Trigger" };
static const char *const head2021[] = { "app", "func", "end_timestamp",
					"duration" };

static int fn_error(struct fnreader *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fn_error(struct fnreader *r, int code, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	r->err = err__set(code, "trace %s line %zu: %s", r->path,
			  r->field ? r->row_line : r->line, what);
	return r->err;
}

static int no_memory(struct fnreader *r)
{
	return r->err = err__set(ENOMEM, "trace %s: out of memory", r->path);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int rehash(struct fnreader *r)
{
	size_t n = r->nslot ? 2 * r->nslot : 1024;
	uint32_t *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return no_memory(r);
	for (size_t i = 0; i < r->t.nfn; i++) {
		size_t k = name_hash(r->t.name[i]) & (n - 1);

		while (slot[k])
			k = (k + 1) & (n - 1);
		slot[k] = (uint32_t)(i + 1);
	}
	free(r->slot);
	r->slot = slot;
	r->nslot = n;
	return 0;
}

/* Room for one more function: its name and, for 2019, its row of
 * counts, within FN_TRACE_MAX_CELLS. */
static int grow_functions(struct fnreader *r)
{
	size_t cap = r->fn_cap ? 2 * r->fn_cap : 64, cells;
	char **name;

	if (r->t.nfn < r->fn_cap)
		return 0;
	if (r->t.nfn >= UINT32_MAX - 1 ||
	    (r->nmin && r->t.nfn + 1 > FN_TRACE_MAX_CELLS / r->nmin))
		return fn_error(r, E2BIG, "more than %u functions x minutes "
				"(the limit bounds memory); keep fewer minutes",
				FN_TRACE_MAX_CELLS);
	if (r->nmin && __builtin_mul_overflow(cap, r->nmin, &cells))
		return no_memory(r);
	if (r->nmin && cells > FN_TRACE_MAX_CELLS)
		cap = FN_TRACE_MAX_CELLS / r->nmin;
	name = realloc(r->t.name, cap * sizeof(*name));
	if (!name)
		return no_memory(r);
	r->t.name = name;
	if (r->nmin) {
		uint32_t *c = realloc(r->t.count,
				      cap * r->nmin * sizeof(*c));

		if (!c)
			return no_memory(r);
		memset(c + r->fn_cap * r->nmin, 0,
		       (cap - r->fn_cap) * r->nmin * sizeof(*c));
		r->t.count = c;
	}
	r->fn_cap = cap;
	return 0;
}

/* The index of function `s`, added when new. */
static int function_of(struct fnreader *r, const char *s, size_t len)
{
	size_t k;

	if (len == 0 || len > FN_TRACE_MAX_NAME)
		return fn_error(r, EINVAL, "a function name must have 1 to %d "
				"bytes", FN_TRACE_MAX_NAME);
	/* The name is a C string from here on: "a\0b" would be "a". */
	if (strlen(s) != len)
		return fn_error(r, EINVAL, "a function name holds a NUL byte");
	if (2 * (r->t.nfn + 1) > r->nslot && rehash(r) < 0)
		return r->err;
	k = name_hash(s) & (r->nslot - 1);
	for (; r->slot[k]; k = (k + 1) & (r->nslot - 1))
		if (!strcmp(r->t.name[r->slot[k] - 1], s)) {
			r->fn = r->slot[k] - 1;
			return 0;
		}
	if (grow_functions(r) < 0)
		return r->err;
	r->t.name[r->t.nfn] = strdup(s);
	if (!r->t.name[r->t.nfn])
		return no_memory(r);
	r->slot[k] = (uint32_t)(r->t.nfn + 1);
	r->fn = r->t.nfn++;
	return 0;
}

static int count_2019(struct fnreader *r, const char *s, size_t len)
{
	size_t minute = r->field - 4;
	uint64_t c = 0;
	uint32_t *cell;

	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]) || len > 10)
			return fn_error(r, EINVAL, "count '%.40s' in minute "
					"%zu is not a whole number below 2^32",
					s, minute + 1);
		c = c * 10 + (uint64_t)(s[i] - '0');
	}
	if (len == 0 || c > UINT32_MAX)
		return fn_error(r, EINVAL, "count '%.40s' in minute %zu is not "
				"a whole number below 2^32", s, minute + 1);
	if (minute >= r->nmin)
		return 0;
	cell = &r->t.count[r->fn * r->nmin + minute];
	/* Rows of one function are summed: a cell holds 32 bits. */
	if (c > UINT32_MAX - *cell)
		return fn_error(r, E2BIG, "function %s's counts in minute %zu "
				"add up past 2^32", r->t.name[r->fn],
				minute + 1);
	*cell += (uint32_t)c;
	if (__builtin_add_overflow(r->t.total, c, &r->t.total))
		return fn_error(r, E2BIG, "the counts add up past 2^64");
	return 0;
}

static void data_field(struct fnreader *r, const char *s, size_t len)
{
	if (r->field >= r->ncols)
		return; /* reported at the row's end */
	if (r->format == ARRIVALS_AZURE2019) {
		if (r->field == 2)
			function_of(r, s, len);
		else if (r->field >= 4)
			count_2019(r, s, len);
		return;
	}
	if (r->field == 1)
		function_of(r, s, len);
	else if (r->field >= 2 && number_in(s, len, &r->v[r->field - 2]) < 0)
		fn_error(r, EINVAL, "%s '%.40s' is not a number",
			 head2021[r->field], s);
	else if (r->field == 3 && r->v[1] < 0)
		fn_error(r, EINVAL, "negative duration '%.40s'", s);
}

static void header_field(struct fnreader *r, const char *s)
{
	char want[24];

	if (r->field >= FN_MAX_COLUMNS) {
		fn_error(r, EINVAL, "more than %d columns", FN_MAX_COLUMNS);
		return;
	}
	if (r->field < 4) {
		const char *const *h = r->format == ARRIVALS_AZURE2021
					       ? head2021 : head2019;

		r->head_ok[r->field] = !strcasecmp(s, h[r->field]);
		/* The first name tells the format when it is not given. */
		if (r->field == 0 && r->format == ARRIVALS_AUTO) {
			r->format = !strcasecmp(s, "app") ? ARRIVALS_AZURE2021
							  : ARRIVALS_AZURE2019;
			r->head_ok[0] = !strcasecmp(
				s, r->format == ARRIVALS_AZURE2021 ? "app"
								   : head2019[0]);
		}
		return;
	}
	snprintf(want, sizeof(want), "%zu", r->field - 3);
	if (strcmp(s, want))
		r->numbered = false;
}

static void on_field(void *data, size_t len, void *ctx)
{
	struct fnreader *r = ctx;
	const char *s = data ? data : "";

	if (r->err)
		return;
	if (r->field == 0)
		r->row_line = r->line;
	if (r->ncols == 0)
		header_field(r, s);
	else
		data_field(r, s, len);
	r->field++;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n' ||
		    (s[i] == '\r' && (i + 1 == len || s[i + 1] != '\n')))
			r->line++;
}

static int end_header(struct fnreader *r)
{
	bool ok = r->field >= 4 && r->head_ok[0] && r->head_ok[1] &&
		  r->head_ok[2] && r->head_ok[3];

	if (r->format == ARRIVALS_AZURE2021 && (!ok || r->field != 4))
		return fn_error(r, EINVAL, "not an Azure 2021 header "
				"(app,func,end_timestamp,duration)");
	if (r->format != ARRIVALS_AZURE2021 &&
	    (!ok || !r->numbered || r->field == 4))
		return fn_error(r, EINVAL,
				"not a multi-function trace: expected an "
				"Azure 2019 header (HashOwner,HashApp,"
				"HashFunction,Trigger,1,2,...) or an Azure "
				"2021 one (app,func,end_timestamp,duration)");
	r->format = r->format == ARRIVALS_AZURE2021 ? ARRIVALS_AZURE2021
						    : ARRIVALS_AZURE2019;
	r->ncols = r->field;
	if (r->format == ARRIVALS_AZURE2019) {
		r->nmin = r->ncols - 4;
		if (r->max_minutes && r->nmin > r->max_minutes)
			r->nmin = r->max_minutes;
	}
	return 0;
}

static void push_invocation(struct fnreader *r)
{
	double start = r->v[0] - r->v[1];

	if (!isfinite(start)) {
		fn_error(r, EINVAL, "end_timestamp - duration is out of "
			 "range");
		return;
	}
	if (r->ninv == r->inv_cap) {
		size_t cap = r->inv_cap ? 2 * r->inv_cap : 4096;
		struct inv *v;

		if (r->ninv >= ARRIVALS_MAX) {
			fn_error(r, E2BIG, "more than %d invocations (the "
				 "limit bounds memory)", ARRIVALS_MAX);
			return;
		}
		v = realloc(r->inv, cap * sizeof(*v));
		if (!v) {
			no_memory(r);
			return;
		}
		r->inv = v;
		r->inv_cap = cap;
	}
	r->inv[r->ninv].fn = (uint32_t)r->fn;
	r->inv[r->ninv++].start = start;
}

static void on_row(int c, void *ctx)
{
	struct fnreader *r = ctx;
	bool crlf = c == '\n' && r->last_cr && r->field == 0;

	if (r->err)
		return;
	if (r->field > 0) {
		if (r->ncols == 0)
			end_header(r);
		else if (r->field != r->ncols)
			fn_error(r, EINVAL, "%zu columns, the header has %zu",
				 r->field, r->ncols);
		else if (r->format == ARRIVALS_AZURE2021)
			push_invocation(r);
	}
	if (c != -1 && !crlf)
		r->line++;
	r->last_cr = c == '\r';
	r->field = 0;
}

static void *field_realloc(void *p, size_t size)
{
	return size > FN_MAX_FIELD ? NULL : realloc(p, size);
}

static int feed(struct fnreader *r, int fd, struct csv_parser *p)
{
	char buf[16384];
	ssize_t got;

	for (;;) {
		got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return err__sys(errno, "reading trace %s", r->path);
		if (got == 0)
			break;
		if (csv_parse(p, buf, (size_t)got, on_field, on_row, r) !=
		    (size_t)got)
			return r->err ? r->err
				      : fn_error(r, EINVAL, "malformed quotes,"
						 " or a field longer than %u "
						 "bytes", FN_MAX_FIELD);
		if (r->err)
			return r->err;
	}
	if (csv_fini(p, on_field, on_row, r) != 0)
		return r->err ? r->err
			      : fn_error(r, EINVAL, "a quoted field is not "
					 "closed");
	return r->err;
}

static int read_file(struct fnreader *r)
{
	struct csv_parser p;
	struct stat st;
	int fd, err;

	fd = open(r->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return err__sys(errno, "trace %s", r->path);
	if (fstat(fd, &st) < 0)
		err = err__sys(errno, "trace %s: fstat", r->path);
	else if (!S_ISREG(st.st_mode))
		err = err__set(EINVAL, "trace %s is not a regular file",
			       r->path);
	else if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL |
				      CSV_APPEND_NULL))
		err = err__set(ENOMEM, "trace %s: out of memory", r->path);
	else {
		csv_set_realloc_func(&p, field_realloc);
		err = feed(r, fd, &p);
		csv_free(&p);
	}
	close(fd);
	return err;
}

/* 2021: minutes from the earliest start, each invocation counted in
 * its minute. */
static int bin_invocations(struct fnreader *r)
{
	double min = INFINITY, max = -INFINITY, span;
	size_t cells;

	for (size_t i = 0; i < r->ninv; i++) {
		min = fmin(min, r->inv[i].start);
		max = fmax(max, r->inv[i].start);
	}
	span = (max - min) / 60.0;
	if (!(span < FN_TRACE_MAX_MINUTES))
		return err__set(E2BIG, "trace %s spans more than %u minutes",
				r->path, FN_TRACE_MAX_MINUTES);
	r->nmin = (size_t)floor(span) + 1;
	if (r->max_minutes && r->nmin > r->max_minutes)
		r->nmin = r->max_minutes;
	if (__builtin_mul_overflow(r->t.nfn, r->nmin, &cells) ||
	    cells > FN_TRACE_MAX_CELLS)
		return err__set(E2BIG, "trace %s: %zu functions x %zu minutes "
				"is more than %u cells (the limit bounds "
				"memory); keep fewer minutes", r->path,
				r->t.nfn, r->nmin, FN_TRACE_MAX_CELLS);
	r->t.count = calloc(cells, sizeof(*r->t.count));
	if (!r->t.count)
		return err__set(ENOMEM, "trace %s: out of memory", r->path);
	for (size_t i = 0; i < r->ninv; i++) {
		size_t m = (size_t)floor((r->inv[i].start - min) / 60.0);
		uint32_t *cell;

		if (m >= r->nmin)
			continue;
		cell = &r->t.count[r->inv[i].fn * r->nmin + m];
		if (*cell == UINT32_MAX)
			return err__set(E2BIG, "trace %s: function %s has more "
					"than 2^32 invocations in minute %zu",
					r->path, r->t.name[r->inv[i].fn],
					m + 1);
		(*cell)++;
		r->t.total++;
	}
	return 0;
}

void arrivals__functions_free(struct fn_trace *t)
{
	for (size_t i = 0; t->name && i < t->nfn; i++)
		free(t->name[i]);
	free(t->name);
	free(t->count);
	memset(t, 0, sizeof(*t));
}

int arrivals__functions_read(const char *path, enum arrivals_format format,
			     size_t max_minutes, struct fn_trace *out)
{
	struct fnreader r = {
		.path = path, .format = format, .max_minutes = max_minutes,
		.line = 1, .numbered = true,
	};
	int err;

	memset(out, 0, sizeof(*out));
	if (format == ARRIVALS_CSV)
		return err__set(EINVAL, "trace %s: a CSV of timestamps has no "
				"functions; give an Azure 2019 or 2021 trace",
				path);
	err = read_file(&r);
	if (err == 0 && r.ncols == 0)
		err = err__set(EINVAL, "trace %s is empty (no header line)",
			       path);
	if (err == 0 && r.format == ARRIVALS_AZURE2021 && r.ninv)
		err = bin_invocations(&r);
	if (err == 0 && r.t.total == 0)
		err = err__set(EINVAL, "trace %s has no invocations%s", path,
			       max_minutes ? " in the minutes kept" : "");
	free(r.slot);
	free(r.inv);
	r.t.nmin = r.nmin;
	r.t.format = r.format;
	if (err < 0) {
		arrivals__functions_free(&r.t);
		return err;
	}
	*out = r.t;
	return 0;
}
