/* One measured run: wires the VM, its devices and the subsystems, from setup to teardown. */
#include "run_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_MIN_BYTES (1ULL << 30) /* a bar for eager population this big */
#define PROGRESS_TICK_S	   0.1

/* --- the devices' host: what the hypercall port asks of the VMM ------------ */

static void on_exit_hc(void *cookie, unsigned vcpu, int32_t status)
{
	struct run *r = cookie;

	/* The ABI's usage status: minivmm exits 2 too, as for its own bad options. */
	if (status == MVM_EXIT_USAGE)
		vm_finish(
			r->vm, END_GUEST_USAGE, status,
			"guest exited with status %d (vCPU %u): a usage error, its arguments are wrong (see the guest's output; '-- help' lists the workloads)",
			status, vcpu);
	else
		vm_finish(r->vm, END_GUEST_EXIT, status,
			  "guest exited with status %d (vCPU %u)", status, vcpu);
}

static void on_abort_hc(void *cookie, unsigned vcpu, const char *what)
{
	struct run *r = cookie;

	vm_finish(r->vm, END_GUEST_ABORT, 0, "guest aborted on vCPU %u: %s", vcpu, what);
}

static void on_violation(void *cookie, unsigned vcpu, const char *what)
{
	struct run *r = cookie;

	vm_finish(r->vm, END_ABI_VIOLATION, 0, "guest ABI violation on vCPU %u: %s", vcpu,
		  what);
}

/*
 * A batch of records (one per measurement), checked and copied out of
 * guest memory by the hypercall port: kept, with its counters, and its
 * rows printed. Past a guest limit the run ends (guest-limit, exit 4); a
 * batch the store refuses (the ABI's rules that span batches) ends it as
 * the port's checks do (abi-violation, exit 4), also when it comes from a
 * snapshot's records being put in again.
 */
static int on_records(void *cookie, unsigned vcpu, uint32_t kind, const void *recs,
		      uint32_t n)
{
	struct run *r = cookie;
	char err[160] = "";
	int e;

	pthread_mutex_lock(&r->print_lock);
	if (kind == MVM_REC_SWEEP) {
		/* KVM's counters since the previous batch: what this measurement cost. */
		uint64_t now[kvmstats_count(r->stats) + 1];
		const uint64_t *kvm =
			r->replaying || kvmstats_since(r->stats, now) ? NULL : now;
		size_t from;

		records_sweep(r->rec, &from);
		e = records_add_sweep(r->rec, recs, n, kvm, kvmstats_count(r->stats), err,
				      sizeof(err));
		if (!e && r->o.tables)
			tables_sweep_batch(r->rec, from, stdout);
	} else if (kind == MVM_REC_PROGRESS || kind == MVM_REC_ORDER) {
		e = records_add_progress(r->rec, kind, recs, n, err, sizeof(err));
	} else {
		e = records_add_touch(r->rec, recs, n, err, sizeof(err));
		if (!e && r->o.verbose)
			tables_touch(r->rec, stdout);
	}
	/* --snapshot: each batch as the guest sent it, for the restored run's results. */
	if (!e && r->log && snap_log_add(r->log, kind, recs, n))
		e = -ENOMEM;
	pthread_mutex_unlock(&r->print_lock);
	if (e == -E2BIG)
		vm_finish(r->vm, END_GUEST_LIMIT, 0,
			  "%s; stopped the guest, kept what it sent before", err);
	else if (e == -EPROTO && r->replaying)
		vm_finish(r->vm, END_ABI_VIOLATION, 0,
			  "guest ABI violation in the snapshot's records: %s", err);
	else if (e == -EPROTO)
		vm_finish(r->vm, END_ABI_VIOLATION, 0,
			  "guest ABI violation on vCPU %u: %s", vcpu, err);
	else if (e)
		vm_finish(r->vm, END_HOST_ERROR, 0, "results: storing %u records: %s", n,
			  err);
	return e;
}

static void on_mark(void *cookie, unsigned vcpu, uint32_t mark, uint64_t tsc)
{
	struct run *r = cookie;

	timeline_guest_mark(r->tl, mark, tsc);
}

static void vcpu_shutdown(void *cookie, unsigned vcpu, const char *regs)
{
	char why[448];

	snprintf(why, sizeof(why), "triple fault (%s)", regs);
	run_guest_reset(cookie, vcpu, why, 1);
}

/* A device operation stops for an end, not for a pause (it ends before its vCPU parks). */
static int on_stopping(void *cookie)
{
	struct run *r = cookie;

	return vm_device_stop(r->vm);
}

