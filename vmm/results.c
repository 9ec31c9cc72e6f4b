/* Results: what the guest reported, the seed-style tables, and the JSON file. */
#include "vmm.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define RESULTS_MAX_SWEEP_ROWS (1u << 20) /* a runaway guest cannot exhaust the host */

int results_add_sweep(struct vm *vm, const struct mvm_rec_sweep *recs, uint32_t n,
		      FILE *f)
{
	struct results *r = &vm->res;
	int ret = 0;

	pthread_mutex_lock(&vm->lock);
	if (r->nsweep + n > RESULTS_MAX_SWEEP_ROWS) {
		ret = -E2BIG;
		goto out;
	}
	if (r->nsweep + n > r->capsweep) {
		size_t cap = r->capsweep ? r->capsweep * 2 : 64;
		struct mvm_rec_sweep *p;

		while (cap < r->nsweep + n)
			cap *= 2;
		p = realloc(r->sweep, cap * sizeof(*p));
		if (!p) {
			ret = -ENOMEM;
			goto out;
		}
		r->sweep = p;
		r->capsweep = cap;
	}
	/* One copy out of guest memory: printing and JSON see what was checked here. */
	memcpy(&r->sweep[r->nsweep], recs, n * sizeof(*recs));
	if (f)
		results_print_batch(vm, &r->sweep[r->nsweep], n, r->sweep, r->nsweep, f);
	r->nsweep += n;
out:
	pthread_mutex_unlock(&vm->lock);
	return ret;
}

