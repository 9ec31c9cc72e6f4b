/* Physical page allocator over guest RAM: freed pages are handed out again first. */
#include "kernel.h"

/*
 * Freed pages are handed out again, last freed first, before any never-used
 * page. munmap frees a range from its last page to its first, so the next
 * allocation of the same size gets the same guest-physical pages in the
 * same order. That reuse is what makes the sweep's iteration effect
 * visible: iteration 1 touches guest-physical pages the hypervisor has
 * never backed, iteration 2 the same, already-backed ones.
 *
 * Free pages are kept as runs of contiguous pages on a LIFO list. A run's
 * node lives in its own last page and says where the run starts; pages
 * leave a run from its start, which is the order they would leave a list of
 * single pages freed last page first. Freeing costs O(runs) and allocating
 * O(1): every guest kernel instruction is emulated on PVM (~0.5 us each).
 *
 * Never-used pages are known to be zero (the ABI says guest RAM starts
 * zeroed). Freed pages are zeroed when freed, by the VMM (MVM_HC_ZERO), in
 * batches: clearing 4 KiB in guest kernel code would take ~1 ms on PVM. A
 * run's node is cleared when its page is handed out again.
 *
 * Page tables come from the other end, the top of the never-used pages
 * (pmm_alloc_table): a table built at mmap time never takes a page out of
 * the sequence the mappings' pages are handed out in, so a mapping gets the
 * same pages whether or not its tables already existed.
 */
struct run_node {
	uint64_t next;	/* physical address of the next run's last page, 0 at the end */
	uint64_t first; /* physical address of this run's first page */
};

static struct {
	uint64_t next, end; /* never-used pages: [next, end) */
	uint64_t head;	    /* last page of the most recently freed run, 0 if none */
	uint64_t nfree;
	volatile int lock;
} pmm;

static void lock(void)
{
	while (__atomic_exchange_n(&pmm.lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void unlock(void)
{
	__atomic_store_n(&pmm.lock, 0, __ATOMIC_RELEASE);
}

void pmm_init(uint64_t start, uint64_t end)
{
	pmm.next = (start + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	pmm.end = end & ~(PAGE_SIZE - 1);
	FW_ASSERT(pmm.next < pmm.end);
}

uint64_t pmm_alloc(void)
{
	uint64_t pa = 0;

	lock();
	if (pmm.head) {
		struct run_node *n = (struct run_node *)pmm.head;

		pa = n->first;
		if (pa == pmm.head) {
			pmm.head = n->next;
			n->next = n->first = 0;
		} else {
			n->first = pa + PAGE_SIZE;
		}
		pmm.nfree--;
	} else if (pmm.next < pmm.end) {
		pa = pmm.next;
		pmm.next += PAGE_SIZE;
	}
	unlock();
	if (!pa)
		hc_abort_frame(__FILE__, __LINE__, "out of guest physical memory", 0, 0);
	return pa;
}

uint64_t pmm_alloc_table(void)
{
	uint64_t pa = 0;

	lock();
	if (pmm.end > pmm.next) {
		pmm.end -= PAGE_SIZE;
		pa = pmm.end;
	}
	unlock();
	return pa ? pa : pmm_alloc();
}

uint64_t pmm_alloc_run(uint64_t max, uint64_t *pa)
{
	uint64_t n = 0;

	lock();
	if (pmm.head) {
		struct run_node *node = (struct run_node *)pmm.head;

		*pa = node->first;
		n = (pmm.head - node->first) / PAGE_SIZE + 1;
		if (n > max)
			n = max;
		if (node->first + n * PAGE_SIZE > pmm.head) {
			pmm.head = node->next;
			node->next = node->first = 0;
		} else {
			node->first += n * PAGE_SIZE;
		}
		pmm.nfree -= n;
	} else if (pmm.next < pmm.end) {
		*pa = pmm.next;
		n = (pmm.end - pmm.next) / PAGE_SIZE;
		if (n > max)
			n = max;
		pmm.next += n * PAGE_SIZE;
	}
	unlock();
	if (!n)
		hc_abort_frame(__FILE__, __LINE__, "out of guest physical memory", 0, 0);
	return n;
}

uint64_t pmm_alloc_fresh(uint64_t bytes)
{
	uint64_t pa = 0;

	bytes = (bytes + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	lock();
	if (bytes && bytes <= pmm.end - pmm.next) {
		pa = pmm.next;
		pmm.next += bytes;
	}
	unlock();
	return pa;
}

/* Pushes the run of `pages` pages from gpa up as the head run. Under the lock. */
static void push_run(uint64_t gpa, uint64_t pages)
{
	uint64_t last = gpa + (pages - 1) * PAGE_SIZE;
	struct run_node *node = (struct run_node *)last;

	node->next = pmm.head;
	node->first = gpa;
	pmm.head = last;
	pmm.nfree += pages;
}

/*
 * The pages go back where they came from: in front of the head run they
 * were cut from, or back among the never-used pages, or (if the allocator
 * moved on meanwhile) as a run of their own on top. In the first two cases
 * the allocator is left exactly as if they had never been taken.
 */
void pmm_return_run(uint64_t pa, uint64_t n)
{
	uint64_t end = pa + n * PAGE_SIZE;
	struct run_node *head;

	if (!n)
		return;
	lock();
	head = (struct run_node *)pmm.head;
	if (head && head->first == end) {
		head->first = pa;
		pmm.nfree += n;
	} else if (!head && pmm.next == end) {
		pmm.next = pa;
	} else {
		push_run(pa, n);
	}
	unlock();
}

/* Each run was freed last page first: push it as one node, in batch order. */
void pmm_free_runs(const struct mvm_zero_run *runs, uint32_t n)
{
	if (!n)
		return;
	hc_zero(runs, n);
	lock();
	for (uint32_t i = 0; i < n; i++)
		push_run(runs[i].gpa, runs[i].pages);
	unlock();
}

uint64_t pmm_free_bytes(void)
{
	return pmm.end - pmm.next + pmm.nfree * PAGE_SIZE;
}