/* --- the VM's hooks, on each vCPU thread ----------------------------------- */

static void enter_sandbox(struct run *r, enum sandbox_role role, int vcpu_fd,
			  const char *who)
{
	int out[ARRAY_SIZE(r->o.out->fds) + 3], dirs[ARRAY_SIZE(r->o.out->dirfds) + 1], e;
	struct sandbox_fds f = { .vcpu_fd = vcpu_fd,
				 .irq_vm_fd = r->lx ? vm_fd(r->vm) : -1,
				 .out_fds = out,
				 .nout = r->o.out->n,
				 .dir_fds = dirs,
				 .ndirs = r->o.out->ndirs,
				 .snap_state_fd = r->dir.state_fd,
				 .snap_mem_fd = r->dir.mem_fd,
				 .snap_tmp_fd = r->dir.tmp_fd,
				 .snap_parent_fd = r->dir.dir_fd,
				 .snap_pagemap_fd = r->dir.pagemap_fd,
				 .snap_ram_fd = vm_ram_const(r->vm)->fd };

	/*
	 * The main thread also writes the paging handlers' stop eventfd and the
	 * touch record, and renames the record into its directory.
	 */
	memcpy(out, r->o.out->fds, sizeof(r->o.out->fds));
	memcpy(dirs, r->o.out->dirfds, sizeof(r->o.out->dirfds));
	if (role == SANDBOX_MAIN || role == SANDBOX_SAVER) {
		f.nout += paging_main_fds(r->paging, out + r->o.out->n, 2);
		if (paging_main_dirfd(r->paging) >= 0)
			dirs[f.ndirs++] = paging_main_dirfd(r->paging);
	}
	/* A clone of --clones writes its report to its parent there, then polls it (clone_hold). */
	if (role == SANDBOX_MAIN && r->cfg->clone_hold_fd >= 0)
		out[f.nout++] = r->cfg->clone_hold_fd;
	f.stats_fds = kvmstats_fds(r->stats, &f.nstats);
	e = sandbox_enter(role, &f);
	if (e)
		vm_finish(r->vm, END_HOST_ERROR, 0, "sandbox: seccomp filter for %s: %s",
			  who, strerror(-e));
}

static void vcpu_enter(void *cookie, unsigned vcpu, int vcpu_fd)
{
	struct run *r = cookie;
	char who[32];

	eager_vcpu_gate(r->eager, r->vm, vcpu);
	/*
	 * The first vCPU to get here marks the guest's entry (another may end the
	 * run early); the others wait for that mark before their first KVM_RUN.
	 * Without the wait, a vCPU could boot the guest while the marking thread
	 * was preempted, and a Linux guest's init_start came before its entry
	 * (seen: -3 ms, two vCPUs in the emulated host under the sanitizers).
	 */
	pthread_mutex_lock(&r->entry_lock);
	if (!r->entered && !vm_stopping(r->vm))
		timeline_guest_entry_as(r->tl, vcpu_fd,
					r->restored ? PHASE_GUEST_RESUMED
						    : PHASE_GUEST_ENTRY);
	__atomic_store_n(&r->entered, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&r->entry_lock);
	if (!r->cfg->no_sandbox && !vm_stopping(r->vm)) {
		snprintf(who, sizeof(who), "vCPU %u", vcpu);
		enter_sandbox(r, SANDBOX_VCPU, vcpu_fd, who);
	}
}

/* The guest's first exit: the main thread's own work waits for it (guest_settled). */
static void vcpu_ran(void *cookie, unsigned vcpu)
{
	struct run *r = cookie;

	if (!__atomic_exchange_n(&r->guest_ran, 1, __ATOMIC_ACQ_REL))
		vm_wake_main(r->vm);
}

static void vcpu_leave(void *cookie, unsigned vcpu)
{
	struct run *r = cookie;

	console_flush(r->console, vcpu);
}

/* --- setup ----------------------------------------------------------------- */

struct run *run_new(const struct config *cfg, const struct run_opts *o)
{
	struct run *r = calloc(1, sizeof(*r));
	struct vm_hooks hooks = { r, vcpu_enter, vcpu_leave, vcpu_ran, vcpu_shutdown };

