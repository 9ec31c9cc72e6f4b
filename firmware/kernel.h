/* Firmware-internal interfaces: CPU setup, traps, paging, page allocator. */
#ifndef FW_KERNEL_H
#define FW_KERNEL_H

#include "firmware.h"

#define FW_STACK_SHIFT 14 /* 16 KiB kernel stack per vCPU */
#define FW_STACK_BYTES (1 << FW_STACK_SHIFT)
/* System calls enter through INT3 (#BP), the one software interrupt PVM delivers. */
#define FW_SYSCALL_VECTOR 3

#ifndef __ASSEMBLER__
#include "firmware.h"
#include "minivmm_abi.h"

#define PAGE_SIZE  4096ULL
#define PT_SPAN	   (2ULL << 20)	     /* what one page table maps */
#define MMAP_BASE  0x100000000000ULL /* user mappings: 16 TiB, clear of the direct map */
#define PAGE_SHIFT 12
#define PTE_P	   (1ULL << 0)
#define PTE_W	   (1ULL << 1)
#define PTE_U	   (1ULL << 2)
#define PTE_PS	   (1ULL << 7)
#define PTE_ADDR   0x000ffffffffff000ULL

/* A trap frame as built by entry.S: caller-saved registers, then the CPU's. */
struct trapframe {
	uint64_t rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

/* Per-vCPU state; gs/fs-free: found by index. */
struct cpu {
	uint64_t gdt[10];
	uint8_t tss[104];
	uint32_t index;
};

/* What the firmware learned at boot; read-only once workloads run. */
struct boot {
	uint64_t mem_bytes;
	uint32_t vcpus;
	uint32_t tsc_khz;
	int eager_touch;
	int argc;
	const char *argv[FW_MAX_ARGS + 1];
	char argbuf[FW_ARGBUF_BYTES];
};
extern struct boot fw_boot;

/* hcall.c: the hypercalls; hc_exit, hc_abort_frame and hc_park do not return. */
void hc_console(const char *buf, uint64_t len);
_Noreturn void hc_exit(int status);
_Noreturn void hc_abort_frame(const char *file, int line, const char *msg,
			      const struct trapframe *tf, uint64_t cr2);
void hc_records(uint32_t kind, const void *recs, uint32_t count);
_Noreturn void hc_park(void);
void hc_zero(const struct mvm_zero_run *runs, uint32_t count);
void hc_mark(uint32_t mark, uint64_t tsc);

/* cpu.c */
void cpu_init(uint32_t index);
void idt_init(void); /* build and load (vCPU 0) */
void idt_load(void); /* load the IDT vCPU 0 built */

/* bootinfo.c: parse the FDT at `fdt`; aborts the guest on malformed input. */
void bootinfo_parse(const void *fdt);

/* pmm.c: physical pages, LIFO reuse. */
void pmm_init(uint64_t start, uint64_t end);
uint64_t pmm_alloc(void); /* a zeroed page's physical address, aborts when out */
/* Free pages: zeroed by the VMM in one hypercall, then pushed run by run. */
void pmm_free_runs(const struct mvm_zero_run *runs, uint32_t n);
uint64_t pmm_free_bytes(void);
/* bytes of contiguous never-used pages (physical address), 0 when short. */
uint64_t pmm_alloc_fresh(uint64_t bytes);
/* Up to max contiguous pages in allocation order: returns how many, first at *pa. */
uint64_t pmm_alloc_run(uint64_t max, uint64_t *pa);

/* paging.c */
void paging_init(void); /* build the direct map and load it (vCPU 0) */
void paging_load(void); /* load vCPU 0's tables */
uint64_t *paging_walk(uint64_t va, int alloc); /* the 4 KiB PTE for va */
void paging_flush(uint64_t va, uint64_t pages);

/* vm.c: the user mmap region and its #PF handler. */
int vm_fault(uint64_t va, uint64_t error);
long vm_mmap(uint64_t len, uint64_t flags);
long vm_munmap(uint64_t va, uint64_t len);
extern struct fw_stats
	fw_stats[FW_MAX_VCPUS]; /* per vCPU: no sharing on the fault path */

/* syscall.c */
long syscall_dispatch(struct trapframe *tf);

/* trap.c */
void trap_dispatch(struct trapframe *tf);
void fw_enter_user(uint64_t rip, uint64_t rsp, uint64_t arg);
/* This vCPU's index, from the kernel stack in use: valid at CPL0 only. */
static inline uint32_t this_cpu(void)
{
	extern char fw_stacks[];
	uint64_t rsp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(rsp));
	return (uint32_t)((rsp - (uintptr_t)fw_stacks) >> FW_STACK_SHIFT);
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr3(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr"
			 :
			 : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c,
			 uint32_t *d)
{
	__asm__ volatile("cpuid"
			 : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
			 : "a"(leaf), "c"(0));
}

static inline void invlpg(uint64_t va)
{
	__asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
}

#define FW_ASSERT(cond)                                                                \
	do {                                                                           \
		if (!(cond))                                                           \
			hc_abort_frame(__FILE__, __LINE__, "assertion failed: " #cond, \
				       0, 0);                                          \
	} while (0)

#endif /* __ASSEMBLER__ */
#endif /* FW_KERNEL_H */
