/* Results: what the guest reported, the seed-style tables, and the JSON file. */
#include "vmm.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define RESULTS_MAX_SWEEP_ROWS (1u << 20) /* a runaway guest cannot exhaust the host */

int results_add_sweep(struct vm *vm, const struct mvm_rec_sweep *recs, uint32_t n)
{
	struct results *r = &vm->res;
	double cycles_per_s = (double)vm->plat.tsc_khz * HZ_PER_KHZ;
	int ret = 0;

	pthread_mutex_lock(&vm->lock);
	if (r->nsweep + n > RESULTS_MAX_SWEEP_ROWS) {
		ret = -E2BIG;
		goto out;
	}
	if (r->nsweep + n > r->capsweep) {
		size_t cap = r->capsweep ? r->capsweep * 2 : 64;
		struct sweep_row *p;

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
	for (uint32_t i = 0; i < n; i++) {
		struct sweep_row *row = &r->sweep[r->nsweep++];

		memcpy(&row->rec, &recs[i], sizeof(row->rec));
		row->map_s = (double)row->rec.map_cycles / cycles_per_s;
		row->touch_s = (double)row->rec.touch_cycles / cycles_per_s;
		row->unmap_s = (double)row->rec.unmap_cycles / cycles_per_s;
	}
out:
	pthread_mutex_unlock(&vm->lock);
	return ret;
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

static const struct sweep_row *find_row(const struct results *r, uint32_t wl, uint32_t it,
					uint32_t mib, uint32_t mode)
{
	for (size_t i = 0; i < r->nsweep; i++) {
		const struct mvm_rec_sweep *s = &r->sweep[i].rec;

		if (s->workload == wl && s->iteration == it && s->size_mib == mib &&
		    s->mode == mode && s->vcpu == 0)
			return &r->sweep[i];
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct values of one record field, sorted. Caller frees. */
static uint32_t *distinct(const struct results *r, uint32_t wl, size_t field, size_t *n)
{
	uint32_t *v = malloc((r->nsweep ? r->nsweep : 1) * sizeof(*v));
	size_t k = 0;

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < r->nsweep; i++) {
		uint32_t x;

		if (r->sweep[i].rec.workload != wl)
			continue;
		memcpy(&x, (const char *)&r->sweep[i].rec + field, sizeof(x));
		v[k++] = x;
	}
	qsort(v, k, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < k; i++)
		if (*n == 0 || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	return v;
}

static void print_cell(FILE *f, const struct sweep_row *row, const char *sep)
{
	if (row)
		fprintf(f, "%s%.3f", sep, row->map_s + row->touch_s);
	else
		fprintf(f, "%s  -  ", sep);
}

/*
 * The OSv benchmark's table, one per iteration, same layout: time (map +
 * touch) in seconds with 3 decimals, demand and populate side by side. The
 * flat workload has no guest mapping step, so its table has one column.
 */
void results_print_tables(const struct vm *vm, FILE *f)
{
	const struct results *r = &vm->res;
	static const uint32_t wls[] = { MVM_WL_SWEEP, MVM_WL_FLAT };

	for (size_t w = 0; w < sizeof(wls) / sizeof(wls[0]); w++) {
		int flat = wls[w] == MVM_WL_FLAT;
		size_t nit, nsz;
		uint32_t *its = distinct(r, wls[w],
					 offsetof(struct mvm_rec_sweep, iteration), &nit);
		uint32_t *szs = distinct(r, wls[w],
					 offsetof(struct mvm_rec_sweep, size_mib), &nsz);

		for (size_t i = 0; its && szs && i < nit; i++) {
			fprintf(f, "\nIteration %u%s\n\n", its[i],
				flat ? " (flat: direct-mapped, no guest faults)" : "");
			fprintf(f, "     time (seconds)\n");
			fprintf(f, flat ? " MiB  touch\n" : " MiB demand populate\n");
			for (size_t s = 0; s < nsz; s++) {
				fprintf(f, "%4u ", szs[s]);
				print_cell(f,
					   find_row(r, wls[w], its[i], szs[s],
						    MVM_MODE_DEMAND),
					   flat ? " " : "");
				if (!flat)
					print_cell(f,
						   find_row(r, wls[w], its[i], szs[s],
							    MVM_MODE_POPULATE),
						   "  ");
				fputc('\n', f);
			}
		}
		free(its);
		free(szs);
	}
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

/* Write the results file; 0 or -errno. Called however the run ended. */
int results_write_json(const struct vm *vm, const char *path)
{
	const struct config *cfg = vm->cfg;
	const struct results *r = &vm->res;
	struct json j = { 0 };
	int err;

	j.f = fopen(path, "w");
	if (!j.f)
		return -errno;
	json_begin_object(&j, NULL);
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
	json_string(&j, "guest", cfg->guest_path);
	json_begin_array(&j, "guest_args");
	for (int i = 0; i < cfg->guest_argc; i++)
		json_string(&j, NULL, cfg->guest_argv[i]);
	json_end_array(&j);
	if (cfg->timeout_s > 0)
		json_double(&j, "timeout_s", cfg->timeout_s);
	json_end_object(&j);

	json_begin_array(&j, "sweep");
	for (size_t i = 0; i < r->nsweep; i++) {
		const struct sweep_row *row = &r->sweep[i];

		json_begin_object(&j, NULL);
		json_string(&j, "workload", workload_name(row->rec.workload));
		json_u64(&j, "iteration", row->rec.iteration);
		json_u64(&j, "size_mib", row->rec.size_mib);
		json_string(&j, "mode", mode_name(row->rec.mode));
		json_u64(&j, "vcpu", row->rec.vcpu);
		json_double(&j, "map_s", row->map_s);
		json_double(&j, "touch_s", row->touch_s);
		json_double(&j, "seconds", row->map_s + row->touch_s);
		json_double(&j, "unmap_s", row->unmap_s);
		json_u64(&j, "pages", row->rec.pages);
		json_u64(&j, "guest_faults", row->rec.guest_faults);
		json_u64(&j, "pfn_sum", row->rec.pfn_sum);
		json_end_object(&j);
	}
	json_end_array(&j);

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

	err = ferror(j.f) ? -EIO : 0;
	if (fclose(j.f) && !err)
		err = -errno;
	return err;
}
