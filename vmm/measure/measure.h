/* The measurement: KVM's counters, the timeline of phases, the guest's records, the environment, statistics. */
#ifndef MINIVMM_MEASURE_H
#define MINIVMM_MEASURE_H

/*
 * This room keeps what a run measured and computes from it; it prints and
 * writes nothing (the report room does). May include: measure/, machine/,
 * devices/, mm/, include/.
 */

#include "machine.h"

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

/* ---- timeline.c: phases on one clock, KVM counters at each boundary ------ */

/*
 * Every phase a run can reach, in the order a run reaches them. A phase is
 * named for the event that ends it and runs from the end of the one before.
 * phases[] has a row for each (name, who marks it, meaning); the guest's
 * marks (MVM_MARK_*) map onto their rows.
 */
enum phase {
	PHASE_EXEC, /* main() entered (or the run's start, after the first): the zero of the clock */
	PHASE_IMAGE_READ,
	PHASE_KVM_OPEN,
	PHASE_VM_CREATED,
	PHASE_RAM_MAPPED,
	PHASE_VCPUS_CREATED,
	PHASE_STATE_LOADED, /* --restore: the snapshot's state set on the vCPUs */
	PHASE_MEMORY_READY, /* --restore: the restore mode made guest RAM ready */
	PHASE_EAGER_DONE,
	PHASE_GUEST_LOADED,
	PHASE_GUEST_ENTRY,
	PHASE_GUEST_RESUMED, /* --restore: the first vCPU's first KVM_RUN */
	PHASE_INIT_START,
	PHASE_FIRMWARE_READY,
	PHASE_WORKLOAD_START,
	PHASE_FIRST_USEFUL_WORK,
	PHASE_WORKLOAD_END,
	PHASE_SNAPSHOT_SAVED, /* --snapshot: the snapshot written */
	PHASE_VM_EXIT,
	PHASE_COUNT
};

struct phase_row {
	enum phase id;
	const char *name;    /* in the tables and the results file */
	uint32_t guest_mark; /* MVM_MARK_* that ends it, or 0: the VMM marks it */
	const char *meaning; /* --explain and the docs */
};
extern const struct phase_row phases[];
const char *phase_name(enum phase p); /* "?" when out of range */
/* The phase a guest mark ends; PHASE_COUNT for an unknown mark. */
enum phase phase_of_guest_mark(uint32_t mark);

struct timeline;
struct timeline *timeline_create(void); /* NULL: ENOMEM */
/* Counters (once the vCPUs exist) and the TSC rate (once KVM told it); not owned. */
void timeline_attach(struct timeline *tl, struct kvm_stats *stats, uint32_t tsc_khz);
void timeline_mark(struct timeline *tl, enum phase p); /* a VMM phase ends now */
/* Phase p ends at time t (CLOCK_MONOTONIC s); the first mark of a phase wins. */
void timeline_mark_at(struct timeline *tl, enum phase p, double t, int guest);
/* On the first vCPU thread to its first KVM_RUN, just before it: anchor the guest's TSC. */
void timeline_guest_entry(struct timeline *tl, int vcpu_fd);
/* The same, marking p (PHASE_GUEST_RESUMED for a restored guest). */
void timeline_guest_entry_as(struct timeline *tl, int vcpu_fd, enum phase p);
void timeline_guest_mark(struct timeline *tl, uint32_t mark, uint64_t tsc);
/* A guest TSC value on our clock (CLOCK_MONOTONIC s); 0 without an anchor. Once the vCPUs are joined. */
double timeline_guest_time(const struct timeline *tl, uint64_t tsc);
/* When phase p ended (CLOCK_MONOTONIC s), 0 if it was not reached. */
double timeline_time(const struct timeline *tl, enum phase p);
/*
 * Time t (CLOCK_MONOTONIC s) as the reports give it: whole ns since exec,
 * rounded once per time. A duration between two times is the difference
 * of two of these, never a difference rounded, so that what is printed
 * adds up to the last digit (a phase's start + dur is its end, a summary
 * item the difference of the phase ends it spans).
 */
