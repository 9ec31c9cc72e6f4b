/* How a run ended, for a person: the reason, what the guest said last, what it left unclaimed. */
#include "report.h"

#include <string.h>

void platform_print(const struct platform *p, FILE *f)
{
	fprintf(f, "platform: %s, %s paging, %s, TSC %u kHz%s\n", p->kvm,
		p->tdp ? "tdp" : "shadow",
		p->pre_fault ? "KVM_PRE_FAULT_MEMORY" : "no KVM_PRE_FAULT_MEMORY",
		p->tsc_khz,
		p->emulated
			? ", EMULATED host (QEMU TCG): KVM's counts are real, times are an emulated machine's"
			: "");
}

static void unclaimed_print(const char *what, const struct io_bus *bus, FILE *f)
{
	struct io_unclaimed u = io_bus_unclaimed_counts(bus);

	if (u.count)
		fprintf(f, "minivmm: %llu unclaimed %s access%s (first: %s 0x%llx)\n",
			(unsigned long long)u.count, what, u.count == 1 ? "" : "es",
			u.first_write ? "write to" : "read from",
			(unsigned long long)u.first_addr);
}

/* Quiet, and the guest failed: what it said last is how the user learns why. */
static void console_tail_print(struct console *c, FILE *f)
{
	char tail[1024];
	size_t n = console_tail(c, tail, sizeof(tail));
	const char *from = memchr(tail, '\n', n);

	from = from && n == sizeof(tail) ? from + 1 : tail;
	if (n)
		fprintf(f, "minivmm: the guest's last console output:\n%.*s%s",
			(int)(n - (size_t)(from - tail)), from,
			tail[n - 1] == '\n' ? "" : "\n");
}

void ending_print(const struct run_view *v, int status, int verbose, int timeline)
{
	uint64_t dropped = console_counts(v->console).dropped;

	fflush(stdout);
	if (status != EXIT_GUEST_OK && !verbose)
		console_tail_print(v->console, stderr);
	if (status != EXIT_GUEST_OK || verbose)
		fprintf(stderr, "minivmm: %s\n", vm_end_message(v->vm));
	if (verbose) {
		unclaimed_print("port I/O", vm_bus(v->vm, 0), stderr);
		unclaimed_print("MMIO", vm_bus(v->vm, 1), stderr);
		if (dropped)
			fprintf(stderr,
				"minivmm: dropped %llu bytes of guest console output past the %llu MiB limit\n",
				(unsigned long long)dropped, CONSOLE_LIMIT_BYTES >> 20);
	}
	if (timeline && verbose && timeline_time(v->tl, PHASE_GUEST_ENTRY) > 0) {
		struct tl_summary s;

		run_summary(v, &s);
		timeline_print(v->tl, &s,
			       status != EXIT_GUEST_OK ? vm_end_reason(v->vm) : NULL,
			       stdout);
		fflush(stdout);
	}
}
