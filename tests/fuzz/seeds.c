/* Writes the seed corpora of the fuzz targets into OUT/<target>/ with the
 * project's own writers: state files (format.c, devstate.c, diff.c),
 * compressed memory (zmem.c), working sets (mem_uffd.c), result
 * documents (result.c), the test kernel as ELF and wrapped in a bzImage
 * setup header, arrival traces in each format, and device access
 * sequences as Linux's drivers make them.
 *
 *   fuzz_seeds OUT TESTKERNEL_ELF TESTKERNEL_BIN */
#include "fuzz.h"

#include "diff.h"
#include "format.h"
#include "mem_uffd.h"
#include "result.h"
#include "result_new.h"
#include "snapshot.h"
#include "zmem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *out;

static void seed(const char *target, const char *name, const void *data,
		 size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", out, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", out, target, name);
	fuzz__write(path, data, len);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0 ||
	    !(buf = malloc((size_t)st.st_size + 1)) ||
	    read(fd, buf, (size_t)st.st_size) != st.st_size) {
		perror(path);
		exit(1);
	}
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* report_many's inputs: bench (top two bits: many series), series
 * count (two bytes, little-endian, with those bits; else one), then
 * bytes per series (the target goes on with its own when they run out). */
static void report_many_seeds(void)
{
	static const uint8_t restore[] = { 0xc0, 0x2c, 0x01, 2, 3, 0, 2, 1 };
	static const uint8_t rate[] = { 0xc1, 0xfa, 0x00, 5, 1, 4, 1, 0, 3 };
	static const uint8_t lifecycle[] = { 0xc2, 0x3f, 0x01, 0, 8, 2, 2 };
	static const uint8_t restore_few[] = { 0, 45, 2, 3, 0, 2, 1, 2, 3 };
	static const uint8_t rate_few[] = { 1, 40, 5, 1, 4, 1, 0, 3, 0 };
	static const uint8_t density[] = { 5, 30, 6, 2, 7 };

	seed("report_many", "restore-300", restore, sizeof(restore));
	seed("report_many", "rate-250", rate, sizeof(rate));
	seed("report_many", "lifecycle-319", lifecycle, sizeof(lifecycle));
	seed("report_many", "restore-45", restore_few, sizeof(restore_few));
	seed("report_many", "rate-40", rate_few, sizeof(rate_few));
	seed("report_many", "density-30", density, sizeof(density));
}

static void state_seeds(const char *kernel)
{
	struct snap_writer w;
	uint64_t bitmap[FUZZ_MEM_SIZE / 4096 / 64] = { 0 };

	fuzz__state_probe(&w, 0, FUZZ_BASE_CREATED);
	seed("state", "probe-raw", w.buf, w.len);
	free(w.buf);
	fuzz__state_probe(&w, 1, FUZZ_BASE_CREATED);
	seed("state", "probe-zstd", w.buf, w.len);
	free(w.buf);
	fuzz__state_linux(&w, kernel, false);
	seed("state", "linux", w.buf, w.len);
	free(w.buf);
	fuzz__state_linux(&w, kernel, true);
	seed("state", "linux-virtio", w.buf, w.len);
	free(w.buf);
	/* A diff of the base the diff target keeps at "base". */
	fuzz__state_probe(&w, 0, FUZZ_BASE_CREATED);
	for (unsigned int i = 0; i < sizeof(bitmap) / 8; i++)
		bitmap[i] = 0x8000000100000001ull << (i % 4);
	{
		struct snap_writer d;

		fuzz__state_diff(&d, w.buf, w.len, "base", bitmap,
				 FUZZ_MEM_SIZE);
		seed("state", "diff", d.buf, d.len);
		seed("diff", "diff", d.buf, d.len);
		free(d.buf);
	}
	free(w.buf);
}

/* Compressed memory of `size` bytes (a multiple of the chunk size) with
 * the pages of fuzz__memory(pattern). */
static void zmem_seed(const char *name, unsigned int pattern, uint64_t size)
{
	uint8_t *mem = fuzz__memory(pattern), *buf;
	uint64_t data, file;
	char path[PATH_MAX];
	size_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/zmem.tmp", out);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || zmem__write(mem, size, NULL, fd, &data, &file) < 0)
		exit(1);
	close(fd);
	buf = slurp(path, &len);
	unlink(path);
	seed("zmem", name, buf, len);
	free(buf);
	free(mem);
}

