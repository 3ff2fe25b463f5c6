/* `coldstart snapshot`'s help text, which every action prints on --help
 * (cmd_snapshot.c dispatches; the actions live in cmd_snapshot*.c). */
#include "cmd_snapshot_int.h"

#include "mem.h"
#include "mem_restore.h"

#include <stdio.h>

void cmd_snapshot__usage(FILE *out)
{
	fputs("Usage: coldstart snapshot create DIR [--force] [--compress] "
	      "[RUN OPTIONS]\n"
	      "       coldstart snapshot create DIR --diff-from BASE "
	      "[--pause-at request|compute]\n"
	      "                [--mem-restore NAME] [--timeout DUR] [--force] "
	      "[--json]\n"
	      "       coldstart snapshot create DIR --kernel FILE [--initrd FILE] "
	      "[--cmdline TEXT]\n                [--vcpus N] [--mem SIZE] "
	      "[--console FILE] [--allow-pvm] [--force] [--json]\n"
	      "                [--rootfs PATH[,MODE]] [--drive PATH[,MODE]]... "
	      "[--vsock PATH]\n"
	      "       coldstart snapshot restore DIR [--mem-restore NAME] "
	      "[--timeout DUR] [--json]\n"
	      "                [--seccomp kill|log|off] [--jail DIR [--uid N] "
	      "[--gid N]\n                [--cpus N] [--memory SIZE]] "
	      "[--console FILE] [--allow-pvm] (Linux\n                "
	      "snapshots) [--exec CMD [--save NEW [--diff] [--force]]]\n"
	      "                [--vsock PATH] [--agent-port N] (a guest with "
	      "an agent)\n"
	      "       coldstart snapshot merge BASE DIFF... OUT [--force] "
	      "[--json]\n"
	      "       coldstart snapshot inspect DIR [--json]\n\n"
	      "create   runs the probe guest (any `coldstart run` workload "
	      "option) until every\n         vCPU is READY, pauses it and "
	      "saves DIR/state and DIR/memory atomically;\n         --force "
	      "replaces an existing snapshot at DIR; --compress writes memory "
	      "as\n         zstd chunks (restore with eager or uffd)\n"
	      "         --diff-from BASE restores BASE, tracks the pages the "
	      "guest writes\n         (KVM dirty log), pauses once every vCPU "
	      "reported --pause-at (default\n         compute: after the "
	      "working set) and saves only those pages\n"
	      "         --kernel boots a Linux guest instead, pauses it at its "
	      "boot-complete\n         signal and saves the whole machine "
	      "(irqchip, devices, memory);\n         with --rootfs (or --drive, "
	      "--vsock) the drives' written blocks go to\n         DIR/disk.N "
	      "and the vsock device along (a --rootfs guest is saved\n"
	      "         when its agent listens)\n"
	      "restore  restores DIR and runs the request phase to DONE, "
	      "checking the checksum\n         (a Linux snapshot: rebuilds "
	      "its machine and runs the guest to its exit,\n         console "
	      "on stdout or --console FILE); a guest with an agent runs\n"
	      "         --exec CMD through it (its output and status are the "
	      "command's) or serves\n         --vsock PATH until --timeout; "
	      "--save NEW then pauses it and saves it\n         (--diff: the "
	      "pages and disk blocks written since the restore)\n"
	      "         --mem-restore chooses how "
	      "memory comes back:\n", out);
	for (const struct guest_mem_ops *const *s = mem_restore__strategies();
	     *s; s++)
		fprintf(out, "           %-10s %s%s\n", (*s)->name, (*s)->help,
			s == mem_restore__strategies() + 1 ? " (default)" : "");
	fputs("         --seccomp: per-thread system call filters, kill "
	      "(default), log or off\n"
	      "         --jail DIR: once set up, the VMM runs in new "
	      "namespaces with the empty\n         DIR as its root, as "
	      "--uid/--gid (default 65534, nobody), without\n         "
	      "capabilities; --cpus N and --memory SIZE: cgroup limits "
	      "(as for run)\n"
	      "merge    writes the full snapshot OUT equal to BASE plus the "
	      "DIFFs (in order,\n         each taken against the one before "
	      "it), atomically\n"
	      "inspect  prints the header, sections and sizes\n\n"
	      "create and merge write through a temporary DIR.tmp.PID.XXXXXX "
	      "beside DIR; they\nfirst remove the ones that killed writers of "
	      "DIR left behind, saying so on\nstderr.\n", out);
}
