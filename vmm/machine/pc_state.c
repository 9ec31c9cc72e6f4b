/* A PC guest's in-kernel platform: the PICs and IOAPIC, the PIT and kvmclock, read and set whole. */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

/* The call that failed, with errno: -errno, and err says which. */
static int failed(const char *what, char *err, size_t errlen)
{
	int e = -errno;

	snprintf(err, errlen, "KVM: %s (the PC platform's state): %s", what,
		 strerror(-e));
	return e;
}

int vm_pc_state_get(struct vm *vm, struct vm_pc_state *s, char *err, size_t errlen)
{
	const char *what = NULL;

	memset(s, 0, sizeof(*s));
	for (uint32_t c = 0; !what && c < VM_PC_CHIPS; c++) {
		s->chip[c].chip_id = c; /* KVM_IRQCHIP_PIC_MASTER, _PIC_SLAVE, _IOAPIC */
		if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &s->chip[c]) < 0)
			what = "KVM_GET_IRQCHIP";
	}
	if (!what && ioctl(vm->vm_fd, KVM_GET_PIT2, &s->pit) < 0)
		what = "KVM_GET_PIT2";
	if (!what && ioctl(vm->vm_fd, KVM_GET_CLOCK, &s->clock) < 0)
		what = "KVM_GET_CLOCK";
	return what ? failed(what, err, errlen) : 0;
}

/*
 * The clock goes last and without KVM_CLOCK_REALTIME: each vCPU's TSC was
 * set to its saved value (IA32_TSC among the MSRs), and kvmclock, which the
 * guest reads as TSC-scaled deltas from KVM's base, continues from its saved
 * value as well: the guest's clock neither goes back (a fresh VM's kvmclock
 * starts at 0) nor jumps forward by the time the VM spent on disk while its
 * TSC did not (REALTIME would add that time to kvmclock alone).
 */
int vm_pc_state_set(struct vm *vm, const struct vm_pc_state *s, char *err, size_t errlen)
{
	struct kvm_clock_data clock = { .clock = s->clock.clock };
	struct kvm_pit_state2 pit = s->pit;
	const char *what = NULL;

	for (uint32_t c = 0; !what && c < VM_PC_CHIPS; c++) {
		struct kvm_irqchip chip = s->chip[c];

		chip.chip_id = c;
		if (ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &chip) < 0)
			what = "KVM_SET_IRQCHIP";
	}
	if (!what && ioctl(vm->vm_fd, KVM_SET_PIT2, &pit) < 0)
		what = "KVM_SET_PIT2";
	if (!what && ioctl(vm->vm_fd, KVM_SET_CLOCK, &clock) < 0)
		what = "KVM_SET_CLOCK";
	return what ? failed(what, err, errlen) : 0;
}
