/* Pausing every vCPU at a consistent point, for a snapshot, and letting them run on. */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

/*
 * The first call wins, as any end: the run ends as END_SNAPSHOT, every
 * vCPU is kicked out of KVM_RUN, and their threads leave their loops.
 */
int vm_pause(struct vm *vm, unsigned vcpu)
{
	if (vm_stopping(vm))
		return -EBUSY;
	__atomic_store_n(&vm->pausing, 1, __ATOMIC_RELEASE);
	vm_finish(vm, END_SNAPSHOT, 0, "--snapshot: the VM was saved where vCPU %u asked",
		  vcpu);
	return vm_end(vm) == END_SNAPSHOT ? 0 : -EBUSY;
}

int vm_paused(const struct vm *vm)
{
	return __atomic_load_n(&vm->pausing, __ATOMIC_ACQUIRE) && vm->end == END_SNAPSHOT;
}

/*
 * Every vCPU thread joined: a vCPU that left KVM_RUN for a port access
 * has it half done (KVM completes an OUT, RIP past it, on the next
 * KVM_RUN). KVM_RUN with immediate_exit completes it and returns EINTR
 * without entering the guest (the KVM API's way to a state worth saving).
 */
int vm_pause_settle(struct vm *vm, char *err, size_t errlen)
{
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		int r, e;

		v->kvm_run->immediate_exit = 1;
		r = ioctl(v->fd, KVM_RUN, 0);
		e = r < 0 ? errno : 0; /* read here: nothing else may set it first */
		if (r == 0) {
			/* Success is not what immediate_exit asks for: errno says nothing. */
			snprintf(
				err, errlen,
				"KVM: completing vCPU %u's exit before the snapshot: KVM_RUN returned 0 (exit reason %u), not EINTR",
				i, v->kvm_run->exit_reason);
			return -EIO;
		}
		if (e != EINTR) {
			snprintf(err, errlen,
				 "KVM: completing vCPU %u's exit before the snapshot: %s",
				 i, strerror(e));
			return -e;
		}
		v->kvm_run->immediate_exit = 0;
	}
	return 0;
}

void vm_resume_after_pause(struct vm *vm)
{
	pthread_mutex_lock(&vm->lock);
	vm->end = END_RUNNING;
	vm->message[0] = '\0';
	vm->pausing = 0;
	pthread_mutex_unlock(&vm->lock);
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		vm->vcpus[i].kvm_run->immediate_exit = 0;
		vm->vcpus[i].started = 0;
	}
}