static void wset_seed(const char *name, uint32_t n, uint32_t step)
{
	char path[PATH_MAX], dir[PATH_MAX];
	uint32_t *pages = calloc(n ? n : 1, 4);

	for (uint32_t i = 0; i < n; i++)
		pages[i] = (i * step) % (1u << 16);
	snprintf(dir, sizeof(dir), "%s/wset", out);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mem_uffd__wset_write(path, pages, n) < 0)
		exit(1);
	free(pages);
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* The flat test kernel behind a boot protocol 2.15 setup header (four
 * setup sectors, 64-bit entry, loaded at 16 MiB where it is linked). */
static void kernel_seeds(const char *elf, const char *bin)
{
	size_t elf_len, bin_len;
	uint8_t *e = slurp(elf, &elf_len), *b = slurp(bin, &bin_len);
	size_t setup = 5 * 512;
	uint8_t *bz = calloc(1, setup + bin_len);

	seed("kernel", "testkernel.elf", e, elf_len);
	bz[0x1f1] = 4;
	bz[0x1fe] = 0x55, bz[0x1ff] = 0xaa;
	bz[0x201] = 0x6a;
	memcpy(bz + 0x202, "HdrS", 4);
	put16(bz + 0x206, 0x020f);
	bz[0x211] = 0x01;                 /* LOADED_HIGH */
	put32(bz + 0x22c, 0x7fffffff);    /* initrd_addr_max */
	put16(bz + 0x236, 0x0001);        /* XLF_KERNEL_64 */
	put32(bz + 0x238, 2047);          /* cmdline_size */
	put64(bz + 0x258, 0x1000000);     /* pref_address */
	put32(bz + 0x260, 1 << 20);       /* init_size */
	memcpy(bz + setup, b, bin_len);
	seed("kernel", "testkernel.bzimage", bz, setup + bin_len);
	free(bz);
	free(e);
	free(b);
}

static void result_seeds(void)
{
	double a[] = { 1.2e6, 1.3e6, 1.25e6, 1.4e6, 1.22e6, 3.1e6, 1.27e6 };
	double r[] = { 412.5, 398.0, 405.2 };
	json_t *doc = result__new("lifecycle", json_pack("{s:i}", "iters", 7));
	json_t *s;
	char *text;

	if (!doc)
		exit(1);
	s = result__add_series(doc, "create", "ns", RESULT_LOWER,
			       json_pack("{s:s}", "mode", "in-process"), a, 7);
	json_object_set_new(s, "floor_ratio", json_real(1.22));
	result__add_series(doc, "rate", "vms_per_s", RESULT_HIGHER, NULL, r,
			   3);
	result__add_series(doc, "empty", "ns", RESULT_LOWER, NULL, NULL, 0);
	result__skip(doc, "cold cache", "the results directory is on tmpfs");
	text = json_dumps(doc, JSON_INDENT(1));
	seed("result", "lifecycle.json", text, strlen(text));
	seed("report", "lifecycle.json", text, strlen(text));
	free(text);
	json_decref(doc);
}

/* report's session part: the turns table beside the series. */
static void session_seed(void)
{
	double r[] = { 7.9e9, 5.2e9, 4.8e9 }, c[] = { 2, 3, 1 };
	json_t *doc = result__new("session", json_pack(
		"{s:s, s:s, s:I, s:I}", "snapshots", "diff", "merge", "chain:2",
		"turns", (json_int_t)3, "turns_done", (json_int_t)3));
	json_t *turns = json_array();
	char *text;

	if (!doc || !turns)
		exit(1);
	result__add_series(doc, "resume_to_first_output", "ns", RESULT_LOWER,
			   json_pack("{s:s}", "per", "turn"), r, 3);
	result__add_series(doc, "chain_length", "count", RESULT_LOWER,
			   json_pack("{s:s}", "per", "turn"), c, 3);
	for (int i = 0; i < 3; i++)
		json_array_append_new(turns, json_pack(
			"{s:i, s:f, s:f, s:f, s:f, s:i, s:i, s:i, s:f, s:f, "
			"s:b, s:f, s:i}", "turn", i + 1,
			"resume_to_first_output_ns", r[i], "command_ns", 4.8e9,
			"pause_ns", 9e5, "save_ns", 4.5e8, "mem_bytes", 6459392,
			"disk_bytes", 3776512, "changed_bytes", 10499072,
			"saved_per_changed", 0.97, "chain_length", c[i],
			"merged", i == 2, "merge_ns", i == 2 ? 1.7e9 : 0.0,
			"merged_bytes", i == 2 ? 100982784 : 0));
	json_object_set_new(doc, "turns", turns);
	json_object_set_new(doc, "resume_drift", json_real(0.61));
	text = json_dumps(doc, JSON_INDENT(1));
	seed("report", "session.json", text, strlen(text));
	free(text);
	json_decref(doc);
}

