/* Results: the records the guest reported, copied out of guest memory and kept. */
#include "vmm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RESULTS_MAX_SWEEP_ROWS (1u << 20) /* a runaway guest cannot exhaust the host */

struct results {
	uint32_t tsc_khz;
	pthread_mutex_t lock;	     /* records arrive on any vCPU thread */
	struct mvm_rec_touch *touch; /* --eager=touch: per vCPU, then MVM_VCPU_ALL */
	size_t ntouch;
	struct mvm_rec_sweep *sweep; /* as the guest sent them (times in TSC cycles) */
	size_t nsweep, capsweep;
};

struct results *results_create(void)
{
	struct results *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
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
	free(r->sweep);
	free(r->touch);
	free(r);
}

double results_seconds(const struct results *r, uint64_t cycles)
{
	return (double)cycles / ((double)r->tsc_khz * HZ_PER_KHZ);
}

int results_add_sweep(struct results *r, const struct mvm_rec_sweep *recs, uint32_t n,
		      FILE *print)
{
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (r->nsweep + n > RESULTS_MAX_SWEEP_ROWS) {
		ret = -E2BIG;
		goto out;
	}
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

const struct mvm_rec_touch *results_touch(const struct results *r, size_t *n)
{
	*n = r->ntouch;
	return r->touch;
}
