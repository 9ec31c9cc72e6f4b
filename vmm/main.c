/* minivmm: set up a VM from the options, run the guest, report what it measured. */
#include "vmm.h"

#include <dirent.h>
#include <errno.h>
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Setup failed: record why (the results file still says so) and stop. */
static int setup_fail(struct vm *vm, enum run_end end, const char *reason,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int setup_fail(struct vm *vm, enum run_end end, const char *reason,
		      const char *fmt, ...)
{
	va_list ap;

	vm->end = end;
	vm->reason = reason;
	va_start(ap, fmt);
	vsnprintf(vm->message, sizeof(vm->message), fmt, ap);
	va_end(ap);
	return -1;
}

static int check_guest_args(struct vm *vm, const struct config *cfg)
{
	size_t total = 0;

	for (int i = 0; i < cfg->guest_argc; i++)
		total += strlen(cfg->guest_argv[i]) + 1;
	if (cfg->guest_argc > MVM_MAX_GUEST_ARGS || total > MVM_GUEST_ARGS_BYTES)
		return setup_fail(
			vm, END_USAGE, "usage",
			"guest arguments: %d arguments, %zu bytes (limit %d and %d)",
			cfg->guest_argc, total, MVM_MAX_GUEST_ARGS, MVM_GUEST_ARGS_BYTES);
	return 0;
}

static int load_guest(struct vm *vm)
{
	char err[256];
	uint8_t *img;
	uint64_t len;
	int r = loader_read(vm->cfg->guest_path, &img, &len, err, sizeof(err));

	if (r)
		return setup_fail(vm, END_USAGE, "usage", "%s", err);
	r = loader_check(img, len, vm->cfg->mem_bytes, vm->cfg->vcpus, &vm->image, err,
			 sizeof(err));
	if (r) {
		free(img);
		return setup_fail(vm, r == EXIT_USAGE ? END_USAGE : END_GUEST_CRASH,
				  r == EXIT_USAGE ? "usage" : "not-a-guest", "%s: %s",
				  vm->cfg->guest_path, err);
	}
	memcpy(mm_gpa_to_hva(&vm->ram, MVM_LOAD_GPA, len), img, len);
	free(img);
	return 0;
}

static int setup_vcpus(struct vm *vm)
{
	struct {
		struct kvm_cpuid2 c;
		struct kvm_cpuid_entry2 e[256];
	} cpuid = { .c.nent = 256 };
	int r;

	if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, &cpuid))
		return setup_fail(vm, END_HOST_ERROR, "host-error",
				  "KVM: KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
	vm->vcpus = calloc(vm->nvcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return setup_fail(vm, END_HOST_ERROR, "host-error",
				  "out of memory for vCPUs");
	for (unsigned i = 0; i < vm->nvcpus; i++)
		vm->vcpus[i].fd = -1;
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		r = vcpu_create(vm, &vm->vcpus[i], i);
		if (r)
			return setup_fail(vm, END_HOST_ERROR, "host-error",
					  "KVM: KVM_CREATE_VCPU %u: %s", i, strerror(-r));
		r = vcpu_set_entry(&vm->vcpus[i], &cpuid.c);
		if (r)
			return setup_fail(vm, END_HOST_ERROR, "host-error",
					  "KVM: setting vCPU %u's entry state: %s", i,
					  strerror(-r));
	}
	if (!vm->plat.tsc_khz) {
		long khz = ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ, 0);

		if (khz <= 0)
			return setup_fail(vm, END_HOST_ERROR, "host-error",
					  "KVM: KVM_GET_TSC_KHZ: %s", strerror(errno));
		vm->plat.tsc_khz = (uint32_t)khz;
	}
	return 0;
}

