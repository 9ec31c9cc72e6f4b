/* /dev/kvm: open it, check the API, and find out what kind of KVM it is. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm_compat.h"

void kvm_open_failed(int e, char *err, size_t errlen)
{
	struct kvm_facts f;

	kvm_facts_read(e, &f);
	kvm_absence_explain(&f, err, errlen);
}

int kvm_open(struct vm *vm, char *err, size_t errlen)
{
	int v;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		int e = errno;

		kvm_open_failed(e, err, errlen);
		return -e;
	}
	v = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (v != KVM_API_VERSION) {
		snprintf(err, errlen, "KVM_GET_API_VERSION is %d, expected %d", v,
			 KVM_API_VERSION);
		return -EPROTO;
	}
	return 0;
}

int kvm_create_vm(struct vm *vm, char *err, size_t errlen)
{
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		int e = errno;

		snprintf(err, errlen, "KVM_CREATE_VM: %s", strerror(e));
		return -e;
	}
	return 0;
}

/* 1 when the module parameter file reads Y/y/1, 0 when N/n/0, -1 when absent. */
static int module_param(const char *path)
{
	char buf[8] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	return buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1';
}

/*
 * Which backend serves /dev/kvm, from the loaded modules: kvm_pvm uses
 * shadow paging; kvm_intel and kvm_amd use EPT/NPT unless their ept/npt
 * parameter is off.
 */
void platform_kind(struct platform *p)
{
	if (access("/sys/module/kvm_pvm", F_OK) == 0) {
		strcpy(p->kvm, "pvm");
		p->tdp = 0;
	} else if (access("/sys/module/kvm_intel", F_OK) == 0) {
		strcpy(p->kvm, "vmx");
		p->tdp = module_param("/sys/module/kvm_intel/parameters/ept") == 1;
	} else if (access("/sys/module/kvm_amd", F_OK) == 0) {
		strcpy(p->kvm, "svm");
		p->tdp = module_param("/sys/module/kvm_amd/parameters/npt") == 1;
	} else {
		strcpy(p->kvm, "unknown");
		p->tdp = module_param("/sys/module/kvm/parameters/tdp_mmu") == 1;
	}
}

/*
 * Whether this host is itself an emulated machine, whose clocks count
 * emulated time: scripts/emu-host says so (MINIVMM_EMULATED=1), and QEMU's
 * TCG names its CPU "QEMU TCG CPU" (read from /proc/cpuinfo, not guessed).
 */
static int host_emulated(void)
{
	const char *env = getenv("MINIVMM_EMULATED");
	char buf[4096];
	ssize_t n;
	int fd;

	if (env && !strcmp(env, "1"))
		return 1;
	fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "QEMU TCG CPU") != NULL;
}

void platform_detect(struct vm *vm)
{
	struct platform *p = &vm->plat;
	long khz;

	platform_kind(p);
	p->emulated = host_emulated();
	p->pre_fault =
		ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_PRE_FAULT_MEMORY) > 0;
	p->stats_fd = ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD) > 0;
	p->max_vcpus = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (p->max_vcpus <= 0)
		p->max_vcpus = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	if (p->max_vcpus <= 0)
		p->max_vcpus = 4; /* KVM's documented minimum when neither cap answers */
	khz = ioctl(vm->vm_fd, KVM_GET_TSC_KHZ, 0);
	p->tsc_khz = khz > 0 ? (uint32_t)khz : 0;
}
