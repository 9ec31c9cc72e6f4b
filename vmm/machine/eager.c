/* --eager: populate guest RAM, before the guest runs or (background) beside it, one cursor per thread (the mechanism). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* In enum order; the options and --help list every row but "none". */
const struct eager_strategy_row eager_strategies[] = {
	{ EAGER_NONE, "none", { "lazy: every page faults in on first touch", NULL } },
	{ EAGER_AUTO,
	  "auto",
	  { "prefault where KVM has it, else populate", "(the default HOW)" } },
	{ EAGER_POPULATE, "populate", { "MADV_POPULATE_WRITE: host pages only", NULL } },
	{ EAGER_PREFAULT,
	  "prefault",
	  { "populate, then KVM_PRE_FAULT_MEMORY: also",
	    "EPT/NPT entries (Linux >= 6.11, TDP only)" } },
	{ EAGER_TOUCH,
	  "touch",
	  { "each vCPU writes one byte per page of its",
	    "slice in the guest (builds shadow entries)" } },
};
_Static_assert(ARRAY_SIZE(eager_strategies) == EAGER_STRATEGY_COUNT,
	       "one row per enum eager_strategy, in order");

const char *eager_strategy_name(enum eager_strategy s)
{
	return s < EAGER_STRATEGY_COUNT ? eager_strategies[s].name : "?";
}

/* One thread's share. */
struct eager_thread {
	unsigned index;
	unsigned vcpu;	 /* whose fd KVM_PRE_FAULT_MEMORY goes through */
	int prefault_fd; /* that vCPU's (a spare's in the background) */
	uint64_t gpa, slice_bytes;
	uint64_t done, from_file; /* bytes populated; of them, the file's */
	double t0, t1;
	int err; /* -errno */
	int fell_back;
	int stopped; /* the run ended before the work did */
	struct prefault_stats pf;
	struct order_cursor cur;
	struct eager_point pt[EAGER_POINTS_MAX];
	unsigned npt;
	uint64_t next_pt,
		stride; /* the next point's bytes, and the stride between points */
	char what[96];	/* the step that failed */
	pthread_t tid;
	int created;
	struct eager *e;
	/* --numa: the guest node it runs on and how many ranges it covers; where it ran. */
	int node;
	unsigned nodes;
	int cpu;
	cpu_set_t allowed;
	int have_allowed;
};

struct eager {
	struct vm *vm;
	enum eager_strategy requested, strategy; /* strategy: resolved */
	int pre_fault_here;			 /* KVM_PRE_FAULT_MEMORY on this KVM */
	int background;				 /* beside the guest */
	int sandbox; /* background threads enter SANDBOX_EAGER */
	enum eager_order order;
	const char *order_file;
	struct order_plan plan;
	unsigned
		nthreads; /* background without --eager-threads: the CPUs the vCPUs leave idle */
	int threads_default; /* ... so chosen (no --eager-threads) */
	int on_vcpu_threads; /* else dedicated threads (--eager-threads, background) */
	struct eager_thread *th;
	uint64_t total_bytes;
	uint64_t done_bytes; /* atomic: progress */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned done; /* threads finished */
	int released;  /* every thread exists: populating may start */
	int go;	       /* vCPU threads may enter the guest */
	double t_start, t_end;
	/* Guest RAM resident on the host (mincore) before and after: what eager itself did. */
	int64_t resident_before, resident_after;
	struct mm_roofline *roof; /* --roofline, and its ceiling for this population */
	struct mm_ceiling ceil;
};

enum eager_strategy eager_strategy(const struct eager *e)
{
	return e ? e->strategy : EAGER_NONE;
}

int eager_host_side(const struct eager *e)
{
	return e && (e->strategy == EAGER_POPULATE || e->strategy == EAGER_PREFAULT);
}

int eager_on_vcpu_threads(const struct eager *e)
{
	return eager_host_side(e) && e->on_vcpu_threads;
}

int eager_in_background(const struct eager *e)
{
	return eager_host_side(e) && e->background;
}

