/* --compare's verdict: what lazy and eager runs say, from medians, and when they cannot say (pure). */
#include "measure.h"

#include <string.h>

/* The handlers' faults in timeline phase i (between its mark and the one before), p50 of them. */
static void uffd_in_phase(const struct run_view *v, int i, struct run_facts *f)
{
	struct paging_facts pg;
	struct lat_hist d;

	f->uffd = v->paging != NULL;
	f->uffd_faults = f->uffd_p50_ns = -1;
	if (!f->uffd || paging_facts(v->paging, &pg) || !pg.total || i < 1 ||
	    (unsigned)i >= pg.nsnap || !pg.snapped[i] || !pg.snapped[i - 1])
		return;
	lat_sub(&d, &pg.snap[i], &pg.snap[i - 1]);
	f->uffd_faults = (double)lat_bucket_total(&d);
	if (f->uffd_faults > 0)
		f->uffd_p50_ns = (double)lat_percentile(&d, 50);
}

void run_facts(const struct run_view *v, struct run_facts *f)
{
	size_t n;
	const struct mvm_rec_sweep *recs = records_sweep(v->rec, &n);
	int pass = timeline_index(v->tl, PHASE_FIRST_USEFUL_WORK);
	uint64_t pf;

	run_summary(v, &f->s);
	f->restored = timeline_index(v->tl, PHASE_GUEST_RESUMED) >= 0;
	f->pf_taken = pass > 0 && timeline_delta(v->tl, (unsigned)pass, "pf_taken", &pf)
			      ? (double)pf
			      : -1;
	uffd_in_phase(v, pass, f);
	f->ram_bytes = (double)v->cfg->mem_bytes;
	/* Bytes the first pass wrote: iteration 1's per-vCPU records. */
	f->touched_bytes = 0;
	for (size_t i = 0; i < n; i++)
		if (recs[i].iteration == 1 && recs[i].vcpu != MVM_VCPU_ALL)
			f->touched_bytes += (double)recs[i].pages * MVM_PAGE_BYTES;
}

/*
 * a - b of two medians in ms, each to the ns first as the results print
 * them (a median of an even count may fall between two ns): printed, the
 * difference is the difference of the printed medians to the last digit.
 */
static double ms_diff(double a, double b)
{
	return ms_of_ns(ns_of_ms(a) - ns_of_ms(b));
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
	v->lazy_eager = 1;
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
	v->saved_ms =
		ms_diff(v->first_pass_lazy_ms.median, v->first_pass_eager_ms.median);
	v->saved_conclusive =
		!spreads_overlap(&v->first_pass_lazy_ms, &v->first_pass_eager_ms);
	v->sooner = v->fuw_lazy_ms.median <= v->fuw_eager_ms.median ? "lazy" : "eager";
	v->sooner_conclusive = !spreads_overlap(&v->fuw_lazy_ms, &v->fuw_eager_ms);
	/*
	 * Per pair (the i-th lazy and eager runs, in the same round): lazy
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

/* Spread of a per-run value (those not negative: measured). */
static void spread_of_known(const struct run_facts *f, unsigned n,
			    double (*get)(const struct run_facts *), struct spread *s)
{
	double v[n ? n : 1];
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		if (get(&f[i]) >= 0)
			v[k++] = get(&f[i]);
	spread_of(v, k, s);
}

static double get_pf(const struct run_facts *f)
{
	return f->pf_taken;
}

static double get_uffd_faults(const struct run_facts *f)
{
	return f->uffd_faults;
}

static double get_uffd_p50(const struct run_facts *f)
{
	return f->uffd_p50_ns;
}

/* Sooner first; a mode without first useful work after every mode with it. */
static int before(const struct rank_row *a, const struct rank_row *b)
{
	if (a->have_work != b->have_work)
		return a->have_work;
	return a->have_work && a->fuw_ms.median < b->fuw_ms.median;
}

void compare_rank(const struct run_facts *const *facts, const unsigned *n,
		  const char *const *mode, unsigned nmodes, struct ranking *r)
{
	memset(r, 0, sizeof(*r));
	for (unsigned m = 0; m < nmodes && m < RANKING_MAX_MODES; m++) {
		struct rank_row *row = &r->row[r->n++];
		const struct run_facts *f = facts[m];

		row->mode = mode[m];
		row->runs = n[m];
		row->have_work = n[m] > 0;
		row->restored = n[m] > 0;
		for (unsigned i = 0; i < n[m]; i++)
			row->restored &= f[i].restored;
		for (unsigned i = 0; i < n[m]; i++)
			row->have_work &= f[i].s.ms[SUM_FIRST_USEFUL_WORK] >= 0 &&
					  f[i].s.ms[SUM_FIRST_PASS] >= 0;
		spread_of_item(f, n[m], SUM_SETUP, &row->setup_ms);
		if (row->have_work) {
			spread_of_item(f, n[m], SUM_FIRST_USEFUL_WORK, &row->fuw_ms);
			spread_of_item(f, n[m], SUM_FIRST_PASS, &row->first_pass_ms);
		}
		spread_of_known(f, n[m], get_pf, &row->pf_taken);
		row->uffd = n[m] > 0 && f[0].uffd;
		if (row->uffd) {
			spread_of_known(f, n[m], get_uffd_faults, &row->uffd_faults);
			spread_of_known(f, n[m], get_uffd_p50, &row->uffd_p50_ns);
		}
	}
	/* Insertion sort: stable, so equal medians keep the order the modes were given in. */
	for (unsigned i = 1; i < r->n; i++) {
		struct rank_row x = r->row[i];
		unsigned k = i;

		for (; k > 0 && before(&x, &r->row[k - 1]); k--)
			r->row[k] = r->row[k - 1];
		r->row[k] = x;
	}
	for (unsigned i = 0; i + 1 < r->n; i++) {
		struct rank_row *a = &r->row[i], *b = &r->row[i + 1];

		if (!a->have_work || !b->have_work)
			continue;
		a->ahead_ms = ms_diff(b->fuw_ms.median, a->fuw_ms.median);
		/* One run is a point, not a spread: nothing to judge the difference by. */
		a->conclusive_vs_next = a->runs > 1 && b->runs > 1 &&
					!spreads_overlap(&a->fuw_ms, &b->fuw_ms);
	}
}
