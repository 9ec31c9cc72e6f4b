/* --compare's verdict for people and in the results file. */
#include "report.h"

#include <math.h>

/* "setup 0.92 ms, first pass 9.4 ms, pf_taken 1798[, uffd faults 1794 (p50 4.1 us)]". */
static void rank_facts(const struct rank_row *r, FILE *f)
{
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES], s[FMT_SPREAD_BYTES];

	if (r->restored)
		fprintf(f, "restore latency %s ms (exec to guest resumed)",
			fmt_spread(s, &r->setup_ms, 1));
	else
		fprintf(f, "setup %s ms", fmt_value(a, r->setup_ms.median, 1));
	if (r->have_work)
		fprintf(f, ", first pass %s ms",
			fmt_value(b, r->first_pass_ms.median, 1));
	if (r->pf_taken.n)
		fprintf(f, ", pf_taken %s", fmt_value(c, r->pf_taken.median, 0));
	if (r->uffd && r->uffd_faults.n) {
		fprintf(f, ", uffd faults %s", fmt_value(a, r->uffd_faults.median, 0));
		if (r->uffd_p50_ns.n)
			fprintf(f, " (p50 %s us)",
				fmt_value(b, r->uffd_p50_ns.median / NSEC_PER_USEC, 1));
	}
}

/* The modes, soonest to first useful work first, and how sure each step is. */
static void ranking_print(const struct ranking *rk, FILE *f)
{
	char a[FMT_SPREAD_BYTES], x[FMT_BYTES];

	fprintf(f, "  ranking by first useful work (ms since exec):\n");
	for (unsigned i = 0; i < rk->n; i++) {
		const struct rank_row *r = &rk->row[i], *next = &rk->row[i + 1];

		fprintf(f, "    %u. %-10s ", i + 1, r->mode);
		if (r->have_work)
			fprintf(f, "%s: ", fmt_spread(a, &r->fuw_ms, 1));
		else
			fprintf(f, "no first useful work marked: ");
		rank_facts(r, f);
		fputc('\n', f);
		if (i + 1 == rk->n || !r->have_work || !next->have_work)
			continue;
		if (r->conclusive_vs_next)
			fprintf(f, "       ahead of %s by %s ms\n", next->mode,
				fmt_value(x, r->ahead_ms, 1));
		else if (r->runs <= 1 || next->runs <= 1)
			fprintf(f,
				"       ahead of %s by %s ms (one run each: no spread to judge by)\n",
				next->mode, fmt_value(x, r->ahead_ms, 1));
		else
			fprintf(f,
				"       inconclusive against %s: the spreads overlap (medians %s ms apart)\n",
				next->mode, fmt_value(x, r->ahead_ms, 1));
	}
}

void verdict_print(const struct verdict *v, FILE *f)
{
	char a[FMT_SPREAD_BYTES], b[FMT_SPREAD_BYTES], c[FMT_SPREAD_BYTES];
	char x[FMT_BYTES];
	int one = v->ranking.n && v->ranking.row[0].runs == 1;

	fprintf(f, "\nverdict (%s):\n",
		one ? "one run each: no spread to judge by; use --repeat 5"
		    : "medians [min-max] of the runs; a difference inside the spreads is inconclusive");
	ranking_print(&v->ranking, f);
	if (!v->lazy_eager)
		return;
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
			fmt_value(x, v->break_even.median * 100, 1),
			v->ram_bytes / BYTES_PER_MIB);
		if (v->break_even.n > 1)
			fprintf(f, " (%s%%-%.1f%%: one per lazy/eager pair, %u pairs)",
				fmt_value(a, v->break_even.min * 100, 1),
				v->break_even.max * 100, v->break_even.n);
		fprintf(f, " (first touch measured over %.0f MiB)\n",
			v->touched_bytes / BYTES_PER_MIB);
		if (v->above_all)
			fprintf(f,
				"  (above 100%% in %u of %u pair%s: there eager cost more up front than lazy's first touch of all of RAM would, so it never pays off)\n",
				v->above_all, v->break_even.n,
				v->break_even.n == 1 ? "" : "s");
		if (v->never)
			fprintf(f,
				"  (in %u of %u pair%s eager saved no first-touch time)\n",
				v->never, v->pairs, v->pairs == 1 ? "" : "s");
	} else {
		fprintf(f,
			"  break-even: never (eager saved no first-touch time here)\n");
	}
}

static void ranking_json(const struct ranking *rk, struct json *j)
{
	json_begin_array(j, "ranking");
	for (unsigned i = 0; i < rk->n; i++) {
		const struct rank_row *r = &rk->row[i];

		json_begin_object(j, NULL);
		json_u64(j, "rank", i + 1);
		json_string(j, "mode", r->mode);
		json_u64(j, "runs", r->runs);
		json_bool(j, "have_work", r->have_work);
		spread_write_json_ms(&r->fuw_ms, j, "first_useful_work_ms");
		spread_write_json_ms(&r->setup_ms, j, "setup_ms");
		if (r->restored) /* the same: a restore's setup ends as the guest resumes */
			spread_write_json_ms(&r->setup_ms, j, "restore_latency_ms");
		spread_write_json_ms(&r->first_pass_ms, j, "first_pass_ms");
		spread_write_json(&r->pf_taken, j, "first_pass_pf_taken");
		if (r->uffd) {
			spread_write_json(&r->uffd_faults, j, "first_pass_uffd_faults");
			spread_write_json(&r->uffd_p50_ns, j, "first_pass_uffd_p50_ns");
		}
		if (i + 1 < rk->n && r->have_work && rk->row[i + 1].have_work) {
			json_string(j, "next", rk->row[i + 1].mode);
			json_ms_signed(j, "ahead_ms", r->ahead_ms);
			json_bool(j, "conclusive_vs_next", r->conclusive_vs_next);
		}
		json_end_object(j);
	}
	json_end_array(j);
}

void verdict_write_json(const struct verdict *v, struct json *j)
{
	json_begin_object(j, "verdict");
	ranking_json(&v->ranking, j);
	if (!v->lazy_eager) {
		json_end_object(j);
		return;
	}
	json_u64(j, "pairs", v->pairs);
	spread_write_json_ms(&v->eager_cost_ms, j, "eager_cost_ms");
	spread_write_json_ms(&v->setup_lazy_ms, j, "setup_lazy_ms");
	spread_write_json_ms(&v->setup_eager_ms, j, "setup_eager_ms");
	json_bool(j, "have_work", v->have_work);
	if (v->have_work) {
		spread_write_json_ms(&v->first_pass_lazy_ms, j, "first_pass_lazy_ms");
		spread_write_json_ms(&v->first_pass_eager_ms, j, "first_pass_eager_ms");
		json_ms_signed(j, "first_touch_saved_ms", v->saved_ms);
		json_bool(j, "first_touch_saved_conclusive", v->saved_conclusive);
		spread_write_json_ms(&v->fuw_lazy_ms, j, "first_useful_work_lazy_ms");
		spread_write_json_ms(&v->fuw_eager_ms, j, "first_useful_work_eager_ms");
		json_string(j, "sooner", v->sooner);
		json_bool(j, "sooner_conclusive", v->sooner_conclusive);
		json_double(j, "touched_bytes", v->touched_bytes);
		json_u64(j, "ram_bytes", (uint64_t)v->ram_bytes);
		spread_write_json(&v->break_even, j, "break_even_fraction");
		json_u64(j, "pairs_never_break_even", v->never);
		json_u64(j, "pairs_break_even_above_all", v->above_all);
	}
	json_end_object(j);
}
