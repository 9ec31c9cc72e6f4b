/* The main thread's one wait: for the end, a deadline or a signal, drawing progress meanwhile. */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void on_kick(int sig)
{
	(void)sig;
}

#define EXIT_HOOKS 2 /* the results' temporaries, the snapshot's */

static void (*exit_hooks[EXIT_HOOKS])(void);

void vm_set_exit_hook(void (*fn)(void))
{
	for (unsigned i = 0; i < EXIT_HOOKS; i++) {
		if (exit_hooks[i] == fn)
			return;
		if (!exit_hooks[i]) {
			exit_hooks[i] = fn;
			return;
		}
	}
}

static void run_exit_hooks(void)
{
	for (unsigned i = 0; i < EXIT_HOOKS; i++)
		if (exit_hooks[i])
			exit_hooks[i]();
}

static void on_second_interrupt(int sig)
{
	static const char msg[] = "minivmm: interrupted again, exiting at once\n";

	(void)sig;
	run_exit_hooks();
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more can be done */
	}
	_exit(EXIT_INTERRUPTED);
}

static void wait_set(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGINT);
	sigaddset(s, SIGTERM);
	sigaddset(s, SIG_WAKE);
}

void vm_signals_block(struct vm *vm, sigset_t *old)
{
	struct sigaction kick = { .sa_handler = on_kick };
	sigset_t set;

	wait_set(&set);
	/* No SA_RESTART: the kick must make KVM_RUN return EINTR. */
	sigaction(SIG_KICK, &kick, NULL);
	/* A wake-up left pending when the mask is restored must not kill us. */
	sigaction(SIG_WAKE, &kick, NULL);
	pthread_sigmask(SIG_BLOCK, &set, old);
	vm->main_thread = pthread_self();
}

/* The first SIGINT/SIGTERM ends the run; from then on a second one exits at once. */
static void interrupted(struct vm *vm, int sig)
{
	struct sigaction sa = { .sa_handler = on_second_interrupt };
	sigset_t again;
	int ran = 0;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&again);
	sigaddset(&again, SIGINT);
	sigaddset(&again, SIGTERM);
	pthread_sigmask(SIG_UNBLOCK, &again, NULL);
	/* Before any vCPU entered (eager population, say) there was no guest to stop. */
	for (unsigned i = 0; i < vm->nvcpus; i++) {
		double t;

		__atomic_load(&vm->vcpus[i].t_run, &t, __ATOMIC_ACQUIRE);
		ran |= t > 0;
	}
	if (vm_pause_abandon(
		    vm, END_INTERRUPTED,
		    "interrupted by SIG%s during the snapshot; no snapshot was left",
		    sigabbrev_np(sig)))
		return;
	vm_finish(vm, END_INTERRUPTED, 0,
		  ran ? "interrupted by SIG%s; stopped the guest"
		      : "interrupted by SIG%s before the guest ran",
		  sigabbrev_np(sig));
}

int vm_interrupt_pending(struct vm *vm)
{
	static const struct timespec now = { 0, 0 };
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sig = sigtimedwait(&set, NULL, &now);
	if (sig != SIGINT && sig != SIGTERM)
		return 0;
	interrupted(vm, sig);
	return sig;
}

/*
 * The run ended STOP_GRACE_S ago and a thread has still not stopped: a bug
 * (a thread that misses its stop flag) or a host that does not return from a
 * call. Waiting longer would hang the process; say so and exit, as a second
 * interrupt does (the results of this run cannot be gathered).
 */
#define STOP_GRACE_S 10.0

static void stuck(void)
{
	static const char msg[] =
		"minivmm: a thread did not stop within 10 s of the run's end "
		"(a minivmm bug: please report it); exiting without the "
		"results of this run\n";

	run_exit_hooks();
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more can be done */
	}
	_exit(EXIT_HOST);
}

void vm_wait_main(struct vm *vm, int (*done)(void *), void *done_cookie,
		  void (*tick)(void *), void *tick_cookie, double tick_s, double deadline,
		  double timeout_s)
{
	double stopped_at = 0;
	sigset_t set;

	wait_set(&set);
	while (!done(done_cookie)) {
		double wait = tick ? tick_s : 1.0;
		struct timespec ts;
		int sig;

		/* A pause waits for a device operation to end, however long: a signal abandons it. */
		if (vm_stopping(vm) && !vm_pause_holding(vm)) {
			if (!stopped_at)
				stopped_at = now_s();
			else if (now_s() - stopped_at > STOP_GRACE_S)
				stuck();
		}

		if (deadline && !vm_stopping(vm)) {
			double left = deadline - now_s();

			if (left <= 0) {
				vm_finish(
					vm, END_TIMEOUT, 0,
					"guest still running after --timeout %g s; stopped it",
					timeout_s);
				continue;
			}
			if (left < wait)
				wait = left;
		}
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * NSEC_PER_SEC) + 1;
		if (tick)
			tick(tick_cookie);
		sig = sigtimedwait(&set, NULL, &ts);
		if ((sig == SIGINT || sig == SIGTERM) &&
		    (!vm_stopping(vm) || vm_pause_holding(vm)))
			interrupted(vm, sig);
	}
}
