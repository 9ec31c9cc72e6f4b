/* The timeline: phases of a run on one clock, with KVM counters sampled at each boundary. */
#include "measure.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define MSR_IA32_TSC 0x10

/* In enum order: phase_name() indexes it, and the unit tests check each row's id. */
const struct phase_row phases[] = {
	{ PHASE_EXEC, "exec", 0,
	  "main() entered, or the run started (later runs of --repeat): the zero of the clock" },
	{ PHASE_IMAGE_READ, "image_read", 0, "the guest image read and checked" },
	{ PHASE_KVM_OPEN, "kvm_open", 0, "/dev/kvm opened and its API checked" },
	{ PHASE_VM_CREATED, "vm_created", 0, "KVM_CREATE_VM" },
	{ PHASE_RAM_MAPPED, "ram_mapped", 0,
	  "guest RAM mapped from its backing and registered as a memslot" },
	{ PHASE_VCPUS_CREATED, "vcpus_created", 0,
	  "every vCPU created in its entry state, KVM's counters opened" },
	{ PHASE_STATE_LOADED, "state_loaded", 0,
	  "--restore: the snapshot's state file read and checked, every vCPU's state set" },
	{ PHASE_MEMORY_READY, "memory_ready", 0,
	  "--restore: guest RAM holds the memory file's content, or will on demand (the restore mode's work before the vCPUs resume)" },
	{ PHASE_EAGER_DONE, "eager_done", 0, "--eager populate or prefault finished" },
	{ PHASE_GUEST_LOADED, "guest_loaded", 0,
	  "the image, boot info and entry page tables written into guest RAM" },
	{ PHASE_GUEST_ENTRY, "guest_entry", 0,
	  "the first vCPU about to enter the guest (its first KVM_RUN): setup ends here" },
	{ PHASE_GUEST_RESUMED, "guest_resumed", 0,
	  "--restore: the first vCPU about to resume the saved guest (its first KVM_RUN): restore latency ends here" },
	{ PHASE_INIT_START, "init_start", 0,
	  "a Linux guest's /init started: its first write of 123 to the boot timer (port 0x514); the kernel's boot ends here" },
	{ PHASE_FIRMWARE_READY, "firmware_ready", MVM_MARK_FIRMWARE_READY,
	  "the firmware booted (emulated CPL0 on PVM), about to enter CPL3" },
	{ PHASE_WORKLOAD_START, "workload_start", MVM_MARK_WORKLOAD_START,
	  "the workload started (--eager=touch's pass runs inside it)" },
	{ PHASE_FIRST_USEFUL_WORK, "first_useful_work", MVM_MARK_FIRST_USEFUL_WORK,
	  "the workload's first full pass over its memory done" },
	{ PHASE_WORKLOAD_END, "workload_end", MVM_MARK_WORKLOAD_END,
	  "the workload finished (the rest of its passes)" },
	{ PHASE_SNAPSHOT_SAVED, "snapshot_saved", 0,
	  "--snapshot: every vCPU paused, the state and memory files written and renamed into place" },
	{ PHASE_VM_EXIT, "vm_exit", 0,
	  "the guest stopped and every vCPU thread was joined" },
};
_Static_assert(ARRAY_SIZE(phases) == PHASE_COUNT, "one row per enum phase, in order");

const char *phase_name(enum phase p)
{
	return p < PHASE_COUNT ? phases[p].name : "?";
}

enum phase phase_of_guest_mark(uint32_t mark)
{
	for (unsigned i = 0; mark && i < PHASE_COUNT; i++)
		if (phases[i].guest_mark == mark)
			return phases[i].id;
	return PHASE_COUNT;
}

#define TL_MAX_PHASES 32

/* A phase ends at a mark: its name, the time, and KVM's counters then. */
struct tl_phase {
	enum phase id;
	double t;	 /* when the phase ended (seconds, CLOCK_MONOTONIC) */
	int guest;	 /* marked by the guest (TSC) */
	uint64_t *stats; /* KVM counters then, or NULL (kvmstats_count entries) */
};

struct timeline {
	struct kvm_stats *stats; /* not owned */
	uint32_t tsc_khz;
	pthread_mutex_t lock; /* marks come from the main and the vCPU threads */
	struct tl_phase p[TL_MAX_PHASES];
	unsigned n;
	/*
	 * Every phase's counters, allocated when they are attached (main thread):
	 * a vCPU thread marking guest_entry allocates nothing, so it creates no
	 * malloc arena of its own (mmap, munmap, faults) on its way to KVM_RUN.
	 */
	uint64_t *store;
	unsigned nstore; /* counters per phase in store */
	int anchored;	 /* guest TSC tsc0 was read at our time t_tsc0 */
	uint64_t tsc0;
	double t_tsc0;
	void (*sampler)(void *cookie, unsigned phase,
			double t); /* timeline_set_sampler */
	void *sampler_cookie;
};

