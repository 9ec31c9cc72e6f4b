/* minivmm's process room: configuration, the VM and its vCPUs, and one measured run. */
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
#include "mm.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

/* Throughput in GiB/s; 0 for a zero or negative time. */
static inline double gib_per_s(double bytes, double s)
{
	return s > 0 ? bytes / BYTES_PER_GIB / s : 0;
}

/* ---- end.c: how a run ends. One table row per reason: name, exit status, meaning. */

/* Exit statuses of the minivmm process; exit_statuses[] describes each. */
enum {
	EXIT_GUEST_OK = 0,
	EXIT_GUEST_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_HOST = 3,
	EXIT_GUEST_CRASH = 4,
	EXIT_TIMEOUT = 5,
	EXIT_INTERRUPTED = 130,
};

struct exit_status_row {
	int status;
	const char *meaning; /* --help, README and the man page list these */
};
extern const struct exit_status_row exit_statuses[];
extern const unsigned exit_status_count;

/* Why a run ended: the first end reported wins. */
enum run_end {
	END_RUNNING,
	END_GUEST_EXIT,	   /* exit hypercall; the status depends on the guest's */
	END_GUEST_ABORT,   /* abort hypercall: failed assert or unhandled exception */
	END_GUEST_CRASH,   /* triple fault, emulation failure, entry failure, bad exit */
	END_GUEST_HALT,	   /* HLT: nothing ever wakes a minivmm vCPU */
	END_GUEST_PARKED,  /* every vCPU parked without the exit hypercall */
	END_ABI_VIOLATION, /* a hypercall or port access the ABI does not allow */
	END_UNCLAIMED_IO,  /* --strict-io */
	END_NOT_A_GUEST,   /* the image is not a minivmm guest for this ABI */
	END_TIMEOUT,
	END_INTERRUPTED,
	END_HOST_ERROR, /* an ioctl or allocation failed on the host */
	END_USAGE,	/* the options or the image do not fit together */
	END_COUNT
};

struct run_end_row {
	enum run_end end;
	const char *reason; /* exit.reason in the results */
	int status;	    /* the process exit status */
	const char *meaning;
};
extern const struct run_end_row run_ends[];
const struct run_end_row *run_end_row(enum run_end end);

/* ---- options.c ---------------------------------------------------------- */

enum eager_strategy {
	EAGER_NONE,	/* lazy: everything faults in on first touch */
	EAGER_AUTO,	/* prefault where KVM has it, else populate */
	EAGER_POPULATE, /* MADV_POPULATE_WRITE on each thread's slice */
	EAGER_PREFAULT, /* populate, then KVM_PRE_FAULT_MEMORY (TDP only) */
	EAGER_TOUCH,	/* each vCPU writes its slice in the guest before the workload */
	EAGER_STRATEGY_COUNT
};

struct eager_strategy_row {
	enum eager_strategy id;
	const char *name;
	const char *help[2]; /* --help lines (the second may be NULL) */
};
extern const struct eager_strategy_row eager_strategies[];
const char *eager_strategy_name(enum eager_strategy s);

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
	unsigned repeat; /* --repeat: measured runs (of each mode with --compare) */
	unsigned warmup; /* --warmup: runs before them, not counted */
	int no_sandbox;	 /* --no-sandbox */
	int strict_io;	 /* --strict-io: unclaimed port or MMIO access ends the run */
	int raw;	 /* --raw: a flat binary without the minivmm header */
	int explain;	 /* --explain: the tables' legend after the run */
	unsigned paging; /* enum paging_kind: --paging (PAGING_KERNEL) */
	unsigned uffd_threads;	/* --uffd-threads (0 until options_parse sets it) */
	unsigned uffd_delay_us; /* --uffd-delay-us */
	const char *record_touch_path; /* --record-touch FILE */
	const char *check_touch_path;  /* --check-touch FILE: check it, run nothing */
	double t_exec;		       /* main() entered: the first run's "exec" */
	const char *guest_path;
	int guest_argc;
	char **guest_argv;
	int argc; /* minivmm's own command line, for the environment record */
	char **argv;
};

