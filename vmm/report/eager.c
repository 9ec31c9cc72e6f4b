/* What eager population did: the report a person reads, and the results file's "eager" object. */
#include "report.h"

#include <string.h>

#define PERCENT_OF 100.0

/* What an --eager-order FILE gave: its pages, and how much of them went first. */
static void order_file_print(const struct eager_facts *x, FILE *f)
{
	char a[FMT_BYTES], b[FMT_BYTES];

	fprintf(f,
		"  order file %s: %llu pages (%s in the backing's pages), %s populated from it first\n",
		x->order_file, (unsigned long long)x->order_file_pages,
		fmt_size(a, (double)x->order_file_bytes),
		fmt_size(b, (double)x->from_file_bytes));
	if (x->order_file_ram_bytes && x->order_file_ram_bytes < x->total_bytes)
		fprintf(f,
			"  (recorded with %s of guest RAM: all its pages lie in this run's; the rest goes front to back)\n",
			fmt_size(a, (double)x->order_file_ram_bytes));
}

static const char *strategy_words(const struct eager_facts *x)
{
	return x->strategy == EAGER_PREFAULT
		       ? " (MADV_POPULATE_WRITE + KVM_PRE_FAULT_MEMORY)"
		       : " (MADV_POPULATE_WRITE)";
}

static const char *auto_words(const struct eager_facts *x)
{
	return x->requested == EAGER_AUTO
		       ? (x->pre_fault_here ? " [auto]"
					    : " [auto: no KVM_PRE_FAULT_MEMORY here]")
		       : "";
}

void eager_report(const struct eager *e, const char *stopped, FILE *f)
{
	struct eager_facts x;
	struct eager_thread_facts t;
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES], d[FMT_BYTES];
	int whole;

	if (eager_facts(e, &x))
		return;
	whole = x.done_bytes == x.total_bytes;
	fprintf(f, "eager: %s%s%s, %u thread%s (%s)%s%s, %s of guest RAM",
		eager_strategy_name(x.strategy), strategy_words(&x), auto_words(&x),
		x.nthreads, x.nthreads == 1 ? "" : "s",
		x.on_vcpu_threads ? "on the vCPU threads" : "--eager-threads",
		x.order == EAGER_ORDER_FRONT ? "" : ", order ",
		x.order == EAGER_ORDER_FRONT ? "" : eager_order_name(x.order),
		fmt_size(a, (double)x.total_bytes));
	/* Stopped part way (Ctrl-C, a failed thread): say so, or it reads as finished. */
	if (whole)
		fprintf(f, " in %s", fmt_duration(d, x.seconds));
	else
		fprintf(f,
			": NOT FINISHED, stopped after %s with %s of %s done (the run ended%s%s)",
			fmt_duration(d, x.seconds), fmt_size(b, (double)x.done_bytes),
			fmt_size(c, (double)x.total_bytes), stopped ? ": " : "",
			stopped ? stopped : "");
	if (x.populated >= 0)
		fprintf(f, ": made %s resident (%.2f GiB/s; %s were already)\n",
			fmt_size(a, (double)x.populated),
			gib_per_s((double)x.populated, x.seconds),
			fmt_size(b, (double)x.resident_before));
	else
		fprintf(f, " (residency unknown: mincore failed)\n");
	if (x.order == EAGER_ORDER_FILE)
		order_file_print(&x, f);
	for (unsigned i = 0; !eager_thread(e, i, &t); i++) {
		fprintf(f, "  thread %u: ", i);
		if (!t.bytes) /* the file order: no slice, the threads share RAM */
			fprintf(f, "%s", fmt_size(a, (double)t.done));
		else if (t.done != t.bytes)
			fprintf(f, "%s of ", fmt_size(a, (double)t.done));
		if (t.bytes)
			fprintf(f, "%s at 0x%llx", fmt_size(b, (double)t.bytes),
				(unsigned long long)t.gpa);
		fprintf(f, " in %s", fmt_duration(d, t.t1 - t.t0));
		if (x.strategy == EAGER_PREFAULT)
			fprintf(f,
				", KVM_PRE_FAULT_MEMORY on vCPU %u: %u call%s, %u retr%s",
				t.vcpu, t.pf.calls, t.pf.calls == 1 ? "" : "s",
				t.pf.retries, t.pf.retries == 1 ? "y" : "ies");
		if (t.node >= 0 && t.nodes > 1)
			fprintf(f,
				", nodes %d-%d from node %d (host node %d, CPU %d): fewer threads than nodes",
				t.node, t.node + (int)t.nodes - 1, t.node, t.host_node,
				t.cpu);
		else if (t.node >= 0)
			fprintf(f, ", on node %d (host node %d, CPU %d)", t.node,
				t.host_node, t.cpu);
		fprintf(f, "%s\n",
			t.fell_back ? " [no MADV_POPULATE_WRITE: wrote each page]" : "");
	}
	if (x.ceiling)
		roofline_report(x.ceiling, gib_per_s((double)x.done_bytes, x.seconds),
				x.total_bytes, x.backing, x.nthreads, f);
}

