/* The devices room: I/O buses, the console (COM1, port 0xE9) and the hypercall port. */
#ifndef MINIVMM_DEVICES_H
#define MINIVMM_DEVICES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "minivmm_abi.h"
#include "mm.h"

/*
 * Devices own their state and know nothing of the VMM above them: each
 * registers on a bus with a cookie (its own state), and what a device needs
 * from the VMM (ending the run, storing results) it asks through the
 * callbacks the VMM passes in (struct dev_host).
 */

/* What a device asks of the vCPU that made the access. */
enum dev_action {
	DEV_CONTINUE,
	DEV_STOP, /* this vCPU's run loop ends (the device ended the run, or parked it) */
};

/* One access of size bytes at addr; for reads the handler fills data. */
typedef enum dev_action (*io_fn)(void *cookie, unsigned vcpu, uint64_t addr, int is_write,
				 uint8_t *data, unsigned size);

struct io_dev {
	const char *name;
	uint64_t base, len;
	io_fn io;
	void *cookie; /* the device's state, passed to io */
};

/* Accesses no device claimed: counted, the first one remembered. */
struct io_unclaimed {
	uint64_t count;
	uint64_t first_addr;
	int first_write;
};

#define IO_BUS_MAX_DEVS 16
struct io_bus {
	uint64_t limit; /* addresses are below this (0x10000 for ports) */
	struct io_dev devs[IO_BUS_MAX_DEVS];
	unsigned n;
	pthread_mutex_t lock; /* unclaimed */
	struct io_unclaimed unclaimed;
};

void io_bus_init(struct io_bus *bus, uint64_t limit);
/* Add dev; -EEXIST when it overlaps a registered range, -ENOSPC when full, -EINVAL. */
__attribute__((warn_unused_result)) int io_bus_register(struct io_bus *bus,
							const struct io_dev *dev);
const struct io_dev *io_bus_find(const struct io_bus *bus, uint64_t addr);
/* Count an access nobody claims (reads then see all-ones, as on a real bus). */
void io_bus_unclaimed(struct io_bus *bus, uint64_t addr, int is_write);
/* A consistent copy of the unclaimed counts. */
struct io_unclaimed io_bus_unclaimed_counts(const struct io_bus *bus);

/* console.c: guest console output; bounded so a flood cannot exhaust the host. */
#define CONSOLE_LIMIT_BYTES (16ULL << 20)
struct console;
/* A console writing to out (nothing when quiet), one line buffer per vCPU. NULL: ENOMEM. */
struct console *console_create(unsigned nvcpus, FILE *out, int quiet);
/* COM1 (transmit only) and the debug console port 0xE9. 0 or -errno. */
__attribute__((warn_unused_result)) int console_register(struct console *c,
							 struct io_bus *pio);
void console_write(struct console *c, const char *buf, size_t len);
void console_flush(struct console *c, unsigned vcpu); /* a vCPU's partial line */
struct console_counts {
	uint64_t bytes;	  /* written */
	uint64_t dropped; /* past CONSOLE_LIMIT_BYTES */
	uint64_t irqs;	  /* COM1's interrupt line raised (console_set_irq) */
};
/*
 * COM1 gets an interrupt line (a Linux guest: IRQ 4): irq(cookie, line,
 * level) raises and lowers it as the 8250's transmit-empty interrupt
 * comes and goes. Before the guest runs.
 */
void console_set_irq(struct console *c,
		     void (*irq)(void *cookie, unsigned line, int level), void *cookie,
		     unsigned line);
struct console_counts console_counts(struct console *c);
/* COM1's registers and interrupt state: what a snapshot of a Linux guest keeps. Fixed layout. */
struct console_uart_state {
	uint8_t regs[8];
	uint8_t dl[2];	   /* the divisor latch */
	uint8_t thri;	   /* a THR-empty interrupt is pending */
	uint8_t irq_level; /* the line as last set */
	uint32_t pad;
};
void console_uart_get(struct console *c, struct console_uart_state *s);
/*
 * Set them before the guest runs, after its interrupt controllers: a line
 * saved high is raised again (KVM's IRQ line state is not in its
 * irqchip's; the 8250 driver takes a spurious edge as nothing to do).
 */
void console_uart_set(struct console *c, const struct console_uart_state *s);
/* The last (up to len) bytes the guest printed, quiet or not: how many were copied. */
size_t console_tail(struct console *c, char *buf, size_t len);
/* The first line of the guest's first oops ("BUG: ...", "Oops: ..."), NUL-ended; 0: none. */
size_t console_report(struct console *c, char *buf, size_t len);
void console_free(struct console *c);

/* hypercall.c: the hypercall port. */

/* The copy of a call's argument struct; an argument struct that does not fit fails the build. */
union hc_args {
	struct mvm_hc_hdr hdr;
#define HC_MEMBER(name, nr, type) type name;
	MVM_HC_LIST(HC_MEMBER)
#undef HC_MEMBER
	uint8_t bytes[MVM_HC_ARGS_MAX];
};

/* The records of one MVM_HC_RECORDS call, copied out of guest memory. */
union hc_records {
	struct mvm_rec_sweep sweep[MVM_RECORDS_MAX];
	struct mvm_rec_touch touch[MVM_RECORDS_MAX];
	struct mvm_rec_progress progress[MVM_RECORDS_MAX];
	struct mvm_rec_order order[MVM_RECORDS_MAX];
};

