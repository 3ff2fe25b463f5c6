/* A polled virtio-vsock driver, the smallest that does both halves of
 * what a guest agent does: it connects to host port 1234, says hello,
 * prints the host's answer and closes; then it waits for the host to
 * connect to its port 5000, answers "echo: " and what the host sent,
 * and ends when the host closes. One line per step on COM1, BAD where
 * the device did not do its part. tk.vsock=idle stops after the
 * negotiation. */
#include "tk.h"

#define QSIZE 8
#define F_NEXT 1
#define F_WRITE 2
#define RXBUF 512
#define HOST_PORT 1234
#define GUEST_PORT 5000
#define MY_PORT 1024

enum { OP_REQUEST = 1, OP_RESPONSE, OP_RST, OP_SHUTDOWN, OP_RW };

struct hdr {
	uint64_t src_cid, dst_cid;
	uint32_t src_port, dst_port, len;
	uint16_t type, op;
	uint32_t flags, buf_alloc, fwd_cnt;
} __attribute__((packed));

struct vq {
	struct {
		uint64_t addr;
		uint32_t len;
		uint16_t flags, next;
	} desc[QSIZE] __attribute__((aligned(16)));
	struct {
		uint16_t flags, idx, ring[QSIZE], used_event;
	} avail __attribute__((aligned(2)));
	struct {
		uint16_t flags, idx;
		struct {
			uint32_t id, len;
		} ring[QSIZE];
		uint16_t avail_event;
	} used __attribute__((aligned(4)));
	uint16_t seen;
};

static struct vq q[3] __attribute__((aligned(16)));
static uint8_t rxbuf[QSIZE][RXBUF];
static uint8_t txbuf[RXBUF];
static volatile uint8_t *regs;
static uint64_t cid;
static uint32_t fwd; /* payload bytes taken on this connection */

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

static void offer(unsigned int n, uint16_t d, uint64_t addr, uint32_t len,
		  uint16_t flags)
{
	struct vq *v = &q[n];

	v->desc[d].addr = addr;
	v->desc[d].len = len;
	v->desc[d].flags = flags;
	v->desc[d].next = 0;
	v->avail.ring[v->avail.idx % QSIZE] = d;
	barrier();
	v->avail.idx++;
	barrier();
	wr(0x050, n);
}

/* The next used element of queue n, or -1 after a long wait. */
static int next_used(unsigned int n)
{
	struct vq *v = &q[n];
	volatile uint16_t *idx = &v->used.idx;

	for (unsigned long spin = 0; *idx == v->seen; spin++)
		if (spin > 20000000ul)
			return -1;
	barrier();
	return (int)v->used.ring[v->seen++ % QSIZE].id;
}

static int negotiate(void)
{
	wr(0x070, 0);
	wr(0x070, 1 | 2);
	wr(0x024, 1);
	wr(0x020, 1); /* VERSION_1, nothing else */
	wr(0x070, 1 | 2 | 8);
	if (!(rd(0x070) & 8))
		return -1;
	for (unsigned int n = 0; n < 3; n++) {
		wr(0x030, n);
		if (rd(0x034) < QSIZE)
			return -1;
		wr(0x038, QSIZE);
		wr(0x080, (uint32_t)(uintptr_t)q[n].desc);
		wr(0x084, 0);
		wr(0x090, (uint32_t)(uintptr_t)&q[n].avail);
		wr(0x094, 0);
		wr(0x0a0, (uint32_t)(uintptr_t)&q[n].used);
		wr(0x0a4, 0);
		wr(0x044, 1);
	}
	wr(0x070, 1 | 2 | 8 | 4);
	if (!(rd(0x070) & 4))
		return -1;
	cid = rd(0x100) | (uint64_t)rd(0x104) << 32;
	for (uint16_t d = 0; d < QSIZE; d++)
		offer(0, d, (uint64_t)(uintptr_t)rxbuf[d], RXBUF, F_WRITE);
	return 0;
}

