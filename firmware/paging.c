/* Page tables: the direct map of all guest RAM and 4 KiB user mappings. */
#include "kernel.h"

static uint64_t *pml4;

static uint64_t *table_at(uint64_t *entry, int alloc)
{
	if (!(*entry & PTE_P)) {
		if (!alloc)
			return NULL;
		*entry = pmm_alloc() | PTE_P | PTE_W | PTE_U;
	}
	return (uint64_t *)(*entry & PTE_ADDR);
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
 * CPL3 inside the same image and read the boot info through it.
 */
void paging_init(void)
{
	const uint64_t flags = PTE_P | PTE_W | PTE_U;
	uint64_t mem = fw_boot.mem_bytes, pa = 0;
	int gig = has_1g_pages();
	uint64_t *pt;

	pml4 = (uint64_t *)pmm_alloc();
	pt = table_at(table_at(table_at(&pml4[0], 1), 1), 1);
	for (int i = 1; i < 512; i++)
		pt[i] = (uint64_t)i * PAGE_SIZE | flags;
	pa = 2ULL << 20;
	while (pa < mem) {
		uint64_t *pdpt = table_at(&pml4[(pa >> 39) & 511], 1);
		uint64_t *pde;

		if (gig && (pa & ((1ULL << 30) - 1)) == 0 && mem - pa >= (1ULL << 30)) {
			pdpt[(pa >> 30) & 511] = pa | flags | PTE_PS;
			pa += 1ULL << 30;
			continue;
		}
		pde = table_at(&pdpt[(pa >> 30) & 511], 1);
		pde[(pa >> 21) & 511] = pa | flags | PTE_PS;
		pa += 2ULL << 20;
	}
	paging_load();
}

void paging_load(void)
{
	write_cr3((uintptr_t)pml4);
}

uint64_t *paging_walk(uint64_t va, int alloc)
{
	uint64_t *t = pml4;

	for (int shift = 39; shift > 12; shift -= 9) {
		t = table_at(&t[(va >> shift) & 511], alloc);
		if (!t)
			return NULL;
	}
	return &t[(va >> 12) & 511];
}

/* Past this many pages one CR3 reload is cheaper than INVLPG per page (as Linux). */
#define FLUSH_CEILING_PAGES 33

void paging_flush(uint64_t va, uint64_t pages)
{
	if (pages > FLUSH_CEILING_PAGES) {
		write_cr3(read_cr3());
		return;
	}
	for (uint64_t i = 0; i < pages; i++)
		invlpg(va + i * PAGE_SIZE);
}
