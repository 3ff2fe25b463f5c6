/* /proc/PID/smaps_rollup and smaps parsing, and /sys/kernel/mm/ksm. */
#include "memstat.h"

#include "err.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the VmFlags list `flags` ("rd wr mr mw me ac sd") has `flag`. */
static bool has_flag(const char *flags, const char *flag)
{
	char tok[8];
	int used;

	while (sscanf(flags, "%7s%n", tok, &used) == 1) {
		if (!strcmp(tok, flag))
			return true;
		flags += used;
	}
	return false;
}

void memstat__add_line(struct memstat *m, const char *line, bool guest)
{
	uint64_t v;

	if (!strncmp(line, "VmFlags:", 8))
		m->guest_mergeable |= guest && has_flag(line + 8, "mg");
	else if (sscanf(line, "Rss: %" SCNu64, &v) == 1)
		*(guest ? &m->guest_rss_kib : &m->rss_kib) += v;
	else if (sscanf(line, "Pss: %" SCNu64, &v) == 1)
		*(guest ? &m->guest_pss_kib : &m->pss_kib) += v;
	else if (sscanf(line, "Private_Clean: %" SCNu64, &v) == 1 ||
		 sscanf(line, "Private_Dirty: %" SCNu64, &v) == 1)
		*(guest ? &m->guest_private_kib : &m->uss_kib) += v;
	else if (guest && sscanf(line, "Anonymous: %" SCNu64, &v) == 1)
		m->guest_anon_kib += v;
}

static int read_rollup(struct memstat *m, const char *proc)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/smaps_rollup", proc);
	f = fopen(path, "re");
	if (!f)
		return err__sys(errno, "opening %s", path);
	while (fgets(line, sizeof(line), f))
		memstat__add_line(m, line, false);
	fclose(f);
	return 0;
}

/* Whether `line` is an smaps header ("start-end perms ..."); its start
 * address in *start. */
static int parse_header(const char *line, uintptr_t *start)
{
	uintptr_t end;

	return sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", start, &end) == 2;
}

static int read_guest(struct memstat *m, const char *proc, uintptr_t guest)
{
	char path[64], line[512];
	bool inside = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/smaps", proc);
	f = fopen(path, "re");
	if (!f)
		return err__sys(errno, "opening %s", path);
	while (fgets(line, sizeof(line), f)) {
		uintptr_t start;

		if (parse_header(line, &start))
			inside = start == guest;
		else if (inside)
			memstat__add_line(m, line, true);
	}
	fclose(f);
	return 0;
}

static int read_proc(struct memstat *m, const char *proc, uintptr_t guest)
{
	int ret;

	memset(m, 0, sizeof(*m));
	ret = read_rollup(m, proc);
	if (ret == 0 && guest)
		ret = read_guest(m, proc, guest);
	return ret;
}

int memstat__self(struct memstat *m, const void *guest)
{
	return read_proc(m, "/proc/self", (uintptr_t)guest);
}

int memstat__pid(struct memstat *m, pid_t pid, uintptr_t guest)
{
	char proc[32];

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	return read_proc(m, proc, guest);
}

/* The path of an executable file mapping in a /proc/PID/maps line
 * ("start-end r-xp offset dev inode   /path"), or NULL. */
static const char *text_path(const char *line)
{
	char perms[8];
	int at = 0;

	if (sscanf(line, "%*s %7s %*s %*s %*s %n", perms, &at) != 1 || !at ||
	    perms[2] != 'x' || line[at] != '/')
		return NULL;
	return line + at;
}

int memstat__open_text(pid_t pid)
{
	char path[64], line[PATH_MAX + 128], last[PATH_MAX + 1] = "";
	int opened = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return err__sys(errno, "opening %s", path);
	while (fgets(line, sizeof(line), f)) {
		const char *file = text_path(line);
		struct stat st;
		int fd;

		line[strcspn(line, "\n")] = '\0';
		if (!file || !strcmp(file, last))
			continue;
		snprintf(last, sizeof(last), "%s", file);
		/* a file replaced since ("... (deleted)") is not there; only
		 * a regular file is opened (no FIFO to block on, no device) */
		if (stat(file, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0) {
			close(fd);
			opened++;
		}
	}
	fclose(f);
	return opened;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void memstat__beyond_guest(const struct memstat *m, struct memstat_beyond *b)
{
	b->rss_kib = minus(m->rss_kib, m->guest_rss_kib);
	b->pss_kib = minus(m->pss_kib, m->guest_pss_kib);
	b->uss_kib = minus(m->uss_kib, m->guest_private_kib);
}

uint64_t memstat__overhead_kib(const struct memstat *m)
{
	return minus(m->uss_kib, m->guest_private_kib);
}

static long long ksm_counter(const char *name)
{
	char path[96];
	long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

void memstat__ksm(struct memstat_ksm *k)
{
	k->run = ksm_counter("run");
	k->pages_shared = ksm_counter("pages_shared");
	k->pages_sharing = ksm_counter("pages_sharing");
	k->pages_unshared = ksm_counter("pages_unshared");
	k->full_scans = ksm_counter("full_scans");
}

long long memstat__file_number(const char *path, const char *key)
{
	size_t len = strlen(key);
	char line[256];
	long long v = -1;
	FILE *f = fopen(path, "re");

	while (f && v < 0 && fgets(line, sizeof(line), f))
		if (strncmp(line, key, len) || sscanf(line + len, "%lld", &v) != 1)
			v = -1;
	if (f)
		fclose(f);
	return v;
}

long long memstat__ksm_merging_pages(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ksm_stat", (int)pid);
	return memstat__file_number(path, "ksm_merging_pages");
}

const char *memstat__ksm_run_text(long long run)
{
	switch (run) {
	case 0:
		return "off";
	case 1:
		return "on";
	case 2:
		return "off, unmerging";
	default:
		return "unknown";
	}
}
