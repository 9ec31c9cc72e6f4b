/* The VM: its KVM fds, guest RAM and vCPUs, from creation to teardown. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct vm *vm_new(int strict_io, int raw, const struct vm_hooks *hooks)
{
	struct vm *vm = calloc(1, sizeof(*vm));

	if (!vm)
		return NULL;
	*vm = (struct vm){ .kvm_fd = -1,
			   .vm_fd = -1,
			   .ram.fd = -1,
			   .strict_io = strict_io,
			   .raw = raw,
			   .hooks = *hooks };
	io_bus_init(&vm->pio, 0x10000);
	io_bus_init(&vm->mmio, UINT64_MAX);
	pthread_mutex_init(&vm->lock, NULL);
	vm->main_thread = pthread_self();
	return vm;
}

int vm_map_ram(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen)
{
	const struct mm_file_request file = { .path = cfg->mem_path,
					      .reservoir = cfg->reservoir,
					      .grow = cfg->mem_grow,
					      .any_fs = cfg->mem_any_fs };
	int from_file = cfg->mem_path || cfg->reservoir;
	int e = 0;

	/* --numa: the nodes are chosen and checked before anything is mapped. */
	if (cfg->numa)
		e = numa_plan(cfg, cfg->backing->page_bytes, &vm->numa, err, errlen);
	e = e
		    ?: mm_ram_create(&vm->ram,
				     cfg->backing_set || !from_file ? cfg->backing : NULL,
				     cfg->mem_bytes, &file, err, errlen);
	/* ... and bound to them before anything touches it. */
	if (!e && vm->numa)
		e = numa_bind_ram(vm->numa, &vm->ram, err, errlen);
	if (e)
		return e;
	e = mm_memslot_register(vm->vm_fd, &vm->ram);
	if (e)
		snprintf(err, errlen, "KVM: KVM_SET_USER_MEMORY_REGION: %s",
			 strerror(-e));
	return e;
}

void vm_set_entry_flags(struct vm *vm, uint64_t flags)
{
	vm->entry_flags = flags;
}

void vm_set_image(struct vm *vm, const struct mvm_image_header *hdr)
{
	vm->image = *hdr;
}

uint32_t vm_image_abi(const struct vm *vm)
{
	return vm->image.abi_version;
}

void vm_set_pc(struct vm *vm, const struct vm_pc_entry *e)
{
	vm->pc = 1;
	vm->pc_entry = *e;
}

int vm_is_pc(const struct vm *vm)
{
	return vm->pc;
}

int vm_irq_line(struct vm *vm, unsigned irq, int level)
{
	struct kvm_irq_level l = { .irq = irq, .level = level };

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) ? -errno : 0;
}

#define PC_TSS_GPA 0xfffbd000UL /* KVM_SET_TSS_ADDR: 3 pages below the BIOS, above RAM */

/* A PC's platform in the kernel: before any vCPU exists (KVM_CREATE_IRQCHIP's rule). */
static int create_pc(struct vm *vm, char *err, size_t errlen)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	int r = 0;
	const char *what = "KVM_SET_TSS_ADDR";

	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, PC_TSS_GPA))
		r = -errno;
	if (!r && (what = "KVM_CREATE_IRQCHIP", ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0)))
		r = -errno;
	if (!r && (what = "KVM_CREATE_PIT2", ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit)))
		r = -errno;
	if (r)
		snprintf(err, errlen, "KVM: %s (a Linux guest's PC platform): %s", what,
			 strerror(-r));
	return r;
}

/* The host's CPUID for the guest's vCPUs and the spares alike. */
struct cpuid {
	struct kvm_cpuid2 c;
	struct kvm_cpuid_entry2 e[256];
};

#define CPUID_ECX_TSC_DEADLINE (1u << 24)
#define CPUID_ECX_HYPERVISOR   (1u << 31)

