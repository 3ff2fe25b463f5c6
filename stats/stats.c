/* Percentiles, dispersion, robust outliers, the bootstrap, the
 * Mann-Whitney U test and the permutation test. */
#include "stats.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double *dup_samples(const double *samples, size_t n)
{
	double *s = malloc(n * sizeof(*s));

	if (s)
		memcpy(s, samples, n * sizeof(*s));
	return s;
}

double stats__percentile_sorted(const double *sorted, size_t n, double p)
{
	double rank, frac;
	size_t lo;

	if (n == 1)
		return sorted[0];
	rank = p / 100.0 * (double)(n - 1);
	lo = (size_t)rank;
	if (lo >= n - 1)
		return sorted[n - 1];
	frac = rank - (double)lo;
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double stats__cv(double mean, double stddev)
{
	return mean != 0 ? stddev / fabs(mean) : 0;
}

/* Reorders a[0..n) so that a[k] is the k-th smallest, with the k smaller
 * ones before it (Wirth's selection, pivot a[k]). */
static void select_kth(double *a, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

	while (lo < hi) {
		double pivot = a[kk], t;
		ptrdiff_t i = lo, j = hi;

		do {
			while (a[i] < pivot)
				i++;
			while (pivot < a[j])
				j--;
			if (i <= j) {
				t = a[i], a[i] = a[j], a[j] = t;
				i++;
				j--;
			}
		} while (i <= j);
		if (j < kk)
			lo = i;
		if (kk < i)
			hi = j;
	}
}

/* Median of a[0..n), n > 0, reordering a. */
static double median_inplace(double *a, size_t n)
{
	size_t k = n / 2;
	double below;

	select_kth(a, n, k);
	if (n % 2)
		return a[k];
	below = a[0];
	for (size_t i = 1; i < k; i++)
		if (a[i] > below)
			below = a[i];
	return below + (a[k] - below) / 2;
}

int stats__median(const double *samples, size_t n, double *out)
{
	double *s;

	if (n == 0)
		return -EINVAL;
	s = dup_samples(samples, n);
	if (!s)
		return -ENOMEM;
	*out = median_inplace(s, n);
	free(s);
	return 0;
}

/* MAD of s[0..n) around `median`, overwriting s. */
static double mad_inplace(double *s, size_t n, double median)
{
	for (size_t i = 0; i < n; i++)
		s[i] = fabs(s[i] - median);
	return median_inplace(s, n);
}

int stats__summarize(const double *samples, size_t n, struct summary *out)
{
	double *s, sum = 0, sq = 0;

	if (n == 0)
		return -EINVAL;
	s = dup_samples(samples, n);
	if (!s)
		return -ENOMEM;
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->n = n;
	out->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - out->mean) * (s[i] - out->mean);
	out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	out->cv = stats__cv(out->mean, out->stddev);
	out->min = s[0];
	out->max = s[n - 1];
	out->p50 = stats__percentile_sorted(s, n, 50);
	out->p90 = stats__percentile_sorted(s, n, 90);
	out->p99 = stats__percentile_sorted(s, n, 99);
	out->p999 = stats__percentile_sorted(s, n, 99.9);
	out->mad = mad_inplace(s, n, out->p50);
	free(s);
	return 0;
}

int stats__outliers(const double *samples, size_t n, double k,
		    struct outliers *out)
{
	double *s;

	if (n == 0 || !(k > 0))
		return -EINVAL;
	s = dup_samples(samples, n);
	if (!s)
		return -ENOMEM;
	out->median = median_inplace(s, n);
	out->mad = mad_inplace(s, n, out->median);
	free(s);
	out->limit = k * STATS_MAD_SCALE * out->mad;
	out->count = 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(samples[i] - out->median) > out->limit)
			out->count++;
	out->first_slow = samples[0] > out->median + out->limit;
	return 0;
}

/* ---- PRNG ---- */

