/* minivmm's internal interfaces: configuration, the VM and its vCPUs, results. */
#ifndef MINIVMM_VMM_H
#define MINIVMM_VMM_H

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/kvm.h>

#include "minivmm_abi.h"
#include "devices.h"
#include "eager.h"
#include "mm.h"

/* Exit statuses of the minivmm process (documented in --help and README). */
enum {
	EXIT_GUEST_OK = 0,
	EXIT_GUEST_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_HOST = 3,
	EXIT_GUEST_CRASH = 4,
	EXIT_TIMEOUT = 5,
	EXIT_INTERRUPTED = 130,
};

#define MVM_DEFAULT_MEM_BYTES (1ULL << 30)
#define MVM_MIN_MEM_BYTES     (8ULL << 20)
#define MVM_MAX_MEM_BYTES     (1ULL << 40)
#define MVM_IMAGE_MAX_BYTES   (64ULL << 20)
#define NSEC_PER_SEC	      1000000000ULL
#define NSEC_PER_MSEC	      1000000ULL
#define MSEC_PER_SEC	      1000.0
#define BYTES_PER_GIB	      (1024.0 * 1024.0 * 1024.0)
#define KHZ_PER_MHZ	      1000ULL
#define HZ_PER_KHZ	      1000ULL

/* options.c */
struct config {
	uint64_t mem_bytes;
	unsigned vcpus;
	const char *results_path;
	double timeout_s; /* 0: none */
	int quiet;
	enum eager_strategy eager; /* EAGER_NONE unless --eager */
	unsigned eager_threads;	   /* 0: the vCPU threads do it */
	const struct mm_backend *backing;
	const char *trace_path; /* --trace: Chrome trace-event JSON */
	int compare;		/* --compare: lazy, then eager, side by side */
	int no_sandbox;		/* --no-sandbox */
	int strict_io; /* --strict-io: unclaimed port or MMIO access ends the run */
	double t_exec; /* main() entered: the first run's "exec" */
	const char *guest_path;
	int guest_argc;
	char **guest_argv;
};

/*
 * Parse argv into cfg. Returns 0 to run, 1 when --help or --version was
 * handled, or -1 after printing a usage error to stderr.
 */
int options_parse(int argc, char **argv, struct config *cfg);
/* "64M", "1G", "4096": bytes with an optional binary K/M/G/T suffix. 0 or -1. */
int parse_size(const char *s, uint64_t *out);

/* kvm.c: what /dev/kvm is. */
struct platform {
	char kvm[8];	  /* "pvm", "vmx", "svm" or "unknown" */
	int tdp;	  /* two-dimensional paging (EPT/NPT) in use */
	int pre_fault;	  /* KVM_CAP_PRE_FAULT_MEMORY */
	int stats_fd;	  /* KVM_CAP_BINARY_STATS_FD */
	int max_vcpus;	  /* KVM_CAP_MAX_VCPUS */
	uint32_t tsc_khz; /* KVM_GET_TSC_KHZ */
};

/* Outcome of a run: the first end reported wins. */
enum run_end {
	END_RUNNING = 0,
	END_GUEST_EXIT,	 /* exit hypercall */
	END_GUEST_CRASH, /* abort, shutdown, halt, emulation failure, ABI violation */
	END_HOST_ERROR,	 /* an ioctl or allocation failed on the host */
	END_TIMEOUT,
	END_INTERRUPTED,
	END_USAGE, /* the options or the image do not fit together */
};

struct vm;

struct vcpu {
	struct vm *vm;
	unsigned index;
	int fd;
	struct kvm_run *run;
	size_t run_size;
	pthread_t thread;
	int started;
	double t_run, t_done; /* the thread's run loop (for --trace) */
	/* COM1 / debug-console line buffer: one host write per line. */
	char line[256];
	size_t line_len;
};

/* results.c: everything a run measured; written even when the run fails. */
struct results {
	struct mvm_rec_touch *touch; /* --eager=touch: per vCPU, then MVM_VCPU_ALL */
	size_t ntouch;
	struct mvm_rec_sweep *sweep; /* as the guest sent them (times in TSC cycles) */
	size_t nsweep, capsweep;
};

struct json;

/* eager.c: one thread's share of eager population. */
struct eager_thread {
	struct vm *vm;
	unsigned index;
	unsigned vcpu; /* whose fd KVM_PRE_FAULT_MEMORY goes through */
	uint64_t gpa, bytes;
	double t0, t1;
	int err; /* -errno */
	int fell_back;
	struct prefault_stats pf;
	char what[64]; /* the step that failed */
};

struct eager_run {
	enum eager_strategy strategy; /* resolved: populate, prefault or touch */
	unsigned nthreads;
	int on_vcpu_threads; /* else dedicated threads (--eager-threads) */
	int progress_bar;    /* draw one on stderr (a terminal, big population) */
	struct eager_thread *th;
	uint64_t total_bytes;
	uint64_t done_bytes; /* atomic: progress */
	unsigned done;	     /* threads finished, under vm->lock */
	int go;		     /* vCPU threads may enter the guest, under vm->lock */
	double t_start, t_end;
	int64_t resident_bytes; /* guest RAM resident on the host after eager (mincore) */
};

