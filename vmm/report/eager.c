/* What eager population did: the report a person reads, and the results file's "eager" object. */
#include "report.h"

/* What an --eager-order FILE gave: its pages, and how much of them went first. */
static void order_file_print(const struct eager_facts *x, FILE *f)
{
	fprintf(f,
		"  order file %s: %llu pages (%.1f MiB in the backing's pages), %.1f MiB populated from it first\n",
		x->order_file, (unsigned long long)x->order_file_pages,
		(double)x->order_file_bytes / BYTES_PER_MIB,
		(double)x->from_file_bytes / BYTES_PER_MIB);
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

void eager_report(const struct eager *e, FILE *f)
{
	struct eager_facts x;
	struct eager_thread_facts t;

	if (eager_facts(e, &x))
		return;
	fprintf(f, "eager: %s%s%s, %u thread%s (%s)%s%s, %.2f GiB of guest RAM in %.3f s",
		eager_strategy_name(x.strategy), strategy_words(&x), auto_words(&x),
		x.nthreads, x.nthreads == 1 ? "" : "s",
		x.on_vcpu_threads ? "on the vCPU threads" : "--eager-threads",
		x.order == EAGER_ORDER_FRONT ? "" : ", order ",
		x.order == EAGER_ORDER_FRONT ? "" : eager_order_name(x.order),
		(double)x.total_bytes / BYTES_PER_GIB, x.seconds);
	if (x.populated >= 0)
		fprintf(f,
			": made %.2f GiB resident (%.2f GiB/s; %.2f GiB were already)\n",
			(double)x.populated / BYTES_PER_GIB,
			gib_per_s((double)x.populated, x.seconds),
			(double)x.resident_before / BYTES_PER_GIB);
	else
		fprintf(f, " (residency unknown: mincore failed)\n");
	if (x.order == EAGER_ORDER_FILE)
		order_file_print(&x, f);
	for (unsigned i = 0; !eager_thread(e, i, &t); i++) {
		fprintf(f, "  thread %u: %.2f GiB at 0x%llx in %.3f s", i,
			(double)t.bytes / BYTES_PER_GIB, (unsigned long long)t.gpa,
			t.t1 - t.t0);
		if (x.strategy == EAGER_PREFAULT)
			fprintf(f,
				", KVM_PRE_FAULT_MEMORY on vCPU %u: %u calls, %u retries",
				t.vcpu, t.pf.calls, t.pf.retries);
		fprintf(f, "%s\n",
			t.fell_back ? " [no MADV_POPULATE_WRITE: wrote each page]" : "");
	}
	if (x.ceiling)
		roofline_report(x.ceiling, gib_per_s((double)x.total_bytes, x.seconds),
				f);
}

void eager_predict_print(const struct eager *e, FILE *f)
{
	struct eager_facts x;

	if (!eager_facts(e, &x) && x.ceiling)
		roofline_predict_print(x.ceiling, x.total_bytes, x.nthreads, x.backing,
				       f);
}

/* ms since the run's exec; negative when t is 0 (never). */
static double since_exec(const struct run_view *v, double t)
{
	return t > 0 ? (t - timeline_time(v->tl, PHASE_EXEC)) * MSEC_PER_SEC : -1;
}

/* When population ended, against the guest's marks: the phase, and first useful work. */
static void end_vs_guest(const struct run_view *v, const struct eager_facts *x, FILE *f)
{
	enum phase p = timeline_phase_at(v->tl, x->t_end);
	double fuw = timeline_time(v->tl, PHASE_FIRST_USEFUL_WORK);

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
		fprintf(f, ": %.2f of %.2f GiB done",
			(double)x->done_bytes / BYTES_PER_GIB,
			(double)x->total_bytes / BYTES_PER_GIB);
	fputc('\n', f);
}

void eager_background_report(const struct run_view *v, FILE *f)
{
	struct eager_facts x;
	struct eager_thread_facts t;
	struct coverage c;

	if (eager_facts(v->eager, &x) || !x.background)
		return;
	fprintf(f,
		"eager: background %s%s%s, order %s, %u thread%s of its own: %.2f GiB in %.1f ms (%.2f GiB/s) beside the guest\n",
		eager_strategy_name(x.strategy), strategy_words(&x), auto_words(&x),
		eager_order_name(x.order), x.nthreads, x.nthreads == 1 ? "" : "s",
		(double)x.done_bytes / BYTES_PER_GIB, x.seconds * MSEC_PER_SEC,
		gib_per_s((double)x.done_bytes, x.seconds));
	end_vs_guest(v, &x, f);
	if (x.order == EAGER_ORDER_FILE)
		order_file_print(&x, f);
	for (unsigned i = 0; !eager_thread(v->eager, i, &t); i++) {
		fprintf(f, "  thread %u: %.2f GiB", i, (double)t.bytes / BYTES_PER_GIB);
		if (t.slice_bytes)
			fprintf(f, " of its %.2f GiB at 0x%llx",
				(double)t.slice_bytes / BYTES_PER_GIB,
				(unsigned long long)t.gpa);
		fprintf(f, " in %.1f ms, %u frontier points",
			(t.t1 - t.t0) * MSEC_PER_SEC, t.npoints);
		if (x.strategy == EAGER_PREFAULT)
			fprintf(f,
				", KVM_PRE_FAULT_MEMORY on spare vCPU %u: %u calls, %u retries",
				t.vcpu, t.pf.calls, t.pf.retries);
		fprintf(f, "%s%s\n", t.stopped ? " [stopped by the run's end]" : "",
			t.fell_back ? " [no MADV_POPULATE_WRITE: wrote each page]" : "");
	}
	if (!run_coverage(v, &c))
		fprintf(f,
			"  covered first: %.1f%% of the guest's first pass (%.1f of %.1f MiB) was populated before the guest got there (at least: %s)\n",
			100.0 * c.fraction, (double)c.covered / BYTES_PER_MIB,
			(double)c.total / BYTES_PER_MIB,
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
			json_double(j, "t_ms", since_exec(v, t.points[k].t));
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
		json_double(j, "end_minus_first_useful_work_ms",
			    (x->t_end - fuw) * MSEC_PER_SEC);
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
		json_u64(j, "bytes_done", x.done_bytes);
		json_u64(j, "chunk_bytes", x.chunk_bytes);
		json_bool(j, "finished", x.finished);
		json_double(j, "seconds", x.seconds);
		json_ms(j, "start_ms", since_exec(v, x.t_start));
		json_ms(j, "end_ms", since_exec(v, x.t_end));
		if (x.background)
			background_json(v, &x, j);
		if (x.order == EAGER_ORDER_FILE) {
			json_begin_object(j, "order_file");
			json_string(j, "path", x.order_file);
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
			json_u64(j, "slice_bytes", t.slice_bytes);
			json_u64(j, "bytes", t.bytes);
			json_double(j, "seconds", t.t1 - t.t0);
			json_bool(j, "stopped", t.stopped);
			json_u64(j, "points", t.npoints);
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
			roofline_write_json(x.ceiling,
					    gib_per_s((double)x.total_bytes, x.seconds),
					    j);
	}
	json_begin_array(j, "fallbacks");
	if (host && x.requested == EAGER_AUTO && !x.pre_fault_here)
		json_string(j, NULL, "auto: no KVM_PRE_FAULT_MEMORY, used populate");
	if (host && x.fell_back)
		json_string(j, NULL, "no MADV_POPULATE_WRITE: wrote one byte per page");
	json_end_array(j);
}