/* The guest's --eager=touch pass: kept (the last report wins) and printed. */
int results_add_touch(struct vm *vm, const struct mvm_rec_touch *recs, uint32_t n)
{
	struct results *r = &vm->res;
	struct mvm_rec_touch *copy = malloc(n * sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	memcpy(copy, recs, n * sizeof(*copy));
	pthread_mutex_lock(&vm->lock);
	free(r->touch);
	r->touch = copy;
	r->ntouch = n;
	for (uint32_t i = 0; i < n && !vm->cfg->quiet; i++) {
		const struct mvm_rec_touch *t = &copy[i];
		double s = cycles_to_s(vm, t->cycles);
		double gib = (double)t->pages * MVM_PAGE_BYTES / BYTES_PER_GIB;

		if (t->vcpu == MVM_VCPU_ALL)
			printf("eager: touch (in the guest, CPL3), %u vCPUs, %.2f GiB in "
			       "%.3f s "
			       "(%.2f GiB/s)\n",
			       n - 1, gib, s, s > 0 ? gib / s : 0);
	}
	for (uint32_t i = 0; i < n && !vm->cfg->quiet; i++) {
		const struct mvm_rec_touch *t = &copy[i];
		double s = cycles_to_s(vm, t->cycles);
		double gib = (double)t->pages * MVM_PAGE_BYTES / BYTES_PER_GIB;

		if (t->vcpu != MVM_VCPU_ALL)
			printf("  vCPU %u: %.2f GiB at 0x%llx in %.3f s (%.2f GiB/s)\n",
			       t->vcpu, gib, (unsigned long long)t->start_gpa, s,
			       s > 0 ? gib / s : 0);
	}
	fflush(stdout);
	pthread_mutex_unlock(&vm->lock);
	return 0;
}

static const char *workload_name(uint32_t w)
{
	return w == MVM_WL_SWEEP ? "sweep" : w == MVM_WL_FLAT ? "flat" : "unknown";
}

static const char *mode_name(uint32_t m)
{
	return m == MVM_MODE_DEMAND	? "demand"
	       : m == MVM_MODE_POPULATE ? "populate"
					: "unknown";
}

/* The record a table cell shows: the all-vCPU aggregate if the batch has one, else vCPU 0. */
static const struct mvm_rec_sweep *cell_rec(const struct mvm_rec_sweep *recs, uint32_t n,
					    const struct mvm_rec_sweep *key,
					    uint32_t mode)
{
	const struct mvm_rec_sweep *found = NULL;

	for (uint32_t i = 0; i < n; i++) {
		const struct mvm_rec_sweep *r = &recs[i];

		if (r->workload != key->workload || r->iteration != key->iteration ||
		    r->size_mib != key->size_mib || r->mode != mode)
			continue;
		if (r->vcpu == MVM_VCPU_ALL)
			return r;
		if (r->vcpu == 0)
			found = r;
	}
	return found;
}

static void print_cell(FILE *f, const struct vm *vm, const struct mvm_rec_sweep *r,
		       const char *sep)
{
	if (r)
		fprintf(f, "%s%.3f", sep,
			cycles_to_s(vm, r->map_cycles + r->touch_cycles));
	else
		fprintf(f, "%s  -  ", sep);
}

static int same_table(const struct mvm_rec_sweep *a, const struct mvm_rec_sweep *b)
{
	return a->workload == b->workload && a->iteration == b->iteration;
}

/*
 * The OSv benchmark's table for one batch of records (the guest sends one
 * per iteration), printed as it arrives: time (map + touch) in seconds with
 * 3 decimals, demand and populate side by side. flat has no guest mapping
 * step, so its table has one column.
 */
void results_print_batch(const struct vm *vm, const struct mvm_rec_sweep *recs,
			 uint32_t n, const struct mvm_rec_sweep *earlier, size_t nearlier,
			 FILE *f)
{

	for (uint32_t i = 0; i < n; i++) {
		const struct mvm_rec_sweep *t = &recs[i];
		int flat = t->workload == MVM_WL_FLAT, seen = 0;

		for (uint32_t k = 0; k < i && !seen; k++)
			seen = same_table(&recs[k], t);
		for (size_t k = 0; k < nearlier && !seen; k++)
			seen = same_table(&earlier[k], t) &&
			       earlier[k].vcpu == MVM_VCPU_ALL;
		if (seen)
			continue;
		fprintf(f, "\nIteration %u%s\n\n", t->iteration,
			flat ? " (flat: direct-mapped, no guest faults)" : "");
		fprintf(f, "     time (seconds)\n");
		fprintf(f, flat ? " MiB  touch\n" : " MiB demand populate\n");
		for (uint32_t k = i; k < n; k++) {
			const struct mvm_rec_sweep *row = &recs[k];
			int dup = 0;

			for (uint32_t d = i; d < k && !dup; d++)
				dup = same_table(&recs[d], row) &&
				      recs[d].size_mib == row->size_mib;
			if (!same_table(row, t) || dup)
				continue;
			fprintf(f, "%4u ", row->size_mib);
			print_cell(f, vm, cell_rec(recs, n, row, MVM_MODE_DEMAND),
				   flat ? " " : "");
			if (!flat)
				print_cell(f, vm,
					   cell_rec(recs, n, row, MVM_MODE_POPULATE),
					   "  ");
			fputc('\n', f);
		}
	}
	fflush(f);
}

int exit_status_of(const struct vm *vm)
{
	switch (vm->end) {
	case END_GUEST_EXIT:
		return vm->status == 0 ? EXIT_GUEST_OK : EXIT_GUEST_FAILED;
	case END_HOST_ERROR:
		return EXIT_HOST;
	case END_TIMEOUT:
		return EXIT_TIMEOUT;
	case END_INTERRUPTED:
		return EXIT_INTERRUPTED;
	case END_USAGE:
		return EXIT_USAGE;
	case END_GUEST_CRASH:
	case END_RUNNING:
	default:
		return EXIT_GUEST_CRASH;
	}
}

static void write_unclaimed(struct json *j, const char *key, const struct unclaimed *u)
{
	json_begin_object(j, key);
	json_u64(j, "count", u->count);
	if (u->count) {
		json_u64(j, "first_address", u->first_addr);
		json_bool(j, "first_is_write", u->first_write);
	}
	json_end_object(j);
}

/* The whole results object of one run, as `key` inside j (NULL: the top level). */
void results_write_obj(const struct vm *vm, struct json *jp, const char *key)
{
	const struct config *cfg = vm->cfg;
	const struct results *r = &vm->res;
	struct json j = *jp;

	json_begin_object(&j, key);
	json_begin_object(&j, "minivmm");
	json_string(&j, "version", MINIVMM_VERSION);
	json_u64(&j, "abi", MVM_ABI_VERSION);
	json_end_object(&j);

	json_begin_object(&j, "platform");
	json_string(&j, "kvm", vm->plat.kvm);
	json_string(&j, "paging", vm->plat.tdp ? "tdp" : "shadow");
	json_bool(&j, "pre_fault_memory", vm->plat.pre_fault);
	json_u64(&j, "tsc_khz", vm->plat.tsc_khz);
	json_end_object(&j);

	json_begin_object(&j, "config");
	json_u64(&j, "mem_bytes", cfg->mem_bytes);
	json_u64(&j, "vcpus", cfg->vcpus);
	json_string(&j, "backing", cfg->backing->name);
	json_u64(&j, "backing_page_bytes", cfg->backing->page_bytes);
	json_string(&j, "guest", cfg->guest_path);
	json_begin_array(&j, "guest_args");
	for (int i = 0; i < cfg->guest_argc; i++)
		json_string(&j, NULL, cfg->guest_argv[i]);
	json_end_array(&j);
	if (cfg->timeout_s > 0)
		json_double(&j, "timeout_s", cfg->timeout_s);
	json_end_object(&j);

	if (cfg->eager != EAGER_NONE)
		eager_write_json(vm, &j);

	json_begin_array(&j, "sweep");
	for (size_t i = 0; i < r->nsweep; i++) {
		const struct mvm_rec_sweep *s = &r->sweep[i];
		double map_s = cycles_to_s(vm, s->map_cycles);
		double touch_s = cycles_to_s(vm, s->touch_cycles);

		json_begin_object(&j, NULL);
		json_string(&j, "workload", workload_name(s->workload));
		json_u64(&j, "iteration", s->iteration);
		json_u64(&j, "size_mib", s->size_mib);
		json_string(&j, "mode", mode_name(s->mode));
		if (s->vcpu == MVM_VCPU_ALL)
			json_string(&j, "vcpu", "all");
		else
			json_u64(&j, "vcpu", s->vcpu);
		json_double(&j, "map_s", map_s);
		json_double(&j, "touch_s", touch_s);
		json_double(&j, "seconds", map_s + touch_s);
		json_double(&j, "unmap_s", cycles_to_s(vm, s->unmap_cycles));
		json_u64(&j, "pages", s->pages);
		json_u64(&j, "guest_faults", s->guest_faults);
		json_u64(&j, "pfn_sum", s->pfn_sum);
		json_end_object(&j);
	}
	json_end_array(&j);

	timeline_write_json(vm, &j);

	json_begin_object(&j, "devices");
	write_unclaimed(&j, "unclaimed_pio", &vm->pio_unclaimed);
	write_unclaimed(&j, "unclaimed_mmio", &vm->mmio_unclaimed);
	json_u64(&j, "console_bytes", vm->console_bytes);
	json_u64(&j, "console_dropped", vm->console_dropped);
	json_end_object(&j);

	json_begin_object(&j, "exit");
	json_u64(&j, "status", (uint64_t)exit_status_of(vm));
	json_string(&j, "reason", vm->reason ? vm->reason : "not-started");
	if (vm->end == END_GUEST_EXIT)
		json_i64(&j, "guest_status", vm->status);
	json_string(&j, "message", vm->message);
	json_end_object(&j);
	json_end_object(&j);

	*jp = j;
}

/* Write one run's results to f (opened before the sandbox); 0 or -EIO. */
int results_write_json(const struct vm *vm, FILE *f)
{
	struct json j = { .f = f };

	results_write_obj(vm, &j, NULL);
	return fflush(f) || ferror(f) ? -EIO : 0;
}