/*
 * Parse argv into cfg. Returns 0 to run, 1 when --help or --version was
 * handled, or -EINVAL after printing a usage error to stderr.
 */
int options_parse(int argc, char **argv, struct config *cfg);
/* "64M", "1G", "4096": bytes with an optional binary K/M/G/T suffix. 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *out);
void options_usage(FILE *f); /* the --help text, built from the tables */
const char *options_default_guest(void);

/* ---- kvm.c: what /dev/kvm is ---------------------------------------------- */
struct platform {
	char kvm[8];	  /* "pvm", "vmx", "svm" or "unknown" */
	int tdp;	  /* two-dimensional paging (EPT/NPT) in use */
	int pre_fault;	  /* KVM_CAP_PRE_FAULT_MEMORY */
	int stats_fd;	  /* KVM_CAP_BINARY_STATS_FD */
	int max_vcpus;	  /* KVM_CAP_MAX_VCPUS */
	uint32_t tsc_khz; /* KVM_GET_TSC_KHZ */
};

/* ---- vm.c, vcpu.c, exits.c, end.c: the VM ------------------------------- */
struct vm;

struct vcpu {
	struct vm *vm;
	unsigned index;
	int fd;
	struct kvm_run *kvm_run;
	size_t run_size;
	pthread_t thread;
	int started;
	double t_run, t_done; /* the thread's run loop (for --trace) */
};

/*
 * What the owner of a VM does on each vCPU thread around its run loop
 * (eager population, the timeline's anchor, the sandbox, console flush).
 */
struct vm_hooks {
	void *cookie;
	void (*vcpu_enter)(void *cookie, struct vcpu *v); /* before the first KVM_RUN */
	void (*vcpu_leave)(void *cookie, struct vcpu *v); /* after the last */
};

struct vm {
	/* Fixed once setup is done. */
	int kvm_fd, vm_fd;
	struct platform plat;
	struct guest_ram ram;
	struct mvm_image_header image;
	struct vcpu *vcpus;
	unsigned nvcpus;
	struct io_bus pio, mmio; /* mmio has no devices: every access is unclaimed */
	int strict_io;
	int raw; /* a --raw image: each vCPU also gets a stack (MVM_RAW_STACK_TOP) */
	struct vm_hooks hooks;

	/* How the run ends: written once under lock (vm_finish), read by all threads. */
	pthread_mutex_t lock;
	pthread_t main_thread;
	enum run_end end; /* read without the lock by vm_stopping() */
	int status;	  /* guest's exit status, when end == END_GUEST_EXIT */
	char message[768];
	unsigned running; /* vCPU threads still in their run loop */
};

/* vm.c */
/* A VM with no KVM behind it yet: fds closed, lock ready. */
void vm_init(struct vm *vm);
/* Open /dev/kvm (and check its API) / create the VM. 0 or -errno with err set. */
int kvm_open(struct vm *vm, char *err, size_t errlen);
int kvm_create_vm(struct vm *vm, char *err, size_t errlen);
void platform_detect(struct vm *vm);
void platform_print(const struct platform *p, FILE *f);
/* Create nvcpus vCPUs in their entry state (the image is loaded). 0 or -errno with err set. */
int vm_create_vcpus(struct vm *vm, unsigned nvcpus, char *err, size_t errlen);
/* Close every KVM fd and unmap guest RAM; the vcpus array and the end stay. */
void vm_teardown(struct vm *vm);
void vm_free(struct vm *vm);

/* vcpu.c */
int vcpu_create(struct vm *vm, struct vcpu *v, unsigned index); /* 0 or -errno */
int vcpu_set_entry(struct vcpu *v, const struct kvm_cpuid2 *cpuid);
void vcpu_destroy(struct vcpu *v);
void vcpu_describe(struct vcpu *v, char *buf, size_t len);

/* exits.c: KVM exit dispatch. */
enum vcpu_action { VCPU_CONTINUE, VCPU_STOP };
enum vcpu_action exit_dispatch(struct vm *vm, struct vcpu *v);
const char *exit_reason_name(uint32_t reason);

