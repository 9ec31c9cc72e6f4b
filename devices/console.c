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

#define TAIL_BYTES 2048

struct console {
	FILE *out;
	int quiet;
	pthread_mutex_t lock; /* everything below */
	uint64_t bytes, dropped;
	char tail[TAIL_BYTES]; /* the last output, kept even when quiet (a ring) */
	size_t tail_at;	       /* bytes ever put into tail */
	uint8_t com1_regs[8];
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

/* Everything the guest prints ends here; past CONSOLE_LIMIT_BYTES it is counted, not kept. */
void console_write(struct console *c, const char *buf, size_t len)
{
	size_t keep;

	pthread_mutex_lock(&c->lock);
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

struct console_counts console_counts(struct console *c)
{
	struct console_counts n;

	pthread_mutex_lock(&c->lock);
	n = (struct console_counts){ c->bytes, c->dropped };
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

#define UART_THR      0 /* transmit holding register (write, DLAB = 0) */
#define UART_LCR      3
#define UART_LSR      5
#define UART_LCR_DLAB 0x80
#define UART_LSR_THRE 0x20
#define UART_LSR_TEMT 0x40

/*
 * A 16550 that only transmits: THR writes print, LSR always reads "empty",
 * the other registers keep what was written so drivers that probe them
 * (scratch register, LCR) see a UART.
 */
static enum dev_action com1_io(void *cookie, unsigned vcpu, uint64_t port, int is_write,
			       uint8_t *data, unsigned size)
{
	struct console *c = cookie;
	unsigned reg = (unsigned)(port - MVM_COM1_PORT);

	(void)size;
	pthread_mutex_lock(&c->lock);
	if (is_write) {
		int thr = reg == UART_THR && !(c->com1_regs[UART_LCR] & UART_LCR_DLAB);

		if (!thr)
			c->com1_regs[reg] = data[0];
		pthread_mutex_unlock(&c->lock);
		if (thr)
			put_byte(c, vcpu, data[0]);
		return DEV_CONTINUE;
	}
	data[0] = reg == UART_LSR ? UART_LSR_THRE | UART_LSR_TEMT : c->com1_regs[reg];
	pthread_mutex_unlock(&c->lock);
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