unsigned eager_background_default_threads(unsigned vcpus, uint64_t chunks)
{
	cpu_set_t set;
	unsigned cpus = 0, n;

	/* The CPUs this process may run on (taskset, a cgroup's cpuset, Slurm's). */
	if (!sched_getaffinity(0, sizeof(set), &set))
		cpus = (unsigned)CPU_COUNT(&set);
	n = cpus > vcpus ? cpus - vcpus : 1;
	if (chunks && n > chunks)
		n = (unsigned)chunks; /* a chunk each at least */
	return n < EAGER_THREADS_MAX ? n : EAGER_THREADS_MAX;
}

unsigned eager_spare_vcpus_at_most(const struct vm_config *cfg, const struct vm *vm)
{
	int prefault = cfg->eager == EAGER_PREFAULT ||
		       (cfg->eager == EAGER_AUTO && vm->plat.pre_fault);

	if (!cfg->eager_background || !prefault)
		return 0;
	/* chunks unknown before RAM is mapped: 0 leaves the bound by CPUs. */
	return cfg->eager_threads ? cfg->eager_threads
				  : eager_background_default_threads(cfg->vcpus, 0);
}

double eager_seconds(const struct eager *e)
{
	return eager_host_side(e) && e->t_end > 0 ? e->t_end - e->t_start : 0;
}

void eager_begin(struct eager *e, struct vm *vm)
{
	/* In the background the guest's own faults count in mincore too: not taken. */
	if (!eager_host_side(e) || e->background)
		return;
	e->resident_before = mm_resident_untouched(&vm->ram); /* guest not placed yet */
}

/*
 * Every thread waits here until all exist, then they start together (the
 * clock too): a thread created while another populates waits for the mmap
 * lock its stack needs, which the populating one holds, and the threads
 * would populate one after the other (bench/peers measured it).
 */
