/* --eager: populate guest RAM up front, one slice per thread, before the guest runs (the mechanism). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EAGER_CHUNK_BYTES (256ULL << 20) /* progress granularity */

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
	unsigned vcpu; /* whose fd KVM_PRE_FAULT_MEMORY goes through */
	uint64_t gpa, bytes;
	uint64_t done; /* of bytes: less when the run was stopped first */
	double t0, t1;
	int err; /* -errno */
	int fell_back;
	struct prefault_stats pf;
	char what[64]; /* the step that failed */
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
	unsigned nthreads;
	int on_vcpu_threads; /* else dedicated threads (--eager-threads) */
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

double eager_seconds(const struct eager *e)
{
	return eager_host_side(e) && e->t_end > 0 ? e->t_end - e->t_start : 0;
}

void eager_begin(struct eager *e, struct vm *vm)
{
	if (!eager_host_side(e))
		return;
	e->resident_before = mm_resident_bytes(&vm->ram);
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
	free(e->th);
	free(e);
}

/*
 * --numa: the thread's share lies in its node's range (or, with fewer
 * threads than nodes, covers whole ranges from the first one's node); on
 * the vCPU threads, vCPU i's share is on vCPU i's node. KVM_PRE_FAULT_MEMORY
 * goes through a vCPU of the same node.
 */
static void numa_slice(struct eager *e, struct eager_thread *t)
{
	struct mm_numa_share s;
	unsigned vcpu0, nvcpus;

	numa_share(e->vm->numa, e->nthreads, t->index, &s);
	numa_node_vcpus(e->vm->numa, s.node, &vcpu0, &nvcpus);
	t->gpa = s.gpa;
	t->bytes = s.bytes;
	t->node = (int)s.node;
	t->nodes = s.nodes;
	if (!e->on_vcpu_threads)
		t->vcpu = vcpu0 + t->index % nvcpus;
}

int eager_plan(const struct vm_config *cfg, struct vm *vm, struct eager **out, char *err,
	       size_t errlen)
{
	uint64_t align = vm->ram.backend->page_bytes;
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
	e->requested = cfg->eager;
	e->pre_fault_here = vm->plat.pre_fault;
	e->strategy = cfg->eager;
	if (e->strategy == EAGER_AUTO)
		e->strategy = vm->plat.pre_fault ? EAGER_PREFAULT : EAGER_POPULATE;
	if (e->strategy == EAGER_PREFAULT && !vm->plat.pre_fault) {
		snprintf(
			err, errlen,
			"--eager=prefault: this KVM lacks KVM_CAP_PRE_FAULT_MEMORY (236; Linux >= 6.11 with EPT/NPT; platform here: %s, %s paging); use --eager=populate",
			vm->plat.kvm, vm->plat.tdp ? "tdp" : "shadow");
		r = -EOPNOTSUPP;
		goto fail;
	}
	/* hugetlb pools were reserved by the mapping itself: mm_ram_create checked them. */
	if (!vm->ram.backend->hugetlb_sysfs) {
		r = mm_ram_check_capacity(vm->ram.backend, vm->ram.size, vm->ram.file,
					  err, errlen);
		if (r)
			goto fail;
	}
	*out = e;
	if (!eager_host_side(e))
		return 0;
	e->on_vcpu_threads = cfg->eager_threads == 0;
	e->nthreads = e->on_vcpu_threads ? vm->nvcpus : cfg->eager_threads;
	e->th = calloc(e->nthreads, sizeof(*e->th));
	if (!e->th) {
		snprintf(err, errlen, "out of memory planning eager population");
		*out = NULL;
		r = -ENOMEM;
		goto fail;
	}
	e->total_bytes = vm->ram.size;
	if (cfg->roofline_path) {
		/* A file's allocated pages cost page tables only: the "map" ceiling. */
		r = mm_roofline_load(cfg->roofline_path, &e->roof, err, errlen);
		if (r) {
			*out = NULL;
			goto fail;
		}
		mm_roofline_ceiling(
			e->roof, vm->ram.backend->name, e->nthreads, e->total_bytes,
			vm->ram.file ? vm->ram.file->allocated_before : 0, &e->ceil);
	}
	for (unsigned i = 0; i < e->nthreads; i++) {
		struct eager_thread *t = &e->th[i];
		uint64_t start, end;

		mvm_slice(vm->ram.size, e->nthreads, i, align, &start, &end);
		*t = (struct eager_thread){ .index = i,
					    .vcpu = i % vm->nvcpus,
					    .gpa = start,
					    .bytes = end - start,
					    .e = e,
					    .node = -1,
					    .cpu = -1 };
		if (vm->numa)
			numa_slice(e, t);
	}
	return 0;
fail:
	eager_free(e);
	return r;
}

