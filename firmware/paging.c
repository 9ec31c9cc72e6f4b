/* Page tables: the direct map of all guest RAM and 4 KiB user mappings. */
#include "kernel.h"

static uint64_t *pml4;

/* The table *entry points to, made with alloc if missing; NULL past a large page. */
static uint64_t *table_at(uint64_t *entry, uint64_t (*alloc)(void))
{
	if (!(*entry & PTE_P)) {
		if (!alloc)
			return NULL;
		*entry = alloc() | PTE_TABLE;
	}
	return *entry & PTE_PS ? NULL : (uint64_t *)(*entry & PTE_ADDR);
}

static int has_1g_pages(void)
{
	uint32_t a, b, c, d;

	cpuid(0x80000000, &a, &b, &c, &d);
	if (a < 0x80000001)
		return 0;
	cpuid(0x80000001, &a, &b, &c, &d);
	return (d >> 26) & 1;
}

/*
 * Identity-map [0, mem_bytes) with the largest pages the CPU offers: guest
 * kernel code is emulated on PVM, so fewer entries mean a faster boot. The
 * first 2 MiB use 4 KiB pages so that page 0 stays unmapped and a NULL
 * dereference faults. The map is user-accessible (U=1): workloads run at
 * CPL3 inside the same image and read the boot info through it. These
 * tables come from the bottom of RAM (pmm_alloc): until they are loaded,
 * only the VMM's first GiB is mapped. PML4 slot PAGING_SELF_SLOT points at
 * the PML4 itself (supervisor only), which maps every page table.
 */
void paging_init(void)
{
	const uint64_t flags = PTE_P | PTE_W | PTE_U | PTE_A | PTE_D;
	uint64_t mem = fw_boot.mem_bytes, pa = 0;
	int gig = has_1g_pages();
	uint64_t *pt;

	FW_ASSERT(mem <= (uint64_t)PAGING_SELF_SLOT << 39);
	pml4 = (uint64_t *)pmm_alloc();
	pml4[PAGING_SELF_SLOT] = (uintptr_t)pml4 | PTE_P | PTE_W | PTE_A;
	pt = table_at(table_at(table_at(&pml4[0], pmm_alloc), pmm_alloc), pmm_alloc);
	for (int i = 1; i < 512; i++)
		pt[i] = (uint64_t)i * PAGE_SIZE | flags;
	pa = 2ULL << 20;
	while (pa < mem) {
		uint64_t *pdpt = table_at(&pml4[(pa >> 39) & 511], pmm_alloc);
		uint64_t *pde;

		if (gig && (pa & ((1ULL << 30) - 1)) == 0 && mem - pa >= (1ULL << 30)) {
			pdpt[(pa >> 30) & 511] = pa | flags | PTE_PS;
			pa += 1ULL << 30;
			continue;
		}
		pde = table_at(&pdpt[(pa >> 30) & 511], pmm_alloc);
		pde[(pa >> 21) & 511] = pa | flags | PTE_PS;
		pa += 2ULL << 20;
	}
	paging_load();
}

void paging_load(void)
{
	write_cr3((uintptr_t)pml4);
}

uint64_t *paging_walk(uint64_t va, uint64_t (*alloc)(void))
{
	uint64_t *t = pml4;

	for (int shift = 39; shift > 12; shift -= 9) {
		t = table_at(&t[(va >> shift) & 511], alloc);
		if (!t)
			return NULL;
	}
	return &t[(va >> 12) & 511];
}

/*
 * Loops over PTEs, in string instructions: guest kernel code is emulated
 * on PVM, where a REP STOSQ or REPE SCASQ is decoded once (KVM counts it as
 * one instruction) but still costs about an instruction's time per entry.
 * All leave DF clear.
 */

/* Stores v into n entries from pte up. */
void pte_fill(uint64_t *pte, uint64_t n, uint64_t v)
{
	__asm__ volatile("rep stosq" : "+D"(pte), "+c"(n) : "a"(v) : "memory");
}

/* Maps n > 0 consecutive pages from entry on (3 instructions a page). */
void pte_fill_run(uint64_t *pte, uint64_t n, uint64_t entry)
{
	__asm__ volatile("1: stosq\n\t"
			 "add %[page], %%rax\n\t"
			 "loop 1b"
			 : "+D"(pte), "+c"(n), "+a"(entry)
			 : [page] "i"(PAGE_SIZE)
			 : "memory", "cc");
}

/* How many of the max entries from *last down equal v (one REPE SCASQ). */
uint64_t pte_count_down(const uint64_t *last, uint64_t max, uint64_t v)
{
	uint64_t left = max;
	int differs;

	__asm__ volatile("std\n\t"
			 "repe scasq\n\t"
			 "cld"
			 : "+D"(last), "+c"(left), "=@ccne"(differs)
			 : "a"(v)
			 : "memory");
	return max - left - (uint64_t)differs;
}

/* How many of the max entries from *last down map entry's page and the ones below it. */
uint64_t pte_run_down(const uint64_t *last, uint64_t max, uint64_t entry)
{
	uint64_t left = max;

	__asm__ volatile("std\n\t"
			 "1: scasq\n\t"
			 "jne 2f\n\t"
			 "sub %[page], %%rax\n\t"
			 "loop 1b\n\t"
			 "2: cld"
			 : "+D"(last), "+c"(left), "+a"(entry)
			 : [page] "i"(PAGE_SIZE)
			 : "memory", "cc");
	return max - left;
}
