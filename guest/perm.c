/* perm: every page of a direct-mapped region once per pass, in a seeded random, strided or block order. */
#include "guest.h"

#define MIB	     (1UL << 20)
#define PAGE	     4096UL
#define OPT_MAX	     (1UL << 30)
#define SEED_DEFAULT 1
#define USAGE                                                                           \
	"perm [--mib N] [--iterations N] [--seed S] [--stride PAGES | --blocks PAGES] " \
	"[--parallel] [--progress-mib N] [--snapshot-after N]"

struct opts {
	uint64_t mib; /* per vCPU; 0: all the free memory there is */
	uint64_t iterations;
	uint64_t seed;
	uint64_t stride; /* pages; 0: the random order */
	uint64_t blocks; /* pages a block, blocks in the random order; 0: none */
	uint64_t progress_mib;
	int parallel;
	uint64_t snap_after; /* --snapshot-after, SNAP_AFTER_NONE */
};

/* Shared by every vCPU of a run; vCPU 0 fills it before the first barrier. */
static struct {
	struct opts o;
	int bad;
	uint32_t n;	/* vCPUs taking part */
	uint64_t pages; /* per vCPU */
	char *region;	/* vCPU v's slice: pages pages from region + v * pages * PAGE */
	uint64_t stride_bytes; /* between progress points; 0: none */
	uint64_t t[2];	       /* vCPU 0's phase clock: pass start, pass end */
	struct barrier bar;
	struct mvm_rec_sweep recs[FW_MAX_VCPUS]; /* the current pass, per vCPU */
	struct mvm_rec_order order[FW_MAX_VCPUS];
	struct frontier fr[FW_MAX_VCPUS];
	uint64_t useful_at; /* the pass after which first_useful_work is marked */
} run;

/*
 * A bijection of [0, 2^bits) keyed by the seed: xor, odd multipliers and
 * xorshifts, each invertible modulo 2^bits (the hash-permutation of
 * Kensler's "Correlated Multi-Jittered Sampling", 2013). Counting i over
 * [0, 2^bits) and skipping values >= pages visits every page index once,
 * at most two evaluations per page, with no table.
 */
