/* Results: the records the guest reported, copied out of guest memory and kept. */
#include "vmm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RESULTS_MAX_SWEEP_ROWS (1u << 20) /* a runaway guest cannot exhaust the host */
#define RESULTS_MAX_PROGRESS   (1u << 20) /* frontier points, all vCPUs */
#define RESULTS_MAX_ORDERS     4096	  /* order records: one per vCPU */

/* A batch of sweep records and KVM's counters during it (cumulative deltas, gauges' values). */
struct batch {
	size_t first, n;
	uint64_t *kvm; /* nkvm values, or NULL */
};

/* Records of one kind, appended batch by batch, at most max of them. */
struct records {
	void *v;
	size_t n, cap, max, size;
};

static int records_add(struct records *rs, const void *recs, uint32_t n)
{
	if (rs->n + n > rs->max)
		return -E2BIG;
	if (rs->n + n > rs->cap) {
		size_t cap = rs->cap ? rs->cap : 64;
		void *p;

		while (cap < rs->n + n)
			cap *= 2;
		p = realloc(rs->v, cap * rs->size);
		if (!p)
			return -ENOMEM;
		rs->v = p;
		rs->cap = cap;
	}
	memcpy((char *)rs->v + rs->n * rs->size, recs, n * rs->size);
	rs->n += n;
	return 0;
}

struct results {
	uint32_t tsc_khz;
	unsigned nkvm;
	struct batch *batch;
	size_t nbatch, capbatch;
	pthread_mutex_t lock;	     /* records arrive on any vCPU thread */
	struct mvm_rec_touch *touch; /* --eager=touch: per vCPU, then MVM_VCPU_ALL */
	size_t ntouch;
	struct mvm_rec_sweep *sweep; /* as the guest sent them (times in TSC cycles) */
	size_t nsweep, capsweep;
	struct records progress,
		order; /* ABI 2: the touch frontier and the pass's order */
};

struct results *results_create(void)
{
	struct results *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	r->progress = (struct records){ .max = RESULTS_MAX_PROGRESS,
					.size = sizeof(struct mvm_rec_progress) };
	r->order = (struct records){ .max = RESULTS_MAX_ORDERS,
				     .size = sizeof(struct mvm_rec_order) };
	return r;
}

void results_set_tsc_khz(struct results *r, uint32_t tsc_khz)
{
	r->tsc_khz = tsc_khz;
}

void results_free(struct results *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nbatch; i++)
		free(r->batch[i].kvm);
	free(r->batch);
	free(r->sweep);
	free(r->touch);
	free(r->progress.v);
	free(r->order.v);
	free(r);
}

double results_seconds(const struct results *r, uint64_t cycles)
{
	return (double)cycles / ((double)r->tsc_khz * HZ_PER_KHZ);
}

static int add_batch(struct results *r, size_t first, uint32_t n, const uint64_t *kvm,
		     unsigned nkvm)
{
	struct batch *b;

	if (r->nbatch == r->capbatch) {
		size_t cap = r->capbatch ? r->capbatch * 2 : 64;

		b = realloc(r->batch, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		r->batch = b;
		r->capbatch = cap;
	}
	b = &r->batch[r->nbatch];
	*b = (struct batch){ first, n, NULL };
	if (kvm && nkvm) {
		b->kvm = malloc(nkvm * sizeof(*kvm));
		if (!b->kvm)
			return -ENOMEM;
		memcpy(b->kvm, kvm, nkvm * sizeof(*kvm));
		r->nkvm = nkvm;
	}
	r->nbatch++;
	return 0;
}

int results_add_sweep(struct results *r, const struct mvm_rec_sweep *recs, uint32_t n,
		      const uint64_t *kvm, unsigned nkvm, FILE *print)
{
	int ret = 0;

	if (!n)
		return 0;
	pthread_mutex_lock(&r->lock);
	if (r->nsweep + n > RESULTS_MAX_SWEEP_ROWS) {
		ret = -E2BIG;
		goto out;
	}
	ret = add_batch(r, r->nsweep, n, kvm, nkvm);
	if (ret)
		goto out;
	if (r->nsweep + n > r->capsweep) {
		size_t cap = r->capsweep ? r->capsweep * 2 : 64;
		struct mvm_rec_sweep *p;

		while (cap < r->nsweep + n)
			cap *= 2;
		p = realloc(r->sweep, cap * sizeof(*p));
		if (!p) {
			ret = -ENOMEM;
			goto out;
		}
		r->sweep = p;
		r->capsweep = cap;
	}
	/* One copy out of guest memory: printing and JSON see what was checked here. */
	memcpy(&r->sweep[r->nsweep], recs, n * sizeof(*recs));
	r->nsweep += n;
	if (print) /* under the lock: another vCPU's batch cannot move the records */
		report_sweep_batch(r, r->nsweep - n, print);
out:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* The guest's --eager=touch pass: the last report wins. */
int results_add_touch(struct results *r, const struct mvm_rec_touch *recs, uint32_t n)
{
	struct mvm_rec_touch *copy = malloc(n * sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	memcpy(copy, recs, n * sizeof(*copy));
	pthread_mutex_lock(&r->lock);
	free(r->touch);
	r->touch = copy;
	r->ntouch = n;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* Readers run after the vCPU threads were joined, or on the thread that added. */
const struct mvm_rec_sweep *results_sweep(const struct results *r, size_t *n)
{
	*n = r->nsweep;
	return r->sweep;
}

const uint64_t *results_kvm(const struct results *r, size_t i, unsigned *nkvm)
{
	for (size_t b = 0; b < r->nbatch; b++) {
		const struct batch *bt = &r->batch[b];

		if (i < bt->first || i >= bt->first + bt->n)
			continue;
		/* Counted for the whole batch: they belong to its one record, or its aggregate. */
		if (bt->n > 1 && r->sweep[i].vcpu != MVM_VCPU_ALL)
			return NULL;
		*nkvm = r->nkvm;
		return bt->kvm;
	}
	return NULL;
}

const struct mvm_rec_touch *results_touch(const struct results *r, size_t *n)
{
	*n = r->ntouch;
	return r->touch;
}

/*
 * ABI 2: the touch frontier and the order of a pass, kept as the guest sent
 * them (one copy out of guest memory), bounded. 0, -E2BIG past the bound,
 * -ENOMEM.
 */
int results_add_progress(struct results *r, uint32_t kind, const void *recs, uint32_t n)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	ret = records_add(kind == MVM_REC_ORDER ? &r->order : &r->progress, recs, n);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

const struct mvm_rec_progress *results_progress(const struct results *r, size_t *n)
{
	*n = r->progress.n;
	return r->progress.v;
}

const struct mvm_rec_order *results_order(const struct results *r, size_t *n)
{
	*n = r->order.n;
	return r->order.v;
}
