/* The results file: its schema and version, the environment, each run, the aggregates, the verdict. */
#include "report.h"
#include "boot.h"

#include <string.h>

#ifndef MINIVMM_REVISION
#define MINIVMM_REVISION "unknown"
#endif

/* --eager=touch: the guest's pass, per vCPU and for all of them. */
static void touch_json(const struct run_view *r, struct json *j)
{
	size_t n;
	const struct mvm_rec_touch *t = records_touch(r->rec, &n);

	json_u64(j, "threads", vm_nvcpus(r->vm));
	json_bool(j, "on_vcpu_threads", 1);
	json_begin_array(j, "per_thread");
	for (size_t i = 0; i < n; i++) {
		double s = records_seconds(r->rec, t[i].cycles);
		double bytes = (double)t[i].pages * MVM_PAGE_BYTES;

		if (t[i].vcpu == MVM_VCPU_ALL)
			continue;
		json_begin_object(j, NULL);
		json_u64(j, "vcpu", t[i].vcpu);
		json_u64(j, "gpa", t[i].start_gpa);
		json_u64(j, "end_gpa", t[i].end_gpa);
		json_u64(j, "pages", t[i].pages);
		json_u64(j, "bytes", t[i].pages * MVM_PAGE_BYTES);
		json_seconds(j, "seconds", s);
		json_double(j, "gib_per_s", gib_per_s(bytes, s));
		json_end_object(j);
	}
	json_end_array(j);
	for (size_t i = 0; i < n; i++) {
		if (t[i].vcpu != MVM_VCPU_ALL)
			continue;
		json_u64(j, "pages", t[i].pages);
		json_u64(j, "bytes", t[i].pages * MVM_PAGE_BYTES);
		json_seconds(j, "seconds", records_seconds(r->rec, t[i].cycles));
	}
}