static int setup(struct vm *vm)
{
	const struct config *cfg = vm->cfg;
	char err[256];
	int r;

	if (check_guest_args(vm, cfg))
		return -1;
	if (cfg->no_sandbox)
		fprintf(stderr, "minivmm: WARNING: --no-sandbox: no seccomp filters; a "
				"guest that "
				"subverts this process can make any system call\n");
	timeline_mark_at(vm, "exec", vm->t_start, 0);
	r = kvm_open(vm, err, sizeof(err));
	if (r)
		return setup_fail(vm, END_HOST_ERROR, "host-error", "KVM: %s", err);
	timeline_mark(vm, "kvm_open");
	r = kvm_create_vm(vm, err, sizeof(err));
	if (r)
		return setup_fail(vm, END_HOST_ERROR, "host-error", "KVM: %s", err);
	timeline_mark(vm, "vm_created");
	platform_detect(vm);
	if (!cfg->quiet)
		platform_print(vm, stdout);
	if (cfg->vcpus > (unsigned)vm->plat.max_vcpus)
		return setup_fail(
			vm, END_USAGE, "usage",
			"--vcpus %u: this KVM supports at most %d (KVM_CAP_MAX_VCPUS)",
			cfg->vcpus, vm->plat.max_vcpus);
	vm->nvcpus = cfg->vcpus;
	r = mm_ram_create(&vm->ram, cfg->backing, cfg->mem_bytes, err, sizeof(err));
	if (r)
		return setup_fail(vm, END_HOST_ERROR, "host-error", "guest RAM: %s", err);
	r = mm_memslot_register(vm->vm_fd, &vm->ram);
	if (r)
		return setup_fail(vm, END_HOST_ERROR, "host-error",
				  "KVM: KVM_SET_USER_MEMORY_REGION: %s", strerror(-r));
	timeline_mark(vm, "ram_mapped");
	if (load_guest(vm))
		return -1;
	timeline_mark(vm, "guest_loaded");
	if (setup_vcpus(vm))
		return -1;
	r = stats_open(vm);
	if (r && r != -EOPNOTSUPP && !cfg->quiet)
		fprintf(stderr, "minivmm: KVM statistics unavailable: %s\n",
			strerror(-r));
	timeline_mark(vm, "vcpus_created");
	/* Before anything is populated: refuse what cannot be backed. */
	if (eager_plan(vm, err, sizeof(err)))
		return setup_fail(vm, END_HOST_ERROR, "host-error", "%s", err);
	r = bootinfo_build(mm_gpa_to_hva(&vm->ram, MVM_BOOTINFO_GPA, MVM_BOOTINFO_MAX),
			   MVM_BOOTINFO_MAX, cfg->mem_bytes, vm->nvcpus, vm->plat.tsc_khz,
			   vm->eager.strategy == EAGER_TOUCH, cfg->guest_argc,
			   cfg->guest_argv);
	if (r)
		return setup_fail(vm, END_USAGE, "usage", "boot info: %s",
				  fdt_strerror(r));
	loader_entry_tables(&vm->ram);
	r = devices_register_all(&vm->pio);
	if (r)
		return setup_fail(vm, END_HOST_ERROR, "host-error", "devices: %s",
				  strerror(-r));
	return 0;
}