/*
 * Of KVM's paravirtual features (leaf 0x40000001 EAX) a PC guest gets the
 * clocks (kvmclock) and not these: async page faults (KVM would let the
 * guest run on while the host backs a page: a fault's cost would hide from
 * the measurement), steal time, PV EOI, PV unhalt (PV spinlocks), PV TLB
 * flush, PV IPIs, poll control, PV sched yield. In the AMD rig, quiet
 * --vcpus 2 boots with them hung before /init 5 times of 6 (vCPU 0 halted
 * in the PV spinlock wait with interrupts off, or spinning with nopvspin;
 * vCPU 1 waiting for an IPI's function call to be answered); without them
 * 3 boots of 3 reached /init.
 */
#define KVM_CPUID_LEAF_FEATURES 0x40000001u
#define KVM_PV_NOT_OFFERED                                                 \
	((1u << 4) /* ASYNC_PF */ | (1u << 5) /* STEAL_TIME */ |           \
	 (1u << 6) /* PV_EOI */ | (1u << 7) /* PV_UNHALT */ |              \
	 (1u << 9) /* PV_TLB_FLUSH */ | (1u << 11) /* PV_SEND_IPI */ |     \
	 (1u << 12) /* POLL_CONTROL */ | (1u << 13) /* PV_SCHED_YIELD */ | \
	 (1u << 14) /* ASYNC_PF_INT */)

/*
 * A PC guest is told it runs on a hypervisor: without the bit Linux ignores
 * KVM's CPUID leaves (no kvmclock) and may hang calibrating its delay loop.
 * The TSC-deadline timer is KVM's to emulate, and user space's to announce.
 */
static void pc_cpuid(struct vm *vm, struct cpuid *cpuid)
{
	int deadline =
		ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_DEADLINE_TIMER) > 0;

	for (unsigned i = 0; i < cpuid->c.nent; i++) {
		if (cpuid->e[i].function == 1)
			cpuid->e[i].ecx |= CPUID_ECX_HYPERVISOR |
					   (deadline ? CPUID_ECX_TSC_DEADLINE : 0);
		if (cpuid->e[i].function == KVM_CPUID_LEAF_FEATURES)
			cpuid->e[i].eax &= ~KVM_PV_NOT_OFFERED;
	}
}

static int supported_cpuid(struct vm *vm, struct cpuid *cpuid, char *err, size_t errlen)
{
	int r;

	cpuid->c.nent = ARRAY_SIZE(cpuid->e);
	if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid)) {
		r = -errno;
		snprintf(err, errlen, "KVM: KVM_GET_SUPPORTED_CPUID: %s", strerror(-r));
		return r;
	}
	return 0;
}

int vm_create_vcpus(struct vm *vm, unsigned nvcpus, char *err, size_t errlen)
{
	struct cpuid cpuid;
	int r = supported_cpuid(vm, &cpuid, err, errlen);

	if (r)
		return r;
	if (vm->pc) {
		r = create_pc(vm, err, errlen);
		if (r)
			return r;
		pc_cpuid(vm, &cpuid);
	}
	vm->vcpus = calloc(nvcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		snprintf(err, errlen, "out of memory for vCPUs");
		return -ENOMEM;
	}
	vm->nvcpus = nvcpus;
	for (unsigned i = 0; i < nvcpus; i++)
		vm->vcpus[i].fd = -1;
	for (unsigned i = 0; i < nvcpus; i++) {
		r = vcpu_create(vm, &vm->vcpus[i], i);
		if (r) {
			snprintf(err, errlen, "KVM: KVM_CREATE_VCPU %u: %s", i,
				 strerror(-r));
			return r;
		}
		r = vm->pc ? vcpu_set_pc_entry(&vm->vcpus[i], &cpuid.c)
			   : vcpu_set_entry(&vm->vcpus[i], &cpuid.c);
		if (r) {
			snprintf(err, errlen, "KVM: setting vCPU %u's entry state: %s", i,
				 strerror(-r));
			return r;
		}
	}
	if (!vm->plat.tsc_khz) {
		long khz = ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ, 0);

		if (khz <= 0) {
			r = khz < 0 ? -errno : -EINVAL;
			snprintf(err, errlen, "KVM: KVM_GET_TSC_KHZ: %s", strerror(-r));
			return r;
		}
		vm->plat.tsc_khz = (uint32_t)khz;
	}
	return 0;
}