#define SLOW_EAGER_S	   5.0	/* longer: say what a reservoir would cost */
#define SLOW_EAGER_PERCENT 50.0 /* below this share of the clear ceiling: the same */

void eager_slow_note(const struct eager *e, const struct vm_config *cfg, FILE *f)
{
	const struct mm_ceiling *c;
	struct eager_facts x;
	char size[FMT_BYTES], mem[32], d[FMT_BYTES];
	double pct = 0;

	if (eager_facts(e, &x) || x.background || !x.finished || cfg->mem_path ||
	    cfg->reservoir || x.seconds <= 0)
		return;
	c = x.ceiling;
	if (c && c->found && !strcmp(c->op, "clear"))
		pct = PERCENT_OF * gib_per_s((double)x.done_bytes, x.seconds) /
		      c->gib_per_s;
	if (x.seconds <= SLOW_EAGER_S && !(pct > 0 && pct < SLOW_EAGER_PERCENT))
		return;
	snprintf(mem, sizeof(mem), "%lluM", (unsigned long long)(x.total_bytes >> 20));
	fmt_size(size, (double)x.total_bytes);
	fprintf(f, "  slow: a 2 MiB reservoir would leave page tables only");
	if (c && c->lease_map_gib_per_s > 0) {
		fprintf(f,
			": predicted %s for %s here (the roofline's hugetlb2m map ceiling, %.0f GiB/s)",
			fmt_duration(d, (double)x.total_bytes / BYTES_PER_GIB /
						c->lease_map_gib_per_s),
			size, c->lease_map_gib_per_s);
		if (c->lease_clear_gib_per_s > 0)
			fprintf(f,
				", once it is made (%s of clearing at its clear ceiling)",
				fmt_duration(d, (double)x.total_bytes / BYTES_PER_GIB /
							c->lease_clear_gib_per_s));
	} else {
		fprintf(f,
			" (what they cost here: the map row of build/bench/roofline --size %s --backings hugetlb2m)",
			mem);
	}
	fprintf(f, "; make one: scripts/reservoir create %s, then: minivmm --mem %s", mem,
		mem);
	if (cfg->vcpus > 1)
		fprintf(f, " --vcpus %u", cfg->vcpus);
	fprintf(f, " --reservoir %s --eager%s%s %s", MM_RESERVOIR_DIR,
		x.requested == EAGER_AUTO ? "" : "=",
		x.requested == EAGER_AUTO ? "" : eager_strategy_name(x.requested),
		cfg->guest_path);
	if (cfg->guest_argc)
		fprintf(f, " --");
	for (int i = 0; i < cfg->guest_argc; i++)
		fprintf(f, " %s", cfg->guest_argv[i]);
	fputc('\n', f);
}

void eager_predict_print(const struct eager *e, FILE *f)
{
	struct eager_facts x;

	if (!eager_facts(e, &x) && x.ceiling)
		roofline_predict_print(x.ceiling, x.total_bytes, x.nthreads, x.backing,
				       f);
}

/* ms since the run's exec, whole ns (timeline_ns); negative when t is 0 (never). */
static double since_exec(const struct run_view *v, double t)
{
	return t > 0 ? timeline_ms(v->tl, t) : -1;
}

/* When population ended, against the guest's marks: the phase, and first useful work. */
static void end_vs_guest(const struct run_view *v, const struct eager_facts *x, FILE *f)
{
	enum phase p = timeline_phase_at(v->tl, x->t_end);
	double fuw = timeline_time(v->tl, PHASE_FIRST_USEFUL_WORK);
	char a[FMT_BYTES], b[FMT_BYTES];

	fprintf(f, "  %s at %.1f ms since exec, in phase %s",
		x->finished ? "finished" : "stopped as the run ended",
		since_exec(v, x->t_end),
		p < PHASE_COUNT ? phase_name(p) : "(after vm_exit)");
	if (fuw > 0)
		fprintf(f, ", %.1f ms %s first useful work (%.1f ms)",
			(x->t_end > fuw ? x->t_end - fuw : fuw - x->t_end) * MSEC_PER_SEC,
			x->t_end > fuw ? "after" : "before", since_exec(v, fuw));
	else
		fprintf(f, " (the guest marked no first useful work)");
	if (!x->finished)
		fprintf(f, ": %s of %s done", fmt_size(a, (double)x->done_bytes),
			fmt_size(b, (double)x->total_bytes));
	fputc('\n', f);
}

