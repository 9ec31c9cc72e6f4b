/* minivmm: set up a VM from the options, run the guest, report what it measured. */
#include "vmm.h"

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
	vm->image_bytes = len;
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
	r = kvm_open(vm, err, sizeof(err));
	if (r)
		return setup_fail(vm, END_HOST_ERROR, "host-error", "KVM: %s", err);
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
	if (load_guest(vm))
		return -1;
	r = mm_memslot_register(vm->vm_fd, &vm->ram);
	if (r)
		return setup_fail(vm, END_HOST_ERROR, "host-error",
				  "KVM: KVM_SET_USER_MEMORY_REGION: %s", strerror(-r));
	if (setup_vcpus(vm))
		return -1;
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

static void teardown(struct vm *vm)
{
	for (unsigned i = 0; vm->vcpus && i < vm->nvcpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	free(vm->vcpus);
	mm_ram_destroy(&vm->ram);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	free(vm->res.sweep);
	free(vm->res.touch);
	free(vm->eager.th);
}

static void report_unclaimed(const char *what, const struct unclaimed *u, FILE *f)
{
	if (u->count)
		fprintf(f, "minivmm: %llu unclaimed %s access%s (first: %s 0x%llx)\n",
			(unsigned long long)u->count, what, u->count == 1 ? "" : "es",
			u->first_write ? "write to" : "read from",
			(unsigned long long)u->first_addr);
}

static void report(struct vm *vm, int status)
{
	const struct config *cfg = vm->cfg;
	int err;

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
		if (vm->t_first_run > 0)
			fprintf(stderr,
				"minivmm: setup %.1f ms (start to first KVM_RUN), guest "
				"%.1f ms "
				"(first KVM_RUN to end)\n",
				(vm->t_first_run - vm->t_start) * MSEC_PER_SEC,
				(vm->t_end - vm->t_first_run) * MSEC_PER_SEC);
	}
	if (cfg->results_path) {
		err = results_write_json(vm, cfg->results_path);
		if (err)
			fprintf(stderr, "minivmm: writing results to %s: %s\n",
				cfg->results_path, strerror(-err));
	}
}

int main(int argc, char **argv)
{
	static struct vm vm = { .kvm_fd = -1, .vm_fd = -1 };
	struct config cfg;
	int status, r;

	vm.t_start = now_s();
	r = options_parse(argc, argv, &cfg);
	if (r)
		return r > 0 ? EXIT_GUEST_OK : EXIT_USAGE;
	vm.cfg = &cfg;
	pthread_mutex_init(&vm.lock, NULL);
	pthread_cond_init(&vm.cond, NULL);
	if (setup(&vm))
		status = exit_status_of(&vm);
	else
		status = vm_run(&vm);
	report(&vm, status);
	teardown(&vm);
	return status;
}
