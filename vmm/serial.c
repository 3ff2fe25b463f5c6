/* 8250/16550A UART: registers, THRE interrupt, output to a FILE. */
#include "serial.h"

#include "device.h"
#include "err.h"
#include "kvm.h"
#include "vm.h"

#include <linux/kvm.h>
#include <string.h>

enum {
	REG_DATA = 0, /* RBR/THR, DLL with DLAB */
	REG_IER = 1,  /* DLM with DLAB */
	REG_IIR = 2,  /* FCR on writes */
	REG_LCR = 3,
	REG_MCR = 4,
	REG_LSR = 5,
	REG_MSR = 6,
	REG_SCR = 7,
	NR_REGS = 8,
};

#define IER_THRI 0x02
#define IER_MASK 0x0f
#define IIR_NONE 0x01
#define IIR_THRI 0x02
#define IIR_FIFO 0xc0 /* FIFOs enabled: a 16550A */
#define FCR_ENABLE 0x01
#define LCR_DLAB 0x80
#define MCR_DTR 0x01
#define MCR_RTS 0x02
#define MCR_OUT1 0x04
#define MCR_OUT2 0x08 /* gates the IRQ line on a PC */
#define MCR_LOOP 0x10
#define MCR_MASK 0x1f
#define LSR_THRE 0x20
#define LSR_TEMT 0x40
#define MSR_CTS 0x10
#define MSR_DSR 0x20
#define MSR_RI 0x40
#define MSR_DCD 0x80

static bool thre_pending(const struct serial_regs *r)
{
	return (r->ier & IER_THRI) && r->thr_pending;
}

static uint8_t iir(const struct serial_regs *r)
{
	uint8_t fifo = r->fcr & FCR_ENABLE ? IIR_FIFO : 0;

	return (uint8_t)(fifo | (thre_pending(r) ? IIR_THRI : IIR_NONE));
}

/* ISA interrupts are edges: the line follows the pending state, so each
 * new THRE after the guest read IIR is a new rising edge. */
static int update_irq(struct serial *s)
{
	uint8_t level = thre_pending(&s->regs) && (s->regs.mcr & MCR_OUT2);
	struct kvm_irq_level line = { .irq = s->irq, .level = level };

	if (level == s->regs.irq_level)
		return 0;
	s->regs.irq_level = level;
	return KVM_IOCTL(s->vm->fd, KVM_IRQ_LINE, &line) < 0 ? -EIO : 0;
}

/* In loopback the modem inputs mirror the outputs (the 8250 driver's
 * probe checks this); otherwise a terminal is always attached. */
