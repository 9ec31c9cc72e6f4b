/* Workloads that time and exercise the firmware's demand-fault paths (firmware/entry.S, vm.c). */
#include "guest.h"

#define PAGE 4096UL

/* demand PAGES: map PAGES pages on demand and touch each once (a fault apiece), no unmap. */
int demand_main(int argc, const char *const *argv, const struct fw_info *info)
{
	struct fw_stats s0, s1;
	uint64_t pages, t0, t1, ns;
	volatile char *p;

	if (argc != 2 || parse_u64(argv[1], &pages) || pages == 0)
		usage_exit("demand PAGES (at least 1)");
	p = mmap_anon(pages * PAGE, 0);
	if (!p)
		FAIL("mmap of %lu pages failed", pages);
	get_stats(&s0);
	t0 = rdtsc();
	for (uint64_t i = 0; i < pages; i++)
		p[i * PAGE] = 1;
	t1 = rdtsc();
	get_stats(&s1);
	ns = (t1 - t0) * 1000000 / info->tsc_khz / pages;
	printf("demand: %lu pages, %lu guest faults, %lu.%lu us per page\n", pages,
	       s1.page_faults - s0.page_faults, ns / 1000, ns % 1000 / 100);
	return 0;
}

/* munmap-remap: unmap 2 pages, map 1 at the same address, touch past it (must fault). */
int munmap_remap_main(int argc, const char *const *argv, const struct fw_info *info)
{
	volatile char *p = mmap_anon(2 * PAGE, 0), *q;

	(void)argc;
	(void)argv;
	(void)info;
	if (!p)
		FAIL("mmap failed");
	p[0] = p[PAGE] = 1;
	if (munmap((void *)p, 2 * PAGE))
		FAIL("munmap failed");
	q = mmap_anon(PAGE, 0);
	if (q != p)
		FAIL("mmap did not reuse %p (got %p)", (void *)p, (void *)q);
	q[0] = 1;
	printf("touching %p past the new mapping\n", (void *)(q + PAGE));
	q[PAGE] = 2;
	return 0;
}

/* Faults counted since *from, which it then updates. */
static uint64_t faults_since(struct fw_stats *from)
{
	struct fw_stats now;
	uint64_t n;

	get_stats(&now);
	n = now.page_faults - from->page_faults;
	*from = now;
	return n;
}

/*
 * demand-paths: the demand faults other than a CPL3 write in the current
 * mapping, each checked by the firmware's counters: a CPL3 read (the page
 * reads as zero), a CPL0 write inside and one outside the vCPU's current
 * mapping (a system call filling an untouched page), a CPL3 write back in
 * the first mapping.
 */
int demand_paths_main(int argc, const char *const *argv, const struct fw_info *info)
{
	volatile char *a = mmap_anon(3 * PAGE, 0), *b = mmap_anon(PAGE, 0);
	struct fw_stats s, *in_a = (struct fw_stats *)(a + PAGE),
			   *in_b = (struct fw_stats *)b;
	uint64_t n[4];

	(void)argc;
	(void)argv;
	(void)info;
	if (!a || !b)
		FAIL("mmap failed");
	get_stats(&s);
	if (a[100] != 0)
		FAIL("an untouched demand page reads %d", a[100]);
	n[0] = faults_since(&s);
	get_stats(in_a); /* filled after it counted: its own fault shows next time */
	n[1] = faults_since(&s);
	get_stats(in_b);
	n[2] = faults_since(&s);
	a[2 * PAGE + 5] = 7;
	n[3] = faults_since(&s);
	if (n[0] != 1 || n[1] != 1 || n[2] != 1 || n[3] != 1 || a[2 * PAGE + 5] != 7 ||
	    in_a->page_faults + 1 != in_b->page_faults)
		FAIL("faults counted: %lu %lu %lu %lu (want 1 each)", n[0], n[1], n[2],
		     n[3]);
	if (munmap((void *)a, 3 * PAGE) || munmap((void *)b, PAGE))
		FAIL("munmap failed");
	n[0] = s.pages_freed;
	get_stats(&s);
	printf("demand-paths: CPL3 read, CPL0 write in and out of the current mapping, "
	       "CPL3 write: 4 faults, %lu pages freed\n",
	       s.pages_freed - n[0]);
	return 0;
}

/*
 * fault-mix: two demand mappings touched in turn (every fault changes the
 * vCPU's current mapping; each mapping's pages are scattered, so munmap
 * falls back to reading its PTEs), a populated one, all unmapped; then one
 * mapping of the same total touched straight through must get exactly the
 * pages the first three had (pfn_sum) and free them all again.
 */
