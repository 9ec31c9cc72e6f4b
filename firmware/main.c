/* Firmware entry in C: set up the CPU, read the boot info, map memory, drop to CPL3. */
#include "kernel.h"

extern char _end[];
void guest_main(void); /* guest/: the CPL3 workload entry */

#define USER_STACK_BYTES (64 * 1024)
static char user_stack[USER_STACK_BYTES] __attribute__((aligned(16)));

/* Boot stacks for every vCPU, indexed by vCPU (entry.S). */
char fw_stacks[FW_MAX_VCPUS * FW_STACK_BYTES] __attribute__((aligned(4096)));

void fw_main(const void *fdt, uint64_t cpu, uint64_t ncpus);
void fw_main(const void *fdt, uint64_t cpu, uint64_t ncpus)
{
	(void)ncpus;
	cpu_init((uint32_t)cpu);
	if (cpu != 0)
		hc_park(); /* secondary vCPUs have no work yet */
	idt_init();
	bootinfo_parse(fdt);
	pmm_init((uintptr_t)_end, fw_boot.mem_bytes);
	paging_init();
	/* As if called: the ABI wants RSP + 8 16-byte aligned at function entry. */
	fw_enter_user((uintptr_t)guest_main,
		      (uintptr_t)user_stack + USER_STACK_BYTES - 8);
}