int64_t timeline_ns(const struct timeline *tl, double t);
double timeline_ms(const struct timeline *tl, double t); /* timeline_ns in ms */
double timeline_ms_between(const struct timeline *tl, double t0, double t1);
unsigned timeline_count(const struct timeline *tl); /* phases reached, in order */
/* The i-th phase reached: which, when it ended, whether the guest marked it. */
enum phase timeline_phase(const struct timeline *tl, unsigned i, double *t, int *guest);
/* The i-th phase of p, or -1 if p was not reached. */
int timeline_index(const struct timeline *tl, enum phase p);
const struct kvm_stats *timeline_stats(const struct timeline *tl);
/* The counters sampled when the i-th phase ended (kvmstats order), or NULL. */
const uint64_t *timeline_sample(const struct timeline *tl, unsigned i);
/* Counter k (or `name`) during the i-th phase (since the previous sample). 0 if unknown. */
int timeline_delta_k(const struct timeline *tl, unsigned i, unsigned k, uint64_t *out);
int timeline_delta(const struct timeline *tl, unsigned i, const char *name,
		   uint64_t *out);
/* The phase reached that was running at t: the first whose end is at or after t; PHASE_COUNT past them all. */
enum phase timeline_phase_at(const struct timeline *tl, double t);
/* fn(cookie, i, t) runs under the timeline's lock as phase i, ending at t, is recorded. */
void timeline_set_sampler(struct timeline *tl,
			  void (*fn)(void *cookie, unsigned phase, double t),
			  void *cookie);
void timeline_free(struct timeline *tl);

/* ---- records.c: what the guest reported -------------------------------- */
/*
 * Bounded by the ABI's guest limits (MVM_SWEEP_RECORDS_MAX, ...): past one,
 * an add fails with -E2BIG and err names the limit; the run ends
 * (guest-limit) and keeps what came before. Everything that reads the
 * records afterwards is linear in what was kept.
 */
struct records;
/* The store of a guest of nvcpus vCPUs (records name a vCPU below it); NULL: ENOMEM. */
struct records *records_create(unsigned nvcpus);
void records_set_tsc_khz(struct records *r, uint32_t tsc_khz); /* the records' clock */
/*
 * Keep a copy of a batch of n records (already copied out of guest memory
 * and checked) with KVM's counters during it (nkvm values in kvmstats
 * order, or NULL). 0, or -E2BIG past a limit, or -ENOMEM, with err set.
 * Any thread; the caller serializes a batch's add with its printing.
 */
int records_add_sweep(struct records *r, const struct mvm_rec_sweep *recs, uint32_t n,
		      const uint64_t *kvm, unsigned nkvm, char *err, size_t errlen);
/* The counters of record i's batch, if they are its own (see records.c); NULL if not. */
const uint64_t *records_kvm(const struct records *r, size_t i, unsigned *nkvm);
/* Index + 1 of the last vCPU 0 or all-vCPU record before record i's batch (0: none). */
size_t records_row_before(const struct records *r, size_t i);
int records_add_touch(struct records *r, const struct mvm_rec_touch *recs, uint32_t n,
		      char *err, size_t errlen);
/*
 * MVM_REC_PROGRESS or MVM_REC_ORDER records, kept once the ABI's rules that
 * span batches hold (records.c): 0, -EPROTO (a guest ABI violation, nothing
 * kept), -E2BIG, -ENOMEM, with err set.
 */
int records_add_progress(struct records *r, uint32_t kind, const void *recs, uint32_t n,
			 char *err, size_t errlen);
const struct mvm_rec_progress *records_progress(const struct records *r, size_t *n);
const struct mvm_rec_order *records_order(const struct records *r, size_t *n);
const struct mvm_rec_sweep *records_sweep(const struct records *r, size_t *n);
const struct mvm_rec_touch *records_touch(const struct records *r, size_t *n);
double records_seconds(const struct records *r, uint64_t cycles);
/*
 * The record a table cell shows for key's (workload, iteration, size) and
 * mode: the all-vCPU aggregate if there is one, else vCPU 0's; NULL if
 * neither came. The one place this rule lives.
 */
const struct mvm_rec_sweep *records_table_rec(const struct records *r,
					      const struct mvm_rec_sweep *key,
					      uint32_t mode);
void records_free(struct records *r);

const char *sweep_workload_name(uint32_t workload);
/* How the measured memory was mapped in the guest: demand, map_populate, direct_map. */
const char *sweep_mapping_name(const struct mvm_rec_sweep *r);