	if (!r)
		return NULL;
	r->cfg = cfg;
	r->o = *o;
	pthread_mutex_init(&r->print_lock, NULL);
	pthread_mutex_init(&r->entry_lock, NULL);
	r->vm = vm_new(cfg->vm.strict_io, cfg->vm.raw, &hooks);
	/* "-- help" asks for the guest's list of workloads: it prints, -q or not. */
	r->console =
		console_create(cfg->vm.vcpus, stdout,
			       !o->verbose && !(cfg->vm.guest_argc > 0 &&
						!strcmp(cfg->vm.guest_argv[0], "help")));
	r->tl = timeline_create();
	r->rec = records_create(cfg->vm.vcpus);
	if (!r->vm || !r->console || !r->tl || !r->rec) {
		run_free(r);
		return NULL;
	}
	r->hc = (struct dev_host){ .cookie = r,
				   .ram = vm_ram(r->vm),
				   .nvcpus = cfg->vm.vcpus,
				   .console = r->console,
				   .exit = on_exit_hc,
				   .abort = on_abort_hc,
				   .violation = on_violation,
				   .records = on_records,
				   .mark = on_mark,
				   .snapshot = run_on_snapshot,
				   .stopping = on_stopping,
				   .reset = run_on_reset,
				   .init_start = run_on_init_start };
	r->dir = (struct snap_dir){
		.dir_fd = -1, .tmp_fd = -1, .state_fd = -1, .mem_fd = -1, .pagemap_fd = -1
	};
	r->restored = cfg->restore != NULL;
	if (cfg->snapshot_dir && !(r->log = snap_log_create())) {
		run_free(r);
		return NULL;
	}
	return r;
}

int run_register_devices(struct run *r)
{
	struct io_bus *pio = vm_pio(r->vm);
	int e = hypercalls_register(&r->hc, pio);

	e = e ?: console_register(r->console, pio);
	e = e ?: exitport_register(&r->hc, pio);
	if (!e && r->lx) {
		console_set_irq(r->console, run_on_irq, r, LINUX_COM1_IRQ);
		e = pc_devices_register(&r->pc, &r->hc, pio);
	}
	return e;
}

static int check_guest_args(struct run *r)
{
	const struct vm_config *cfg = &r->cfg->vm;
	size_t total = 0;

	for (int i = 0; i < cfg->guest_argc; i++)
		total += strlen(cfg->guest_argv[i]) + 1;
	/* A Linux guest's arguments are on its command line: cmdline_size bounds them. */
	if (cfg->kernel_path)
		return 0;
	if (cfg->guest_argc > MVM_MAX_GUEST_ARGS || total > MVM_GUEST_ARGS_BYTES)
		return setup_fail(
			r, END_USAGE,
			"guest arguments: %d arguments, %zu bytes (limit %d and %d)",
			cfg->guest_argc, total, MVM_MAX_GUEST_ARGS, MVM_GUEST_ARGS_BYTES);
	return 0;
}

/* Read and check the image before anything else: a bad path costs no KVM setup. */
static int read_guest(struct run *r)
{
	const struct vm_config *cfg = &r->cfg->vm;
	struct mvm_image_header hdr;
	char err[256];
	int e;

	if (cfg->kernel_path)
		return run_read_linux(r);
	e = loader_read(cfg->guest_path, &r->image, &r->image_len, err, sizeof(err));

	if (e)
		return setup_fail(r, END_USAGE, "%s", err);
	if (cfg->raw)
		e = loader_raw(r->image_len, cfg->mem_bytes, cfg->vcpus, &hdr, err,
			       sizeof(err));
	else
		e = loader_check(r->image, r->image_len, cfg->mem_bytes, cfg->vcpus, &hdr,
				 err, sizeof(err));
	if (!e && !cfg->raw)
		e = loader_abi_check(&hdr, cfg->numa, err, sizeof(err));
	if (e)
		return setup_fail(r, e == -ENOEXEC ? END_NOT_A_GUEST : END_USAGE,
				  "%s: %s", cfg->guest_path, err);
	vm_set_image(r->vm, &hdr);
	return 0;
}

/*
 * Put the image, the boot info and the entry page tables into guest RAM:
 * after eager population, so that eager finds RAM untouched and what it
 * reports is what it made resident.
 */
