/* The user mmap region: anonymous mappings, populated up front or on demand. */
#include "kernel.h"

#define MMAP_END     (MMAP_BASE + 0x100000000000ULL)
#define MAX_MAPPINGS 64
/* Pages a vCPU takes from the allocator at a time for its demand faults. */
#define FAULT_BATCH_PAGES 512

struct mapping {
	uint64_t start, end; /* [start, end), page-aligned */
};

/*
 * Live mappings, kept dense, under vm_lock. Mappings belong to the address
 * space all vCPUs share, but the workloads keep each mapping to the vCPU
 * that made it: munmap flushes only its own TLB (there is no shootdown).
 * Every page of a live mapping has a page table from mmap on (tables are
 * never freed), so a fault only ever writes its PTE.
 */
static struct mapping maps[MAX_MAPPINGS];
static int nmaps;
static volatile int vm_lock;
static struct fw_stats fw_stats[FW_MAX_VCPUS]; /* per vCPU: never shared */

static void lock(void)
{
	while (__atomic_exchange_n(&vm_lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void unlock(void)
{
	__atomic_store_n(&vm_lock, 0, __ATOMIC_RELEASE);
}

/*
 * Page-table loops. On PVM each guest kernel instruction is emulated, so
 * these use the string instructions: a REP STOSQ or REPE SCASQ is one
 * emulated instruction however many entries it covers. All leave DF clear.
 */

/* Stores v into n entries from pte up. */
static void fill(uint64_t *pte, uint64_t n, uint64_t v)
{
	__asm__ volatile("rep stosq" : "+D"(pte), "+c"(n) : "a"(v) : "memory");
}

/* Maps n > 0 consecutive pages from entry on (3 instructions a page). */
static void fill_run(uint64_t *pte, uint64_t n, uint64_t entry)
{
	__asm__ volatile("1: stosq\n\t"
			 "add %[page], %%rax\n\t"
			 "loop 1b"
			 : "+D"(pte), "+c"(n), "+a"(entry)
			 : [page] "i"(PAGE_SIZE)
			 : "memory", "cc");
}

/* How many of the max entries from *last down equal v (one REPE SCASQ). */
static uint64_t count_down(const uint64_t *last, uint64_t max, uint64_t v)
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
static uint64_t run_down(const uint64_t *last, uint64_t max, uint64_t entry)
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

/* The PTE of va, its page table built if missing (tables are shared: under vm_lock). */
static uint64_t *table_for(uint64_t va)
{
	uint64_t *pte;

	lock();
	pte = paging_walk(va, pmm_alloc_table);
	unlock();
	return pte;
}

static uint64_t chunk_end(uint64_t va, uint64_t end)
{
	uint64_t stop = (va | (PT_SPAN - 1)) + 1;

	return stop < end ? stop : end;
}

/* Counts the pages this vCPU's faults took since last time (entry.S only takes them). */
static void count_faults(struct fw_stats *st, struct fault_state *fst)
{
	uint64_t n = (fst->next - fst->counted) / PAGE_SIZE,
		 first = fst->counted >> PAGE_SHIFT;

	st->page_faults += n;
	st->pages_mapped += n;
	st->pfn_sum += n * first + n * (n - 1) / 2;
	fst->counted = fst->next;
}

/*
 * This vCPU's untaken fault pages go back to the allocator before anything
 * else allocates or frees: the allocator then hands pages out in the order
 * it would have had the faults taken them one at a time.
 */
static void return_fault_pages(uint32_t cpu)
{
	struct fault_state *fst = fault_state_of(cpu);

	count_faults(&fw_stats[cpu], fst);
	pmm_return_run(fst->next & PTE_ADDR, (fst->end - fst->next) / PAGE_SIZE);
	fst->next = fst->end = fst->counted = 0;
}

void vm_stats(struct fw_stats *out)
{
	uint32_t cpu = this_cpu();

	count_faults(&fw_stats[cpu], fault_state_of(cpu));
	*out = fw_stats[cpu];
}

/* Demand: page tables for [start, end); a fault then writes just its PTE. */
static void prepare_demand(uint64_t start, uint64_t end)
{
	for (uint64_t va = start; va < end; va = chunk_end(va, end))
		table_for(va);
}

/* Populate: page tables, then pages a contiguous run at a time. */
static void populate(uint64_t start, uint64_t end)
{
	struct fw_stats *st = &fw_stats[this_cpu()];

	for (uint64_t va = start; va < end;) {
		uint64_t stop = chunk_end(va, end), *pte = table_for(va);

		while (va < stop) {
			uint64_t pa, n = pmm_alloc_run((stop - va) / PAGE_SIZE, &pa);

			fill_run(pte, n, pa | PTE_USER_PAGE);
			pte += n;
			va += n * PAGE_SIZE;
			st->pages_mapped += n;
			st->pfn_sum += n * (pa >> PAGE_SHIFT) + n * (n - 1) / 2;
		}
	}
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

long vm_mmap(uint64_t len, uint64_t flags)
{
	uint64_t at;

	if (len == 0 || len > MMAP_END - MMAP_BASE ||
	    (flags & ~(uint64_t)FW_MAP_POPULATE))
		return -FW_EINVAL;
	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	return_fault_pages(this_cpu());
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
	else
		prepare_demand(at, at + len);
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

/* Adds the n pages from pa up, whose PTEs are already clear. */
static void batch_add(struct free_batch *b, uint64_t pa, uint64_t n)
{
	if (b->n && b->runs[b->n - 1].gpa == pa + n * PAGE_SIZE) {
		b->runs[b->n - 1].gpa = pa;
		b->runs[b->n - 1].pages += n;
		return;
	}
	if (b->n == MVM_ZERO_RUNS_MAX)
		batch_flush(b);
	b->runs[b->n++] = (struct mvm_zero_run){ pa, n };
}

/*
 * Clears the PTEs pt[lo..hi] from hi down, one stretch at a time: a run of
 * contiguous mapped pages (freed as one run) or a stretch of pages never
 * touched. Returns the pages freed.
 */
static uint64_t unmap_table(uint64_t *pt, uint64_t lo, uint64_t hi, struct free_batch *b)
{
	uint64_t freed = 0;

	for (uint64_t left = hi - lo + 1; left;) {
		uint64_t *last = pt + lo + left - 1, v = *last, n;

		n = v & PTE_P ? run_down(last, left, v) : count_down(last, left, v);
		fill(last - n + 1, n, 0);
		if (v & PTE_P) {
			batch_add(b, (v & PTE_ADDR) - (n - 1) * PAGE_SIZE, n);
			freed += n;
		}
		left -= n;
	}
	return freed;
}

/*
 * Unmaps a whole mapping, last page first (see pmm.c for why the order
 * matters), with one TLB flush per batch of freed runs: one per call unless
 * the mapping's pages are scattered. Untouched demand slots were never
 * present, so no TLB holds them.
 */
long vm_munmap(uint64_t va, uint64_t len)
{
	struct free_batch batch; /* 4 KiB of this vCPU's 16 KiB kernel stack */
	struct mapping *m = NULL;
	uint64_t end, freed = 0;

	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	return_fault_pages(this_cpu());
	lock();
	for (int i = 0; i < nmaps && !m; i++)
		if (maps[i].start == va && maps[i].end == va + len)
			m = &maps[i];
	if (!m) {
		unlock();
		return -FW_EINVAL;
	}
	end = m->end;
	*m = maps[--nmaps];
	/* No vCPU's fast path may map into the range any more. */
	for (uint32_t c = 0; c < fw_boot.vcpus; c++) {
		struct fault_state *fst = fault_state_of(c);

		if (fst->lo < end && fst->lo + fst->len > va)
			fst->lo = fst->len = 0;
	}
	batch.n = 0;
	/* One table walk per 2 MiB, then down its entries. */
	for (uint64_t p = end; p > va;) {
		uint64_t chunk = (p - 1) & ~(PT_SPAN - 1), stop = chunk > va ? chunk : va;
		uint64_t *pt = paging_walk(chunk, NULL);

		FW_ASSERT(pt); /* built by mmap */
		freed += unmap_table(pt, (stop >> 12) & 511, ((p - 1) >> 12) & 511,
				     &batch);
		p = stop;
	}
	if (batch.n)
		batch_flush(&batch);
	fw_stats[this_cpu()].pages_freed += freed;
	unlock();
	return 0;
}

/*
 * #PF that entry.S's fast path did not take: no fault page at hand, a fault
 * outside the vCPU's window or from CPL0 (a system call reading user
 * memory), or a page another vCPU mapped first. Makes the mapping va is in
 * the vCPU's window and maps its next fault page as the fast path would.
 * Returns 0 when the access can be retried, -1 for a crash.
 */
int vm_fault(uint64_t va, uint64_t error)
{
	struct fault_state *fst = fault_state_of(this_cpu());
	struct mapping *m = NULL;
	uint64_t *pte, none = 0;

	if (error & PTE_P)
		return -1; /* protection violation, not a missing page */
	lock();
	for (int i = 0; i < nmaps && !m; i++)
		if (va >= maps[i].start && va < maps[i].end)
			m = &maps[i];
	if (m) {
		fst->lo = m->start;
		fst->len = m->end - m->start;
		fst->pte_lo = (uintptr_t)paging_self_pte(m->start);
	}
	unlock();
	if (!m)
		return -1;
	if (fst->next == fst->end) {
		uint64_t pa, n;

		count_faults(&fw_stats[this_cpu()], fst);
		n = pmm_alloc_run(FAULT_BATCH_PAGES, &pa);
		fst->next = fst->counted = pa | PTE_USER_PAGE;
		fst->end = fst->next + n * PAGE_SIZE;
	}
	pte = paging_walk(va, NULL);
	if (__atomic_compare_exchange_n(pte, &none, fst->next, 0, __ATOMIC_RELEASE,
					__ATOMIC_RELAXED))
		fst->next += PAGE_SIZE;
	return 0; /* or another vCPU mapped it first */
}
