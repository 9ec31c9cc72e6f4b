/* Guest console: the hypercall sink, a COM1 16550 transmit path and port 0xE9. */
#include "devices.h"

#include <stdlib.h>
#include <string.h>

#define LINE_BYTES 256

/* Byte-at-a-time devices buffer a line per vCPU: one host write per line, not per byte. */
struct line {
	char buf[LINE_BYTES];
	size_t len;
};

#define TAIL_BYTES   2048
#define REPORT_BYTES 240

struct console {
	FILE *out;
	int quiet;
	pthread_mutex_t lock; /* everything below */
	uint64_t bytes, dropped;
	char tail[TAIL_BYTES];	   /* the last output, kept even when quiet (a ring) */
	size_t tail_at;		   /* bytes ever put into tail */
	char report[REPORT_BYTES]; /* the first line a Linux guest's oops begins with */
	uint8_t com1_regs[8];
	uint8_t dl[2]; /* the divisor latch (DLL, DLM: DLAB set) */
	/* The 8250's transmit interrupt, for a guest given an IRQ line (console_set_irq). */
	void (*irq)(void *cookie, unsigned line, int level);
	void *irq_cookie;
	unsigned irq_num;
	int thri;      /* a THR-empty interrupt is pending (IIR would report it) */
	int irq_level; /* what the line was last set to */
	uint64_t irqs; /* times the line was raised */
	unsigned nvcpus;
	struct line lines[]; /* one per vCPU; each touched only by its vCPU's thread */
};

struct console *console_create(unsigned nvcpus, FILE *out, int quiet)
{
	struct console *c = calloc(1, sizeof(*c) + nvcpus * sizeof(c->lines[0]));

	if (!c)
		return NULL;
	c->out = out;
	c->quiet = quiet;
	c->nvcpus = nvcpus;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void console_free(struct console *c)
{
	free(c);
}

/*
 * The first line of a Linux guest's first oops: what went wrong, which the
 * panic that ends the run (its "Fatal exception") no longer says, and which
 * a long oops pushes out of the tail. Lines from COM1 come one per write.
 */
static const char *const report_marks[] = { "BUG: ", "Oops: ", "kernel BUG at ",
					    "general protection fault" };

static void note_report(struct console *c, const char *buf, size_t len)
{
	const char *m = NULL;
	size_t n;

	if (c->report[0])
		return;
	for (size_t i = 0; i < sizeof(report_marks) / sizeof(report_marks[0]) && !m; i++)
		m = memmem(buf, len, report_marks[i], strlen(report_marks[i]));
	if (!m)
		return;
	/* The whole line: back to its start (the kernel's timestamp), up to its end. */
	while (m > buf && m[-1] != '\n')
		m--;
	for (n = 0; m + n < buf + len && m[n] != '\n' && n < REPORT_BYTES - 1; n++)
		c->report[n] = m[n] == '\r' || m[n] == '\0' ? ' ' : m[n];
	while (n && c->report[n - 1] == ' ')
		n--;
	c->report[n] = '\0';
}

/* Everything the guest prints ends here; past CONSOLE_LIMIT_BYTES it is counted, not kept. */
void console_write(struct console *c, const char *buf, size_t len)
{
	size_t keep;

	pthread_mutex_lock(&c->lock);
	note_report(c, buf, len);
	keep = c->bytes >= CONSOLE_LIMIT_BYTES ? 0 : CONSOLE_LIMIT_BYTES - c->bytes;
	if (keep > len)
		keep = len;
	c->bytes += keep;
	c->dropped += len - keep;
	for (size_t i = len > TAIL_BYTES ? len - TAIL_BYTES : 0; i < len; i++)
		c->tail[c->tail_at++ % TAIL_BYTES] = buf[i];
	if (keep && !c->quiet) {
		fwrite(buf, 1, keep, c->out);
		fflush(c->out);
	}
	pthread_mutex_unlock(&c->lock);
}

void console_flush(struct console *c, unsigned vcpu)
{
	struct line *l;

	if (vcpu >= c->nvcpus)
		return;
	l = &c->lines[vcpu];
	if (l->len)
		console_write(c, l->buf, l->len);
	l->len = 0;
}

size_t console_report(struct console *c, char *buf, size_t len)
{
	size_t n;

	if (!len)
		return 0;
	pthread_mutex_lock(&c->lock);
	n = strnlen(c->report, sizeof(c->report));
	if (n >= len)
		n = len - 1;
	memcpy(buf, c->report, n);
	buf[n] = '\0';
	pthread_mutex_unlock(&c->lock);
	return n;
}

struct console_counts console_counts(struct console *c)
{
	struct console_counts n;