void eager_background_report(const struct run_view *v, FILE *f)
{
	struct eager_facts x;
	struct eager_thread_facts t;
	struct coverage c;
	char a[FMT_BYTES], b[FMT_BYTES];

	if (eager_facts(v->eager, &x) || !x.background)
		return;
	fprintf(f,
		"eager: background %s%s%s, order %s, %u thread%s of its own%s: %s in %.1f ms (%.2f GiB/s) beside the guest\n",
		eager_strategy_name(x.strategy), strategy_words(&x), auto_words(&x),
		eager_order_name(x.order), x.nthreads, x.nthreads == 1 ? "" : "s",
		x.threads_default ? " (one per CPU the vCPUs leave idle, at least one)"
				  : "",
		fmt_size(a, (double)x.done_bytes), x.seconds * MSEC_PER_SEC,
		gib_per_s((double)x.done_bytes, x.seconds));
	end_vs_guest(v, &x, f);
	if (x.order == EAGER_ORDER_FILE)
		order_file_print(&x, f);
	for (unsigned i = 0; !eager_thread(v->eager, i, &t); i++) {
		fprintf(f, "  thread %u: %s", i, fmt_size(a, (double)t.done));
		if (t.bytes)
			fprintf(f, " of its %s at 0x%llx", fmt_size(b, (double)t.bytes),
				(unsigned long long)t.gpa);
		fprintf(f, " in %.1f ms, %u frontier point%s",
			(t.t1 - t.t0) * MSEC_PER_SEC, t.npoints,
			t.npoints == 1 ? "" : "s");
		if (x.strategy == EAGER_PREFAULT)
			fprintf(f,
				", KVM_PRE_FAULT_MEMORY on spare vCPU %u: %u call%s, %u retr%s",
				t.vcpu, t.pf.calls, t.pf.calls == 1 ? "" : "s",
				t.pf.retries, t.pf.retries == 1 ? "y" : "ies");
		fprintf(f, "%s%s\n", t.stopped ? " [stopped by the run's end]" : "",
			t.fell_back ? " [no MADV_POPULATE_WRITE: wrote each page]" : "");
	}
	if (!run_coverage(v, &c))
		fprintf(f,
			"  covered first: %.1f%% of the guest's first pass (%s of %s) was populated before the guest got there (at least: %s)\n",
			100.0 * c.fraction, fmt_size(a, (double)c.covered),
			fmt_size(b, (double)c.total),
			c.sequential
				? "chunks done before each stretch between two of the guest's frontier points began"
				: "chunks done before its pass began");
}

/* Every thread's frontier, one array: (thread, t_ms, bytes, gpa). */
static void points_json(const struct run_view *v, struct json *j)
{
	struct eager_thread_facts t;

	json_begin_array(j, "progress");
	for (unsigned i = 0; !eager_thread(v->eager, i, &t); i++)
		for (unsigned k = 0; k < t.npoints; k++) {
			json_begin_object(j, NULL);
			json_u64(j, "thread", i);
			json_ms(j, "t_ms", since_exec(v, t.points[k].t));
			json_u64(j, "bytes", t.points[k].bytes);
			json_u64(j, "gpa", t.points[k].gpa);
			json_end_object(j);
		}
	json_end_array(j);
}

/* Background: when it ended against the guest's marks, and what it covered first. */
static void background_json(const struct run_view *v, const struct eager_facts *x,
			    struct json *j)
{
	enum phase p = timeline_phase_at(v->tl, x->t_end);
	double fuw = timeline_time(v->tl, PHASE_FIRST_USEFUL_WORK);
	struct coverage c;

	if (x->t_end > 0 && p < PHASE_COUNT)
		json_string(j, "end_phase", phase_name(p));
	else
		json_null(j, "end_phase");
	if (x->t_end > 0 && fuw > 0)
		json_ms_signed(j, "end_minus_first_useful_work_ms",
			       timeline_ms_between(v->tl, fuw, x->t_end));
	else
		json_null(j, "end_minus_first_useful_work_ms");
	json_begin_array(j, "spare_vcpus");
	for (unsigned i = 0; i < x->spare_vcpus; i++)
		json_u64(j, NULL, vm_nvcpus(v->vm) + i);
	json_end_array(j);
	if (run_coverage(v, &c)) {
		json_null(j, "covered_first");
		return;
	}
	json_begin_object(j, "covered_first");
	json_u64(j, "bytes", c.covered);
	json_u64(j, "of_bytes", c.total);
	json_double(j, "fraction", c.fraction);
	json_string(j, "bound", c.sequential ? "segment" : "pass");
	json_end_object(j);
}

