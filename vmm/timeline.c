/* The timeline: phases of a run on one clock, with KVM counters sampled at each boundary. */
#include "vmm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "json.h"

#define MSR_IA32_TSC 0x10

static const char *const guest_marks[] = {
	[MVM_MARK_FIRMWARE_READY] = "firmware_ready",
	[MVM_MARK_WORKLOAD_START] = "workload_start",
	[MVM_MARK_FIRST_USEFUL_WORK] = "first_useful_work",
	[MVM_MARK_WORKLOAD_END] = "workload_end",
};
_Static_assert(sizeof(guest_marks) / sizeof(guest_marks[0]) == MVM_MARK_COUNT,
	       "a name for every guest mark");

const char *timeline_guest_mark_name(uint32_t mark)
{
	return mark > 0 && mark < MVM_MARK_COUNT ? guest_marks[mark] : NULL;
}

#define TL_MAX_PHASES 32

/* A phase ends at a mark: its name, the time, and KVM's counters then. */
struct tl_phase {
	char name[24];
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
	int anchored; /* guest TSC tsc0 was read at our time t_tsc0 */
	uint64_t tsc0;
	double t_tsc0;
	void (*sampler)(void *cookie, unsigned phase,
			double t); /* timeline_set_sampler */
	void *sampler_cookie;
};

struct timeline *timeline_create(struct kvm_stats *stats, uint32_t tsc_khz)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->stats = stats;
	tl->tsc_khz = tsc_khz;
	pthread_mutex_init(&tl->lock, NULL);
	return tl;
}

/* The counters appear once the vCPUs exist; the TSC rate once KVM told it. */
void timeline_attach(struct timeline *tl, struct kvm_stats *stats, uint32_t tsc_khz)
{
	pthread_mutex_lock(&tl->lock);
	tl->stats = stats;
	tl->tsc_khz = tsc_khz;
	pthread_mutex_unlock(&tl->lock);
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

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	for (unsigned i = 0; i < tl->n; i++)
		free(tl->p[i].stats);
	free(tl);
}

static struct tl_phase *find(struct timeline *tl, const char *name)
{
	for (unsigned i = 0; i < tl->n; i++)
		if (!strcmp(tl->p[i].name, name))
			return &tl->p[i];
	return NULL;
}

