/* Arrival traces read with libcsv: plain timestamps, Azure 2019 and 2021. */
#include "arrivals.h"
#include "arrivals_int.h"

#include "err.h"
#include "stats.h"
#include "units.h"

#include <csv.h>
#include <ctype.h>
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
#include <time.h>
#include <unistd.h>

/* The trace formats by the names `,format=` takes. */
static const char *const format_names[] = {
	[ARRIVALS_AUTO] = "auto",
	[ARRIVALS_CSV] = "csv",
	[ARRIVALS_AZURE2019] = "azure2019",
	[ARRIVALS_AZURE2021] = "azure2021",
};

const char *arrivals__format_name(enum arrivals_format format)
{
	if ((unsigned int)format >=
	    sizeof(format_names) / sizeof(*format_names))
		return "?";
	return format_names[format];
}

/* ---- trace files ---- */

#define TRACE_MAX_COLUMNS 65536
#define TRACE_MAX_FIELD	  (1u << 20)

static const char *const azure2019_head[] = {
	"HashOwner",
	"HashApp",
	"HashFunction",
	"Trigger",
};
static const char *const azure2021_head[] = {
	"app",
	"func",
	"end_timestamp",
	"duration",
};

/* One pass over a trace with libcsv's callbacks. The callbacks cannot stop
 * the parser, so the first error is kept in err and the rest ignored. */
struct reader {
	const char *path;
	enum arrivals_format format; /* asked for, then found */
	const char *column;
	int err;
	size_t line;	 /* physical line where the next row starts */
	size_t row_line; /* and where the current one started */
	size_t field;	 /* fields seen in the current row */
	bool last_cr;	 /* the last row ended in CR: an LF now is its CRLF */
	char **names;	 /* header fields, until the header is done */
	size_t nnames, names_cap;
	size_t ncols;	/* 0 before the header */
	size_t tcol;	/* csv: the timestamp column */
	char tname[64]; /* csv: its name, for messages */
	double v[2];	/* csv: time; azure2021: end_timestamp, duration */
	bool have_base;
	int64_t base;	   /* whole seconds subtracted from every csv time */
	struct series s;   /* csv, azure2021 */
	uint64_t *minutes; /* azure2019: summed counts per minute */
	uint64_t total;
};

