/* A polled virtio-mmio block driver, the smallest that does what Linux's
 * does with a disk: it finds the device from "virtio_mmio.device=" on the
 * command line, negotiates VERSION_1, sets up one queue, reads sector 0,
 * writes sector 1 (tk.sector=S: S) and reads it back (or sees the write
 * refused on a read-only disk), asks for the disk's ID and reads past its
 * end; with tk.scan=K it then counts the sectors 1 to K, its own aside,
 * that hold anything but zeros (what other VMs on the same image must
 * not have left); with tk.blkbench=M it times M MiB written and read
 * (blkbench.c); with tk.hostile it gives the disk what a hostile
 * driver would (a queue size not a power of two, a descriptor loop, an
 * address outside memory, a huge length), each answered by a reset
 * request, and writes sector 3 after them. One line per step on COM1, with BAD where the device
 * did not do its part. */
#include "tk.h"

#define QSIZE 8
#define F_NEXT 1
#define F_WRITE 2

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
};

static struct desc desc[QSIZE] __attribute__((aligned(16)));
static struct {
	uint16_t flags, idx, ring[QSIZE], used_event;
} avail __attribute__((aligned(2)));
static volatile struct {
	uint16_t flags, idx;
	struct {
		uint32_t id, len;
	} ring[QSIZE];
	uint16_t avail_event;
} used __attribute__((aligned(4)));
static struct {
	uint32_t type, reserved;
	uint64_t sector;
} hdr;
static uint8_t data[512];
static volatile uint8_t status;
static volatile uint8_t *regs;

static void barrier(void)
{
	__asm__ volatile("mfence" : : : "memory");
}

static uint32_t rd(uint32_t off)
{
	return *(volatile uint32_t *)(regs + off);
}

static void wr(uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(regs + off) = v;
}

/* The address of the n-th "virtio_mmio.device=SIZE@ADDR:IRQ" on the
 * command line, or 0. */
static uint64_t find_device(const char *cmdline, unsigned int n)
{
	static const char key[] = "virtio_mmio.device=";

	for (; *cmdline; cmdline++) {
		const char *k = key, *c = cmdline;
		uint64_t addr = 0;

		while (*k && *c == *k)
			c++, k++;
		if (*k || n--)
			continue;
		while (*c && *c != '@')
			c++;
		if (c[0] != '@' || c[1] != '0' || c[2] != 'x')
			return 0;
		for (c += 3;; c++) {
			int d = *c >= '0' && *c <= '9' ? *c - '0' :
				*c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1;

			if (d < 0)
				return addr;
			addr = addr << 4 | (uint64_t)d;
		}
	}
	return 0;
}

uint8_t blk_request(uint32_t type, uint64_t sector, void *buf, uint32_t len,
		    int out)
{
	uint16_t want = (uint16_t)(used.idx + 1);
	unsigned int n = 0;

	hdr.type = type;
	hdr.sector = sector;
	status = 0xff;
	desc[n++] = (struct desc){ (uint64_t)(uintptr_t)&hdr, sizeof(hdr),
				   F_NEXT, 1 };
	if (len)
		desc[n++] = (struct desc){ (uint64_t)(uintptr_t)buf, len,
					   (uint16_t)((out ? 0 : F_WRITE) |
						      F_NEXT), 2 };
	desc[n - 1].next = (uint16_t)n;
	desc[n] = (struct desc){ (uint64_t)(uintptr_t)&status, 1, F_WRITE, 0 };
	avail.ring[avail.idx % QSIZE] = 0;
	barrier();
	avail.idx++;
	barrier();
	wr(0x050, 0); /* QueueNotify */
	for (unsigned long spin = 0; used.idx != want; spin++)
		if (spin > 400000000ul)
			return 0xff;
	barrier();
	return status;
}

/* blk_request on the 512-byte `data`. */
static uint8_t request(uint32_t type, uint64_t sector, uint32_t len, int out)
{
	return blk_request(type, sector, data, len, out);
}

static uint32_t qsize = QSIZE; /* what negotiate() sets up */

