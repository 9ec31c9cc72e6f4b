/*
 * Repeated runs summed up: per phase, per sweep row and for the summary,
 * median and spread; and the modes of a --compare side by side.
 */
#include "report.h"

#include <string.h>

/* Phase p of a timeline: when it started and ended (ms since exec, whole ns), its index; -1 if not reached. */
static int phase_at(const struct timeline *tl, enum phase p, double *start, double *end)
{
	double t0, t1;
	int i = timeline_index(tl, p);

	if (i <= 0)
		return -1;
	timeline_phase(tl, (unsigned)i - 1, &t0, NULL);
	timeline_phase(tl, (unsigned)i, &t1, NULL);
	*start = timeline_ms(tl, t0);
	*end = timeline_ms(tl, t1);
	return i;
}

enum what { START, END, DURATION, COUNTER };

static void phase_spread(const struct run_set *s, enum phase name, enum what w,
			 const char *counter, struct spread *out)
{
	double v[s->n ? s->n : 1], start, end;
	unsigned n = 0;

	for (unsigned r = 0; r < s->n; r++) {
		int i = phase_at(s->runs[r]->tl, name, &start, &end);
		uint64_t d;

		if (i < 0)
			continue;
		if (w == COUNTER) {
			if (timeline_delta(s->runs[r]->tl, (unsigned)i, counter, &d))
				v[n++] = (double)d;
		} else {
			v[n++] = w == START ? start : w == END ? end : end - start;
		}
	}
	spread_of(v, n, out);
}

/* Summary item k over the runs (those that measured it). */
static void summary_spread(const struct run_set *s, enum summary_item k,
			   struct spread *out)
{
	double v[s->n ? s->n : 1];
	unsigned n = 0;

	for (unsigned r = 0; r < s->n; r++) {
		struct tl_summary sum;

		run_summary(s->runs[r], &sum);
		if (sum.ms[k] >= 0)
			v[n++] = sum.ms[k];
	}
	spread_of(v, n, out);
}

/* Seconds of one field of the table record for (workload, iteration, size, mode), per run. */
enum sweep_field { TOUCH, MAP, UNMAP };

static void sweep_spread(const struct run_set *s, const struct mvm_rec_sweep *key,
			 uint32_t mode, enum sweep_field fld, struct spread *out)
{
	double v[s->n ? s->n : 1];
	unsigned n = 0;

	for (unsigned r = 0; r < s->n; r++) {
		const struct records *res = s->runs[r]->rec;
		const struct mvm_rec_sweep *rec = records_table_rec(res, key, mode);

		if (rec)
			v[n++] = records_seconds(res, fld == TOUCH ? rec->touch_cycles
						      : fld == MAP ? rec->map_cycles
								   : rec->unmap_cycles);
	}
	spread_of(v, n, out);
}

static void print_timeline(const struct run_set *s, FILE *f)
{
	const struct timeline *tl = s->runs[0]->tl;
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_SPREAD_BYTES], d[FMT_BYTES];
	double t;

	fprintf(f,
		"\n%s: timeline over %u run%s (ms since exec; median [min-max]; IQR from 5 runs; counters: median)\n",
		s->label, s->n, s->n == 1 ? "" : "s");
	fprintf(f, "%-18s %10s %10s %-32s %9s", "phase", "start", "end",
		"duration [min-max]", "IQR");
	for (unsigned k = 0; k < table_counter_count(); k++)
		fprintf(f, " %14s", table_counter(k));
	fputc('\n', f);
	for (unsigned i = 1; i < timeline_count(tl); i++) {
		enum phase name = timeline_phase(tl, i, &t, NULL);
		struct spread st, en, du, ct;

		phase_spread(s, name, START, NULL, &st);
		phase_spread(s, name, END, NULL, &en);
		phase_spread(s, name, DURATION, NULL, &du);
		fprintf(f, "%-18s %10s %10s %-32s %9s", phase_name(name),
			fmt_value(a, st.median, 3), fmt_value(b, en.median, 3),
			fmt_spread(c, &du, 3),
			du.n >= 5 ? fmt_value(d, du.q3 - du.q1, 3) : "-");
		for (unsigned k = 0; k < table_counter_count(); k++) {
			phase_spread(s, name, COUNTER, table_counter(k), &ct);
			fprintf(f, " %14s", ct.n ? fmt_value(a, ct.median, 0) : "-");
		}
		fputc('\n', f);
	}
}

static void print_summary(const struct run_set *s, FILE *f)
{
	char a[FMT_SPREAD_BYTES], b[FMT_BYTES];

	fprintf(f, "%s over %u run%s, ms, median [min-max] (IQR):\n", s->label, s->n,
		s->n == 1 ? "" : "s");
	for (unsigned k = 0; k < SUM_COUNT; k++) {
		struct spread sp;

		summary_spread(s, k, &sp);
		fprintf(f, "  %-22s %s", summary_names[k], fmt_spread(a, &sp, 1));
		if (sp.n >= 5)
			fprintf(f, " (%s)", fmt_value(b, sp.q3 - sp.q1, 1));
		fputc('\n', f);
	}
}

