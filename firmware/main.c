/* Firmware entry in C: set up each vCPU, read the boot info, map memory, drop to CPL3. */
#include "kernel.h"

extern char _end[];
void guest_main(uint64_t cpu); /* guest/: the CPL3 entry of every vCPU */

#define USER_STACK_BYTES (64 * 1024)

static uint64_t user_stacks[FW_MAX_VCPUS]; /* top of each vCPU's CPL3 stack */
static volatile int boot_done;

/*
 * Every vCPU starts here at once (the VMM sets all their registers). vCPU 0
 * does the one-time work; the others wait for it, then load the shared IDT
 * and page tables. Guest kernel code is emulated on PVM, so the wait is a
 * short spin rather than anything smarter.
 */
void fw_main(const void *fdt, uint64_t cpu, uint64_t ncpus, uint64_t flags);
void fw_main(const void *fdt, uint64_t cpu, uint64_t ncpus, uint64_t flags)
{
	cpu_init((uint32_t)cpu);
	if (cpu == 0) {
		idt_init();
		bootinfo_parse(fdt);
		fw_boot.snapshot = (flags & MVM_ENTRY_SNAPSHOT) != 0;
		FW_ASSERT(ncpus == fw_boot.vcpus);
		idt_pf_variant(fw_boot.vcpus, fw_boot.tdp);
		pmm_init((uintptr_t)_end, fw_boot.mem_bytes);
		paging_init();
		for (uint32_t i = 0; i < fw_boot.vcpus; i++) {
			uint64_t base = pmm_alloc_fresh(USER_STACK_BYTES);

			FW_ASSERT(base);
			user_stacks[i] = base + USER_STACK_BYTES;
		}
		__atomic_store_n(&boot_done, 1, __ATOMIC_RELEASE);
	} else {
		while (!__atomic_load_n(&boot_done, __ATOMIC_ACQUIRE))
			__builtin_ia32_pause();
		idt_load();
		paging_load();
	}
	if (cpu == 0) {
		uint32_t lo, hi;

		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		hc_mark(MVM_MARK_FIRMWARE_READY, (uint64_t)hi << 32 | lo);
	}
	/* As if called: the ABI wants RSP + 8 16-byte aligned at function entry. */
	fw_enter_user((uintptr_t)guest_main, user_stacks[cpu] - 8, cpu);
}
