/* A vCPU's whole state, read and written through KVM: what a snapshot saves and a restore sets. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define MSR_KVM_WALL_CLOCK     0x11
#define MSR_KVM_WALL_CLOCK_NEW 0x4b564d00
#define MSR_IA32_TSC_DEADLINE  0x6e0

/*
 * Writing KVM's wall-clock MSR makes KVM write the wall clock into guest
 * RAM at once, at the address written: on a restore, before the memory
 * file is in RAM, that would make one page present (a uffd mode would
 * then never fill it) or, for a guest that never set it, write at GPA 0.
 * The guest's copy of it is in the memory file already: not replayed.
 */
static int writes_guest_ram(uint32_t index)
{
	return index == MSR_KVM_WALL_CLOCK || index == MSR_KVM_WALL_CLOCK_NEW;
}

/* One MSR through KVM_GET_MSRS / KVM_SET_MSRS: 1 done, 0 refused, -errno. */
static int one_msr(int fd, unsigned long req, struct kvm_msr_entry *e)
{
	struct {
		struct kvm_msrs h;
		struct kvm_msr_entry e;
	} m = { .h.nmsrs = 1, .e = *e };
	int r = ioctl(fd, req, &m);

	if (r < 0)
		return -errno;
	*e = m.e;
	return r;
}

int vcpu_state_read(struct vm *vm, struct vcpu *v, struct vcpu_state *s, char *err,
		    size_t errlen)
{
	struct kvm_mp_state mp;
	int fd = v->fd, r;

	memset(s, 0, sizeof(*s));
	s->index = v->index;
	if (ioctl(fd, KVM_GET_REGS, &s->regs) < 0 ||
	    ioctl(fd, KVM_GET_SREGS, &s->sregs) < 0 ||
	    ioctl(fd, KVM_GET_FPU, &s->fpu) < 0) {
		r = -errno; /* before snprintf, which may set it */
		snprintf(err, errlen, "KVM: reading vCPU %u's registers: %s", v->index,
			 strerror(-r));
		return r;
	}
	/* What this KVM has (vm_snapshot_prepare asked): each saved where it answers. */
	if (vm->snap.xsave && ioctl(fd, KVM_GET_XSAVE, s->xsave) == 0)
		s->have |= VCPU_HAVE_XSAVE;
	if (vm->snap.xcrs && ioctl(fd, KVM_GET_XCRS, &s->xcrs) == 0)
		s->have |= VCPU_HAVE_XCRS;
	if (ioctl(fd, KVM_GET_VCPU_EVENTS, &s->events) == 0)
		s->have |= VCPU_HAVE_EVENTS;
	if (ioctl(fd, KVM_GET_LAPIC, &s->lapic) == 0) /* only with an in-kernel irqchip */
		s->have |= VCPU_HAVE_LAPIC;
	if ((s->have & VCPU_HAVE_LAPIC) && ioctl(fd, KVM_GET_MP_STATE, &mp) == 0) {
		s->mp_state = mp.mp_state;
		s->have |= VCPU_HAVE_MP_STATE;
	}
	for (uint32_t k = 0; k < vm->snap.nmsrs; k++) {
		struct kvm_msr_entry e = { .index = vm->snap.msrs[k] };

		if (one_msr(fd, KVM_GET_MSRS, &e) == 1)
			s->msrs[s->nmsrs++] = e;
	}
	return 0;
}

#define SEG_TYPE_TSS_AVAILABLE 9
#define SEG_TYPE_TSS_BUSY      11

/*
 * On SVM, KVM_GET_SREGS reports the TR's type with the busy bit set
 * whatever the VMCB holds (svm_get_segment works around CPUs that do not
 * store it), and KVM_SET_SREGS writes it back as given. The CPU checks the
 * cached type nowhere after LTR, but QEMU's TCG, the emulated host's CPU,
 * checks it on every port access from user space (check_io wants 9): a
 * restored Linux guest's ioperm()'ed OUT faults with 11. Set as an LTR
 * leaves it, available, where the round trip made it busy.
 */