/* ---- env.c: the environment record in every results file ---------------- */
#define ENV_MAX_POOLS  4
#define ENV_MAX_PARAMS 256

struct env_param {
	char module[16], name[256], value[128];
};
/* Plain data: read by env_start()/env_sample()/env_complete(), written out by the report. */
struct env {
	int argc; /* minivmm's own command line */
	char **argv;
	time_t start;	     /* when main() began; formatted by env_complete() */
	char start_time[80]; /* "YYYY-MM-DDTHH:MM:SSZ"; sized for any int fields */
	/* Sampled before a run makes its RAM resident: what changes as runs come and go. */
	int sampled;
	uint64_t mem_total, mem_available;
	char thp_enabled[32], thp_defrag[32];
	struct {
		char size[32];
		uint64_t nr, free;
	} pool[ENV_MAX_POOLS];
	unsigned npools;
	/* Completed later: what does not change (kernel, CPU, KVM's module parameters). */
	int complete;
	char hostname[256];
	char kernel_release[65], kernel_version[65], machine[65]; /* struct utsname */
	char cpu_model[256], cpu_vendor[64], cpu_family[16], cpu_model_number[16],
		cpu_stepping[16];
	long online_cpus;
	struct env_param *param; /* ENV_MAX_PARAMS of them, allocated by env_complete() */
	unsigned nparams;
};
/*
 * The record, with the command line and the time only: nothing is read here,
 * so nothing of it is on the way to the guest's first instruction. 0 or -ENOMEM.
 */
int env_start(int argc, char **argv, struct env **out);
/*
 * Memory, THP, hugetlb pools: read once, before the run makes its RAM resident
 * (before eager population; for a lazy run, from env_complete()). NULL: no-op.
 */
void env_sample(struct env *e);
/*
 * The rest (start time, kernel, CPU, KVM module parameters, and env_sample()'s
 * part if not read yet): once, before the main thread's sandbox (opens files),
 * when the guest already runs; a no-op afterwards and for NULL.
 */
void env_complete(struct env *e);
void env_free(struct env *e);

/* ---- stats.c: spreads of repeated measurements -------------------------- */
struct spread {
	unsigned n;
	double median, min, max, q1, q3; /* quartiles: linear, as R's type 7 */
};
void spread_of(const double *samples, unsigned n, struct spread *s);
int spreads_overlap(const struct spread *a, const struct spread *b); /* [min, max] */

/* ---- summary.c: one run seen whole, and its summary numbers --------------- */

/* What the rooms above read of one run: each piece is owned by its room. */
struct linux_boot;
struct run_view {
	const struct vm_config *cfg;
	const struct vm *vm;
	const struct eager *eager;     /* NULL when lazy */
	const struct paging *paging;   /* NULL with --paging kernel */
	struct console *console;       /* read only; its counts take its lock */
	const struct kvm_stats *stats; /* NULL without KVM statistics */
	const struct timeline *tl;
	const struct records *rec;
	const struct snapshot_facts
		*snapshot;		     /* --snapshot: what it cost; NULL without */
	const struct restore_facts *restore; /* --restore: how it went; NULL without */
	const struct linux_boot
		*lx; /* --kernel: the Linux guest (vmm/boot/), else NULL */
	const struct pc_counts
		*pc; /* --kernel: its PC devices' counts at the end, else NULL */
};

/* The summary's numbers, ms; negative: not measured (no eager, a phase not reached). */
enum summary_item {
	SUM_SETUP,	       /* exec -> guest_entry */
	SUM_EAGER,	       /* host population, or --eager=touch's pass in the guest */
	SUM_FIRST_USEFUL_WORK, /* exec -> first_useful_work */
	SUM_FIRST_PASS,	       /* workload_start -> first_useful_work */
	SUM_TOTAL,	       /* exec -> vm_exit */
	SUM_COUNT
};
extern const char *const summary_names[]; /* "setup_ms", ...: in the results file */
struct tl_summary {
	double ms[SUM_COUNT];
	int eager_in_guest; /* --eager=touch: paid inside workload_start, not in setup */
	int eager_background; /* --eager=background: beside the guest, not in setup */
};
void run_summary(const struct run_view *v, struct tl_summary *s);

