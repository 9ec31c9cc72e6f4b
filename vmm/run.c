/* One measured run: wires the VM, its devices and the subsystems, from setup to teardown. */
#include "vmm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- the devices' host: what the hypercall port asks of the VMM ------------ */

static void hc_exit(void *cookie, unsigned vcpu, int32_t status)
{
	struct run *r = cookie;

	vm_finish(&r->vm, END_GUEST_EXIT, status, "guest exited with status %d (vCPU %u)",
		  status, vcpu);
}

static void hc_abort(void *cookie, unsigned vcpu, const char *what)
{
	struct run *r = cookie;

	vm_finish(&r->vm, END_GUEST_ABORT, 0, "guest aborted on vCPU %u: %s", vcpu, what);
}

static void hc_violation(void *cookie, unsigned vcpu, const char *what)
{
	struct run *r = cookie;

	vm_finish(&r->vm, END_ABI_VIOLATION, 0, "guest ABI violation on vCPU %u: %s",
		  vcpu, what);
}

/* A batch of records (one per measurement): kept, with its counters, and its rows printed. */
static int hc_records(void *cookie, uint32_t kind, const void *recs, uint32_t n)
{
	struct run *r = cookie;
	int e;

	if (kind == MVM_REC_SWEEP) {
		/* KVM's counters since the previous batch: what this measurement cost. */
		uint64_t now[kvmstats_count(r->stats) + 1];
		const uint64_t *kvm = kvmstats_since(r->stats, now) ? NULL : now;

		e = results_add_sweep(r->res, recs, n, kvm, kvmstats_count(r->stats),
				      r->tables ? stdout : NULL);
	} else {
		e = results_add_touch(r->res, recs, n);
		if (!e && r->verbose)
			report_touch(r->res, stdout);
	}
	if (e)
		vm_finish(&r->vm, END_HOST_ERROR, 0, "results: storing %u records: %s", n,
			  strerror(-e));
	return e;
}

static void hc_mark(void *cookie, unsigned vcpu, uint32_t mark, uint64_t tsc)
{
	struct run *r = cookie;

	timeline_guest_mark(r->tl, mark, tsc);
}

/* --- the VM's hooks, on each vCPU thread ----------------------------------- */

static void enter_sandbox(struct run *r, enum sandbox_role role, int vcpu_fd,
			  const char *who)
{
	int out[ARRAY_SIZE(r->out->fds) + 2], e;
	struct sandbox_fds f = { .vcpu_fd = vcpu_fd, .out_fds = out, .nout = r->out->n };

	/* The main thread also writes the paging handlers' stop eventfd and the touch record. */
	memcpy(out, r->out->fds, sizeof(r->out->fds));
	if (role == SANDBOX_MAIN)
		f.nout += paging_main_fds(r->paging, out + r->out->n, 2);
	f.stats_fds = kvmstats_fds(r->stats, &f.nstats);
	e = sandbox_enter(role, &f);
	if (e)
		vm_finish(&r->vm, END_HOST_ERROR, 0, "sandbox: seccomp filter for %s: %s",
			  who, strerror(-e));
}

static void vcpu_enter(void *cookie, struct vcpu *v)
{
	struct run *r = cookie;
	char who[32];

	eager_vcpu_gate(r->eager, &r->vm, v);
	/* The first vCPU to get here marks the guest's entry: another may end the run early. */
	if (!__atomic_exchange_n(&r->entered, 1, __ATOMIC_ACQ_REL) &&
	    !vm_stopping(&r->vm))
		timeline_guest_entry(r->tl, v->fd);
	if (r->sandbox && !vm_stopping(&r->vm)) {
		snprintf(who, sizeof(who), "vCPU %u", v->index);
		enter_sandbox(r, SANDBOX_VCPU, v->fd, who);
	}
}

static void vcpu_leave(void *cookie, struct vcpu *v)
{
	struct run *r = cookie;

	console_flush(r->console, v->index);
}

/* --- setup ----------------------------------------------------------------- */

