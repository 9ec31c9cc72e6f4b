/* The timeline for people (a table) and in the results file (every phase, every counter). */
#include "report.h"

/*
 * Phase i >= 1 runs from mark i - 1 to mark i and is named for the event
 * that ends it; mark 0 is "exec", the zero of the clock. Times are ms since
 * exec. The table, the JSON and the trace all use this convention.
 */
void timeline_print(const struct timeline *tl, const struct tl_summary *s,
		    const char *ended, FILE *f)
{
	double exec = timeline_time(tl, PHASE_EXEC);
	unsigned nk = table_counter_count();
	int idx[TABLE_COUNTERS_MAX];
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES];

	fprintf(f,
		"\ntimeline: each phase runs from the end of the one above to the event that names it\n");
	fprintf(f,
		"(ms since exec; KVM counters during the phase, all vCPUs; - = not measured)\n");
	fprintf(f, "%-18s %10s %10s %10s", "phase", "start", "end", "duration");
	for (unsigned k = 0; k < nk; k++) {
		idx[k] = kvmstats_index(timeline_stats(tl), table_counter(k));
		if (idx[k] >= 0)
			fprintf(f, " %14s", table_counter(k));
	}
	fputc('\n', f);
	for (unsigned i = 1; i < timeline_count(tl); i++) {
		double prev, t;
		enum phase p = timeline_phase(tl, i, &t, NULL);
		double t0, t1 = (t - exec) * MSEC_PER_SEC;
		uint64_t d;

		timeline_phase(tl, i - 1, &prev, NULL);
		t0 = (prev - exec) * MSEC_PER_SEC;
		fprintf(f, "%-18s %10s %10s %10s", phase_name(p), fmt_value(a, t0, 3),
			fmt_value(b, t1, 3), fmt_value(c, t1 - t0, 3));
		for (unsigned k = 0; k < nk; k++) {
			if (idx[k] < 0)
				continue;
			if (timeline_delta_k(tl, i, (unsigned)idx[k], &d))
				fprintf(f, " %14llu", (unsigned long long)d);
			else
				fprintf(f, " %14s", "-");
		}
		fputc('\n', f);
	}
	fprintf(f, "setup: %s ms (", fmt_value(a, s->ms[SUM_SETUP], 1));
	if (s->ms[SUM_EAGER] >= 0 && s->eager_in_guest)
		fprintf(f, "eager in the guest, not in setup: %s ms of workload_start",
			fmt_value(b, s->ms[SUM_EAGER], 1));
	else if (s->ms[SUM_EAGER] >= 0 && s->eager_background)
		fprintf(f, "eager beside the guest, not in setup: %s ms",
			fmt_value(b, s->ms[SUM_EAGER], 1));
	else if (s->ms[SUM_EAGER] >= 0)
		fprintf(f, "eager %s ms", fmt_value(b, s->ms[SUM_EAGER], 1));
	else
		fprintf(f, "no eager");
	fprintf(f, ") | first useful work: ");
	if (s->ms[SUM_FIRST_USEFUL_WORK] >= 0)
		fprintf(f, "%s ms", fmt_value(a, s->ms[SUM_FIRST_USEFUL_WORK], 1));
	else if (timeline_time(tl, PHASE_WORKLOAD_END) <= 0)
		/* The workload never ended: whether it would have marked one is unknown. */
		fprintf(f, "not reached (the run ended before the workload did%s%s)",
			ended ? ": " : "", ended ? ended : "");
	else
		fprintf(f, "n/a (the workload marks none)");
	fprintf(f, " | total: %s ms\n", fmt_value(a, s->ms[SUM_TOTAL], 1));
}

/* Every counter KVM publishes: cumulative ones as their delta over the phase, gauges as their value. */
static void stats_json(const struct timeline *tl, unsigned i, struct json *j)
{
	const struct kvm_stats *st = timeline_stats(tl);
	const uint64_t *sample = timeline_sample(tl, i);
	uint64_t d;

	if (!sample) {
		json_null(j, "stats");
		return;
	}
	json_begin_object(j, "stats");
	for (unsigned k = 0; k < kvmstats_count(st); k++) {
		int cum;
		const char *name = kvmstats_name(st, k, &cum);

		if (cum && timeline_delta_k(tl, i, k, &d))
			json_u64(j, name, d);
		else if (!cum)
			json_u64(j, name, sample[k]);
	}
	json_end_object(j);
}

void timeline_write_json(const struct timeline *tl, const struct tl_summary *s,
			 struct json *j)
{
	json_begin_array(j, "timeline");
	for (unsigned i = 1; i < timeline_count(tl); i++) {
		double prev, t;
		int guest;
		enum phase p = timeline_phase(tl, i, &t, &guest);
		int64_t t0, t1 = timeline_ns(tl, t);

		timeline_phase(tl, i - 1, &prev, NULL);
		t0 = timeline_ns(tl, prev);
		json_begin_object(j, NULL);
		json_string(j, "phase", phase_name(p));
		json_string(j, "source", guest ? "guest" : "vmm");
		json_ns(j, "start_ms", t0, NSEC_PER_MSEC);
		json_ns(j, "end_ms", t1, NSEC_PER_MSEC);
		json_ns(j, "dur_ms", t1 - t0, NSEC_PER_MSEC);
		stats_json(tl, i, j);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_object(j, "summary");
	for (unsigned k = 0; k < SUM_COUNT; k++)
		json_ms(j, summary_names[k], s->ms[k]);
	json_end_object(j);
}