/* Every record, one a line; what the tables show is touch_s (OSv's timed region). */
static void sweep_json(const struct run_view *r, struct json *j)
{
	size_t n;
	const struct mvm_rec_sweep *recs = records_sweep(r->rec, &n);

	json_begin_array(j, "sweep");
	for (size_t i = 0; i < n; i++) {
		const struct mvm_rec_sweep *s = &recs[i];
		unsigned nkvm = 0;
		const uint64_t *kvm = records_kvm(r->rec, i, &nkvm);

		json_begin_flat_object(j, NULL);
		json_string(j, "workload", sweep_workload_name(s->workload));
		json_u64(j, "iteration", s->iteration);
		json_u64(j, "size_mib", s->size_mib);
		json_string(j, "guest_mapping", sweep_mapping_name(s));
		if (s->vcpu == MVM_VCPU_ALL)
			json_string(j, "vcpu", "all");
		else
			json_u64(j, "vcpu", s->vcpu);
		json_seconds(j, "map_s", records_seconds(r->rec, s->map_cycles));
		json_seconds(j, "touch_s", records_seconds(r->rec, s->touch_cycles));
		json_seconds(j, "unmap_s", records_seconds(r->rec, s->unmap_cycles));
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

/* How a run (or the experiment it ended) ended: its status, its run_ends row, its message. */
static void exit_json(struct json *j, const struct vm *vm, int status)
{
	json_begin_object(j, "exit");
	json_u64(j, "status", (uint64_t)status);
	json_string(j, "reason", vm_end_reason(vm));
	if (vm_end(vm) == END_GUEST_EXIT || vm_end(vm) == END_GUEST_USAGE)
		json_i64(j, "guest_status", vm_guest_status(vm));
	json_string(j, "message", vm_end_message(vm));
	if (vm_report(vm)[0])
		json_string(j, "first_report", vm_report(vm));
	json_end_object(j);
}

/* What the guest was: a minivmm image, or a Linux kernel with its release and command line. */
static void guest_json(const struct run_view *r, struct json *j)
{
	const struct linux_boot *lx = r->lx;
	double entry = timeline_time(r->tl, PHASE_GUEST_ENTRY),
	       init = timeline_time(r->tl, PHASE_INIT_START);

	json_begin_object(j, "guest");
	json_string(j, "kind", lx ? "linux" : "minivmm");
	if (lx && lx->kernel) {
		json_string(j, "kernel_release", lx->k.release);
		json_u64(j, "boot_protocol", lx->k.version);
		json_bytes(j, "cmdline", lx->cmdline);
		if (r->cfg->initrd_path)
			json_bytes(j, "initrd", r->cfg->initrd_path);
		json_u64(j, "initrd_bytes", lx->initrd_len);
		if (init > 0) {
			json_ns(j, "init_start_ms", timeline_ns(r->tl, init),
				NSEC_PER_MSEC);
			json_ns(j, "kernel_boot_ms",
				timeline_ns(r->tl, init) - timeline_ns(r->tl, entry),
				NSEC_PER_MSEC);
		}
	}
	json_end_object(j);
}

/* One run's members (config, platform, eager, sweep, timeline, summary, devices, exit). */
static void run_members(const struct run_view *r, struct json *j)
{
	const struct vm_config *cfg = r->cfg;
	const struct vm *vm = r->vm;
	const struct platform *plat = vm_platform(vm);
	const struct guest_ram *ram = vm_ram_const(vm);
	struct tl_summary s;

	json_begin_object(j, "minivmm");
	json_string(j, "version", MINIVMM_VERSION);
	json_u64(j, "abi", MVM_ABI_VERSION);
	json_u64(j, "image_abi", vm_image_abi(vm)); /* what the image was built for */
	json_end_object(j);

	json_begin_object(j, "platform");
	json_string(j, "kvm", plat->kvm);
	/* KVM never opened: no platform was detected, so no paging to name. */
	json_string(j, "paging", !plat->kvm[0] ? "none" : plat->tdp ? "tdp" : "shadow");
	json_bool(j, "pre_fault_memory", plat->pre_fault);
	json_u64(j, "tsc_khz", plat->tsc_khz);
	json_bool(j, "emulated", plat->emulated);
	json_end_object(j);

	json_begin_object(j, "config");
	json_u64(j, "mem_bytes", cfg->mem_bytes);
	json_u64(j, "vcpus", cfg->vcpus);
	json_string(j, "backing", ram_backing_name(ram, cfg));
	json_u64(j, "backing_page_bytes", ram_backing_page_bytes(ram, cfg));
	if (cfg->mem_path)
		json_bytes(j, "mem_path", cfg->mem_path);
	if (cfg->reservoir)
		json_bytes(j, "reservoir", cfg->reservoir);
	if (cfg->roofline_path)
		json_bytes(j, "roofline", cfg->roofline_path);
	json_string(j, "eager", eager_strategy_name(cfg->eager));
	json_bool(j, "eager_background", cfg->eager_background);
	if (cfg->eager_order)
		json_string(j, "eager_order", cfg->eager_order);
	json_string(j, "paging", paging_kind_name(cfg->paging));
	json_bytes(j, "guest", cfg->guest_path); /* --kernel: the kernel's path */
	json_bytes_array(j, "guest_args", cfg->guest_argv, cfg->guest_argc);
	if (cfg->timeout_s > 0)
		json_double(j, "timeout_s", cfg->timeout_s);
	json_end_object(j);

	ram_write_json(ram, cfg, j);
	guest_json(r, j);

	if (cfg->eager != EAGER_NONE) {
		json_begin_object(j, "eager");
		eager_write_json(r, j);
		if (eager_strategy(r->eager) == EAGER_TOUCH)
			touch_json(r, j);
		json_end_object(j);
	}

	numa_write_json(vm_numa(vm), j);
	paging_write_json(r, j);
	snapshot_write_json(r, j);
	json_string(j, "sweep_table_shows", "touch_s");
	sweep_json(r, j);
	progress_write_json(r, j);
	run_summary(r, &s);
	timeline_write_json(r->tl, &s, j);

	json_begin_object(j, "devices");
	unclaimed_json(j, "unclaimed_pio", vm_bus(vm, 0));
	unclaimed_json(j, "unclaimed_mmio", vm_bus(vm, 1));
	json_u64(j, "console_bytes", console_counts(r->console).bytes);
	json_u64(j, "console_dropped", console_counts(r->console).dropped);
	if (r->pc) {
		const struct pc_counts n = *r->pc;

		json_u64(j, "com1_irqs", console_counts(r->console).irqs);
		json_u64(j, "cmos_reads", n.cmos_reads);
		json_u64(j, "boot_timer_writes", n.boot_timer_writes);
		json_u64(j, "boot_timer_other", n.boot_timer_other);
	}
	json_end_object(j);

	exit_json(j, vm, vm_exit_status(vm));
}

/* The environment record (env.c read it; a NULL env writes null). */
static void env_json(const struct env *e, struct json *j)
{
	const char *module = NULL;

	if (!e) {
		json_null(j, "environment");
		return;
	}
	json_begin_object(j, "environment");
	json_string(j, "minivmm_version", MINIVMM_VERSION);
	json_string(j, "source_revision", MINIVMM_REVISION);
	json_u64(j, "guest_abi", MVM_ABI_VERSION);
	json_bytes_array(j, "command_line", e->argv, e->argc);
	json_string(j, "start_time", e->start_time);
	json_string(j, "hostname", e->hostname);
	json_string(j, "kernel_release", e->kernel_release);
	json_string(j, "kernel_version", e->kernel_version);
	json_string(j, "machine", e->machine);
	json_string(j, "cpu_model", e->cpu_model);
	json_string(j, "cpu_vendor", e->cpu_vendor);
	json_string(j, "cpu_family", e->cpu_family);
	json_string(j, "cpu_model_number", e->cpu_model_number);
	json_string(j, "cpu_stepping", e->cpu_stepping);
	json_i64(j, "online_cpus", e->online_cpus);
	json_u64(j, "mem_total_bytes", e->mem_total);
	json_u64(j, "mem_available_bytes", e->mem_available);
	json_string(j, "thp_enabled", e->thp_enabled);
	json_string(j, "thp_defrag", e->thp_defrag);
	json_begin_array(j, "hugetlb_pools");
	for (unsigned i = 0; i < e->npools; i++) {
		json_begin_object(j, NULL);
		json_string(j, "size", e->pool[i].size);
		json_u64(j, "nr_hugepages", e->pool[i].nr);
		json_u64(j, "free_hugepages", e->pool[i].free);
		json_end_object(j);
	}
	json_end_array(j);
	/* Which KVM, and every parameter that can change how it pages (ept, npt, tdp_mmu, ...). */
	json_begin_object(j, "kvm_modules");
	for (unsigned i = 0; i < e->nparams; i++) {
		if (!module || strcmp(module, e->param[i].module)) {
			if (module)
				json_end_object(j);
			module = e->param[i].module;
			json_begin_object(j, module);
		}
		json_string(j, e->param[i].name, e->param[i].value);
	}
	if (module)
		json_end_object(j);
	json_end_object(j);
	json_end_object(j);
}

/* The measured runs of mode m (warm-ups left out), in the order they ran. */
static unsigned measured(const struct experiment_view *x, unsigned m,
			 const struct run_view **out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < x->done; i++)
		if (x->mode[i] == m && !x->is_warmup[i])
			out[n++] = &x->runs[i];
	return n;
}

static void resources_json(const struct experiment_view *x, struct json *j)
{
	json_begin_object(j, "resources");
	json_begin_array(j, "fds");
	for (unsigned i = 0; i <= x->done; i++)
		json_i64(j, NULL, x->fds[i]);
	json_end_array(j);
	json_begin_array(j, "threads");
	for (unsigned i = 0; i <= x->done; i++)
		json_i64(j, NULL, x->threads[i]);
	json_end_array(j);
	json_end_object(j);
}

/* The run that recorded the first-touch order the replay runs replay (run 1, not counted). */
static void recording_json(const struct experiment_view *x, struct json *j)
{
	struct paging_facts pg;

	json_begin_object(j, "recording");
	json_u64(j, "index", 1);
	json_bytes(j, "path", x->record_path);
	if (x->done && !paging_facts(x->runs[0].paging, &pg)) {
		json_u64(j, "pages", pg.recorded);
		if (pg.record_err)
			json_string(j, "error", strerror(-pg.record_err));
	}
	json_end_object(j);
}

void results_header_json(const struct env *env, struct json *j)
{
	json_string(j, "schema", RESULTS_SCHEMA);
	json_u64(j, "schema_version", RESULTS_SCHEMA_VERSION);
	env_json(env, j);
}

static void build(struct json *j, const void *arg)
{
	const struct experiment_view *x = arg;

	json_begin_object(j, NULL);
	results_header_json(x->env, j);
	if (x->planned == 1) { /* one run: its members at the top */
		if (x->done)
			run_members(&x->runs[0], j);
		json_end_object(j);
		return;
	}
	json_begin_object(j, "experiment");
	json_string(j, "kind", x->kind);
	json_u64(j, "repeat", x->repeat);
	json_u64(j, "warmup", x->warmup);
	json_begin_array(j, "order");
	for (unsigned i = 0; i < x->planned; i++)
		json_string(j, NULL, x->mode_label[x->mode[i]]);
	json_end_array(j);
	json_u64(j, "runs_done", x->done);
	if (!strcmp(x->kind, "compare")) {
		json_begin_array(j, "modes");
		for (unsigned m = 0; m < x->nmodes; m++)
			json_string(j, NULL, x->mode_label[m]);
		json_end_array(j);
	}
	if (x->recording)
		recording_json(x, j);
	json_end_object(j);
	json_begin_array(j, "runs");
	for (unsigned i = 0; i < x->done; i++) {
		json_begin_object(j, NULL);
		json_u64(j, "index", i + 1);
		json_string(j, "label", x->mode_label[x->mode[i]]);
		json_bool(j, "warmup", x->is_warmup[i]);
		run_members(&x->runs[i], j);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_object(j, "aggregate");
	for (unsigned m = 0; m < x->nmodes; m++) {
		const struct run_view *rs[x->done + 1];
		struct run_set set = { rs, measured(x, m, rs), x->mode_label[m] };

		aggregate_write_json(&set, j);
	}
	json_end_object(j);
	if (x->verdict)
		verdict_write_json(x->verdict, j);
	resources_json(x, j);
	/*
	 * The experiment's ending: that of the run that ended it (it stops at
	 * the first that fails: an interrupted or failed run), else of the last;
	 * the status is the experiment's own.
	 */
	if (x->done) {
		exit_json(j, x->runs[x->done - 1].vm, x->status);
	} else {
		json_begin_object(j, "exit");
		json_u64(j, "status", (uint64_t)x->status);
		json_string(j, "reason", run_end_row(END_RUNNING)->reason);
		json_string(j, "message", "no run started");
		json_end_object(j);
	}
	json_end_object(j);
}

int results_file_write(int fd, const struct experiment_view *x)
{
	return json_write_fd(fd, build, x);
}
