/* The tables a person reads: OSv's sweep table per iteration and the eager touch pass. */
#include "vmm.h"

/* The record a table cell shows: the all-vCPU aggregate if the batch has one, else vCPU 0. */
static const struct mvm_rec_sweep *cell_rec(const struct mvm_rec_sweep *recs, size_t n,
					    const struct mvm_rec_sweep *key, uint32_t mode)
{
	const struct mvm_rec_sweep *found = NULL;

	for (size_t i = 0; i < n; i++) {
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

static void print_cell(FILE *f, const struct results *res, const struct mvm_rec_sweep *r,
		       const char *sep)
{
	if (r)
		fprintf(f, "%s%.3f", sep, results_seconds(res, r->map_cycles + r->touch_cycles));
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
void report_sweep_batch(const struct results *res, size_t from, FILE *f)
{
	size_t total;
	const struct mvm_rec_sweep *all = results_sweep(res, &total);
	const struct mvm_rec_sweep *recs = all + from;
	size_t n = total - from;

	for (size_t i = 0; i < n; i++) {
		const struct mvm_rec_sweep *t = &recs[i];
		int flat = t->workload == MVM_WL_FLAT, seen = 0;

		for (size_t k = 0; k < i && !seen; k++)
			seen = same_table(&recs[k], t);
		for (size_t k = 0; k < from && !seen; k++)
			seen = same_table(&all[k], t) && all[k].vcpu == MVM_VCPU_ALL;
		if (seen)
			continue;
		fprintf(f, "\nIteration %u%s\n\n", t->iteration,
			flat ? " (flat: direct-mapped, no guest faults)" : "");
		fprintf(f, "     time (seconds)\n");
		fprintf(f, flat ? " MiB  touch\n" : " MiB demand populate\n");
		for (size_t k = i; k < n; k++) {
			const struct mvm_rec_sweep *row = &recs[k];
			int dup = 0;

			for (size_t d = i; d < k && !dup; d++)
				dup = same_table(&recs[d], row) &&
				      recs[d].size_mib == row->size_mib;
			if (!same_table(row, t) || dup)
				continue;
			fprintf(f, "%4u ", row->size_mib);
			print_cell(f, res, cell_rec(recs, n, row, MVM_MODE_DEMAND),
				   flat ? " " : "");
			if (!flat)
				print_cell(f, res, cell_rec(recs, n, row, MVM_MODE_POPULATE),
					   "  ");
			fputc('\n', f);
		}
	}
	fflush(f);
}

void report_touch(const struct results *res, FILE *f)
{
	size_t n;
	const struct mvm_rec_touch *t = results_touch(res, &n);

	for (size_t i = 0; i < n; i++) {
		double s = results_seconds(res, t[i].cycles);
		double gib = (double)t[i].pages * MVM_PAGE_BYTES / BYTES_PER_GIB;

		if (t[i].vcpu == MVM_VCPU_ALL)
			fprintf(f, "eager: touch (in the guest, CPL3), %zu vCPUs, %.2f GiB in %.3f s (%.2f GiB/s)\n",
				n - 1, gib, s, s > 0 ? gib / s : 0);
	}
	for (size_t i = 0; i < n; i++) {
		double s = results_seconds(res, t[i].cycles);
		double gib = (double)t[i].pages * MVM_PAGE_BYTES / BYTES_PER_GIB;

		if (t[i].vcpu != MVM_VCPU_ALL)
			fprintf(f, "  vCPU %u: %.2f GiB at 0x%llx in %.3f s (%.2f GiB/s)\n",
				t[i].vcpu, gib, (unsigned long long)t[i].start_gpa, s,
				s > 0 ? gib / s : 0);
	}
	fflush(f);
}