void eager_release(struct eager *e)
{
	if (!eager_host_side(e))
		return;
	pthread_mutex_lock(&e->lock);
	e->t_start = now_s();
	e->released = 1;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

/* Bytes eager made resident itself (not what was resident already), or -1 if unknown. */
static int64_t populated(const struct eager *e)
{
	if (e->resident_before < 0 || e->resident_after < 0)
		return -1;
	return e->resident_after > e->resident_before
		       ? e->resident_after - e->resident_before
		       : 0;
}

double eager_end_time(const struct eager *e)
{
	return eager_host_side(e) ? e->t_end : 0;
}

void eager_free(struct eager *e)
{
	if (!e)
		return;
	mm_roofline_free(e->roof);
	order_plan_free(&e->plan);
	free(e->th);
	free(e);
}

/* frontier's eyes: mincore over guest RAM. */
static uint64_t ram_residency(void *cookie, uint64_t gpa, uint64_t len, uint64_t *top)
{
	return mm_resident_count(cookie, gpa, len, top);
}

/*
 * The strategy on this KVM: auto resolves to prefault where KVM has it;
 * prefault without it is refused (-EOPNOTSUPP, exit 3).
 */
static int resolve(struct eager *e, const struct vm_config *cfg, const struct vm *vm,
		   char *err, size_t errlen)
{
	e->requested = cfg->eager;
	e->pre_fault_here = vm->plat.pre_fault;
	e->strategy = cfg->eager;
	if (e->strategy == EAGER_AUTO)
		e->strategy = vm->plat.pre_fault ? EAGER_PREFAULT : EAGER_POPULATE;
	if (e->strategy == EAGER_PREFAULT && !vm->plat.pre_fault) {
		snprintf(
			err, errlen,
			"--eager=%sprefault: this KVM lacks KVM_CAP_PRE_FAULT_MEMORY (236; Linux >= 6.11 with EPT/NPT; platform here: %s, %s paging); use --eager=%spopulate",
			cfg->eager_background ? "background:" : "", vm->plat.kvm,
			vm->plat.tdp ? "tdp" : "shadow",
			cfg->eager_background ? "background:" : "");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* --eager-order: the plan, with a FILE read and checked against guest RAM. -EINVAL: the file. */
static int plan_order(struct eager *e, const struct vm_config *cfg, struct vm *vm,
		      char *err, size_t errlen)
{
	struct touch_order o = { 0 };
	char why[512];
	int r;

	e->order = eager_order_of(cfg->eager_order);
	if (e->order == EAGER_ORDER_FRONTIER && !e->background) {
		snprintf(
			err, errlen,
			"--eager-order frontier follows the running guest: it needs --eager=background");
		return -EINVAL;
	}
	if (e->order == EAGER_ORDER_FILE) {
		e->order_file = cfg->eager_order;
		r = touch_order_read(cfg->eager_order, vm->ram.size, &o, why,
				     sizeof(why));
		if (r) {
			snprintf(err, errlen, "--eager-order %s", why);
			return r == -ENOMEM
				       ? r
				       : -EINVAL; /* a file that cannot be read: usage */
		}
	}
	r = order_plan_init(&e->plan, e->order, vm->ram.size, vm->ram.backend->page_bytes,
			    e->nthreads, e->order == EAGER_ORDER_FILE ? &o : NULL);
	touch_order_free(&o);
	if (r) {
		snprintf(err, errlen, "out of memory planning eager population");
		return r;
	}
	e->plan.residency = ram_residency;
	e->plan.resident_cookie = &vm->ram;
	return 0;
}

/*
 * --numa: the thread's share lies in its node's range (or, with fewer
 * threads than nodes, covers whole ranges from the first one's node); on
 * the vCPU threads, vCPU i's share is on vCPU i's node. KVM_PRE_FAULT_MEMORY
 * goes through a vCPU of the same node. The slice orders walk that share;
 * the file order's threads share all of RAM, each pinned to its node.
 */
static void numa_slice(struct eager *e, struct eager_thread *t)
{
	struct mm_numa_share s;
	unsigned vcpu0, nvcpus;

	numa_share(e->vm->numa, e->nthreads, t->index, &s);
	numa_node_vcpus(e->vm->numa, s.node, &vcpu0, &nvcpus);
	t->node = (int)s.node;
	t->nodes = s.nodes;
	if (!e->on_vcpu_threads)
		t->vcpu = vcpu0 + t->index % nvcpus;
	if (e->order == EAGER_ORDER_FILE)
		return;
	t->cur.lo = t->cur.front = t->cur.guest = s.gpa;
	t->cur.hi = t->cur.back = s.gpa + s.bytes;
	t->cur.left = (s.bytes + e->plan.chunk - 1) / e->plan.chunk;
}

/* Each thread's cursor, its prefault vCPU, the stride of its frontier's points. */
static void plan_threads(struct eager *e, struct vm *vm)
{
	for (unsigned i = 0; i < e->nthreads; i++) {
		struct eager_thread *t = &e->th[i];
		uint64_t share;

		*t = (struct eager_thread){
			.index = i, .vcpu = i % vm->nvcpus, .e = e, .node = -1, .cpu = -1
		};
		order_cursor_init(&e->plan, i, &t->cur);
		if (vm->numa)
			numa_slice(e, t);
		t->gpa = t->cur.lo;
		t->slice_bytes = t->cur.hi - t->cur.lo;
		if (e->background && e->strategy == EAGER_PREFAULT) {
			t->vcpu = vm->nvcpus + i;
			t->prefault_fd = vm->spares[i].fd;
		} else {
			t->prefault_fd = vm->vcpus[t->vcpu].fd;
		}
		share = t->slice_bytes ? t->slice_bytes : e->total_bytes / e->nthreads;
		/* Points at a stride that fits the share: the start, the stride's, the end. */
		t->stride = share / (EAGER_POINTS_MAX - 2) + 1;
		if (t->stride < e->plan.chunk)
			t->stride = e->plan.chunk;
		t->next_pt = t->stride;
	}
}

int eager_plan(const struct vm_config *cfg, struct vm *vm, struct eager **out, char *err,
	       size_t errlen)
{
	struct eager *e;
	int r;

	*out = NULL;
	if (cfg->eager == EAGER_NONE)
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory planning eager population");
		return -ENOMEM;
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	e->vm = vm;
	e->background = cfg->eager_background;
	e->resident_before = e->resident_after = -1;
	r = resolve(e, cfg, vm, err, errlen);
	if (r)
		goto fail;
	/* hugetlb pools were reserved by the mapping itself: mm_ram_create checked them. */
	if (!vm->ram.backend->hugetlb_sysfs) {
		r = mm_ram_check_capacity(vm->ram.backend, vm->ram.size, vm->ram.file,
					  err, errlen);
		if (r)
			goto fail;
	}
	if (!eager_host_side(e)) {
		*out = e;
		return 0;
	}
	/* In the background always threads of their own: the vCPU threads run the guest. */
	e->on_vcpu_threads = cfg->eager_threads == 0 && !e->background;
	e->total_bytes = vm->ram.size;
	e->nthreads =
		cfg->eager_threads ? cfg->eager_threads
		: e->background
			? eager_background_default_threads(
				  vm->nvcpus,
				  e->total_bytes / (vm->ram.backend->page_bytes >
								    MVM_RAM_ALIGN_BYTES
							    ? vm->ram.backend->page_bytes
							    : MVM_RAM_ALIGN_BYTES))
			: vm->nvcpus;
	e->threads_default = !cfg->eager_threads;
	e->th = calloc(e->nthreads, sizeof(*e->th));
	if (!e->th) {
		snprintf(err, errlen, "out of memory planning eager population");
		r = -ENOMEM;
		goto fail;
	}
	r = plan_order(e, cfg, vm, err, errlen);
	if (r)
		goto fail;
	if (e->background && e->strategy == EAGER_PREFAULT) {
		if (vm->nvcpus + e->nthreads > (unsigned)vm->plat.max_vcpus) {
			snprintf(
				err, errlen,
				"--eager=background:prefault needs a spare vCPU per eager thread: %u vCPUs and %u threads are more than this KVM's %d (KVM_CAP_MAX_VCPUS); use fewer --eager-threads",
				vm->nvcpus, e->nthreads, vm->plat.max_vcpus);
			r = -EINVAL;
			goto fail;
		}
		r = vm_create_spare_vcpus(vm, e->nthreads, err, errlen);
		if (r)
			goto fail;
	}
	if (cfg->roofline_path) {
		/* A file's allocated pages cost page tables only: the "map" ceiling. */
		r = mm_roofline_load(cfg->roofline_path, &e->roof, err, errlen);
		if (r)
			goto fail;
		mm_roofline_ceiling(
			e->roof, vm->ram.backend->name, e->nthreads, e->total_bytes,
			vm->ram.file ? vm->ram.file->allocated_before : 0, &e->ceil);
	}
	plan_threads(e, vm);
	*out = e;
	return 0;
fail:
	eager_free(e);
	return r;
}

/*
 * A point of the thread's frontier. When the room is full, every other
 * point goes (the first stays) and the stride doubles: at most
 * EAGER_POINTS_MAX, evenly spread, whatever the thread ends up doing.
 */
static void point(struct eager_thread *t, double now, uint64_t gpa)
{
	if (t->npt == EAGER_POINTS_MAX) {
		unsigned n = 0;

		for (unsigned i = 0; i < t->npt; i += 2)
			t->pt[n++] = t->pt[i];
		t->npt = n;
		t->stride *= 2;
	}
	t->pt[t->npt++] = (struct eager_point){ now, t->done, gpa };
}

/* Host pages for write, then (prefault) the second-level entries. 0 or -errno, t->what set. */
static int populate(struct eager *e, struct eager_thread *t, uint64_t gpa, uint64_t len)
{
	struct vm *vm = e->vm;

	t->err = mm_populate_range(mm_gpa_to_hva(&vm->ram, gpa, len), len,
				   vm->ram.backend->page_bytes, &t->fell_back);
	if (t->err) {
		snprintf(t->what, sizeof(t->what), "MADV_POPULATE_WRITE at 0x%llx",
			 (unsigned long long)gpa);
		return t->err;
	}
	if (e->strategy == EAGER_PREFAULT) {
		t->err = mm_prefault_range(t->prefault_fd, gpa, len, mm_prefault_ioctl,
					   &t->pf);
		if (t->err)
			snprintf(t->what, sizeof(t->what),
				 "KVM_PRE_FAULT_MEMORY on vCPU %u in [0x%llx, +%llu KiB)",
				 t->vcpu, (unsigned long long)gpa,
				 (unsigned long long)(len >> 10));
	}
	return t->err;
}

/* The thread's work, range by range in its order, until it is done or the run ends. */
static void populate_all(struct eager *e, struct eager_thread *t)
{
	struct vm *vm = e->vm;
	uint64_t gpa = 0, len;
	int from_file;
	double now;

	t->t0 = now_s();
	point(t, t->t0, 0);
	while (order_next(&e->plan, &t->cur, &gpa, &len, &from_file)) {
		if (vm_stopping(vm)) {
			t->stopped = 1;
			break;
		}
		if (populate(e, t, gpa, len))
			break;
		now = now_s();
		order_done(&e->plan, gpa, len, (uint64_t)(now * NSEC_PER_SEC));
		t->done += len;
		t->from_file += from_file ? len : 0;
		__atomic_fetch_add(&e->done_bytes, len, __ATOMIC_RELAXED);
		if (t->done >= t->next_pt) {
			point(t, now, gpa);
			t->next_pt = t->done + t->stride;
		}
	}
	t->t1 = now_s();
	if (t->pt[t->npt - 1].bytes != t->done)
		point(t, t->t1, gpa);
}

/* Before the guest runs: wait until every thread exists, then populate. */
static void work(struct eager *e, struct eager_thread *t)
{
	struct vm *vm = e->vm;

	pthread_mutex_lock(&e->lock);
	while (!e->released && !vm_stopping(vm))
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
	if (t->node >= 0)
		t->have_allowed = !sched_getaffinity(0, sizeof(t->allowed), &t->allowed);
	populate_all(e, t);
	t->cpu = sched_getcpu();
	pthread_mutex_lock(&e->lock);
	e->done++;
	pthread_mutex_unlock(&e->lock);
	vm_wake_main(vm);
}

void eager_vcpu_gate(struct eager *e, struct vm *vm, unsigned vcpu)
{
	if (!eager_on_vcpu_threads(e))
		return;
	work(e, &e->th[vcpu]);
	pthread_mutex_lock(&e->lock);
	while (!e->go && !vm_stopping(vm))
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

void eager_progress(const struct eager *e, uint64_t *done, uint64_t *total)
{
	*done = e ? __atomic_load_n(&e->done_bytes, __ATOMIC_RELAXED) : 0;
	*total = e ? e->total_bytes : 0;
}

static int all_done(void *cookie)
{
	struct eager *e = cookie;
	int all;

	pthread_mutex_lock(&e->lock);
	all = e->done == e->nthreads;
	pthread_mutex_unlock(&e->lock);
	return all;
}

/*
 * Main thread: wait until every eager thread is done (calling the owner's
 * tick meanwhile; SIGINT/SIGTERM end the run and the threads stop at their
 * next chunk), then see what is resident and check the threads' results.
 * The vCPUs wait until eager_go().
 */
void eager_wait(struct eager *e, struct vm *vm, void (*tick)(void *), void *cookie,
		double tick_s)
{
	unsigned never = 0;

	/* On the vCPU threads: a slice whose vCPU thread never started is done. */
	for (unsigned i = 0; e->on_vcpu_threads && i < vm->nvcpus; i++)
		never += !vm->vcpus[i].started;
	pthread_mutex_lock(&e->lock);
	e->done += never;
	pthread_mutex_unlock(&e->lock);
	vm_wait_main(vm, all_done, e, tick, cookie, tick_s, 0, 0);
	e->t_end = now_s();
	e->resident_after = mm_resident_bytes(&vm->ram);
	numa_audit(vm->numa, &vm->ram, NUMA_AUDIT_AFTER_EAGER); /* outside eager's time */
	for (unsigned i = 0; i < e->nthreads; i++) {
		struct eager_thread *t = &e->th[i];

		if (t->err) {
			vm_finish(vm, END_HOST_ERROR, 0, "eager %s, thread %u: %s: %s",
				  eager_strategy_name(e->strategy), i, t->what,
				  strerror(-t->err));
			break;
		}
	}
}

void eager_go(struct eager *e)
{
	if (!eager_host_side(e))
		return;
	pthread_mutex_lock(&e->lock);
	e->go = 1;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void *dedicated(void *arg)
{
	struct eager_thread *t = arg;

	work(t->e, t);
	return NULL;
}

/* --numa: pinned to its node's CPUs from the start. Returns like pthread_create. */
static int start_thread(struct eager *e, struct eager_thread *t, void *(*fn)(void *))
{
	pthread_attr_t attr;
	int r;

	if (t->node < 0)
		return pthread_create(&t->tid, NULL, fn, t);
	r = -numa_thread_attr(e->vm->numa, (unsigned)t->node, &attr);
	if (r)
		return r;
	r = pthread_create(&t->tid, &attr, fn, t);
	pthread_attr_destroy(&attr);
	return r;
}

/* --eager-threads N: N threads of their own, joined before any vCPU starts. */
void eager_run_dedicated(struct eager *e, struct vm *vm, void (*tick)(void *),
			 void *cookie, double tick_s)
{
	unsigned started = 0;
	int r;

	for (; started < e->nthreads; started++) {
		r = start_thread(e, &e->th[started], dedicated);
		if (r) {
			vm_finish(vm, END_HOST_ERROR, 0,
				  "pthread_create for eager thread %u: %s", started,
				  strerror(r));
			pthread_mutex_lock(&e->lock);
			e->done += e->nthreads - started;
			pthread_mutex_unlock(&e->lock);
			break;
		}
		e->th[started].created = 1;
	}
	eager_release(e);
	eager_wait(e, vm, tick, cookie, tick_s);
	for (unsigned i = 0; i < started; i++)
		pthread_join(e->th[i].tid, NULL);
}

/* --- in the background: beside the guest ----------------------------------- */

/*
 * A background thread: its own sandbox first (before any guest code can
 * drive the process, and before it populates: building the filter
 * allocates), then the work once released. A failure ends the run at once:
 * the guest is running and nobody else would notice.
 */
static void *background(void *arg)
{
	struct eager_thread *t = arg;
	struct eager *e = t->e;
	struct vm *vm = e->vm;
	struct sandbox_fds f = { .vcpu_fd = -1,
				 .uffd_fd = -1,
				 .stop_fd = -1,
				 .prefault_fd = e->strategy == EAGER_PREFAULT
							? t->prefault_fd
							: -1,
				 .stats_fds = NULL,
				 .nstats = 0 };
	int r;

	/* Before the filter, which allows no sched_getaffinity. */
	if (t->node >= 0)
		t->have_allowed = !sched_getaffinity(0, sizeof(t->allowed), &t->allowed);
	r = e->sandbox ? sandbox_enter(SANDBOX_EAGER, &f) : 0;
	if (r) {
		t->stopped = 1;
		vm_finish(vm, END_HOST_ERROR, 0,
			  "sandbox: seccomp filter for eager thread %u: %s", t->index,
			  strerror(-r));
		return NULL;
	}
	pthread_mutex_lock(&e->lock);
	while (!e->released && !vm_stopping(vm))
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
	populate_all(e, t);
	t->cpu = sched_getcpu(); /* getcpu (the vDSO or rseq where they can) */
	if (t->err)
		vm_finish(vm, END_HOST_ERROR, 0, "eager background %s, thread %u: %s: %s",
			  eager_strategy_name(e->strategy), t->index, t->what,
			  strerror(-t->err));
	return NULL;
}

void eager_background_start(struct eager *e, struct vm *vm, int sandbox)
{
	int r;

	if (!eager_in_background(e))
		return;
	e->sandbox = sandbox;
	for (unsigned i = 0; i < e->nthreads; i++) {
		r = start_thread(e, &e->th[i], background);
		if (r) {
			vm_finish(vm, END_HOST_ERROR, 0,
				  "pthread_create for eager thread %u: %s", i,
				  strerror(r));
			return;
		}
		e->th[i].created = 1;
	}
}

void eager_background_join(struct eager *e)
{
	if (!eager_in_background(e))
		return;
	/* A run that never released them (setup failed) must not leave them waiting. */
	pthread_mutex_lock(&e->lock);
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	for (unsigned i = 0; i < e->nthreads; i++) {
		struct eager_thread *t = &e->th[i];

		if (!t->created)
			continue;
		pthread_join(t->tid, NULL);
		t->created = 0;
		if (t->t1 > e->t_end)
			e->t_end = t->t1;
	}
}

enum eager_strategy eager_requested(const struct eager *e)
{
	return e ? e->requested : EAGER_NONE;
}

int eager_facts(const struct eager *e, struct eager_facts *f)
{
	if (!eager_host_side(e))
		return -ENOENT;
	*f = (struct eager_facts){ .requested = e->requested,
				   .strategy = e->strategy,
				   .pre_fault_here = e->pre_fault_here,
				   .background = e->background,
				   .order = e->order,
				   .order_file = e->order_file,
				   .order_file_pages = e->plan.file_pages,
				   .order_file_bytes = e->plan.file_bytes,
				   .order_file_ram_bytes = e->plan.file_ram_bytes,
				   .nthreads = e->nthreads,
				   .threads_default = e->threads_default,
				   .on_vcpu_threads = e->on_vcpu_threads,
				   .spare_vcpus = e->vm->nspares,
				   .total_bytes = e->total_bytes,
				   .chunk_bytes = e->plan.chunk,
				   .t_start = e->t_start,
				   .t_end = e->t_end,
				   .seconds = e->t_end > 0 ? e->t_end - e->t_start : 0,
				   .resident_before = e->resident_before,
				   .resident_after = e->resident_after,
				   .populated = populated(e),
				   .backing = e->vm->ram.backend->name,
				   .ceiling = e->roof ? &e->ceil : NULL,
				   .chunk_ns = e->plan.chunk_ns,
				   .nchunks = e->plan.nchunks };
	f->finished = e->t_end > 0;
	for (unsigned i = 0; i < e->nthreads; i++) {
		const struct eager_thread *t = &e->th[i];

		f->fell_back |= t->fell_back;
		f->done_bytes += t->done;
		f->from_file_bytes += t->from_file;
		f->finished &= !t->stopped && !t->err && t->t1 > 0;
	}
	return 0;
}

int eager_thread(const struct eager *e, unsigned i, struct eager_thread_facts *t)
{
	const struct eager_thread *th;
	struct numa_node_facts nf;

	if (!eager_host_side(e) || i >= e->nthreads)
		return -ENOENT;
	th = &e->th[i];
	if (th->node < 0 || numa_node_facts(e->vm->numa, (unsigned)th->node, &nf))
		nf.host = -1;
	*t = (struct eager_thread_facts){ .vcpu = th->vcpu,
					  .gpa = th->gpa,
					  .bytes = th->slice_bytes,
					  .done = th->done,
					  .t0 = th->t0,
					  .t1 = th->t1,
					  .fell_back = th->fell_back,
					  .stopped = th->stopped,
					  .pf = th->pf,
					  .points = th->pt,
					  .npoints = th->npt,
					  .node = th->node,
					  .host_node = nf.host,
					  .nodes = th->nodes,
					  .cpu = th->cpu,
					  .allowed = th->have_allowed ? &th->allowed
								      : NULL };
	return 0;
}
