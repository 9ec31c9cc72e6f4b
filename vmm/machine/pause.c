/* Pausing every vCPU at a consistent point, for a snapshot, and letting them run on or end. */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/*
 * How a pause goes. vm_pause (the asking vCPU) ends the run as END_SNAPSHOT
 * with vm->hold set: every vCPU is kicked out of KVM_RUN, and each thread, at
 * its pause point (loop.c), completes its own exit and reads its own state
 * (its filter allows its vCPU's fd only: the main thread makes no KVM call)
 * and parks. A device operation in progress (hc_zero) is not cut short by a
 * pause (vm_device_stop): the thread reaches its pause point once it is done,
 * so no half-done operation is saved as done. The main thread saves, then
 * releases the parked threads: to run on (--snapshot-continue) or to end.
 * A SIGINT meanwhile abandons the pause (vm_pause_abandon): the run ends.
 */

int vm_snapshot_prepare(struct vm *vm, char *err, size_t errlen)
{
	struct {
		struct kvm_msr_list l;
		uint32_t more[VCPU_MSRS_MAX];
	} list = { .l.nmsrs = VCPU_MSRS_MAX };

	if (ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, &list) < 0) {
		int e = errno;

		snprintf(err, errlen, "KVM: KVM_GET_MSR_INDEX_LIST: %s", strerror(e));
		return -e;
	}
	vm->snap.nmsrs = list.l.nmsrs < VCPU_MSRS_MAX ? list.l.nmsrs : VCPU_MSRS_MAX;
	memcpy(vm->snap.msrs, list.l.indices, vm->snap.nmsrs * sizeof(uint32_t));
	vm->snap.xsave = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE) > 0;
	vm->snap.xcrs = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) > 0;
	pthread_cond_init(&vm->snap.resume, NULL);
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		vm->vcpus[i].saved = calloc(1, sizeof(*vm->vcpus[i].saved));
		if (!vm->vcpus[i].saved) {
			snprintf(err, errlen, "--snapshot: out of memory for vCPU state");
			return -ENOMEM;
		}
	}
	if (vm->pc && !(vm->snap.pc = calloc(1, sizeof(*vm->snap.pc)))) {
		snprintf(err, errlen,
			 "--snapshot: out of memory for the PC platform's state");
		return -ENOMEM;
	}
	vm->snap.ready = 1;
	return 0;
}

int vm_pause(struct vm *vm, unsigned vcpu)
{
	if (vm_stopping(vm))
		return -EBUSY;
	pthread_mutex_lock(&vm->lock);
	if (vm->end == END_RUNNING) {
		vm->pausing = 1;
		vm->snap.hold = 1;
	}
	pthread_mutex_unlock(&vm->lock);
	vm_finish(vm, END_SNAPSHOT, 0, "--snapshot: the VM was saved where vCPU %u asked",
		  vcpu);
	return vm_end(vm) == END_SNAPSHOT ? 0 : -EBUSY;
}

int vm_paused(const struct vm *vm)
{
	return __atomic_load_n(&vm->pausing, __ATOMIC_ACQUIRE) && vm->end == END_SNAPSHOT;
}

int vm_pause_holding(struct vm *vm)
{
	int hold;

	pthread_mutex_lock(&vm->lock);
	hold = vm->snap.hold;
	pthread_mutex_unlock(&vm->lock);
	return hold;
}

int vm_device_stop(struct vm *vm)
{
	return vm_stopping(vm) && !__atomic_load_n(&vm->pausing, __ATOMIC_ACQUIRE);
}

/*
 * A vCPU that left KVM_RUN for a port access has it half done (KVM completes
 * an OUT, RIP past it, on the next KVM_RUN). KVM_RUN with immediate_exit
 * completes it and returns EINTR without entering the guest (the KVM API's
 * way to a state worth saving); then the state is read, on this thread.
 */
