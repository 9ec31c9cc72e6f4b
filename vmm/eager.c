/* --eager: populate guest RAM up front, one slice per thread, before the guest runs. */
#include "vmm.h"

#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EAGER_CHUNK_BYTES    (256ULL << 20) /* progress granularity */
#define PROGRESS_MIN_BYTES   (1ULL << 30)
#define PROGRESS_INTERVAL_NS 100000000L

int eager_host_side(const struct vm *vm)
{
	return vm->eager.strategy == EAGER_POPULATE ||
	       vm->eager.strategy == EAGER_PREFAULT;
}

int eager_plan(struct vm *vm, char *err, size_t errlen)
{
	const struct config *cfg = vm->cfg;
	struct eager_run *e = &vm->eager;
	uint64_t align = vm->ram.backend->page_bytes;

	e->strategy = cfg->eager;
	if (e->strategy == EAGER_AUTO)
		e->strategy = vm->plat.pre_fault ? EAGER_PREFAULT : EAGER_POPULATE;
	if (e->strategy == EAGER_PREFAULT && !vm->plat.pre_fault) {
		snprintf(err, errlen,
			 "--eager=prefault: this KVM lacks KVM_CAP_PRE_FAULT_MEMORY "
			 "(236; Linux "
			 ">= 6.11 with EPT/NPT; platform here: %s, %s paging); use "
			 "--eager=populate",
			 vm->plat.kvm, vm->plat.tdp ? "tdp" : "shadow");
		return -1;
	}
	if (e->strategy == EAGER_NONE)
		return 0;
	/* hugetlb pools were reserved by the mapping itself: mm_ram_create checked them. */
	if (!vm->ram.backend->hugetlb_sysfs &&
	    mm_ram_check_capacity(vm->ram.backend, vm->ram.size, err, errlen))
		return -1;
	if (!eager_host_side(vm))
		return 0;
	e->on_vcpu_threads = cfg->eager_threads == 0;
	e->nthreads = e->on_vcpu_threads ? vm->nvcpus : cfg->eager_threads;
	e->th = calloc(e->nthreads, sizeof(*e->th));
	if (!e->th) {
		snprintf(err, errlen, "out of memory planning eager population");
		return -1;
	}
	e->total_bytes = vm->ram.size;
	/* Decided now: isatty() is an ioctl the sandbox will not allow later. */
	e->progress_bar = !cfg->quiet && isatty(STDERR_FILENO) &&
			  e->total_bytes > PROGRESS_MIN_BYTES;
	for (unsigned i = 0; i < e->nthreads; i++) {
		struct eager_thread *t = &e->th[i];
		uint64_t start, end;

		t->vm = vm;
		mvm_slice(vm->ram.size, e->nthreads, i, align, &start, &end);
		t->index = i;
		t->vcpu = i % vm->nvcpus;
		t->gpa = start;
		t->bytes = end - start;
	}
	return 0;
}

/* One thread's slice: host pages for write, then (prefault) the second-level entries. */
void eager_work(struct vm *vm, struct eager_thread *t)
{
	struct eager_run *e = &vm->eager;
	uint64_t page = vm->ram.backend->page_bytes;

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
						   kvm_pre_fault_ioctl, &t->pf);
			if (t->err) {
				snprintf(t->what, sizeof(t->what),
					 "KVM_PRE_FAULT_MEMORY in [0x%llx, +%llu MiB)",
					 (unsigned long long)(t->gpa + off),
					 (unsigned long long)(n >> 20));
				break;
			}
		}
		__atomic_fetch_add(&e->done_bytes, n, __ATOMIC_RELAXED);
	}
	t->t1 = now_s();
	pthread_mutex_lock(&vm->lock);
	e->done++;
	pthread_mutex_unlock(&vm->lock);
	pthread_kill(vm->main_thread, SIGUSR2);
}

/* Called by each vCPU thread before its first KVM_RUN. */
void eager_vcpu_gate(struct vm *vm, struct vcpu *v)
{
	struct eager_run *e = &vm->eager;

	if (!eager_host_side(vm) || !e->on_vcpu_threads)
		return;
	eager_work(vm, &e->th[v->index]);
	pthread_mutex_lock(&vm->lock);
	while (!e->go && vm->end == END_RUNNING)
		pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
}

