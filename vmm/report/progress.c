/* The results' touch frontier: each vCPU's first-pass points and the order its pass took. */
#include "report.h"

static const char *order_name(uint32_t order)
{
	return order == MVM_ORDER_SEQUENTIAL ? "sequential"
	       : order == MVM_ORDER_RANDOM   ? "random"
	       : order == MVM_ORDER_STRIDE   ? "stride"
	       : order == MVM_ORDER_BLOCKS   ? "blocks"
					     : "unknown";
}

/*
 * "touch_order": one object per vCPU (MVM_REC_ORDER); "progress": every
 * point (MVM_REC_PROGRESS) as the guest sent it, its TSC on the run's clock
 * (ms since exec, converted as the guest's marks are; null without the TSC
 * anchor). Both arrays are empty for workloads that send none; one item a
 * line.
 */
void progress_write_json(const struct run_view *r, struct json *j)
{
	size_t n;
	const struct mvm_rec_order *o = records_order(r->rec, &n);
	const struct mvm_rec_progress *p;

	json_begin_array(j, "touch_order");
	for (size_t i = 0; i < n; i++) {
		json_begin_flat_object(j, NULL);
		json_u64(j, "vcpu", o[i].vcpu);
		json_string(j, "workload", sweep_workload_name(o[i].workload));
		json_string(j, "order", order_name(o[i].order));
		json_u64(j, "seed", o[i].seed);
		json_u64(j, "stride_pages", o[i].stride_pages);
		json_u64(j, "gpa", o[i].start_gpa);
		json_u64(j, "end_gpa", o[i].end_gpa);
		json_u64(j, "pages", o[i].pages);
		json_u64(j, "progress_bytes", o[i].progress_bytes);
		json_end_object(j);
	}
	json_end_array(j);
	p = records_progress(r->rec, &n);
	json_begin_array(j, "progress");
	for (size_t i = 0; i < n; i++) {
		double t = timeline_guest_time(r->tl, p[i].tsc);

		json_begin_flat_object(j, NULL);
		json_u64(j, "vcpu", p[i].vcpu);
		json_u64(j, "iteration", p[i].iteration);
		json_u64(j, "bytes", p[i].bytes_done);
		json_u64(j, "bytes_total", p[i].bytes_total);
		json_u64(j, "last_gpa", p[i].last_gpa);
		if (t > 0)
			json_ns(j, "t_ms", timeline_ns(r->tl, t), NSEC_PER_MSEC);
		else
			json_null(j, "t_ms");
		json_end_object(j);
	}
	json_end_array(j);
}