/* timeline.c: phases on one clock (CLOCK_MONOTONIC; guest TSC via an anchor). */
#define TL_MAX_PHASES 32
struct tl_phase {
	char name[24];
	double t;	 /* when the phase ended (seconds, CLOCK_MONOTONIC) */
	int guest;	 /* marked by the guest (TSC) */
	uint64_t *stats; /* KVM counters then, or NULL (stats_count entries) */
};

struct timeline {
	struct tl_phase p[TL_MAX_PHASES];
	unsigned n;
	int anchored; /* guest TSC tsc0 was read at our time t_tsc0 */
	uint64_t tsc0;
	double t_tsc0;
};

struct tl_summary {
	double setup_ms, eager_ms, first_useful_work_ms, total_ms, first_pass_ms;
};

/* Process resources around a run (--compare checks that none leak). */
struct resources {
	int fds, threads;
};

struct unclaimed {
	uint64_t count;
	uint64_t first_addr; /* port or MMIO address of the first one */
	int first_write;
	int mmio;
};

struct vm {
	/* Fixed once setup is done. */
	const struct config *cfg;
	struct platform plat;
	int kvm_fd, vm_fd;
	struct guest_ram ram;
	struct mvm_image_header image;
	struct vcpu *vcpus;
	unsigned nvcpus;
	pthread_t main_thread;
	struct pio_bus pio;
	double t_start;		 /* this run's "exec" (CLOCK_MONOTONIC seconds) */
	struct kvm_stats *stats; /* NULL when KVM has no binary stats */
	int *stats_fd_list;	 /* the stats fds, for the sandbox (stats.c) */
	int nstats_fds;
	int sandbox;	  /* install the seccomp filters (not --no-sandbox) */
	int sandbox_main; /* ... on the main thread too (the last run of a process) */
	int out_fds[2];	  /* results and trace files, opened before the filter */
	int nout;
	struct resources res_before, res_after; /* --compare: around this run */

	/* Shared by the threads of a run: under lock, or atomics where noted. */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* eager progress and go */
	enum run_end end;    /* read without the lock by vm_stopping() */
	int status;	     /* guest's exit status, when end == END_GUEST_EXIT */
	const char *reason;  /* exit.reason in the results */
	char message[768];
	unsigned running; /* vCPU threads still in their run loop */
	uint64_t console_bytes, console_dropped;
	struct unclaimed pio_unclaimed, mmio_unclaimed;
	uint8_t com1_regs[8];
	struct eager_run eager;
	struct timeline tl;
	struct results res;
};

/* Guest TSC cycles as seconds, at the frequency KVM reported for this VM. */
static inline double cycles_to_s(const struct vm *vm, uint64_t cycles)
{
	return (double)cycles / ((double)vm->plat.tsc_khz * HZ_PER_KHZ);
}

/* kvm.c */
/* Open /dev/kvm (and check its API) / create the VM. 0, or -1 with the reason in err. */
int kvm_open(struct vm *vm, char *err, size_t errlen);
int kvm_create_vm(struct vm *vm, char *err, size_t errlen);
void platform_detect(struct vm *vm);
void platform_print(const struct vm *vm, FILE *f);

/* loader.c: validate and copy the image into guest RAM. errx-free: 0 or exit status. */
int loader_read(const char *path, uint8_t **buf, uint64_t *len, char *err, size_t errlen);
int loader_check(const uint8_t *buf, uint64_t len, uint64_t mem_bytes, unsigned vcpus,
		 struct mvm_image_header *hdr, char *err, size_t errlen);
void loader_entry_tables(struct guest_ram *ram);

/* bootinfo.c: the FDT at MVM_BOOTINFO_GPA. Returns 0 or a libfdt error (< 0). */
int bootinfo_build(void *buf, size_t size, uint64_t mem_bytes, unsigned vcpus,
		   uint32_t tsc_khz, int eager_touch, int argc, char **argv);

/* vcpu.c */
int vcpu_create(struct vm *vm, struct vcpu *v, unsigned index); /* 0 or -errno */
int vcpu_set_entry(struct vcpu *v, const struct kvm_cpuid2 *cpuid);
void vcpu_destroy(struct vcpu *v);
void *vcpu_thread(void *arg);
void vcpu_describe(struct vcpu *v, char *buf, size_t len);

/* exits.c: KVM exit dispatch. */
enum exit_action { EXIT_CONTINUE, EXIT_STOP };
enum exit_action exit_dispatch(struct vm *vm, struct vcpu *v);
const char *exit_reason_name(uint32_t reason);

