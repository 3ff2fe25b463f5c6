/* The guest init's memory-touch workload, in the probe guest's orders. */
#include "work.h"

#include "../probe_work.h"

uint64_t init_work__touch(const struct init_touch *t, volatile uint8_t *mem)
{
	uint64_t n = t->bytes / PROBE_PAGE_SIZE, sum = 0;
	struct probe_order order = probe__order(t->pattern, n,
						INIT_TOUCH_SEED, 1);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = probe__word_offset(probe__page_at(&order, i));
		uint64_t value = 0; /* fresh anonymous memory reads as zero */

		if (t->op == PROBE_OP_WRITE)
			value = probe__write_value(off, INIT_TOUCH_SEED);
		if (mem && t->op == PROBE_OP_WRITE)
			*(volatile uint64_t *)(mem + off) = value;
		/* Read back what the page holds, so a lost write shows. */
		if (mem)
			value = *(volatile uint64_t *)(mem + off);
		/* The offset too, so reads of zeros still sum the order. */
		sum = probe__fold(sum, value ^ off);
	}
	return sum;
}