/* The OSv table with each cell the median over the runs, then the spreads beside it. */
static void print_sweep(const struct run_set *s, FILE *f)
{
	size_t n;
	const struct mvm_rec_sweep *recs = records_sweep(s->runs[0]->rec, &n);
	uint32_t workload = 0, iteration = 0;

	for (size_t i = 0; i < n; i++) {
		const struct mvm_rec_sweep *k = &recs[i];
		int flat = k->workload != MVM_WL_SWEEP; /* flat, perm: touch only */
		struct spread dm, pp;
		char a[FMT_BYTES], b[FMT_BYTES], c[FMT_SPREAD_BYTES], d[FMT_SPREAD_BYTES];

		if (records_table_rec(s->runs[0]->rec, k, k->mode) != k ||
		    (!flat && k->mode != MVM_MODE_DEMAND))
			continue; /* one line per size, from its table record */
		if (k->workload != workload || k->iteration != iteration) {
			workload = k->workload;
			iteration = k->iteration;
			fprintf(f, "\n%s: Iteration %u%s%s%s, median of %u runs\n\n",
				s->label, iteration, flat ? " (" : "",
				flat ? sweep_workload_name(workload) : "",
				flat ? ")" : "", s->n);
			fprintf(f, "     time (seconds)\n");
			fprintf(f,
				flat ? " MiB  touch  | touch [min-max]\n"
				     : " MiB demand populate | demand [min-max]           populate [min-max]\n");
		}
		sweep_spread(s, k, k->mode, TOUCH, &dm);
		if (flat) {
			fprintf(f, "%4u  %-6s | %s\n", k->size_mib,
				fmt_value(a, dm.median, 3), fmt_spread(c, &dm, 3));
			continue;
		}
		sweep_spread(s, k, MVM_MODE_POPULATE, TOUCH, &pp);
		fprintf(f, "%4u %-6s %-6s  | %-26s %s\n", k->size_mib,
			fmt_value(a, dm.median, 3),
			pp.n ? fmt_value(b, pp.median, 3) : "-", fmt_spread(c, &dm, 3),
			fmt_spread(d, &pp, 3));
	}
}

void aggregate_print(const struct run_set *s, int sweep_tables, FILE *f)
{
	if (!s->n)
		return;
	if (sweep_tables)
		print_sweep(s, f);
	print_timeline(s, f);
	print_summary(s, f);
}

