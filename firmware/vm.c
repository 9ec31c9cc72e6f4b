/* The user mmap region: anonymous mappings, populated up front or on demand. */
#include "kernel.h"

#define MMAP_END     (MMAP_BASE + 0x100000000000ULL)
#define MAX_MAPPINGS 64

struct mapping {
	uint64_t start, end; /* [start, end), page-aligned */
};

/*
 * Live mappings, kept dense, under vm_lock. Mappings belong to the address
 * space all vCPUs share, but the workloads keep each mapping to the vCPU
 * that made it: munmap flushes only its own TLB (there is no shootdown).
 */
static struct mapping maps[MAX_MAPPINGS];
static int nmaps;
static uint64_t maps_gen; /* bumped by munmap: per-vCPU hints revalidate */
static volatile int vm_lock;

/*
 * Per-vCPU state of the #PF fast path: the mapping the last fault hit, the
 * page table it used (page tables are never freed, so the pointer stays
 * valid), and a page left over from a lost race.
 */
struct fault_cache {
	uint64_t lo, hi, gen;
	uint64_t pt_tag; /* va >> 21 of pt, or ~0 */
	uint64_t *pt;
	uint64_t spare; /* a zeroed page to map next, or 0 */
};
static struct fault_cache fcache[FW_MAX_VCPUS];
struct fw_stats fw_stats[FW_MAX_VCPUS];

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

/*
 * Populate: one page-table walk per 2 MiB, pages taken a contiguous run at
 * a time, then a tight loop writing entries (emulated on PVM: every
 * instruction here costs ~0.5 us).
 */
static void populate(uint64_t start, uint64_t end)
{
	struct fw_stats *st = &fw_stats[this_cpu()];
	uint64_t va = start;

	while (va < end) {
		uint64_t *pte, stop;

		lock();
		pte = paging_walk(va, 1);
		unlock();
		stop = (va | (PT_SPAN - 1)) + 1;

		if (stop > end)
			stop = end;
		while (va < stop) {
			uint64_t pa, n = pmm_alloc_run((stop - va) / PAGE_SIZE, &pa);
			uint64_t entry = pa | PTE_P | PTE_W | PTE_U;

			for (uint64_t k = 0; k < n; k++, entry += PAGE_SIZE)
				*pte++ = entry;
			va += n * PAGE_SIZE;
			st->pages_mapped += n;
			st->pfn_sum += n * (pa >> PAGE_SHIFT) + n * (n - 1) / 2;
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
	struct free_batch batch; /* 4 KiB of this vCPU's 16 KiB kernel stack */
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
	maps_gen++;
	batch.n = 0;
	/* One table walk per 2 MiB, then down its entries. */
	for (uint64_t p = end; p > va;) {
		uint64_t chunk = (p - 1) & ~(PT_SPAN - 1), stop = chunk > va ? chunk : va;
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
	fw_stats[this_cpu()].pages_freed += freed;
	unlock();
	return 0;
}

/*
 * #PF: map a fresh page for a not-present fault inside a live mapping. This
 * is the demand-paging hot path and runs emulated on PVM (~0.5 us per
 * instruction): the common case (same mapping, same page table as the last
 * fault on this vCPU) takes no lock but the allocator's.
 */
int vm_fault(uint64_t va, uint64_t error)
{
	uint32_t cpu = this_cpu();
	struct fault_cache *c = &fcache[cpu];
	uint64_t *pte, pa, none = 0;

	if (error & PTE_P)
		return -1; /* protection violation, not a missing page */
	if (va - c->lo >= c->hi - c->lo ||
	    c->gen != __atomic_load_n(&maps_gen, __ATOMIC_ACQUIRE)) {
		struct mapping *m;

		lock();
		m = va >= MMAP_BASE && va < MMAP_END ? find(va) : NULL;
		if (m) {
			c->lo = m->start;
			c->hi = m->end;
			c->gen = maps_gen;
		}
		unlock();
		if (!m)
			return -1;
	}
	if (va >> 21 != c->pt_tag || !c->pt) {
		lock();
		c->pt = paging_walk(va & ~(PT_SPAN - 1), 1);
		unlock();
		c->pt_tag = va >> 21;
	}
	pte = c->pt + ((va >> 12) & 511);
	pa = c->spare ? c->spare : pmm_alloc();
	c->spare = 0;
	/* Another vCPU may map the same page first: keep ours for the next fault. */
	if (!__atomic_compare_exchange_n(pte, &none, pa | PTE_P | PTE_W | PTE_U, 0,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
		c->spare = pa;
		return 0;
	}
	fw_stats[cpu].pages_mapped++;
	fw_stats[cpu].pfn_sum += pa >> PAGE_SHIFT;
	fw_stats[cpu].page_faults++;
	return 0;
}
