/* The end of a run: why it ended, the exit status that follows, and how threads learn of it. */
#include "vmm.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIG_KICK SIGUSR1 /* to a vCPU thread: leave KVM_RUN */
#define SIG_WAKE SIGUSR2 /* to the main thread: something ended */

const struct exit_status_row exit_statuses[] = {
	{ EXIT_GUEST_OK, "the guest exited with status 0" },
	{ EXIT_GUEST_FAILED, "the guest exited with a non-zero status" },
	{ EXIT_USAGE,
	  "usage error: a bad option; an image that is missing, empty, too big or not a minivmm guest (without --raw); options that do not fit the image" },
	{ EXIT_HOST,
	  "host or KVM error: no /dev/kvm, RAM the host cannot back, a missing capability, an ioctl failed" },
	{ EXIT_GUEST_CRASH,
	  "the guest crashed: triple fault, unhandled exception, emulation failure, HLT with nothing to wake it, ABI violation, --strict-io" },
	{ EXIT_TIMEOUT, "--timeout expired" },
	{ EXIT_INTERRUPTED,
	  "interrupted (SIGINT/SIGTERM); a second SIGINT exits at once" },
};
const unsigned exit_status_count = ARRAY_SIZE(exit_statuses);

/* In enum order: run_end_row() indexes it, and the unit tests check each row's end. */
const struct run_end_row run_ends[] = {
	{ END_RUNNING, "not-started", EXIT_GUEST_CRASH, "the run never got going" },
	{ END_GUEST_EXIT, "guest-exit", EXIT_GUEST_OK,
	  "the guest made the exit hypercall (status 1 if its status was not 0)" },
	{ END_GUEST_ABORT, "guest-abort", EXIT_GUEST_CRASH,
	  "the guest aborted: a failed assert or an unhandled exception" },
	{ END_GUEST_CRASH, "guest-crash", EXIT_GUEST_CRASH,
	  "triple fault, emulation failure, entry failure or an unexpected exit" },
	{ END_GUEST_HALT, "guest-halt", EXIT_GUEST_CRASH, "HLT, which nothing can wake" },
	{ END_GUEST_PARKED, "guest-parked", EXIT_GUEST_CRASH,
	  "every vCPU parked without the exit hypercall" },
	{ END_ABI_VIOLATION, "abi-violation", EXIT_GUEST_CRASH,
	  "a hypercall or port access the ABI forbids" },
	{ END_UNCLAIMED_IO, "unclaimed-io", EXIT_GUEST_CRASH,
	  "--strict-io: an access no device claims" },
	{ END_NOT_A_GUEST, "not-a-guest", EXIT_USAGE,
	  "the image is not a minivmm guest for this ABI" },
	{ END_TIMEOUT, "timeout", EXIT_TIMEOUT, "--timeout expired" },
	{ END_INTERRUPTED, "interrupted", EXIT_INTERRUPTED, "SIGINT or SIGTERM" },
	{ END_HOST_ERROR, "host-error", EXIT_HOST,
	  "an ioctl or allocation failed on the host" },
	{ END_USAGE, "usage", EXIT_USAGE,
	  "the options or the image do not fit together" },
};
_Static_assert(ARRAY_SIZE(run_ends) == END_COUNT, "one row per enum run_end, in order");

const struct run_end_row *run_end_row(enum run_end end)
{
	return &run_ends[end < END_COUNT ? end : END_RUNNING];
}

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
		__atomic_store_n(&v->kvm_run->immediate_exit, 1, __ATOMIC_SEQ_CST);
		pthread_kill(v->thread, SIG_KICK);
	}
}

void vm_wake_main(struct vm *vm)
{
	pthread_kill(vm->main_thread, SIG_WAKE);
}

void vm_finish(struct vm *vm, enum run_end end, int status, const char *fmt, ...)
{
	va_list ap;
	int first;

	pthread_mutex_lock(&vm->lock);
	first = vm->end == END_RUNNING;
	if (first) {
		vm->status = status;
		va_start(ap, fmt);
		vsnprintf(vm->message, sizeof(vm->message), fmt, ap);
		va_end(ap);
		__atomic_store_n(&vm->end, end, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&vm->lock);
	if (first) {
		kick_all(vm);
		vm_wake_main(vm);
	}
}

int vm_stopping(struct vm *vm)
{
	return __atomic_load_n(&vm->end, __ATOMIC_ACQUIRE) != END_RUNNING;
}

int vm_exit_status(const struct vm *vm)
{
	if (vm->end == END_GUEST_EXIT)
		return vm->status == 0 ? EXIT_GUEST_OK : EXIT_GUEST_FAILED;
	return run_end_row(vm->end)->status;
}

const char *vm_end_reason(const struct vm *vm)
{
	return run_end_row(vm->end)->reason;
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

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&again);
	sigaddset(&again, SIGINT);
	sigaddset(&again, SIGTERM);
	pthread_sigmask(SIG_UNBLOCK, &again, NULL);
	vm_finish(vm, END_INTERRUPTED, 0, "interrupted by SIG%s; stopped the guest",
		  sigabbrev_np(sig));
}

void vm_wait_main(struct vm *vm, int (*done)(void *), void (*tick)(void *), void *cookie,
		  double tick_s, double deadline, double timeout_s)
{
	sigset_t set;

	wait_set(&set);
	while (!done(cookie)) {
		double wait = tick ? tick_s : 1.0;
		struct timespec ts;
		int sig;

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
			tick(cookie);
		sig = sigtimedwait(&set, NULL, &ts);
		if ((sig == SIGINT || sig == SIGTERM) && !vm_stopping(vm))
			interrupted(vm, sig);
	}
}