	pthread_mutex_lock(&c->lock);
	n = (struct console_counts){ c->bytes, c->dropped, c->irqs };
	pthread_mutex_unlock(&c->lock);
	return n;
}

size_t console_tail(struct console *c, char *buf, size_t len)
{
	size_t n, first;

	pthread_mutex_lock(&c->lock);
	n = c->tail_at < TAIL_BYTES ? c->tail_at : TAIL_BYTES;
	if (n > len)
		n = len;
	first = c->tail_at - n;
	for (size_t i = 0; i < n; i++)
		buf[i] = c->tail[(first + i) % TAIL_BYTES];
	pthread_mutex_unlock(&c->lock);
	return n;
}

static void put_byte(struct console *c, unsigned vcpu, uint8_t b)
{
	struct line *l;

	if (vcpu >= c->nvcpus)
		return;
	l = &c->lines[vcpu];
	l->buf[l->len++] = (char)b;
	if (b == '\n' || l->len == sizeof(l->buf))
		console_flush(c, vcpu);
}

#define UART_THR	 0 /* transmit holding register (write, DLAB = 0) */
#define UART_IER	 1
#define UART_IIR	 2 /* read; FCR on write */
#define UART_FCR	 2
#define UART_LCR	 3
#define UART_MCR	 4
#define UART_LSR	 5
#define UART_MSR	 6
#define UART_LCR_DLAB	 0x80
#define UART_LSR_THRE	 0x20
#define UART_LSR_TEMT	 0x40
#define UART_IER_THRI	 0x02
#define UART_IER_MASK	 0x0f
#define UART_IIR_NO_INT	 0x01
#define UART_IIR_THRI	 0x02
#define UART_IIR_FIFO	 0xc0 /* FIFOs enabled: a 16550A */
#define UART_FCR_ENABLE	 0x01
#define UART_MCR_LOOP	 0x10
#define UART_MCR_MASK	 0x1f
#define UART_MSR_PRESENT 0xb0 /* DCD, DSR, CTS: a line with something on it */

void console_set_irq(struct console *c, void (*irq)(void *, unsigned, int), void *cookie,
		     unsigned line)
{
	c->irq = irq;
	c->irq_cookie = cookie;
	c->irq_num = line;
}

/*
 * The interrupt line follows its cause: up while a THR-empty interrupt is
 * pending and enabled in IER, down otherwise (the IOAPIC sees each edge).
 * Called with c->lock held: the line's order is the registers' order.
 */
static void uart_update_irq(struct console *c)
{
	int level = c->thri && (c->com1_regs[UART_IER] & UART_IER_THRI);

	if (!c->irq || level == c->irq_level)
		return;
	c->irq_level = level;
	c->irqs += (uint64_t)level;
	c->irq(c->irq_cookie, c->irq_num, level);
}

void console_uart_get(struct console *c, struct console_uart_state *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&c->lock);
	memcpy(s->regs, c->com1_regs, sizeof(s->regs));
	memcpy(s->dl, c->dl, sizeof(s->dl));
	s->thri = (uint8_t)c->thri;
	s->irq_level = (uint8_t)c->irq_level;
	pthread_mutex_unlock(&c->lock);
}

void console_uart_set(struct console *c, const struct console_uart_state *s)
{
	pthread_mutex_lock(&c->lock);
	memcpy(c->com1_regs, s->regs, sizeof(c->com1_regs));
	memcpy(c->dl, s->dl, sizeof(c->dl));
	c->thri = s->thri != 0;
	c->irq_level = s->irq_level != 0;
	if (c->irq && c->irq_level)
		c->irq(c->irq_cookie, c->irq_num, 1);
	pthread_mutex_unlock(&c->lock);
}

/* Loopback (MCR bit 4): the modem inputs are the outputs, as the 8250 wires them. */
static uint8_t uart_msr(const struct console *c)
{
	uint8_t m = c->com1_regs[UART_MCR];

	if (!(m & UART_MCR_LOOP))
		return UART_MSR_PRESENT;
	return (uint8_t)(((m & 0x02) << 3) | ((m & 0x01) << 5) | ((m & 0x04) << 4) |
			 ((m & 0x08) << 4));
}

