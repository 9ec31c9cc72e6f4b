/* A vCPU's whole state, read and written through KVM: what a snapshot saves and a restore sets. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

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
	for (uint32_t k = 0; k < vm->snap.nmsrs; k++) {
		struct kvm_msr_entry e = { .index = vm->snap.msrs[k] };

		if (one_msr(fd, KVM_GET_MSRS, &e) == 1)
			s->msrs[s->nmsrs++] = e;
	}
	return 0;
}

int vm_vcpu_state_set(struct vm *vm, unsigned i, const struct vcpu_state *s,
		      uint32_t *skipped, uint32_t *nskipped, char *err, size_t errlen)
{
	int fd = vm->vcpus[i].fd;
	const char *what = NULL;
	int err_no = 0;

	*nskipped = 0;
	/* Control registers and EFER first, then what depends on them. */
	if (ioctl(fd, KVM_SET_SREGS, &s->sregs) < 0)
		what = "KVM_SET_SREGS", err_no = errno;
	/* One by one: KVM_SET_MSRS stops at the first it refuses (PLATFORM.md). */
	for (uint32_t k = 0; !what && k < s->nmsrs && k < VCPU_MSRS_MAX; k++) {
		struct kvm_msr_entry e = s->msrs[k];

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
	if (!what && (s->have & VCPU_HAVE_EVENTS) &&
	    ioctl(fd, KVM_SET_VCPU_EVENTS, &s->events) < 0)
		what = "KVM_SET_VCPU_EVENTS", err_no = errno;
	if (what) {
		snprintf(err, errlen, "KVM: %s on vCPU %u: %s", what, i,
			 strerror(err_no));
		return -err_no;
	}
	return 0;
}

_Static_assert(sizeof(((struct vcpu_state *)0)->xsave) == sizeof(struct kvm_xsave),
	       "the saved XSAVE region is KVM_GET_XSAVE's");