static int line_error(struct reader *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "FILE line N: ..." for the row being read, as -code; keeps the first
 * error. */
static int line_error(struct reader *r, int code, const char *fmt, ...)
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

#define bad_line(r, ...) line_error(r, EINVAL, __VA_ARGS__)

/* "YYYY-MM-DD[ T]HH:MM:SS[.F][Z]", UTC, up to 9 fraction digits. Whole
 * seconds and fraction stay apart: a double of epoch seconds would keep
 * only about 0.2 us. */
static int parse_datetime(const char *s, size_t len, int64_t *sec, double *frac)
{
	static const char shape[] = "dddd-dd-dd?dd:dd:dd";
	struct tm tm = { 0 }, back;
	char buf[20];
	size_t i, digits = 0;
	uint64_t ns = 0;
	time_t t;

	if (len < 19)
		return -EINVAL;
	for (i = 0; i < 19; i++)
		if (shape[i] == 'd'   ? !isdigit((unsigned char)s[i])
		    : shape[i] == '?' ? s[i] != ' ' && s[i] != 'T'
				      : s[i] != shape[i])
			return -EINVAL;
	memcpy(buf, s, 19);
	buf[10] = ' ';
	buf[19] = '\0';
	if (!strptime(buf, "%Y-%m-%d %H:%M:%S", &tm))
		return -EINVAL;
	back = tm;
	t = timegm(&tm);
	/* timegm normalises Feb 30 to Mar 2; a real date survives intact. */
	if (t == (time_t)-1 || tm.tm_year != back.tm_year ||
	    tm.tm_mon != back.tm_mon || tm.tm_mday != back.tm_mday ||
	    tm.tm_hour != back.tm_hour || tm.tm_min != back.tm_min ||
	    tm.tm_sec != back.tm_sec)
		return -EINVAL;
	if (i < len && s[i] == '.') {
		for (i++; i < len && isdigit((unsigned char)s[i]);
		     i++, digits++)
			ns = ns * 10 + (uint64_t)(s[i] - '0');
		if (digits == 0 || digits > 9)
			return -EINVAL;
		for (; digits < 9; digits++)
			ns *= 10;
	}
	if (i < len && s[i] == 'Z')
		i++;
	if (i != len)
		return -EINVAL;
	*sec = (int64_t)t;
	*frac = (double)ns * 1e-9;
	return 0;
}

/* Seconds relative to the first value's whole second (see struct reader). */
static int csv_time(struct reader *r, const char *s, size_t len, double *out)
{
	int64_t sec;
	double frac, x;

	if (parse_datetime(s, len, &sec, &frac) == 0) {
		if (!r->have_base)
			r->base = sec;
		r->have_base = true;
		*out = (double)(sec - r->base) + frac;
		return 0;
	}
	if (number_in(s, len, &x) < 0)
		return bad_line(r,
				"%s '%.40s' is neither seconds nor a UTC "
				"date-time like 2023-11-16 18:17:03.9799600",
				r->tname, s);
	if (!r->have_base)
		r->base = fabs(x) < 1e15 ? (int64_t)floor(x) : 0;
	r->have_base = true;
	*out = x - (double)r->base;
	return 0;
}

static int azure2019_count(struct reader *r, const char *s, size_t len)
{
	size_t minute = r->field - 4;
	uint64_t c = 0;

	if (len > 0 && s[0] == '-')
		return bad_line(r, "negative count '%.40s' in minute %zu", s,
				minute + 1);
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]) || len > 12)
			return bad_line(r,
					"count '%.40s' in minute %zu is not "
					"a whole number below 10^12",
					s, minute + 1);
		c = c * 10 + (uint64_t)(s[i] - '0');
	}
	if (len == 0)
		return bad_line(r, "empty count in minute %zu", minute + 1);
	/* Each count is below 10^12, but rows are many: some 240 MB of them
	 * reach 2^64. A minute's sum is at most the total, which is kept
	 * for the description, so the whole file is refused. */
	if (__builtin_add_overflow(r->minutes[minute], c, &r->minutes[minute]) ||
	    __builtin_add_overflow(r->total, c, &r->total))
		return line_error(r, E2BIG,
				  "the counts add up to more than 2^64 "
				  "arrivals by minute %zu (at most %d are "
				  "held)",
				  minute + 1, ARRIVALS_MAX);
	return 0;
}

static int azure2021_value(struct reader *r, const char *s, size_t len)
{
	const char *name = azure2021_head[r->field];
	double *v = &r->v[r->field - 2];

	if (number_in(s, len, v) < 0)
		return bad_line(r, "%s '%.40s' is not a number", name, s);
	if (r->field == 3 && *v < 0)
		return bad_line(r, "negative duration '%.40s'", s);
	return 0;
}

static int header_field(struct reader *r, const char *s)
{
	char **names;

	if (r->field >= TRACE_MAX_COLUMNS)
		return bad_line(r, "more than %d columns", TRACE_MAX_COLUMNS);
	/* Doubled: an Azure 2019 header has 1444 names. */
	if (r->field == r->names_cap) {
		size_t cap = r->names_cap ? 2 * r->names_cap : 16;

		names = realloc(r->names, cap * sizeof(*names));
		if (!names)
			return r->err = err__set(ENOMEM,
						 "trace %s: out of memory",
						 r->path);
		r->names = names;
		r->names_cap = cap;
	}
	names = r->names;
	names[r->field] = strdup(s);
	if (!names[r->field])
		return r->err = err__set(ENOMEM, "trace %s: out of memory",
					 r->path);
	r->nnames++;
	return 0;
}

static void data_field(struct reader *r, const char *s, size_t len)
{
	if (r->field >= r->ncols)
		return; /* too many columns: reported at the row's end */
	switch (r->format) {
	case ARRIVALS_AZURE2019:
		if (r->field >= 4)
			azure2019_count(r, s, len);
		break;
	case ARRIVALS_AZURE2021:
		if (r->field >= 2)
			azure2021_value(r, s, len);
		break;
	default:
		if (r->field == r->tcol)
			csv_time(r, s, len, &r->v[0]);
		break;
	}
}

/* libcsv's field callback (the text is NUL-terminated: CSV_APPEND_NULL). */
static void on_field(void *data, size_t len, void *ctx)
{
	struct reader *r = ctx;
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
	/* Quoted fields may span lines; count them for later messages. */
	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n' ||
		    (s[i] == '\r' && (i + 1 == len || s[i + 1] != '\n')))
			r->line++;
}

