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

/* ms from phase a's end to phase b's; -1 when either was not reached. */
static double between(const struct timeline *tl, enum phase a, enum phase b)
{
	double ta = timeline_time(tl, a), tb = timeline_time(tl, b);

	return ta > 0 && tb > 0 ? (tb - ta) * MSEC_PER_SEC : -1;
}

void run_summary(const struct run_view *v, struct tl_summary *s)
{
	int restored;
	size_t n;
	const struct mvm_rec_touch *t = records_touch(v->rec, &n);

	s->eager_in_guest = eager_strategy(v->eager) == EAGER_TOUCH;
	s->eager_background = eager_in_background(v->eager);
	s->ms[SUM_EAGER] =
		eager_host_side(v->eager) ? eager_seconds(v->eager) * MSEC_PER_SEC : -1;
	if (s->eager_in_guest && n)
		s->ms[SUM_EAGER] =
			records_seconds(v->rec, t[n - 1].cycles) * MSEC_PER_SEC;
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
