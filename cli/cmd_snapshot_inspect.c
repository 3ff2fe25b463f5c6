/* `coldstart snapshot inspect`: a snapshot's header, sections and sizes. */
#include "cmd_snapshot_int.h"

#include "cli.h"
#include "diff.h"
#include "output.h"
#include "snapshot.h"

#include <inttypes.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

/* Strings from the snapshot (device names, paths) need not be UTF-8:
 * output__json_string makes them so. NULL when out of memory. */
static json_t *sections_json(const struct snapshot *s)
{
	json_t *arr = json_array();
	struct snap_section sec;
	const void *payload;
	size_t cursor = 0;

	while (arr && snap__next(&s->r, &cursor, &sec, &payload)) {
		char name[64];

		snap__section_name(&sec, payload, name, sizeof(name));
		if (json_array_append_new(arr, json_pack("{s:o, s:i, s:i, s:I}",
			"name", output__json_string(name), "type",
			(int)sec.type, "index", (int)sec.index, "bytes",
			(json_int_t)sec.len)) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

/* An OS guest's drives (image, size, CRC-32, mode, written blocks kept)
 * and vsock device: vm.virtio. */
static json_t *virtio_json(const struct snap_virtio_rec *v)
{
	json_t *drives = json_array();

	for (uint32_t i = 0; i < v->nr_drives; i++) {
		const struct snap_drive_rec *d = &v->drive[i];
		char file[32] = "";

		if (d->mode == SNAP_DRIVE_OVERLAY)
			snprintf(file, sizeof(file), SNAPSHOT_DISK_FILE_FMT, i);
		json_array_append_new(drives, json_pack(
			"{s:o, s:I, s:I, s:s, s:s*, s:I}", "image",
			output__json_string(d->path), "bytes",
			(json_int_t)d->bytes, "crc32", (json_int_t)d->crc32,
			"mode", d->mode == SNAP_DRIVE_RO ? "ro" : "overlay",
			"written_file", file[0] ? file : NULL, "written_bytes",
			(json_int_t)d->layer_bytes));
	}
	return json_pack("{s:I, s:o, s:o, s:b}", "version",
			 (json_int_t)v->version, "drives", drives, "vsock_cid",
			 v->vsock ? json_integer((json_int_t)v->vsock_cid)
				  : json_null(), "agent",
			 snapguest__has_agent(v));
}

/* Guest kind, irqchip, registered devices and, for an OS guest, what it
 * was booted from; -1 when out of memory. */
static int add_machine_json(json_t *doc, const struct snapshot *s)
{
	const struct snap_guest_rec *g = &s->guest;
	json_t *devs = json_array();
	struct snap_section sec;
	const void *payload;
	size_t cursor = 0;
	char name[64];
	int ret = 0;

	while (snap__next(&s->r, &cursor, &sec, &payload))
		if (sec.type == SNAP_DEVICE) {
			snap__section_name(&sec, payload, name, sizeof(name));
			ret |= json_array_append_new(
				devs, output__json_string(name + 4));
		}
	ret |= json_object_set_new(doc, "guest", json_string(
		s->cfg.guest == SNAP_GUEST_LINUX ? "linux" : "probe"));
	ret |= json_object_set_new(doc, "irqchip",
				   json_boolean(s->cfg.irqchip));
	ret |= json_object_set_new(doc, "devices", devs);
	if (s->cfg.guest != SNAP_GUEST_LINUX)
		return ret;
	json_object_del(doc, "probe");
	return ret | json_object_set_new(doc, "linux", json_pack(
		"{s:o, s:I, s:I, s:o, s:I, s:I, s:o, s:o}", "kernel",
		output__json_string(g->kernel), "kernel_bytes",
		(json_int_t)g->kernel_bytes, "kernel_crc32",
		(json_int_t)g->kernel_crc32, "initrd",
		output__json_string(g->initrd), "initrd_bytes",
		(json_int_t)g->initrd_bytes, "initrd_crc32",
		(json_int_t)g->initrd_crc32, "cmdline",
		output__json_string(g->cmdline), "virtio",
		virtio_json(&s->virtio)));
}

/* Whether commands can be sent to the guest, and how that is known. */
static const char *agent_line(const struct snap_virtio_rec *v)
{
	if (v->version == SNAP_VIRTIO_VERSION_NOFLAGS)
		return "assumed (an older record, which took every vsock "
		       "device for an agent's)";
	return snapguest__has_agent(v) ? "listened when the snapshot was "
					 "taken"
				       : "none recorded (a vsock device "
					 "alone: --exec is refused)";
}

static void print_machine(const struct snapshot *s, json_t *doc)
{
	const struct snap_guest_rec *g = &s->guest;
	json_t *devs = json_object_get(doc, "devices");

	if (s->cfg.guest == SNAP_GUEST_LINUX) {
		printf("linux guest, paused at boot complete: kernel %s (%" PRIu64
		       " bytes, CRC-32 0x%08x)", g->kernel, g->kernel_bytes,
		       g->kernel_crc32);
		if (g->initrd[0])
			printf(", initrd %s (%" PRIu64 " bytes, CRC-32 0x%08x)",
			       g->initrd, g->initrd_bytes, g->initrd_crc32);
		printf("\ncmdline: %s\n", g->cmdline);
		for (uint32_t i = 0; i < s->virtio.nr_drives; i++) {
			const struct snap_drive_rec *d = &s->virtio.drive[i];

			printf("drive %u: %s (%" PRIu64 " bytes, CRC-32 "
			       "0x%08x), ", i, d->path, d->bytes, d->crc32);
			if (d->mode == SNAP_DRIVE_RO)
				printf("read-only\n");
			else
				printf("overlay; written blocks "
				       SNAPSHOT_DISK_FILE_FMT " (%.1f KiB)\n",
				       i, (double)d->layer_bytes / 1024);
		}
		if (s->virtio.vsock)
			printf("vsock: guest CID %" PRIu64 "\nagent: %s\n",
			       s->virtio.vsock_cid, agent_line(&s->virtio));
	}
	printf("machine: %s; devices:", s->cfg.irqchip
	       ? "in-kernel irqchip (PICs, IOAPIC, LAPICs, PIT)"
	       : "no in-kernel irqchip");
	for (size_t i = 0; i < json_array_size(devs); i++)
		printf(" %s", json_string_value(json_array_get(devs, i)));
	printf("%s\n", json_array_size(devs) ? "" : " none registered");
}

int cmd_snapshot__inspect(int argc, char **argv)
{
	struct snapshot s;
	struct snapdiff d;
	struct stat st = { 0 };
	json_t *doc, *secs;
	int ret, is_diff;

	if (argc > 1 && (!strcmp(argv[1], "--help") ||
			 !strcmp(argv[1], "-h"))) {
		cmd_snapshot__usage(stdout);
		return CLI_OK;
	}
	if (argc < 2 || argv[1][0] == '-')
		return usage_error("inspect: needs the snapshot's directory "
				   "DIR first");
	if (argc > 3 || (argc == 3 && strcmp(argv[2], "--json")))
		return usage_error("inspect: takes DIR and at most --json");
	/* A diff is shown as it is, without resolving its base. */
	ret = snapshot__open_layer(&s, argv[1]);
	if (ret < 0)
		return load_error(ret);
	is_diff = snapdiff__parse(&s, &d);
	if (is_diff < 0) {
		snapshot__close(&s);
		return load_error(is_diff);
	}
	if (fstat(s.mem_fd, &st) < 0) {
		snapshot__close(&s);
		return cli__error(CLI_FAIL, "snapshot inspect: stat of %s/%s: "
				  "%s", argv[1], SNAPSHOT_MEMORY_FILE,
				  strerror(errno));
	}
	/* The format requires a NUL-terminated vendor (format.c). */
	secs = sections_json(&s);
	doc = json_pack("{s:o, s:i, s:s, s:I, s:i, s:o, s:I, s:I, s:I, s:I, "
			"s:o, s:{s:I, s:I, s:I}}",
			"dir", output__json_string(s.dir), "format_version",
			(int)s.r.hdr.version, "checksum", "ok", "created_ns",
			(json_int_t)s.r.hdr.created_ns, "vcpus",
			(int)s.r.hdr.nr_vcpus, "cpu_vendor",
			output__json_string(s.r.hdr.cpu_vendor),
			"state_bytes", (json_int_t)s.state_len,
			"mem_bytes", (json_int_t)s.mem.size, "mem_data_bytes",
			(json_int_t)s.mem.data_bytes, "mem_allocated_bytes",
			(json_int_t)st.st_blocks * 512, "sections", secs,
			"probe", "init_bytes", (json_int_t)s.params.init_bytes,
			"ws_bytes", (json_int_t)s.params.ws_bytes, "ready",
			(json_int_t)s.probe_state.ready);
	/* json_pack took secs even when it failed: only doc is ours. */
	if (!doc || json_object_set_new(json_object_get(doc, "probe"), "phase",
					json_integer(s.probe_state.phase[0])) ||
	    add_machine_json(doc, &s) ||
	    (is_diff && json_object_set_new(doc, "diff", json_pack(
			"{s:o, s:I, s:I, s:I}", "base",
			output__json_string(d.base_path), "base_state_crc32",
			(json_int_t)d.hdr.base_crc32, "base_created_ns",
			(json_int_t)d.hdr.base_created_ns, "dirty_pages",
			(json_int_t)d.hdr.dirty_pages)))) {
		json_decref(doc);
		snapshot__close(&s);
		return cli__error(CLI_FAIL, "snapshot inspect: out of memory "
				  "describing %s", argv[1]);
	}
	if (argc == 3) {
		if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0) {
			json_decref(doc);
			snapshot__close(&s);
			return cli__error(CLI_FAIL, "snapshot inspect: writing "
					  "the JSON document failed");
		}
		fputc('\n', stdout);
	} else {
		printf("snapshot %s: format version %u, checksum ok, %u vCPU(s), "
		       "CPU vendor %.16s\nstate file %zu bytes; memory %.1f MiB "
		       "(%.1f MiB data, %.1f MiB allocated on disk)\n", s.dir,
		       s.r.hdr.version, s.r.hdr.nr_vcpus, s.r.hdr.cpu_vendor,
		       s.state_len, (double)s.mem.size / MiB,
		       (double)s.mem.data_bytes / MiB,
		       (double)st.st_blocks * 512 / MiB);
		if (s.cfg.guest == SNAP_GUEST_PROBE)
			printf("probe guest: init %" PRIu64 " KiB, working set "
			       "%" PRIu64 " KiB, paused %s\n",
			       s.params.init_bytes >> 10,
			       s.params.ws_bytes >> 10,
			       s.probe_state.phase[0] == PROBE_PHASE_COMPUTE
				       ? "after the request phase (PHASE "
					 "compute)"
				       : s.probe_state.phase[0] ==
						       PROBE_PHASE_REQUEST
					       ? "at PHASE request"
					       : "at READY");
		print_machine(&s, doc);
		if (is_diff)
			printf("diff of %s (state CRC 0x%08x): %" PRIu64
			       " pages written since it\n", d.base_path,
			       d.hdr.base_crc32, (uint64_t)d.hdr.dirty_pages);
		puts("sections:");
		for (size_t i = 0; i < json_array_size(secs); i++) {
			json_t *e = json_array_get(secs, i);

			json_int_t type = json_integer_value(
				json_object_get(e, "type"));
			char who[16] = "vm";

			if (type == SNAP_DEVICE || type == SNAP_DEV_PROBE)
				snprintf(who, sizeof(who), "device");
			/* Per-vCPU sections are numbered 16..63. */
			if (type >= SNAP_VCPU_REGS && type < SNAP_DEV_PROBE)
				snprintf(who, sizeof(who), "vcpu %d",
					 (int)json_integer_value(
						 json_object_get(e, "index")));
			printf("  %-18s %-8s %8" JSON_INTEGER_FORMAT " bytes\n",
			       json_string_value(json_object_get(e, "name")),
			       who,
			       json_integer_value(json_object_get(e, "bytes")));
		}
	}
	json_decref(doc);
	snapshot__close(&s);
	return CLI_OK;
}