/* Give back the kernel's resources: vCPUs, guest RAM, fds. Results stay. */
static void teardown(struct vm *vm)
{
	stats_close(vm);
	for (unsigned i = 0; vm->vcpus && i < vm->nvcpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	mm_ram_destroy(&vm->ram);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->vm_fd = vm->kvm_fd = -1;
}

/* Free what the run gathered, after it was printed and written. */
static void free_results(struct vm *vm)
{
	free(vm->vcpus);
	free(vm->res.sweep);
	free(vm->res.touch);
	free(vm->eager.th);
	timeline_free(vm);
	stats_free(vm);
	vm->vcpus = NULL;
	vm->res.sweep = NULL;
	vm->res.touch = NULL;
	vm->eager.th = NULL;
}

static void report_unclaimed(const char *what, const struct unclaimed *u, FILE *f)
{
	if (u->count)
		fprintf(f, "minivmm: %llu unclaimed %s access%s (first: %s 0x%llx)\n",
			(unsigned long long)u->count, what, u->count == 1 ? "" : "es",
			u->first_write ? "write to" : "read from",
			(unsigned long long)u->first_addr);
}

/* What ended the run, devices nobody claimed, the timeline. */
static void report(struct vm *vm, int status, int timeline)
{
	const struct config *cfg = vm->cfg;

	fflush(stdout);
	if (status != EXIT_GUEST_OK || !cfg->quiet)
		fprintf(stderr, "minivmm: %s\n", vm->message);
	if (!cfg->quiet) {
		report_unclaimed("port I/O", &vm->pio_unclaimed, stderr);
		report_unclaimed("MMIO", &vm->mmio_unclaimed, stderr);
		if (vm->console_dropped)
			fprintf(stderr,
				"minivmm: dropped %llu bytes of guest console output "
				"past the %llu MiB limit\n",
				(unsigned long long)vm->console_dropped,
				CONSOLE_LIMIT_BYTES >> 20);
	}
	if (timeline && !cfg->quiet && timeline_time(vm, "guest_entry") > 0) {
		timeline_print(vm, stdout);
		fflush(stdout);
	}
}

static void write_err(const char *what, const char *path, int err)
{
	if (err)
		fprintf(stderr, "minivmm: writing %s to %s: %s\n", what, path,
			strerror(-err));
}

/* Output files are opened before anything runs: the sandbox allows no open(2) later. */
struct outputs {
	FILE *results, *trace;
	int fds[2], n;
};

static int open_outputs(const struct config *cfg, struct outputs *o)
{
	*o = (struct outputs){ 0 };
	if (cfg->results_path && !(o->results = fopen(cfg->results_path, "we"))) {
		fprintf(stderr, "minivmm: --results %s: %s\n", cfg->results_path,
			strerror(errno));
		return -1;
	}
	if (cfg->trace_path && !(o->trace = fopen(cfg->trace_path, "we"))) {
		fprintf(stderr, "minivmm: --trace %s: %s\n", cfg->trace_path,
			strerror(errno));
		if (o->results)
			fclose(o->results);
		return -1;
	}
	/* Buffers now: stdio's first write would fstat and isatty (an ioctl) under the filter. */
	if (o->results) {
		setvbuf(o->results, NULL, _IOFBF, BUFSIZ);
		o->fds[o->n++] = fileno(o->results);
	}
	if (o->trace) {
		setvbuf(o->trace, NULL, _IOFBF, BUFSIZ);
		o->fds[o->n++] = fileno(o->trace);
	}
	return 0;
}

static void close_outputs(struct outputs *o)
{
	if (o->results)
		fclose(o->results);
	if (o->trace)
		fclose(o->trace);
}

/*
 * One VM from options to exit; its "exec" is t_start. sandbox_main: this is
 * the process's last run, so the main thread's filter can go on too. The vm
 * is the caller's to tear down.
 */
static int run_once(struct vm *vm, const struct config *cfg, double t_start,
		    const struct outputs *o, int sandbox_main)
{
	int status;

	*vm = (struct vm){ .kvm_fd = -1,
			   .vm_fd = -1,
			   .cfg = cfg,
			   .t_start = t_start,
			   .sandbox = !cfg->no_sandbox,
			   .sandbox_main = sandbox_main,
			   .nout = o->n };
	memcpy(vm->out_fds, o->fds, sizeof(o->fds));
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->cond, NULL);
	if (setup(vm))
		status = exit_status_of(vm);
	else
		status = vm_run(vm);
	timeline_mark(vm, "vm_exit");
	return status;
}

