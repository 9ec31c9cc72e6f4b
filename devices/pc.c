/* A Linux guest's PC devices: the CMOS clock, the i8042's reset line, the boot timer; their saved state. */
#include "devices.h"

#include <string.h>
#include <time.h>

#define CMOS_INDEX_PORT	 0x70
#define CMOS_DATA_PORT	 0x71
#define CMOS_NMI_MASK	 0x80 /* bit 7 of the index: NMI disable, not an address */
#define I8042_DATA_PORT	 0x60
#define I8042_CMD_PORT	 0x64
#define I8042_RESET	 0xfe /* pulse the CPU's reset line */
#define I8042_STR_NOCTRL 0x01 /* output full, input empty: see below */

static uint8_t bcd(int v)
{
	return (uint8_t)(((v / 10) << 4) | (v % 10));
}

/* An MC146818's registers from the host's clock: BCD, 24 hours, never updating. */
static uint8_t cmos_reg(uint8_t index)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	switch (index) {
	case 0x00:
		return bcd(tm.tm_sec);
	case 0x02:
		return bcd(tm.tm_min);
	case 0x04:
		return bcd(tm.tm_hour);
	case 0x06:
		return bcd(tm.tm_wday + 1);
	case 0x07:
		return bcd(tm.tm_mday);
	case 0x08:
		return bcd(tm.tm_mon + 1);
	case 0x09:
		return bcd(tm.tm_year % 100);
	case 0x32: /* the century */
		return bcd(19 + tm.tm_year / 100);
	case 0x0a: /* 32.768 kHz time base, 1024 Hz rate, UIP clear */
		return 0x26;
	case 0x0b: /* 24-hour, BCD, no interrupts */
		return 0x02;
	case 0x0d: /* the battery is good */
		return 0x80;
	default:
		return 0;
	}
}

static enum dev_action cmos_io(void *cookie, unsigned vcpu, uint64_t port, int is_write,
			       uint8_t *data, unsigned size)
{
	struct pc_devices *pc = cookie;

	(void)vcpu;
	pthread_mutex_lock(&pc->lock);
	if (port == CMOS_INDEX_PORT && is_write)
		pc->cmos_index = data[0] & (uint8_t)~CMOS_NMI_MASK;
	else if (port == CMOS_DATA_PORT && !is_write) {
		pc->n.cmos_reads++;
		memset(data, cmos_reg(pc->cmos_index), size);
	} else if (!is_write)
		memset(data, 0xff, size);
	pthread_mutex_unlock(&pc->lock);
	return DEV_CONTINUE;
}

/*
 * No keyboard, no mouse: only the reset line. Status reads "output full":
 * Linux's probe then drains 16 bytes of nothing and finds no controller at
 * once (a status of 0 would make it wait 10,000 reads for each reply), and
 * its reboot path, which waits for "input empty", writes 0xFE at once.
 */
static enum dev_action i8042_io(void *cookie, unsigned vcpu, uint64_t port, int is_write,
				uint8_t *data, unsigned size)
{
	struct pc_devices *pc = cookie;

	if (!is_write) {
		memset(data, port == I8042_CMD_PORT ? I8042_STR_NOCTRL : 0, size);
		return DEV_CONTINUE;
	}
	if (port == I8042_CMD_PORT && data[0] == I8042_RESET) {
		pc->host->reset(pc->host->cookie, vcpu, "i8042 reset: 0xFE to port 0x64");
		return DEV_STOP;
	}
	return DEV_CONTINUE;
}

static enum dev_action boot_timer_io(void *cookie, unsigned vcpu, uint64_t port,
				     int is_write, uint8_t *data, unsigned size)
{
	struct pc_devices *pc = cookie;
	int first = 0;

	(void)port;
	if (!is_write) {
		memset(data, 0xff, size);
		return DEV_CONTINUE;
	}
	pthread_mutex_lock(&pc->lock);
	if (size == 1 && data[0] == MVM_BOOT_TIMER_MAGIC)
		first = pc->n.boot_timer_writes++ == 0;
	else
		pc->n.boot_timer_other++;
	pthread_mutex_unlock(&pc->lock);
	if (first)
		pc->host->init_start(pc->host->cookie, vcpu);
	return DEV_CONTINUE;
}

int pc_devices_register(struct pc_devices *pc, const struct dev_host *host,
			struct io_bus *pio)
{
	const struct io_dev devs[] = {
		{ "cmos", CMOS_INDEX_PORT, 2, cmos_io, pc },
		{ "i8042-data", I8042_DATA_PORT, 1, i8042_io, pc },
		{ "i8042", I8042_CMD_PORT, 1, i8042_io, pc },
		{ "boot-timer", MVM_BOOT_TIMER_PORT, 1, boot_timer_io, pc },
	};
	int r = 0;

	pc->host = host;
	pthread_mutex_init(&pc->lock, NULL);
	for (unsigned i = 0; i < sizeof(devs) / sizeof(devs[0]) && !r; i++)
		r = io_bus_register(pio, &devs[i]);
	return r;
}

struct pc_counts pc_devices_counts(struct pc_devices *pc)
{
	struct pc_counts n;

	pthread_mutex_lock(&pc->lock);
	n = pc->n;
	pthread_mutex_unlock(&pc->lock);
	return n;
}

void pc_devices_get(struct pc_devices *pc, struct pc_devices_state *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&pc->lock);
	s->cmos_index = pc->cmos_index;
	s->n = pc->n;
	pthread_mutex_unlock(&pc->lock);
}

void pc_devices_set(struct pc_devices *pc, const struct pc_devices_state *s)
{
	pthread_mutex_lock(&pc->lock);
	pc->cmos_index = s->cmos_index & (uint8_t)~CMOS_NMI_MASK;
	pc->n = s->n;
	pthread_mutex_unlock(&pc->lock);
}
