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

/* Workloads: argv[0] is the workload's name; each returns its exit status. */
struct workload {
	const char *name;
	const char *usage;
	int (*main)(int argc, const char *const *argv, const struct fw_info *info);
};
int hello_main(int argc, const char *const *argv, const struct fw_info *info);
int sweep_main(int argc, const char *const *argv, const struct fw_info *info);
int flat_main(int argc, const char *const *argv, const struct fw_info *info);
extern const struct workload test_workloads[];

#endif /* GUEST_H */
