/* What eager population did: the report a person reads, and the results file's "eager" object. */
#include "report.h"

void eager_report(const struct eager *e, const char *stopped, FILE *f)
{
	struct eager_facts x;
	struct eager_thread_facts t;
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES];
	int whole;

	if (eager_facts(e, &x))
		return;
	whole = x.done_bytes == x.total_bytes;
	fprintf(f, "eager: %s%s%s, %u thread%s (%s), %s of guest RAM",
		eager_strategy_name(x.strategy),
		x.strategy == EAGER_PREFAULT
			? " (MADV_POPULATE_WRITE + KVM_PRE_FAULT_MEMORY)"
			: " (MADV_POPULATE_WRITE)",
		x.requested == EAGER_AUTO
			? (x.pre_fault_here ? " [auto]"
					    : " [auto: no KVM_PRE_FAULT_MEMORY here]")
			: "",
		x.nthreads, x.nthreads == 1 ? "" : "s",
		x.on_vcpu_threads ? "on the vCPU threads" : "--eager-threads",
		fmt_size(a, (double)x.total_bytes));
	/* Stopped part way (Ctrl-C, a failed thread): say so, or it reads as finished. */
	if (whole)
		fprintf(f, " in %.3f s", x.seconds);
	else
		fprintf(f,
			": NOT FINISHED, stopped after %.3f s with %s of %s done (the run ended%s%s)",
			x.seconds, fmt_size(b, (double)x.done_bytes),
			fmt_size(c, (double)x.total_bytes), stopped ? ": " : "",
			stopped ? stopped : "");
	if (x.populated >= 0)
		fprintf(f, ": made %s resident (%.2f GiB/s; %s were already)\n",
			fmt_size(a, (double)x.populated),
			gib_per_s((double)x.populated, x.seconds),
			fmt_size(b, (double)x.resident_before));
	else
		fprintf(f, " (residency unknown: mincore failed)\n");
	for (unsigned i = 0; !eager_thread(e, i, &t); i++) {
		fprintf(f, "  thread %u: ", i);
		if (t.done != t.bytes)
			fprintf(f, "%s of ", fmt_size(a, (double)t.done));
		fprintf(f, "%s at 0x%llx in %.3f s", fmt_size(b, (double)t.bytes),
			(unsigned long long)t.gpa, t.t1 - t.t0);
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
		roofline_report(x.ceiling, gib_per_s((double)x.done_bytes, x.seconds), f);
}

void eager_predict_print(const struct eager *e, FILE *f)
{
	struct eager_facts x;

	if (!eager_facts(e, &x) && x.ceiling)
		roofline_predict_print(x.ceiling, x.total_bytes, x.nthreads, x.backing,
				       f);
}

void eager_write_json(const struct eager *e, enum eager_strategy asked, struct json *j)
{
	struct eager_facts x;
	struct eager_thread_facts t;
	int host = !eager_facts(e, &x);

	json_string(j, "requested", eager_strategy_name(asked));
	json_string(j, "strategy", eager_strategy_name(eager_strategy(e)));
	if (host) {
		json_u64(j, "threads", x.nthreads);
		json_bool(j, "on_vcpu_threads", x.on_vcpu_threads);
		json_u64(j, "bytes", x.total_bytes);
		json_u64(j, "done_bytes", x.done_bytes);
		json_bool(j, "complete", x.done_bytes == x.total_bytes);
		json_double(j, "seconds", x.seconds);
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
			json_double(j, "seconds", t.t1 - t.t0);
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