static void progress(const struct vm *vm, int final)
{
	const struct eager_run *e = &vm->eager;
	uint64_t done = __atomic_load_n(&e->done_bytes, __ATOMIC_RELAXED);
	int width = 40, filled = (int)(done * (uint64_t)width / e->total_bytes);

	fprintf(stderr, "\reager %s: [%.*s%*s] %3d%% %.1f/%.1f GiB%s",
		eager_strategy_name(e->strategy), filled,
		"########################################", width - filled, "",
		(int)(done * 100 / e->total_bytes), (double)done / BYTES_PER_GIB,
		(double)e->total_bytes / BYTES_PER_GIB, final ? "\n" : "");
}

/*
 * Main thread: wait until every eager thread is done, drawing a progress bar
 * on a terminal for big populations, and answering SIGINT/SIGTERM.
 */
int eager_wait(struct vm *vm, const sigset_t *waitset)
{
	struct eager_run *e = &vm->eager;
	int bar = e->progress_bar;
	int ended = 0, err = 0;

	for (;;) {
		struct timespec ts = { 0, PROGRESS_INTERVAL_NS };
		int sig, all;

		pthread_mutex_lock(&vm->lock);
		all = e->done == e->nthreads;
		pthread_mutex_unlock(&vm->lock);
		if (all)
			break;
		if (bar)
			progress(vm, 0);
		sig = sigtimedwait(waitset, NULL, &ts);
		if ((sig == SIGINT || sig == SIGTERM) && !ended) {
			vm_finish(vm, END_INTERRUPTED, 0, "interrupted",
				  "interrupted by %s during eager population",
				  strsignal(sig));
			ended = 1;
		}
	}
	e->t_end = now_s();
	if (bar)
		progress(vm, 1);
	e->resident_bytes = mm_resident_bytes(&vm->ram);
	for (unsigned i = 0; i < e->nthreads && !err; i++) {
		struct eager_thread *t = &e->th[i];

		if (t->err) {
			vm_finish(vm, END_HOST_ERROR, 0, "host-error",
				  "eager %s, thread %u: %s: %s",
				  eager_strategy_name(e->strategy), i, t->what,
				  strerror(-t->err));
			err = 1;
		}
	}
	pthread_mutex_lock(&vm->lock);
	e->go = 1;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	return vm_stopping(vm) ? -1 : 0;
}

static void *dedicated(void *arg)
{
	struct eager_thread *t = arg;

	eager_work(t->vm, t);
	return NULL;
}

/* --eager-threads N: N threads of their own, joined before any vCPU starts. */
int eager_run_dedicated(struct vm *vm, const sigset_t *waitset)
{
	struct eager_run *e = &vm->eager;
	pthread_t *tids = calloc(e->nthreads, sizeof(*tids));
	unsigned started = 0;
	int r;

	if (!tids) {
		vm_finish(vm, END_HOST_ERROR, 0, "host-error",
			  "out of memory for eager threads");
		return -1;
	}
	for (; started < e->nthreads; started++) {
		e->th[started].vm = vm;
		r = pthread_create(&tids[started], NULL, dedicated, &e->th[started]);
		if (r) {
			vm_finish(vm, END_HOST_ERROR, 0, "host-error",
				  "pthread_create for eager thread %u: %s", started,
				  strerror(r));
			pthread_mutex_lock(&vm->lock);
			e->done += e->nthreads - started;
			pthread_mutex_unlock(&vm->lock);
			break;
		}
	}
	r = eager_wait(vm, waitset);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return r;
}

void eager_report(const struct vm *vm, FILE *f)
{
	const struct eager_run *e = &vm->eager;
	double secs = e->t_end - e->t_start;

	fprintf(f, "eager: %s%s%s, %u thread%s (%s), %.2f GiB in %.3f s (%.2f GiB/s)\n",
		eager_strategy_name(e->strategy),
		e->strategy == EAGER_PREFAULT
			? " (MADV_POPULATE_WRITE + KVM_PRE_FAULT_MEMORY)"
			: " (MADV_POPULATE_WRITE)",
		vm->cfg->eager == EAGER_AUTO
			? (vm->plat.pre_fault ? " [auto]"
					      : " [auto: no KVM_PRE_FAULT_MEMORY here]")
			: "",
		e->nthreads, e->nthreads == 1 ? "" : "s",
		e->on_vcpu_threads ? "on the vCPU threads" : "--eager-threads",
		(double)e->total_bytes / BYTES_PER_GIB, secs,
		secs > 0 ? (double)e->total_bytes / BYTES_PER_GIB / secs : 0);
	for (unsigned i = 0; i < e->nthreads; i++) {
		const struct eager_thread *t = &e->th[i];
		double s = t->t1 - t->t0;

		fprintf(f, "  thread %u: %.2f GiB at 0x%llx in %.3f s (%.2f GiB/s)", i,
			(double)t->bytes / BYTES_PER_GIB, (unsigned long long)t->gpa, s,
			s > 0 ? (double)t->bytes / BYTES_PER_GIB / s : 0);
		if (e->strategy == EAGER_PREFAULT)
			fprintf(f,
				", KVM_PRE_FAULT_MEMORY on vCPU %u: %u calls, %u retries",
				t->vcpu, t->pf.calls, t->pf.retries);
		fprintf(f, "%s\n",
			t->fell_back ? " [no MADV_POPULATE_WRITE: wrote each page]" : "");
	}
	if (e->resident_bytes >= 0)
		fprintf(f,
			"  resident on the host afterwards (mincore): %.2f GiB of %.2f "
			"GiB\n",
			(double)e->resident_bytes / BYTES_PER_GIB,
			(double)vm->ram.size / BYTES_PER_GIB);
}

