/* The user mmap region: anonymous mappings, populated up front or on demand. */
#include "kernel.h"

#define MMAP_END     (MMAP_BASE + 0x100000000000ULL)
#define MAX_MAPPINGS 64
/* Pages a vCPU takes from the allocator at a time for its demand faults. */
#define FAULT_BATCH_PAGES 512
#define MAP_RUNS_MAX	  32
#define RUNS_UNKNOWN	  UINT32_MAX

/*
 * A mapping, and the pages it was given, in the order it was given them,
 * as runs of contiguous pages: munmap frees those (last first: see pmm.c)
 * without reading a PTE. That log is kept while one vCPU (the owner, who
 * made the mapping) is the only one mapping pages into it and the runs fit
 * in runs[]; otherwise nruns is RUNS_UNKNOWN and munmap reads the PTEs.
 */
struct mapping {
	uint64_t start, end; /* [start, end), page-aligned; end 0: slot free */
	uint32_t owner;
	uint32_t nruns;
	struct mvm_zero_run runs[MAP_RUNS_MAX];
};

/*
 * Mappings, in slots that do not move, under vm_lock. Mappings belong to
 * the address space all vCPUs share, but the workloads keep each mapping
 * to the vCPU that made it: munmap flushes only its own TLB (there is no
 * shootdown). Every page of a live mapping has a page table from mmap on
 * (tables are never freed), so a fault only ever writes its PTE.
 *
 * Breaking that rule also races munmap against the other vCPU's faults.
 * vCPU B's fault writes its PTE without vm_lock: entry.S's fast path (LOCK
 * CMPXCHG of 0 to B's next fault page, after checking B's window), and
 * the tail of vm_fault (after it drops the lock). If vCPU A munmaps B's
 * window meanwhile, clearing B's window stops only faults that have not
 * yet read it: B's CMPXCHG may still land, after A read that PTE as empty
 * in unmap(). Then B's page is leaked (B's next has moved past it and no
 * free list has it), and if it lands after A's clearing too, the PTE stays
 * present in a range no mapping covers: B's access succeeds instead of
 * crashing, and a later mmap at the same address (first_fit reuses it)
 * finds the page already mapped: no fault, not logged, and not zero (it
 * holds what B wrote). With one vCPU, or each mapping touched only by its
 * owner, no other vCPU has the mapping as its window and none of this can
 * happen. Not fixed: it would take a shootdown (or a lock) on this path.
 */
static struct mapping maps[MAX_MAPPINGS];
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

/* Logs n pages from pa as given to m by vCPU cpu. Under vm_lock. */
static void log_pages(struct mapping *m, uint32_t cpu, uint64_t pa, uint64_t n)
{
	struct mvm_zero_run *last;

	if (m->nruns == RUNS_UNKNOWN)
		return;
	last = m->nruns ? &m->runs[m->nruns - 1] : NULL;
	if (m->owner != cpu)
		m->nruns = RUNS_UNKNOWN;
	else if (last && last->gpa + last->pages * PAGE_SIZE == pa)
		last->pages += n;
	else if (m->nruns < MAP_RUNS_MAX)
		m->runs[m->nruns++] = (struct mvm_zero_run){ pa, n };
	else
		m->nruns = RUNS_UNKNOWN;
}

/*
 * Accounts for the pages this vCPU's faults took since last time (entry.S
 * only takes them): its counters, and the log of its window's mapping,
 * which all of them went to. Under vm_lock.
 */
static void account(uint32_t cpu)
{
	struct fault_state *fst = fault_state_of(cpu);
	struct fw_stats *st = &fw_stats[cpu];
	uint64_t n = (fst->next - fst->counted) / PAGE_SIZE,
		 first = fst->counted >> PAGE_SHIFT;

	if (n) {
		st->page_faults += n;
		st->pages_mapped += n;
		st->pfn_sum += n * first + n * (n - 1) / 2;
		if (fst->len && !fst->orphaned)
			log_pages(&maps[fst->map], cpu, fst->counted & PTE_ADDR, n);
	}
	fst->orphaned = 0; /* it only ever concerns the pages up to now */
	fst->counted = fst->next;
}

