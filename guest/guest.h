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
/* The workload's arguments are wrong: say how it is used, exit MVM_EXIT_USAGE (minivmm exits 2). */
_Noreturn void usage_exit(const char *usage);
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

/*
 * A workload option (lib.c): a flag (--NAME sets *flag to 1) or a number
 * (--NAME N, N in [min, max], stored in *num). Tables end at a NULL name.
 */
struct opt {
	const char *name;
	uint64_t *num;
	uint64_t min, max;
	int *flag;
};
/* argv[1..] against opts: 0, or -1 once it printed what is wrong and the usage. */
int parse_opts(const struct ctx *c, const struct opt *opts, const char *usage);

/*
 * snapshot.c: a workload's snapshot point (--snapshot-after N: after N
 * passes; with --snapshot and none given, before the first).
 */
#define SNAP_AFTER_NONE (~0ULL) /* --snapshot-after not given */
/* *after from the option (or the boot info's --snapshot): 0, or -1 once it said what is wrong. */
int snapshot_plan(const struct ctx *c, uint64_t *after, uint64_t iterations);
/*
 * vCPU 0, the others held: sign the pages a pass wrote, checksum them,
 * ask for the snapshot. MVM_SNAP_* (MVM_SNAP_RESTORED: this is the restored guest).
 */
uint32_t snapshot_take(const struct ctx *c, volatile char *region, uint64_t bytes,
		       uint64_t pass);
/* At the workload's end: the checksum again, compared (a mismatch fails the guest). */
void snapshot_check(const struct ctx *c);
/*
 * The restored guest after pass PASS: its first useful work is its next
 * pass (*useful_at), where the N vCPUs' frontiers FR restart; with no pass
 * left, it is now (marked).
 */
struct frontier;
void snapshot_restarted(struct frontier *fr, uint32_t n, uint64_t *useful_at,
			uint64_t pass, uint64_t iterations);

/* smp.c */
struct barrier {
	uint32_t count, gen;
};
void barrier_wait(struct barrier *b, uint32_t n); /* all n vCPUs meet here */
void eager_touch(const struct ctx *c);		  /* every vCPU, before the workload */
_Noreturn void park(void);			  /* this vCPU is done */
void mark(uint32_t what);			  /* MVM_MARK_*: a phase ended now */

/*
 * progress.c: the touch frontier of a first pass (struct mvm_rec_progress).
 * A vCPU's points live in guest memory and are written inside the timed
 * loop (a TSC read, no exit); vCPU 0 sends everyone's after the workload's
 * last measurement.
 */
#define PROGRESS_AUTO	     (~0ULL) /* --progress-mib not given */
#define PROGRESS_MAX_POINTS  65536   /* points per vCPU and pass */
#define PROGRESS_AUTO_POINTS 256     /* stride points per vCPU with the default stride */
struct frontier {
	struct mvm_rec_progress *pt; /* room for frontier_room(total, stride) points */
	uint32_t n, vcpu;
	uint64_t stride; /* bytes between points; 0: take none */
	uint64_t next;	 /* bytes_done of the next stride point */
	uint64_t done, total;
	uint32_t
		iteration; /* the pass it records (1; a restored guest's first pass after) */
};
/* Bytes between points: --progress-mib's, or the smallest power of two MiB giving <= 256. */
uint64_t progress_stride(uint64_t total, uint64_t asked_mib);
uint64_t frontier_room(uint64_t total,
		       uint64_t stride); /* points, start and end included */
/*
 * Room for n vCPUs' points, room each, written once now so that no store
 * in a timed loop meets a page the hypervisor has not backed; NULL when
 * room is 0 or memory is short.
 */
struct mvm_rec_progress *progress_buffer(uint32_t n, uint64_t room);
void frontier_init(struct frontier *f, struct mvm_rec_progress *buf, uint32_t vcpu,
		   uint64_t total, uint64_t stride);
/*
 * A restored guest records the frontier of its first pass after the
 * restore (pass `iteration`) instead: the points of the saved run's pass
 * are from before this run began.
 */
void frontier_restart(struct frontier *f, uint32_t iteration);
/* A point now: bytes_done `done`, the page written last at last_gpa. */
static inline void frontier_mark(struct frontier *f, uint64_t done, uint64_t last_gpa)
{
	f->pt[f->n++] = (struct mvm_rec_progress){ .vcpu = f->vcpu,
						   .iteration = f->iteration,
						   .bytes_done = done,
						   .bytes_total = f->total,
						   .tsc = rdtsc(),
						   .last_gpa = last_gpa };
	f->done = done;
}
/* Write v to one byte per page of [p, p + bytes) (or read it: TOUCH_READ), taking the points. */
#define TOUCH_READ (-1)
void frontier_touch(struct frontier *f, volatile char *p, uint64_t bytes, int v);
/* One byte per page of [p, p + bytes): v written, or (TOUCH_READ) read. */
void pages_touch(volatile char *p, uint64_t bytes, int v);
/* vCPU 0, after the last measurement: the order records, then every vCPU's points. */
void progress_send(const struct mvm_rec_order *orders, const struct frontier *fs,
		   uint32_t n);

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
	int snapshots; /* takes --snapshot-after: its own snapshot point */
};
int hello_main(int argc, const char *const *argv, const struct fw_info *info);
int sweep_main(const struct ctx *c);
int flat_main(const struct ctx *c);
int perm_main(const struct ctx *c);
/* sweep.c: measurement k of every vCPU (recs[v * per_cpu + k]) in one batch; see there. */
void send_measurement(const struct mvm_rec_sweep *recs, uint32_t n, uint32_t per_cpu,
		      uint32_t k, uint64_t map_cycles, uint64_t touch_cycles);
extern const struct workload test_workloads[];
/* faults.c: workloads of the demand-fault paths (listed in test_workloads) */
int demand_main(int argc, const char *const *argv, const struct fw_info *info);
int demand_paths_main(int argc, const char *const *argv, const struct fw_info *info);
int munmap_remap_main(int argc, const char *const *argv, const struct fw_info *info);
int fault_mix_main(int argc, const char *const *argv, const struct fw_info *info);
int smp_unmap_main(const struct ctx *c);
int smp_orphan_main(const struct ctx *c);

#endif /* GUEST_H */
