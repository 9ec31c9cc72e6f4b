/* The user mmap region: anonymous mappings, populated up front or on demand. */
#include "kernel.h"

#define MMAP_BASE    0x100000000000ULL /* 16 TiB: clear of the direct map */
#define MMAP_END     0x200000000000ULL
#define MAX_MAPPINGS 64

struct mapping {
	uint64_t start, end; /* [start, end), page-aligned */
};

/* Live mappings, kept dense: the #PF path scans only `nmaps` entries. */
static struct mapping maps[MAX_MAPPINGS];
static int nmaps;
static volatile int vm_lock;
struct fw_stats fw_stats;

static void lock(void)
{
	while (__atomic_exchange_n(&vm_lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void unlock(void)
{
	__atomic_store_n(&vm_lock, 0, __ATOMIC_RELEASE);
}

static struct mapping *find(uint64_t va)
{
	for (int i = 0; i < nmaps; i++)
		if (va >= maps[i].start && va < maps[i].end)
			return &maps[i];
	return NULL;
}

/* Lowest gap of `len` bytes: the same sizes mapped in the same order reuse addresses. */
static uint64_t first_fit(uint64_t len)
{
	uint64_t at = MMAP_BASE;

	for (;;) {
		int moved = 0;

		for (int i = 0; i < nmaps; i++) {
			if (at < maps[i].end && at + len > maps[i].start) {
				at = maps[i].end;
				moved = 1;
			}
		}
		if (!moved)
			return at + len <= MMAP_END ? at : 0;
	}
}

static void map_page(uint64_t *pte)
{
	uint64_t pa = pmm_alloc();

	*pte = pa | PTE_P | PTE_W | PTE_U;
	fw_stats.pages_mapped++;
	fw_stats.pfn_sum += pa >> PAGE_SHIFT;
}

/* Populate: one page-table walk per 2 MiB, then a tight loop over its entries. */
static void populate(uint64_t start, uint64_t end)
{
	uint64_t va = start;

	while (va < end) {
		uint64_t *pte = paging_walk(va, 1);
		uint64_t stop = (va | ((2ULL << 20) - 1)) + 1;

		if (stop > end)
			stop = end;
		for (; va < stop; va += PAGE_SIZE, pte++)
			map_page(pte);
	}
}

long vm_mmap(uint64_t len, uint64_t flags)
{
	uint64_t at;

	if (len == 0 || len > MMAP_END - MMAP_BASE ||
	    (flags & ~(uint64_t)FW_MAP_POPULATE))
		return -FW_EINVAL;
	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	lock();
	at = first_fit(len);
	if (!at || nmaps == MAX_MAPPINGS || len > pmm_free_bytes()) {
		unlock();
		return -FW_ENOMEM;
	}
	maps[nmaps].start = at;
	maps[nmaps].end = at + len;
	nmaps++;
	unlock();
	if (flags & FW_MAP_POPULATE)
		populate(at, at + len);
	return (long)at;
}

/* Unmaps a whole mapping, last page first (see pmm.c for why the order matters). */
long vm_munmap(uint64_t va, uint64_t len)
{
	struct mapping *m;
	uint64_t end;

	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	lock();
	m = find(va);
	if (!m || m->start != va || m->end != va + len) {
		unlock();
		return -FW_EINVAL;
	}
	end = m->end;
	*m = maps[--nmaps];
	unlock();
	for (uint64_t p = end; p > va;) {
		uint64_t *pte;

		p -= PAGE_SIZE;
		pte = paging_walk(p, 0);
		if (pte && (*pte & PTE_P)) {
			pmm_free(*pte & PTE_ADDR);
			*pte = 0;
			fw_stats.pages_freed++;
		}
	}
	paging_flush(va, len / PAGE_SIZE);
	return 0;
}

/* #PF: map a fresh page for a not-present fault inside a live mapping. */
int vm_fault(uint64_t va, uint64_t error)
{
	uint64_t *pte;

	if (error & PTE_P)
		return -1; /* protection violation, not a missing page */
	if (va < MMAP_BASE || va >= MMAP_END || !find(va))
		return -1;
	pte = paging_walk(va, 1);
	if (*pte & PTE_P)
		return 0; /* another vCPU mapped it first */
	map_page(pte);
	fw_stats.page_faults++;
	return 0;
}
