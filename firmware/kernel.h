/* Firmware-internal interfaces: CPU setup, traps, paging, page allocator. */
#ifndef FW_KERNEL_H
#define FW_KERNEL_H

#include "firmware.h"

/*
 * Each vCPU has a 16 KiB stack slot: the kernel stack (RSP0, for system
 * calls and traps) below, the #PF stack (IST1) on top, and struct
 * fault_state above that. All of it lies in the vCPU's slot, which is how
 * this_cpu() finds the vCPU from RSP.
 */
#define FW_STACK_SHIFT	  14
#define FW_STACK_BYTES	  (1 << FW_STACK_SHIFT)
#define FW_PF_STACK_BYTES 4096
/* System calls enter through INT3 (#BP), the one software interrupt PVM delivers. */
#define FW_SYSCALL_VECTOR 3

/*
 * Shared with entry.S's #PF fast path (so plain numbers). A user PTE is
 * written with Accessed and Dirty already set, so that no walker (KVM's or
 * the CPU's) has to write them back into the table on the first access.
 */
#define PTE_USER_PAGE 0x67 /* P | W | U | A | D */
/*
 * PML4 slot that maps the page tables themselves (the "self map"): the PTE
 * of va is at 2^PAGING_SELF_BIT | (va >> 9 & ~7), for every lower-half va
 * whose page table exists. Slot 2 is clear of the direct map (RAM up to
 * 1 TiB, PML4 slots 0-1) and of the mmap region.
 */
#define PAGING_SELF_SLOT  2
#define PAGING_SELF_BIT	  40 /* 39 + log2(PAGING_SELF_SLOT) */
#define PF_ERR_USER_READ  4  /* error codes of a not-present fault at CPL3 */
#define PF_ERR_USER_WRITE 6
/*
 * struct fault_state (below) sits at the top of each vCPU's stack slot,
 * just above the #PF stack: every #PF switches to that stack (IST1), so
 * the CPU's frame (error code, RIP, CS, RFLAGS, RSP, SS) always ends where
 * the struct starts and entry.S finds it at RSP + PF_FRAME_BYTES without
 * working out which vCPU it runs on.
 */
#define PF_FRAME_BYTES 48
#define PFS_NEXT       0
#define PFS_END	       8
#define PFS_LO	       16
#define PFS_LEN	       24
#define PFS_PTE_LO     32
#define PFS_BYTES      64

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
#define PTE_A	   (1ULL << 5)
#define PTE_D	   (1ULL << 6)
#define PTE_PS	   (1ULL << 7)
#define PTE_ADDR   0x000ffffffffff000ULL
#define PTE_TABLE  (PTE_P | PTE_W | PTE_U | PTE_A) /* an entry pointing to a table */
_Static_assert(PTE_USER_PAGE == (PTE_P | PTE_W | PTE_U | PTE_A | PTE_D), "PTE_USER_PAGE");