void eager_write_json(const struct vm *vm, struct json *j)
{
	const struct eager_run *e = &vm->eager;

	json_begin_object(j, "eager");
	json_string(j, "requested", eager_strategy_name(vm->cfg->eager));
	json_string(j, "strategy", eager_strategy_name(e->strategy));
	if (eager_host_side(vm)) {
		json_u64(j, "threads", e->nthreads);
		json_bool(j, "on_vcpu_threads", e->on_vcpu_threads);
		json_u64(j, "bytes", e->total_bytes);
		json_double(j, "seconds", e->t_end - e->t_start);
		json_i64(j, "resident_bytes_after", e->resident_bytes);
		json_begin_array(j, "per_thread");
		for (unsigned i = 0; i < e->nthreads; i++) {
			const struct eager_thread *t = &e->th[i];
			double s = t->t1 - t->t0;

			json_begin_object(j, NULL);
			json_u64(j, "thread", i);
			json_u64(j, "gpa", t->gpa);
			json_u64(j, "bytes", t->bytes);
			json_double(j, "seconds", s);
			json_double(j, "gib_per_s",
				    s > 0 ? (double)t->bytes / BYTES_PER_GIB / s : 0);
			if (e->strategy == EAGER_PREFAULT) {
				json_u64(j, "prefault_vcpu", t->vcpu);
				json_u64(j, "prefault_bytes", t->pf.bytes);
				json_u64(j, "prefault_calls", t->pf.calls);
				json_u64(j, "prefault_retries", t->pf.retries);
			}
			json_end_object(j);
		}
		json_end_array(j);
	}
	if (e->strategy == EAGER_TOUCH) {
		const struct results *r = &vm->res;

		json_u64(j, "threads", vm->nvcpus);
		json_bool(j, "on_vcpu_threads", 1);
		json_begin_array(j, "per_thread");
		for (size_t i = 0; i < r->ntouch; i++) {
			const struct mvm_rec_touch *t = &r->touch[i];
			double s = cycles_to_s(vm, t->cycles);

			if (t->vcpu == MVM_VCPU_ALL)
				continue;
			json_begin_object(j, NULL);
			json_u64(j, "vcpu", t->vcpu);
			json_u64(j, "gpa", t->start_gpa);
			json_u64(j, "end_gpa", t->end_gpa);
			json_u64(j, "pages", t->pages);
			json_u64(j, "bytes", t->pages * MVM_PAGE_BYTES);
			json_double(j, "seconds", s);
			json_double(j, "gib_per_s",
				    s > 0 ? (double)t->pages * MVM_PAGE_BYTES /
						    BYTES_PER_GIB / s
					  : 0);
			json_end_object(j);
		}
		json_end_array(j);
		for (size_t i = 0; i < r->ntouch; i++) {
			if (r->touch[i].vcpu != MVM_VCPU_ALL)
				continue;
			json_u64(j, "pages", r->touch[i].pages);
			json_u64(j, "bytes", r->touch[i].pages * MVM_PAGE_BYTES);
			json_double(j, "seconds", cycles_to_s(vm, r->touch[i].cycles));
		}
	}
	json_begin_array(j, "fallbacks");
	if (vm->cfg->eager == EAGER_AUTO && !vm->plat.pre_fault)
		json_string(j, NULL, "auto: no KVM_PRE_FAULT_MEMORY, used populate");
	for (unsigned i = 0; i < e->nthreads; i++)
		if (e->th[i].fell_back) {
			json_string(j, NULL,
				    "no MADV_POPULATE_WRITE: wrote one byte per page");
			break;
		}
	json_end_array(j);
	json_end_object(j);
}
