/* The merge policy a session should use (merge_pick.h). */
#include "merge_pick.h"

#include <math.h>

const char merge_pick__rule[] =
	"among the policies whose resume drift (median of the last three "
	"turns over the first three) is at most 1.20x, the one writing the "
	"fewest bytes per turn (snapshots and merges); if none is, the "
	"flattest";

static bool meets(const struct merge_score *s, double target)
{
	return isfinite(s->drift) && s->drift <= target;
}

static double flatness(const struct merge_score *s)
{
	return isfinite(s->drift) ? fabs(s->drift - 1) : INFINITY;
}

/* NaN bytes count as the most. */
static bool fewer(double a, double b)
{
	return !isnan(a) && (isnan(b) || a < b);
}

static bool cheaper(const struct merge_score *a, const struct merge_score *b)
{
	if (fewer(a->bytes, b->bytes))
		return true;
	return !fewer(b->bytes, a->bytes) && flatness(a) < flatness(b);
}

static bool flatter(const struct merge_score *a, const struct merge_score *b)
{
	if (flatness(a) != flatness(b))
		return flatness(a) < flatness(b);
	return fewer(a->bytes, b->bytes);
}

long merge_pick__choose(const struct merge_score *s, size_t n, double target,
			bool *met)
{
	long best = -1;

	for (size_t i = 0; i < n; i++)
		if (meets(&s[i], target) &&
		    (best < 0 || cheaper(&s[i], &s[best])))
			best = (long)i;
	*met = best >= 0;
	if (best >= 0)
		return best;
	for (size_t i = 0; i < n; i++)
		if (best < 0 || flatter(&s[i], &s[best]))
			best = (long)i;
	return best;
}
