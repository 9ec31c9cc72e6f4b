/* sweep and flat: OSv's demand/populate mmap benchmark, and its second-level-only variant. */
#include "guest.h"

#define MIB		  (1UL << 20)
#define PAGE		  4096UL
#define MAX_DEFAULT_SIZES 11 /* 1..1024 MiB: the seed's sizes */
#define MAX_SIZES	  40

struct opts {
	uint64_t max_mib;
	uint64_t iterations;
	uint64_t progress_mib; /* flat: PROGRESS_AUTO, 0 (none) or the stride */
	int parallel;
	uint64_t snap_after; /* flat: --snapshot-after, SNAP_AFTER_NONE */
	int read_after;	     /* flat: --read-after-snapshot */
};

/* Shared by every vCPU of a run (CPL3 code runs in one address space). */
static struct {
	struct opts o;
	int bad;
	uint32_t n; /* vCPUs taking part */
	uint32_t nsizes;
	struct mvm_rec_sweep *recs; /* [vcpu][size][mode] of the current iteration */
	char *flat_region;
	uint64_t t[3]; /* vCPU 0's phase clock: start, mapped, touched */
	struct barrier bar;
	uint64_t stride; /* flat: bytes between progress points, 0: none */
	struct frontier fr[FW_MAX_VCPUS]; /* flat: each vCPU's first pass */
	struct mvm_rec_order order[FW_MAX_VCPUS];
	uint64_t useful_at; /* the pass after which first_useful_work is marked */
	int touch; /* flat: what a pass does to a page: 0xfe written, or TOUCH_READ */
} run;

#define OPT_MAX (1UL << 30)

/* Options, each checked on its own; what fits in memory is checked once they are known. */
static int parse(const struct ctx *c, struct opts *o, int flat)
{
	const struct opt opts[] = {
		{ "--max-mib", &o->max_mib, 1, OPT_MAX, NULL },
		{ "--iterations", &o->iterations, 1, OPT_MAX, NULL },
		{ "--parallel", NULL, 0, 0, &o->parallel },
		{ flat ? "--progress-mib" : NULL, &o->progress_mib, 0, OPT_MAX, NULL },
		{ "--snapshot-after", &o->snap_after, 0, OPT_MAX, NULL },
		{ flat ? "--read-after-snapshot" : NULL, NULL, 0, 0, &o->read_after },
		{ NULL, NULL, 0, 0, NULL },
	};

	return parse_opts(
		c, opts,
		flat ? "flat [--max-mib N] [--iterations N] [--parallel] [--progress-mib N] [--snapshot-after N] [--read-after-snapshot]"
		     : "sweep [--max-mib N] [--iterations N] [--parallel]");
}

/* Bytes of free guest memory n vCPUs need for sizes 1..2^(nsizes-1) MiB. */
static uint64_t need_bytes(uint32_t nsizes, uint32_t n, int flat)
{
	uint64_t largest = 1ULL << (nsizes - 1);

	/* flat gives every size fresh memory; sweep reuses freed pages (plus page tables). */
	return n * (flat ? 2 * largest - 1 : largest + largest / 256 + 2) * MIB;
}

/*
 * Largest power of two (MiB, at most 1024) each of n vCPUs can use:
 * sweep reuses freed pages, so needs its largest size plus page tables;
 * flat gives every size fresh memory, so needs 2N - 1.
 */
static uint64_t default_max(uint64_t free_bytes, uint32_t n, int flat)
{
	uint32_t nsizes = MAX_DEFAULT_SIZES;

	while (nsizes > 1 && need_bytes(nsizes, n, flat) > free_bytes)
		nsizes--;
	return 1UL << (nsizes - 1);
}

/*
 * Refuse, before anything is measured, sizes this guest's memory cannot
 * hold, and say which --mem would: a clear usage error, not a crash halfway.
 */
