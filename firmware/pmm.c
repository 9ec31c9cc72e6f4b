/* Physical page allocator over guest RAM: freed pages are handed out again first. */
#include "kernel.h"

/*
 * Freed pages go on a LIFO list threaded through the pages themselves and are
 * handed out again before any never-used page. munmap frees a range from its
 * last page to its first, so the next allocation of the same size gets the
 * same guest-physical pages in the same order. That reuse is what makes the
 * sweep's iteration effect visible: iteration 1 touches guest-physical pages
 * the hypervisor has never backed, iteration 2 the same, already-backed ones.
 *
 * Never-used pages are known to be zero (the ABI says guest RAM starts
 * zeroed); reused pages are zeroed when handed out.
 */
static struct {
	uint64_t next, end; /* never-used pages: [next, end) */
	uint64_t free_head; /* physical address of the first freed page, 0 if none */
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
	int reused = 0;

	lock();
	if (pmm.free_head) {
		pa = pmm.free_head;
		pmm.free_head = *(uint64_t *)pa;
		pmm.nfree--;
		reused = 1;
	} else if (pmm.next < pmm.end) {
		pa = pmm.next;
		pmm.next += PAGE_SIZE;
	}
	unlock();
	if (!pa)
		hc_abort_frame(__FILE__, __LINE__, "out of guest physical memory", 0, 0);
	if (reused)
		memset((void *)pa, 0, PAGE_SIZE);
	return pa;
}

void pmm_free(uint64_t pa)
{
	lock();
	*(uint64_t *)pa = pmm.free_head;
	pmm.free_head = pa;
	pmm.nfree++;
	unlock();
}

uint64_t pmm_free_bytes(void)
{
	return pmm.end - pmm.next + pmm.nfree * PAGE_SIZE;
}