struct perm {
	uint64_t mask, k0, k1, m0, m1, m2;
	unsigned shift;
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void perm_init(struct perm *p, uint64_t pages, uint64_t seed)
{
	unsigned bits = 0;
	uint64_t x = seed;

	while ((1ULL << bits) < pages)
		bits++;
	p->mask = (1ULL << bits) - 1;
	p->shift = bits / 2 + 1;
	p->k0 = splitmix64(&x) & p->mask;
	p->k1 = splitmix64(&x) & p->mask;
	p->m0 = splitmix64(&x) | 1;
	p->m1 = splitmix64(&x) | 1;
	p->m2 = splitmix64(&x) | 1;
}

static inline uint64_t perm_at(const struct perm *p, uint64_t i)
{
	uint64_t x = (i ^ p->k0) * p->m0 & p->mask;

	x ^= x >> p->shift;
	x = (x * p->m1 + p->k1) & p->mask;
	x ^= x >> p->shift;
	x = x * p->m2 & p->mask;
	return x ^ (x >> p->shift);
}

/* What one pass counted: pages written, the sum of their indexes, the last one. */
struct pass {
	uint64_t pages, index_sum, last;
};

/* What one pass writes: the pages in order, and a frontier point every `every` of them. */
struct writer {
	volatile char *base;
	char v;
	struct frontier *f;
	uint64_t every, next;
	struct pass r;
};

static inline void write_page(struct writer *w, uint64_t j)
{
	w->base[j * PAGE] = w->v;
	w->r.index_sum += j;
	w->r.last = j;
	if (++w->r.pages == w->next) {
		frontier_mark(w->f, w->r.pages * PAGE, (uintptr_t)(w->base + j * PAGE));
		w->next += w->every;
	}
}

/*
 * The timed loops, native at CPL3: write w->v to the first byte of every
 * page of [base, base + pages * PAGE) once, in the run's order. With f, take
 * a frontier point every `every` pages (every > pages: none). No exits.
 */
static void pass_random(struct writer *w, uint64_t pages, const struct perm *p)
{
	for (uint64_t i = 0; i <= p->mask; i++) {
		uint64_t j = perm_at(p, i);

		if (j < pages)
			write_page(w, j);
	}
}

static void pass_stride(struct writer *w, uint64_t pages, uint64_t stride)
{
	for (uint64_t c = 0; c < stride && c < pages; c++)
		for (uint64_t j = c; j < pages; j += stride)
			write_page(w, j);
}

/* Blocks of `block` pages in p's order (p permutes the blocks), each block first page to last. */
static void pass_blocks(struct writer *w, uint64_t pages, uint64_t block,
			const struct perm *p)
{
	uint64_t nblocks = (pages + block - 1) / block;

	for (uint64_t i = 0; i <= p->mask; i++) {
		uint64_t b = perm_at(p, i);

		for (uint64_t j = b * block;
		     b < nblocks && j < (b + 1) * block && j < pages; j++)
			write_page(w, j);
	}
}

/*
 * vCPU 0: options, memory, the order records. The progress points' room is
 * taken first (its bound: the slice can only shrink), the region from what
 * is left. 0, or -1 once it said what is wrong.
 */
static int setup(const struct ctx *c)
{
	const struct opt opts[] = {
		{ "--mib", &run.o.mib, 1, OPT_MAX, NULL },
		{ "--iterations", &run.o.iterations, 1, OPT_MAX, NULL },
		{ "--seed", &run.o.seed, 0, ~0ULL, NULL },
		{ "--stride", &run.o.stride, 1, OPT_MAX, NULL },
		{ "--blocks", &run.o.blocks, 1, OPT_MAX, NULL },
		{ "--progress-mib", &run.o.progress_mib, 0, OPT_MAX, NULL },
		{ "--parallel", NULL, 0, 0, &run.o.parallel },
		{ "--snapshot-after", &run.o.snap_after, 0, OPT_MAX, NULL },
		{ NULL, NULL, 0, 0, NULL },
	};
	struct fw_info info;
	uint64_t bound, room, have, need;
	struct mvm_rec_progress *buf = NULL;

	run.o = (struct opts){
		0, 2, SEED_DEFAULT, 0, 0, PROGRESS_AUTO, 0, SNAP_AFTER_NONE
	};
	if (parse_opts(c, opts, USAGE) ||
	    snapshot_plan(c, &run.o.snap_after, run.o.iterations))
		return -1;
	if (run.o.stride && run.o.blocks) {
		printf("guest: %s: --stride and --blocks are two orders: give one\nusage: %s\n",
		       c->argv[0], USAGE);
		return -1;
	}
	run.n = run.o.parallel ? c->info->vcpus : 1;
	bound = run.o.mib ? run.o.mib * MIB : c->info->free_bytes / run.n;
	room = run.o.progress_mib == PROGRESS_AUTO
		       ? PROGRESS_AUTO_POINTS + 2 /* any slice */
		       : frontier_room(bound, progress_stride(bound, run.o.progress_mib));
	if (room > PROGRESS_MAX_POINTS) {
		printf("guest: %s: --progress-mib %lu takes more than %u points per vCPU: a larger stride, or 0 for none\n",
		       c->argv[0], run.o.progress_mib, PROGRESS_MAX_POINTS);
		return -1;
	}
	if (room && !(buf = progress_buffer(run.n, room))) {
		printf("guest: %s: no memory for %lu progress points: run minivmm with a larger --mem\n",
		       c->argv[0], run.n * room);
		return -1;
	}
	get_info(&info);
	have = info.free_bytes;
	if (!run.o.mib)
		run.o.mib = have / run.n / MIB;
	need = run.n * run.o.mib * MIB;
	if (!run.o.mib || need > have) {
		uint64_t mem = (info.mem_bytes - have + need + 4 * MIB + 2 * MIB - 1) &
			       ~(2 * MIB - 1);

		printf("guest: %s --mib %lu needs %lu MiB of free guest memory%s and this guest has %lu MiB free: run minivmm with --mem %luM or more, or a smaller --mib\n",
		       c->argv[0], run.o.mib ? run.o.mib : 1, (need ? need : MIB) / MIB,
		       run.n > 1 ? " (all vCPUs)" : "", have / MIB, mem / MIB);
		return -1;
	}
	run.region = phys_region(need);
	if (!run.region)
		FAIL("no %lu MiB of contiguous never-used memory for perm", need / MIB);
	run.pages = run.o.mib * MIB / PAGE;
	run.stride_bytes = progress_stride(run.pages * PAGE, run.o.progress_mib);
	for (uint32_t v = 0; v < run.n; v++) {
		uint64_t gpa = (uintptr_t)run.region + v * run.pages * PAGE;

		frontier_init(&run.fr[v], buf ? buf + v * room : NULL, v,
			      run.pages * PAGE, run.stride_bytes);
		run.order[v] = (struct mvm_rec_order){
			.vcpu = v,
			.workload = MVM_WL_PERM,
			.order = run.o.stride	? MVM_ORDER_STRIDE
				 : run.o.blocks ? MVM_ORDER_BLOCKS
						: MVM_ORDER_RANDOM,
			.seed = run.o.stride ? 0 : run.o.seed,
			.stride_pages = run.o.stride ? run.o.stride : run.o.blocks,
			.start_gpa = gpa,
			.end_gpa = gpa + run.pages * PAGE,
			.pages = run.pages,
			.progress_bytes = run.stride_bytes,
		};
	}
	printf("perm: %lu MiB%s, %lu iteration%s, ", run.o.mib,
	       run.n > 1 ? " per vCPU" : "", run.o.iterations,
	       run.o.iterations == 1 ? "" : "s");
	if (run.o.stride)
		printf("strided order (--stride %lu: pages 0, %lu, %lu ..., then 1, %lu ...)",
		       run.o.stride, run.o.stride, 2 * run.o.stride, 1 + run.o.stride);
	else if (run.o.blocks)
		printf("blocks of %lu pages in a random order (seed %lu), each first page to last",
		       run.o.blocks, run.o.seed);
	else
		printf("random order (seed %lu)", run.o.seed);
	printf(", direct-mapped (no guest faults), touch timed\n");
	if (run.n > 1)
		printf("perm: --parallel: %u vCPUs at once, each its own slice\n", run.n);
	return 0;
}

/* After pass it: every page of the slice holds v, so the pass's writes hit each page once. */
static void verify(const struct ctx *c, volatile const char *base, char v, uint64_t it)
{
	for (uint64_t j = 0; j < run.pages; j++)
		if (base[j * PAGE] != v)
			FAIL("vCPU %u: pass %lu did not write page %lu of %lu", c->cpu,
			     it, j, run.pages);
}

static void both(uint32_t n)
{
	if (n > 1)
		barrier_wait(&run.bar, n);
}

/* vCPU 0 between passes, the others at the next barrier: as flat's (sweep.c). */
static void perm_snapshot(const struct ctx *c, uint64_t pass)
{
	if (snapshot_take(c, run.region, run.n * run.pages * PAGE, pass) ==
	    MVM_SNAP_RESTORED)
		snapshot_restarted(run.fr, run.n, &run.useful_at, pass, run.o.iterations);
}

/*
 * One measurement per pass: every vCPU its slice, all at once with
 * --parallel; pass 1 meets each page for the first time (first useful
 * work), later passes are warm. vCPU 0 sends each pass's records.
 */
int perm_main(const struct ctx *c)
{
	volatile char *base;
	struct perm p;

	if (c->cpu == 0)
		run.bad = setup(c) != 0;
	both(c->info->vcpus); /* the others learn the options from vCPU 0 */
	if (run.bad)
		return MVM_EXIT_USAGE;
	if (c->cpu >= run.n)
		return 0;
	base = run.region + c->cpu * run.pages * PAGE;
	perm_init(&p,
		  run.o.blocks ? (run.pages + run.o.blocks - 1) / run.o.blocks
			       : run.pages,
		  run.o.seed);
	if (c->cpu == 0)
		send_records(MVM_REC_SWEEP, run.recs, 0); /* counting starts */
	run.useful_at = 1;
	for (uint64_t it = 1; it <= run.o.iterations; it++) {
		struct frontier *f =
			it == run.useful_at && run.stride_bytes ? &run.fr[c->cpu] : NULL;
		uint64_t every = f ? run.stride_bytes / PAGE : ~0ULL, t0, t1;
		char v = (char)(1 + (it - 1) % 255); /* never 0, never the last pass's */
		struct mvm_rec_sweep *r = &run.recs[c->cpu];
		struct fw_stats s0, s1;
		struct writer w;
		struct pass done;

		if (c->cpu == 0 && it - 1 == run.o.snap_after)
			perm_snapshot(c, it - 1);
		both(run.n);
		if (c->cpu == 0)
			run.t[0] = rdtsc();
		get_stats(&s0);
		if (f)
			frontier_mark(f, 0, 0);
		t0 = rdtsc();
		w = (struct writer){ base, v, f, every, every, { 0, 0, 0 } };
		if (run.o.stride)
			pass_stride(&w, run.pages, run.o.stride);
		else if (run.o.blocks)
			pass_blocks(&w, run.pages, run.o.blocks, &p);
		else
			pass_random(&w, run.pages, &p);
		done = w.r;
		t1 = rdtsc();
		if (f && f->pt[f->n - 1].bytes_done != run.pages * PAGE)
			frontier_mark(f, done.pages * PAGE,
				      (uintptr_t)(base + done.last * PAGE));
		get_stats(&s1);
		both(run.n);
		if (c->cpu == 0)
			run.t[1] = rdtsc();
		if (done.pages != run.pages)
			FAIL("vCPU %u: pass %lu wrote %lu of %lu pages", c->cpu, it,
			     done.pages, run.pages);
		*r = (struct mvm_rec_sweep){
			.workload = MVM_WL_PERM,
			.mode = MVM_MODE_DEMAND,
			.iteration = (uint32_t)it,
			.size_mib = (uint32_t)run.o.mib,
			.vcpu = c->cpu,
			.touch_cycles = t1 - t0,
			.pages = done.pages,
			.guest_faults = s1.page_faults - s0.page_faults,
			.pfn_sum = (uintptr_t)base / PAGE * done.pages + done.index_sum,
		};
		both(run.n); /* every vCPU's record is in */
		if (c->cpu == 0)
			send_measurement(run.recs, run.n, 1, 0, 0, run.t[1] - run.t[0]);
		both(run.n);
		if (c->cpu == 0 && it == run.useful_at)
			mark(MVM_MARK_FIRST_USEFUL_WORK); /* every page touched once */
		verify(c, base, v, it);
	}
	both(run.n);
	if (c->cpu == 0 && run.o.snap_after == run.o.iterations)
		perm_snapshot(c, run.o.iterations);
	if (c->cpu == 0)
		snapshot_check(c);
	if (c->cpu == 0)
		progress_send(run.order, run.fr, run.n);
	return 0;
}