static int check_fits(const struct ctx *c, int flat)
{
	uint64_t need = need_bytes(run.nsizes, run.n, flat), have = c->info->free_bytes;
	uint64_t mem = c->info->mem_bytes - have + need +
		       16 * MIB; /* what else is in use, a margin */

	if (need + (uint64_t)run.n * 2 * run.nsizes * sizeof(*run.recs) +
		    run.n * frontier_room(((1ULL << run.nsizes) - 1) * MIB, run.stride) *
			    sizeof(struct mvm_rec_progress) <=
	    have)
		return 0;
	mem = (mem + 2 * MIB - 1) & ~(2 * MIB - 1);
	printf("guest: %s --max-mib %lu needs %lu MiB of free guest memory%s and this guest has %lu MiB free: run minivmm with --mem %luM or more, or a smaller --max-mib\n",
	       c->argv[0], run.o.max_mib, need / MIB, run.n > 1 ? " (all vCPUs)" : "",
	       have / MIB, mem / MIB);
	return -1;
}

/* In parallel runs all vCPUs start each phase together; vCPU 0 keeps the wall clock. */
static void phase(const struct ctx *c, int which)
{
	if (run.n > 1)
		barrier_wait(&run.bar, run.n);
	if (c->cpu == 0)
		run.t[which] = rdtsc();
}

/*
 * sweep, as OSv's benchmark: mmap (populate or demand), then the timed touch
 * loop, then munmap; the map and unmap are timed too, separately. The guest
 * faults counted are those taken inside the touch loop.
 */
static void measure_sweep(const struct ctx *c, struct mvm_rec_sweep *r, uint64_t mib)
{
	uint64_t bytes = mib * MIB, t0, t1, t2;
	struct fw_stats s0, sm, s1;
	char *p;

	phase(c, 0);
	get_stats(&s0);
	t0 = rdtsc();
	p = mmap_anon(bytes, r->mode == MVM_MODE_POPULATE ? FW_MAP_POPULATE : 0);
	r->map_cycles = rdtsc() - t0;
	if (!p)
		FAIL("vCPU %u: mmap of %lu MiB failed", c->cpu, mib);
	get_stats(&sm);
	phase(c, 1);
	t1 = rdtsc();
	pages_touch(p, bytes, 0xfe);
	t2 = rdtsc();
	get_stats(&s1);
	phase(c, 2);
	if (munmap(p, bytes))
		FAIL("vCPU %u: munmap of %lu MiB failed", c->cpu, mib);
	r->unmap_cycles = rdtsc() - t2;
	r->touch_cycles = t2 - t1;
	r->pages = bytes / PAGE;
	r->guest_faults = s1.page_faults - sm.page_faults;
	r->pfn_sum = s1.pfn_sum - s0.pfn_sum;
}

/*
 * flat: touch this vCPU's never-used, direct-mapped share; no guest faults
 * possible. In the first pass (fr set) the loop takes the frontier's points.
 */
static void measure_flat(const struct ctx *c, struct mvm_rec_sweep *r, char *p,
			 uint64_t mib, struct frontier *fr)
{
	uint64_t bytes = mib * MIB, t0, t1;
	struct fw_stats s0, s1;

	phase(c, 0);
	phase(c, 1);
	get_stats(&s0);
	t0 = rdtsc();
	if (fr)
		frontier_touch(fr, p, bytes, run.touch);
	else
		pages_touch(p, bytes, run.touch);
	t1 = rdtsc();
	get_stats(&s1);
	phase(c, 2);
	r->touch_cycles = t1 - t0;
	r->pages = bytes / PAGE;
	r->guest_faults = s1.page_faults - s0.page_faults;
	r->pfn_sum = ((uintptr_t)p / PAGE) * r->pages + r->pages * (r->pages - 1) / 2;
}

/*
 * vCPU 0, once every vCPU of n finished measurement k: one batch (one exit,
 * outside every timed region), the all-vCPU aggregate first when n > 1,
 * its map and touch the wall clock of all vCPUs together (map_cycles and
 * touch_cycles, from vCPU 0's phase clock). The VMM samples KVM's counters
 * at each batch, so a batch's counters are this measurement's.
 */
