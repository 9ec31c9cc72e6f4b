/* The end of a run: why it ended, the exit status that follows, and how threads learn of it. */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const struct exit_status_row exit_statuses[] = {
	{ EXIT_GUEST_OK, "the guest exited with status 0" },
	{ EXIT_GUEST_FAILED, "the guest exited with a non-zero status" },
	{ EXIT_USAGE,
	  "usage error: a bad option; an image that is missing, empty, too big or not a minivmm guest (without --raw); options that do not fit the image; the guest's own usage error (it exited with status 2)" },
	{ EXIT_HOST,
	  "host or KVM error: no /dev/kvm, RAM the host cannot back, a missing capability, an ioctl failed" },
	{ EXIT_GUEST_CRASH,
	  "the guest crashed: triple fault, unhandled exception, emulation failure, HLT with nothing to wake it, ABI violation, a guest limit, --strict-io" },
	{ EXIT_TIMEOUT, "--timeout expired" },
	{ EXIT_INTERRUPTED,
	  "interrupted (SIGINT/SIGTERM); a second SIGINT exits at once" },
	{ EXIT_OUTPUT_CLOSED,
	  "stdout was closed by its reader (| head): the run stopped, as SIGPIPE would stop it (128 + 13); the results are still written" },
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
	{ END_GUEST_LIMIT, "guest-limit", EXIT_GUEST_CRASH,
	  "the guest sent more than the VMM keeps (records, batches: the limits in the man page)" },
	{ END_UNCLAIMED_IO, "unclaimed-io", EXIT_GUEST_CRASH,
	  "--strict-io: an access no device claims" },
	{ END_NOT_A_GUEST, "not-a-guest", EXIT_USAGE,
	  "the image is not a minivmm guest for this ABI" },
	{ END_TIMEOUT, "timeout", EXIT_TIMEOUT, "--timeout expired" },
	{ END_INTERRUPTED, "interrupted", EXIT_INTERRUPTED, "SIGINT or SIGTERM" },
	{ END_OUTPUT_CLOSED, "output-closed", EXIT_OUTPUT_CLOSED,
	  "stdout's reader is gone (a pipe or socket closed at its end)" },
	{ END_HOST_ERROR, "host-error", EXIT_HOST,
	  "an ioctl or allocation failed on the host" },
	{ END_USAGE, "usage", EXIT_USAGE,
	  "the options or the image do not fit together" },
	{ END_GUEST_USAGE, "guest-usage", EXIT_USAGE,
	  "the guest exited with status 2 (MVM_EXIT_USAGE): its arguments are wrong" },
	{ END_SNAPSHOT, "snapshot", EXIT_GUEST_OK,
	  "--snapshot: the VM was saved where the guest asked, and the run ended there" },
	{ END_GUEST_PANIC, "guest-panic", EXIT_GUEST_CRASH,
	  "a Linux guest's kernel panicked (its last console lines are in the message)" },
	{ END_GUEST_RESET, "guest-reset", EXIT_GUEST_OK,
	  "a Linux guest reset the machine (i8042 0xFE) without a panic or an exit status" },
	{ END_PLATFORM, "platform", EXIT_HOST,
	  "this KVM cannot run the guest in useful time (--kernel on PVM without --kernel-anyway)" },
};
_Static_assert(ARRAY_SIZE(run_ends) == END_COUNT, "one row per enum run_end, in order");

const struct run_end_row *run_end_row(enum run_end end)
{
	return &run_ends[end < END_COUNT ? end : END_RUNNING];
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

void vm_set_end(struct vm *vm, enum run_end end, const char *fmt, va_list ap)
{
	vm->end = end;
	vsnprintf(vm->message, sizeof(vm->message), fmt, ap);
}

enum run_end vm_end(const struct vm *vm)
{
	return vm->end;
}

int vm_guest_status(const struct vm *vm)
{
	return vm->status;
}

const char *vm_end_message(const struct vm *vm)
{
	return vm->message;
}

void vm_set_report(struct vm *vm, const char *report)
{
	pthread_mutex_lock(&vm->lock);
	snprintf(vm->report, sizeof(vm->report), "%s", report);
	pthread_mutex_unlock(&vm->lock);
}

const char *vm_report(const struct vm *vm)
{
	return vm->report;
}

const char *vm_end_reason(const struct vm *vm)
{
	return run_end_row(vm->end)->reason;
}