static int negotiate(void)
{
	uint32_t lo, hi;

	wr(0x070, 0);     /* reset */
	avail.idx = 0;    /* the rings start anew with the device */
	used.idx = 0;
	wr(0x070, 1 | 2); /* ACKNOWLEDGE, DRIVER */
	wr(0x014, 0);
	lo = rd(0x010);
	wr(0x014, 1);
	hi = rd(0x010);
	if (!(hi & 1))
		return -1; /* no VERSION_1 */
	wr(0x024, 0);
	wr(0x020, lo & (1u << 5)); /* RO, if offered: nothing else */
	wr(0x024, 1);
	wr(0x020, 1);
	wr(0x070, 1 | 2 | 8); /* FEATURES_OK */
	if (!(rd(0x070) & 8))
		return -1;
	wr(0x030, 0);
	if (rd(0x034) < QSIZE)
		return -1;
	wr(0x038, qsize);
	wr(0x080, (uint32_t)(uintptr_t)desc);
	wr(0x084, 0);
	wr(0x090, (uint32_t)(uintptr_t)&avail);
	wr(0x094, 0);
	wr(0x0a0, (uint32_t)(uintptr_t)&used);
	wr(0x0a4, 0);
	wr(0x044, 1);
	wr(0x070, 1 | 2 | 8 | 4); /* DRIVER_OK */
	return rd(0x070) & 4 ? (int)(lo >> 5 & 1) : -1;
}

static void put_bytes(const uint8_t *p, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		putc_com1("0123456789abcdef"[p[i] >> 4]);
		putc_com1("0123456789abcdef"[p[i] & 0xf]);
	}
}

uint64_t arg_num(const char *cmdline, const char *key, uint64_t dflt)
{
	for (; *cmdline; cmdline++) {
		const char *k = key, *c = cmdline;
		uint64_t v = 0;

		while (*k && *c == *k)
			c++, k++;
		if (*k || *c < '0' || *c > '9')
			continue;
		while (*c >= '0' && *c <= '9')
			v = v * 10 + (uint64_t)(*c++ - '0');
		return v;
	}
	return dflt;
}

static void write_and_read_back(int ro, uint64_t sector)
{
	int same = 1;

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 3 + sector);
	if (request(1, sector, sizeof(data), 1) != 0) {
		puts_com1(ro ? "virtio-blk: write refused (read-only)\n" :
			       "virtio-blk: write BAD\n");
		return;
	}
	if (ro) {
		puts_com1("virtio-blk: write to a read-only disk BAD\n");
		return;
	}
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = 0;
	if (request(0, sector, sizeof(data), 0) != 0)
		same = 0;
	for (unsigned int i = 0; i < sizeof(data); i++)
		same &= data[i] == (uint8_t)(i * 3 + sector);
	puts_com1(same ? "virtio-blk: write read back ok\n" :
			 "virtio-blk: write read back BAD\n");
}

/* Sectors 1 to k but `own` that hold a nonzero byte. */
static void scan(uint64_t k, uint64_t own)
{
	uint64_t others = 0;

	for (uint64_t s = 1; s <= k; s++) {
		int dirty = 0;

		if (s == own)
			continue;
		if (request(0, s, sizeof(data), 0) != 0) {
			puts_com1("virtio-blk: scan BAD\n");
			return;
		}
		for (unsigned int i = 0; i < sizeof(data); i++)
			dirty |= data[i];
		others += dirty != 0;
	}
	puts_com1("virtio-blk: sectors 1-");
	put_dec(k);
	puts_com1(": ");
	put_dec(others);
	puts_com1(" written by others\n");
}

