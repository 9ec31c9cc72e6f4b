/* Guest console: the hypercall sink, a COM1 16550 transmit path and port 0xE9. */
#include "devices.h"

#include <string.h>
#include <unistd.h>

#include "vmm.h"

/* Everything the guest prints ends here; past CONSOLE_LIMIT_BYTES it is counted, not kept. */
void console_write(struct vm *vm, const char *buf, size_t len)
{
	size_t keep;

	pthread_mutex_lock(&vm->lock);
	keep = vm->console_bytes >= CONSOLE_LIMIT_BYTES
		       ? 0
		       : CONSOLE_LIMIT_BYTES - vm->console_bytes;
	if (keep > len)
		keep = len;
	vm->console_bytes += keep;
	vm->console_dropped += len - keep;
	if (keep && !vm->cfg->quiet) {
		fwrite(buf, 1, keep, stdout);
		fflush(stdout);
	}
	pthread_mutex_unlock(&vm->lock);
}

void console_flush_line(struct vm *vm, struct vcpu *v)
{
	if (v->line_len)
		console_write(vm, v->line, v->line_len);
	v->line_len = 0;
}

/* Byte-at-a-time devices buffer a line per vCPU: one host write per line, not per byte. */
static void put_byte(struct vm *vm, struct vcpu *v, uint8_t c)
{
	v->line[v->line_len++] = (char)c;
	if (c == '\n' || v->line_len == sizeof(v->line))
		console_flush_line(vm, v);
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
static int com1_io(struct vm *vm, struct vcpu *v, uint16_t port, int is_write,
		   uint8_t *data, unsigned size)
{
	uint8_t *regs = vm->com1_regs; /* guarded by vm->lock */
	unsigned reg = port - MVM_COM1_PORT;

	(void)size;
	pthread_mutex_lock(&vm->lock);
	if (is_write) {
		int thr = reg == UART_THR && !(regs[UART_LCR] & UART_LCR_DLAB);

		if (!thr)
			regs[reg] = data[0];
		pthread_mutex_unlock(&vm->lock);
		if (thr)
			put_byte(vm, v, data[0]);
		return 0;
	}
	data[0] = reg == UART_LSR ? UART_LSR_THRE | UART_LSR_TEMT : regs[reg];
	pthread_mutex_unlock(&vm->lock);
	return 0;
}

/* The QEMU/Bochs debug console: writes print, reads return 0xE9 (its presence check). */
static int debugcon_io(struct vm *vm, struct vcpu *v, uint16_t port, int is_write,
		       uint8_t *data, unsigned size)
{
	(void)port;
	if (is_write) {
		for (unsigned i = 0; i < size; i++)
			put_byte(vm, v, data[i]);
	} else {
		memset(data, 0, size);
		data[0] = 0xe9;
	}
	return 0;
}

int console_register(struct pio_bus *bus)
{
	static const struct pio_dev com1 = { "com1", MVM_COM1_PORT, 8, com1_io };
	static const struct pio_dev debugcon = { "debugcon", MVM_DEBUGCON_PORT, 1,
						 debugcon_io };
	int r = pio_register(bus, &com1);

	return r ? r : pio_register(bus, &debugcon);
}
