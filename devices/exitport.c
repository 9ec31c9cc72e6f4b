/* The exit port: a write ends the run with the written value as the guest's status. */
#include "devices.h"

#include <string.h>

/*
 * Like QEMU's isa-debug-exit at the same port, minus its encoding: the value
 * written (8, 16 or 32 bits) is the status, as the exit hypercall's. A guest
 * of twenty hand-written instructions can end cleanly with one OUT. Reads
 * return all-ones, as from a port nobody answers.
 */
static enum dev_action exit_io(void *cookie, unsigned vcpu, uint64_t port, int is_write,
			       uint8_t *data, unsigned size)
{
	const struct dev_host *h = cookie;
	uint32_t v = 0;

	if (!is_write) {
		memset(data, 0xff, size);
		return DEV_CONTINUE;
	}
	memcpy(&v, data, size < sizeof(v) ? size : sizeof(v));
	h->exit(h->cookie, vcpu, (int32_t)v);
	return DEV_STOP;
}

int exitport_register(const struct dev_host *host, struct io_bus *pio)
{
	const struct io_dev dev = { "exit", MVM_EXIT_PORT, 1, exit_io, (void *)host };

	return io_bus_register(pio, &dev);
}