struct timeline *timeline_create(void)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	pthread_mutex_init(&tl->lock, NULL);
	return tl;
}

/* The counters appear once the vCPUs exist; the TSC rate once KVM told it. */
void timeline_attach(struct timeline *tl, struct kvm_stats *stats, uint32_t tsc_khz)
{
	unsigned n = kvmstats_count(stats);
	uint64_t *store = n ? calloc((size_t)TL_MAX_PHASES * n, sizeof(*store)) : NULL;

	pthread_mutex_lock(&tl->lock);
	tl->stats = stats;
	tl->tsc_khz = tsc_khz;
	if (store && !tl->store) {
		tl->store = store;
		tl->nstore = n;
		store = NULL;
	}
	pthread_mutex_unlock(&tl->lock);
	free(store);
}

void timeline_set_sampler(struct timeline *tl,
			  void (*fn)(void *cookie, unsigned phase, double t),
			  void *cookie)
{
	pthread_mutex_lock(&tl->lock);
	tl->sampler = fn;
	tl->sampler_cookie = cookie;
	pthread_mutex_unlock(&tl->lock);
}

static int in_store(const struct timeline *tl, const uint64_t *stats)
{
	return tl->store && stats >= tl->store &&
	       stats < tl->store + (size_t)TL_MAX_PHASES * tl->nstore;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	for (unsigned i = 0; i < tl->n; i++)
		if (!in_store(tl, tl->p[i].stats))
			free(tl->p[i].stats);
	free(tl->store);
	free(tl);
}

int timeline_index(const struct timeline *tl, enum phase p)
{
	for (unsigned i = 0; i < tl->n; i++)
		if (tl->p[i].id == p)
			return (int)i;
	return -1;
}

/* Record phase p ending at time t (first occurrence wins), with the counters now. */
void timeline_mark_at(struct timeline *tl, enum phase p_id, double t, int guest)
{
	struct tl_phase *p;
	unsigned nstats;

	pthread_mutex_lock(&tl->lock);
	nstats = kvmstats_count(tl->stats);
	if (tl->n == TL_MAX_PHASES || p_id >= PHASE_COUNT ||
	    timeline_index(tl, p_id) >= 0) {
		pthread_mutex_unlock(&tl->lock);
		return;
	}
	/*
	 * A phase never ends before the one recorded before it: a host mark's
	 * time is read before this lock, and a guest mark's is converted from
	 * its TSC (good to the anchor's window). Either can land a hair before
	 * its predecessor; the boundary is then the predecessor's.
	 */
	if (tl->n && t < tl->p[tl->n - 1].t)
		t = tl->p[tl->n - 1].t;
	p = &tl->p[tl->n++];
	memset(p, 0, sizeof(*p));
	p->id = p_id;
	p->t = t;
	p->guest = guest;
	if (nstats) {
		p->stats = tl->store && tl->nstore == nstats
				   ? tl->store + (size_t)(tl->n - 1) * nstats
				   : calloc(nstats, sizeof(*p->stats));
		if (p->stats && kvmstats_sample(tl->stats, p->stats)) {
			if (!in_store(tl, p->stats))
				free(p->stats);
			p->stats = NULL;
		}
	}
	if (tl->sampler)
		tl->sampler(tl->sampler_cookie, tl->n - 1, t);
	pthread_mutex_unlock(&tl->lock);
}

void timeline_mark(struct timeline *tl, enum phase p)
{
	timeline_mark_at(tl, p, now_s(), 0);
}

static double tsc_seconds(const struct timeline *tl, uint64_t cycles)
{
	return (double)cycles / ((double)tl->tsc_khz * HZ_PER_KHZ);
}

/*
 * The guest's clock is its TSC. Read it through KVM (MSR_IA32_TSC) just
 * before the first KVM_RUN and pair it with our clock: that anchor turns
 * every guest TSC value into our time (KVM keeps the vCPUs' TSCs in step).
 * The anchor is off by up to half the read's window, which a preempted
 * thread can stretch to a millisecond on a busy machine: of a few reads, the
 * narrowest window is kept. Called on the first vCPU thread to reach its
 * first KVM_RUN.
 */
#define TSC_ANCHOR_READS 4

void timeline_guest_entry(struct timeline *tl, int vcpu_fd)
{
	timeline_guest_entry_as(tl, vcpu_fd, PHASE_GUEST_ENTRY);
}

