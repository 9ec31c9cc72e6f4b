/* --trace FILE: the run as Chrome trace events (opens in Perfetto or chrome://tracing). */
#include "vmm.h"

#include <errno.h>

#include "json.h"

#define USEC_PER_SEC 1e6
#define TID_SETUP    1
#define TID_VCPU     100  /* + vCPU index */
#define TID_EAGER    1000 /* + eager thread index */

static void meta(struct json *j, int pid, int tid, const char *what, const char *name)
{
	json_begin_object(j, NULL);
	json_string(j, "name", what);
	json_string(j, "ph", "M");
	json_i64(j, "pid", pid);
	json_i64(j, "tid", tid);
	json_begin_object(j, "args");
	json_string(j, "name", name);
	json_end_object(j);
	json_end_object(j);
}

/* A complete event ("X") from t0 to t1, times relative to the run's exec. */
static void span(struct json *j, int pid, int tid, const char *name, const char *cat,
		 double t0, double t1, double exec)
{
	if (t0 <= 0 || t1 < t0)
		return;
	json_begin_object(j, NULL);
	json_string(j, "name", name);
	json_string(j, "cat", cat);
	json_string(j, "ph", "X");
	json_i64(j, "pid", pid);
	json_i64(j, "tid", tid);
	json_double(j, "ts", (t0 - exec) * USEC_PER_SEC);
	json_double(j, "dur", (t1 - t0) * USEC_PER_SEC);
	json_end_object(j);
}

static void one_run(struct json *j, const struct run *r, int pid, const char *label)
{
	const struct timeline *tl = r->tl;
	double exec = timeline_time(tl, "exec"), t, prev = 0, t0, t1;
	unsigned vcpu;
	char name[48];
	int guest;

	meta(j, pid, 0, "process_name", label);
	meta(j, pid, TID_SETUP, "thread_name", "minivmm main thread");
	/* Each phase as a span on the thread that marked it: setup on main, guest on vCPU 0. */
	for (unsigned i = 0; i < timeline_count(tl); i++) {
		const char *phase = timeline_phase(tl, i, &t, &guest);

		if (i)
			span(j, pid, guest ? TID_VCPU : TID_SETUP, phase,
			     guest ? "guest" : "vmm", prev, t, exec);
		prev = t;
	}
	for (unsigned i = 0; i < r->vm.nvcpus && r->vm.vcpus; i++) {
		snprintf(name, sizeof(name), "vCPU %u thread", i);
		meta(j, pid, TID_VCPU + (int)i, "thread_name", name);
		span(j, pid, TID_VCPU + (int)i, "KVM_RUN loop", "vcpu",
		     r->vm.vcpus[i].t_run, r->vm.vcpus[i].t_done, exec);
	}
	snprintf(name, sizeof(name), "eager %s",
		 eager_strategy_name(eager_strategy(r->eager)));
	for (unsigned i = 0; eager_span(r->eager, i, &t0, &t1, &vcpu); i++) {
		int tid = vcpu != UINT32_MAX ? TID_VCPU + (int)vcpu : TID_EAGER + (int)i;
		char thread[48];

		if (vcpu == UINT32_MAX) {
			snprintf(thread, sizeof(thread), "eager thread %u", i);
			meta(j, pid, tid, "thread_name", thread);
		}
		span(j, pid, tid, name, "eager", t0, t1, exec);
	}
}

void trace_write(struct json *j, const struct run *const *runs, const char *const *labels,
		 int n)
{
	json_begin_object(j, NULL);
	json_string(j, "displayTimeUnit", "ms");
	json_begin_array(j, "traceEvents");
	for (int i = 0; i < n; i++)
		one_run(j, runs[i], i + 1, labels[i]);
	json_end_array(j);
	json_end_object(j);
}