uint64_t stats__splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void stats__rng_seed(struct stats_rng *rng, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng->s[i] = stats__splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t stats__rng_next(struct stats_rng *rng)
{
	uint64_t *s = rng->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double stats__rng_uniform(struct stats_rng *rng)
{
	return (double)(stats__rng_next(rng) >> 11) * 0x1.0p-53;
}

uint64_t stats__rng_below(struct stats_rng *rng, uint64_t n)
{
	/* Rejects the top partial copy of [0, n) in 2^64. */
	uint64_t limit = -n % n, x;

	do
		x = stats__rng_next(rng);
	while (x < limit);
	return x % n;
}

double stats__rng_normal(struct stats_rng *rng)
{
	double u1 = 1.0 - stats__rng_uniform(rng); /* (0, 1]: log finite */
	double u2 = stats__rng_uniform(rng);

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* ---- bootstrap ---- */

/* stats__percentile_sorted of a[0..n) sorted, by selection (a
 * reordered): the same value in O(n). */
static double percentile_select(double *a, size_t n, double p)
{
	double rank, frac, next;
	size_t lo;

	if (n == 1)
		return a[0];
	rank = p / 100.0 * (double)(n - 1);
	lo = (size_t)rank;
	if (lo >= n - 1) {
		select_kth(a, n, n - 1);
		return a[n - 1];
	}
	frac = rank - (double)lo;
	select_kth(a, n, lo);
	next = a[lo + 1];
	for (size_t i = lo + 2; i < n; i++)
		next = a[i] < next ? a[i] : next;
	return a[lo] + frac * (next - a[lo]);
}

/* ranks[i]: the position of samples[i] in sorted (ascending), for
 * boot_median's counting. */
struct by_value {
	double v;
	size_t i;
};

static int cmp_by_value(const void *a, const void *b)
{
	return cmp_double(&((const struct by_value *)a)->v,
			  &((const struct by_value *)b)->v);
}

static int rank_samples(const double *samples, size_t n, double *sorted,
			uint32_t *ranks)
{
	struct by_value *bv = malloc(n * sizeof(*bv));

	if (!bv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		bv[i] = (struct by_value){ samples[i], i };
	qsort(bv, n, sizeof(*bv), cmp_by_value);
	for (size_t i = 0; i < n; i++) {
		sorted[i] = bv[i].v;
		ranks[bv[i].i] = (uint32_t)i;
	}
	free(bv);
	return 0;
}

/* The position in sorted order of the k-th smallest (from 0) of a
 * resample whose sorted positions were drawn count[] times. */
static size_t kth_drawn(const uint32_t *count, size_t k)
{
	size_t pos = 0, seen = count[0];

	while (seen <= k)
		seen += count[++pos];
	return pos;
}

/* The median of one resample, drawn from rng as the selection of a copy
 * did (the same draws and the same value), but by counting how often
 * each sorted position was drawn: no copy, no data-dependent swaps. */
static double boot_median(struct stats_rng *rng, const double *sorted,
			  const uint32_t *ranks, uint32_t *count, size_t n)
{
	uint64_t limit = -(uint64_t)n % n, x;
	size_t k = n / 2;
	double below, at;

	memset(count, 0, n * sizeof(*count));
	for (size_t i = 0; i < n; i++) {
		do /* stats__rng_below(rng, n), its limit found once */
			x = stats__rng_next(rng);
		while (x < limit);
		count[ranks[x % n]]++;
	}
	at = sorted[kth_drawn(count, k)];
	if (n % 2)
		return at;
	below = sorted[kth_drawn(count, k - 1)];
	return below + (at - below) / 2;
}

/* The distribution-free interval of the median from order statistics:
 * ranks n/2 -+ z sqrt(n)/2 (the normal approximation of the binomial),
 * which the bootstrap percentile interval approaches as n grows. */
static int order_stat_ci(const double *samples, size_t n, double level,
			 double *lo, double *hi)
{
	double z = stats__z_upper((1 - level) / 2);
	double half = z * sqrt((double)n) / 2;
	double l = floor((double)n / 2 - half), h = ceil((double)n / 2 + half);
	size_t li = l < 1 ? 0 : (size_t)l - 1;
	size_t hi_i = h > (double)n - 1 ? n - 1 : (size_t)h;
	double *s = dup_samples(samples, n);

	if (!s)
		return -ENOMEM;
	select_kth(s, n, li);
	*lo = s[li];
	select_kth(s, n, hi_i);
	*hi = s[hi_i];
	free(s);
	return 0;
}

double stats__z_upper(double p)
{
	double lo = -40, hi = 40;

	/* Bisection on the tail probability: 100 halvings of [-40, 40]
	 * are exact to double precision, and it needs no tables. */
	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(mid / M_SQRT2) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

int stats__bootstrap_median_ci(const double *samples, size_t n,
			       unsigned int resamples, double level,
			       uint64_t seed, double *lo, double *hi)
{
	double *medians = NULL, *sorted = NULL;
	uint32_t *ranks = NULL, *count = NULL;
	struct stats_rng rng;
	int ret = -ENOMEM;

	if (n == 0 || resamples == 0 || !(level > 0 && level < 1))
		return -EINVAL;
	if (n > STATS_BOOTSTRAP_MAX_N)
		return order_stat_ci(samples, n, level, lo, hi);
	medians = malloc(resamples * sizeof(*medians));
	sorted = malloc(n * sizeof(*sorted));
	ranks = malloc(n * sizeof(*ranks));
	count = malloc(n * sizeof(*count));
	if (!medians || !sorted || !ranks || !count ||
	    rank_samples(samples, n, sorted, ranks) < 0)
		goto out;
	stats__rng_seed(&rng, seed);
	for (unsigned int b = 0; b < resamples; b++)
		medians[b] = boot_median(&rng, sorted, ranks, count, n);
	*lo = percentile_select(medians, resamples, 50 * (1 - level));
	*hi = percentile_select(medians, resamples, 50 * (1 + level));
	ret = 0;
out:
	free(count);
	free(ranks);
	free(sorted);
	free(medians);
	return ret;
}

/* ---- Mann-Whitney U ---- */

/* A double's bits as an unsigned integer of the same order. */
static uint64_t order_key(double v)
{
	uint64_t b;

	memcpy(&b, &v, sizeof(b));
	return b >> 63 ? ~b : b | 1ull << 63;
}

static double from_key(uint64_t k)
{
	uint64_t b = k >> 63 ? k & ~(1ull << 63) : ~k;
	double v;

	memcpy(&v, &b, sizeof(v));
	return v;
}

#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)

/* An LSD radix sort of the values' order keys, O(n), where qsort's
 * calls of a comparison were most of the U test's time on millions of
 * samples. */
int stats__sort(double *a, size_t n)
{
	uint64_t *k = malloc(n * sizeof(*k)), *t = malloc(n * sizeof(*t));
	size_t *count = malloc(RADIX * sizeof(*count));

	if (!k || !t || !count) {
		free(k);
		free(t);
		free(count);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = order_key(a[i]);
	for (unsigned int shift = 0; shift < 64; shift += RADIX_BITS) {
		size_t sum = 0;
		uint64_t *swap;

		memset(count, 0, RADIX * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(k[i] >> shift) & (RADIX - 1)]++;
		if (count[(k[0] >> shift) & (RADIX - 1)] == n)
			continue; /* one digit for all: the order stands */
		for (size_t d = 0; d < RADIX; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			t[count[(k[i] >> shift) & (RADIX - 1)]++] = k[i];
		swap = k, k = t, t = swap;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = from_key(k[i]);
	free(k);
	free(t);
	free(count);
	return 0;
}

/* Sum of x's mid-ranks in the pooled sorted sample, and the tie term
 * sum(t^3 - t) over groups of t equal values, from x and y each sorted:
 * a merge. (The sums hold multiples of 1/2 below 2^52: exact in any
 * order.) */
static void rank_sum(const double *x, size_t nx, const double *y,
		     size_t ny, double *rx, double *ties)
{
	size_t i = 0, j = 0;

	*rx = 0;
	*ties = 0;
	while (i < nx || j < ny) {
		double v = j == ny || (i < nx && x[i] < y[j]) ? x[i] : y[j];
		size_t cx = 0, cy = 0, from = i + j;
		double t, mid;

		while (i + cx < nx && x[i + cx] == v)
			cx++;
		while (j + cy < ny && y[j + cy] == v)
			cy++;
		i += cx;
		j += cy;
		t = (double)(cx + cy);
		mid = (double)(from + 1 + i + j) / 2; /* ranks from+1..i+j */
		*rx += mid * (double)cx;
		*ties += t * t * t - t;
	}
}

/* Counts of arrangements of m x's and n y's by U (pairs x > y), c[0..mn]:
 * the coefficients of the Gaussian binomial [m+n choose m](q), built row
 * by row with the q-Pascal rule [N,k] = [N-1,k-1] + q^k [N-1,k] (only
 * additions, so exact while counts fit in 53 bits). */
static double *u_distribution(size_t m, size_t n)
{
	size_t k_max = m < n ? m : n, deg = m * n, stride = deg + 1;
	double *p = calloc((k_max + 1) * stride, sizeof(*p)), *c;

	if (!p)
		return NULL;
	p[0] = 1; /* [N,0] = 1 */
	for (size_t row = 1; row <= m + n; row++) {
		size_t top = row < k_max ? row : k_max;

		for (size_t k = top; k >= 1; k--) {
			double *cur = p + k * stride, *prev = cur - stride;

			for (size_t u = deg; u >= k; u--)
				cur[u] = prev[u] + cur[u - k];
			for (size_t u = 0; u < k; u++)
				cur[u] = prev[u];
		}
	}
	c = malloc(stride * sizeof(*c));
	if (c)
		memcpy(c, p + k_max * stride, stride * sizeof(*c));
	free(p);
	return c;
}

static int mwu_exact(size_t nx, size_t ny, struct mann_whitney *out)
{
	double *c = u_distribution(nx, ny), total = 0, tail = 0;
	size_t w = (size_t)out->u, deg = nx * ny;

	if (!c)
		return -ENOMEM;
	for (size_t u = 0; u <= deg; u++)
		total += c[u];
	if (out->u > (double)deg / 2)
		for (size_t u = w; u <= deg; u++)
			tail += c[u];
	else
		for (size_t u = 0; u <= w; u++)
			tail += c[u];
	free(c);
	out->p = fmin(1.0, 2 * tail / total);
	out->exact = true;
	return 0;
}

static void mwu_normal(size_t nx, size_t ny, double ties,
		       struct mann_whitney *out)
{
	double m = (double)nx, n = (double)ny, z = out->u - m * n / 2;
	double var = m * n / 12 * ((m + n + 1) - ties / ((m + n) * (m + n - 1)));

	out->exact = false;
	if (!(var > 0) || z == 0) {
		out->z = 0;
		out->p = 1;
		return;
	}
	z -= z > 0 ? 0.5 : -0.5;
	out->z = z / sqrt(var);
	out->p = fmin(1.0, erfc(fabs(out->z) / M_SQRT2));
}

int stats__mann_whitney(const double *x, size_t nx, const double *y,
			size_t ny, struct mann_whitney *out)
{
	double *xs, *ys, rx, ties;
	int ret = -ENOMEM;

	if (nx == 0 || ny == 0)
		return -EINVAL;
	xs = dup_samples(x, nx);
	ys = dup_samples(y, ny);
	if (!xs || !ys || stats__sort(xs, nx) < 0 || stats__sort(ys, ny) < 0)
		goto out;
	rank_sum(xs, nx, ys, ny, &rx, &ties);
	out->u = rx - (double)nx * (double)(nx + 1) / 2;
	out->z = 0;
	ret = 0;
	if (nx < STATS_MWU_EXACT_BELOW && ny < STATS_MWU_EXACT_BELOW &&
	    ties == 0)
		ret = mwu_exact(nx, ny, out);
	else
		mwu_normal(nx, ny, ties, out);
out:
	free(xs);
	free(ys);
	return ret;
}

/* ---- permutation test ---- */

struct perm {
	double *pool, *buf;
	size_t nx, n;
	enum stats_center center;
	double observed, eps;
	unsigned long hits;
};

static double center_of(double *a, size_t n, enum stats_center c)
{
	double sum = 0;

	if (c == STATS_MEDIAN)
		return median_inplace(a, n);
	for (size_t i = 0; i < n; i++)
		sum += a[i];
	return sum / (double)n;
}

/* center(rest) - center(first nx) of the values at a[0..n), via buf. */
static double split_diff(struct perm *pm, const double *a)
{
	double cx, cy;

	memcpy(pm->buf, a, pm->n * sizeof(*a));
	cx = center_of(pm->buf, pm->nx, pm->center);
	cy = center_of(pm->buf + pm->nx, pm->n - pm->nx, pm->center);
	return cy - cx;
}

static void count_split(struct perm *pm, const double *a)
{
	if (fabs(split_diff(pm, a)) >= fabs(pm->observed) - pm->eps)
		pm->hits++;
}

/* C(n, k), or 0 when it exceeds `cap`. */
static uint64_t binomial_capped(size_t n, size_t k, uint64_t cap)
{
	uint64_t c = 1;

	if (k > n - k)
		k = n - k;
	for (size_t i = 0; i < k; i++) {
		/* c * (n - i) / (i + 1) stays integral at every step. */
		unsigned __int128 w = (unsigned __int128)c * (n - i) / (i + 1);

		if (w > cap)
			return 0;
		c = (uint64_t)w;
	}
	return c;
}

/* Advances idx[0..k) to the next k-subset of [0, n) in lexicographic
 * order; false after the last. */
static bool next_subset(size_t *idx, size_t k, size_t n)
{
	size_t i = k;

	while (i > 0 && idx[i - 1] == n - k + i - 1)
		i--;
	if (i == 0)
		return false;
	idx[i - 1]++;
	for (size_t j = i; j < k; j++)
		idx[j] = idx[j - 1] + 1;
	return true;
}

/* Writes the split chosen by idx (x side first) into out. */
static void arrange(const struct perm *pm, const size_t *idx, double *out)
{
	size_t xi = 0, yi = pm->nx, next = 0;

	for (size_t i = 0; i < pm->n; i++) {
		if (next < pm->nx && idx[next] == i) {
			out[xi++] = pm->pool[i];
			next++;
		} else {
			out[yi++] = pm->pool[i];
		}
	}
}

static int perm_exact(struct perm *pm, uint64_t splits, double *p)
{
	size_t *idx = malloc(pm->nx * sizeof(*idx));
	double *a = malloc(pm->n * sizeof(*a));

	if (!idx || !a) {
		free(idx);
		free(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < pm->nx; i++)
		idx[i] = i;
	do {
		arrange(pm, idx, a);
		count_split(pm, a);
	} while (next_subset(idx, pm->nx, pm->n));
	*p = (double)pm->hits / (double)splits;
	free(idx);
	free(a);
	return 0;
}

static void perm_random(struct perm *pm, unsigned int resamples,
			uint64_t seed, double *p)
{
	struct stats_rng rng;

	stats__rng_seed(&rng, seed);
	for (unsigned int b = 0; b < resamples; b++) {
		/* A partial Fisher-Yates shuffle picks x's side. */
		for (size_t i = 0; i < pm->nx; i++) {
			size_t j = i + stats__rng_below(&rng, pm->n - i);
			double t = pm->pool[i];

			pm->pool[i] = pm->pool[j];
			pm->pool[j] = t;
		}
		count_split(pm, pm->pool);
	}
	*p = (double)(pm->hits + 1) / ((double)resamples + 1);
}

static double max_abs(const double *a, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(a[i]));
	return m;
}

int stats__permutation_test(const double *x, size_t nx, const double *y,
			    size_t ny, enum stats_center center,
			    unsigned int resamples, uint64_t seed,
			    struct permutation *out)
{
	struct perm pm = { .nx = nx, .n = nx + ny, .center = center };
	uint64_t splits;
	int ret = 0;

	if (nx == 0 || ny == 0 || resamples == 0)
		return -EINVAL;
	pm.pool = malloc(pm.n * sizeof(double));
	pm.buf = malloc(pm.n * sizeof(double));
	if (!pm.pool || !pm.buf) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(pm.pool, x, nx * sizeof(double));
	memcpy(pm.pool + nx, y, ny * sizeof(double));
	pm.eps = 1e-9 * max_abs(pm.pool, pm.n);
	pm.observed = split_diff(&pm, pm.pool);
	out->diff = pm.observed;
	splits = binomial_capped(pm.n, nx, resamples);
	out->exact = splits != 0;
	if (out->exact)
		ret = perm_exact(&pm, splits, &out->p);
	else
		perm_random(&pm, resamples, seed, &out->p);
out:
	free(pm.pool);
	free(pm.buf);
	return ret;
}