void aggregate_write_json(const struct run_set *s, struct json *j)
{
	const struct timeline *tl = s->n ? s->runs[0]->tl : NULL;
	size_t n = 0;
	const struct mvm_rec_sweep *recs =
		s->n ? records_sweep(s->runs[0]->rec, &n) : NULL;
	double t;

	json_begin_object(j, s->label);
	json_u64(j, "runs", s->n);
	json_begin_array(j, "phases");
	for (unsigned i = 1; tl && i < timeline_count(tl); i++) {
		enum phase name = timeline_phase(tl, i, &t, NULL);
		struct spread sp;

		json_begin_object(j, NULL);
		json_string(j, "phase", phase_name(name));
		phase_spread(s, name, START, NULL, &sp);
		spread_write_json_ms(&sp, j, "start_ms");
		phase_spread(s, name, END, NULL, &sp);
		spread_write_json_ms(&sp, j, "end_ms");
		phase_spread(s, name, DURATION, NULL, &sp);
		spread_write_json_ms(&sp, j, "dur_ms");
		json_begin_object(j, "counters");
		for (unsigned k = 0; k < table_counter_count(); k++) {
			phase_spread(s, name, COUNTER, table_counter(k), &sp);
			if (sp.n)
				spread_write_json(&sp, j, table_counter(k));
		}
		json_end_object(j);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_object(j, "summary");
	for (unsigned k = 0; k < SUM_COUNT; k++) {
		struct spread sp;

		summary_spread(s, k, &sp);
		spread_write_json_ms(&sp, j, summary_names[k]);
	}
	json_end_object(j);
	json_begin_array(j, "sweep");
	for (size_t i = 0; i < n; i++) {
		const struct mvm_rec_sweep *k = &recs[i];
		struct spread sp;

		if (records_table_rec(s->runs[0]->rec, k, k->mode) != k)
			continue;
		json_begin_object(j, NULL);
		json_string(j, "workload", sweep_workload_name(k->workload));
		json_u64(j, "iteration", k->iteration);
		json_u64(j, "size_mib", k->size_mib);
		json_string(j, "guest_mapping", sweep_mapping_name(k));
		sweep_spread(s, k, k->mode, TOUCH, &sp);
		spread_write_json_s(&sp, j, "touch_s");
		sweep_spread(s, k, k->mode, MAP, &sp);
		spread_write_json_s(&sp, j, "map_s");
		sweep_spread(s, k, k->mode, UNMAP, &sp);
		spread_write_json_s(&sp, j, "unmap_s");
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

/* "eager (populate)": a mode's label, and the strategy its runs' eager resolved to. */
static const char *set_name(const struct run_set *s, char *buf, size_t len)
{
	const struct run_view *r = s->runs[0];

	if (eager_strategy(r->eager) != EAGER_NONE)
		snprintf(buf, len, "%s (%s)", s->label,
			 eager_strategy_name(eager_strategy(r->eager)));
	else
		snprintf(buf, len, "%s", s->label);
	return buf;
}

/* The timeline with the most phases (an eager run has eager_done): the table's rows. */
static const struct timeline *rows_of(const struct run_set *sets, unsigned n)
{
	const struct timeline *tl = sets[0].runs[0]->tl;

	for (unsigned m = 1; m < n; m++)
		if (timeline_count(sets[m].runs[0]->tl) > timeline_count(tl))
			tl = sets[m].runs[0]->tl;
	return tl;
}

/* Two modes: end, duration with its spread, and pf_taken of each, side by side. */
static void wide_table(const struct run_set *sets, const struct timeline *tl, FILE *f)
{
	char head[2][32];
	int w[2];
	double t;

	for (int m = 0; m < 2; m++) {
		snprintf(head[m], sizeof(head[m]), "%s end", sets[m].label);
		w[m] = strlen(head[m]) > 10 ? (int)strlen(head[m]) : 10;
	}
	fprintf(f, "%-18s %*s %-26s %9s | %*s %-26s %9s\n", "phase", w[0], head[0],
		"duration", "pf_taken", w[1], head[1], "duration", "pf_taken");
	for (unsigned i = 1; i < timeline_count(tl); i++) {
		enum phase name = timeline_phase(tl, i, &t, NULL);

		fprintf(f, "%-18s", phase_name(name));
		for (int m = 0; m < 2; m++) {
			struct spread en, du, pf;
			char a[FMT_BYTES], b[FMT_SPREAD_BYTES], c[FMT_BYTES];

			phase_spread(&sets[m], name, END, NULL, &en);
			phase_spread(&sets[m], name, DURATION, NULL, &du);
			phase_spread(&sets[m], name, COUNTER, "pf_taken", &pf);
			fprintf(f, "%s %*s %-26s %9s", m ? " |" : "", w[m],
				en.n ? fmt_value(a, en.median, 1) : "-",
				fmt_spread(b, &du, 1),
				pf.n ? fmt_value(c, pf.median, 0) : "-");
		}
		fputc('\n', f);
	}
}

/* Three modes or more: phases as rows, each mode a group of two compact columns (medians). */
static void compact_table(const struct run_set *sets, unsigned n,
			  const struct timeline *tl, FILE *f)
{
	double t;

	fprintf(f, "%-18s", "");
	for (unsigned m = 0; m < n; m++)
		fprintf(f, " | %19s", sets[m].label);
	fprintf(f, "\n%-18s", "phase");
	for (unsigned m = 0; m < n; m++)
		fprintf(f, " | %9s %9s", "end", "pf_taken");
	fputc('\n', f);
	for (unsigned i = 1; i < timeline_count(tl); i++) {
		enum phase name = timeline_phase(tl, i, &t, NULL);

		fprintf(f, "%-18s", phase_name(name));
		for (unsigned m = 0; m < n; m++) {
			struct spread en, pf;
			char a[FMT_BYTES], c[FMT_BYTES];

			phase_spread(&sets[m], name, END, NULL, &en);
			phase_spread(&sets[m], name, COUNTER, "pf_taken", &pf);
			fprintf(f, " | %9s %9s", en.n ? fmt_value(a, en.median, 1) : "-",
				pf.n ? fmt_value(c, pf.median, 0) : "-");
		}
		fputc('\n', f);
	}
}

void aggregate_compare_print(const struct run_set *sets, unsigned n, FILE *f)
{
	const struct timeline *tl;
	char name[64];
	unsigned runs = n ? sets[0].n : 0;

	if (!n || !runs)
		return;
	tl = rows_of(sets, n);
	fputc('\n', f);
	for (unsigned m = 0; m < n; m++)
		fprintf(f, "%s%s", m ? " vs " : "",
			set_name(&sets[m], name, sizeof(name)));
	if (n == 2) {
		fprintf(f,
			", %u run%s each: end = ms since exec when the phase ended; duration in ms%s; pf_taken = KVM's page faults in the phase%s\n",
			runs, runs == 1 ? "" : "s", runs > 1 ? " (median [min-max])" : "",
			runs > 1 ? " (median)" : "");
		wide_table(sets, tl, f);
		return;
	}
	fprintf(f,
		", %u run%s each: end = ms since exec when the phase ended, pf_taken = KVM's page faults in the phase%s (each mode's timeline above has the durations and spreads)\n",
		runs, runs == 1 ? "" : "s", runs > 1 ? " (medians)" : "");
	compact_table(sets, n, tl, f);
}