/* Record phase `name` ending at time t (first occurrence wins), with the counters now. */
void timeline_mark_at(struct timeline *tl, const char *name, double t, int guest)
{
	struct tl_phase *p;
	unsigned nstats;

	pthread_mutex_lock(&tl->lock);
	nstats = kvmstats_count(tl->stats);
	if (tl->n == TL_MAX_PHASES || find(tl, name)) {
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
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->t = t;
	p->guest = guest;
	if (nstats) {
		p->stats = calloc(nstats, sizeof(*p->stats));
		if (p->stats && kvmstats_sample(tl->stats, p->stats)) {
			free(p->stats);
			p->stats = NULL;
		}
	}
	if (tl->sampler)
		tl->sampler(tl->sampler_cookie, tl->n - 1, t);
	pthread_mutex_unlock(&tl->lock);
}

void timeline_mark(struct timeline *tl, const char *name)
{
	timeline_mark_at(tl, name, now_s(), 0);
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
	timeline_mark_at(tl, "guest_entry", now_s(), 0);
}

/*
 * A guest phase marker (MVM_HC_MARK): its TSC in our time, but never later
 * than now, when its exit arrived (the guest read the TSC before it exited).
 * Without an anchor, the arrival is the time.
 */
void timeline_guest_mark(struct timeline *tl, uint32_t mark, uint64_t tsc)
{
	double arrival = now_s(), t = arrival;

	pthread_mutex_lock(&tl->lock); /* another vCPU may be setting the anchor */
	if (tl->anchored && tl->tsc_khz)
		t = tl->t_tsc0 + tsc_seconds(tl, tsc) - tsc_seconds(tl, tl->tsc0);
	pthread_mutex_unlock(&tl->lock);
	if (t > arrival)
		t = arrival;
	timeline_mark_at(tl, timeline_guest_mark_name(mark), t, 1);
}

double timeline_time(const struct timeline *tl, const char *name)
{
	for (unsigned i = 0; i < tl->n; i++)
		if (!strcmp(tl->p[i].name, name))
			return tl->p[i].t;
	return 0;
}

unsigned timeline_count(const struct timeline *tl)
{
	return tl->n;
}

const char *timeline_phase(const struct timeline *tl, unsigned i, double *t, int *guest)
{
	if (i >= tl->n)
		return NULL;
	*t = tl->p[i].t;
	if (guest)
		*guest = tl->p[i].guest;
	return tl->p[i].name;
}

/* The counters every table shows, in this order, where KVM publishes them. */
const char *const timeline_counters[] = { "exits",    "io_exits",	"pf_taken",
					  "pf_fixed", "insn_emulation", "mmu_pte_write" };
const unsigned timeline_ncounters = ARRAY_SIZE(timeline_counters);

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

int timeline_delta(const struct timeline *tl, unsigned i, const char *name, uint64_t *out)
{
	int k = kvmstats_index(tl->stats, name);

	return k >= 0 && i < tl->n && i > 0 && delta(tl, i, (unsigned)k, out);
}

void timeline_summary(const struct timeline *tl, double eager_ms, struct tl_summary *s)
{
	double exec = timeline_time(tl, "exec");
	double fuw = timeline_time(tl, "first_useful_work");

	s->setup_ms = (timeline_time(tl, "guest_entry") - exec) * MSEC_PER_SEC;
	s->eager_ms = eager_ms;
	s->first_useful_work_ms = fuw > 0 ? (fuw - exec) * MSEC_PER_SEC : -1;
	s->total_ms = (timeline_time(tl, "vm_exit") - exec) * MSEC_PER_SEC;
	s->first_pass_ms =
		fuw > 0 ? (fuw - timeline_time(tl, "workload_start")) * MSEC_PER_SEC : -1;
}

/*
 * Phase i >= 1 runs from mark i - 1 to mark i and is named for the event
 * that ends it; mark 0 is "exec", the zero of the clock. Times are ms since
 * exec. The table, the JSON and the trace all use this convention.
 */
void timeline_print(const struct timeline *tl, const struct tl_summary *s, FILE *f)
{
	double exec = timeline_time(tl, "exec");
	int idx[ARRAY_SIZE(timeline_counters)];
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES];

	fprintf(f,
		"\ntimeline: each phase runs from the end of the one above to the event that names it\n");
	fprintf(f,
		"(ms since exec; KVM counters during the phase, all vCPUs; - = not measured)\n");
	fprintf(f, "%-18s %10s %10s %10s", "phase", "start", "end", "duration");
	for (size_t k = 0; k < ARRAY_SIZE(timeline_counters); k++) {
		idx[k] = kvmstats_index(tl->stats, timeline_counters[k]);
		if (idx[k] >= 0)
			fprintf(f, " %14s", timeline_counters[k]);
	}
	fputc('\n', f);
	for (unsigned i = 1; i < tl->n; i++) {
		const struct tl_phase *p = &tl->p[i];
		double t0 = (tl->p[i - 1].t - exec) * MSEC_PER_SEC,
		       t1 = (p->t - exec) * MSEC_PER_SEC;
		uint64_t d;

		fprintf(f, "%-18s %10s %10s %10s", p->name, fmt_value(a, t0, 3),
			fmt_value(b, t1, 3), fmt_value(c, t1 - t0, 3));
		for (size_t k = 0; k < ARRAY_SIZE(timeline_counters); k++) {
			if (idx[k] < 0)
				continue;
			if (delta(tl, i, (unsigned)idx[k], &d))
				fprintf(f, " %14llu", (unsigned long long)d);
			else
				fprintf(f, " %14s", "-");
		}
		fputc('\n', f);
	}
	fprintf(f, "setup: %s ms (", fmt_value(a, s->setup_ms, 1));
	if (s->eager_ms >= 0 && s->eager_in_guest)
		fprintf(f, "eager in the guest, not in setup: %s ms of workload_start",
			fmt_value(b, s->eager_ms, 1));
	else if (s->eager_ms >= 0)
		fprintf(f, "eager %s ms", fmt_value(b, s->eager_ms, 1));
	else
		fprintf(f, "no eager");
	fprintf(f, ") | first useful work: ");
	if (s->first_useful_work_ms >= 0)
		fprintf(f, "%s ms", fmt_value(a, s->first_useful_work_ms, 1));
	else
		fprintf(f, "n/a (the workload marks none)");
	fprintf(f, " | total: %s ms\n", fmt_value(a, s->total_ms, 1));
}

/* Every counter KVM publishes: cumulative ones as their delta over the phase, gauges as their value. */
static void stats_json(const struct timeline *tl, unsigned i, struct json *j)
{
	const struct tl_phase *p = &tl->p[i];
	uint64_t d;

	if (!p->stats) {
		json_null(j, "stats");
		return;
	}
	json_begin_object(j, "stats");
	for (unsigned k = 0; k < kvmstats_count(tl->stats); k++) {
		int cum;
		const char *name = kvmstats_name(tl->stats, k, &cum);

		if (cum && delta(tl, i, k, &d))
			json_u64(j, name, d);
		else if (!cum)
			json_u64(j, name, p->stats[k]);
	}
	json_end_object(j);
}

void timeline_write_json(const struct timeline *tl, const struct tl_summary *s,
			 struct json *j)
{
	double exec = timeline_time(tl, "exec");

	json_begin_array(j, "timeline");
	for (unsigned i = 1; i < tl->n; i++) {
		const struct tl_phase *p = &tl->p[i];
		double t0 = (tl->p[i - 1].t - exec) * MSEC_PER_SEC,
		       t1 = (p->t - exec) * MSEC_PER_SEC;

		json_begin_object(j, NULL);
		json_string(j, "phase", p->name);
		json_string(j, "source", p->guest ? "guest" : "vmm");
		json_double(j, "start_ms", t0);
		json_double(j, "end_ms", t1);
		json_double(j, "dur_ms", t1 - t0);
		stats_json(tl, i, j);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_object(j, "summary");
	json_double(j, "setup_ms", s->setup_ms);
	if (s->eager_ms >= 0)
		json_double(j, "eager_ms", s->eager_ms);
	else
		json_null(j, "eager_ms");
	if (s->first_useful_work_ms >= 0) {
		json_double(j, "first_useful_work_ms", s->first_useful_work_ms);
		json_double(j, "first_pass_ms", s->first_pass_ms);
	} else {
		json_null(j, "first_useful_work_ms");
		json_null(j, "first_pass_ms");
	}
	json_double(j, "total_ms", s->total_ms);
	json_end_object(j);
}