static uint8_t uart_read(struct console *c, unsigned reg)
{
	uint8_t v;

	/* DLL and DLM share RBR's and IER's slots. */
	if ((c->com1_regs[UART_LCR] & UART_LCR_DLAB) && reg <= UART_IER)
		return c->dl[reg];
	switch (reg) {
	case UART_IIR:
		v = (c->com1_regs[UART_FCR] & UART_FCR_ENABLE) ? UART_IIR_FIFO : 0;
		if (c->thri && (c->com1_regs[UART_IER] & UART_IER_THRI)) {
			v |= UART_IIR_THRI;
			c->thri = 0; /* reading IIR that reports it clears it */
		} else {
			v |= UART_IIR_NO_INT;
		}
		return v;
	case UART_LSR:
		return UART_LSR_THRE | UART_LSR_TEMT;
	case UART_MSR:
		return uart_msr(c);
	case UART_THR: /* RBR: nothing is ever received */
		return 0;
	default:
		return c->com1_regs[reg];
	}
}

/* Returns 1 when the write was a byte to transmit (THR). */
static int uart_write(struct console *c, unsigned reg, uint8_t v)
{
	int dlab = c->com1_regs[UART_LCR] & UART_LCR_DLAB;

	switch (reg) {
	case UART_THR:
		if (dlab)
			break;
		/* Writing THR clears the interrupt; the byte goes out at once, THR is empty again. */
		c->thri = 0;
		uart_update_irq(c);
		c->thri = 1;
		return 1;
	case UART_IER:
		if (dlab)
			break;
		/* Enabling THRI while THR is empty raises it (Linux's THRE test relies on it). */
		if ((v & UART_IER_THRI) && !(c->com1_regs[UART_IER] & UART_IER_THRI))
			c->thri = 1;
		c->com1_regs[UART_IER] = v & UART_IER_MASK;
		return 0;
	case UART_MCR:
		v &= UART_MCR_MASK;
		break;
	case UART_LSR:
	case UART_MSR:
		return 0; /* read-only */
	}
	/* DLL and DLM share THR's and IER's slots: with DLAB set they are kept there apart. */
	if (dlab && (reg == UART_THR || reg == UART_IER))
		c->dl[reg] = v;
	else
		c->com1_regs[reg] = v;
	return 0;
}

/*
 * A 16550A that only transmits: THR writes print, LSR always reads "empty",
 * the other registers keep what was written so drivers that probe them
 * (scratch register, LCR, loopback) see a UART; with an IRQ line
 * (console_set_irq) its transmit-empty interrupt is modelled.
 */
static enum dev_action com1_io(void *cookie, unsigned vcpu, uint64_t port, int is_write,
			       uint8_t *data, unsigned size)
{
	struct console *c = cookie;
	unsigned reg = (unsigned)(port - MVM_COM1_PORT);
	int thr = 0;

	(void)size;
	pthread_mutex_lock(&c->lock);
	if (is_write)
		thr = uart_write(c, reg, data[0]);
	else
		data[0] = uart_read(c, reg);
	uart_update_irq(c);
	pthread_mutex_unlock(&c->lock);
	if (thr)
		put_byte(c, vcpu, data[0]);
	return DEV_CONTINUE;
}

/* The QEMU/Bochs debug console: writes print, reads return 0xE9 (its presence check). */
static enum dev_action debugcon_io(void *cookie, unsigned vcpu, uint64_t port,
				   int is_write, uint8_t *data, unsigned size)
{
	struct console *c = cookie;

	(void)port;
	if (is_write) {
		for (unsigned i = 0; i < size; i++)
			put_byte(c, vcpu, data[i]);
	} else {
		memset(data, 0, size);
		data[0] = 0xe9;
	}
	return DEV_CONTINUE;
}

int console_register(struct console *c, struct io_bus *pio)
{
	const struct io_dev com1 = { "com1", MVM_COM1_PORT, 8, com1_io, c };
	const struct io_dev debugcon = { "debugcon", MVM_DEBUGCON_PORT, 1, debugcon_io,
					 c };
	int r = io_bus_register(pio, &com1);

	return r ? r : io_bus_register(pio, &debugcon);
}
