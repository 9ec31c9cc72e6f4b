/* --compare: the same guest lazily and eagerly, side by side, and what the numbers say. */
#include "vmm.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "json.h"

#define MIB (1024.0 * 1024.0)

/* Bytes the first pass wrote: iteration 1's per-vCPU records (0 without records). */
static double first_pass_bytes(const struct run *run)
{
	size_t n;
	const struct mvm_rec_sweep *recs = results_sweep(run->res, &n);
	double bytes = 0;

	for (size_t i = 0; i < n; i++)
		if (recs[i].iteration == 1 && recs[i].vcpu != MVM_VCPU_ALL)
			bytes += (double)recs[i].pages * MVM_PAGE_BYTES;
	return bytes;
}

void compare_verdict(const struct run *lazy, const struct run *eager, struct verdict *v)
{
	struct tl_summary l, e;

	run_summary(lazy, &l);
	run_summary(eager, &e);
	memset(v, 0, sizeof(*v));
	v->eager_cost_ms = e.eager_ms;
	v->setup_lazy_ms = l.setup_ms;
	v->setup_eager_ms = e.setup_ms;
	v->first_pass_lazy_ms = l.first_pass_ms;
	v->first_pass_eager_ms = e.first_pass_ms;
	v->fuw_lazy_ms = l.first_useful_work_ms;
	v->fuw_eager_ms = e.first_useful_work_ms;
	v->ram_bytes = (double)lazy->cfg->mem_bytes;
	v->touched_bytes = first_pass_bytes(lazy);
	v->have_work = l.first_pass_ms >= 0 && e.first_pass_ms >= 0;
	if (!v->have_work)
		return;
	v->saved_ms = l.first_pass_ms - e.first_pass_ms;
	v->sooner = v->fuw_lazy_ms <= v->fuw_eager_ms ? "lazy" : "eager";
	/*
	 * Lazy pays `saved` for `touched` bytes on first touch; eager pays its
	 * cost for all of RAM up front. Eager wins once the guest touches more
	 * than cost / (saved per byte * RAM) of its memory.
	 */
	v->break_even = -1;
	if (v->saved_ms > 0 && v->touched_bytes > 0)
		v->break_even = v->eager_cost_ms /
				(v->saved_ms / v->touched_bytes * v->ram_bytes);
}

static void cell(FILE *f, const struct timeline *tl, const char *phase)
{
	double exec = timeline_time(tl, "exec"), t, prev = 0;
	uint64_t pf;

	for (unsigned i = 0; i < timeline_count(tl); i++) {
		const char *name = timeline_phase(tl, i, &t, NULL);

		if (strcmp(name, phase)) {
			prev = t;
			continue;
		}
		fprintf(f, " %10.1f %10.1f", (t - exec) * MSEC_PER_SEC,
			i ? (t - prev) * MSEC_PER_SEC : 0.0);
		if (timeline_delta(tl, i, "pf_taken", &pf))
			fprintf(f, " %9llu", (unsigned long long)pf);
		else
			fprintf(f, " %9s", "-");
		return;
	}
	fprintf(f, " %10s %10s %9s", "-", "-", "-");
}

static void compare_print(const struct run *lazy, const struct run *eager, FILE *f)
{
	struct verdict v;
	double t;

	compare_verdict(lazy, eager, &v);
	fprintf(f,
		"\nlazy vs eager (%s): ms since exec; pf_taken = KVM's page faults in the phase\n",
		eager_strategy_name(eager_strategy(eager->eager)));
	fprintf(f, "%-18s %10s %10s %9s | %10s %10s %9s\n", "phase", "lazy", "dur",
		"pf_taken", "eager", "dur", "pf_taken");
	/* Every phase of either run, in the eager run's order (it has eager_done). */
	for (unsigned i = 0; i < timeline_count(eager->tl); i++) {
		const char *name = timeline_phase(eager->tl, i, &t, NULL);

		fprintf(f, "%-18s", name);
		cell(f, lazy->tl, name);
		fprintf(f, " |");
		cell(f, eager->tl, name);
		fputc('\n', f);
	}
	fprintf(f, "\nverdict:\n");
	fprintf(f, "  eager cost: %.1f ms up front (setup %.1f ms lazy, %.1f ms eager)\n",
		v.eager_cost_ms, v.setup_lazy_ms, v.setup_eager_ms);
	if (!v.have_work) {
		fprintf(f,
			"  the workload marks no first useful work: nothing more to compare\n");
		return;
	}
	fprintf(f,
		"  first pass: %.1f ms lazy, %.1f ms eager: first-touch time saved %.1f ms\n",
		v.first_pass_lazy_ms, v.first_pass_eager_ms, v.saved_ms);
	fprintf(f,
		"  first useful work: %.1f ms lazy, %.1f ms eager: %s got there sooner, by %.1f ms\n",
		v.fuw_lazy_ms, v.fuw_eager_ms, v.sooner,
		v.fuw_lazy_ms > v.fuw_eager_ms ? v.fuw_lazy_ms - v.fuw_eager_ms
					       : v.fuw_eager_ms - v.fuw_lazy_ms);
	if (v.break_even >= 0)
		fprintf(f,
			"  break-even: eager pays off once the guest touches %.1f%% of its %.0f MiB (first touch measured at %.1f us/MiB over %.0f MiB)%s\n",
			v.break_even * 100, v.ram_bytes / MIB,
			v.saved_ms * 1000 / (v.touched_bytes / MIB),
			v.touched_bytes / MIB,
			v.break_even > 1 ? ": more than all of it, so never here" : "");
	else
		fprintf(f,
			"  break-even: never (eager saved no first-touch time here)\n");
}