/*
 * This vCPU's untaken fault pages go back to the allocator before anything
 * else allocates or frees: the allocator then hands pages out in the order
 * it would have had the faults taken them one at a time. Under vm_lock.
 */
static void return_fault_pages(uint32_t cpu)
{
	struct fault_state *fst = fault_state_of(cpu);

	account(cpu);
	pmm_return_run(fst->next & PTE_ADDR, (fst->end - fst->next) / PAGE_SIZE);
	fst->next = fst->end = fst->counted = 0;
}

/* Copied out after the lock is dropped: writing *out may fault (a demand page). */
void vm_stats(struct fw_stats *out)
{
	uint32_t cpu = this_cpu();
	struct fw_stats st;

	lock();
	account(cpu);
	st = fw_stats[cpu];
	unlock();
	*out = st;
}

/* Demand: page tables for [start, end); a fault then writes just its PTE. */
static void prepare_demand(uint64_t start, uint64_t end)
{
	for (uint64_t va = start; va < end; va = chunk_end(va, end))
		table_for(va);
}

/* Populate: page tables, then pages a contiguous run at a time. */
static void populate(struct mapping *m)
{
	uint32_t cpu = this_cpu();
	struct fw_stats *st = &fw_stats[cpu];

	for (uint64_t va = m->start; va < m->end;) {
		uint64_t stop = chunk_end(va, m->end), *pte = table_for(va);

		while (va < stop) {
			uint64_t pa, n = pmm_alloc_run((stop - va) / PAGE_SIZE, &pa);

			pte_fill_run(pte, n, pa | PTE_USER_PAGE);
			pte += n;
			va += n * PAGE_SIZE;
			st->pages_mapped += n;
			st->pfn_sum += n * (pa >> PAGE_SHIFT) + n * (n - 1) / 2;
			lock();
			log_pages(m, cpu, pa, n);
			unlock();
		}
	}
}

/* The mapping va is in, or NULL. A free slot (start = end = 0) contains no va. Under vm_lock. */
static struct mapping *find(uint64_t va)
{
	for (int i = 0; i < MAX_MAPPINGS; i++)
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

		for (int i = 0; i < MAX_MAPPINGS; i++) {
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
	struct mapping *m = NULL;
	uint64_t at;

	if (len == 0 || len > MMAP_END - MMAP_BASE ||
	    (flags & ~(uint64_t)FW_MAP_POPULATE))
		return -FW_EINVAL;
	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	lock();
	return_fault_pages(this_cpu());
	at = first_fit(len);
	for (int i = 0; i < MAX_MAPPINGS && !m; i++)
		if (!maps[i].end)
			m = &maps[i];
	if (!at || !m || len > pmm_free_bytes()) {
		unlock();
		return -FW_ENOMEM;
	}
	m->start = at; /* field by field: runs[] need not be cleared */
	m->end = at + len;
	m->owner = this_cpu();
	m->nruns = 0;
	unlock();
	if (flags & FW_MAP_POPULATE)
		populate(m);
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

		n = v & PTE_P ? pte_run_down(last, left, v)
			      : pte_count_down(last, left, v);
		pte_fill(last - n + 1, n, 0);
		if (v & PTE_P) {
			batch_add(b, (v & PTE_ADDR) - (n - 1) * PAGE_SIZE, n);
			freed += n;
		}
		left -= n;
	}
	return freed;
}

/*
 * Clears m's PTEs and frees its pages, one TLB flush per batch of freed
 * runs (one per call unless the pages are scattered). With a complete log
 * of m's pages the PTEs are only cleared, each table's range at once, and
 * the pages freed from the log; otherwise each table's PTEs are read, last
 * page first. Either way the pages go back so that the allocator hands
 * them out again in the order it gave them. Returns the pages freed.
 */