void send_measurement(const struct mvm_rec_sweep *recs, uint32_t nv, uint32_t per_cpu,
		      uint32_t k, uint64_t map_cycles, uint64_t touch_cycles)
{
	static struct mvm_rec_sweep batch[FW_MAX_VCPUS + 1];
	struct mvm_rec_sweep *a = &batch[0];
	uint32_t n = 0;

	if (nv == 1) {
		send_records(MVM_REC_SWEEP, &recs[k], 1);
		return;
	}
	*a = recs[k];
	a->vcpu = MVM_VCPU_ALL;
	a->map_cycles = map_cycles;
	a->touch_cycles = touch_cycles;
	a->pages = a->guest_faults = a->pfn_sum = a->unmap_cycles = 0;
	for (uint32_t v = 0; v < nv; v++) {
		const struct mvm_rec_sweep *r = &recs[v * per_cpu + k];

		a->pages += r->pages;
		a->guest_faults += r->guest_faults;
		a->pfn_sum += r->pfn_sum;
		if (r->unmap_cycles > a->unmap_cycles)
			a->unmap_cycles = r->unmap_cycles;
		batch[++n] = *r;
	}
	send_records(MVM_REC_SWEEP, batch, n + 1);
}

/* flat, vCPU 0: where each vCPU's first pass takes its points, and what its order is. */
static void flat_frontiers(void)
{
	uint64_t share = ((1ULL << run.nsizes) - 1) * MIB;
	struct mvm_rec_progress *buf =
		progress_buffer(run.n, frontier_room(share, run.stride));

	if (run.stride && !buf)
		FAIL("no memory for %lu progress points",
		     run.n * frontier_room(share, run.stride));
	for (uint32_t v = 0; v < run.n; v++) {
		uint64_t gpa = (uintptr_t)run.flat_region + v * share;

		frontier_init(&run.fr[v],
			      buf ? buf + v * frontier_room(share, run.stride) : NULL, v,
			      share, run.stride);
		run.order[v] = (struct mvm_rec_order){ .vcpu = v,
						       .workload = MVM_WL_FLAT,
						       .order = MVM_ORDER_SEQUENTIAL,
						       .stride_pages = 1,
						       .start_gpa = gpa,
						       .end_gpa = gpa + share,
						       .pages = share / PAGE,
						       .progress_bytes = run.stride };
	}
}

/*
 * flat, vCPU 0, between passes (the others wait at the next pass's
 * barrier): the snapshot of every vCPU's share. A restored guest marks
 * first_useful_work after its first pass (at once when none is left).
 */
static void flat_snapshot(const struct ctx *c, uint64_t pass)
{
	uint64_t share = ((1ULL << run.nsizes) - 1) * MIB;

	if (snapshot_take(c, run.flat_region, run.n * share, pass) == MVM_SNAP_RESTORED)
		snapshot_restarted(run.fr, run.n, &run.useful_at, pass, run.o.iterations);
	/* A read-mostly workload from here on: clones of the snapshot share what they read. */
	if (run.o.read_after) {
		run.touch = TOUCH_READ;
		printf("%s: the passes after the snapshot read their pages (--read-after-snapshot)\n",
		       c->argv[0]);
	}
}

