/* --compare: the same guest lazily and eagerly, side by side, and what the numbers say. */
#include "vmm.h"

#include <errno.h>
#include <string.h>

#include "json.h"

#define MIB (1024.0 * 1024.0)

/* Bytes the first pass wrote: iteration 1's per-vCPU records (0 without records). */
static double first_pass_bytes(const struct vm *vm)
{
	double bytes = 0;

	for (size_t i = 0; i < vm->res.nsweep; i++) {
		const struct mvm_rec_sweep *r = &vm->res.sweep[i];

		if (r->iteration == 1 && r->vcpu != MVM_VCPU_ALL)
			bytes += (double)r->pages * MVM_PAGE_BYTES;
	}
	return bytes;
}

void compare_verdict(const struct vm *lazy, const struct vm *eager, struct verdict *v)
{
	struct tl_summary l, e;

	timeline_summary(lazy, &l);
	timeline_summary(eager, &e);
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

static int key_stat(const struct vm *vm, const struct tl_phase *p,
		    const struct tl_phase *prev, const char *name, uint64_t *out)
{
	int cum;

	if (!p || !p->stats || !prev || !prev->stats)
		return 0;
	for (unsigned k = 0; k < stats_count(vm); k++)
		if (!strcmp(stats_name(vm, k, &cum), name)) {
			*out = p->stats[k] - prev->stats[k];
			return 1;
		}
	return 0;
}

static void cell(FILE *f, const struct vm *vm, const char *phase)
{
	const struct timeline *tl = &vm->tl;
	double exec = timeline_time(vm, "exec");
	uint64_t pf;

	for (unsigned i = 0; i < tl->n; i++) {
		if (strcmp(tl->p[i].name, phase))
			continue;
		fprintf(f, " %10.1f %10.1f", (tl->p[i].t - exec) * MSEC_PER_SEC,
			i ? (tl->p[i].t - tl->p[i - 1].t) * MSEC_PER_SEC : 0.0);
		if (i && key_stat(vm, &tl->p[i], &tl->p[i - 1], "pf_taken", &pf))
			fprintf(f, " %9llu", (unsigned long long)pf);
		else
			fprintf(f, " %9s", "-");
		return;
	}
	fprintf(f, " %10s %10s %9s", "-", "-", "-");
}

void compare_print(const struct vm *lazy, const struct vm *eager, FILE *f)
{
	struct verdict v;

	compare_verdict(lazy, eager, &v);
	fprintf(f,
		"\nlazy vs eager (%s): ms since exec; pf_taken = KVM's page faults in "
		"the phase\n",
		eager_strategy_name(eager->eager.strategy));
	fprintf(f, "%-18s %10s %10s %9s | %10s %10s %9s\n", "phase", "lazy", "dur",
		"pf_taken", "eager", "dur", "pf_taken");
	/* Every phase of either run, in the eager run's order (it has eager_done). */
	for (unsigned i = 0; i < eager->tl.n; i++) {
		fprintf(f, "%-18s", eager->tl.p[i].name);
		cell(f, lazy, eager->tl.p[i].name);
		fprintf(f, " |");
		cell(f, eager, eager->tl.p[i].name);
		fputc('\n', f);
	}
	fprintf(f, "\nverdict:\n");
	fprintf(f, "  eager cost: %.1f ms up front (setup %.1f ms lazy, %.1f ms eager)\n",
		v.eager_cost_ms, v.setup_lazy_ms, v.setup_eager_ms);
	if (!v.have_work) {
		fprintf(f, "  the workload marks no first useful work: nothing more to "
			   "compare\n");
		return;
	}
	fprintf(f,
		"  first pass: %.1f ms lazy, %.1f ms eager: first-touch time saved %.1f "
		"ms\n",
		v.first_pass_lazy_ms, v.first_pass_eager_ms, v.saved_ms);
	fprintf(f,
		"  first useful work: %.1f ms lazy, %.1f ms eager: %s got there sooner, "
		"by %.1f ms\n",
		v.fuw_lazy_ms, v.fuw_eager_ms, v.sooner,
		v.fuw_lazy_ms > v.fuw_eager_ms ? v.fuw_lazy_ms - v.fuw_eager_ms
					       : v.fuw_eager_ms - v.fuw_lazy_ms);
	if (v.break_even >= 0)
		fprintf(f,
			"  break-even: eager pays off once the guest touches %.1f%% of "
			"its %.0f MiB "
			"(first touch measured at %.1f us/MiB over %.0f MiB)%s\n",
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

int compare_write_json(const struct vm *lazy, const struct vm *eager, FILE *f)
{
	struct json j = { .f = f };
	struct verdict v;

	compare_verdict(lazy, eager, &v);
	json_begin_object(&j, NULL);
	json_begin_object(&j, "compare");
	results_write_obj(lazy, &j, "lazy");
	if (eager->reason)
		results_write_obj(eager, &j, "eager");
	if (eager->reason && timeline_time(eager, "vm_exit") > 0)
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