static void svm_tr_type(const struct vm *vm, struct kvm_sregs *sregs)
{
	if (!strcmp(vm->plat.kvm, "svm") && sregs->tr.type == SEG_TYPE_TSS_BUSY)
		sregs->tr.type = SEG_TYPE_TSS_AVAILABLE;
}

int vm_vcpu_state_set(struct vm *vm, unsigned i, const struct vcpu_state *s,
		      uint32_t *skipped, uint32_t *nskipped, char *err, size_t errlen)
{
	int fd = vm->vcpus[i].fd;
	struct kvm_sregs sregs = s->sregs;
	const char *what = NULL;
	int err_no = 0;

	*nskipped = 0;
	svm_tr_type(vm, &sregs);
	/* Control registers and EFER first, then what depends on them. */
	if (ioctl(fd, KVM_SET_SREGS, &sregs) < 0)
		what = "KVM_SET_SREGS", err_no = errno;
	/* One by one: KVM_SET_MSRS stops at the first it refuses (PLATFORM.md). */
	for (uint32_t k = 0; !what && k < s->nmsrs && k < VCPU_MSRS_MAX; k++) {
		struct kvm_msr_entry e = s->msrs[k];

		if (writes_guest_ram(e.index))
			continue;
		if (one_msr(fd, KVM_SET_MSRS, &e) != 1 && *nskipped < VCPU_MSRS_MAX)
			skipped[(*nskipped)++] = s->msrs[k].index;
	}
	if (!what && ioctl(fd, KVM_SET_REGS, &s->regs) < 0)
		what = "KVM_SET_REGS", err_no = errno;
	if (!what && (s->have & VCPU_HAVE_XSAVE) &&
	    ioctl(fd, KVM_SET_XSAVE, s->xsave) < 0)
		what = "KVM_SET_XSAVE", err_no = errno;
	if (!what && !(s->have & VCPU_HAVE_XSAVE) && ioctl(fd, KVM_SET_FPU, &s->fpu) < 0)
		what = "KVM_SET_FPU", err_no = errno;
	if (!what && (s->have & VCPU_HAVE_XCRS) && ioctl(fd, KVM_SET_XCRS, &s->xcrs) < 0)
		what = "KVM_SET_XCRS", err_no = errno;
	if (!what && (s->have & VCPU_HAVE_LAPIC) &&
	    ioctl(fd, KVM_SET_LAPIC, &s->lapic) < 0)
		what = "KVM_SET_LAPIC", err_no = errno;
	/* KVM drops a TSC deadline written while the LAPIC's timer is not in that mode: again. */
	for (uint32_t k = 0;
	     !what && (s->have & VCPU_HAVE_LAPIC) && k < s->nmsrs && k < VCPU_MSRS_MAX;
	     k++) {
		struct kvm_msr_entry e = s->msrs[k];

		int r = e.index == MSR_IA32_TSC_DEADLINE ? one_msr(fd, KVM_SET_MSRS, &e)
							 : 1;

		if (r != 1)
			what = "KVM_SET_MSRS (IA32_TSC_DEADLINE, after the LAPIC)",
			err_no = r < 0 ? -r : EINVAL;
	}
	if (!what && (s->have & VCPU_HAVE_EVENTS) &&
	    ioctl(fd, KVM_SET_VCPU_EVENTS, &s->events) < 0)
		what = "KVM_SET_VCPU_EVENTS", err_no = errno;
	/* Last: an AP that Linux brought up runs, whatever KVM made of it at creation. */
	if (!what && (s->have & VCPU_HAVE_MP_STATE) &&
	    ioctl(fd, KVM_SET_MP_STATE, &(struct kvm_mp_state){ s->mp_state }) < 0)
		what = "KVM_SET_MP_STATE", err_no = errno;
	if (what) {
		snprintf(err, errlen, "KVM: %s on vCPU %u: %s", what, i,
			 strerror(err_no));
		return -err_no;
	}
	return 0;
}

_Static_assert(sizeof(((struct vcpu_state *)0)->xsave) == sizeof(struct kvm_xsave),
	       "the saved XSAVE region is KVM_GET_XSAVE's");
