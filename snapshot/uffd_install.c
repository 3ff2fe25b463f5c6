/* Installing pages through userfaultfd, around pages already present. */
#include "mem_uffd.h"

#include <errno.h>
#include <linux/userfaultfd.h>
#include <stdint.h>
#include <sys/ioctl.h>

/* UFFDIO_COPY of [dst, dst + len) from src (UFFDIO_ZEROPAGE when src is
 * 0), in pages of `page` bytes, around pages already present: the
 * prefetcher and the fault handler install concurrently, and an install
 * that meets a present page stops there (EEXIST on its first page, else
 * EAGAIN with the bytes it did). Those pages are skipped and the rest
 * installed; 0, or -1 with errno set. */
int mem_uffd__install(int uffd, uint64_t dst, uint64_t src, uint64_t len,
		      uint64_t page)
{
	unsigned int retries = 0;

	while (len) {
		struct uffdio_copy c = { .dst = dst, .src = src, .len = len };
		struct uffdio_zeropage z = { .range = { dst, len } };
		int64_t did;
		uint64_t done;

		if (src ? ioctl(uffd, UFFDIO_COPY, &c)
			: ioctl(uffd, UFFDIO_ZEROPAGE, &z))
			did = src ? c.copy : z.zeropage;
		else
			return 0;
		if (errno == EAGAIN && did > 0)
			done = (uint64_t)did;
		else if (errno == EEXIST)
			done = page;
		else if (errno == EAGAIN && ++retries < 1000)
			continue; /* the mappings were changing: again */
		else
			return -1;
		done = done > len ? len : done;
		dst += done;
		src = src ? src + done : 0;
		len -= done;
	}
	return 0;
}