int vm_create_spare_vcpus(struct vm *vm, unsigned n, char *err, size_t errlen)
{
	struct cpuid cpuid;
	int r = supported_cpuid(vm, &cpuid, err, errlen);

	if (r)
		return r;
	if (vm->pc)
		pc_cpuid(vm, &cpuid);
	vm->spares = calloc(n, sizeof(*vm->spares));
	if (!vm->spares) {
		snprintf(err, errlen, "out of memory for spare vCPUs");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		vm->spares[i].fd = -1;
	vm->nspares = n;
	for (unsigned i = 0; i < n; i++) {
		struct vcpu *v = &vm->spares[i];

		r = vcpu_create(vm, v, vm->nvcpus + i);
		if (r) {
			snprintf(err, errlen,
				 "KVM: KVM_CREATE_VCPU %u (a spare for prefault): %s",
				 vm->nvcpus + i, strerror(-r));
			return r;
		}
		/* The same CPUID as the guest's vCPUs: the TDP root's level follows MAXPHYADDR. */
		if (ioctl(v->fd, KVM_SET_CPUID2, &cpuid.c)) {
			r = -errno;
			snprintf(err, errlen, "KVM: KVM_SET_CPUID2 on spare vCPU %u: %s",
				 vm->nvcpus + i, strerror(-r));
			return r;
		}
	}
	return 0;
}

void vm_teardown(struct vm *vm)
{
	for (unsigned i = 0; vm->vcpus && i < vm->nvcpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	for (unsigned i = 0; vm->spares && i < vm->nspares; i++)
		vcpu_destroy(&vm->spares[i]);
	/* Without a host-side eager, where the guest's pages ended up. */
	numa_audit(vm->numa, &vm->ram, NUMA_AUDIT_AT_EXIT);
	mm_ram_destroy(&vm->ram);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->vm_fd = vm->kvm_fd = -1;
}

void vm_free(struct vm *vm)
{
	if (!vm)
		return;
	mm_ram_free(&vm->ram);
	numa_free(vm->numa);
	for (unsigned i = 0; vm->vcpus && i < vm->nvcpus; i++)
		free(vm->vcpus[i].saved);
	free(vm->snap.pc);
	free(vm->vcpus);
	free(vm->spares);
	free(vm);
}

const struct platform *vm_platform(const struct vm *vm)
{
	return &vm->plat;
}

struct guest_ram *vm_ram(struct vm *vm)
{
	return &vm->ram;
}

const struct guest_ram *vm_ram_const(const struct vm *vm)
{
	return &vm->ram;
}

struct io_bus *vm_pio(struct vm *vm)
{
	return &vm->pio;
}

const struct io_bus *vm_bus(const struct vm *vm, int mmio)
{
	return mmio ? &vm->mmio : &vm->pio;
}

int vm_fd(const struct vm *vm)
{
	return vm->vm_fd;
}

unsigned vm_nvcpus(const struct vm *vm)
{
	return vm->nvcpus;
}

int vm_vcpu_fd(const struct vm *vm, unsigned i)
{
	return i < vm->nvcpus ? vm->vcpus[i].fd : -1;
}

const char *vm_vcpu_stopped_at(const struct vm *vm, unsigned i)
{
	return i < vm->nvcpus && vm->vcpus[i].stopped_at[0] ? vm->vcpus[i].stopped_at
							    : NULL;
}

int vm_vcpu_span(const struct vm *vm, unsigned i, double *t_run, double *t_done)
{
	if (i >= vm->nvcpus || !vm->vcpus[i].started)
		return 0;
	*t_run = vm->vcpus[i].t_run;
	*t_done = vm->vcpus[i].t_done;
	return 1;
}