/* A trap frame as built by entry.S: caller-saved registers, then the CPU's. */
struct trapframe {
	uint64_t rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

/*
 * A vCPU's demand-fault state for entry.S's fast path. Pages: a run of
 * zeroed pages taken from the allocator in its order, handed out one per
 * fault (entry.S only advances `next`), stored as the PTE to write
 * (address | PTE_USER_PAGE); pages in [counted, next) are mapped but not
 * yet accounted for (vm.c). Window: the mapping the vCPU last faulted in
 * (len 0: none), whose page tables exist, so its PTEs can be reached
 * through the self map from pte_lo, the PTE of lo. vm.c sets both.
 */
struct fault_state {
	uint64_t next; /* the next page's PTE; next == end: none left */
	uint64_t end;
	uint64_t lo, len;
	uint64_t pte_lo;
	uint64_t counted;
	uint32_t map;	   /* vm.c's slot of the window's mapping */
	uint32_t orphaned; /* another vCPU unmapped the window: pages not logged */
	uint64_t unused;
};
_Static_assert(__builtin_offsetof(struct fault_state, next) == PFS_NEXT, "PFS_NEXT");
_Static_assert(__builtin_offsetof(struct fault_state, end) == PFS_END, "PFS_END");
_Static_assert(__builtin_offsetof(struct fault_state, lo) == PFS_LO, "PFS_LO");
_Static_assert(__builtin_offsetof(struct fault_state, len) == PFS_LEN, "PFS_LEN");
_Static_assert(__builtin_offsetof(struct fault_state, pte_lo) == PFS_PTE_LO,
	       "PFS_PTE_LO");
_Static_assert(sizeof(struct fault_state) == PFS_BYTES && PFS_BYTES % 16 == 0,
	       "PFS_BYTES");

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
	int snapshot; /* ABI 5: --snapshot wants one (minivmm,snapshot) */
	int tdp;      /* the VMM says the second level is EPT/NPT, not shadow paging */
	uint32_t numa_nodes; /* /numa: its nodes, checked (0: no /numa) */
	struct fw_numa_node numa[MVM_NUMA_MAX_NODES];
	char numa_policy[16];
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
/* Ask for a snapshot here: MVM_SNAP_* (what the VMM wrote into the struct). */
uint32_t hc_snapshot(uint64_t checksum, uint64_t pass);

/* cpu.c */
void cpu_init(uint32_t index);
void idt_init(void);			      /* build and load (vCPU 0) */
void idt_pf_variant(uint32_t vcpus, int tdp); /* the #PF fast path for the paging */
void idt_load(void);			      /* load the IDT vCPU 0 built */

/* bootinfo.c: parse the FDT at `fdt`; aborts the guest on malformed input. */
void bootinfo_parse(const void *fdt);

/* pmm.c: physical pages, LIFO reuse. */
void pmm_init(uint64_t start, uint64_t end);
uint64_t pmm_alloc(void); /* a zeroed page's physical address, aborts when out */
/* A zeroed page for a page table, from the top of RAM; aborts when out. */
uint64_t pmm_alloc_table(void);
/* Free pages: zeroed by the VMM in one hypercall, then pushed run by run. */
void pmm_free_runs(const struct mvm_zero_run *runs, uint32_t n);
uint64_t pmm_free_bytes(void);
/* Contiguous never-used pages for the caller to keep: the address, 0 when short. */
uint64_t pmm_alloc_fresh(uint64_t bytes);
/* Up to max contiguous pages in allocation order: returns how many, first at *pa. */
uint64_t pmm_alloc_run(uint64_t max, uint64_t *pa);
/* Gives back the unused tail [pa, pa + n pages) of the last pmm_alloc_run. */
void pmm_return_run(uint64_t pa, uint64_t n);

/* paging.c */
void paging_init(void); /* build the direct map and load it (vCPU 0) */
void paging_load(void); /* load vCPU 0's tables */
/* The 4 KiB PTE for va, building missing tables with alloc; NULL if alloc is NULL. */
uint64_t *paging_walk(uint64_t va, uint64_t (*alloc)(void));
/* PTE loops: n entries from pte up, or from last down (see paging.c). */
void pte_fill(uint64_t *pte, uint64_t n, uint64_t v); /* all = v */
void pte_fill_run(uint64_t *pte, uint64_t n,
		  uint64_t entry); /* n > 0 pages from entry's */
uint64_t pte_count_down(const uint64_t *last, uint64_t max,
			uint64_t v); /* how many = v */
/* How many map entry's page and the pages below it, down from last (at most max). */
uint64_t pte_run_down(const uint64_t *last, uint64_t max, uint64_t entry);
/* Where va's PTE appears through the self map (valid once its page table exists). */
static inline uint64_t *paging_self_pte(uint64_t va)
{
	return (uint64_t *)(1ULL << PAGING_SELF_BIT | (va >> 9 & ~7ULL));
}

/* vm.c: the user mmap region and its #PF handler. */
int vm_fault(uint64_t va, uint64_t error);
long vm_mmap(uint64_t len, uint64_t flags);
long vm_munmap(uint64_t va, uint64_t len);
void vm_stats(struct fw_stats *out); /* this vCPU's counters, up to date */

/* syscall.c */
long syscall_dispatch(struct trapframe *tf);

/* trap.c */
void trap_dispatch(struct trapframe *tf);
void fw_enter_user(uint64_t rip, uint64_t rsp, uint64_t arg);

/* vCPU cpu's demand-fault state: the top of its stack slot, above its #PF stack. */
static inline struct fault_state *fault_state_of(uint32_t cpu)
{
	extern char fw_stacks[];

	return (struct fault_state *)(fw_stacks + ((uint64_t)cpu + 1) * FW_STACK_BYTES) -
	       1;
}
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

#define FW_ASSERT(cond)                                                                \
	do {                                                                           \
		if (!(cond))                                                           \
			hc_abort_frame(__FILE__, __LINE__, "assertion failed: " #cond, \
				       0, 0);                                          \
	} while (0)

#endif /* __ASSEMBLER__ */
#endif /* FW_KERNEL_H */
