/* The tables a person reads: OSv's sweep table, row by row as the guest measures, and eager touch. */
#include "report.h"

static const char *secs(const struct records *res, char buf[FMT_BYTES],
			const struct mvm_rec_sweep *r, uint64_t cycles)
{
	return r ? fmt_value(buf, records_seconds(res, cycles), 3) : "-";
}

static void header(const struct mvm_rec_sweep *t, int first, FILE *f)
{
	int flat = t->workload != MVM_WL_SWEEP; /* flat, perm: one column, touch */

	if (first)
		fprintf(f,
			"\n(time = the touch loop only, as OSv's benchmark times it; mmap and munmap are timed apart; populate = the guest's mmap(MAP_POPULATE), not --eager)\n");
	fprintf(f, "\nIteration %u%s%s%s\n\n", t->iteration, flat ? " (" : "",
		flat ? sweep_workload_name(t->workload) : "",
		flat ? ": direct-mapped, no guest faults)" : "");
	fprintf(f, "     time (seconds)\n");
	fprintf(f,
		flat ? " MiB  touch\n"
		     : " MiB demand populate | mmap: demand  populate | munmap: demand populate\n");
}

/*
 * Print what a batch completes: a table's header when its first row comes,
 * and each row once both its cells (demand and populate; flat has one) are
 * in. The seed's own format (%4lu %-6.3f %-6.3f) leads each row, so it can
 * be laid beside OSv's table line by line; the mmap and munmap times follow.
 */
void tables_sweep_batch(const struct records *res, size_t from, FILE *f)
{
	size_t n;
	const struct mvm_rec_sweep *all = records_sweep(res, &n);
	/* The row before each record: vCPU 0's or all's, whatever its batch (+ 1; 0: none). */
	size_t prev = from < n ? records_row_before(res, from) : 0;
	int parallel = 0;

	for (size_t i = from; i < n; i++)
		parallel |= all[i].vcpu == MVM_VCPU_ALL;
	for (size_t i = from; i < n; i++) {
		const struct mvm_rec_sweep *t = &all[i], *dm, *before;
		int flat = t->workload != MVM_WL_SWEEP;
		char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES], d[FMT_BYTES], e[FMT_BYTES],
			g[FMT_BYTES], seed[3 * FMT_BYTES];

		if (t->vcpu != 0 && t->vcpu != MVM_VCPU_ALL)
			continue;
		before = prev ? &all[prev - 1] : NULL;
		prev = i + 1;
		/* The table shows the all-vCPU record of a --parallel batch, else vCPU 0's. */
		if (t->vcpu != (parallel ? MVM_VCPU_ALL : 0))
			continue;
		/* A table starts where the row before it (vCPU 0's or all's) is of another. */
		if (!before || before->workload != t->workload ||
		    before->iteration != t->iteration)
			header(t, from == 0, f);
		if (flat) {
			fprintf(f, "%4u  %-6s\n", t->size_mib,
				secs(res, a, t, t->touch_cycles));
			continue;
		}
		if (t->mode != MVM_MODE_POPULATE)
			continue; /* the row is printed when its populate cell comes */
		dm = records_table_rec(res, t, MVM_MODE_DEMAND);
		/* The seed's own line first, then padded so the '|' columns line up. */
		snprintf(seed, sizeof(seed), "%4u %-6s %-6s", t->size_mib,
			 secs(res, a, dm, dm ? dm->touch_cycles : 0),
			 secs(res, b, t, t->touch_cycles));
		fprintf(f, "%-20s | %-12s %-9s | %-14s %s\n", seed,
			secs(res, c, dm, dm ? dm->map_cycles : 0),
			secs(res, d, t, t->map_cycles),
			secs(res, e, dm, dm ? dm->unmap_cycles : 0),
			secs(res, g, t, t->unmap_cycles));
	}
	fflush(f);
}

void tables_touch(const struct records *res, FILE *f)
{
	size_t n;
	const struct mvm_rec_touch *t = records_touch(res, &n);
	char a[FMT_BYTES], b[FMT_BYTES];

	for (size_t i = 0; i < n; i++) {
		double s = records_seconds(res, t[i].cycles);
		double bytes = (double)t[i].pages * MVM_PAGE_BYTES;

		if (t[i].vcpu == MVM_VCPU_ALL)
			fprintf(f,
				"eager: touch (in the guest, CPL3), %zu vCPU%s, %s in %s s (%.2f GiB/s)\n",
				n - 1, n - 1 == 1 ? "" : "s", fmt_size(b, bytes),
				fmt_value(a, s, 3), gib_per_s(bytes, s));
	}
	for (size_t i = 0; i < n; i++) {
		double s = records_seconds(res, t[i].cycles);
		double bytes = (double)t[i].pages * MVM_PAGE_BYTES;

		if (t[i].vcpu != MVM_VCPU_ALL)
			fprintf(f, "  vCPU %u: %s at 0x%llx in %s s (%.2f GiB/s)\n",
				t[i].vcpu, fmt_size(b, bytes),
				(unsigned long long)t[i].start_gpa, fmt_value(a, s, 3),
				gib_per_s(bytes, s));
	}
	fflush(f);
}