static void arrivals_seed(const char *name, uint8_t mode, const char *text)
{
	size_t len = strlen(text);
	uint8_t *buf = malloc(len + 1);

	buf[0] = mode;
	memcpy(buf + 1, text, len);
	seed("arrivals", name, buf, len + 1);
	free(buf);
}

static void arrivals_seeds(void)
{
	arrivals_seed("csv-seconds", 0, "timestamp,function\n12.5,a\n3,b\n"
			"7.25,a\n");
	arrivals_seed("csv-datetime", 1 | 4,
		      "id,start_time\n1,2023-11-16 18:17:03.9799600\n"
		      "2,2023-11-16T18:17:05Z\n3,2023-11-16 18:18:00\n");
	arrivals_seed("azure2019", 2 | 8,
		      "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
		      "o1,a1,f1,http,2,0,1\no2,a2,f2,timer,1,0,3\n");
	arrivals_seed("azure2021", 3, "app,func,end_timestamp,duration\n"
		      "a,f,10.5,0.5\na,g,5.0,2.0\nb,h,20,0\n");
}

/* The one-format trace targets (fuzz_trace.h: byte 0 picks the window
 * in bits 0-1, the time scale in bits 2-3): valid files, with counts and
 * times near the limits, which few mutations carry past them. */
static void trace_seed(const char *format, const char *name, uint8_t mode,
		       const char *text)
{
	char target[32];
	size_t len = strlen(text);
	uint8_t *buf = malloc(len + 1);

	snprintf(target, sizeof(target), "trace_%s", format);
	buf[0] = mode;
	memcpy(buf + 1, text, len);
	seed(target, name, buf, len + 1);
	free(buf);
}

/* A day of Azure 2019 minutes, two functions, sparse counts. */
static void trace_day_seed(void)
{
	char *text = malloc(65536), *p = text;

	p += sprintf(p, "HashOwner,HashApp,HashFunction,Trigger");
	for (int m = 1; m <= 1440; m++)
		p += sprintf(p, ",%d", m);
	for (int f = 0; f < 2; f++) {
		p += sprintf(p, "\no%d,a%d,f%d,%s", f, f, f,
			     f ? "timer" : "http");
		for (int m = 1; m <= 1440; m++)
			p += sprintf(p, ",%d", m % (97 + f) == 0 ? 1 + f : 0);
	}
	strcpy(p, "\n");
	trace_seed("azure2019", "day", 1 << 2, text);
	free(text);
}

static void trace_seeds(void)
{
	trace_seed("csv", "seconds", 0, "timestamp,function\n12.5,a\n3,b\n"
		   "7.25,a\n");
	trace_seed("csv", "datetimes", 1, "id,start_time\n1,2023-11-16 "
		   "18:17:03.9799600\n2,2023-11-16T18:17:05Z\n3,2023-11-16 "
		   "18:18:00\n");
	trace_seed("csv", "epoch-quoted-crlf", 2 | 1 << 2,
		   "\"Timestamp\",\"what\"\r\n1700000000.5,\"a,b\"\r\n"
		   "\"1700000090.25\",c\r\n");
	/* just within the longest time line, at time x1 */
	trace_seed("csv", "near-the-longest", 0,
		   "timestamp\n0\n9999999999.5\n-1e-9\n");
	trace_seed("csv", "years-apart", 2 << 2,
		   "time\n0001-01-01 00:00:00\n9999-12-31T23:59:59.999999999Z"
		   "\n");
	trace_seed("azure2019", "small", 0,
		   "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
		   "o1,a1,f1,http,2,0,1\no2,a2,f2,timer,1,0,3\n");
	/* The largest counts outside the 60 s window: summed, not drawn */
	trace_seed("azure2019", "large-counts", 1,
		   "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
		   "o,a,f,http,1999,999999999999,0\n"
		   "o,a,g,timer,0,999999999999,999999999999\n"
		   "o,b,h,queue,1,999999999999,999999999999\n");
	trace_day_seed();
	trace_seed("azure2021", "small", 0, "app,func,end_timestamp,duration\n"
		   "a,f,10.5,0.5\na,g,5.0,2.0\nb,h,20,0\n");
	trace_seed("azure2021", "epoch", 2 | 1 << 2,
		   "app,func,end_timestamp,duration\n"
		   "a,f,1700000000.123,0.5\nb,g,1700003599.9,3599.9\n");
	trace_seed("azure2021", "extremes", 3 | 2 << 2,
		   "app,func,end_timestamp,duration\n"
		   "a,f,1.7976931348623157e308,0\n"
		   "b,g,-1.7976931348623157e308,1e-300\n");
}