static bool names_match(char **names, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(names[i], want[i]))
			return false;
	return true;
}

static bool minutes_numbered(struct reader *r)
{
	char want[24];

	for (size_t i = 4; i < r->field; i++) {
		snprintf(want, sizeof(want), "%zu", i - 3);
		if (strcmp(r->names[i], want))
			return false;
	}
	return r->field > 4;
}

/* The header as text for messages, cut short. */
static void header_text(struct reader *r, char *buf, size_t size)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->field && pos + 1 < size; i++)
		pos += (size_t)snprintf(buf + pos, size - pos, "%s%s",
					i ? "," : "", r->names[i]);
	if (pos >= size - 1)
		strcpy(buf + size - 4, "...");
}

static int find_time_column(struct reader *r)
{
	char head[96];
	size_t i;

	for (i = 0; r->column && i < r->field; i++)
		if (!strcasecmp(r->names[i], r->column))
			goto found;
	for (i = 0; !r->column && i < r->field; i++)
		if (!strcasecmp(r->names[i], "timestamp"))
			goto found;
	for (i = 0; !r->column && i < r->field; i++)
		if (strcasestr(r->names[i], "time"))
			goto found;
	header_text(r, head, sizeof(head));
	if (r->column)
		return bad_line(r, "no column named '%s' in the header '%s'",
				r->column, head);
	return bad_line(r,
			"no timestamp column in the header '%s'; expected "
			"a CSV with a column named 'timestamp' (or containing "
			"'time', or chosen with column=NAME), an Azure 2019 "
			"trace (HashOwner,HashApp,HashFunction,Trigger,1,2,...)"
			" or an Azure 2021 trace (app,func,end_timestamp,"
			"duration)",
			head);
found:
	r->tcol = i;
	snprintf(r->tname, sizeof(r->tname), "%s", r->names[i]);
	return 0;
}

static int detect_format(struct reader *r)
{
	bool is2021 = r->field == 4 && names_match(r->names, azure2021_head, 4);
	bool is2019 = r->field > 4 && names_match(r->names, azure2019_head, 4);

	if (r->format == ARRIVALS_AUTO)
		r->format = is2021   ? ARRIVALS_AZURE2021
			    : is2019 ? ARRIVALS_AZURE2019
				     : ARRIVALS_CSV;
	switch (r->format) {
	case ARRIVALS_AZURE2019:
		if (!is2019 || !minutes_numbered(r))
			return bad_line(r, "not an Azure 2019 header "
					   "(HashOwner,HashApp,HashFunction,"
					   "Trigger,1,2,...,1440)");
		r->minutes = calloc(r->field - 4, sizeof(*r->minutes));
		if (!r->minutes)
			return r->err = err__set(ENOMEM,
						 "trace %s: out of "
						 "memory",
						 r->path);
		return 0;
	case ARRIVALS_AZURE2021:
		if (!is2021)
			return bad_line(r, "not an Azure 2021 header "
					   "(app,func,end_timestamp,duration)");
		return 0;
	default:
		return find_time_column(r);
	}
}

