/* Trap dispatch: system calls, demand paging, and everything else as a guest crash. */
#include "kernel.h"

static const char *const vector_names[32] = {
	"#DE divide error",
	"#DB debug",
	"NMI",
	"#BP breakpoint",
	"#OF overflow",
	"#BR bound range",
	"#UD invalid opcode",
	"#NM device not available",
	"#DF double fault",
	"coprocessor overrun",
	"#TS invalid TSS",
	"#NP segment not present",
	"#SS stack fault",
	"#GP general protection",
	"#PF page fault",
	"reserved",
	"#MF x87 error",
	"#AC alignment check",
	"#MC machine check",
	"#XM SIMD error",
	"#VE virtualization",
	"#CP control protection",
};

void trap_dispatch(struct trapframe *tf)
{
	char msg[160];
	const char *name;
	uint64_t cr2 = 0;

	if (tf->vector == FW_SYSCALL_VECTOR) {
		tf->rax = (uint64_t)syscall_dispatch(tf);
		return;
	}
	if (tf->vector == 14) {
		cr2 = read_cr2();
		if (vm_fault(cr2, tf->error) == 0)
			return;
	}
	name = tf->vector < 32 ? vector_names[tf->vector] : NULL;
	if (!name)
		name = tf->vector < 32 ? "reserved exception" : "unexpected interrupt";
	fw_snprintf(msg, sizeof(msg), "unhandled exception %lu (%s) at CPL%lu",
		    tf->vector, name, tf->cs & 3);
	hc_abort_frame(__FILE__, __LINE__, msg, tf, cr2);
}