static int single(const struct config *cfg)
{
	static struct vm vm;
	const struct vm *vms[] = { &vm };
	const char *labels[] = { "minivmm" };
	struct outputs o;
	int status;

	if (open_outputs(cfg, &o))
		return EXIT_USAGE;
	status = run_once(&vm, cfg, cfg->t_exec, &o, 1);
	report(&vm, status, 1);
	if (o.results)
		write_err("results", cfg->results_path,
			  results_write_json(&vm, o.results));
	if (o.trace)
		write_err("trace", cfg->trace_path, trace_write(o.trace, vms, labels, 1));
	teardown(&vm);
	free_results(&vm);
	close_outputs(&o);
	return status;
}

/*
 * Open fds and threads of this process: --compare checks that nothing leaks
 * between runs. The two /proc directories are opened once, before any
 * sandbox, and re-read (getdents64) each time.
 */
struct proc_dirs {
	DIR *fd, *task;
};

static int count_entries(DIR *d)
{
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	rewinddir(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	return n;
}

static void count_resources(const struct proc_dirs *p, struct resources *r)
{
	r->fds = count_entries(p->fd);
	r->threads = count_entries(p->task);
}

/*
 * --compare: the same guest and arguments lazily, then eagerly, each in a
 * fresh VM whose kernel resources are released before the next starts. The
 * status is the first non-zero one.
 */
static int compare(const struct config *cfg)
{
	static struct vm lazy, eager;
	struct config lazy_cfg = *cfg;
	const struct vm *vms[] = { &lazy, &eager };
	const char *labels[] = { "lazy", "eager" };
	int status, status2 = -1;
	struct resources first;
	struct proc_dirs p;
	struct outputs o;

	if (open_outputs(cfg, &o))
		return EXIT_USAGE;
	p.fd = opendir("/proc/self/fd");
	p.task = opendir("/proc/self/task");
	count_resources(&p, &first);
	lazy_cfg.eager = EAGER_NONE;
	lazy_cfg.eager_threads = 0;
	if (!cfg->quiet)
		printf("== run 1 of 2: lazy\n");
	status = run_once(&lazy, &lazy_cfg, cfg->t_exec, &o, 0);
	lazy.res_before = first;
	report(&lazy, status, 0);
	teardown(&lazy);
	if (status == EXIT_GUEST_OK) {
		struct resources before;

		count_resources(&p, &before);
		if (!cfg->quiet)
			printf("\n== run 2 of 2: eager (--eager=%s)\n",
			       eager_strategy_name(cfg->eager));
		status2 = run_once(&eager, cfg, now_s(), &o, 1);
		eager.res_before = before;
		report(&eager, status2, 0);
		teardown(&eager);
		count_resources(&p, &eager.res_after);
		if (status2 == EXIT_GUEST_OK)
			compare_print(&lazy, &eager, stdout);
		status = status2;
	}
	lazy.res_after = eager.res_before;
	if (o.results)
		write_err("results", cfg->results_path,
			  compare_write_json(&lazy, &eager, o.results));
	if (o.trace)
		write_err("trace", cfg->trace_path,
			  trace_write(o.trace, vms, labels, status2 >= 0 ? 2 : 1));
	free_results(&lazy);
	free_results(&eager);
	close_outputs(&o);
	if (p.fd)
		closedir(p.fd);
	if (p.task)
		closedir(p.task);
	return status;
}

int main(int argc, char **argv)
{
	struct config cfg;
	double t_exec = now_s();
	int r = options_parse(argc, argv, &cfg);

	if (r)
		return r > 0 ? EXIT_GUEST_OK : EXIT_USAGE;
	cfg.t_exec = t_exec;
	/*
	 * Give stdout its buffer before any thread is sandboxed: glibc would
	 * otherwise probe the stream on its first write (fstat, then isatty's
	 * ioctl on a character device such as /dev/null or a terminal), which
	 * the vCPU threads' filter forbids. Same buffering glibc would choose.
	 */
	setvbuf(stdout, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	return cfg.compare ? compare(&cfg) : single(&cfg);
}
