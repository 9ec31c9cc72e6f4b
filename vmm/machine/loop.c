/* The vCPU threads: each runs its owner's hooks around KVM_RUN and the exit dispatch. */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

/*
 * One vCPU's thread: the owner's enter hook (eager, sandbox), then KVM_RUN
 * until the exit dispatcher says stop or the VM is ending. EINTR/EAGAIN are
 * retried; other ioctl failures end the run.
 */
static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct vm *vm = v->vm;

	if (vm->hooks.vcpu_enter)
		vm->hooks.vcpu_enter(vm->hooks.cookie, v->index, v->fd);
	v->t_run = now_s();
	while (!vm_stopping(vm)) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				v->kvm_run->immediate_exit = 0;
				continue;
			}
			vm_finish(vm, END_HOST_ERROR, 0, "KVM: KVM_RUN on vCPU %u: %s",
				  v->index, strerror(errno));
			break;
		}
		if (exit_dispatch(vm, v) == VCPU_STOP)
			break;
	}
	if (vm->hooks.vcpu_leave)
		vm->hooks.vcpu_leave(vm->hooks.cookie, v->index);
	v->t_done = now_s();
	pthread_mutex_lock(&vm->lock);
	vm->running--;
	pthread_mutex_unlock(&vm->lock);
	vm_wake_main(vm);
	return NULL;
}

void vm_start_vcpus(struct vm *vm)
{
	vm->running = vm->nvcpus;
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		int r = pthread_create(&v->thread, NULL, vcpu_thread, v);

		if (r) {
			pthread_mutex_lock(&vm->lock);
			vm->running -= vm->nvcpus - i;
			pthread_mutex_unlock(&vm->lock);
			vm_finish(vm, END_HOST_ERROR, 0, "pthread_create for vCPU %u: %s",
				  i, strerror(r));
			return;
		}
		v->started = 1;
	}
}

static int vcpus_done(void *cookie)
{
	struct vm *vm = cookie;
	int done;

	pthread_mutex_lock(&vm->lock);
	done = vm->end != END_RUNNING || vm->running == 0;
	pthread_mutex_unlock(&vm->lock);
	return done;
}

struct run_wait {
	struct vm *vm;
	void (*tick)(void *);
	void *cookie;
};

static int run_wait_done(void *cookie)
{
	return vcpus_done(((struct run_wait *)cookie)->vm);
}

static void run_wait_tick(void *cookie)
{
	struct run_wait *w = cookie;

	w->tick(w->cookie);
}

void vm_run_to_end(struct vm *vm, double deadline, double timeout_s, void (*tick)(void *),
		   void *cookie, double tick_s)
{
	struct run_wait w = { vm, tick, cookie };

	vm_wait_main(vm, run_wait_done, tick ? run_wait_tick : NULL, &w, tick_s, deadline,
		     timeout_s);
	if (!vm_stopping(vm))
		vm_finish(vm, END_GUEST_PARKED, 0,
			  "guest stopped every vCPU without exiting (no exit hypercall)");
	for (unsigned i = 0; i < vm->nvcpus; i++)
		if (vm->vcpus[i].started)
			pthread_join(vm->vcpus[i].thread, NULL);
}