/* end.c: the end of a run, shared by every thread. */
/* End the run (the first call wins): wake the main thread, kick every vCPU out of KVM_RUN. */
void vm_finish(struct vm *vm, enum run_end end, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int vm_stopping(struct vm *vm);
int vm_exit_status(const struct vm *vm);
const char *vm_end_reason(const struct vm *vm); /* "not-started" before setup ran */
void vm_wake_main(struct vm *vm);		/* from any thread */
/*
 * Main thread: sleep until done(cookie), calling tick(cookie) every
 * tick_s (if set). SIGINT/SIGTERM end the run as interrupted (a second
 * SIGINT exits at once); deadline (CLOCK_MONOTONIC seconds, 0: none) ends
 * it as timed out. Either way the wait goes on until done(cookie).
 */
void vm_wait_main(struct vm *vm, int (*done)(void *), void (*tick)(void *), void *cookie,
		  double tick_s, double deadline, double timeout_s);
/* Block the signals vm_wait_main takes; install the kick handler. old: to restore. */
void vm_signals_block(struct vm *vm, sigset_t *old);
/* Start one thread per vCPU (each runs hooks.vcpu_enter, KVM_RUN, hooks.vcpu_leave). */
void vm_start_vcpus(struct vm *vm);
/* Wait for the guest's end (or deadline), then stop and join every vCPU thread. */
void vm_run_to_end(struct vm *vm, double deadline, double timeout_s);
double now_s(void);

/* loader.c: read and check an image, copy it into guest RAM. */
/* Read the whole image. 0, or -errno with err set; *buf is the caller's to free. */
int loader_read(const char *path, uint8_t **buf, uint64_t *len, char *err, size_t errlen);
/*
 * Check buf is a guest this VMM can run in mem_bytes with vcpus vCPUs: 0
 * and *hdr, or -ENOEXEC (not a minivmm guest for this ABI) or -EINVAL (the
 * options do not fit it) with err set.
 */
int loader_check(const uint8_t *buf, uint64_t len, uint64_t mem_bytes, unsigned vcpus,
		 struct mvm_image_header *hdr, char *err, size_t errlen);
/*
 * A --raw image: a flat 64-bit binary loaded at MVM_LOAD_GPA and entered at
 * its first byte, with no header. Fills *hdr as if it had one. 0, or -EINVAL
 * (too big for mem_bytes, too many vCPUs) with err set.
 */
int loader_raw(uint64_t len, uint64_t mem_bytes, unsigned vcpus,
	       struct mvm_image_header *hdr, char *err, size_t errlen);
#define MVM_RAW_MAX_VCPUS 8
#define MVM_RAW_STACK_TOP MVM_BOOTINFO_GPA /* vCPU i: RSP = top - i * 4 KiB */
void loader_entry_tables(struct guest_ram *ram);

/* bootinfo.c: the FDT at MVM_BOOTINFO_GPA. 0, or -ENOSPC/-EINVAL with err set. */
struct bootinfo {
	uint64_t mem_bytes;
	unsigned vcpus;
	uint32_t tsc_khz;
	int eager_touch;
	int tdp; /* KVM builds the second level with EPT/NPT */
	int argc;
	char **argv;
};
int bootinfo_build(void *buf, size_t size, const struct bootinfo *b, char *err,
		   size_t errlen);

/* ---- kvmstats.c: KVM_GET_STATS_FD of the VM and each vCPU ----------------- */
struct kvm_stats;
/* Open the VM's and every vCPU's stats. 0 or -errno; *out stays NULL on failure. */
int kvmstats_open(const struct vm *vm, struct kvm_stats **out);
void kvmstats_close(struct kvm_stats *st); /* the fds; names stay readable */
void kvmstats_free(struct kvm_stats *st);
unsigned kvmstats_count(const struct kvm_stats *st);
const int *kvmstats_fds(const struct kvm_stats *st,
			unsigned *n); /* the VM's, the vCPUs' */
const char *kvmstats_name(const struct kvm_stats *st, unsigned i, int *cumulative);
int kvmstats_index(const struct kvm_stats *st, const char *name); /* -1: not there */
int kvmstats_sample(struct kvm_stats *st, uint64_t *out); /* VM's, then vCPUs' summed */
/*
 * A sample with the cumulative counters as deltas since the previous call
 * (gauges as they are now): what happened in between. 1 on the first call,
 * which only starts the count; 0, or -errno. Any thread.
 */
int kvmstats_since(struct kvm_stats *st, uint64_t *out);

/* ---- eager.c: --eager, one slice per thread, before the guest runs ------- */
struct eager;
/*
 * Resolve the strategy for this platform and plan the slices. 0 with *out
 * (NULL when lazy), or -errno with err set (a missing capability, RAM the
 * host cannot back).
 */
int eager_plan(const struct config *cfg, struct vm *vm, struct eager **out, char *err,
	       size_t errlen);
enum eager_strategy eager_strategy(const struct eager *e); /* EAGER_NONE for NULL */
int eager_host_side(const struct eager *e); /* populate or prefault work to do */
int eager_on_vcpu_threads(const struct eager *e);
/* Before any thread populates: what is resident already. */
void eager_begin(struct eager *e, struct vm *vm);
/* Every populating thread exists: they start together, and the clock with them. */
void eager_release(struct eager *e);
/* Main thread: run dedicated threads (--eager-threads) and wait for them. */
void eager_run_dedicated(struct eager *e, struct vm *vm);
/* vCPU thread: populate this vCPU's slice, then wait until the main thread says go. */
void eager_vcpu_gate(struct eager *e, struct vm *vm, struct vcpu *v);
/* Main thread: wait for the vCPU threads' slices, see what is resident, check them. */
void eager_wait(struct eager *e, struct vm *vm);
void eager_go(struct eager *e);		     /* let the vCPU threads into the guest */
double eager_seconds(const struct eager *e); /* host side; 0 before it ran */
double eager_end_time(const struct eager *e);
void eager_report(const struct eager *e, const struct config *cfg, FILE *f);
struct json;
/* The members of the results' "eager" object (the run adds a touch pass's). */
void eager_write_json(const struct eager *e, const struct config *cfg, struct json *j);
/* The eager threads' spans, for --trace: 0 at the end. */
int eager_span(const struct eager *e, unsigned i, double *t0, double *t1, unsigned *vcpu);
void eager_free(struct eager *e);

/* ---- timeline.c: phases on one clock, KVM counters at each boundary ------ */
struct timeline;
struct timeline *timeline_create(struct kvm_stats *stats,
				 uint32_t tsc_khz); /* NULL: ENOMEM */
/* Counters (once the vCPUs exist) and the TSC rate (once KVM told it); not owned. */
void timeline_attach(struct timeline *tl, struct kvm_stats *stats, uint32_t tsc_khz);
void timeline_mark(struct timeline *tl, const char *name); /* a VMM phase ends now */
void timeline_mark_at(struct timeline *tl, const char *name, double t, int guest);
/* On the first vCPU thread to its first KVM_RUN, just before it: anchor the guest's TSC. */
void timeline_guest_entry(struct timeline *tl, int vcpu_fd);
void timeline_guest_mark(struct timeline *tl, uint32_t mark, uint64_t tsc);
const char *timeline_guest_mark_name(uint32_t mark);
extern const char *const timeline_counters[]; /* the counters every table shows */
extern const unsigned timeline_ncounters;
double timeline_time(const struct timeline *tl, const char *name); /* 0 if not reached */
unsigned timeline_count(const struct timeline *tl);
/* Phase i: its name, when it ended, whether the guest marked it. */
const char *timeline_phase(const struct timeline *tl, unsigned i, double *t, int *guest);
/* Counter `name` during phase i (since the previous phase with counters). 0 if unknown. */
int timeline_delta(const struct timeline *tl, unsigned i, const char *name,
		   uint64_t *out);
/*
 * Milliseconds; negative: not measured (no eager, no first useful work
 * mark). eager_in_guest: --eager=touch, paid inside the workload's start,
 * not in setup.
 */
struct tl_summary {
	double setup_ms, eager_ms, first_useful_work_ms, total_ms, first_pass_ms;
	int eager_in_guest;
};
void timeline_summary(const struct timeline *tl, double eager_ms, struct tl_summary *s);
void timeline_print(const struct timeline *tl, const struct tl_summary *s, FILE *f);
void timeline_write_json(const struct timeline *tl, const struct tl_summary *s,
			 struct json *j);
void timeline_free(struct timeline *tl);

/* ---- results.c: what the guest reported -------------------------------- */
struct results;
struct results *results_create(void);			       /* NULL: ENOMEM */
void results_set_tsc_khz(struct results *r, uint32_t tsc_khz); /* the records' clock */
/*
 * Keep a copy of a batch of n records (checked, and copied once out of
 * guest memory) with KVM's counters during it (nkvm values in kvmstats
 * order, or NULL), and print what the batch completes of the tables to
 * print (if not NULL) while no other batch can move them. 0 or -errno.
 */
int results_add_sweep(struct results *r, const struct mvm_rec_sweep *recs, uint32_t n,
		      const uint64_t *kvm, unsigned nkvm, FILE *print);
/* The counters of record i's batch, if they are its own (see results.c); NULL if not. */
const uint64_t *results_kvm(const struct results *r, size_t i, unsigned *nkvm);
int results_add_touch(struct results *r, const struct mvm_rec_touch *recs, uint32_t n);
const struct mvm_rec_sweep *results_sweep(const struct results *r, size_t *n);
const struct mvm_rec_touch *results_touch(const struct results *r, size_t *n);
double results_seconds(const struct results *r, uint64_t cycles);
void results_free(struct results *r);

/* report.c: the tables a person reads. */
const char *sweep_workload_name(uint32_t workload);
const char *
sweep_mapping_name(const struct mvm_rec_sweep *r); /* demand, map_populate, direct_map */
/* The record a table cell shows: the all-vCPU aggregate if there is one, else vCPU 0's. */
const struct mvm_rec_sweep *
report_table_rec(const struct results *r, const struct mvm_rec_sweep *key, uint32_t mode);
/* Print what the batch of records from index `from` on completes of the OSv tables. */
void report_sweep_batch(const struct results *r, size_t from, FILE *f);
void report_touch(const struct results *r, FILE *f);

/* ---- env.c: the environment record in every results file ---------------- */
struct env;
/* What changes as runs go (memory, THP, hugetlb pools): at start. 0 or -ENOMEM. */
int env_start(const struct config *cfg, struct env **out);
/*
 * Kernel, CPU, KVM module parameters, version, command line: read and the
 * record rendered once, before the main thread's sandbox (opens files); a
 * no-op afterwards and for NULL.
 */
void env_complete(struct env *e);
void env_write_json(const struct env *e, struct json *j); /* as "environment" */
void env_free(struct env *e);

/* ---- summary.c: spreads of repeated measurements, numbers for people ------ */
struct spread {
	unsigned n;
	double median, min, max, q1, q3; /* quartiles: linear, as R's type 7 */
};
void spread_of(const double *samples, unsigned n, struct spread *s);
int spreads_overlap(const struct spread *a, const struct spread *b); /* [min, max] */
void spread_write_json(const struct spread *s, struct json *j, const char *key);
#define FMT_BYTES	 32
#define FMT_SPREAD_BYTES 112
/* v with `decimals` decimals, or more where needed for two significant digits. */
const char *fmt_value(char buf[FMT_BYTES], double v, int decimals);
/* text from column indent (the first line's indent already printed), wrapped at width. */
void print_wrapped(FILE *f, const char *text, int indent, int width);
/* "median [min-max]" (just the value for one sample, "-" for none). */
const char *fmt_spread(char buf[FMT_SPREAD_BYTES], const struct spread *s, int decimals);

/* ---- legend.c: what every column of every table means ------------------- */
enum legend_table {
	LEGEND_SWEEP,
	LEGEND_TIMELINE,
	LEGEND_COUNTERS,
	LEGEND_EAGER,
	LEGEND_REPEAT,
	LEGEND_VERDICT,
	LEGEND_TABLE_COUNT
};
struct legend_row {
	enum legend_table table;
	const char *column;
	const char *meaning;
};
extern const struct legend_row legend[];
extern const unsigned legend_count;
void legend_print(unsigned tables, FILE *f); /* tables: a mask of 1u << LEGEND_* */

/* ---- run.c: one measured run -------------------------------------------- */

/*
 * Output files, opened (and found writable) before anything runs: the
 * sandbox allows no open(2) later. -1 when not asked for.
 */
struct outputs {
	int results_fd, trace_fd;
	int fds[2], n; /* the open ones, for the sandbox */
};

/*
 * One VM from options to results: the VM, its devices, and the subsystems
 * that measure it, each owning its state. The run wires them together: it
 * is the devices' host (hypercalls) and the VM's hooks.
 */
struct run {
	const struct config *cfg;
	struct vm vm;
	struct console *console;
	struct dev_host hc;    /* the hypercall port's view of this run */
	struct eager *eager;   /* NULL when lazy */
	struct paging *paging; /* NULL with --paging kernel */
	struct kvm_stats *stats;
	struct timeline *tl;
	struct results *res;
	int entered;	/* a vCPU marked guest_entry (atomic) */
	uint8_t *image; /* the guest image, read and checked before KVM is opened */
	uint64_t image_len;
	double t_exec;
	int tables;  /* print the sweep tables as records arrive (one run, not repeats) */
	int verbose; /* also the platform, eager report, console and timeline */
	int sandbox; /* install the seccomp filters (not --no-sandbox) */
	int sandbox_main; /* ... on the main thread too (the last run of a process) */
	const struct outputs *out;
	struct env *env; /* completed before the main thread's sandbox */
};

struct run_opts {
	struct env *env; /* completed before the main thread's sandbox goes on */
	double t_exec;	 /* this run's "exec": main()'s entry for the first run */
	const struct outputs *out; /* the sandbox lets the main thread write these */
	int sandbox_main;	   /* this is the process's last run: sandbox main too */
	int tables, verbose;	   /* as in struct run */
};
/* Everything without KVM: devices wired, subsystems created. 0 or -ENOMEM. */
int run_init(struct run *r, const struct config *cfg, const struct run_opts *o);
/* Claim the devices' ports on the VM's bus. 0 or -errno. */
int run_register_devices(struct run *r);
/* Set up, run the guest to its end, tear the VM down. Returns the exit status. */
int run_execute(struct run *r);
/* What ended the run, unclaimed devices, dropped console output, the timeline. */
void run_report(struct run *r, int status, int timeline);
void run_summary(const struct run *r, struct tl_summary *s);
/* The run's members (config, platform, eager, sweep, timeline, summary, devices, exit). */
void run_write_members(const struct run *r, struct json *j);
void run_free(struct run *r);

/* ---- compare.c: --compare's verdict, from the runs' numbers ---------------- */
struct run_facts {
	struct tl_summary s;
	double touched_bytes; /* the first pass wrote */
	double ram_bytes;
};
void run_facts(const struct run *r, struct run_facts *f);
struct verdict {
	unsigned pairs; /* lazy/eager runs, adjacent in ABBA order */
	int have_work;	/* every run marked its first useful work */
	struct spread eager_cost_ms, setup_lazy_ms, setup_eager_ms;
	struct spread first_pass_lazy_ms, first_pass_eager_ms, fuw_lazy_ms, fuw_eager_ms;
	double saved_ms;      /* median first pass, lazy - eager */
	int saved_conclusive; /* the first-pass spreads do not overlap */
	const char *sooner; /* "lazy" or "eager": the smaller median first useful work */
	int sooner_conclusive;
	double touched_bytes, ram_bytes;
	struct spread
		break_even; /* fraction of RAM, over the pairs where eager saved time */
	unsigned never;	    /* pairs where eager saved no first-touch time */
};
/* From n lazy and n eager runs (pair i: lazy[i], eager[i]). Pure: unit-tested. */
void compare_verdict(const struct run_facts *lazy, const struct run_facts *eager,
		     unsigned n, struct verdict *v);
void verdict_print(const struct verdict *v, FILE *f);
void verdict_write_json(const struct verdict *v, struct json *j);

/* ---- aggregate.c: the measured runs of one mode, summed up --------------- */
struct run_set {
	const struct run *const *runs;
	unsigned n;
	const char *label;
};
void aggregate_print(const struct run_set *s, int sweep_tables, FILE *f);
void aggregate_write_json(const struct run_set *s, struct json *j); /* as s->label */
void compare_table_print(const struct run_set *lazy, const struct run_set *eager,
			 enum eager_strategy how, FILE *f);

/* ---- experiment.c: one run, --repeat N, --compare, in ABBA order ---------- */
int experiment_main(const struct config *cfg, struct env *env, const struct outputs *o);

/* ---- sandbox.c: seccomp allowlists (libseccomp), one per thread role ------ */
enum sandbox_role { SANDBOX_MAIN, SANDBOX_VCPU, SANDBOX_UFFD };
struct sandbox_fds {
	int vcpu_fd;	      /* SANDBOX_VCPU: the one vCPU this thread runs */
	int uffd_fd, stop_fd; /* SANDBOX_UFFD: its userfaultfd, the stop eventfd */
	const int *stats_fds; /* KVM stats fds the timeline samples */
	unsigned nstats;
	const int *out_fds; /* SANDBOX_MAIN: results and trace files, opened already */
	int nout;
};
/* Build a role's filter (for tests) / build and load it on this thread. 0 or -errno. */
int sandbox_build(enum sandbox_role role, const struct sandbox_fds *f, void **ctx);
int sandbox_enter(enum sandbox_role role, const struct sandbox_fds *f);

/* ---- trace.c: Chrome trace events for n runs (one process track each) ---- */
void trace_write(struct json *j, const struct run *const *runs, const char *const *labels,
		 int n);

/* ==== Added for userfaultfd paging (issue 22); new code in new files ======== */

/* ---- timeline.c: one more sampler at every mark ---------------------------- */
/* fn(cookie, i, t) runs under the timeline's lock as phase i, ending at t, is recorded. */
void timeline_set_sampler(struct timeline *tl,
			  void (*fn)(void *cookie, unsigned phase, double t),
			  void *cookie);

/* ---- paging.c: --paging kernel|uffd, the handlers' results, --check-touch -- */
enum paging_kind { PAGING_KERNEL, PAGING_UFFD, PAGING_KIND_COUNT };
struct paging_kind_row {
	enum paging_kind id;
	const char *name;
	const char *help[2]; /* --help lines (the second may be NULL) */
};
extern const struct paging_kind_row paging_kinds[];
const char *paging_kind_name(unsigned k);
/* One handler per vCPU, as far as guest RAM has 2 MiB slices (or huge pages) for them. */
unsigned paging_default_threads(const struct config *cfg);
/*
 * The options that go with --paging, once all are parsed (delay_given:
 * --uffd-delay-us was). Sets the default --uffd-threads. 0, or -EINVAL with
 * err set.
 */
int paging_check_options(struct config *cfg, int delay_given, char *err, size_t errlen);

struct paging;
/*
 * --paging uffd, before KVM is opened: the userfaultfds (one per handler),
 * the backing's mode, --record-touch's file; the timeline samples the
 * handlers' histograms from now on. *out NULL for --paging kernel. 0, or
 * -errno with err set: -EINVAL for a usage error (the record file), any
 * other for the host (exit 3).
 */
int paging_plan(const struct config *cfg, struct timeline *tl, struct paging **out,
		char *err, size_t errlen);
/* After the loader placed the guest (its pages never fault), before any vCPU runs. 0 or -errno with err. */
int paging_start(struct paging *pg, struct vm *vm, int sandbox, char *err, size_t errlen);
/* After the vCPUs are joined: stop the handlers, sum them up, write --record-touch. */
void paging_stop(struct paging *pg, double t_exec);
int paging_record_error(const struct paging *pg); /* -errno of writing the record, or 0 */
/* The fds the main thread writes after its sandbox is on (stop eventfd, record). Count. */
int paging_main_fds(const struct paging *pg, int *fds, int max);
void paging_report(const struct paging *pg, FILE *f); /* the summary line(s) */
void paging_write_json(const struct paging *pg, const struct config *cfg,
		       const struct timeline *tl, double t_exec, struct json *j);
void paging_free(struct paging *pg);
/* --check-touch FILE: read it as a replay would, against --mem. The exit status. */
int paging_check_touch(const struct config *cfg);

#endif /* MINIVMM_VMM_H */