/* Setup failed: record why (the results file still says so) and stop. */
static int setup_fail(struct run *r, enum run_end end, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int setup_fail(struct run *r, enum run_end end, const char *fmt, ...)
{
	va_list ap;

	r->vm.end = end;
	va_start(ap, fmt);
	vsnprintf(r->vm.message, sizeof(r->vm.message), fmt, ap);
	va_end(ap);
	return -1;
}

int run_init(struct run *r, const struct config *cfg, const struct run_opts *o)
{
	*r = (struct run){ .cfg = cfg,
			   .t_exec = o->t_exec,
			   .tables = o->tables,
			   .verbose = o->verbose,
			   .sandbox = !cfg->no_sandbox,
			   .sandbox_main = o->sandbox_main,
			   .out = o->out,
			   .env = o->env };
	vm_init(&r->vm);
	r->vm.strict_io = cfg->strict_io;
	r->vm.raw = cfg->raw;
	r->vm.hooks = (struct vm_hooks){ r, vcpu_enter, vcpu_leave };
	r->console = console_create(cfg->vcpus, stdout, !r->verbose);
	r->tl = timeline_create(NULL, 0);
	r->res = results_create();
	if (!r->console || !r->tl || !r->res)
		return -ENOMEM;
	r->hc = (struct dev_host){ .cookie = r,
				   .ram = &r->vm.ram,
				   .console = r->console,
				   .exit = hc_exit,
				   .abort = hc_abort,
				   .violation = hc_violation,
				   .records = hc_records,
				   .mark = hc_mark };
	return 0;
}

int run_register_devices(struct run *r)
{
	int e = hypercalls_register(&r->hc, &r->vm.pio);

	e = e ?: console_register(r->console, &r->vm.pio);
	return e ?: exitport_register(&r->hc, &r->vm.pio);
}

static int check_guest_args(struct run *r)
{
	const struct config *cfg = r->cfg;
	size_t total = 0;

	for (int i = 0; i < cfg->guest_argc; i++)
		total += strlen(cfg->guest_argv[i]) + 1;
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
	const char *path = r->cfg->guest_path;
	char err[256];
	int e = loader_read(path, &r->image, &r->image_len, err, sizeof(err));

	if (e)
		return setup_fail(r, END_USAGE, "%s", err);
	if (r->cfg->raw)
		e = loader_raw(r->image_len, r->cfg->mem_bytes, r->cfg->vcpus,
			       &r->vm.image, err, sizeof(err));
	else
		e = loader_check(r->image, r->image_len, r->cfg->mem_bytes, r->cfg->vcpus,
				 &r->vm.image, err, sizeof(err));
	if (e)
		return setup_fail(r, e == -ENOEXEC ? END_NOT_A_GUEST : END_USAGE,
				  "%s: %s", path, err);
	return 0;
}

/*
 * Put the image, the boot info and the entry page tables into guest RAM:
 * after eager population, so that eager finds RAM untouched and what it
 * reports is what it made resident.
 */
static void place_guest(struct run *r)
{
	const struct config *cfg = r->cfg;
	struct vm *vm = &r->vm;
	struct bootinfo bi = { .mem_bytes = cfg->mem_bytes,
			       .vcpus = vm->nvcpus,
			       .tsc_khz = vm->plat.tsc_khz,
			       .eager_touch = eager_strategy(r->eager) == EAGER_TOUCH,
			       .tdp = vm->plat.tdp,
			       .argc = cfg->guest_argc,
			       .argv = cfg->guest_argv };
	char err[256];

	memcpy(mm_gpa_to_hva(&vm->ram, MVM_LOAD_GPA, r->image_len), r->image,
	       r->image_len);
	/* check_guest_args() bounded the arguments: the FDT fits its area. */
	if (bootinfo_build(mm_gpa_to_hva(&vm->ram, MVM_BOOTINFO_GPA, MVM_BOOTINFO_MAX),
			   MVM_BOOTINFO_MAX, &bi, err, sizeof(err)))
		vm_finish(vm, END_USAGE, 0, "boot info: %s", err);
	loader_entry_tables(&vm->ram);
	timeline_mark(r->tl, "guest_loaded");
}

static int plan_paging(struct run *r)
{
	char err[sizeof(r->vm.message)];
	int e = paging_plan(r->cfg, r->tl, &r->paging, err, sizeof(err));

	return e ? setup_fail(r, e == -EINVAL ? END_USAGE : END_HOST_ERROR, "%s", err)
		 : 0;
}

static int setup(struct run *r)
{
	const struct config *cfg = r->cfg;
	struct vm *vm = &r->vm;
	char err[256];
	int e;

	timeline_mark_at(r->tl, "exec", r->t_exec, 0);
	if (check_guest_args(r) || read_guest(r))
		return -1;
	timeline_mark(r->tl, "image_read");
	/* Before KVM: a process that may not use userfaultfd learns it first. */
	if (plan_paging(r))
		return -1;
	if (cfg->no_sandbox)
		fprintf(stderr,
			"minivmm: WARNING: --no-sandbox: no seccomp filters; a guest that subverts this process can make any system call\n");
	if (kvm_open(vm, err, sizeof(err)))
		return setup_fail(r, END_HOST_ERROR, "KVM: %s", err);
	timeline_mark(r->tl, "kvm_open");
	if (kvm_create_vm(vm, err, sizeof(err)))
		return setup_fail(r, END_HOST_ERROR, "KVM: %s", err);
	timeline_mark(r->tl, "vm_created");
	platform_detect(vm);
	if (r->verbose)
		platform_print(&vm->plat, stdout);
	if (cfg->vcpus > (unsigned)vm->plat.max_vcpus)
		return setup_fail(
			r, END_USAGE,
			"--vcpus %u: this KVM supports at most %d (KVM_CAP_MAX_VCPUS)",
			cfg->vcpus, vm->plat.max_vcpus);
	if (mm_ram_create(&vm->ram, cfg->backing, cfg->mem_bytes, err, sizeof(err)))
		return setup_fail(r, END_HOST_ERROR, "guest RAM: %s", err);
	e = mm_memslot_register(vm->vm_fd, &vm->ram);
	if (e)
		return setup_fail(r, END_HOST_ERROR,
				  "KVM: KVM_SET_USER_MEMORY_REGION: %s", strerror(-e));
	timeline_mark(r->tl, "ram_mapped");
	if (vm_create_vcpus(vm, cfg->vcpus, err, sizeof(err)))
		return setup_fail(r, END_HOST_ERROR, "%s", err);
	e = kvmstats_open(vm, &r->stats);
	if (e && e != -EOPNOTSUPP && r->verbose)
		fprintf(stderr, "minivmm: KVM statistics unavailable: %s\n",
			strerror(-e));
	timeline_attach(r->tl, r->stats, vm->plat.tsc_khz);
	results_set_tsc_khz(r->res,
			    vm->plat.tsc_khz); /* records are in guest TSC cycles */
	timeline_mark(r->tl, "vcpus_created");
	/* Before anything is populated: refuse what cannot be backed. */
	if (eager_plan(cfg, vm, &r->eager, err, sizeof(err)))
		return setup_fail(r, END_HOST_ERROR, "%s", err);
	e = run_register_devices(r);
	if (e)
		return setup_fail(r, END_HOST_ERROR, "devices: %s", strerror(-e));
	return 0;
}

/* --- running --------------------------------------------------------------- */

/*
 * Eager population first (dedicated threads, or the vCPU threads' own
 * slices while the main thread waits), then the guest is placed in RAM and
 * runs until its end. Phases are marked in the order they happen: eager
 * ends before the guest is placed, which is before any vCPU may enter.
 */
static void eager_done(struct run *r)
{
	if (eager_end_time(r->eager) <= 0)
		return;
	timeline_mark_at(r->tl, "eager_done", eager_end_time(r->eager), 0);
	if (r->verbose) {
		eager_report(r->eager, r->cfg, stdout);
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
	env_complete(r->env);
	/* Every thread exists now: the main thread's filter allows no more. */
	if (r->sandbox && r->sandbox_main)
		enter_sandbox(r, SANDBOX_MAIN, -1, "the main thread");
}

static void start_paging(struct run *r)
{
	char err[512];

	if (paging_start(r->paging, &r->vm, r->sandbox, err, sizeof(err)))
		vm_finish(&r->vm, END_HOST_ERROR, 0, "%s", err);
}

static void run_guest(struct run *r)
{
	struct vm *vm = &r->vm;
	struct eager *e = r->eager;
	double deadline = r->cfg->timeout_s > 0 ? now_s() + r->cfg->timeout_s : 0;
	sigset_t old;

	vm_signals_block(vm, &old);
	eager_begin(e, vm);
	if (eager_on_vcpu_threads(e)) {
		/* Each populates its slice once all exist, then waits for eager_go. */
		vm_start_vcpus(vm);
		main_thread_ready(r);
		eager_release(e);
		eager_wait(e, vm);
		eager_done(r);
		if (!vm_stopping(vm))
			place_guest(r);
		eager_go(e);
	} else {
		if (eager_host_side(e))
			eager_run_dedicated(e, vm);
		eager_done(r);
		if (!vm_stopping(vm))
			place_guest(r);
		/* --paging uffd (never with host-side eager): what was placed stays present. */
		if (!vm_stopping(vm))
			start_paging(r);
		if (!vm_stopping(vm))
			vm_start_vcpus(vm);
		/* The guest runs: the record's files cost nothing on the way to it. */
		main_thread_ready(r);
	}
	vm_run_to_end(vm, deadline, r->cfg->timeout_s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int run_execute(struct run *r)
{
	int status;

	if (!setup(r))
		run_guest(r);
	timeline_mark(r->tl, "vm_exit");
	paging_stop(r->paging, r->t_exec);
	kvmstats_close(r->stats);
	vm_teardown(&r->vm);
	status = vm_exit_status(&r->vm);
	/* A run whose --record-touch file is lost must not look like a success. */
	return status == EXIT_GUEST_OK && paging_record_error(r->paging) ? EXIT_HOST
									 : status;
}

/* --- what the run measured ------------------------------------------------- */

void run_summary(const struct run *r, struct tl_summary *s)
{
	double eager_ms =
		eager_host_side(r->eager) ? eager_seconds(r->eager) * MSEC_PER_SEC : -1;
	size_t n;
	const struct mvm_rec_touch *t = results_touch(r->res, &n);

	if (eager_strategy(r->eager) == EAGER_TOUCH && n)
		eager_ms = results_seconds(r->res, t[n - 1].cycles) * MSEC_PER_SEC;
	timeline_summary(r->tl, eager_ms, s);
	s->eager_in_guest = eager_strategy(r->eager) == EAGER_TOUCH;
}

static void report_unclaimed(const char *what, const struct io_bus *bus, FILE *f)
{
	struct io_unclaimed u = io_bus_unclaimed_counts(bus);

	if (u.count)
		fprintf(f, "minivmm: %llu unclaimed %s access%s (first: %s 0x%llx)\n",
			(unsigned long long)u.count, what, u.count == 1 ? "" : "es",
			u.first_write ? "write to" : "read from",
			(unsigned long long)u.first_addr);
}

void run_report(struct run *r, int status, int timeline)
{
	uint64_t dropped = console_counts(r->console).dropped;

	fflush(stdout);
	if (status != EXIT_GUEST_OK && !r->verbose) {
		/* Quiet, and the guest failed: what it said last is how the user learns why. */
		char tail[1024];
		size_t n = console_tail(r->console, tail, sizeof(tail));
		const char *from = memchr(tail, '\n', n);

		from = from && n == sizeof(tail) ? from + 1 : tail;
		if (n)
			fprintf(stderr,
				"minivmm: the guest's last console output:\n%.*s%s",
				(int)(n - (size_t)(from - tail)), from,
				tail[n - 1] == '\n' ? "" : "\n");
	}
	if (status != EXIT_GUEST_OK || r->verbose)
		fprintf(stderr, "minivmm: %s\n", r->vm.message);
	if (r->verbose) {
		report_unclaimed("port I/O", &r->vm.pio, stderr);
		report_unclaimed("MMIO", &r->vm.mmio, stderr);
		if (dropped)
			fprintf(stderr,
				"minivmm: dropped %llu bytes of guest console output past the %llu MiB limit\n",
				(unsigned long long)dropped, CONSOLE_LIMIT_BYTES >> 20);
	}
	if (timeline && r->verbose && timeline_time(r->tl, "guest_entry") > 0) {
		struct tl_summary s;

		run_summary(r, &s);
		timeline_print(r->tl, &s, stdout);
		fflush(stdout);
	}
	if (r->verbose) {
		paging_report(r->paging, stdout);
		fflush(stdout);
	}
}

void run_free(struct run *r)
{
	free(r->image);
	r->image = NULL;
	vm_free(&r->vm);
	console_free(r->console);
	eager_free(r->eager);
	paging_free(r->paging);
	timeline_free(r->tl);
	kvmstats_free(r->stats);
	results_free(r->res);
	r->console = NULL;
	r->eager = NULL;
	r->paging = NULL;
	r->tl = NULL;
	r->stats = NULL;
	r->res = NULL;
}