static void place_guest(struct run *r)
{
	const struct vm_config *cfg = &r->cfg->vm;
	struct guest_ram *ram = vm_ram(r->vm);
	const struct platform *plat = vm_platform(r->vm);
	struct bootinfo bi = { .mem_bytes = cfg->mem_bytes,
			       .vcpus = vm_nvcpus(r->vm),
			       .tsc_khz = plat->tsc_khz,
			       .eager_touch = eager_strategy(r->eager) == EAGER_TOUCH,
			       .snapshot = r->cfg->snapshot_dir != NULL,
			       .tdp = plat->tdp,
			       .abi = vm_image_abi(r->vm),
			       .numa = vm_numa(r->vm),
			       .argc = cfg->guest_argc,
			       .argv = cfg->guest_argv };
	char err[256];

	if (r->lx) {
		if (linux_boot_place(r->lx, ram, err, sizeof(err)))
			vm_finish(r->vm, END_USAGE, 0, "--kernel %s: %s",
				  cfg->kernel_path, err);
		else
			timeline_mark(r->tl, PHASE_GUEST_LOADED);
		return;
	}
	memcpy(mm_gpa_to_hva(ram, MVM_LOAD_GPA, r->image_len), r->image, r->image_len);
	/* check_guest_args() bounded the arguments: the FDT fits its area. */
	if (bootinfo_build(mm_gpa_to_hva(ram, MVM_BOOTINFO_GPA, MVM_BOOTINFO_MAX),
			   MVM_BOOTINFO_MAX, &bi, err, sizeof(err)))
		vm_finish(r->vm, END_USAGE, 0, "boot info: %s", err);
	loader_entry_tables(ram);
	timeline_mark(r->tl, PHASE_GUEST_LOADED);
}

static int plan_paging(struct run *r)
{
	char err[768];
	int e = paging_plan(&r->cfg->vm, &r->paging, err, sizeof(err));

	if (e)
		return setup_fail(r, e == -EINVAL ? END_USAGE : END_HOST_ERROR, "%s",
				  err);
	if (r->paging)
		timeline_set_sampler(r->tl, paging_sample, r->paging);
	return 0;
}

static int setup(struct run *r)
{
	const struct vm_config *cfg = &r->cfg->vm;
	struct vm *vm = r->vm;
	const struct platform *plat = vm_platform(vm);
	struct guest_ram *ram;
	char err[768], kvm_err[KVM_ERR_BYTES], hint[KVM_ERR_BYTES];
	int e;

	timeline_mark_at(r->tl, PHASE_EXEC, r->o.t_exec, 0);
	if (r->restored && cfg->kernel_path) {
		/* A Linux guest's snapshot: its kernel and initrd, checked against it. */
		if (read_guest(r) || run_linux_check_restore(r))
			return -1;
		timeline_mark(r->tl, PHASE_IMAGE_READ);
	} else if (r->restored) {
		run_restore_image(r);
	} else {
		if (check_guest_args(r) || read_guest(r))
			return -1;
		timeline_mark(r->tl, PHASE_IMAGE_READ);
	}
	if (r->cfg->snapshot_dir && run_begin_snapshot(r))
		return -1;
	/* Before KVM: a process that may not use userfaultfd learns it first. */
	if (plan_paging(r))
		return -1;
	if (r->cfg->no_sandbox)
		fprintf(stderr,
			"minivmm: WARNING: --no-sandbox: no seccomp filters; a guest that subverts this process can make any system call\n");
	e = kvm_open(vm, kvm_err, sizeof(kvm_err));
	if (e)
		return setup_fail(
			r, END_HOST_ERROR, "KVM: %s%s", kvm_err,
			kvm_missing(e) ? emu_host_hint(r->cfg, hint, sizeof(hint)) : "");
	timeline_mark(r->tl, PHASE_KVM_OPEN);
	if (kvm_create_vm(vm, err, sizeof(err)))
		return setup_fail(r, END_HOST_ERROR, "KVM: %s", err);
	timeline_mark(r->tl, PHASE_VM_CREATED);
	platform_detect(vm);
	if (r->o.verbose)
		platform_print(plat, stdout);
	if (r->lx && run_linux_refused(r, plat))
		return -1;
	if (cfg->vcpus > (unsigned)plat->max_vcpus)
		return setup_fail(
			r, END_USAGE,
			"--vcpus %u: this KVM supports at most %d (KVM_CAP_MAX_VCPUS)",
			cfg->vcpus, plat->max_vcpus);
	/* KVM may allow more vCPUs than this process may open fds for. */
	e = vm_fds_reserve(vm, cfg, err, sizeof(err));
	if (e)
		return setup_fail(r, e == -EMFILE ? END_USAGE : END_HOST_ERROR, "%s",
				  err);
	e = vm_map_ram(vm, cfg, err, sizeof(err));
	if (e)
		return setup_fail(r, e == -EINVAL ? END_USAGE : END_HOST_ERROR,
				  "guest RAM: %s", err);
	ram = vm_ram(vm);
	if (ram->file && ram->file->disk)
		fprintf(stderr,
			"minivmm: WARNING: --mem-any-fs: guest RAM is page cache of %s (%s): written back to disk as the guest runs\n",
			ram->file->fs, ram->file->path);
	if (r->o.verbose)
		ram_print(ram, stdout);
	timeline_mark(r->tl, PHASE_RAM_MAPPED);
	vm_set_entry_flags(vm, r->cfg->snapshot_dir ? MVM_ENTRY_SNAPSHOT : 0);
	if (vm_create_vcpus(vm, cfg->vcpus, err, sizeof(err)))
		return setup_fail(r, END_HOST_ERROR, "%s", err);
	/* Before any filter: each vCPU thread reads its own state at the pause. */
	if (r->cfg->snapshot_dir && vm_snapshot_prepare(vm, err, sizeof(err)))
		return setup_fail(r, END_HOST_ERROR, "%s", err);
	e = kvmstats_open(vm, &r->stats);
	if (e && e != -EOPNOTSUPP && r->o.verbose)
		fprintf(stderr, "minivmm: KVM statistics unavailable: %s\n",
			strerror(-e));
	timeline_attach(r->tl, r->stats, plat->tsc_khz);
	records_set_tsc_khz(r->rec, plat->tsc_khz); /* records are in guest TSC cycles */
	timeline_mark(r->tl, PHASE_VCPUS_CREATED);
	/* Before anything is populated: refuse what cannot be backed. */
	e = eager_plan(cfg, vm, &r->eager, err, sizeof(err));
	if (e)
		return setup_fail(r, e == -EINVAL ? END_USAGE : END_HOST_ERROR, "%s",
				  err);
	if (r->o.verbose)
		eager_predict_print(r->eager, stdout);
	/* Decided now: isatty() is an ioctl the sandbox will not allow later. */
	r->progress_bar = eager_host_side(r->eager) && !eager_in_background(r->eager) &&
			  !r->cfg->quiet && isatty(STDERR_FILENO) &&
			  cfg->mem_bytes > PROGRESS_MIN_BYTES;
	e = run_register_devices(r);
	if (e)
		return setup_fail(r, END_HOST_ERROR, "devices: %s", strerror(-e));
	return 0;
}

