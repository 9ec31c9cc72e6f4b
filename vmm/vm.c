/* The VM: its KVM fds, guest RAM and vCPUs, from creation to teardown. */
#include "vmm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

void vm_init(struct vm *vm)
{
	*vm = (struct vm){ .kvm_fd = -1, .vm_fd = -1, .ram.fd = -1 };
	io_bus_init(&vm->pio, 0x10000);
	io_bus_init(&vm->mmio, UINT64_MAX);
	pthread_mutex_init(&vm->lock, NULL);
	vm->main_thread = pthread_self();
}

int vm_create_vcpus(struct vm *vm, unsigned nvcpus, char *err, size_t errlen)
{
	struct {
		struct kvm_cpuid2 c;
		struct kvm_cpuid_entry2 e[256];
	} cpuid = { .c.nent = 256 };
	int r;

	if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, &cpuid)) {
		r = -errno;
		snprintf(err, errlen, "KVM: KVM_GET_SUPPORTED_CPUID: %s", strerror(-r));
		return r;
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
		r = vcpu_set_entry(&vm->vcpus[i], &cpuid.c);
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

void vm_teardown(struct vm *vm)
{
	for (unsigned i = 0; vm->vcpus && i < vm->nvcpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	mm_ram_destroy(&vm->ram);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->vm_fd = vm->kvm_fd = -1;
}

void vm_free(struct vm *vm)
{
	mm_ram_free(&vm->ram);
	free(vm->vcpus);
	vm->vcpus = NULL;
	vm->nvcpus = 0;
}
