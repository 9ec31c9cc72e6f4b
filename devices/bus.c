/* I/O buses: devices claim address ranges (overlaps refused), the rest is counted. */
#include "devices.h"

#include <errno.h>

void io_bus_init(struct io_bus *bus, uint64_t limit)
{
	*bus = (struct io_bus){ .limit = limit };
	pthread_mutex_init(&bus->lock, NULL);
}

int io_bus_register(struct io_bus *bus, const struct io_dev *dev)
{
	uint64_t end;

	if (dev->len == 0 || !dev->io ||
	    __builtin_add_overflow(dev->base, dev->len, &end) || end > bus->limit)
		return -EINVAL;
	for (unsigned i = 0; i < bus->n; i++) {
		const struct io_dev *d = &bus->devs[i];

		if (dev->base < d->base + d->len && d->base < end)
			return -EEXIST;
	}
	if (bus->n == IO_BUS_MAX_DEVS)
		return -ENOSPC;
	bus->devs[bus->n++] = *dev;
	return 0;
}

const struct io_dev *io_bus_find(const struct io_bus *bus, uint64_t addr)
{
	for (unsigned i = 0; i < bus->n; i++) {
		const struct io_dev *d = &bus->devs[i];

		if (addr >= d->base && addr - d->base < d->len)
			return d;
	}
	return NULL;
}

void io_bus_unclaimed(struct io_bus *bus, uint64_t addr, int is_write)
{
	pthread_mutex_lock(&bus->lock);
	if (bus->unclaimed.count++ == 0) {
		bus->unclaimed.first_addr = addr;
		bus->unclaimed.first_write = is_write;
	}
	pthread_mutex_unlock(&bus->lock);
}

struct io_unclaimed io_bus_unclaimed_counts(const struct io_bus *bus)
{
	pthread_mutex_t *lock = (pthread_mutex_t *)&bus->lock; /* reading takes it too */
	struct io_unclaimed u;

	pthread_mutex_lock(lock);
	u = bus->unclaimed;
	pthread_mutex_unlock(lock);
	return u;
}
