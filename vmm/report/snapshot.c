/* What a snapshot cost and how a restore went: the line people read and the results' members. */
#include "report.h"

#include "snapshot.h"

void snapshot_print(const struct snapshot_facts *f, FILE *out)
{
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES], d[FMT_BYTES], e[FMT_BYTES],
		g[FMT_BYTES];

	fprintf(out,
		"snapshot: %s written in %s: memory %s of data in %llu extents (of %s RAM; %s resident) in %s (%.2f GiB/s), state %s\n",
		f->path, fmt_duration(a, f->seconds), fmt_size(b, (double)f->data_bytes),
		(unsigned long long)f->extents, fmt_size(c, (double)f->ram_bytes),
		fmt_size(d, (double)f->resident_bytes), fmt_duration(e, f->memory_s),
		gib_per_s((double)f->data_bytes, f->memory_s),
		fmt_size(g, (double)f->state_bytes));
}

void restore_print(const struct restore_facts *f, FILE *out)
{
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES];

	fprintf(out,
		"restore: %s (mode %s): vCPU state set in %s (%u MSRs, %u refused by KVM), memory ready in %s (%s of data in %llu extents)\n",
		f->dir, f->mode, fmt_duration(a, f->state_s), f->msrs_set,
		f->msrs_skipped, fmt_duration(b, f->memory_s),
		fmt_size(c, (double)f->data_bytes), (unsigned long long)f->extents);
}

void snapshot_write_json(const struct run_view *v, struct json *j)
{
	const struct snapshot_facts *f = v->snapshot;
	const struct restore_facts *r = v->restore;

	if (f) {
		json_begin_object(j, "snapshot");
		json_bytes(j, "path", f->path);
		json_bool(j, "taken", f->taken);
		json_u64(j, "asks", f->asks);
		if (f->taken) {
			json_u64(j, "vcpu", f->vcpu);
			json_u64(j, "pass", f->pass);
			json_u64(j, "guest_checksum", f->guest_checksum);
			json_seconds(j, "seconds", f->seconds);
			json_seconds(j, "memory_s", f->memory_s);
			json_u64(j, "ram_bytes", f->ram_bytes);
			json_u64(j, "resident_bytes", f->resident_bytes);
			json_u64(j, "data_bytes", f->data_bytes);
			json_u64(j, "extents", f->extents);
			json_u64(j, "state_bytes", f->state_bytes);
			json_u64(j, "msrs", f->msrs);
		}
		json_end_object(j);
	}
	if (r) {
		json_begin_object(j, "restore");
		json_bytes(j, "path", r->dir);
		json_string(j, "mode", r->mode);
		json_u64(j, "pass", r->pass);
		json_u64(j, "guest_checksum", r->guest_checksum);
		json_u64(j, "data_bytes", r->data_bytes);
		json_u64(j, "extents", r->extents);
		json_u64(j, "msrs_set", r->msrs_set);
		json_begin_array(j, "msrs_refused");
		for (uint32_t i = 0; i < r->msrs_skipped && i < ARRAY_SIZE(r->skipped);
		     i++)
			json_u64(j, NULL, r->skipped[i]);
		json_end_array(j);
		json_seconds(j, "state_s", r->state_s);
		json_seconds(j, "memory_s", r->memory_s);
		json_end_object(j);
	}
}
