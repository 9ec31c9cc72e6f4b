/* Port-I/O devices: the registry, the hypercall port, COM1 and the debug console. */
#ifndef MINIVMM_DEVICES_H
#define MINIVMM_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "minivmm_abi.h"
#include "mm.h"

struct vm;
struct vcpu;

/* One port access; for reads the handler fills data. Returns 0 or a stop request (1). */
typedef int (*pio_fn)(struct vm *vm, struct vcpu *v, uint16_t port, int is_write,
		      uint8_t *data, unsigned size);

struct pio_dev {
	const char *name;
	uint16_t base, len;
	pio_fn io;
};

#define PIO_MAX_DEVS 8
struct pio_bus {
	struct pio_dev devs[PIO_MAX_DEVS];
	unsigned n;
};

/* Add dev to bus; -EEXIST when it overlaps a registered range, -ENOSPC when full. */
__attribute__((warn_unused_result)) int pio_register(struct pio_bus *bus,
						     const struct pio_dev *dev);
const struct pio_dev *pio_find(const struct pio_bus *bus, uint16_t port);
/* Register every device minivmm has. 0 or -errno. */
__attribute__((warn_unused_result)) int devices_register_all(struct pio_bus *bus);

/* hypercall.c: decoding is pure (no VM state) so it can be fuzzed and unit-tested. */
union hc_args {
	struct mvm_hc_hdr hdr;
	struct mvm_hc_console console;
	struct mvm_hc_exit exit;
	struct mvm_hc_abort abort;
	struct mvm_hc_records records;
	struct mvm_hc_mark mark;
	struct {
		struct mvm_hc_zero call;
		struct mvm_zero_run runs[MVM_ZERO_RUNS_MAX]; /* copied and checked */
	} zero;
};

/*
 * Copy and validate the hypercall whose argument struct is at gpa. Returns
 * 0, or -1 with a description of the ABI violation in err. On success every
 * guest range the call names (console buffer, records) lies in guest RAM.
 */
int hc_decode(const struct guest_ram *ram, uint64_t gpa, union hc_args *out, char *err,
	      size_t errlen);

/* console.c: guest console output; bounded so a flood cannot exhaust the host. */
#define CONSOLE_LIMIT_BYTES (16ULL << 20)
void console_write(struct vm *vm, const char *buf, size_t len);
__attribute__((warn_unused_result)) int console_register(struct pio_bus *bus);
void console_flush_line(struct vm *vm, struct vcpu *v);

#endif /* MINIVMM_DEVICES_H */
