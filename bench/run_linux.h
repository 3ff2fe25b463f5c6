/* `coldstart run --kernel`: boots a Linux guest in one VM and reports its
 * timeline (boot complete, guest done, guest exit), outcome and console. */
#ifndef COLDSTART_RUN_LINUX_H
#define COLDSTART_RUN_LINUX_H

#include "cmd_run.h"

/* What a Linux guest gets without --cmdline: the console on COM1, reset
 * through the i8042 on reboot and at once on panic (so the VM always
 * ends), no PCI or modules to probe, one UART, no keyboard or mouse
 * probing behind the i8042. */
#define LINUX_DEFAULT_CMDLINE                                               \
	"console=ttyS0 reboot=k panic=-1 pci=off nomodules 8250.nr_uarts=1 " \
	"i8042.noaux i8042.nomux i8042.nopnp i8042.dumbkbd"

#define LINUX_DEFAULT_MEM (256ull << 20)

/* Runs the parsed command line (o->kernel set); returns an enum cli_exit.
 * Input errors (missing or corrupt kernel, initrd too large) exit 1
 * before KVM is touched; a PVM host exits 77 unless o->allow_pvm. */
int run_linux(const struct run_cli *o);

#endif
