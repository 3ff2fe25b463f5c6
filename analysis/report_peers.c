/* The peers driver in the report: each peer's wall-time and peak-RSS
 * medians (and, for the Linux guest on its root disk, read throughput) as
 * ratios to coldstart's, in the Summary and its section. */
#include "report_driver.h"
#include "report_int.h"

#include <stdio.h>

/* ", 0.80x the read-throughput median" when the guest read its disk. */
static void read_ratio(FILE *md, const json_t *x)
{
	if (get(x, "read_mib_s_median"))
		fprintf(md, ", %.2fx the read-throughput median",
			json_number_value(get(x, "read_mib_s_median")));
}

static void sum_peers(FILE *md, const struct input *in)
{
	const struct result_series *ours = result__find(&in->doc, "coldstart");
	const json_t *x;
	const char *peer;
	char t[48], name[REPORT_NAME_LEN];

	if (!ours) /* the Linux guest on its root disk */
		ours = result__find(&in->doc, "rootfs.coldstart");
	report__summary_name(name, sizeof(name), in);
	/* every peer left out: coldstart's own time is all there is */
	if (!json_object_size(get(in->root, "ratios")) && ours) {
		report__time_text(t, sizeof(t), median_ns(ours));
		fprintf(md, "- %s: coldstart %s median, no peer measured (see "
			"Left out)\n", name, t);
		return;
	}
	json_object_foreach((json_t *)get(in->root, "ratios"), peer, x) {
		fprintf(md, "- %s: %s / coldstart %.2fx the wall-time median, "
			"%.2fx the peak-RSS median", name, peer,
			json_number_value(get(x, "wall_median")),
			json_number_value(get(x, "peak_rss_median")));
		read_ratio(md, x);
		fputc('\n', md);
	}
}

/* QEMU/coldstart ratios of the medians (peers.json "ratios"). */
static void md_peers(struct report *r, const struct input *in)
{
	const json_t *x;
	const char *peer;

	json_object_foreach((json_t *)get(in->root, "ratios"), peer, x) {
		fprintf(r->md, "\n- %s / coldstart: %.2fx the wall-time "
			"median, %.2fx the peak-RSS median", peer,
			json_number_value(get(x, "wall_median")),
			json_number_value(get(x, "peak_rss_median")));
		read_ratio(r->md, x);
		fputc('\n', r->md);
	}
}

const struct report_driver report_driver_peers = {
	.name = "peers",
	.summary = sum_peers,
	.md = md_peers,
};
