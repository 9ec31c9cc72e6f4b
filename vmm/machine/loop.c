/* The vCPU threads: each runs its owner's hooks around KVM_RUN and the exit dispatch. */
#include "internal.h"

#include <errno.h>
#include <sched.h>
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
	double t;
	int ran = 0;

	if (v->index == 0 &&
	    vm->cpus_saved) /* started on the main thread's CPU: see below */
		sched_setaffinity(0, sizeof(vm->cpus), &vm->cpus);
	numa_note_vcpu(vm->numa, v->index, 1);
	if (vm->hooks.vcpu_enter)
		vm->hooks.vcpu_enter(vm->hooks.cookie, v->index, v->fd);
	t = now_s();
	__atomic_store(&v->t_run, &t,
		       __ATOMIC_RELEASE); /* the guest runs: wait.c reads it */
	do {
		while (!vm_stopping(vm)) {
			if (ioctl(v->fd, KVM_RUN, 0) < 0) {
				if (errno == EINTR || errno == EAGAIN) {
					v->kvm_run->immediate_exit = 0;
					continue;
				}
				vm_finish(vm, END_HOST_ERROR, 0,
					  "KVM: KVM_RUN on vCPU %u: %s", v->index,
					  strerror(errno));
				break;
			}
			if (!ran && vm->hooks.vcpu_ran)
				vm->hooks.vcpu_ran(vm->hooks.cookie, v->index);
			ran = 1;
			if (exit_dispatch(vm, v) == VCPU_STOP)
				break;
		}
		/* --snapshot: its state read, parked while paused; on again after it. */
	} while (vcpu_pause_point(v));
	/* A run that timed out: where this vCPU was (the report says, for a guest that hangs). */
	if (vm_end(vm) == END_TIMEOUT)
		vcpu_describe(v, v->stopped_at, sizeof(v->stopped_at));
	if (vm->hooks.vcpu_leave)
		vm->hooks.vcpu_leave(vm->hooks.cookie, v->index);
	numa_note_vcpu(vm->numa, v->index, 0);
	v->t_done = now_s();
	pthread_mutex_lock(&vm->lock);
	vm->running--;
	pthread_mutex_unlock(&vm->lock);
	vm_wake_main(vm);
	return NULL;
}

/*
 * --numa: the thread runs on its node's CPUs from its first instruction;
 * else vCPU 0 starts where the main thread runs (start_here). Returns like
 * pthread_create.
 */
static int start_thread(struct vm *vm, struct vcpu *v, const pthread_attr_t *here)
{
	pthread_attr_t attr;
	int r;

	if (!vm->numa)
		return pthread_create(&v->thread, v->index == 0 ? here : NULL,
				      vcpu_thread, v);
	r = -numa_thread_attr(vm->numa, numa_vcpu_node(vm->numa, v->index), &attr);
	if (r)
		return r;
	r = pthread_create(&v->thread, &attr, vcpu_thread, v);
	pthread_attr_destroy(&attr);
	return r;
}

/*
 * vCPU 0's thread starts on the CPU the main thread runs on, and takes back
 * the process's CPUs as its first act. The kernel places a new thread on the
 * idlest CPU it sees at fork time; on a busy machine that is often one where
 * another process runs, and the new thread waits there for that process's
 * slice to end (about 1.5 ms here) while the main thread's CPU goes idle: the
 * main thread only waits once the vCPUs are started. On the main thread's CPU
 * it runs as soon as the main thread sleeps (bench/startup, a loaded machine:
 * exec to the guest's first exit 3.3 -> 2.3 ms, medians of 80). Nothing
 * changes if the CPU or the mask cannot be read.
 */
static int start_here(struct vm *vm, pthread_attr_t *attr)
{
	cpu_set_t cpu;
	int c = sched_getcpu();

	vm->cpus_saved = 0;
	if (c < 0 || sched_getaffinity(0, sizeof(vm->cpus), &vm->cpus) ||
	    pthread_attr_init(attr))
		return 0;
	CPU_ZERO(&cpu);
	CPU_SET(c, &cpu);
	if (pthread_attr_setaffinity_np(attr, sizeof(cpu), &cpu)) {
		pthread_attr_destroy(attr);
		return 0;
	}
	vm->cpus_saved = 1;
	return 1;
}

void vm_start_vcpus(struct vm *vm)
{
	pthread_attr_t here;
	int pinned = !vm->numa && start_here(vm, &here);

	vm->running = vm->nvcpus;
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		int r = start_thread(vm, v, pinned ? &here : NULL);

		if (r) {
			pthread_mutex_lock(&vm->lock);
			vm->running -= vm->nvcpus - i;
			pthread_mutex_unlock(&vm->lock);
			vm_finish(vm, END_HOST_ERROR, 0, "pthread_create for vCPU %u: %s",
				  i, strerror(r));
			break;
		}
		v->started = 1;
	}
	if (pinned)
		pthread_attr_destroy(&here);
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

/* A pause: every vCPU thread parked or ended, or the pause abandoned. */
static int vcpus_parked(void *cookie)
{
	struct vm *vm = cookie;
	int done;

	pthread_mutex_lock(&vm->lock);
	done = !vm->snap.hold || vm->running == 0;
	pthread_mutex_unlock(&vm->lock);
	return done;
}

void vm_run_to_end(struct vm *vm, double deadline, double timeout_s, void (*tick)(void *),
		   void *cookie, double tick_s)
{
	vm_wait_main(vm, vcpus_done, vm, tick, cookie, tick_s, deadline, timeout_s);
	if (!vm_stopping(vm))
		vm_finish(vm, END_GUEST_PARKED, 0,
			  "guest stopped every vCPU without exiting (no exit hypercall)");
	/* A pause: the threads park (a device operation ends first); a signal abandons it. */
	if (vm_pause_holding(vm)) {
		vm_wait_main(vm, vcpus_parked, vm, NULL, NULL, 1.0, 0, 0);
		if (vm_pause_holding(vm))
			return; /* the caller saves, then releases them */
	}
	for (unsigned i = 0; i < vm->nvcpus; i++)
		if (vm->vcpus[i].started)
			pthread_join(vm->vcpus[i].thread, NULL);
}
