/* Running the VM: vCPU threads, the end of a run, timeouts and signals. */
#include "vmm.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIG_KICK SIGUSR1 /* to a vCPU thread: leave KVM_RUN */
#define SIG_WAKE SIGUSR2 /* to the main thread: something ended */

double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / NSEC_PER_SEC;
}

static void kick_all(struct vm *vm)
{
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		if (!v->started)
			continue;
		/* immediate_exit covers a kick that lands just before KVM_RUN. */
		__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
		pthread_kill(v->thread, SIG_KICK);
	}
}

void vm_finish(struct vm *vm, enum run_end end, int status, const char *reason,
	       const char *fmt, ...)
{
	va_list ap;
	int first;

	pthread_mutex_lock(&vm->lock);
	first = vm->end == END_RUNNING;
	if (first) {
		vm->end = end;
		vm->status = status;
		vm->reason = reason;
		va_start(ap, fmt);
		vsnprintf(vm->message, sizeof(vm->message), fmt, ap);
		va_end(ap);
	}
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	if (first) {
		kick_all(vm);
		pthread_kill(vm->main_thread, SIG_WAKE);
	}
}

int vm_stopping(struct vm *vm)
{
	return __atomic_load_n(&vm->end, __ATOMIC_ACQUIRE) != END_RUNNING;
}

void vm_vcpu_done(struct vm *vm, struct vcpu *v)
{
	(void)v;
	pthread_mutex_lock(&vm->lock);
	vm->running--;
	pthread_mutex_unlock(&vm->lock);
	pthread_kill(vm->main_thread, SIG_WAKE);
}

static void on_kick(int sig)
{
	(void)sig;
}

static void on_second_interrupt(int sig)
{
	static const char msg[] = "minivmm: interrupted again, exiting at once\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more can be done */
	}
	_exit(EXIT_INTERRUPTED);
}

static int still_running(struct vm *vm)
{
	int r;

	pthread_mutex_lock(&vm->lock);
	r = vm->end == END_RUNNING && vm->running > 0;
	pthread_mutex_unlock(&vm->lock);
	return r;
}

/*
 * Wait for the guest to end, a timeout, or SIGINT/SIGTERM. The main thread
 * sleeps in sigtimedwait(); vCPU threads wake it with SIG_WAKE.
 */
static void wait_for_end(struct vm *vm, const sigset_t *waitset)
{
	double deadline = vm->cfg->timeout_s > 0 ? now_s() + vm->cfg->timeout_s : 0;

	while (still_running(vm)) {
		struct timespec ts = { 1, 0 };
		int sig;

		if (deadline) {
			double left = deadline - now_s();

			if (left <= 0) {
				vm_finish(vm, END_TIMEOUT, 0, "timeout",
					  "guest still running after --timeout %g s; "
					  "stopped it",
					  vm->cfg->timeout_s);
				break;
			}
			if (left < 1) {
				ts.tv_sec = 0;
				ts.tv_nsec = (long)(left * NSEC_PER_SEC) + 1;
			}
		}
		sig = sigtimedwait(waitset, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM) {
			struct sigaction sa = { .sa_handler = on_second_interrupt };
			sigset_t again;

			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGTERM, &sa, NULL);
			sigemptyset(&again);
			sigaddset(&again, SIGINT);
			sigaddset(&again, SIGTERM);
			pthread_sigmask(SIG_UNBLOCK, &again, NULL);
			vm_finish(vm, END_INTERRUPTED, 0, "interrupted",
				  "interrupted by %s; stopped the guest", strsignal(sig));
			break;
		}
	}
}

int vm_run(struct vm *vm)
{
	struct sigaction kick = { .sa_handler = on_kick };
	sigset_t waitset, old;
	unsigned started = 0;
	int r;

	sigemptyset(&waitset);
	sigaddset(&waitset, SIGINT);
	sigaddset(&waitset, SIGTERM);
	sigaddset(&waitset, SIG_WAKE);
	/* No SA_RESTART: the kick must make KVM_RUN return EINTR. */
	sigaction(SIG_KICK, &kick, NULL);
	/* A wake-up left pending when the mask is restored must not kill us. */
	sigaction(SIG_WAKE, &kick, NULL);
	pthread_sigmask(SIG_BLOCK, &waitset, &old);
	vm->main_thread = pthread_self();
	vm->running = vm->nvcpus;
	vm->eager.t_start = now_s();
	if (eager_host_side(vm) && !vm->eager.on_vcpu_threads &&
	    eager_run_dedicated(vm, &waitset)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return exit_status_of(vm);
	}
	for (; started < vm->nvcpus; started++) {
		struct vcpu *v = &vm->vcpus[started];

		r = pthread_create(&v->thread, NULL, vcpu_thread, v);
		if (r) {
			pthread_mutex_lock(&vm->lock);
			vm->running -= vm->nvcpus - started;
			pthread_mutex_unlock(&vm->lock);
			vm_finish(vm, END_HOST_ERROR, 0, "host-error",
				  "pthread_create for vCPU %u: %s", started, strerror(r));
			break;
		}
		v->started = 1;
	}
	if (vm->sandbox && vm->sandbox_main) {
		struct sandbox_fds f;

		vm_sandbox_fds(vm, &f, -1);
		r = sandbox_enter(SANDBOX_MAIN, &f);
		if (r)
			vm_finish(vm, END_HOST_ERROR, 0, "host-error",
				  "sandbox: seccomp filter for the main thread: %s",
				  strerror(-r));
	}
	if (eager_host_side(vm) && vm->eager.on_vcpu_threads) {
		pthread_mutex_lock(&vm->lock);
		vm->eager.done += vm->nvcpus - started; /* slices no thread will take */
		pthread_mutex_unlock(&vm->lock);
		eager_wait(vm, &waitset);
	}
	if (eager_host_side(vm) && vm->eager.t_end > 0) {
		timeline_mark_at(vm, "eager_done", vm->eager.t_end, 0);
		if (!vm->cfg->quiet) {
			eager_report(vm, stdout);
			fflush(stdout);
		}
	}
	wait_for_end(vm, &waitset);
	if (!vm_stopping(vm))
		vm_finish(vm, END_GUEST_CRASH, 0, "guest-parked",
			  "guest stopped every vCPU without exiting (no exit hypercall)");
	kick_all(vm);
	for (unsigned i = 0; i < started; i++)
		pthread_join(vm->vcpus[i].thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return exit_status_of(vm);
}
