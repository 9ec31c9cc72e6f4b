/* sweep and flat: OSv's demand/populate mmap benchmark, and its second-level-only variant. */
#include "guest.h"

#define MIB	    (1UL << 20)
#define PAGE	    4096UL
#define MAX_DEFAULT 1024 /* MiB: the seed's largest size */
#define MAX_SIZES   32

struct sweep_opts {
	uint64_t max_mib;
	uint64_t iterations;
};

static int parse_opts(int argc, const char *const *argv, struct sweep_opts *o)
{
	for (int i = 1; i < argc; i++) {
		uint64_t *dst = NULL;

		if (!strcmp(argv[i], "--max-mib"))
			dst = &o->max_mib;
		else if (!strcmp(argv[i], "--iterations"))
			dst = &o->iterations;
		if (!dst || i + 1 == argc || parse_u64(argv[i + 1], dst) || *dst == 0) {
			printf("guest: %s: bad option '%s'\n", argv[0], argv[i]);
			printf("usage: %s [--max-mib N] [--iterations N]\n", argv[0]);
			return -1;
		}
		i++;
	}
	return 0;
}

/* Largest power of two (MiB) with `need(size)` bytes free, capped at MAX_DEFAULT. */
static uint64_t default_max(uint64_t free_bytes, int flat)
{
	uint64_t mib = MAX_DEFAULT;

	/* sweep reuses pages, so needs its largest size (+ page tables); flat needs 2N-1. */
	while (mib > 1 && (flat ? 2 * mib - 1 : mib + mib / 256 + 1) * MIB > free_bytes)
		mib /= 2;
	return mib;
}

/* Write one byte per 4 KiB page: the loop the tables time. Runs natively at CPL3. */
static void touch(volatile char *p, uint64_t bytes)
{
	for (uint64_t off = 0; off < bytes; off += PAGE)
		p[off] = 1;
}

static void measure(struct mvm_rec_sweep *r, uint32_t mode, uint64_t size_mib)
{
	uint64_t bytes = size_mib * MIB, t0, t1, t2;
	struct fw_stats s0, s1;
	char *p;

	get_stats(&s0);
	t0 = rdtsc();
	p = mmap_anon(bytes, mode == MVM_MODE_POPULATE ? FW_MAP_POPULATE : 0);
	t1 = rdtsc();
	if (!p)
		FAIL("mmap of %lu MiB failed", size_mib);
	touch(p, bytes);
	t2 = rdtsc();
	get_stats(&s1);
	if (munmap(p, bytes))
		FAIL("munmap of %lu MiB failed", size_mib);
	r->unmap_cycles = rdtsc() - t2;
	r->mode = mode;
	r->map_cycles = t1 - t0;
	r->touch_cycles = t2 - t1;
	r->pages = bytes / PAGE;
	r->guest_faults = s1.page_faults - s0.page_faults;
	r->pfn_sum = s1.pfn_sum - s0.pfn_sum;
}

int sweep_main(int argc, const char *const *argv, const struct fw_info *info)
{
	struct sweep_opts o = { 0, 5 };
	static struct mvm_rec_sweep recs[2 * MAX_SIZES];

	if (parse_opts(argc, argv, &o))
		return 2;
	if (!o.max_mib)
		o.max_mib = default_max(info->free_bytes, 0);
	printf("sweep: 1..%lu MiB, %lu iterations, demand and populate, map + touch "
	       "timed\n",
	       o.max_mib, o.iterations);
	for (uint64_t it = 1; it <= o.iterations; it++) {
		uint32_t n = 0;

		for (uint64_t mib = 1; mib <= o.max_mib && n + 2 <= 2 * MAX_SIZES;
		     mib *= 2) {
			for (uint32_t mode = MVM_MODE_DEMAND; mode <= MVM_MODE_POPULATE;
			     mode++) {
				struct mvm_rec_sweep *r = &recs[n++];

				*r = (struct mvm_rec_sweep){ .workload = MVM_WL_SWEEP,
							     .iteration = (uint32_t)it,
							     .size_mib = (uint32_t)mib };
				measure(r, mode, mib);
			}
		}
		/* One exit per iteration, outside every timed region. */
		send_records(MVM_REC_SWEEP, recs, n);
	}
	return 0;
}

/*
 * flat: the kernel hands out physical memory that its boot-time direct map
 * already covers, so the guest takes no page faults at all; each size gets
 * its own never-touched range. Iteration 1 pays only the hypervisor's
 * first-touch cost (host allocation + EPT/NPT or shadow fault), later
 * iterations pay nothing of the kind.
 */
int flat_main(int argc, const char *const *argv, const struct fw_info *info)
{
	struct sweep_opts o = { 0, 5 };
	static struct mvm_rec_sweep recs[MAX_SIZES];
	char *region;
	uint64_t total;

	if (parse_opts(argc, argv, &o))
		return 2;
	if (!o.max_mib)
		o.max_mib = default_max(info->free_bytes, 1);
	total = 0;
	for (uint64_t mib = 1; mib <= o.max_mib; mib *= 2)
		total += mib * MIB;
	region = phys_region(total);
	if (!region)
		FAIL("no %lu MiB of free physical memory for flat", total / MIB);
	printf("flat: 1..%lu MiB, %lu iterations, direct-mapped (no guest faults), touch "
	       "timed\n",
	       o.max_mib, o.iterations);
	for (uint64_t it = 1; it <= o.iterations; it++) {
		uint32_t n = 0;
		char *p = region;

		for (uint64_t mib = 1; mib <= o.max_mib && n < MAX_SIZES; mib *= 2) {
			struct mvm_rec_sweep *r = &recs[n++];
			struct fw_stats s0, s1;
			uint64_t t0, t1;

			get_stats(&s0);
			t0 = rdtsc();
			touch(p, mib * MIB);
			t1 = rdtsc();
			get_stats(&s1);
			*r = (struct mvm_rec_sweep){
				.workload = MVM_WL_FLAT,
				.mode = MVM_MODE_DEMAND,
				.iteration = (uint32_t)it,
				.size_mib = (uint32_t)mib,
				.touch_cycles = t1 - t0,
				.pages = mib * MIB / PAGE,
				.guest_faults = s1.page_faults - s0.page_faults,
				.pfn_sum =
					((uint64_t)(uintptr_t)p / PAGE) *
						(mib * MIB / PAGE) +
					(mib * MIB / PAGE) * (mib * MIB / PAGE - 1) / 2,
			};
			p += mib * MIB;
		}
		send_records(MVM_REC_SWEEP, recs, n);
	}
	return 0;
}
