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

static struct tl_phase *find(struct timeline *tl, const char *name)
{
	for (unsigned i = 0; i < tl->n; i++)
		if (!strcmp(tl->p[i].name, name))
			return &tl->p[i];
	return NULL;
}

/* Record phase `name` ending at time t (first occurrence wins), with the counters now. */
void timeline_mark_at(struct vm *vm, const char *name, double t, int guest)
{
	struct timeline *tl = &vm->tl;
	struct tl_phase *p;
	unsigned nstats = stats_count(vm);

	pthread_mutex_lock(&vm->lock);
	if (tl->n == TL_MAX_PHASES || find(tl, name)) {
		pthread_mutex_unlock(&vm->lock);
		return;
	}
	p = &tl->p[tl->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->t = t;
	p->guest = guest;
	if (nstats) {
		p->stats = calloc(nstats, sizeof(*p->stats));
		if (p->stats && stats_sample(vm, p->stats)) {
			free(p->stats);
			p->stats = NULL;
		}
	}
	pthread_mutex_unlock(&vm->lock);
}

void timeline_mark(struct vm *vm, const char *name)
{
	timeline_mark_at(vm, name, now_s(), 0);
}

/*
 * The guest's clock is its TSC. Read it through KVM (MSR_IA32_TSC) just
 * before the first KVM_RUN and pair it with our clock: that anchor turns
 * every guest TSC value into our time. Called on vCPU 0's thread.
 */
void timeline_guest_entry(struct vm *vm, struct vcpu *v)
{
	struct {
		struct kvm_msrs m;
		struct kvm_msr_entry e;
	} msr = { .m.nmsrs = 1, .e.index = MSR_IA32_TSC };
	double t0 = now_s(), t1;
	int ok = ioctl(v->fd, KVM_GET_MSRS, &msr) == 1;

	t1 = now_s();
	pthread_mutex_lock(&vm->lock);
	vm->tl.anchored = ok;
	vm->tl.tsc0 = msr.e.data;
	vm->tl.t_tsc0 = (t0 + t1) / 2;
	pthread_mutex_unlock(&vm->lock);
	timeline_mark_at(vm, "guest_entry", t1, 0);
}

/* A guest phase marker (MVM_HC_MARK). Without an anchor, the exit's arrival is the time. */
void timeline_guest_mark(struct vm *vm, uint32_t mark, uint64_t tsc)
{
	double t = now_s();

	if (vm->tl.anchored && vm->plat.tsc_khz)
		t = vm->tl.t_tsc0 + cycles_to_s(vm, tsc) - cycles_to_s(vm, vm->tl.tsc0);
	timeline_mark_at(vm, timeline_guest_mark_name(mark), t, 1);
}

double timeline_time(const struct vm *vm, const char *name)
{
	for (unsigned i = 0; i < vm->tl.n; i++)
		if (!strcmp(vm->tl.p[i].name, name))
			return vm->tl.p[i].t;
	return 0;
}

void timeline_free(struct vm *vm)
{
	for (unsigned i = 0; i < vm->tl.n; i++)
		free(vm->tl.p[i].stats);
	vm->tl.n = 0;
}

/* The counters shown in the table, where KVM publishes them. */
static const char *const key_stats[] = { "exits",    "io_exits",       "pf_taken",
					 "pf_fixed", "insn_emulation", "mmu_pte_write" };

static int stat_index(const struct vm *vm, const char *name)
{
	int cum;

	for (unsigned i = 0; i < stats_count(vm); i++)
		if (!strcmp(stats_name(vm, i, &cum), name))
			return (int)i;
	return -1;
}

/* Counter delta over phase i (from the previous phase that has counters). */
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

void timeline_summary(const struct vm *vm, struct tl_summary *s)
{
	double exec = timeline_time(vm, "exec");
	double fuw = timeline_time(vm, "first_useful_work");

	s->setup_ms = (timeline_time(vm, "guest_entry") - exec) * MSEC_PER_SEC;
	s->eager_ms = vm->eager.t_end > 0
			      ? (vm->eager.t_end - vm->eager.t_start) * MSEC_PER_SEC
			      : 0;
	if (vm->eager.strategy == EAGER_TOUCH && vm->res.ntouch)
		s->eager_ms = cycles_to_s(vm, vm->res.touch[vm->res.ntouch - 1].cycles) *
			      MSEC_PER_SEC;
	s->first_useful_work_ms = fuw > 0 ? (fuw - exec) * MSEC_PER_SEC : -1;
	s->total_ms = (timeline_time(vm, "vm_exit") - exec) * MSEC_PER_SEC;
	s->first_pass_ms =
		fuw > 0 ? (fuw - timeline_time(vm, "workload_start")) * MSEC_PER_SEC : -1;
}

void timeline_print(const struct vm *vm, FILE *f)
{
	const struct timeline *tl = &vm->tl;
	double exec = timeline_time(vm, "exec");
	int idx[sizeof(key_stats) / sizeof(key_stats[0])];
	struct tl_summary s;

	fprintf(f, "\ntimeline (ms since exec; KVM counters during each phase, all "
		   "vCPUs)\n");
	fprintf(f, "%-18s %10s %10s", "phase", "start", "duration");
	for (size_t k = 0; k < sizeof(key_stats) / sizeof(key_stats[0]); k++) {
		idx[k] = stat_index(vm, key_stats[k]);
		if (idx[k] >= 0)
			fprintf(f, " %14s", key_stats[k]);
	}
	fputc('\n', f);
	for (unsigned i = 0; i < tl->n; i++) {
		const struct tl_phase *p = &tl->p[i];
		uint64_t d;

		fprintf(f, "%-18s %10.3f %10.3f", p->name, (p->t - exec) * MSEC_PER_SEC,
			i ? (p->t - tl->p[i - 1].t) * MSEC_PER_SEC : 0.0);
		for (size_t k = 0; k < sizeof(key_stats) / sizeof(key_stats[0]); k++) {
			if (idx[k] < 0)
				continue;
			if (delta(tl, i, (unsigned)idx[k], &d))
				fprintf(f, " %14llu", (unsigned long long)d);
			else
				fprintf(f, " %14s", "-");
		}
		fputc('\n', f);
	}
	timeline_summary(vm, &s);
	fprintf(f, "setup: %.1f ms (eager %.1f ms) | first useful work: ", s.setup_ms,
		s.eager_ms);
	if (s.first_useful_work_ms >= 0)
		fprintf(f, "%.1f ms", s.first_useful_work_ms);
	else
		fprintf(f, "n/a (the workload marks none)");
	fprintf(f, " | total: %.1f ms\n", s.total_ms);
}

void timeline_write_json(const struct vm *vm, struct json *j)
{
	const struct timeline *tl = &vm->tl;
	double exec = timeline_time(vm, "exec");
	struct tl_summary s;

	json_begin_array(j, "timeline");
	for (unsigned i = 0; i < tl->n; i++) {
		const struct tl_phase *p = &tl->p[i];
		uint64_t d;

		json_begin_object(j, NULL);
		json_string(j, "phase", p->name);
		json_string(j, "source", p->guest ? "guest" : "vmm");
		json_double(j, "t_ms", (p->t - exec) * MSEC_PER_SEC);
		json_double(j, "dur_ms",
			    i ? (p->t - tl->p[i - 1].t) * MSEC_PER_SEC : 0.0);
		json_begin_object(j, "stats");
		for (unsigned k = 0; p->stats && k < stats_count(vm); k++) {
			int cum;
			const char *name = stats_name(vm, k, &cum);

			if (cum && delta(tl, i, k, &d) && d)
				json_u64(j, name, d);
			else if (!cum && p->stats[k])
				json_u64(j, name,
					 p->stats[k]); /* a gauge: its value now */
		}
		json_end_object(j);
		json_end_object(j);
	}
	json_end_array(j);
	timeline_summary(vm, &s);
	json_begin_object(j, "summary");
	json_double(j, "setup_ms", s.setup_ms);
	json_double(j, "eager_ms", s.eager_ms);
	if (s.first_useful_work_ms >= 0) {
		json_double(j, "first_useful_work_ms", s.first_useful_work_ms);
		json_double(j, "first_pass_ms", s.first_pass_ms);
	}
	json_double(j, "total_ms", s.total_ms);
	json_end_object(j);
}