void timeline_guest_entry_as(struct timeline *tl, int vcpu_fd, enum phase p)
{
	struct {
		struct kvm_msrs m;
		struct kvm_msr_entry e;
	} msr = { .m.nmsrs = 1, .e.index = MSR_IA32_TSC };
	double t0, t1 = 0, best = -1, t_tsc0 = 0;
	uint64_t tsc0 = 0;

	for (unsigned i = 0; i < TSC_ANCHOR_READS; i++) {
		t0 = now_s();
		if (ioctl(vcpu_fd, KVM_GET_MSRS, &msr) != 1)
			break;
		t1 = now_s();
		if (best < 0 || t1 - t0 < best) {
			best = t1 - t0;
			tsc0 = msr.e.data;
			t_tsc0 = (t0 + t1) / 2;
		}
	}
	pthread_mutex_lock(&tl->lock);
	tl->anchored = best >= 0;
	tl->tsc0 = tsc0;
	tl->t_tsc0 = t_tsc0;
	pthread_mutex_unlock(&tl->lock);
	timeline_mark_at(tl, p, now_s(), 0);
}

/* tsc on our clock; 0 without an anchor. The caller holds tl->lock (or the vCPUs are joined). */
static double guest_time(const struct timeline *tl, uint64_t tsc)
{
	if (!tl->anchored || !tl->tsc_khz)
		return 0;
	return tl->t_tsc0 + tsc_seconds(tl, tsc) - tsc_seconds(tl, tl->tsc0);
}

/*
 * A guest phase marker (MVM_HC_MARK): its TSC in our time, but never later
 * than now, when its exit arrived (the guest read the TSC before it exited).
 * Without an anchor, the arrival is the time.
 */
void timeline_guest_mark(struct timeline *tl, uint32_t mark, uint64_t tsc)
{
	double arrival = now_s(), t;

	pthread_mutex_lock(&tl->lock); /* another vCPU may be setting the anchor */
	t = guest_time(tl, tsc);
	pthread_mutex_unlock(&tl->lock);
	if (t <= 0 || t > arrival)
		t = arrival;
	timeline_mark_at(tl, phase_of_guest_mark(mark), t, 1);
}

double timeline_guest_time(const struct timeline *tl, uint64_t tsc)
{
	return guest_time(tl, tsc);
}

double timeline_time(const struct timeline *tl, enum phase p)
{
	int i = timeline_index(tl, p);

	return i >= 0 ? tl->p[i].t : 0;
}

int64_t timeline_ns(const struct timeline *tl, double t)
{
	return ns_of_s(t - timeline_time(tl, PHASE_EXEC));
}

double timeline_ms(const struct timeline *tl, double t)
{
	return ms_of_ns(timeline_ns(tl, t));
}

double timeline_ms_between(const struct timeline *tl, double t0, double t1)
{
	return ms_of_ns(timeline_ns(tl, t1) - timeline_ns(tl, t0));
}

enum phase timeline_phase_at(const struct timeline *tl, double t)
{
	for (unsigned i = 0; i < tl->n; i++)
		if (tl->p[i].t >= t)
			return tl->p[i].id;
	return PHASE_COUNT;
}

unsigned timeline_count(const struct timeline *tl)
{
	return tl->n;
}

enum phase timeline_phase(const struct timeline *tl, unsigned i, double *t, int *guest)
{
	if (i >= tl->n)
		return PHASE_COUNT;
	*t = tl->p[i].t;
	if (guest)
		*guest = tl->p[i].guest;
	return tl->p[i].id;
}

const struct kvm_stats *timeline_stats(const struct timeline *tl)
{
	return tl->stats;
}

const uint64_t *timeline_sample(const struct timeline *tl, unsigned i)
{
	return i < tl->n ? tl->p[i].stats : NULL;
}

/* Counter k's delta over phase i (from the previous phase that has counters). */
static int delta(const struct timeline *tl, unsigned i, unsigned k, uint64_t *out)
{
	const struct tl_phase *prev = NULL;

	if (!tl->p[i].stats)
		return 0;
	for (unsigned j = i; j-- > 0 && !prev;)
		if (tl->p[j].stats)
			prev = &tl->p[j];
	*out = tl->p[i].stats[k] - (prev ? prev->stats[k] : 0);
	return 1;
}

int timeline_delta_k(const struct timeline *tl, unsigned i, unsigned k, uint64_t *out)
{
	return i < tl->n && i > 0 && k < kvmstats_count(tl->stats) &&
	       delta(tl, i, k, out);
}

int timeline_delta(const struct timeline *tl, unsigned i, const char *name, uint64_t *out)
{
	int k = kvmstats_index(tl->stats, name);

	return k >= 0 && timeline_delta_k(tl, i, (unsigned)k, out);
}
