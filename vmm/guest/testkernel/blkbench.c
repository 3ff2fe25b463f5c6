/* tk.blkbench=M: the disk's throughput as the guest sees it, for the
 * benchmark of the drive modes, and a request's round trip, for the
 * notification paths; TSC cycles, which the host turns into time. */
#include "tk.h"

#define CHUNK 65536u
#define START 2048u /* sector: past what the checks write */
#define ROUND_TRIPS 1000u

static uint8_t big[CHUNK] __attribute__((aligned(4096)));

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static void report(const char *what, uint64_t cycles)
{
	puts_com1(what);
	put_dec(cycles);
	puts_com1(" cycles\n");
}

void blk_bench(uint64_t mib, uint64_t sectors)
{
	uint64_t n = mib * (1024 * 1024 / CHUNK), t0, bad = 0;

	if (START + n * (CHUNK / 512) > sectors) {
		puts_com1("virtio-blk: bench BAD: the disk is too small\n");
		return;
	}
	puts_com1("virtio-blk: bench ");
	put_dec(mib);
	puts_com1(" MiB\n");
	t0 = rdtsc();
	for (uint64_t i = 0; i < n; i++) {
		for (unsigned int k = 0; k < CHUNK; k += 512)
			big[k] = (uint8_t)(i + k / 512 + 1);
		bad += blk_request(1, START + i * (CHUNK / 512), big, CHUNK,
				   1) != 0;
	}
	report("virtio-blk: bench write ", rdtsc() - t0);
	t0 = rdtsc();
	bad += blk_request(4, 0, 0, 0, 0) != 0;
	report("virtio-blk: bench flush ", rdtsc() - t0);
	t0 = rdtsc();
	for (uint64_t i = 0; i < n; i++) {
		bad += blk_request(0, START + i * (CHUNK / 512), big, CHUNK,
				   0) != 0;
		bad += big[CHUNK - 512] != (uint8_t)(i + CHUNK / 512);
	}
	report("virtio-blk: bench read ", rdtsc() - t0);
	/* requests without data (GET_ID into 20 bytes): what a notification
	 * and its completion cost, per request */
	t0 = rdtsc();
	for (unsigned int i = 0; i < ROUND_TRIPS; i++)
		bad += blk_request(8, 0, big, 20, 0) != 0;
	report("virtio-blk: bench round trip ", (rdtsc() - t0) / ROUND_TRIPS);
	puts_com1(bad ? "virtio-blk: bench BAD\n" : "virtio-blk: bench done\n");
}