static int run_sweep(const struct ctx *c, uint32_t workload)
{
	int flat = workload == MVM_WL_FLAT;

	if (c->cpu == 0) {
		run.o = (struct opts){ 0, 5, PROGRESS_AUTO, 0, SNAP_AFTER_NONE, 0 };
		run.touch = 0xfe;
		run.bad = parse(c, &run.o, flat) != 0;
		run.bad = run.bad ||
			  (flat && snapshot_plan(c, &run.o.snap_after, run.o.iterations));
		if (!run.bad && run.o.read_after && run.o.snap_after == SNAP_AFTER_NONE) {
			printf("guest: %s: --read-after-snapshot needs a snapshot point (--snapshot-after N, or minivmm --snapshot)\n",
			       c->argv[0]);
			run.bad = 1;
		}
		run.useful_at = 1;
		run.n = run.o.parallel ? c->info->vcpus : 1;
		if (!run.o.max_mib)
			run.o.max_mib = default_max(c->info->free_bytes, run.n, flat);
		run.nsizes = 0;
		for (uint64_t mib = 1; mib <= run.o.max_mib && run.nsizes < MAX_SIZES;
		     mib *= 2)
			run.nsizes++;
		run.stride = flat ? progress_stride(((1ULL << run.nsizes) - 1) * MIB,
						    run.o.progress_mib)
				  : 0;
		if (!run.bad && frontier_room(((1ULL << run.nsizes) - 1) * MIB,
					      run.stride) > PROGRESS_MAX_POINTS) {
			printf("guest: %s: --progress-mib %lu takes more than %u points per vCPU: a larger stride, or 0 for none\n",
			       c->argv[0], run.o.progress_mib, PROGRESS_MAX_POINTS);
			run.bad = 1;
		}
		run.bad = run.bad || check_fits(c, flat);
		run.recs =
			run.bad ? NULL
				: phys_region(run.n * 2 * run.nsizes * sizeof(*run.recs));
		if (!run.bad && flat) {
			uint64_t share = ((1ULL << run.nsizes) - 1) * MIB;

			run.flat_region = phys_region(run.n * share);
			if (!run.flat_region)
				FAIL("no %lu MiB of free physical memory for flat",
				     run.n * share / MIB);
			flat_frontiers();
		}
		if (!run.bad && !run.recs)
			FAIL("no memory for %u result records", run.n * 2 * run.nsizes);
		if (!run.bad)
			printf("%s: 1..%lu MiB%s, %lu iteration%s, %s\n", c->argv[0],
			       run.o.max_mib, run.n > 1 ? " per vCPU" : "",
			       run.o.iterations, run.o.iterations == 1 ? "" : "s",
			       flat ? "direct-mapped (no guest faults), touch timed"
				    : "demand and populate, the touch loop timed (mmap and munmap apart)");
		if (run.n > 1 && !run.bad)
			printf("%s: --parallel: %u vCPUs at once, like KVM selftests' memstress\n",
			       c->argv[0], run.n);
	}
	/* Secondaries learn the options from vCPU 0 (it parsed them before this barrier). */
	if (c->info->vcpus > 1)
		barrier_wait(&run.bar, c->info->vcpus);
	if (run.bad)
		return MVM_EXIT_USAGE;
	if (c->cpu >= run.n)
		return 0; /* not --parallel: only vCPU 0 sweeps */
	/* An empty batch: the VMM's counters for the first measurement start here. */
	if (c->cpu == 0)
		send_records(MVM_REC_SWEEP, run.recs, 0);
	for (uint64_t it = 1; it <= run.o.iterations; it++) {
		uint32_t per_cpu = flat ? run.nsizes : 2 * run.nsizes, k = 0;
		char *p = run.flat_region + c->cpu * (((1ULL << run.nsizes) - 1) * MIB);

		if (flat && c->cpu == 0 && it - 1 == run.o.snap_after)
			flat_snapshot(c, it - 1);
		for (uint64_t mib = 1; k < per_cpu; mib *= 2) {
			for (uint32_t mode = MVM_MODE_DEMAND; mode <= MVM_MODE_POPULATE;
			     mode++) {
				struct mvm_rec_sweep *r = &run.recs[c->cpu * per_cpu + k];

				if (flat && mode == MVM_MODE_POPULATE)
					continue;
				*r = (struct mvm_rec_sweep){ .workload = workload,
							     .mode = mode,
							     .iteration = (uint32_t)it,
							     .size_mib = (uint32_t)mib,
							     .vcpu = c->cpu };
				if (flat) {
					measure_flat(c, r, p, mib,
						     it == run.useful_at ? &run.fr[c->cpu]
									 : NULL);
					p += mib * MIB;
				} else {
					measure_sweep(c, r, mib);
				}
				/* Every vCPU's munmap is done before the records go. */
				if (run.n > 1)
					barrier_wait(&run.bar, run.n);
				if (c->cpu == 0)
					send_measurement(run.recs, run.n, per_cpu, k,
							 run.t[1] - run.t[0],
							 run.t[2] - run.t[1]);
				k++;
			}
		}
		if (run.n > 1)
			barrier_wait(&run.bar, run.n);
		if (c->cpu == 0 && it == run.useful_at)
			mark(MVM_MARK_FIRST_USEFUL_WORK); /* every size touched once */
	}
	if (flat && c->cpu == 0 && run.o.snap_after == run.o.iterations)
		flat_snapshot(c, run.o.iterations);
	if (flat && c->cpu == 0)
		snapshot_check(c);
	/* After the last measurement's batch: these take no KVM sample. */
	if (flat && c->cpu == 0)
		progress_send(run.order, run.fr, run.n);
	return 0;
}

int sweep_main(const struct ctx *c)
{
	return run_sweep(c, MVM_WL_SWEEP);
}

int flat_main(const struct ctx *c)
{
	return run_sweep(c, MVM_WL_FLAT);
}