static uint64_t unmap(const struct mapping *m, int logged)
{
	struct free_batch batch; /* 4 KiB of this vCPU's 12 KiB kernel stack */
	uint64_t freed = 0;

	batch.n = 0;
	for (uint64_t p = m->end; p > m->start;) {
		uint64_t chunk = (p - 1) & ~(PT_SPAN - 1);
		uint64_t stop = chunk > m->start ? chunk : m->start;
		uint64_t *pt = paging_walk(chunk, NULL), lo = (stop >> 12) & 511,
			 hi = ((p - 1) >> 12) & 511;

		FW_ASSERT(pt); /* built by mmap */
		if (logged)
			pte_fill(pt + lo, hi - lo + 1, 0);
		else
			freed += unmap_table(pt, lo, hi, &batch);
		p = stop;
	}
	for (uint32_t i = logged ? m->nruns : 0; i--;) {
		batch_add(&batch, m->runs[i].gpa, m->runs[i].pages);
		freed += m->runs[i].pages;
	}
	if (batch.n)
		batch_flush(&batch);
	return freed;
}

/* Unmaps a whole mapping. Untouched pages were never present: no TLB holds them. */
long vm_munmap(uint64_t va, uint64_t len)
{
	uint32_t cpu = this_cpu();
	struct mapping *m;
	int logged;

	len = (len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	lock();
	return_fault_pages(cpu);
	m = find(va);
	if (!m || m->start != va || m->end != va + len) {
		unlock();
		return -FW_EINVAL;
	}
	logged = m->owner == cpu && m->nruns != RUNS_UNKNOWN;
	/*
	 * No vCPU's fault may map into the range any more, bar one already
	 * past its window check: see above maps[].
	 */
	for (uint32_t c = 0; c < fw_boot.vcpus; c++) {
		struct fault_state *fst = fault_state_of(c);

		if (fst->len && &maps[fst->map] == m) {
			fst->orphaned = c != cpu;
			fst->lo = fst->len = 0;
		}
	}
	fw_stats[cpu].pages_freed += unmap(m, logged);
	m->start = m->end = 0;
	unlock();
	return 0;
}

/*
 * #PF that entry.S's fast path did not take: no fault page at hand, a fault
 * outside the vCPU's window, or a page another vCPU mapped first. Makes the
 * mapping va is in the vCPU's window and maps its next fault page as the
 * fast path would. Returns 0 when the access can be retried, -1 for a crash.
 */
int vm_fault(uint64_t va, uint64_t error)
{
	uint32_t cpu = this_cpu();
	struct fault_state *fst = fault_state_of(cpu);
	struct mapping *m;
	uint64_t *pte, none = 0;

	if (error & PTE_P)
		return -1; /* protection violation, not a missing page */
	lock();
	if (va - fst->lo < fst->len)
		m = &maps[fst->map]; /* the window's own pages ran out */
	else
		m = find(va);
	if (!m) {
		unlock();
		return -1;
	}
	account(cpu); /* what the old window's mapping got */
	fst->map = (uint32_t)(m - maps);
	fst->lo = m->start;
	fst->len = m->end - m->start;
	fst->pte_lo = (uintptr_t)paging_self_pte(m->start);
	if (m->owner != cpu)
		m->nruns = RUNS_UNKNOWN; /* a second vCPU maps pages into it */
	if (fst->next == fst->end) {
		uint64_t pa, n = pmm_alloc_run(FAULT_BATCH_PAGES, &pa);

		fst->next = fst->counted = pa | PTE_USER_PAGE;
		fst->end = fst->next + n * PAGE_SIZE;
	}
	unlock();
	pte = paging_walk(va, NULL);
	if (__atomic_compare_exchange_n(pte, &none, fst->next, 0, __ATOMIC_RELEASE,
					__ATOMIC_RELAXED))
		fst->next += PAGE_SIZE;
	return 0; /* or another vCPU mapped it first */
}
