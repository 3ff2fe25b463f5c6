/* ACPI PM1a registers: ACPI mode always on, S5 powers the VM off. */
#include "pm_x86.h"

#include "acpi_x86.h"
#include "device.h"
#include "err.h"
#include "vm.h"

#include <string.h>

#define PM1_STS 0 /* offsets from ACPI_PM1_EVT_PORT */
#define PM1_EN 2
#define PM1_CNT 4
#define CNT_SCI_EN (1u << 0)
#define CNT_SLP_TYP_SHIFT 10
#define CNT_SLP_TYP_MASK (7u << CNT_SLP_TYP_SHIFT)
#define CNT_SLP_EN (1u << 13)

static uint16_t read_reg(const struct acpi_pm *pm, unsigned int reg)
{
	switch (reg) {
	case PM1_EN:
		return pm->regs.enable;
	case PM1_CNT:
		return pm->regs.control | CNT_SCI_EN;
	default:
		return 0; /* no status bit is ever set */
	}
}

/* Returns IOTRAP_STOP when the guest powered off. */
static int write_reg(struct acpi_pm *pm, unsigned int reg, uint16_t v)
{
	if (reg == PM1_EN) {
		pm->regs.enable = v;
	} else if (reg == PM1_CNT) {
		pm->regs.control = v & (uint16_t)~CNT_SLP_EN;
		if ((v & CNT_SLP_EN) && (v & CNT_SLP_TYP_MASK) >>
						CNT_SLP_TYP_SHIFT ==
					ACPI_S5_TYPE) {
			timeline__mark(pm->vm->tl, TL_GUEST_EXIT);
			vm__end(pm->vm, VM_COMPLETED,
				"guest powered off (ACPI S5)");
			return IOTRAP_STOP;
		}
	}
	return IOTRAP_CONTINUE; /* status bits are write-1-to-clear: none */
}

/* Registers are 16 bits; byte accesses touch one half. Only one vCPU
 * runs ACPI register code at a time (the guest serialises it). */
static int pm_trap(struct vcpu *vcpu, const struct io_access *a,
		   void *opaque)
{
	struct acpi_pm *pm = opaque;
	unsigned int off = (unsigned int)(a->addr - ACPI_PM1_EVT_PORT);
	unsigned int reg = off & ~1u, shift = (off & 1u) * 8;
	uint16_t cur = read_reg(pm, reg), v = 0;

	(void)vcpu;
	if (!a->is_write) {
		memset(a->data, 0, a->len);
		for (uint32_t i = 0; i < a->len && i < 2 - (off & 1u); i++)
			a->data[i] = (uint8_t)(cur >> (shift + 8 * i));
		return IOTRAP_CONTINUE;
	}
	memcpy(&v, a->data, a->len < 2 ? a->len : 2);
	if (a->len == 1)
		v = (uint16_t)((cur & ~(0xffu << shift)) | (v & 0xffu) << shift);
	return write_reg(pm, reg, v);
}

static size_t pm_state_size(const void *dev)
{
	(void)dev;
	return sizeof(struct acpi_pm_regs);
}

static int pm_save(const void *dev, void *buf, size_t len)
{
	const struct acpi_pm *pm = dev;
	int ret = device__check_save("acpi.pm", sizeof(pm->regs), len);

	if (ret == 0)
		memcpy(buf, &pm->regs, sizeof(pm->regs));
	return ret;
}

_Static_assert(offsetof(struct acpi_pm_regs, version) == 0,
	       "device__check_restore reads the version first");

static int pm_restore(void *dev, const void *buf, size_t len)
{
	struct acpi_pm *pm = dev;
	int ret = device__check_restore("acpi.pm", sizeof(pm->regs),
					ACPI_PM_STATE_VERSION, buf, len);

	if (ret == 0)
		memcpy(&pm->regs, buf, sizeof(pm->regs));
	return ret;
}

static const struct device_ops pm_ops = {
	.name = "acpi.pm",
	.state_size = pm_state_size,
	.save = pm_save,
	.restore = pm_restore,
};

int acpi_pm__init(struct acpi_pm *pm, struct vm *vm)
{
	int ret;

	memset(pm, 0, sizeof(*pm));
	pm->vm = vm;
	pm->regs.version = ACPI_PM_STATE_VERSION;
	ret = iotrap__register(&vm->io, IO_SPACE_PIO, ACPI_PM1_EVT_PORT,
			       ACPI_PM1_PORTS, pm_trap, pm, "acpi.pm");
	if (ret == 0)
		ret = vm__add_device(vm, &pm_ops, pm);
	return ret;
}
