/* What firmware/ offers CPL3 workloads: system calls, libc subset, formatting. */
#ifndef FW_FIRMWARE_H
#define FW_FIRMWARE_H

#define FW_MAX_VCPUS 256 /* vCPUs the firmware has per-CPU state for */

#ifndef __ASSEMBLER__

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "minivmm_abi.h"

#define FW_MAX_ARGS	MVM_MAX_GUEST_ARGS
#define FW_ARGBUF_BYTES MVM_GUEST_ARGS_BYTES

/*
 * System calls: INT3, number in RAX, arguments in RDI, RSI, RDX, result in
 * RAX; RCX, R8-R11 are clobbered. (On PVM, INT $0x80 raises #UD and SYSCALL
 * does not reach CPL0; INT3 is delivered through the IDT on every platform.)
 */
enum fw_sys {
	SYS_WRITE = 1,	   /* (buf, len) -> len: one console hypercall per 4 KiB */
	SYS_EXIT = 2,	   /* (status): ends the VM */
	SYS_MMAP = 3,	   /* (len, flags) -> address or -errno */
	SYS_MUNMAP = 4,	   /* (addr, len) -> 0 or -errno */
	SYS_CLOCK = 5,	   /* () -> TSC */
	SYS_INFO = 6,	   /* (struct fw_info *) -> 0 */
	SYS_RECORDS = 7,   /* (kind, recs, count) -> 0: batched result records */
	SYS_STATS = 8,	   /* (struct fw_stats *) -> 0 */
	SYS_ABORT = 9,	   /* (file, line, msg): guest-detected failure, exit 4 */
	SYS_PHYS = 10,	   /* (len) -> direct-mapped never-used RAM, or -errno */
	SYS_PARK = 11,	   /* (): this vCPU is done; the VM runs on */
	SYS_MARK = 12,	   /* (mark, tsc): a phase of the run ended (MVM_MARK_*) */
	SYS_SNAPSHOT = 13, /* (checksum, pass) -> MVM_SNAP_*: save the VM here */
};

#define FW_MAP_POPULATE 0x1 /* map and zero every page before returning */

#define FW_ENOMEM 12
#define FW_EINVAL 22

/* --numa: one guest node, as the boot info's /numa/node@K says (minivmm_abi.h). */
struct fw_numa_node {
	uint64_t gpa, bytes;	/* its range of guest RAM */
	uint32_t vcpu0, nvcpus; /* its vCPUs: [vcpu0, vcpu0 + nvcpus) */
	uint32_t host_node;	/* the host node that holds it */
	uint32_t pad;
};

/* Boot facts for workloads; pointers stay valid for the whole run. */
struct fw_info {
	uint64_t mem_bytes;
	uint64_t free_bytes; /* physical memory the allocator can still hand out */
	uint64_t mmap_base;  /* where user mappings start */
	uint32_t vcpus;
	uint32_t tsc_khz;
	int argc;
	const char *const *argv;
	int eager_touch;     /* --eager=touch: touch every page before the workload */
	int snapshot;	     /* --snapshot: the VMM saves the VM when asked */
	uint32_t numa_nodes; /* --numa: guest nodes (0: none given) */
	const struct fw_numa_node *numa;
	const char *numa_policy; /* "bind", "preferred", "first-touch"; "" without */
};

/* Guest-side counters, kept by the firmware. */
struct fw_stats {
	uint64_t page_faults;  /* #PF handled in the mmap region */
	uint64_t pages_mapped; /* pages mapped into the mmap region, ever */
	uint64_t pages_freed;
	uint64_t pfn_sum; /* sum of frames mapped, ever: reuse check */
};

/* libc.c: what libfdt and the firmware need, nothing more. */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
int strcmp(const char *a, const char *b);
unsigned long strtoul(const char *s, char **end, int base);

/* fmt.c: %d %i %u %x %s %c %p %%, with l/ll/z, width, '-' and '0' flags. */
int fw_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int fw_snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* __ASSEMBLER__ */
#endif /* FW_FIRMWARE_H */
