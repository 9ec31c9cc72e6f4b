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
static uint64_t hint_lo, hint_hi; /* the mapping the last fault hit */
static uint64_t pt_tag = ~0ULL;	  /* va >> 21 of the page table in pt_cache */
static uint64_t *pt_cache;	  /* page tables are never freed: stays valid */
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

/*
 * Populate: one page-table walk per 2 MiB, pages taken a contiguous run at
 * a time, then a tight loop writing entries (emulated on PVM: every
 * instruction here costs ~0.5 us).
 */
static void populate(uint64_t start, uint64_t end)
{
	uint64_t va = start;

	while (va < end) {
		uint64_t *pte = paging_walk(va, 1);
		uint64_t stop = (va | ((2ULL << 20) - 1)) + 1;

		if (stop > end)
			stop = end;
		while (va < stop) {
			uint64_t pa, n = pmm_alloc_run((stop - va) / PAGE_SIZE, &pa);
			uint64_t entry = pa | PTE_P | PTE_W | PTE_U;

			for (uint64_t k = 0; k < n; k++, entry += PAGE_SIZE)
				*pte++ = entry;
			va += n * PAGE_SIZE;
			fw_stats.pages_mapped += n;
			fw_stats.pfn_sum += n * (pa >> PAGE_SHIFT) + n * (n - 1) / 2;
		}
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

/* Freed pages, grouped into runs of descending physical addresses. */
struct free_batch {
	struct mvm_zero_run runs[MVM_ZERO_RUNS_MAX];
	uint32_t n;
};

static void batch_flush(struct free_batch *b)
{
	write_cr3(read_cr3()); /* no stale translation may outlive the zeroing */
	pmm_free_runs(b->runs, b->n);
	b->n = 0;
}

static void batch_add(struct free_batch *b, uint64_t pa)
{
	struct mvm_zero_run *r = &b->runs[b->n - 1];

	if (b->n && r->gpa == pa + PAGE_SIZE) {
		r->gpa = pa;
		r->pages++;
		return;
	}
	if (b->n == MVM_ZERO_RUNS_MAX)
		batch_flush(b);
	b->runs[b->n++] = (struct mvm_zero_run){ pa, 1 };
}

/* Unmaps a whole mapping, last page first (see pmm.c for why the order matters). */
long vm_munmap(uint64_t va, uint64_t len)
{
	static struct free_batch batch; /* under vm_lock */
	struct mapping *m;
	uint64_t end, freed = 0;

	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	lock();
	m = find(va);
	if (!m || m->start != va || m->end != va + len) {
		unlock();
		return -FW_EINVAL;
	}
	end = m->end;
	*m = maps[--nmaps];
	hint_lo = hint_hi = 0;
	/* One table walk per 2 MiB, then down its entries. */
	for (uint64_t p = end; p > va;) {
		uint64_t chunk = (p - 1) & ~((2ULL << 20) - 1),
			 stop = chunk > va ? chunk : va;
		uint64_t *pt = paging_walk(chunk, 0);

		for (; pt && p > stop;) {
			uint64_t *pte;

			p -= PAGE_SIZE;
			pte = pt + ((p >> 12) & 511);
			if (*pte & PTE_P) {
				batch_add(&batch, *pte & PTE_ADDR);
				*pte = 0;
				freed++;
			}
		}
		p = stop;
	}
	if (batch.n)
		batch_flush(&batch);
	else
		paging_flush(va, len / PAGE_SIZE);
	fw_stats.pages_freed += freed;
	unlock();
	return 0;
}

/*
 * #PF: map a fresh page for a not-present fault inside a live mapping. This
 * is the demand-paging hot path and runs emulated on PVM (~0.5 us per
 * instruction), so the last mapping hit and the last page table used are
 * cached: a sequential sweep walks the tables once per 2 MiB.
 */
int vm_fault(uint64_t va, uint64_t error)
{
	uint64_t *pte;

	if (error & PTE_P)
		return -1; /* protection violation, not a missing page */
	if (va - hint_lo >= hint_hi - hint_lo) {
		struct mapping *m = va >= MMAP_BASE && va < MMAP_END ? find(va) : NULL;

		if (!m)
			return -1;
		hint_lo = m->start;
		hint_hi = m->end;
	}
	if (va >> 21 != pt_tag) {
		pt_cache = paging_walk(va & ~((2ULL << 20) - 1), 1);
		pt_tag = va >> 21;
	}
	pte = pt_cache + ((va >> 12) & 511);
	if (*pte & PTE_P)
		return 0; /* another vCPU mapped it first */
	map_page(pte);
	fw_stats.page_faults++;
	return 0;
}
