/* The port-I/O registry: devices claim ranges, overlaps are refused. */
#include "devices.h"

#include <errno.h>

int pio_register(struct pio_bus *bus, const struct pio_dev *dev)
{
	uint32_t end = (uint32_t)dev->base + dev->len;

	if (dev->len == 0 || end > 0x10000 || !dev->io)
		return -EINVAL;
	for (unsigned i = 0; i < bus->n; i++) {
		const struct pio_dev *d = &bus->devs[i];

		if (dev->base < (uint32_t)d->base + d->len && d->base < end)
			return -EEXIST;
	}
	if (bus->n == PIO_MAX_DEVS)
		return -ENOSPC;
	bus->devs[bus->n++] = *dev;
	return 0;
}

const struct pio_dev *pio_find(const struct pio_bus *bus, uint16_t port)
{
	for (unsigned i = 0; i < bus->n; i++) {
		const struct pio_dev *d = &bus->devs[i];

		if (port >= d->base && port - d->base < d->len)
			return d;
	}
	return NULL;
}