static uint8_t msr(const struct serial_regs *r)
{
	uint8_t m = r->mcr;

	if (!(m & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS;
	return (uint8_t)((m & MCR_DTR ? MSR_DSR : 0) |
			 (m & MCR_RTS ? MSR_CTS : 0) |
			 (m & MCR_OUT1 ? MSR_RI : 0) |
			 (m & MCR_OUT2 ? MSR_DCD : 0));
}

static void collect_line(struct serial *s, uint8_t c)
{
	if (c == '\n') {
		s->line[s->line_len] = '\0';
		s->line_len = 0;
		s->on_line(s->line_ctx, s->line);
	} else if (c != '\r' && s->line_len < SERIAL_LINE_MAX - 1) {
		s->line[s->line_len++] = (char)c;
	}
}

static void transmit(struct serial *s, uint8_t c)
{
	s->regs.thr_pending = 1; /* sent at once: the holding register is
				  * empty again */
	if (s->regs.mcr & MCR_LOOP)
		return;
	s->bytes_out++;
	if (s->on_line)
		collect_line(s, c);
	if (!s->out)
		return;
	fputc(c, s->out);
	if (c == '\n')
		fflush(s->out);
}

static uint8_t read_reg(struct serial *s, unsigned int reg)
{
	struct serial_regs *r = &s->regs;
	bool dlab = r->lcr & LCR_DLAB;
	uint8_t v;

	switch (reg) {
	case REG_DATA:
		return dlab ? r->dll : 0; /* no input: RBR reads empty */
	case REG_IER:
		return dlab ? r->dlm : r->ier;
	case REG_IIR:
		v = iir(r);
		if (v & IIR_THRI) /* reading IIR acknowledges THRE */
			r->thr_pending = 0;
		return v;
	case REG_LCR:
		return r->lcr;
	case REG_MCR:
		return r->mcr;
	case REG_LSR:
		return LSR_THRE | LSR_TEMT;
	case REG_MSR:
		return msr(r);
	default:
		return r->scr;
	}
}

static void write_reg(struct serial *s, unsigned int reg, uint8_t v)
{
	struct serial_regs *r = &s->regs;
	bool dlab = r->lcr & LCR_DLAB;

	switch (reg) {
	case REG_DATA:
		if (dlab)
			r->dll = v;
		else
			transmit(s, v);
		break;
	case REG_IER:
		if (dlab) {
			r->dlm = v;
			break;
		}
		/* Enabling THRI with the holding register empty raises it:
		 * the driver's startup test relies on that. */
		if ((v & IER_THRI) && !(r->ier & IER_THRI))
			r->thr_pending = 1;
		r->ier = v & IER_MASK;
		break;
	case REG_IIR:
		r->fcr = v;
		break;
	case REG_LCR:
		r->lcr = v;
		break;
	case REG_MCR:
		r->mcr = v & MCR_MASK;
		break;
	case REG_SCR:
		r->scr = v;
		break;
	default: /* LSR and MSR are read-only */
		break;
	}
}

static int serial_trap(struct vcpu *vcpu, const struct io_access *a,
		       void *opaque)
{
	struct serial *s = opaque;
	unsigned int reg = (unsigned int)(a->addr - s->port);
	int ret;

	(void)vcpu;
	pthread_mutex_lock(&s->lock);
	/* Wider accesses touch consecutive registers, as on the bus. */
	for (uint32_t i = 0; i < a->len && reg + i < NR_REGS; i++) {
		if (a->is_write)
			write_reg(s, reg + i, a->data[i]);
		else
			a->data[i] = read_reg(s, reg + i);
	}
	ret = update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return ret < 0 ? ret : IOTRAP_CONTINUE;
}

static size_t serial_state_size(const void *dev)
{
	(void)dev;
	return sizeof(struct serial_regs);
}

static int serial_save(const void *dev, void *buf, size_t len)
{
	struct serial *s = (struct serial *)dev;
	int ret = device__check_save("serial.com1", sizeof(s->regs), len);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&s->lock);
	memcpy(buf, &s->regs, sizeof(s->regs));
	pthread_mutex_unlock(&s->lock);
	return 0;
}

_Static_assert(offsetof(struct serial_regs, version) == 0,
	       "device__check_restore reads the version first");

static int serial_restore(void *dev, const void *buf, size_t len)
{
	struct serial *s = dev;
	int ret = device__check_restore("serial.com1", sizeof(s->regs),
					SERIAL_STATE_VERSION, buf, len);

	if (ret < 0)
		return ret;
	/* The IRQ line's level itself comes back with the irqchip. */
	pthread_mutex_lock(&s->lock);
	memcpy(&s->regs, buf, sizeof(s->regs));
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static const struct device_ops serial_ops = {
	.name = "serial.com1",
	.state_size = serial_state_size,
	.save = serial_save,
	.restore = serial_restore,
};

int serial__init_com1(struct serial *s, struct vm *vm, FILE *out)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->vm = vm;
	s->port = SERIAL_COM1_PORT;
	s->irq = SERIAL_COM1_IRQ;
	s->out = out;
	s->regs.version = SERIAL_STATE_VERSION;
	pthread_mutex_init(&s->lock, NULL);
	ret = iotrap__register(&vm->io, IO_SPACE_PIO, s->port, NR_REGS,
			       serial_trap, s, "serial.com1");
	if (ret == 0)
		ret = vm__add_device(vm, &serial_ops, s);
	if (ret < 0)
		pthread_mutex_destroy(&s->lock);
	return ret;
}

void serial__destroy(struct serial *s)
{
	if (s->out)
		fflush(s->out);
	pthread_mutex_destroy(&s->lock);
}