/* --- running --------------------------------------------------------------- */

/*
 * The main thread's own work (main_thread_ready) waits for the guest's first
 * exit, so that none of it is on the way to the guest's first instruction or
 * competes for a CPU with the vCPU threads getting there; a guest that takes
 * longer than GUEST_SETTLE_S to its first exit does not keep the main thread
 * out of its sandbox any longer.
 */
#define GUEST_SETTLE_S 0.05

struct settle {
	struct run *r;
	double until;
};

static int guest_settled(void *cookie)
{
	const struct settle *s = cookie;

	return __atomic_load_n(&s->r->guest_ran, __ATOMIC_ACQUIRE) ||
	       vm_stopping(s->r->vm) || now_s() >= s->until;
}

static void no_tick(void *cookie)
{
	(void)cookie;
}

static void wait_guest_settled(struct run *r, double deadline, double timeout)
{
	struct settle s = { r, now_s() + GUEST_SETTLE_S };

	vm_wait_main(r->vm, guest_settled, &s, no_tick, NULL, GUEST_SETTLE_S / 5,
		     deadline, timeout);
}

/* The main thread's tick while eager threads work: a progress bar on a terminal. */
static void progress(void *cookie)
{
	struct run *r = cookie;
	uint64_t done, total;
	int width = 40, filled;

	eager_progress(r->eager, &done, &total);
	filled = total ? (int)(done * (uint64_t)width / total) : 0;
	fprintf(stderr, "\reager %s: [%.*s%*s] %3d%% %.1f/%.1f GiB",
		eager_strategy_name(eager_strategy(r->eager)), filled,
		"########################################", width - filled, "",
		total ? (int)(done * 100 / total) : 0, (double)done / BYTES_PER_GIB,
		(double)total / BYTES_PER_GIB);
}

/*
 * Eager population first (dedicated threads, or the vCPU threads' own
 * slices while the main thread waits), then the guest is placed in RAM and
 * runs until its end. Phases are marked in the order they happen: eager
 * ends before the guest is placed, which is before any vCPU may enter.
 */
