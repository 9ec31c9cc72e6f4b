/* Hypercalls: one 32-bit OUT of an argument struct's address (minivmm_abi.h). */
#include "kernel.h"

/* Arguments live on the kernel stack, which is in the identity-mapped image. */
static void hcall(void *args)
{
	uint32_t gpa = (uint32_t)(uintptr_t)args;

	__asm__ volatile("outl %0, %1"
			 :
			 : "a"(gpa), "Nd"((uint16_t)MVM_HC_PORT)
			 : "memory");
}

void hc_console(const char *buf, uint64_t len)
{
	struct mvm_hc_console a = {
		.hdr = { MVM_HC_CONSOLE, sizeof(a) },
		.buf_gpa = (uintptr_t)buf,
		.len = len,
	};

	hcall(&a);
}

_Noreturn void hc_exit(int status)
{
	struct mvm_hc_exit a = { .hdr = { MVM_HC_EXIT, sizeof(a) }, .status = status };

	for (;;)
		hcall(&a);
}

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	memcpy(dst, src, n);
	dst[n] = '\0';
}

_Noreturn void hc_abort_frame(const char *file, int line, const char *msg,
			      const struct trapframe *tf, uint64_t cr2)
{
	struct mvm_hc_abort a = {
		.hdr = { MVM_HC_ABORT, sizeof(a) },
		.line = (uint32_t)line,
		.vector = tf ? (uint32_t)tf->vector : MVM_ABORT_NO_VECTOR,
		.error_code = tf ? tf->error : 0,
		.rip = tf ? tf->rip : 0,
		.cr2 = cr2,
	};

	copy_str(a.file, sizeof(a.file), file);
	copy_str(a.msg, sizeof(a.msg), msg);
	for (;;)
		hcall(&a);
}

void __stack_chk_fail(void);
void __stack_chk_fail(void)
{
	hc_abort_frame(__FILE__, __LINE__, "stack protector: stack smashed", 0, 0);
}

void hc_records(uint32_t kind, const void *recs, uint32_t count)
{
	struct mvm_hc_records a = {
		.hdr = { MVM_HC_RECORDS, sizeof(a) },
		.kind = kind,
		.count = count,
		.recs_gpa = (uintptr_t)recs,
	};

	hcall(&a);
}

void hc_zero(const struct mvm_zero_run *runs, uint32_t count)
{
	struct mvm_hc_zero a = {
		.hdr = { MVM_HC_ZERO, sizeof(a) },
		.count = count,
		.runs_gpa = (uintptr_t)runs,
	};

	hcall(&a);
}

void hc_mark(uint32_t mark, uint64_t tsc)
{
	struct mvm_hc_mark a = {
		.hdr = { MVM_HC_MARK, sizeof(a) },
		.mark = mark,
		.vcpu = this_cpu(),
		.tsc = tsc,
	};

	hcall(&a);
}

uint32_t hc_snapshot(uint64_t checksum, uint64_t pass)
{
	volatile struct mvm_hc_snapshot a = {
		.hdr = { MVM_HC_SNAPSHOT, sizeof(a) },
		.vcpu = this_cpu(),
		.result = MVM_SNAP_NONE,
		.checksum = checksum,
		.pass = pass,
	};

	/* The VMM writes the result into a: read it after the OUT (volatile). */
	hcall((void *)&a);
	return a.result;
}

_Noreturn void hc_park(void)
{
	struct mvm_hc_hdr a = { MVM_HC_PARK, sizeof(a) };

	for (;;)
		hcall(&a);
}
