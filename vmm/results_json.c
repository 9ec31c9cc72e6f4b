/* The results file: one run as JSON (config, platform, eager, sweep, timeline, devices, exit). */
#include "vmm.h"

#include "json.h"

/* --eager=touch: the guest's pass, per vCPU and for all of them. */
static void touch_json(const struct run *r, struct json *j)
{
	size_t n;
	const struct mvm_rec_touch *t = results_touch(r->res, &n);

	json_u64(j, "threads", r->vm.nvcpus);
	json_bool(j, "on_vcpu_threads", 1);
	json_begin_array(j, "per_thread");
	for (size_t i = 0; i < n; i++) {
		double s = results_seconds(r->res, t[i].cycles);
		double bytes = (double)t[i].pages * MVM_PAGE_BYTES;

		if (t[i].vcpu == MVM_VCPU_ALL)
			continue;
		json_begin_object(j, NULL);
		json_u64(j, "vcpu", t[i].vcpu);
		json_u64(j, "gpa", t[i].start_gpa);
		json_u64(j, "end_gpa", t[i].end_gpa);
		json_u64(j, "pages", t[i].pages);
		json_u64(j, "bytes", t[i].pages * MVM_PAGE_BYTES);
		json_double(j, "seconds", s);
		json_double(j, "gib_per_s", gib_per_s(bytes, s));
		json_end_object(j);
	}
	json_end_array(j);
	for (size_t i = 0; i < n; i++) {
		if (t[i].vcpu != MVM_VCPU_ALL)
			continue;
		json_u64(j, "pages", t[i].pages);
		json_u64(j, "bytes", t[i].pages * MVM_PAGE_BYTES);
		json_double(j, "seconds", results_seconds(r->res, t[i].cycles));
	}
}

/* Every record; what the tables show is touch_s (OSv's timed region). */
static void sweep_json(const struct run *r, struct json *j)
{
	size_t n;
	const struct mvm_rec_sweep *recs = results_sweep(r->res, &n);

	json_begin_array(j, "sweep");
	for (size_t i = 0; i < n; i++) {
		const struct mvm_rec_sweep *s = &recs[i];
		unsigned nkvm = 0;
		const uint64_t *kvm = results_kvm(r->res, i, &nkvm);

		json_begin_object(j, NULL);
		json_string(j, "workload", sweep_workload_name(s->workload));
		json_u64(j, "iteration", s->iteration);
		json_u64(j, "size_mib", s->size_mib);
		json_string(j, "guest_mapping", sweep_mapping_name(s));
		if (s->vcpu == MVM_VCPU_ALL)
			json_string(j, "vcpu", "all");
		else
			json_u64(j, "vcpu", s->vcpu);
		json_double(j, "map_s", results_seconds(r->res, s->map_cycles));
		json_double(j, "touch_s", results_seconds(r->res, s->touch_cycles));
		json_double(j, "unmap_s", results_seconds(r->res, s->unmap_cycles));
		json_u64(j, "pages", s->pages);
		json_u64(j, "guest_faults", s->guest_faults);
		json_u64(j, "pfn_sum", s->pfn_sum);
		if (kvm) {
			json_begin_object(j, "kvm");
			for (unsigned k = 0; k < nkvm; k++) {
				int cum;

				json_u64(j, kvmstats_name(r->stats, k, &cum), kvm[k]);
			}
			json_end_object(j);
		}
		json_end_object(j);
	}
	json_end_array(j);
}

static void unclaimed_json(struct json *j, const char *key, const struct io_bus *bus)
{
	struct io_unclaimed u = io_bus_unclaimed_counts(bus);

	json_begin_object(j, key);
	json_u64(j, "count", u.count);
	if (u.count) {
		json_u64(j, "first_address", u.first_addr);
		json_bool(j, "first_is_write", u.first_write);
	}
	json_end_object(j);
}

void run_write_members(const struct run *r, struct json *j)
{
	const struct config *cfg = r->cfg;
	const struct vm *vm = &r->vm;
	struct tl_summary s;

	json_begin_object(j, "minivmm");
	json_string(j, "version", MINIVMM_VERSION);
	json_u64(j, "abi", MVM_ABI_VERSION);
	json_end_object(j);

	json_begin_object(j, "platform");
	json_string(j, "kvm", vm->plat.kvm);
	json_string(j, "paging", vm->plat.tdp ? "tdp" : "shadow");
	json_bool(j, "pre_fault_memory", vm->plat.pre_fault);
	json_u64(j, "tsc_khz", vm->plat.tsc_khz);
	json_end_object(j);

	json_begin_object(j, "config");
	json_u64(j, "mem_bytes", cfg->mem_bytes);
	json_u64(j, "vcpus", cfg->vcpus);
	json_string(j, "backing", cfg->backing->name);
	json_u64(j, "backing_page_bytes", cfg->backing->page_bytes);
	json_string(j, "eager", eager_strategy_name(cfg->eager));
	json_string(j, "paging", paging_kind_name(cfg->paging));
	json_string(j, "guest", cfg->guest_path);
	json_begin_array(j, "guest_args");
	for (int i = 0; i < cfg->guest_argc; i++)
		json_string(j, NULL, cfg->guest_argv[i]);
	json_end_array(j);
	if (cfg->timeout_s > 0)
		json_double(j, "timeout_s", cfg->timeout_s);
	json_end_object(j);

	if (cfg->eager != EAGER_NONE) {
		json_begin_object(j, "eager");
		eager_write_json(r->eager, cfg, j);
		if (eager_strategy(r->eager) == EAGER_TOUCH)
			touch_json(r, j);
		json_end_object(j);
	}

	paging_write_json(r->paging, cfg, r->tl, r->t_exec, j);
	json_string(j, "sweep_table_shows", "touch_s");
	sweep_json(r, j);
	run_summary(r, &s);
	timeline_write_json(r->tl, &s, j);

	json_begin_object(j, "devices");
	unclaimed_json(j, "unclaimed_pio", &vm->pio);
	unclaimed_json(j, "unclaimed_mmio", &vm->mmio);
	json_u64(j, "console_bytes", console_counts(r->console).bytes);
	json_u64(j, "console_dropped", console_counts(r->console).dropped);
	json_end_object(j);

	json_begin_object(j, "exit");
	json_u64(j, "status", (uint64_t)vm_exit_status(vm));
	json_string(j, "reason", vm_end_reason(vm));
	if (vm->end == END_GUEST_EXIT)
		json_i64(j, "guest_status", vm->status);
	json_string(j, "message", vm->message);
	json_end_object(j);
}
