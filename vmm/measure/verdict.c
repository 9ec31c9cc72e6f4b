/* --compare's verdict: what lazy and eager runs say, from medians, and when they cannot say (pure). */
#include "measure.h"

#include <string.h>

void run_facts(const struct run_view *v, struct run_facts *f)
{
	size_t n;
	const struct mvm_rec_sweep *recs = records_sweep(v->rec, &n);

	run_summary(v, &f->s);
	f->ram_bytes = (double)v->cfg->mem_bytes;
	/* Bytes the first pass wrote: iteration 1's per-vCPU records. */
	f->touched_bytes = 0;
	for (size_t i = 0; i < n; i++)
		if (recs[i].iteration == 1 && recs[i].vcpu != MVM_VCPU_ALL)
			f->touched_bytes += (double)recs[i].pages * MVM_PAGE_BYTES;
}

/* Summary item k of the runs that measured it (an interrupted run may not have), as a spread. */
static void spread_of_item(const struct run_facts *f, unsigned n, enum summary_item k,
			   struct spread *s)
{
	double v[n ? n : 1];
	unsigned m = 0;

	v[0] = 0; /* spread_of reads none of it when m is 0 */
	for (unsigned i = 0; i < n; i++)
		if (f[i].s.ms[k] >= 0)
			v[m++] = f[i].s.ms[k];
	spread_of(v, m, s);
}

void compare_verdict(const struct run_facts *lazy, const struct run_facts *eager,
		     unsigned n, struct verdict *v)
{
	double be[n ? n : 1];
	unsigned nbe = 0;

	memset(v, 0, sizeof(*v));
	v->pairs = n;
	spread_of_item(eager, n, SUM_EAGER, &v->eager_cost_ms);
	spread_of_item(lazy, n, SUM_SETUP, &v->setup_lazy_ms);
	spread_of_item(eager, n, SUM_SETUP, &v->setup_eager_ms);
	if (!n)
		return;
	v->ram_bytes = lazy[0].ram_bytes;
	v->touched_bytes = lazy[0].touched_bytes;
	v->have_work = 1;
	for (unsigned i = 0; i < n; i++)
		v->have_work &= lazy[i].s.ms[SUM_FIRST_PASS] >= 0 &&
				eager[i].s.ms[SUM_FIRST_PASS] >= 0;
	if (!v->have_work)
		return;
	spread_of_item(lazy, n, SUM_FIRST_PASS, &v->first_pass_lazy_ms);
	spread_of_item(eager, n, SUM_FIRST_PASS, &v->first_pass_eager_ms);
	spread_of_item(lazy, n, SUM_FIRST_USEFUL_WORK, &v->fuw_lazy_ms);
	spread_of_item(eager, n, SUM_FIRST_USEFUL_WORK, &v->fuw_eager_ms);
	v->saved_ms = v->first_pass_lazy_ms.median - v->first_pass_eager_ms.median;
	v->saved_conclusive =
		!spreads_overlap(&v->first_pass_lazy_ms, &v->first_pass_eager_ms);
	v->sooner = v->fuw_lazy_ms.median <= v->fuw_eager_ms.median ? "lazy" : "eager";
	v->sooner_conclusive = !spreads_overlap(&v->fuw_lazy_ms, &v->fuw_eager_ms);
	/*
	 * Per pair (the i-th lazy and eager runs, adjacent in ABBA order): lazy
	 * pays `saved` for `touched` bytes on first touch; eager pays its cost
	 * for all of RAM up front. Eager wins once the guest touches more than
	 * cost / (saved per byte * RAM) of its memory.
	 */
	for (unsigned i = 0; i < n; i++) {
		double saved =
			lazy[i].s.ms[SUM_FIRST_PASS] - eager[i].s.ms[SUM_FIRST_PASS];

		if (saved > 0 && lazy[i].touched_bytes > 0 &&
		    eager[i].s.ms[SUM_EAGER] >= 0) {
			be[nbe] = eager[i].s.ms[SUM_EAGER] /
				  (saved / lazy[i].touched_bytes * lazy[i].ram_bytes);
			v->above_all += be[nbe++] > 1;
		} else {
			v->never++;
		}
	}
	spread_of(be, nbe, &v->break_even);
}