/* run.c: run state shared by all threads. */
void vm_finish(struct vm *vm, enum run_end end, int status, const char *reason,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int vm_stopping(struct vm *vm);
void vm_vcpu_done(struct vm *vm, struct vcpu *v); /* a vCPU thread left its loop */
int vm_run(struct vm *vm); /* runs the guest to its end; returns the exit status */
double now_s(void);

/* eager.c */
/* Resolve the strategy and plan the slices. 0, or -1 with the reason in err. */
int eager_plan(struct vm *vm, char *err, size_t errlen);
int eager_host_side(const struct vm *vm); /* populate or prefault work to do */
void eager_work(struct vm *vm, struct eager_thread *t);
int eager_run_dedicated(struct vm *vm, const sigset_t *waitset);
int eager_wait(struct vm *vm, const sigset_t *waitset); /* 0, or -1 if the run ended */
void eager_vcpu_gate(struct vm *vm, struct vcpu *v);
void eager_report(const struct vm *vm, FILE *f);
void eager_write_json(const struct vm *vm, struct json *j);

/* stats.c: KVM_GET_STATS_FD of the VM and each vCPU (after vCPUs exist). */
struct kvm_stats;
int stats_open(struct vm *vm);	 /* 0 or -errno; vm->stats stays NULL on failure */
void stats_close(struct vm *vm); /* close the fds; names and samples stay readable */
void stats_free(struct vm *vm);
unsigned stats_count(const struct vm *vm);
int stats_fds(const struct vm *vm, int *fds, int max); /* how many were stored */
const char *stats_name(const struct vm *vm, unsigned i, int *cumulative);
int stats_sample(struct vm *vm, uint64_t *out); /* VM's, then vCPUs' summed */

/* timeline.c */
void timeline_mark(struct vm *vm, const char *name); /* a VMM phase ends now */
void timeline_mark_at(struct vm *vm, const char *name, double t, int guest);
void timeline_guest_entry(struct vm *vm, struct vcpu *v);
void timeline_guest_mark(struct vm *vm, uint32_t mark, uint64_t tsc);
const char *timeline_guest_mark_name(uint32_t mark);
double timeline_time(const struct vm *vm, const char *name); /* 0 if not reached */
void timeline_summary(const struct vm *vm, struct tl_summary *s);
void timeline_print(const struct vm *vm, FILE *f);
void timeline_write_json(const struct vm *vm, struct json *j);
void timeline_free(struct vm *vm);

/* compare.c: --compare's verdict, all from the two runs' measurements. */
struct verdict {
	int have_work; /* both runs marked their first useful work */
	double eager_cost_ms, setup_lazy_ms, setup_eager_ms;
	double first_pass_lazy_ms, first_pass_eager_ms, saved_ms;
	double fuw_lazy_ms, fuw_eager_ms;
	const char *sooner;
	double touched_bytes, ram_bytes;
	double break_even; /* fraction of RAM; < 0: never */
};
void compare_verdict(const struct vm *lazy, const struct vm *eager, struct verdict *v);
void compare_print(const struct vm *lazy, const struct vm *eager, FILE *f);
int compare_write_json(const struct vm *lazy, const struct vm *eager, FILE *f);

/* sandbox.c: seccomp allowlists (libseccomp), one per thread role. */
enum sandbox_role { SANDBOX_MAIN, SANDBOX_VCPU };
struct sandbox_fds {
	int vcpu_fd;	      /* SANDBOX_VCPU: the one vCPU this thread runs */
	const int *stats_fds; /* KVM stats fds the timeline samples */
	int nstats;
	const int *out_fds; /* SANDBOX_MAIN: results and trace files, opened already */
	int nout;
};
/* Build a role's filter (for tests) / build and load it on this thread. 0 or -errno. */
int sandbox_build(enum sandbox_role role, const struct sandbox_fds *f, void **ctx);
int sandbox_enter(enum sandbox_role role, const struct sandbox_fds *f);
void vm_sandbox_fds(const struct vm *vm, struct sandbox_fds *f, int vcpu_fd);

/* trace.c: Chrome trace events for n runs (one process track each). 0 or -errno. */
int trace_write(FILE *f, const struct vm *const *vms, const char *const *labels, int n);

/* results.c */
/* Keep a copy of n records and print their table to f (if not NULL). 0 or -errno. */
int results_add_sweep(struct vm *vm, const struct mvm_rec_sweep *recs, uint32_t n,
		      FILE *f);
int results_add_touch(struct vm *vm, const struct mvm_rec_touch *recs, uint32_t n);
/* Print the tables of one batch, unless an earlier batch's aggregates already did. */
void results_print_batch(const struct vm *vm, const struct mvm_rec_sweep *recs,
			 uint32_t n, const struct mvm_rec_sweep *earlier, size_t nearlier,
			 FILE *f);
int results_write_json(const struct vm *vm, FILE *f);
void results_write_obj(const struct vm *vm, struct json *j, const char *key);
int exit_status_of(const struct vm *vm);

#endif /* MINIVMM_VMM_H */