#define EAGER_SPAN_NOTE_S 0.0005 /* a phase longer than the populate by more: said */

static void eager_done(struct run *r)
{
	if (r->progress_bar) {
		progress(r);
		fputc('\n', stderr);
	}
	if (eager_end_time(r->eager) <= 0)
		return;
	timeline_mark_at(r->tl, PHASE_EAGER_DONE, eager_end_time(r->eager), 0);
	if (r->o.verbose) {
		double phase_s = eager_end_time(r->eager) -
				 timeline_time(r->tl, PHASE_VCPUS_CREATED),
		       pop_s = eager_seconds(r->eager);
		char a[FMT_BYTES], b[FMT_BYTES];

		eager_report(r->eager, vm_stopping(r->vm) ? vm_end_reason(r->vm) : NULL,
			     stdout);
		eager_slow_note(r->eager, &r->cfg->vm, stdout);
		/* One populate, two spans: say what the timeline's phase holds besides it. */
		if (phase_s - pop_s > EAGER_SPAN_NOTE_S && phase_s > 1.2 * pop_s)
			printf("  the timeline's eager_done phase, %s, holds the %s above and, before it, the residency check (mincore) and the threads' start\n",
			       fmt_duration(a, phase_s), fmt_duration(b, pop_s));
		numa_report(vm_numa(r->vm), NUMA_AUDIT_AFTER_EAGER, stdout);
		fflush(stdout);
	}
}

/*
 * The main thread's own work (the environment record's files, the sandbox
 * filter: allocations, so the mmap lock taken for writing) is done before
 * eager threads populate: a writer waiting for the lock a populating thread
 * holds would hold up the other threads, and the slices would go in turn.
 */
static void main_thread_ready(struct run *r)
{
	env_complete(r->o.env);
	/*
	 * Every thread exists now: the main thread's filter allows no more.
	 * --snapshot: the main thread writes the snapshot (its files, opened
	 * already; the vCPUs' state, which each vCPU thread read itself) and
	 * the same vCPU threads run on after it: the saver's filter, from now.
	 */
	if (!r->cfg->no_sandbox && r->o.sandbox_main)
		enter_sandbox(r, r->cfg->snapshot_dir ? SANDBOX_SAVER : SANDBOX_MAIN, -1,
			      "the main thread");
}

static void start_paging(struct run *r)
{
	char err[512];

	if (paging_start(r->paging, r->vm, !r->cfg->no_sandbox, err, sizeof(err)))
		vm_finish(r->vm, END_HOST_ERROR, 0, "%s", err);
}

/*
 * While the guest runs: has stdout's reader gone (minivmm | head)? SIGPIPE
 * is ignored so that the results are still written; a pipe or socket whose
 * other end closed polls as an error or a hang-up, whether or not anything
 * was written since (a terminal, a file or a closed fd never does).
 */
#define OUTPUT_TICK_S 0.25

static void output_check(void *cookie)
{
	struct run *r = cookie;
	struct pollfd p[1 + OUTPUT_COUNT] = { { .fd = STDOUT_FILENO,
						.events = POLLOUT } };
	nfds_t n = 1;

	for (int i = 0; i < OUTPUT_COUNT; i++)
		if (r->o.out->file[i].in_place && !strcmp(r->o.out->file[i].path, "-"))
			p[n++] = (struct pollfd){ .fd = r->o.out->file[i].fd,
						  .events = POLLOUT };
	if (poll(p, n, 0) <= 0 || vm_stopping(r->vm))
		return;
	for (nfds_t i = 0; i < n; i++)
		if (p[i].revents & (POLLERR | POLLHUP))
			vm_finish(r->vm, END_OUTPUT_CLOSED, 0,
				  "%s was closed by its reader; stopped the guest",
				  i ? "the JSON on stdout" : "stdout");
}

/* --snapshot: a run paused where its guest asked is saved; --snapshot-continue runs on. */
static void run_to_end(struct run *r, double deadline, double timeout)
{
	vm_run_to_end(r->vm, deadline, timeout, output_check, r, OUTPUT_TICK_S);
	if (!vm_pause_holding(r->vm))
		return;
	run_save_snapshot(r);
	/* The guest runs on (--snapshot-continue) to its end; or the parked threads end. */
	vm_run_to_end(r->vm, deadline, timeout, output_check, r, OUTPUT_TICK_S);
}