/* One thread's slice: host pages for write, then (prefault) the second-level entries. */
static void work(struct eager *e, struct eager_thread *t)
{
	struct vm *vm = e->vm;
	uint64_t page = vm->ram.backend->page_bytes;

	pthread_mutex_lock(&e->lock);
	while (!e->released && !vm_stopping(vm))
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
	if (t->node >= 0)
		t->have_allowed = !sched_getaffinity(0, sizeof(t->allowed), &t->allowed);
	t->t0 = now_s();
	for (uint64_t off = 0; off < t->bytes && !vm_stopping(vm);
	     off += EAGER_CHUNK_BYTES) {
		uint64_t n = t->bytes - off < EAGER_CHUNK_BYTES ? t->bytes - off
								: EAGER_CHUNK_BYTES;

		t->err = mm_populate_range(mm_gpa_to_hva(&vm->ram, t->gpa + off, n), n,
					   page, &t->fell_back);
		if (t->err) {
			snprintf(t->what, sizeof(t->what),
				 "MADV_POPULATE_WRITE at 0x%llx",
				 (unsigned long long)(t->gpa + off));
			break;
		}
		if (e->strategy == EAGER_PREFAULT) {
			t->err = mm_prefault_range(vm->vcpus[t->vcpu].fd, t->gpa + off, n,
						   mm_prefault_ioctl, &t->pf);
			if (t->err) {
				snprintf(t->what, sizeof(t->what),
					 "KVM_PRE_FAULT_MEMORY in [0x%llx, +%llu MiB)",
					 (unsigned long long)(t->gpa + off),
					 (unsigned long long)(n >> 20));
				break;
			}
		}
		t->done += n;
		__atomic_fetch_add(&e->done_bytes, n, __ATOMIC_RELAXED);
	}
	t->t1 = now_s();
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

/* The main thread's wait: until every eager thread is done, ticking the owner's display. */
struct waiting {
	struct eager *e;
	void (*tick)(void *);
	void *cookie;
};

static int waiting_done(void *cookie)
{
	return all_done(((struct waiting *)cookie)->e);
}

static void waiting_tick(void *cookie)
{
	struct waiting *w = cookie;

	w->tick(w->cookie);
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
	struct waiting w = { e, tick, cookie };
	unsigned never = 0;

	/* On the vCPU threads: a slice whose vCPU thread never started is done. */
	for (unsigned i = 0; e->on_vcpu_threads && i < vm->nvcpus; i++)
		never += !vm->vcpus[i].started;
	pthread_mutex_lock(&e->lock);
	e->done += never;
	pthread_mutex_unlock(&e->lock);
	vm_wait_main(vm, waiting_done, tick ? waiting_tick : NULL, &w, tick_s, 0, 0);
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
static int start_dedicated(struct eager *e, struct eager_thread *t, pthread_t *tid)
{
	pthread_attr_t attr;
	int r;

	if (t->node < 0)
		return pthread_create(tid, NULL, dedicated, t);
	r = -numa_thread_attr(e->vm->numa, (unsigned)t->node, &attr);
	if (r)
		return r;
	r = pthread_create(tid, &attr, dedicated, t);
	pthread_attr_destroy(&attr);
	return r;
}

/* --eager-threads N: N threads of their own, joined before any vCPU starts. */
void eager_run_dedicated(struct eager *e, struct vm *vm, void (*tick)(void *),
			 void *cookie, double tick_s)
{
	pthread_t *tids = calloc(e->nthreads, sizeof(*tids));
	unsigned started = 0;
	int r;

	if (!tids) {
		vm_finish(vm, END_HOST_ERROR, 0, "out of memory for eager threads");
		return;
	}
	for (; started < e->nthreads; started++) {
		r = start_dedicated(e, &e->th[started], &tids[started]);
		if (r) {
			vm_finish(vm, END_HOST_ERROR, 0,
				  "pthread_create for eager thread %u: %s", started,
				  strerror(r));
			pthread_mutex_lock(&e->lock);
			e->done += e->nthreads - started;
			pthread_mutex_unlock(&e->lock);
			break;
		}
	}
	eager_release(e);
	eager_wait(e, vm, tick, cookie, tick_s);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
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
				   .nthreads = e->nthreads,
				   .on_vcpu_threads = e->on_vcpu_threads,
				   .total_bytes = e->total_bytes,
				   .seconds = e->t_end - e->t_start,
				   .resident_before = e->resident_before,
				   .resident_after = e->resident_after,
				   .populated = populated(e),
				   .backing = e->vm->ram.backend->name,
				   .ceiling = e->roof ? &e->ceil : NULL };
	for (unsigned i = 0; i < e->nthreads; i++) {
		f->fell_back |= e->th[i].fell_back;
		f->done_bytes += e->th[i].done;
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
					  .bytes = th->bytes,
					  .done = th->done,
					  .t0 = th->t0,
					  .t1 = th->t1,
					  .fell_back = th->fell_back,
					  .pf = th->pf,
					  .node = th->node,
					  .host_node = nf.host,
					  .nodes = th->nodes,
					  .cpu = th->cpu,
					  .allowed = th->have_allowed ? &th->allowed
								      : NULL };
	return 0;
}