static void free_names(struct reader *r)
{
	for (size_t i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	r->names = NULL;
	r->nnames = r->names_cap = 0;
}

static void end_row(struct reader *r)
{
	double t = r->format == ARRIVALS_AZURE2021 ? r->v[0] - r->v[1]
						   : r->v[0];
	int err;

	if (r->ncols == 0) {
		detect_format(r);
		free_names(r);
		r->ncols = r->field;
		return;
	}
	if (r->field != r->ncols) {
		bad_line(r, "%zu columns, the header has %zu", r->field,
			 r->ncols);
		return;
	}
	if (r->format == ARRIVALS_AZURE2019)
		return;
	/* Each number is finite, their difference may not be. */
	if (!isfinite(t)) {
		bad_line(r, "end_timestamp - duration is out of range");
		return;
	}
	err = series_push(&r->s, t);
	if (err == -E2BIG)
		r->err = too_many(r->path, "a shorter trace");
	else if (err < 0)
		r->err = err__set(ENOMEM, "trace %s: out of memory", r->path);
}

/* libcsv's row callback: c is the CR or LF that ended the row, or -1 at
 * the end of the file. With CSV_REPALL_NL every line break outside quotes
 * arrives here, so blank lines and the LF of a CRLF come as empty rows. */
static void on_row(int c, void *ctx)
{
	struct reader *r = ctx;
	bool crlf = c == '\n' && r->last_cr && r->field == 0;

	if (r->err)
		return;
	if (r->field > 0)
		end_row(r);
	if (c != -1 && !crlf)
		r->line++;
	r->last_cr = c == '\r';
	r->field = 0;
}

/* Caps the one field libcsv buffers, so a file without separators cannot
 * take all memory. */
static void *field_realloc(void *p, size_t size)
{
	return size > TRACE_MAX_FIELD ? NULL : realloc(p, size);
}

static const char *file_kind(mode_t mode)
{
	return S_ISFIFO(mode)	? "a FIFO"
	       : S_ISDIR(mode)	? "a directory"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
				: "not a regular file";
}

static int parse_failed(struct reader *r, struct csv_parser *p)
{
	if (r->err)
		return r->err;
	if (csv_error(p) == CSV_EPARSE)
		return bad_line(
			r, "malformed quotes (a quote inside an "
			   "unquoted field, or text after a closing quote)");
	return bad_line(r, "a field longer than %u bytes, or out of memory",
			TRACE_MAX_FIELD);
}

static int feed(struct reader *r, int fd, struct csv_parser *p)
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
			return parse_failed(r, p);
		if (r->err)
			return r->err;
	}
	if (csv_fini(p, on_field, on_row, r) != 0)
		return r->err ? r->err
			      : bad_line(r, "a quoted field is not "
					    "closed");
	return r->err;
}

/* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused. */
static int read_trace(struct reader *r)
{
	struct csv_parser p;
	struct stat st;
	int fd, err;

	fd = open(r->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return err__sys(errno, "trace %s", r->path);
	if (fstat(fd, &st) < 0) {
		err = err__sys(errno, "trace %s: fstat", r->path);
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = err__set(EINVAL, "trace %s is %s, not a regular file",
			       r->path, file_kind(st.st_mode));
		goto out_close;
	}
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL |
				 CSV_APPEND_NULL)) {
		err = err__set(ENOMEM, "trace %s: out of memory", r->path);
		goto out_close;
	}
	csv_set_realloc_func(&p, field_realloc);
	err = feed(r, fd, &p);
	csv_free(&p);
out_close:
	close(fd);
	return err;
}

static int too_long(struct reader *r, double span, double scale)
{
	return err__set(EINVAL,
			"trace %s spans %g s (time x%g), more than the %g s "
			"a time line may last; keep a shorter window",
			r->path, span, scale, ARRIVALS_SPAN_MAX);
}

/* csv, azure2021: relative to the earliest, scaled, cut to the window.
 * A time past the window is dropped, even an infinite one. */
static int trace_window(struct reader *r, double duration, double scale)
{
	double min = INFINITY, max = -INFINITY;
	size_t kept = 0;

	for (size_t i = 0; i < r->s.n; i++) {
		min = fmin(min, r->s.t[i]);
		max = fmax(max, r->s.t[i]);
	}
	/* Finite times may differ by more than a double holds. */
	if (duration == 0 && r->s.n && !((max - min) * scale <=
					 ARRIVALS_SPAN_MAX))
		return too_long(r, (max - min) * scale, scale);
	for (size_t i = 0; i < r->s.n; i++) {
		double t = (r->s.t[i] - min) * scale;

		if (duration == 0 || t < duration)
			r->s.t[kept++] = t;
	}
	r->total = r->s.n;
	r->s.n = kept;
	return 0;
}

/* The counts of the first n minutes; false past 2^64. */
static bool minutes_sum(const uint64_t *minutes, size_t n, uint64_t *sum)
{
	*sum = 0;
	for (size_t m = 0; m < n; m++)
		if (__builtin_add_overflow(*sum, minutes[m], sum))
			return false;
	return true;
}

/* azure2019: each minute's count spread uniformly over that minute. The
 * minutes come in order, so sorting each alone sorts the whole. */