/*
 * A decoded call: the argument struct, and what it points to, copied (about
 * 80 KiB: it lives on the vCPU thread's stack for the one call).
 */
struct hc_call {
	union hc_args a;
	uint64_t
		gpa; /* where the guest's argument struct is (MVM_HC_SNAPSHOT writes its result) */
	struct mvm_zero_run runs[MVM_ZERO_RUNS_MAX]; /* MVM_HC_ZERO */
	union hc_records recs;			     /* MVM_HC_RECORDS */
};

/*
 * Copy and validate the hypercall whose argument struct is at gpa, for a
 * guest of nvcpus vCPUs. Pure (no VMM state): fuzzed and unit-tested.
 * Returns 0, or -EFAULT (outside guest RAM) / -EINVAL (anything else the
 * ABI forbids) with the violation described in err. On success every guest
 * range the call names lies in guest RAM, and what the handlers read of
 * guest memory was copied once into out (the argument struct, the zero
 * runs, the records: another vCPU cannot change what was checked).
 */
int hc_decode(const struct guest_ram *ram, unsigned nvcpus, uint64_t gpa,
	      struct hc_call *out, char *err, size_t errlen);
const char *hc_name(uint32_t nr); /* NULL for an unknown number */
/*
 * The per-record checks of one batch of n records of kind (copied, 8-aligned),
 * for a guest of nvcpus vCPUs: the ones every MVM_HC_RECORDS call passes, and
 * the ones a snapshot's saved batches pass again before --restore replays
 * them. Pure. 0, or -EINVAL with the record and what is wrong in err. The
 * rules that span batches (one order record per vCPU, before its points)
 * are the records store's (vmm/measure/records.c).
 */
int hc_records_check(uint32_t kind, const void *recs, uint32_t n, unsigned nvcpus,
		     char *err, size_t errlen);

/* What devices ask of the VMM that owns them (implemented by vmm/run/run.c). */
struct dev_host {
	void *cookie;
	const struct guest_ram *ram;
	unsigned nvcpus; /* the guest's: records name a vCPU below it */
	struct console *console;
	void (*exit)(void *cookie, unsigned vcpu, int32_t status);
	void (*abort)(void *cookie, unsigned vcpu, const char *what);
	void (*violation)(void *cookie, unsigned vcpu, const char *what);
	/* Keep n checked records (a copy); on failure the host ends the run and returns -errno. */
	int (*records)(void *cookie, unsigned vcpu, uint32_t kind, const void *recs,
		       uint32_t n);
	void (*mark)(void *cookie, unsigned vcpu, uint32_t mark, uint64_t tsc);
	/*
	 * The guest asks for a snapshot (the struct at result_gpa, checked to
	 * be guest RAM): the result to write into it now (MVM_SNAP_*); *stop
	 * set: this vCPU stops (the VM is pausing to be saved).
	 */
	uint32_t (*snapshot)(void *cookie, unsigned vcpu, const struct mvm_hc_snapshot *a,
			     uint64_t result_gpa, int *stop);
	/* Non-zero once the run is ending: long work for the guest stops early. */
	int (*stopping)(void *cookie);
	/* A PC guest's devices (pc.c): it reset the machine (why: what it did). */
	void (*reset)(void *cookie, unsigned vcpu, const char *why);
	/* The boot timer's first MVM_BOOT_TIMER_MAGIC: /init started. */
	void (*init_start)(void *cookie, unsigned vcpu);
};

/* Claim MVM_HC_PORT; host must outlive the bus. 0 or -errno. */
__attribute__((warn_unused_result)) int hypercalls_register(const struct dev_host *host,
							    struct io_bus *pio);

/* exitport.c: MVM_EXIT_PORT, the simplest way out for a hand-written guest. 0 or -errno. */
__attribute__((warn_unused_result)) int exitport_register(const struct dev_host *host,
							  struct io_bus *pio);

/*
 * pc.c: what a Linux guest needs of a PC besides the console: a CMOS clock
 * (ports 0x70/0x71, the host's UTC time, never "update in progress"), the
 * i8042's reset line (0xFE to port 0x64 ends the run: host->reset), and
 * the boot timer (MVM_BOOT_TIMER_PORT: host->init_start at the first
 * MVM_BOOT_TIMER_MAGIC, later writes counted).
 */
struct pc_counts {
	uint64_t cmos_reads;
	uint64_t boot_timer_writes; /* MVM_BOOT_TIMER_MAGIC written, the first included */
	uint64_t boot_timer_other;  /* other values written (ignored) */
};
struct pc_devices {
	const struct dev_host *host;
	pthread_mutex_t lock;
	uint8_t cmos_index;
	struct pc_counts n;
};
/* Register them; host and pc must outlive the bus. 0 or -errno. */
__attribute__((warn_unused_result)) int pc_devices_register(struct pc_devices *pc,
							    const struct dev_host *host,
							    struct io_bus *pio);
/* A copy of the counts, under the devices' lock. */
struct pc_counts pc_devices_counts(struct pc_devices *pc);
/* What a snapshot keeps of them (the i8042 has no state). Fixed layout. */
struct pc_devices_state {
	uint8_t cmos_index;
	uint8_t pad[7];
	struct pc_counts
		n; /* the boot timer's writes: /init started before the snapshot */
};
void pc_devices_get(struct pc_devices *pc, struct pc_devices_state *s);
void pc_devices_set(struct pc_devices *pc, const struct pc_devices_state *s);

#endif /* MINIVMM_DEVICES_H */
