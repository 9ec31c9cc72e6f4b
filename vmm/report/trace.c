/* --trace FILE: the run as Chrome trace events (opens in Perfetto or chrome://tracing). */
#include "report.h"

#define TID_SETUP 1
#define TID_VCPU  100  /* + vCPU index */
#define TID_EAGER 1000 /* + eager thread index */

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

/* A complete event ("X") from t0 to t1, times relative to the run's exec (us, to the ns). */
static void span(struct json *j, int pid, int tid, const char *name, const char *cat,
		 double t0, double t1, const struct timeline *tl)
{
	if (t0 <= 0 || t1 < t0)
		return;
	json_begin_object(j, NULL);
	json_string(j, "name", name);
	json_string(j, "cat", cat);
	json_string(j, "ph", "X");
	json_i64(j, "pid", pid);
	json_i64(j, "tid", tid);
	json_ns(j, "ts", timeline_ns(tl, t0), NSEC_PER_USEC);
	json_ns(j, "dur", timeline_ns(tl, t1) - timeline_ns(tl, t0), NSEC_PER_USEC);
	json_end_object(j);
}

/* A counter event ("C"): series `series` of counter `name` is v at t. */
static void counter(struct json *j, int pid, const char *name, const char *series,
		    double v, double t, const struct timeline *tl)
{
	if (t <= 0)
		return;
	json_begin_object(j, NULL);
	json_string(j, "name", name);
	json_string(j, "ph", "C");
	json_i64(j, "pid", pid);
	json_i64(j, "tid",
		 0); /* a counter is the process's (Perfetto keys it by pid and name) */
	json_ns(j, "ts", timeline_ns(tl, t), NSEC_PER_USEC);
	json_begin_object(j, "args");
	json_double(j, series, v);
	json_end_object(j);
	json_end_object(j);
}

/* The two frontiers as counter tracks on the run's clock: eager's MiB populated, the guest's touched. */
static void frontiers(struct json *j, const struct run_view *r, int pid)
{
	struct eager_thread_facts et;
	const struct mvm_rec_progress *p;
	size_t n;
	char series[32];

	for (unsigned i = 0; !eager_thread(r->eager, i, &et); i++) {
		snprintf(series, sizeof(series), "thread %u", i);
		for (unsigned k = 0; k < et.npoints; k++)
			counter(j, pid, "eager populated (MiB)", series,
				(double)et.points[k].bytes / BYTES_PER_MIB,
				et.points[k].t, r->tl);
	}
	p = records_progress(r->rec, &n);
	for (size_t i = 0; i < n; i++) {
		snprintf(series, sizeof(series), "vCPU %u", p[i].vcpu);
		counter(j, pid, "guest touched (MiB)", series,
			(double)p[i].bytes_done / BYTES_PER_MIB,
			timeline_guest_time(r->tl, p[i].tsc), r->tl);
	}
}

static void one_run(struct json *j, const struct run_view *r, int pid, const char *label)
{
	const struct timeline *tl = r->tl;
	double t, prev = 0, t0, t1;
	struct eager_thread_facts et;
	char name[48];
	int guest;

	meta(j, pid, 0, "process_name", label);
	meta(j, pid, TID_SETUP, "thread_name", "minivmm main thread");
	/* Each phase as a span on the thread that marked it: setup on main, guest on vCPU 0. */
	for (unsigned i = 0; i < timeline_count(tl); i++) {
		enum phase p = timeline_phase(tl, i, &t, &guest);

		if (i)
			span(j, pid, guest ? TID_VCPU : TID_SETUP, phase_name(p),
			     guest ? "guest" : "vmm", prev, t, tl);
		prev = t;
	}
	for (unsigned i = 0; i < vm_nvcpus(r->vm); i++) {
		snprintf(name, sizeof(name), "vCPU %u thread", i);
		meta(j, pid, TID_VCPU + (int)i, "thread_name", name);
		if (vm_vcpu_span(r->vm, i, &t0, &t1))
			span(j, pid, TID_VCPU + (int)i, "KVM_RUN loop", "vcpu", t0, t1,
			     tl);
	}
	/* In the background its threads run beside the vCPUs' KVM_RUN loops, on tracks of their own. */
	snprintf(name, sizeof(name), "%seager %s%s%s",
		 eager_in_background(r->eager) ? "background " : "",
		 eager_strategy_name(eager_strategy(r->eager)),
		 eager_order_of(r->cfg->eager_order) == EAGER_ORDER_FRONT ? ""
									  : ", order ",
		 eager_order_of(r->cfg->eager_order) == EAGER_ORDER_FRONT
			 ? ""
			 : eager_order_name(eager_order_of(r->cfg->eager_order)));
	for (unsigned i = 0; !eager_thread(r->eager, i, &et); i++) {
		int dedicated = !eager_on_vcpu_threads(r->eager);
		int tid = dedicated ? TID_EAGER + (int)i : TID_VCPU + (int)et.vcpu;
		char thread[64];

		if (dedicated) {
			snprintf(thread, sizeof(thread), "eager thread %u%s", i,
				 eager_in_background(r->eager) ? " (background)" : "");
			meta(j, pid, tid, "thread_name", thread);
		}
		span(j, pid, tid, et.stopped ? "eager (stopped by the run's end)" : name,
		     "eager", et.t0, et.t1, tl);
	}
	frontiers(j, r, pid);
}

static void build(struct json *j, const void *arg)
{
	const struct experiment_view *x = arg;
	char label[32];

	json_begin_object(j, NULL);
	json_string(j, "displayTimeUnit", "ms");
	json_begin_array(j, "traceEvents");
	for (unsigned i = 0; i < x->done; i++) {
		if (x->planned == 1)
			snprintf(label, sizeof(label), "minivmm");
		else
			snprintf(label, sizeof(label), "%s (run %u)",
				 x->mode_label[x->mode[i]], i + 1);
		one_run(j, &x->runs[i], (int)i + 1, label);
	}
	json_end_array(j);
	json_end_object(j);
}

int trace_file_write(int fd, const struct experiment_view *x)
{
	return json_write_fd(fd, build, x);
}