void eager_write_json(const struct run_view *v, struct json *j)
{
	const struct eager *e = v->eager;
	struct eager_facts x;
	struct eager_thread_facts t;
	int host = !eager_facts(e, &x);

	json_string(j, "requested", eager_strategy_name(v->cfg->eager));
	json_string(j, "strategy", eager_strategy_name(eager_strategy(e)));
	json_bool(j, "background", v->cfg->eager_background);
	json_string(j, "order", eager_order_name(eager_order_of(v->cfg->eager_order)));
	if (host) {
		json_u64(j, "threads", x.nthreads);
		json_bool(j, "on_vcpu_threads", x.on_vcpu_threads);
		json_u64(j, "bytes", x.total_bytes);
		json_u64(j, "done_bytes", x.done_bytes);
		json_bool(j, "complete", x.done_bytes == x.total_bytes);
		json_u64(j, "chunk_bytes", x.chunk_bytes);
		/* end_ms - start_ms, as the summary's eager_ms: 0 before it ended. */
		json_ns(j, "seconds",
			x.t_end > 0 ? timeline_ns(v->tl, x.t_end) -
					      timeline_ns(v->tl, x.t_start)
				    : 0,
			NSEC_PER_SEC);
		json_ms(j, "start_ms", since_exec(v, x.t_start));
		json_ms(j, "end_ms", since_exec(v, x.t_end));
		if (x.background)
			background_json(v, &x, j);
		if (x.order == EAGER_ORDER_FILE) {
			json_begin_object(j, "order_file");
			json_bytes(j, "path", x.order_file);
			json_u64(j, "pages", x.order_file_pages);
			json_u64(j, "bytes", x.order_file_bytes);
			json_u64(j, "populated_first_bytes", x.from_file_bytes);
			json_end_object(j);
		}
		json_i64(j, "resident_bytes_before", x.resident_before);
		json_i64(j, "resident_bytes_after", x.resident_after);
		json_i64(j, "populated_bytes", x.populated);
		json_double(j, "populated_gib_per_s",
			    x.populated >= 0 ? gib_per_s((double)x.populated, x.seconds)
					     : 0);
		json_begin_array(j, "per_thread");
		for (unsigned i = 0; !eager_thread(e, i, &t); i++) {
			json_begin_object(j, NULL);
			json_u64(j, "thread", i);
			json_u64(j, "gpa", t.gpa);
			json_u64(j, "bytes", t.bytes);
			json_u64(j, "done_bytes", t.done);
			json_ns(j, "seconds",
				timeline_ns(v->tl, t.t1) - timeline_ns(v->tl, t.t0),
				NSEC_PER_SEC);
			json_bool(j, "stopped", t.stopped);
			json_u64(j, "points", t.npoints);
			if (t.node >= 0) {
				char cpus[128];

				json_i64(j, "node", t.node);
				json_i64(j, "host_node", t.host_node);
				json_u64(j, "nodes", t.nodes);
				json_i64(j, "cpu", t.cpu);
				if (t.allowed)
					json_string(j, "allowed",
						    mm_cpulist_format(t.allowed, cpus,
								      sizeof(cpus)));
			}
			if (x.strategy == EAGER_PREFAULT) {
				json_u64(j, "prefault_vcpu", t.vcpu);
				json_u64(j, "prefault_bytes", t.pf.bytes);
				json_u64(j, "prefault_calls", t.pf.calls);
				json_u64(j, "prefault_retries", t.pf.retries);
			}
			json_end_object(j);
		}
		json_end_array(j);
		points_json(v, j);
		if (x.ceiling)
			roofline_write_json(
				x.ceiling, gib_per_s((double)x.done_bytes, x.seconds), j);
	}
	json_begin_array(j, "fallbacks");
	if (host && x.requested == EAGER_AUTO && !x.pre_fault_here)
		json_string(j, NULL, "auto: no KVM_PRE_FAULT_MEMORY, used populate");
	if (host && x.fell_back)
		json_string(j, NULL, "no MADV_POPULATE_WRITE: wrote one byte per page");
	json_end_array(j);
}