/* tune host's inputs: byte 0 of a trace picks format, minutes and
 * budget (fuzz_host_trace.c); guests documents are JSON as they are. */
static void host_seeds(void)
{
	static const struct { const char *name; uint8_t mode; const char *text; }
	traces[] = {
		{ "azure2019", 0x30, "HashOwner,HashApp,HashFunction,Trigger,"
		  "1,2,3,4,5,6\no,a,f0,http,1,1,1,0,0,1\no,a,f1,http,0,0,0,"
		  "1,0,0\no,b,f2,timer,0,0,0,0,1,0\no,a,f0,queue,2,0,0,0,0,"
		  "0\n" },
		{ "azure2021", 0x22, "app,func,end_timestamp,duration\n"
		  "a,f0,10.5,0.5\na,f0,71,1\na,f1,190.25,0.25\nb,f2,251,1"
		  "\na,f0,310,0\n" },
	};
	static const char *const guests[] = {
		"{\"guests\": [{\"name\": \"small\", \"mem_mib\": 50, "
		"\"cold_ms\": 100, \"hit_ms\": 1, \"functions\": [\"f0\", "
		"\"gone\"]}, {\"name\": \"big\", \"mem_mib\": 512, "
		"\"cold_ms\": 400, \"hit_ms\": 2, \"idle_weight\": 2}]}",
		"{\"guests\": [{\"name\": \"a\", \"mem_mib\": 1, "
		"\"cold_ms\": 1, \"hit_ms\": 0, \"functions\": [\"f0\", "
		"\"f1\", \"f2\"]}]}",
	};
	char name[32];

	for (size_t i = 0; i < sizeof(traces) / sizeof(*traces); i++) {
		size_t len = strlen(traces[i].text);
		uint8_t *buf = malloc(len + 1);

		buf[0] = traces[i].mode;
		memcpy(buf + 1, traces[i].text, len);
		seed("host_trace", traces[i].name, buf, len + 1);
		free(buf);
	}
	for (size_t i = 0; i < sizeof(guests) / sizeof(*guests); i++) {
		snprintf(name, sizeof(name), "guests-%zu.json", i);
		seed("host_guests", name, guests[i], strlen(guests[i]));
	}
}

/* Records as fuzz_devices.c decodes them: op, register index, value. */
static void devices_seeds(void)
{
	static const uint8_t serial_probe[] = {
		0,                       /* boot timer: continue */
		1, 3, 0x80, 1, 0, 12, 1, 1, 0, 1, 3, 0x03, /* 9600 8N1 */
		1, 4, 0x10, 0, 6,        /* loopback, read MSR */
		1, 4, 0x0b, 1, 1, 0x02,  /* OUT2, THRE interrupt on */
		1, 0, 'o', 1, 0, 'k', 1, 0, '\n', 0, 2, 0, 5, /* IIR, LSR */
		1, 2, 0x07, 0, 2, 1, 7, 0x5a, 0, 7, 4, /* FIFO, scratch */
	};
	static const uint8_t kbc[] = {
		0, 1, 9, 0xaa, 0, 9, 0, 8, /* self test */
		1, 9, 0x20, 0, 8, 1, 9, 0x60, 1, 8, 0x47, /* read, write CTR */
		1, 9, 0xab, 0, 8, 1, 9, 0xd1, 1, 8, 0xdf, 4, 1, 9, 0xfe,
	};
	static const uint8_t cmos_pm_timer[] = {
		1, 1, 10, 0x00, 0, 11, 1, 10, 0x8b, 0, 11, 1, 10, 0x32, 0, 11,
		0, 12, 0x08 | 1, 14, 0x01, 0x00, 4, /* PM1_CNT: SCI_EN */
		1, 18, 123, 3, 0, 124, 0, 19, 1, 30, 0x42, 4,
		0x08 | 1, 14, 0x00, 0x34,  /* SLP_EN with S5 */
	};
	static const uint8_t restore[] = {
		0, 5, 0, 1, 0, 0, 0, 0x0a, 0x83, 0x0b, 0x07, 0x01, 0x0c, 0x00,
		1, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 2, 0, 5, 1, 0, 8,
	};

	seed("devices", "serial-probe", serial_probe, sizeof(serial_probe));
	seed("devices", "i8042", kbc, sizeof(kbc));
	seed("devices", "cmos-pm-timer", cmos_pm_timer, sizeof(cmos_pm_timer));
	seed("devices", "restore", restore, sizeof(restore));
}