static void check_blk(const char *cmdline)
{
	uint64_t sectors, sector = arg_num(cmdline, "tk.sector=", 1);
	int ro;

	ro = negotiate();
	if (ro < 0) {
		puts_com1("virtio-blk: negotiation BAD\n");
		return;
	}
	sectors = rd(0x100) | (uint64_t)rd(0x104) << 32;
	puts_com1("virtio-blk: capacity ");
	put_dec(sectors);
	puts_com1(" sectors\n");
	puts_com1("virtio-blk: sector 0: ");
	if (request(0, 0, sizeof(data), 0) == 0)
		put_bytes(data, 16);
	else
		puts_com1("BAD");
	putc_com1('\n');
	write_and_read_back(ro, sector);
	if (arg_num(cmdline, "tk.scan=", 0))
		scan(arg_num(cmdline, "tk.scan=", 0), sector);
	if (arg_num(cmdline, "tk.blkbench=", 0))
		blk_bench(arg_num(cmdline, "tk.blkbench=", 0), sectors);
	for (unsigned int i = 0; i < 32; i++)
		data[i] = 0; /* a 20-byte ID has no terminator */
	puts_com1("virtio-blk: id ");
	if (request(8, 0, 20, 0) == 0)
		puts_com1((const char *)data);
	else
		puts_com1("BAD");
	putc_com1('\n');
	puts_com1(request(0, sectors, sizeof(data), 0) == 1 ?
			  "virtio-blk: past the end: error status\n" :
			  "virtio-blk: past the end BAD\n");
	puts_com1("virtio-blk: interrupt status ");
	put_dec(rd(0x060));
	putc_com1('\n');
	wr(0x064, rd(0x060)); /* InterruptACK */
}

/* One chain of `n` descriptors as a hostile driver makes it; 1 when the
 * device answered by asking for a reset (DEVICE_NEEDS_RESET), not by
 * using the chain. */
static int needs_reset_after(const struct desc *d, unsigned int n)
{
	if (negotiate() < 0)
		return 0;
	for (unsigned int i = 0; i < n; i++)
		desc[i] = d[i];
	avail.ring[0] = 0;
	barrier();
	avail.idx = 1;
	barrier();
	wr(0x050, 0);
	for (unsigned long spin = 0; spin < 400000000ul; spin++) {
		if (rd(0x070) & 64)
			return used.idx == 0;
		if (used.idx)
			return 0;
	}
	return 0;
}

/* tk.hostile: what a hostile guest may give the disk, each answered by
 * a reset request, and the disk working after them. */
static void hostile(void)
{
	const uint64_t h = (uint64_t)(uintptr_t)&hdr;
	const struct desc loop[2] = { { h, 16, F_NEXT, 1 }, { h, 16, F_NEXT, 0 } };
	const struct desc outside[2] = { { h, 16, F_NEXT, 1 },
					 { 0x7ff0000000ull, 512, F_WRITE, 0 } };
	const struct desc huge[2] = { { h, 16, F_NEXT, 1 },
				      { (uint64_t)(uintptr_t)data, 0xffffffffu,
					F_WRITE, 0 } };

	qsize = 6;
	puts_com1(negotiate() < 0 && (rd(0x070) & 64) ?
		  "virtio-blk: hostile queue size 6: refused\n" :
		  "virtio-blk: hostile queue size 6 BAD\n");
	qsize = QSIZE;
	puts_com1(needs_reset_after(loop, 2) ?
		  "virtio-blk: hostile descriptor loop: reset asked\n" :
		  "virtio-blk: hostile descriptor loop BAD\n");
	puts_com1(needs_reset_after(outside, 2) ?
		  "virtio-blk: hostile address outside memory: reset asked\n" :
		  "virtio-blk: hostile address outside memory BAD\n");
	puts_com1(needs_reset_after(huge, 2) ?
		  "virtio-blk: hostile huge length: reset asked\n" :
		  "virtio-blk: hostile huge length BAD\n");
	if (negotiate() < 0) {
		puts_com1("virtio-blk: hostile: no reset BAD\n");
		return;
	}
	write_and_read_back(0, 3);
}

void check_virtio(const char *cmdline)
{
	uint64_t base;

	for (unsigned int n = 0; (base = find_device(cmdline, n)); n++) {
		regs = (volatile uint8_t *)(uintptr_t)base;
		if (rd(0) != 0x74726976 || rd(4) != 2) {
			puts_com1("virtio: no device BAD\n");
			continue;
		}
		if (rd(8) == 2)
			check_blk(cmdline);
		if (rd(8) == 2 && has(cmdline, "tk.hostile"))
			hostile();
		else if (rd(8) == 19)
			check_vsock(regs, cmdline);
	}
}