/*
 * --restore: the vCPUs exist; each gets its saved state, the records the
 * guest had sent go in again, the restore mode makes RAM hold the memory
 * file's content (now, or on demand), and the guest resumes where it asked
 * for the snapshot (run_snapshot.c holds the steps).
 */
static void restore_guest(struct run *r, double deadline, double timeout)
{
	const struct snapshot *s = r->cfg->restore;

	if (run_restore_vcpus(r))
		return;
	r->replaying = 1;
	for (size_t i = 0; i < s->v.nbatches && !vm_stopping(r->vm); i++)
		on_records(r, 0, s->v.batches[i].kind, s->v.batches[i].recs,
			   s->v.batches[i].count);
	r->replaying = 0;
	if (run_restore_memory(r))
		return;
	vm_start_vcpus(r->vm);
	run_restore_resumed(r);
	wait_guest_settled(r, deadline, timeout);
	main_thread_ready(r);
	vm_run_to_end(r->vm, deadline, timeout, output_check, r, OUTPUT_TICK_S);
	run_restore_finish(r);
}

static void run_guest(struct run *r)
{
	struct vm *vm = r->vm;
	struct eager *e = r->eager;
	double timeout = r->cfg->vm.timeout_s,
	       deadline = timeout > 0 ? now_s() + timeout : 0;
	void (*tick)(void *) = r->progress_bar ? progress : NULL;
	sigset_t old;

	vm_signals_block(vm, &old);
	if (r->restored) {
		restore_guest(r, deadline, timeout);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return;
	}
	if (e)
		env_sample(r->o.env); /* before anything is populated */
	eager_begin(e, vm);
	if (eager_in_background(e)) {
		/*
		 * Lazy's setup, and the eager threads beside the guest: created
		 * before the vCPUs (and before the main thread's sandbox, which
		 * allows no more threads), released once the vCPU threads exist
		 * (a thread's stack needs the mmap lock a populating thread
		 * holds), never waited for: the run's end stops them.
		 */
		place_guest(r);
		if (!vm_stopping(vm))
			eager_background_start(e, vm, !r->cfg->no_sandbox);
		if (!vm_stopping(vm))
			vm_start_vcpus(vm);
		eager_release(e);
		main_thread_ready(r);
		run_to_end(r, deadline, timeout);
		eager_background_join(e);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return;
	}
	if (eager_on_vcpu_threads(e)) {
		/* Each populates its slice once all exist, then waits for eager_go. */
		vm_start_vcpus(vm);
		main_thread_ready(r);
		eager_release(e);
		eager_wait(e, vm, tick, r, PROGRESS_TICK_S);
		eager_done(r);
		if (!vm_stopping(vm))
			place_guest(r);
		eager_go(e);
	} else {
		if (eager_host_side(e))
			eager_run_dedicated(e, vm, tick, r, PROGRESS_TICK_S);
		eager_done(r);
		if (!vm_stopping(vm))
			place_guest(r);
		/* --paging uffd (never with host-side eager): what was placed stays present. */
		if (!vm_stopping(vm))
			start_paging(r);
		if (!vm_stopping(vm))
			vm_start_vcpus(vm);
		/* The record's files and the main thread's filter: once the guest ran. */
		wait_guest_settled(r, deadline, timeout);
		main_thread_ready(r);
	}
	run_to_end(r, deadline, timeout);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * A clone of --clones (vmm/experiment/clones.c), its guest ended, its RAM
 * still mapped: one line to the parent (its status, first useful work,
 * restore latency, handler faults, whether the host is emulated), then it holds its memory until the
 * parent, having measured every clone's, writes or hangs up (poll: the
 * main thread's filter has no read).
 */
static void clone_hold(struct run *r, int status)
{
	struct pollfd p = { .fd = r->cfg->clone_hold_fd, .events = POLLIN };
	unsigned long long faults = 0;
	struct paging_facts pf;
	struct tl_summary s;
	struct run_view v;
	char line[160];
	int n;

	run_view(r, &v);
	run_summary(&v, &s);
	if (r->paging && !paging_facts(r->paging, &pf) && pf.total)
		faults = (unsigned long long)pf.total->faults;
	n = snprintf(
		line, sizeof(line),
		"clone status %d first_useful_work_ms %.3f restore_ms %.3f handler_faults %llu emulated %d\n",
		status, s.ms[SUM_FIRST_USEFUL_WORK], s.ms[SUM_SETUP], faults,
		vm_platform(r->vm)->emulated);
	if (write(p.fd, line, (size_t)n) != n)
		return; /* the parent is gone: nothing to hold for */
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
}

int run_execute(struct run *r)
{
	int status;

	if (!setup(r))
		run_guest(r);
	r->snap.asks = __atomic_load_n(&r->snap_asks, __ATOMIC_ACQUIRE);
	timeline_mark(r->tl, PHASE_VM_EXIT);
	paging_stop(r->paging, r->o.t_exec, timeline_time(r->tl, PHASE_GUEST_ENTRY));
	if (r->cfg->clone_hold_fd >= 0)
		clone_hold(r, vm_exit_status(r->vm));
	kvmstats_close(r->stats);
	vm_teardown(r->vm);
	if (r->lx)
		r->pc_counts = pc_devices_counts(&r->pc);
	status = vm_exit_status(r->vm);
	/* A run whose --record-touch file is lost must not look like a success. */
	return status == EXIT_GUEST_OK && paging_record_error(r->paging) ? EXIT_HOST
									 : status;
}

int run_refuse(struct run *r, enum run_end end, const char *why)
{
	timeline_mark_at(r->tl, PHASE_EXEC, r->o.t_exec, 0);
	setup_fail(r, end, "%s", why);
	timeline_mark(r->tl, PHASE_VM_EXIT);
	return vm_exit_status(r->vm);
}

/* --- what the run measured ------------------------------------------------- */

void run_view(const struct run *r, struct run_view *v)
{
	*v = (struct run_view){ .cfg = &r->cfg->vm,
				.vm = r->vm,
				.eager = r->eager,
				.paging = r->paging,
				.console = r->console,
				.stats = r->stats,
				.tl = r->tl,
				.rec = r->rec,
				.snapshot = r->cfg->snapshot_dir ? &r->snap : NULL,
				.restore = r->restored ? &r->rf : NULL,
				.lx = r->lx,
				.pc = r->lx ? &r->pc_counts : NULL };
}

struct vm *run_vm(struct run *r)
{
	return r->vm;
}

void run_report(struct run *r, int status, int timeline)
{
	struct run_view v;

	run_view(r, &v);
	if (r->o.verbose && eager_in_background(r->eager)) {
		eager_background_report(&v, stdout);
		fflush(stdout);
	}
	ending_print(&v, status, r->o.verbose, timeline);
	/* A kernel that never got a vCPU (no KVM, a failed setup) has no boot to tell of. */
	if (r->lx && !r->cfg->quiet && __atomic_load_n(&r->entered, __ATOMIC_ACQUIRE)) {
		double exec = timeline_time(r->tl, PHASE_EXEC),
		       entry = timeline_time(r->tl, PHASE_GUEST_ENTRY),
		       init = timeline_time(r->tl, PHASE_INIT_START);
		char a[FMT_BYTES], b[FMT_BYTES];

		if (r->restored)
			printf("linux guest %s: restored from %s (its /init had started before the snapshot)\n",
			       r->lx->k.release, r->cfg->restore->dir);
		else if (init > 0)
			printf("linux guest %s: time to init %s (the kernel's boot, guest_entry to init_start: %s)\n",
			       r->lx->k.release, fmt_duration(a, init - exec),
			       fmt_duration(b, init - entry));
		else
			printf("linux guest %s: /init never started (no write of %d to the boot timer, port 0x%x)\n",
			       r->lx->k.release, MVM_BOOT_TIMER_MAGIC,
			       MVM_BOOT_TIMER_PORT);
		for (unsigned i = 0; i < vm_nvcpus(r->vm); i++)
			if (vm_vcpu_stopped_at(r->vm, i))
				printf("  vCPU %u at the timeout: %s\n", i,
				       vm_vcpu_stopped_at(r->vm, i));
		fflush(stdout);
	}
	if (r->o.verbose) {
		if (r->restored && r->rf.mode)
			restore_print(&r->rf, stdout);
		paging_report(&v, stdout);
		numa_report(vm_numa(r->vm), NUMA_AUDIT_AT_EXIT, stdout);
		fflush(stdout);
	}
}

void run_free(struct run *r)
{
	if (!r)
		return;
	free(r->image);
	linux_boot_free(r->lx);
	free(r->lx);
	vm_free(r->vm);
	console_free(r->console);
	eager_free(r->eager);
	paging_free(r->paging);
	timeline_free(r->tl);
	kvmstats_free(r->stats);
	records_free(r->rec);
	run_forget_snapshot(r);
	snap_dir_discard(&r->dir);
	snap_log_free(r->log);
	free(r->extents);
	free(r);
}
