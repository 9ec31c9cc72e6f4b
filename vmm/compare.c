/* --compare's verdict: what lazy and eager runs say, from medians, and when they cannot say. */
#include "vmm.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "json.h"

#define MIB (1024.0 * 1024.0)

void run_facts(const struct run *r, struct run_facts *f)
{
	size_t n;
	const struct mvm_rec_sweep *recs = results_sweep(r->res, &n);

	run_summary(r, &f->s);
	f->ram_bytes = (double)r->cfg->mem_bytes;
	/* Bytes the first pass wrote: iteration 1's per-vCPU records. */
	f->touched_bytes = 0;
	for (size_t i = 0; i < n; i++)
		if (recs[i].iteration == 1 && recs[i].vcpu != MVM_VCPU_ALL)
			f->touched_bytes += (double)recs[i].pages * MVM_PAGE_BYTES;
}

/* One quantity of every run, as a spread. */
static void spread_of_field(const struct run_facts *f, unsigned n, size_t offset,
			    struct spread *s)
{
	double v[n ? n : 1];

	v[0] = 0; /* spread_of reads none of it when n is 0 */
	for (unsigned i = 0; i < n; i++)
		memcpy(&v[i], (const char *)&f[i] + offset, sizeof(double));
	spread_of(v, n, s);
}

#define SPREAD(f, n, field, s) spread_of_field(f, n, offsetof(struct run_facts, field), s)

void compare_verdict(const struct run_facts *lazy, const struct run_facts *eager,
		     unsigned n, struct verdict *v)
{
	double be[n ? n : 1];
	unsigned nbe = 0;

	memset(v, 0, sizeof(*v));
	v->pairs = n;
	SPREAD(eager, n, s.eager_ms, &v->eager_cost_ms);
	SPREAD(lazy, n, s.setup_ms, &v->setup_lazy_ms);
	SPREAD(eager, n, s.setup_ms, &v->setup_eager_ms);
	if (!n)
		return;
	v->ram_bytes = lazy[0].ram_bytes;
	v->touched_bytes = lazy[0].touched_bytes;
	v->have_work = 1;
	for (unsigned i = 0; i < n; i++)
		v->have_work &=
			lazy[i].s.first_pass_ms >= 0 && eager[i].s.first_pass_ms >= 0;
	if (!v->have_work)
		return;
	SPREAD(lazy, n, s.first_pass_ms, &v->first_pass_lazy_ms);
	SPREAD(eager, n, s.first_pass_ms, &v->first_pass_eager_ms);
	SPREAD(lazy, n, s.first_useful_work_ms, &v->fuw_lazy_ms);
	SPREAD(eager, n, s.first_useful_work_ms, &v->fuw_eager_ms);
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
		double saved = lazy[i].s.first_pass_ms - eager[i].s.first_pass_ms;

		if (saved > 0 && lazy[i].touched_bytes > 0 && eager[i].s.eager_ms >= 0)
			be[nbe++] = eager[i].s.eager_ms /
				    (saved / lazy[i].touched_bytes * lazy[i].ram_bytes);
		else
			v->never++;
	}
	spread_of(be, nbe, &v->break_even);
}

void verdict_print(const struct verdict *v, FILE *f)
{
	char a[FMT_SPREAD_BYTES], b[FMT_SPREAD_BYTES], c[FMT_SPREAD_BYTES];
	char x[FMT_BYTES];

	fprintf(f, "\nverdict (%s):\n",
		v->pairs == 1
			? "one run each: no spread to judge by; use --repeat 5"
			: "medians [min-max] of the runs; a difference inside the spreads is inconclusive");
	fprintf(f, "  eager cost: %s ms up front (setup %s ms lazy, %s ms eager)\n",
		fmt_spread(a, &v->eager_cost_ms, 1), fmt_spread(b, &v->setup_lazy_ms, 1),
		fmt_spread(c, &v->setup_eager_ms, 1));
	if (!v->have_work) {
		fprintf(f,
			"  the workload marks no first useful work: nothing more to compare\n");
		return;
	}
	fprintf(f, "  first pass: %s ms lazy, %s ms eager: ",
		fmt_spread(a, &v->first_pass_lazy_ms, 1),
		fmt_spread(b, &v->first_pass_eager_ms, 1));
	if (v->saved_conclusive || v->pairs == 1)
		fprintf(f, "first-touch time saved %s ms\n",
			fmt_value(x, v->saved_ms, 1));
	else
		fprintf(f,
			"inconclusive (the spreads overlap; medians differ by %s ms)\n",
			fmt_value(x, v->saved_ms, 1));
	fprintf(f, "  first useful work: %s ms lazy, %s ms eager: ",
		fmt_spread(a, &v->fuw_lazy_ms, 1), fmt_spread(b, &v->fuw_eager_ms, 1));
	if (v->sooner_conclusive || v->pairs == 1)
		fprintf(f, "%s got there sooner, by %s ms\n", v->sooner,
			fmt_value(x, fabs(v->fuw_lazy_ms.median - v->fuw_eager_ms.median),
				  1));
	else
		fprintf(f,
			"inconclusive (the spreads overlap; %s's median is sooner by %s ms)\n",
			v->sooner,
			fmt_value(x, fabs(v->fuw_lazy_ms.median - v->fuw_eager_ms.median),
				  1));
	if (v->break_even.n) {
		fprintf(f,
			"  break-even: eager pays off once the guest touches %s%% of its %.0f MiB",
			fmt_value(x, v->break_even.median * 100, 1), v->ram_bytes / MIB);
		if (v->break_even.n > 1)
			fprintf(f, " (%s%%-%.1f%% over %u pairs)",
				fmt_value(a, v->break_even.min * 100, 1),
				v->break_even.max * 100, v->break_even.n);
		fprintf(f, " (first touch measured over %.0f MiB)%s\n",
			v->touched_bytes / MIB,
			v->break_even.median > 1 ? ": more than all of it, so never here"
						 : "");
		if (v->never)
			fprintf(f,
				"  (in %u of %u pairs eager saved no first-touch time)\n",
				v->never, v->pairs);
	} else {
		fprintf(f,
			"  break-even: never (eager saved no first-touch time here)\n");
	}
}

void verdict_write_json(const struct verdict *v, struct json *j)
{
	json_begin_object(j, "verdict");
	json_u64(j, "pairs", v->pairs);
	spread_write_json(&v->eager_cost_ms, j, "eager_cost_ms");
	spread_write_json(&v->setup_lazy_ms, j, "setup_lazy_ms");
	spread_write_json(&v->setup_eager_ms, j, "setup_eager_ms");
	json_bool(j, "have_work", v->have_work);
	if (v->have_work) {
		spread_write_json(&v->first_pass_lazy_ms, j, "first_pass_lazy_ms");
		spread_write_json(&v->first_pass_eager_ms, j, "first_pass_eager_ms");
		json_double(j, "first_touch_saved_ms", v->saved_ms);
		json_bool(j, "first_touch_saved_conclusive", v->saved_conclusive);
		spread_write_json(&v->fuw_lazy_ms, j, "first_useful_work_lazy_ms");
		spread_write_json(&v->fuw_eager_ms, j, "first_useful_work_eager_ms");
		json_string(j, "sooner", v->sooner);
		json_bool(j, "sooner_conclusive", v->sooner_conclusive);
		json_double(j, "touched_bytes", v->touched_bytes);
		json_u64(j, "ram_bytes", (uint64_t)v->ram_bytes);
		spread_write_json(&v->break_even, j, "break_even_fraction");
		json_u64(j, "pairs_never_break_even", v->never);
	}
	json_end_object(j);
}