static void verdict_json(const struct verdict *v, struct json *j)
{
	json_begin_object(j, "verdict");
	json_double(j, "eager_cost_ms", v->eager_cost_ms);
	json_double(j, "setup_lazy_ms", v->setup_lazy_ms);
	json_double(j, "setup_eager_ms", v->setup_eager_ms);
	if (v->have_work) {
		json_double(j, "first_pass_lazy_ms", v->first_pass_lazy_ms);
		json_double(j, "first_pass_eager_ms", v->first_pass_eager_ms);
		json_double(j, "first_touch_saved_ms", v->saved_ms);
		json_double(j, "first_useful_work_lazy_ms", v->fuw_lazy_ms);
		json_double(j, "first_useful_work_eager_ms", v->fuw_eager_ms);
		json_string(j, "sooner", v->sooner);
		json_double(j, "touched_bytes", v->touched_bytes);
		if (v->break_even >= 0)
			json_double(j, "break_even_fraction", v->break_even);
		else
			json_string(j, "break_even_fraction", NULL);
	}
	json_end_object(j);
}

static int write_json(const struct run *lazy, const struct run *eager, FILE *f)
{
	struct json j = { .f = f };
	struct verdict v;

	compare_verdict(lazy, eager, &v);
	json_begin_object(&j, NULL);
	json_begin_object(&j, "compare");
	run_write_obj(lazy, &j, "lazy");
	if (eager->tl)
		run_write_obj(eager, &j, "eager");
	if (eager->tl && timeline_time(eager->tl, "vm_exit") > 0)
		verdict_json(&v, &j);
	/* Open fds and threads before each run and after its VM was torn down. */
	json_begin_object(&j, "resources");
	json_i64(&j, "fds_before_lazy", lazy->res_before.fds);
	json_i64(&j, "fds_after_lazy", lazy->res_after.fds);
	json_i64(&j, "fds_after_eager", eager->res_after.fds);
	json_i64(&j, "threads_before_lazy", lazy->res_before.threads);
	json_i64(&j, "threads_after_eager", eager->res_after.threads);
	json_end_object(&j);
	json_end_object(&j);
	json_end_object(&j);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

/*
 * Open fds and threads of this process: --compare checks that nothing leaks
 * between runs. The two /proc directories are opened once, before any
 * sandbox, and re-read (getdents64) each time.
 */
struct proc_dirs {
	DIR *fd, *task;
};

static int count_entries(DIR *d)
{
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	rewinddir(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	return n;
}

static void count_resources(const struct proc_dirs *p, struct resources *r)
{
	r->fds = count_entries(p->fd);
	r->threads = count_entries(p->task);
}

/*
 * --compare: the same guest and arguments lazily, then eagerly, each in a
 * fresh VM whose kernel resources are released before the next starts. The
 * status is the first non-zero one.
 */
int compare_main(const struct config *cfg, const struct outputs *o)
{
	static struct run lazy, eager;
	struct config lazy_cfg = *cfg;
	const struct run *runs[] = { &lazy, &eager };
	const char *labels[] = { "lazy", "eager" };
	int status, status2 = -1, e;
	struct resources first;
	struct proc_dirs p;

	p.fd = opendir("/proc/self/fd");
	p.task = opendir("/proc/self/task");
	count_resources(&p, &first);
	lazy_cfg.eager = EAGER_NONE;
	lazy_cfg.eager_threads = 0;
	if (!cfg->quiet)
		printf("== run 1 of 2: lazy\n");
	if (run_init(&lazy, &lazy_cfg, cfg->t_exec, o, 0)) {
		fprintf(stderr, "minivmm: out of memory\n");
		return EXIT_HOST;
	}
	status = run_execute(&lazy);
	lazy.res_before = first;
	run_report(&lazy, status, 0);
	if (status == EXIT_GUEST_OK) {
		struct resources before;

		count_resources(&p, &before);
		if (!cfg->quiet)
			printf("\n== run 2 of 2: eager (--eager=%s)\n",
			       eager_strategy_name(cfg->eager));
		if (run_init(&eager, cfg, now_s(), o, 1)) {
			fprintf(stderr, "minivmm: out of memory\n");
			return EXIT_HOST;
		}
		status2 = run_execute(&eager);
		eager.res_before = before;
		run_report(&eager, status2, 0);
		count_resources(&p, &eager.res_after);
		if (status2 == EXIT_GUEST_OK)
			compare_print(&lazy, &eager, stdout);
		status = status2;
	}
	lazy.res_after = eager.res_before;
	if (o->results) {
		e = write_json(&lazy, &eager, o->results);
		if (e)
			fprintf(stderr, "minivmm: writing results to %s: %s\n",
				cfg->results_path, strerror(-e));
	}
	if (o->trace) {
		e = trace_write(o->trace, runs, labels, status2 >= 0 ? 2 : 1);
		if (e)
			fprintf(stderr, "minivmm: writing trace to %s: %s\n",
				cfg->trace_path, strerror(-e));
	}
	run_free(&lazy);
	run_free(&eager);
	if (p.fd)
		closedir(p.fd);
	if (p.task)
		closedir(p.task);
	return status;
}
