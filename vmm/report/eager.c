/* What eager population did: the report a person reads, and the results file's "eager" object. */
#include "report.h"

void eager_report(const struct eager *e, FILE *f)
{
	struct eager_facts x;
	struct eager_thread_facts t;

	if (eager_facts(e, &x))
		return;
	fprintf(f, "eager: %s%s%s, %u thread%s (%s), %.2f GiB of guest RAM in %.3f s",
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
		(double)x.total_bytes / BYTES_PER_GIB, x.seconds);
	if (x.populated >= 0)
		fprintf(f,
			": made %.2f GiB resident (%.2f GiB/s; %.2f GiB were already)\n",
			(double)x.populated / BYTES_PER_GIB,
			gib_per_s((double)x.populated, x.seconds),
			(double)x.resident_before / BYTES_PER_GIB);
	else
		fprintf(f, " (residency unknown: mincore failed)\n");
	for (unsigned i = 0; !eager_thread(e, i, &t); i++) {
		fprintf(f, "  thread %u: %.2f GiB at 0x%llx in %.3f s", i,
			(double)t.bytes / BYTES_PER_GIB, (unsigned long long)t.gpa,
			t.t1 - t.t0);
		if (x.strategy == EAGER_PREFAULT)
			fprintf(f,
				", KVM_PRE_FAULT_MEMORY on vCPU %u: %u calls, %u retries",
				t.vcpu, t.pf.calls, t.pf.retries);
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