/* ---- frontiers.c: the host's populate frontier against the guest's touch frontier */

/* Bytes of the guest's first pass it touched no earlier than t (CLOCK_MONOTONIC s). */
struct cover_segment {
	uint64_t gpa, bytes;
	double t;
};
/* How much of the guest's first pass eager had populated before the guest got there. */
struct coverage {
	int known; /* eager ran and the guest sent its frontier */
	uint64_t
		covered; /* bytes populated (their whole chunk) before their segment began */
	uint64_t total;	 /* bytes of the guest's first pass */
	double fraction; /* covered / total */
	int sequential; /* segments between frontier points; else from the pass's start */
};
/*
 * Pure: chunk k of chunk_bytes was populated whole at chunk_ns[k] (ns; 0:
 * never); segment i's bytes count as covered where their chunk was done at
 * or before the segment's t. A lower bound of what eager covered first.
 */
void coverage_compute(const uint64_t *chunk_ns, uint64_t nchunks, uint64_t chunk_bytes,
		      const struct cover_segment *seg, size_t nseg, struct coverage *c);
/*
 * The segments of the first passes of no order records' vCPUs, from np
 * progress points (t[i]: point i's time, CLOCK_MONOTONIC s; <= 0 unknown,
 * left out), each order record's points in the order they came: the first
 * room of them into out (nothing past it, whatever the records are).
 * Returns how many there are. Pure.
 */
size_t cover_segments(const struct mvm_rec_order *o, size_t no,
		      const struct mvm_rec_progress *p, const double *t, size_t np,
		      struct cover_segment *out, size_t room);
/*
 * A run's: eager's chunks against the guest's first pass (its progress
 * and order records). A sequential pass gives a segment between each two
 * points (touched after the first of them); any other order one segment of
 * all its pages, from the pass's start. 0, or -ENOENT (nothing to compare).
 */
int run_coverage(const struct run_view *v, struct coverage *c);

/* ---- verdict.c: --compare's verdict, from the runs' numbers (pure) -------- */
struct run_facts {
	struct tl_summary s;
	double touched_bytes; /* the first pass wrote */
	double ram_bytes;
	double pf_taken; /* KVM's pf_taken in the first pass; -1 unknown */
	int uffd;	 /* --paging uffd: the handlers' faults in the first pass */
	double uffd_faults, uffd_p50_ns; /* -1 unknown */
	int restored; /* --restore: the setup ended at guest_resumed (restore latency) */
};
void run_facts(const struct run_view *v, struct run_facts *f);
/* The modes of a --compare ranked by first useful work, each with its spreads. */
#define RANKING_MAX_MODES 8
struct rank_row {
	const char *mode;
	unsigned runs;
	int have_work; /* every run marked its first useful work */
	struct spread fuw_ms, setup_ms, first_pass_ms, pf_taken;
	int uffd; /* --paging uffd runs: the handlers' first-pass faults, p50 */
	struct spread uffd_faults, uffd_p50_ns;
	int restored; /* every run a restore: setup_ms is its restore latency */
	/* Ahead of the next row with no overlap of the [min, max] spreads (not for the last). */
	int conclusive_vs_next;
	double ahead_ms; /* its median first useful work before the next's */
};
struct ranking {
	unsigned n;
	struct rank_row
		row[RANKING_MAX_MODES]; /* soonest first; modes without work last */
};

struct verdict {
	unsigned pairs; /* lazy/eager runs, pair i in round i of the order */
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
	int lazy_eager;	    /* the fields above were filled: lazy and eager both ran */
	struct ranking ranking; /* every mode */
	unsigned above_all; /* pairs whose break-even is above 1: eager never pays off */
};
/* From n lazy and n eager runs (pair i: lazy[i], eager[i]). Pure: unit-tested. */
void compare_verdict(const struct run_facts *lazy, const struct run_facts *eager,
		     unsigned n, struct verdict *v);
/*
 * Rank nmodes modes (mode m: its label, n[m] runs' facts in facts[m]) by
 * median first useful work; ties keep the modes' order. Pure: unit-tested.
 */
void compare_rank(const struct run_facts *const *facts, const unsigned *n,
		  const char *const *mode, unsigned nmodes, struct ranking *r);

#endif /* MINIVMM_MEASURE_H */