/* fuzz_virtio's input: a queue of 8 with one chain (a 16-byte readable
 * header, a 512-byte writable buffer) made available, and a driver's
 * bring-up of the same queue through the registers, then a notify. */
static void virtio_seeds(void)
{
	static const struct { uint8_t op; uint16_t off; uint32_t v; } regs[] = {
		{ 5, 0x070, 0 }, { 5, 0x070, 3 }, { 5, 0x024, 1 },
		{ 5, 0x020, 1 }, { 5, 0x070, 11 }, { 5, 0x030, 0 },
		{ 5, 0x038, 8 }, { 5, 0x080, 0 }, { 5, 0x090, 0x1000 },
		{ 5, 0x0a0, 0x2000 }, { 5, 0x044, 1 }, { 5, 0x070, 15 },
		{ 5, 0x050, 0 }, { 4, 0x060, 0 }, { 5, 0x064, 1 },
		{ 4, 0x100, 0 }, { 5, 0x070, 0 },
	};
	uint8_t in[7 + 17 * 7 + 0x1010] = { 8, 0, 0, 0, 0, 0, 17 };
	uint8_t *mem = in + 7 + 17 * 7;
	static const uint8_t ring[] = {
		0x00, 0x30, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0,
		0x00, 0x31, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 2, 0, 0, 0,
	};

	for (size_t i = 0; i < 17; i++) {
		uint8_t *r = in + 7 + i * 7;

		r[0] = regs[i].op;
		memcpy(r + 1, &regs[i].off, 2);
		memcpy(r + 3, &regs[i].v, 4);
	}
	memcpy(mem, ring, sizeof(ring));
	mem[0x1002] = 1; /* avail idx 1, ring[0] = descriptor 0 */
	seed("virtio", "one-chain", in, sizeof(in));
	seed("virtio", "empty", in, 7);
}

/* fuzz_agent's input: an exec answered with output on both streams and
 * a status; a get answered with data and OK; a put answered with FAIL. */
static void agent_seeds(void)
{
	static const uint8_t exec[] = { 0, 'O', 3, 0, 0, 0, 'h', 'i', '\n',
					'E', 1, 0, 0, 0, 'e',
					'S', 4, 0, 0, 0, 7, 0, 0, 0 };
	static const uint8_t get[] = { 2, 'D', 2, 0, 0, 0, 'o', 'k',
				       'K', 0, 0, 0, 0 };
	static const uint8_t put[] = { 1, '!', 4, 0, 0, 0, 'n', 'o', 'p',
				       'e' };

	seed("agent", "exec", exec, sizeof(exec));
	seed("agent", "get", get, sizeof(get));
	seed("agent", "put-fail", put, sizeof(put));
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fuzz_seeds OUT TESTKERNEL_ELF "
			"TESTKERNEL_BIN\n");
		return 2;
	}
	out = argv[1];
	if (mkdir(out, 0755) < 0 && errno != EEXIST) {
		perror(out);
		return 1;
	}
	state_seeds(argv[2]);
	/* Few chunks decompress fast; the state seeds' memory has 64. */
	zmem_seed("four-chunks", 1, 4 * ZMEM_CHUNK);
	zmem_seed("two-chunks", 3, 2 * ZMEM_CHUNK);
	zmem_seed("state-memory", 1, FUZZ_MEM_SIZE);
	wset_seed("empty", 0, 1);
	wset_seed("small", 10, 7);
	wset_seed("large", 4000, 13);
	kernel_seeds(argv[2], argv[3]);
	result_seeds();
	session_seed();
	arrivals_seeds();
	trace_seeds();
	host_seeds();
	devices_seeds();
	virtio_seeds();
	agent_seeds();
	report_many_seeds();
	return 0;
}
