/* The CPL3 side of the guest: system-call wrappers, output, and workload entries. */
#ifndef GUEST_H
#define GUEST_H

#include "firmware.h"
#include "minivmm_abi.h"

static inline long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int3"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r8", "r9", "r10", "r11", "memory");
	return ret;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* lib.c */
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void flush(void);
void write_out(const char *buf, uint64_t len); /* flush, then write buf as it is */
_Noreturn void exit(int status);
_Noreturn void fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define FAIL(...) fail(__FILE__, __LINE__, __VA_ARGS__)
int parse_u64(const char *s, uint64_t *out);
void *mmap_anon(uint64_t len, uint64_t flags); /* NULL on failure */
int munmap(void *addr, uint64_t len);
void get_info(struct fw_info *info);
void get_stats(struct fw_stats *st);
void send_records(uint32_t kind, const void *recs, uint32_t count);
void *phys_region(uint64_t len); /* never-used, direct-mapped RAM; NULL when short */

/* What an SMP workload's code on each vCPU knows. */
struct ctx {
	uint32_t cpu;
	int argc;
	const char *const *argv;
	const struct fw_info *info;
};

/* smp.c */
struct barrier {
	uint32_t count, gen;
};
void barrier_wait(struct barrier *b, uint32_t n); /* all n vCPUs meet here */
void eager_touch(const struct ctx *c);		  /* every vCPU, before the workload */
_Noreturn void park(void);			  /* this vCPU is done */
void mark(uint32_t what);			  /* MVM_MARK_*: a phase ended now */

/*
 * Workloads: argv[0] is the workload's name; main returns the exit status.
 * main runs on vCPU 0 while the others park; smp_main, where present, runs
 * on every vCPU (the return value of vCPU 0's counts).
 */
struct workload {
	const char *name;
	const char *usage;
	int (*main)(int argc, const char *const *argv, const struct fw_info *info);
	int (*smp_main)(const struct ctx *c);
};
int hello_main(int argc, const char *const *argv, const struct fw_info *info);
int sweep_main(const struct ctx *c);
int flat_main(const struct ctx *c);
extern const struct workload test_workloads[];
/* faults.c: workloads of the demand-fault paths (listed in test_workloads) */
int demand_main(int argc, const char *const *argv, const struct fw_info *info);
int demand_paths_main(int argc, const char *const *argv, const struct fw_info *info);
int munmap_remap_main(int argc, const char *const *argv, const struct fw_info *info);
int fault_mix_main(int argc, const char *const *argv, const struct fw_info *info);
int smp_unmap_main(const struct ctx *c);
int smp_orphan_main(const struct ctx *c);

#endif /* GUEST_H */