#define MIX_PAGES 64
int fault_mix_main(int argc, const char *const *argv, const struct fw_info *info)
{
	volatile char *a, *b, *c, *d;
	struct fw_stats s0, s1, s2;

	(void)argc;
	(void)argv;
	(void)info;
	get_stats(&s0);
	a = mmap_anon(MIX_PAGES * PAGE, 0);
	b = mmap_anon(MIX_PAGES * PAGE, 0);
	c = mmap_anon(MIX_PAGES * PAGE, FW_MAP_POPULATE);
	if (!a || !b || !c)
		FAIL("mmap failed");
	for (uint64_t i = 0; i < MIX_PAGES; i++) {
		a[i * PAGE] = 1;
		b[(MIX_PAGES - 1 - i) * PAGE] = 2;
		c[i * PAGE] = 3;
	}
	if (munmap((void *)a, MIX_PAGES * PAGE) || munmap((void *)b, MIX_PAGES * PAGE) ||
	    munmap((void *)c, MIX_PAGES * PAGE))
		FAIL("munmap failed");
	get_stats(&s1);
	d = mmap_anon(3 * MIX_PAGES * PAGE, 0);
	if (!d)
		FAIL("mmap failed");
	for (uint64_t i = 0; i < 3 * MIX_PAGES; i++)
		if (d[i * PAGE] != 0)
			FAIL("page %lu of a fresh mapping reads %d", i, d[i * PAGE]);
	if (munmap((void *)d, 3 * MIX_PAGES * PAGE))
		FAIL("munmap failed");
	get_stats(&s2);
	/* populate's pages count in pages_mapped and pfn_sum, not in page_faults */
	if (s1.page_faults - s0.page_faults != 2 * MIX_PAGES ||
	    s2.page_faults - s1.page_faults != 3 * MIX_PAGES ||
	    s1.pages_freed - s0.pages_freed != 3 * MIX_PAGES ||
	    s2.pages_freed - s1.pages_freed != 3 * MIX_PAGES)
		FAIL("faults %lu then %lu, freed %lu then %lu (want %u, %u, %u, %u)",
		     s1.page_faults - s0.page_faults, s2.page_faults - s1.page_faults,
		     s1.pages_freed - s0.pages_freed, s2.pages_freed - s1.pages_freed,
		     2 * MIX_PAGES, 3 * MIX_PAGES, 3 * MIX_PAGES, 3 * MIX_PAGES);
	if (s1.pfn_sum - s0.pfn_sum != s2.pfn_sum - s1.pfn_sum)
		FAIL("the second pass got other pages (pfn_sum %lu, first pass %lu)",
		     s2.pfn_sum - s1.pfn_sum, s1.pfn_sum - s0.pfn_sum);
	printf("fault-mix: %u pages mapped in turn, unmapped, mapped again: the same "
	       "pages\n",
	       3 * MIX_PAGES);
	return 0;
}

/*
 * smp-unmap (2 vCPUs): vCPU 1 faults in a mapping, vCPU 0 unmaps it, vCPU 1
 * touches another page of it: that must be a crash, not a page served from
 * the fault state vCPU 1 kept for the mapping.
 */
int smp_unmap_main(const struct ctx *c)
{
	static struct barrier bar;
	static volatile char *volatile p;

	if (c->info->vcpus != 2)
		FAIL("smp-unmap needs --vcpus 2");
	if (c->cpu == 0 && !(p = mmap_anon(16 * PAGE, 0)))
		FAIL("mmap failed");
	barrier_wait(&bar, 2);
	if (c->cpu == 1)
		p[0] = 1;
	barrier_wait(&bar, 2);
	if (c->cpu == 0 && munmap((void *)p, 16 * PAGE))
		FAIL("munmap failed");
	barrier_wait(&bar, 2);
	if (c->cpu == 0)
		for (;;)
			__builtin_ia32_pause(); /* until vCPU 1's crash ends the run */
	printf("vCPU 1 touching unmapped %p\n", (void *)(p + PAGE));
	flush();
	p[PAGE] = 1;
	return 0;
}

/*
 * smp-orphan (2 vCPUs): vCPU 1 faults in vCPU 0's mapping, vCPU 0 unmaps
 * it, then vCPU 1 maps, touches and unmaps one of its own: every page of
 * that one must be freed (it is unmapped from its log of pages).
 */
int smp_orphan_main(const struct ctx *c)
{
	static struct barrier bar;
	static volatile char *volatile p;
	struct fw_stats s0, s1;
	volatile char *q;

	if (c->info->vcpus != 2)
		FAIL("smp-orphan needs --vcpus 2");
	if (c->cpu == 0 && !(p = mmap_anon(16 * PAGE, 0)))
		FAIL("mmap failed");
	barrier_wait(&bar, 2);
	if (c->cpu == 1) {
		p[0] = 1;
		/*
		 * Not for s0 (set again below) but to account the page just
		 * taken: vCPU 0's munmap then orphans a window with no page
		 * pending, and vCPU 1's next account() finds none. An
		 * account() that returned early there kept the orphaned mark
		 * and left the next mapping's pages unlogged; without this
		 * call the test passes with that bug (checked).
		 */
		get_stats(&s0);
	}
	barrier_wait(&bar, 2);
	if (c->cpu == 0 && munmap((void *)p, 16 * PAGE))
		FAIL("munmap failed");
	barrier_wait(&bar, 2);
	if (c->cpu == 1) {
		get_stats(&s0);
		if (!(q = mmap_anon(16 * PAGE, 0)))
			FAIL("mmap failed");
		for (int i = 0; i < 16; i++)
			q[i * PAGE] = 1;
		if (munmap((void *)q, 16 * PAGE))
			FAIL("munmap failed");
		get_stats(&s1);
		if (s1.pages_freed - s0.pages_freed != 16)
			FAIL("vCPU 1 freed %lu of its 16 pages",
			     s1.pages_freed - s0.pages_freed);
		printf("smp-orphan: vCPU 1 freed its 16 pages\n");
	}
	barrier_wait(&bar, 2);
	return 0;
}