static void send(uint32_t src, uint32_t dst, uint16_t op, uint32_t flags,
		 const char *payload)
{
	struct hdr *h = (struct hdr *)txbuf;
	uint32_t len = 0;

	while (payload && payload[len])
		len++;
	*h = (struct hdr){ .src_cid = cid, .dst_cid = 2, .src_port = src,
			   .dst_port = dst, .len = len, .type = 1, .op = op,
			   .flags = flags, .buf_alloc = 4096, .fwd_cnt = fwd };
	for (uint32_t i = 0; i < len; i++)
		txbuf[sizeof(*h) + i] = (uint8_t)payload[i];
	offer(1, 0, (uint64_t)(uintptr_t)txbuf, (uint32_t)sizeof(*h) + len, 0);
	if (next_used(1) < 0)
		puts_com1("vsock: send BAD\n");
}

/* The next packet from the host into *h and text (NUL-terminated); its
 * buffer goes back to the device. -1 after a long wait. */
static int receive(struct hdr *h, char *text, uint32_t size)
{
	int d = next_used(0);
	const uint8_t *b;

	if (d < 0)
		return -1;
	b = rxbuf[d];
	*h = *(const struct hdr *)b;
	text[0] = '\0';
	if (h->len < size && h->len <= RXBUF - sizeof(*h)) {
		for (uint32_t i = 0; i < h->len; i++)
			text[i] = (char)b[sizeof(*h) + i];
		text[h->len] = '\0';
	}
	if (h->op == OP_RW)
		fwd += h->len;
	offer(0, (uint16_t)d, (uint64_t)(uintptr_t)b, RXBUF, F_WRITE);
	return 0;
}

/* Waits for a packet with op `op`, skipping credit updates. */
static int expect(uint16_t op, struct hdr *h, char *text, uint32_t size)
{
	do {
		if (receive(h, text, size) < 0)
			return -1;
	} while (h->op == 6);
	return h->op == op ? 0 : -1;
}

static void guest_connects(void)
{
	struct hdr h;
	char text[128];

	fwd = 0;
	send(MY_PORT, HOST_PORT, OP_REQUEST, 0, 0);
	if (expect(OP_RESPONSE, &h, text, sizeof(text)) < 0) {
		puts_com1("vsock: connect BAD\n");
		return;
	}
	puts_com1("vsock: connected to host port 1234\n");
	send(MY_PORT, HOST_PORT, OP_RW, 0, "hello from the guest");
	if (expect(OP_RW, &h, text, sizeof(text)) < 0) {
		puts_com1("vsock: answer BAD\n");
		return;
	}
	puts_com1("vsock: host says ");
	puts_com1(text);
	putc_com1('\n');
	send(MY_PORT, HOST_PORT, OP_SHUTDOWN, 3, 0);
	puts_com1(expect(OP_RST, &h, text, sizeof(text)) == 0 ?
			  "vsock: closed\n" : "vsock: close BAD\n");
}

static void host_connects(void)
{
	struct hdr h;
	char text[128], echo[160] = "echo: ";
	uint32_t peer;

	if (expect(OP_REQUEST, &h, text, sizeof(text)) < 0 ||
	    h.dst_port != GUEST_PORT) {
		puts_com1("vsock: no host connection BAD\n");
		return;
	}
	peer = h.src_port;
	fwd = 0;
	send(GUEST_PORT, peer, OP_RESPONSE, 0, 0);
	if (expect(OP_RW, &h, text, sizeof(text)) < 0) {
		puts_com1("vsock: host data BAD\n");
		return;
	}
	for (unsigned int i = 0; text[i] && i < sizeof(echo) - 7; i++)
		echo[6 + i] = text[i], echo[7 + i] = '\0';
	send(GUEST_PORT, peer, OP_RW, 0, echo);
	if (expect(OP_SHUTDOWN, &h, text, sizeof(text)) < 0) {
		puts_com1("vsock: host close BAD\n");
		return;
	}
	send(GUEST_PORT, peer, OP_RST, 0, 0);
	puts_com1("vsock: served the host\n");
}

void check_vsock(volatile uint8_t *r, const char *cmdline)
{
	regs = r;
	if (negotiate() < 0) {
		puts_com1("vsock: negotiation BAD\n");
		return;
	}
	puts_com1("vsock: guest cid ");
	put_dec(cid);
	putc_com1('\n');
	/* tk.vsock=idle: a device set up and left alone (snapshot tests,
	 * where no host peer talks to it) */
	if (has(cmdline, "tk.vsock=idle"))
		return;
	guest_connects();
	host_connects();
}