static int spread_minutes(struct reader *r, double duration, double scale,
			  uint64_t seed)
{
	size_t nmin = r->ncols - 4;
	uint64_t want;
	struct stats_rng rng;

	/* Only the minutes starting inside the window count and are held. */
	while (duration > 0 && nmin > 0 &&
	       60.0 * (double)(nmin - 1) * scale >= duration)
		nmin--;
	if (duration == 0 && 60.0 * (double)nmin * scale > ARRIVALS_SPAN_MAX)
		return too_long(r, 60.0 * (double)nmin * scale, scale);
	/* The array is sized by the sum: it must not wrap. */
	if (!minutes_sum(r->minutes, nmin, &want) || want > ARRIVALS_MAX)
		return too_many(r->path, "a shorter duration");
	r->s.t = malloc((want ? want : 1) * sizeof(*r->s.t));
	if (!r->s.t)
		return err__set(ENOMEM, "trace %s: out of memory", r->path);
	stats__rng_seed(&rng, seed);
	for (size_t m = 0; m < nmin; m++) {
		size_t first = r->s.n;

		for (uint64_t k = 0; k < r->minutes[m]; k++) {
			double u = stats__rng_uniform(&rng);
			double t = 60.0 * ((double)m + u) * scale;

			if (duration == 0 || t < duration)
				r->s.t[r->s.n++] = t;
		}
		qsort(r->s.t + first, r->s.n - first, sizeof(*r->s.t),
		      cmp_double);
	}
	return 0;
}

static void trace_desc(struct reader *r, double duration, double scale,
		       uint64_t seed, struct arrivals *out)
{
	size_t size = sizeof(out->desc), pos;

	pos = (size_t)snprintf(out->desc, size,
			       "trace %.120s (%s), %zu of "
			       "%" PRIu64 " arrivals",
			       r->path, arrivals__format_name(r->format),
			       r->s.n, r->total);
	if (duration > 0 && pos < size)
		pos += (size_t)snprintf(out->desc + pos, size - pos,
					", first %g s", duration);
	if (scale != 1 && pos < size)
		pos += (size_t)snprintf(out->desc + pos, size - pos,
					", time x%g", scale);
	if (r->format == ARRIVALS_AZURE2019 && pos < size)
		snprintf(out->desc + pos, size - pos, ", seed %" PRIu64, seed);
}

static int finish_trace(struct reader *r, double duration, double scale,
			uint64_t seed)
{
	int err = 0;

	if (r->ncols == 0)
		return err__set(EINVAL, "trace %s is empty (no header line)",
				r->path);
	if (r->format == ARRIVALS_AZURE2019)
		err = spread_minutes(r, duration, scale, seed);
	else
		err = trace_window(r, duration, scale);
	if (err < 0)
		return err;
	if (r->total == 0)
		return err__set(
			EINVAL, "trace %s has no arrivals (%s)", r->path,
			r->format == ARRIVALS_AZURE2019
				? "every count is 0 or there are no rows"
				: "only a header line");
	if (r->s.n == 0)
		return err__set(EINVAL,
				"trace %s has no arrivals in the first "
				"%g s (time x%g)",
				r->path, duration, scale);
	if (r->format != ARRIVALS_AZURE2019)
		qsort(r->s.t, r->s.n, sizeof(*r->s.t), cmp_double);
	return 0;
}

int arrivals__make_trace(const struct arrivals_spec *spec, double duration,
			 double scale, uint64_t seed, struct arrivals *out)
{
	struct reader r = {
		.path = spec->path,
		.format = spec->format,
		.column = spec->column[0] ? spec->column : NULL,
		.line = 1,
	};
	int err;

	if (!(scale >= ARRIVALS_SCALE_MIN && scale <= ARRIVALS_SCALE_MAX))
		return err__set(EINVAL,
				"trace %s: time scale %g is not a number "
				"from %g to %g",
				spec->path, scale, ARRIVALS_SCALE_MIN,
				ARRIVALS_SCALE_MAX);
	err = read_trace(&r);
	if (err == 0)
		err = finish_trace(&r, duration, scale, seed);
	free_names(&r);
	free(r.minutes);
	if (err < 0) {
		free(r.s.t);
		return err;
	}
	out->t = r.s.t;
	out->n = r.s.n;
	out->span_s = duration > 0 ? duration
		      : r.format == ARRIVALS_AZURE2019
			      ? 60.0 * (double)(r.ncols - 4) * scale
			      : r.s.t[r.s.n - 1];
	trace_desc(&r, duration, scale, seed, out);
	return 0;
}
