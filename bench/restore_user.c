/* A user's snapshot: the checks that `bench restore --snapshot`, `tune
 * restore` and the pool make before they open /dev/kvm (restore.h). */
#include "restore.h"

#include "agent_client.h"
#include "cli.h"
#include "err.h"
#include "guest_devices.h"
#include "kvm.h"
#include "run_linux.h"
#include "snap_linux.h"
#include "snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool restore__has_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	return snprintf(path, sizeof(path), "%s/%s", dir, name) <
		       (int)sizeof(path) &&
	       access(path, F_OK) == 0;
}

int restore__inspect(const char *dir, struct restore_snap *info)
{
	struct snapshot s;
	int ret;

	ret = snapshot__open_named(&s, dir);
	if (ret < 0)
		return ret;
	*info = (struct restore_snap){
		.linux_guest = s.cfg.guest == SNAP_GUEST_LINUX,
		.compressed = s.compressed, .diff = s.diff_base,
		.mem_size = s.cfg.mem_size, .data_bytes = s.mem.data_bytes,
		.vcpus = s.cfg.nr_vcpus, .in_memory = restore__in_memory(dir),
		.had_wset = restore__has_file(dir, SNAPSHOT_WSET_FILE),
		.agent = guestdev__has_agent(&s),
		.vsock = s.virtio.vsock != 0,
	};
	if (info->linux_guest)
		info->guest = s.guest;
	if (s.virtio.nr_drives)
		memcpy(info->rootfs, s.virtio.drive[0].path,
		       sizeof(info->rootfs));
	else
		info->params = s.params;
	snapshot__close(&s);
	return 0;
}

/* Why cold caches mean nothing for this snapshot, or NULL. */
static const char *cold_meaningless(const struct restore_snap *info)
{
	if (info->diff)
		return "a diff snapshot is merged with its base into memory "
		       "(a memfd) at every open, so no restore reads its "
		       "files through the page cache";
	if (info->in_memory)
		return "the snapshot is in memory (tmpfs): its page cache "
		       "cannot be evicted; copy it to a disk to measure cold "
		       "restores";
	return NULL;
}

int restore__check_pvm(const char *cmd, const char *dir,
		       const struct restore_snap *info, bool allow_pvm)
{
	if (info->linux_guest && !allow_pvm &&
	    kvm__device_flavour() == KVM_FLAVOUR_PVM)
		return cli__error(CLI_SKIP, "%s of %s (a Linux snapshot): %s",
				  cmd, dir, run_linux__pvm_refusal());
	return CLI_OK;
}

int restore__check_snapshot(const char *cmd, const char *dir,
			    bool allow_pvm, struct restore_snap *info)
{
	if (restore__inspect(dir, info) < 0)
		return cli__error(CLI_USAGE, "%s: %s", cmd, err__last());
	return restore__check_pvm(cmd, dir, info, allow_pvm);
}

int restore__check_user(const char *cmd, const char *dir, bool allow_pvm,
			bool *warm, bool *cold, struct restore_snap *info,
			const char **cold_why)
{
	int ret = restore__check_snapshot(cmd, dir, allow_pvm, info);

	if (ret != CLI_OK)
		return ret;
	*cold_why = *cold ? cold_meaningless(info) : NULL;
	if (*cold_why && !*warm)
		return cli__error(CLI_USAGE, "%s: --cache cold means nothing "
				  "here: %s", cmd, *cold_why);
	if (*cold_why) {
		fprintf(stderr, "coldstart: %s: cold cache left out: %s\n",
			cmd, *cold_why);
		*cold = false;
	}
	return CLI_OK;
}

int restore__agent_exec(const char *cmd, const struct restore_snap *info,
			const char **exec)
{
	if (info->agent && !*exec)
		*exec = AGENT_DEFAULT_EXEC;
	if (!info->agent && info->vsock)
		return cli__error(CLI_USAGE, "%s: the snapshot holds no guest "
				  "with an agent, only a vsock device (its "
				  "agent is recorded by `snapshot create "
				  "--rootfs`)", cmd);
	if (!info->agent && *exec)
		return cli__error(CLI_USAGE, "%s: --exec needs a snapshot of a "
				  "guest with an agent (snapshot create "
				  "--rootfs); this one runs no commands", cmd);
	return CLI_OK;
}

restore_fn *restore__once_for(const struct restore_snap *info)
{
	return info->linux_guest ? snap_linux__restore_once : restore__once;
}
