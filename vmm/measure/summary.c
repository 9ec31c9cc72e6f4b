/* One run's summary numbers: setup, eager, first useful work, first pass, total. */
#include "measure.h"

const char *const summary_names[] = {
	[SUM_SETUP] = "setup_ms",
	[SUM_EAGER] = "eager_ms",
	[SUM_FIRST_USEFUL_WORK] = "first_useful_work_ms",
	[SUM_FIRST_PASS] = "first_pass_ms",
	[SUM_TOTAL] = "total_ms",
};
_Static_assert(ARRAY_SIZE(summary_names) == SUM_COUNT, "a name for every summary item");

/* ms from phase a's end to phase b's, whole ns (timeline_ns); -1 when either was not reached. */
static double between(const struct timeline *tl, enum phase a, enum phase b)
{
	double ta = timeline_time(tl, a), tb = timeline_time(tl, b);

	return ta > 0 && tb > 0 ? timeline_ms_between(tl, ta, tb) : -1;
}

/* Eager's time: the host's from its start to its end on the timeline's clock; the guest's pass in TSC cycles. */
static double eager_ms(const struct run_view *v, int in_guest)
{
	struct eager_facts x;
	size_t n;
	const struct mvm_rec_touch *t = records_touch(v->rec, &n);

	/* The pass's own record (MVM_VCPU_ALL, at most one a batch), wherever the guest put it. */
	for (size_t i = 0; in_guest && i < n; i++)
		if (t[i].vcpu == MVM_VCPU_ALL)
			return ms_of_ns(ns_of_s(records_seconds(v->rec, t[i].cycles)));
	if (eager_facts(v->eager, &x))
		return -1;
	return x.t_end > 0 ? timeline_ms_between(v->tl, x.t_start, x.t_end) : 0;
}

void run_summary(const struct run_view *v, struct tl_summary *s)
{
	int restored;

	s->eager_in_guest = eager_strategy(v->eager) == EAGER_TOUCH;
	s->eager_background = eager_in_background(v->eager);
	s->ms[SUM_EAGER] = eager_ms(v, s->eager_in_guest);
	/* A restored guest's setup ends where it resumes, and its first pass starts there. */
	restored = timeline_index(v->tl, PHASE_GUEST_RESUMED) >= 0;
	s->ms[SUM_SETUP] = between(v->tl, PHASE_EXEC,
				   restored ? PHASE_GUEST_RESUMED : PHASE_GUEST_ENTRY);
	s->ms[SUM_FIRST_USEFUL_WORK] =
		between(v->tl, PHASE_EXEC, PHASE_FIRST_USEFUL_WORK);
	s->ms[SUM_FIRST_PASS] =
		between(v->tl, restored ? PHASE_GUEST_RESUMED : PHASE_WORKLOAD_START,
			PHASE_FIRST_USEFUL_WORK);
	s->ms[SUM_TOTAL] = between(v->tl, PHASE_EXEC, PHASE_VM_EXIT);
}
