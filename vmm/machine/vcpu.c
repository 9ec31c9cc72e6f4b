/* vCPUs: creation, the 64-bit entry state, and their registers for crash reports. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

int vcpu_create(struct vm *vm, struct vcpu *v, unsigned index)
{
	int sz = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);

	v->vm = vm;
	v->index = index;
	if (sz < (int)sizeof(struct kvm_run))
		return sz < 0 ? -errno : -EINVAL;
	v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, index);
	if (v->fd < 0)
		return -errno;
	v->run_size = (size_t)sz;
	v->kvm_run =
		mmap(NULL, v->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->kvm_run == MAP_FAILED) {
		int e = -errno;

		v->kvm_run = NULL;
		close(v->fd);
		v->fd = -1;
		return e;
	}
	return 0;
}

void vcpu_destroy(struct vcpu *v)
{
	if (v->kvm_run)
		munmap(v->kvm_run, v->run_size);
	if (v->fd >= 0)
		close(v->fd);
	v->kvm_run = NULL;
	v->fd = -1;
}

#define CR0_PE	 (1ULL << 0)
#define CR0_MP	 (1ULL << 1)
#define CR0_ET	 (1ULL << 4)
#define CR0_NE	 (1ULL << 5)
#define CR0_WP	 (1ULL << 16)
#define CR0_AM	 (1ULL << 18)
#define CR0_PG	 (1ULL << 31)
#define CR4_PAE	 (1ULL << 5)
#define EFER_SCE (1ULL << 0)
#define EFER_LME (1ULL << 8)
#define EFER_LMA (1ULL << 10)

static struct kvm_segment segment(uint16_t sel, uint8_t type, int code)
{
	return (struct kvm_segment){
		.base = 0,
		.limit = 0xffffffff,
		.selector = sel,
		.type = type,
		.present = 1,
		.dpl = 0,
		.db = !code,
		.s = 1,
		.l = code,
		.g = 1,
	};
}

/* The entry state of minivmm_abi.h. Returns 0 or -errno. */
int vcpu_set_entry(struct vcpu *v, const struct kvm_cpuid2 *cpuid)
{
	struct vm *vm = v->vm;
	struct kvm_sregs s;
	struct kvm_regs r = {
		.rip = vm->image.entry_gpa,
		.rflags = 0x2,
		.rdi = MVM_BOOTINFO_GPA,
		.rsi = v->index,
		.rdx = vm->nvcpus,
		.rcx = vm->entry_flags,
		/* A minivmm firmware picks its own stack; a --raw guest gets one. */
		.rsp = vm->raw ? MVM_RAW_STACK_TOP - v->index * MVM_PAGE_BYTES : 0,
	};

	/* Without the host's CPUID, PVM triple-faults on the first long-mode instruction. */
	if (ioctl(v->fd, KVM_SET_CPUID2, cpuid))
		return -errno;
	if (ioctl(v->fd, KVM_GET_SREGS, &s))
		return -errno;
	s.cs = segment(MVM_SEL_KCODE, 11, 1);
	s.ds = s.es = s.ss = segment(MVM_SEL_KDATA, 3, 0);
	s.fs = s.gs = segment(0, 3, 0);
	s.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_AM | CR0_PG;
	s.cr3 = MVM_ENTRY_PT_GPA;
	s.cr4 = CR4_PAE;
	s.efer = EFER_SCE | EFER_LME | EFER_LMA;
	if (ioctl(v->fd, KVM_SET_SREGS, &s))
		return -errno;
	if (ioctl(v->fd, KVM_SET_REGS, &r))
		return -errno;
	return 0;
}

/*
 * A PC guest (Linux's 64-bit boot protocol): vCPU 0 in long mode at the
 * kernel's entry, RSI the zero page, __BOOT_CS/__BOOT_DS from the GDT the
 * loader placed; the others keep their reset state, waiting for INIT/SIPI.
 */
/*
 * The supported CPUID names the host CPU's APIC ID; each vCPU's says its
 * own (its local APIC's, the MP table's): leaf 1 EBX[31:24], the x2APIC ID
 * of leaves 0xB and 0x1F (EDX), AMD's extended APIC ID (0x8000001E EAX).
 * Else Linux reports "APIC ID mismatch" and may map CPUs wrongly.
 */
static void cpuid_apic_id(struct kvm_cpuid2 *c, uint32_t id)
{
	for (unsigned i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == 1)
			e->ebx = (e->ebx & 0x00ffffffu) | (id << 24);
		else if (e->function == 0xb || e->function == 0x1f)
			e->edx = id;
		else if (e->function == 0x8000001e)
			e->eax = id;
	}
}

int vcpu_set_pc_entry(struct vcpu *v, const struct kvm_cpuid2 *cpuid)
{
	const struct vm_pc_entry *e = &v->vm->pc_entry;
	size_t bytes = sizeof(*cpuid) + cpuid->nent * sizeof(cpuid->entries[0]);
	struct kvm_cpuid2 *own = malloc(bytes);
	struct kvm_sregs s;
	struct kvm_regs r = { .rip = e->rip, .rsi = e->rsi, .rflags = 0x2 };
	int rc;

	if (!own)
		return -ENOMEM;
	memcpy(own, cpuid, bytes);
	cpuid_apic_id(own, v->index);
	rc = ioctl(v->fd, KVM_SET_CPUID2, own) ? -errno : 0;
	free(own);
	if (rc)
		return rc;
	if (v->index != 0)
		return 0;
	if (ioctl(v->fd, KVM_GET_SREGS, &s))
		return -errno;
	s.cs = segment(MVM_SEL_KCODE, 11, 1);
	s.ds = s.es = s.ss = s.fs = s.gs = segment(MVM_SEL_KDATA, 3, 0);
	s.gdt.base = e->gdt_base;
	s.gdt.limit = e->gdt_limit;
	s.cr0 = CR0_PE | CR0_ET | CR0_NE | CR0_PG;
	s.cr3 = MVM_ENTRY_PT_GPA;
	s.cr4 = CR4_PAE;
	s.efer = EFER_LME | EFER_LMA;
	if (ioctl(v->fd, KVM_SET_SREGS, &s))
		return -errno;
	if (ioctl(v->fd, KVM_SET_REGS, &r))
		return -errno;
	return 0;
}

/* Registers for a crash report: RIP, RSP, the CR registers and the mode. */
void vcpu_describe(struct vcpu *v, char *buf, size_t len)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	if (ioctl(v->fd, KVM_GET_REGS, &r) || ioctl(v->fd, KVM_GET_SREGS, &s)) {
		snprintf(buf, len, "(registers unavailable: %s)", strerror(errno));
		return;
	}
	snprintf(
		buf, len,
		"rip=0x%llx rsp=0x%llx rax=0x%llx rflags=0x%llx cs=0x%x (CPL%u) cr0=0x%llx cr2=0x%llx cr3=0x%llx cr4=0x%llx efer=0x%llx",
		r.rip, r.rsp, r.rax, r.rflags, s.cs.selector, s.cs.dpl, s.cr0, s.cr2,
		s.cr3, s.cr4, s.efer);
}
