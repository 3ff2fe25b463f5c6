/* The ACPI PM1a event and control registers the FADT points to (ports
 * 0x600-0x605): enough for the guest's ACPI core to find the system in
 * ACPI mode, and for poweroff: a write of SLP_EN with the DSDT's S5 sleep
 * type ends the VM as completed ("guest exit"). No SCI is ever raised. */
#ifndef COLDSTART_PM_X86_H
#define COLDSTART_PM_X86_H

#include <stdint.h>

struct vm;

struct acpi_pm_regs {
	uint32_t version;
	uint16_t enable;  /* PM1_EN */
	uint16_t control; /* PM1_CNT without SLP_EN */
};

#define ACPI_PM_STATE_VERSION 1

struct acpi_pm {
	struct vm *vm;
	struct acpi_pm_regs regs;
};

/* Claims the PM1a ports and registers device "acpi.pm". */
int acpi_pm__init(struct acpi_pm *pm, struct vm *vm);

#endif