static void settle_and_save(struct vcpu *v)
{
	int r, e;

	v->kvm_run->immediate_exit = 1;
	r = ioctl(v->fd, KVM_RUN, 0);
	e = r < 0 ? errno : 0; /* read here: nothing else may set it first */
	v->kvm_run->immediate_exit = 0;
	v->saved_err = 0;
	if (r == 0) {
		/* Success is not what immediate_exit asks for: errno says nothing. */
		snprintf(
			v->saved_why, sizeof(v->saved_why),
			"KVM: completing vCPU %u's exit before the snapshot: KVM_RUN returned 0 (exit reason %u), not EINTR",
			v->index, v->kvm_run->exit_reason);
		v->saved_err = -EIO;
	} else if (e != EINTR) {
		snprintf(v->saved_why, sizeof(v->saved_why),
			 "KVM: completing vCPU %u's exit before the snapshot: %s",
			 v->index, strerror(e));
		v->saved_err = -e;
	} else {
		v->saved_err = vcpu_state_read(v->vm, v, v->saved, v->saved_why,
					       sizeof(v->saved_why));
		/*
		 * A PC guest's in-kernel platform (PICs, IOAPIC, PIT, kvmclock) is
		 * the VM's: vCPU 0's thread reads it with its own, while every vCPU
		 * is held, so the main thread makes no KVM call (its filter).
		 */
		if (!v->saved_err && v->index == 0 && v->vm->snap.pc) {
			v->saved_err =
				vm_pc_state_get(v->vm, v->vm->snap.pc, v->saved_why,
						sizeof(v->saved_why));
			v->vm->snap.pc_ok = v->saved_err == 0;
		}
	}
	__atomic_store_n(&v->saved_ok, v->saved_err == 0, __ATOMIC_RELEASE);
}

int vcpu_pause_point(struct vcpu *v)
{
	struct vm *vm = v->vm;
	int run_on;

	if (!vm->snap.ready)
		return 0;
	/* Ending or paused: what a later (or this) snapshot saves of this vCPU. */
	settle_and_save(v);
	pthread_mutex_lock(&vm->lock);
	if (!vm->snap.hold) {
		pthread_mutex_unlock(&vm->lock);
		return 0;
	}
	vm->running--;
	vm->snap.parked++;
	pthread_mutex_unlock(&vm->lock);
	vm_wake_main(vm);
	pthread_mutex_lock(&vm->lock);
	while (vm->snap.hold)
		pthread_cond_wait(&vm->snap.resume, &vm->lock);
	run_on = vm->end == END_RUNNING; /* the releaser counted it running again */
	pthread_mutex_unlock(&vm->lock);
	return run_on;
}

/* Under vm->lock: the parked threads go on (counted running: to run, or to leave their loop). */
static void release_locked(struct vm *vm)
{
	vm->running += vm->snap.parked;
	vm->snap.parked = 0;
	vm->snap.hold = 0;
	pthread_cond_broadcast(&vm->snap.resume);
}

int vm_pause_settle(struct vm *vm, char *err, size_t errlen)
{
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		if (!__atomic_load_n(&v->saved_ok, __ATOMIC_ACQUIRE)) {
			snprintf(err, errlen, "%s",
				 v->saved_err ? v->saved_why
					      : "a vCPU's state was never read");
			return v->saved_err ? v->saved_err : -EIO;
		}
	}
	return 0;
}

const struct vcpu_state *vm_vcpu_saved(const struct vm *vm, unsigned i)
{
	return i < vm->nvcpus && vm->vcpus[i].saved_ok ? vm->vcpus[i].saved : NULL;
}

const struct vm_pc_state *vm_pc_saved(const struct vm *vm)
{
	return vm->snap.pc_ok && vm_vcpu_saved(vm, 0) ? vm->snap.pc : NULL;
}

void vm_pause_release(struct vm *vm, int run_on)
{
	pthread_mutex_lock(&vm->lock);
	if (run_on) {
		vm->end = END_RUNNING;
		vm->message[0] = '\0';
		vm->pausing = 0;
		for (unsigned i = 0; i < vm->nvcpus; i++)
			vm->vcpus[i].saved_ok = 0;
	}
	release_locked(vm);
	pthread_mutex_unlock(&vm->lock);
}

int vm_pause_abandon(struct vm *vm, enum run_end end, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&vm->lock);
	if (!vm->snap.hold && !vm->pausing) {
		pthread_mutex_unlock(&vm->lock);
		return 0;
	}
	vm->status = 0;
	va_start(ap, fmt);
	vsnprintf(vm->message, sizeof(vm->message), fmt, ap);
	va_end(ap);
	__atomic_store_n(&vm->end, end, __ATOMIC_RELEASE);
	__atomic_store_n(&vm->pausing, 0, __ATOMIC_RELEASE); /* device operations stop */
	release_locked(vm);
	pthread_mutex_unlock(&vm->lock);
	return 1;
}
