/* Records: what the guest reported, copied out of guest memory and kept, with the table-row rule. */
#include "measure.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A batch of sweep records and KVM's counters during it (cumulative deltas, gauges' values). */
struct batch {
	size_t first, n;
	size_t row_before; /* index + 1 of the last vCPU 0 or all-vCPU record before it; 0: none */
	uint64_t *kvm; /* nkvm values, or NULL */
};

/*
 * The table-row index: (workload, iteration, size, mode) -> the record a
 * table cell shows, so that printing, aggregating and writing stay linear
 * in the records however many a guest sends. Open addressing, kept under
 * half full; slots hold a record index + 1 (0: empty).
 */
struct row_index {
	uint32_t *slot;
	size_t cap; /* a power of two */
	size_t used;
};

/* Records of one kind, appended batch by batch, at most max of them. */
struct rec_array {
	void *v;
	size_t n, cap, max, size;
	const char *what, *limit; /* for the limit's message */
};

/* The message of a limit the guest went past (what: "sweep records (MVM_...)"): -E2BIG. */
static int over(char *err, size_t errlen, const char *what, const char *limit, size_t max)
{
	snprintf(
		err, errlen,
		"guest limit: the guest sent more %s than the VMM keeps in a run (%s = %zu)",
		what, limit, max);
	return -E2BIG;
}
#define OVER(err, errlen, what, LIMIT) over(err, errlen, what, #LIMIT, LIMIT)

static int rec_array_add(struct rec_array *rs, const void *recs, uint32_t n, char *err,
			 size_t errlen)
{
	if (rs->n + n > rs->max)
		return over(err, errlen, rs->what, rs->limit, rs->max);
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

/*
 * One vCPU's touch frontier so far, for the ABI's run-wide rules: its order
 * record (at most one, before any point), then at most max_points points of
 * its pass, bytes_done never decreasing.
 */
struct frontier_state {
	int have_order;
	uint64_t pass_bytes; /* end_gpa - start_gpa of its order record */
	uint64_t max_points; /* pass_bytes / progress_bytes + 2; 0 without a stride */
	uint64_t points;     /* taken so far */
	uint64_t last_done;  /* bytes_done of the last one */
};

struct records {
	uint32_t tsc_khz;
	unsigned nvcpus;		 /* the guest's: records name a vCPU below it */
	struct frontier_state *frontier; /* nvcpus of them */
	unsigned nkvm;
	struct batch *batch;
	size_t nbatch, capbatch;
	pthread_mutex_t lock;	     /* records arrive on any vCPU thread */
	struct mvm_rec_touch *touch; /* --eager=touch: per vCPU, then MVM_VCPU_ALL */
	size_t ntouch, ntouch_batches;
	struct mvm_rec_sweep *sweep; /* as the guest sent them (times in TSC cycles) */
	uint32_t *batch_of;	     /* each sweep record's batch */
	size_t nsweep, capsweep;
	size_t last_row; /* index + 1 of the last vCPU 0 or all-vCPU record; 0: none */
	struct row_index rows;
	struct rec_array progress,
		order; /* ABI 2: the touch frontier and the pass's order */
};

struct records *records_create(unsigned nvcpus)
{
	struct records *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->nvcpus = nvcpus;
	r->frontier = calloc(nvcpus ? nvcpus : 1, sizeof(*r->frontier));
	if (!r->frontier) {
		free(r);
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	r->progress = (struct rec_array){ .max = MVM_PROGRESS_RECORDS_MAX,
					  .size = sizeof(struct mvm_rec_progress),
					  .what = "progress records",
					  .limit = "MVM_PROGRESS_RECORDS_MAX" };
	r->order = (struct rec_array){ .max = MVM_ORDER_RECORDS_MAX,
				       .size = sizeof(struct mvm_rec_order),
				       .what = "order records",
				       .limit = "MVM_ORDER_RECORDS_MAX" };
	return r;
}

void records_set_tsc_khz(struct records *r, uint32_t tsc_khz)
{
	r->tsc_khz = tsc_khz;
}

void records_free(struct records *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nbatch; i++)
		free(r->batch[i].kvm);
	free(r->batch);
	free(r->sweep);
	free(r->batch_of);
	free(r->rows.slot);
	free(r->touch);
	free(r->progress.v);
	free(r->order.v);
	free(r->frontier);
	free(r);
}

double records_seconds(const struct records *r, uint64_t cycles)
{
	return (double)cycles / ((double)r->tsc_khz * HZ_PER_KHZ);
}

static int same_cell(const struct mvm_rec_sweep *a, const struct mvm_rec_sweep *b)
{
	return a->workload == b->workload && a->iteration == b->iteration &&
	       a->size_mib == b->size_mib && a->mode == b->mode;
}

static size_t cell_hash(const struct mvm_rec_sweep *k, size_t cap)
{
	uint64_t h = ((uint64_t)k->workload << 48) ^ ((uint64_t)k->iteration << 32) ^
		     ((uint64_t)k->size_mib << 8) ^ k->mode;

	h *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 32) & (cap - 1);
}

/* The slot of key's cell: the one holding it, or the empty one where it goes. */
static uint32_t *cell_slot(const struct records *r, const struct mvm_rec_sweep *key)
{
	size_t i = cell_hash(key, r->rows.cap);

	while (r->rows.slot[i] && !same_cell(&r->sweep[r->rows.slot[i] - 1], key))
		i = (i + 1) & (r->rows.cap - 1);
	return &r->rows.slot[i];
}

static int rows_grow(struct records *r)
{
	struct row_index old = r->rows;
	size_t cap = old.cap ? old.cap * 2 : 256;

	r->rows.slot = calloc(cap, sizeof(*r->rows.slot));
	if (!r->rows.slot) {
		r->rows = old;
		return -ENOMEM;
	}
	r->rows.cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i])
			*cell_slot(r, &r->sweep[old.slot[i] - 1]) = old.slot[i];
	free(old.slot);
	return 0;
}

/* Record i becomes its cell's table record if it is the all-vCPU one, or the first of vCPU 0. */
static int rows_add(struct records *r, size_t i)
{
	const struct mvm_rec_sweep *rec = &r->sweep[i];
	uint32_t *s;

	if (rec->vcpu != MVM_VCPU_ALL && rec->vcpu != 0)
		return 0;
	if ((r->rows.used + 1) * 2 > r->rows.cap && rows_grow(r))
		return -ENOMEM;
	s = cell_slot(r, rec);
	if (!*s) {
		*s = (uint32_t)i + 1;
		r->rows.used++;
	} else if (rec->vcpu == MVM_VCPU_ALL && r->sweep[*s - 1].vcpu != MVM_VCPU_ALL) {
		*s = (uint32_t)i + 1;
	}
	return 0;
}

const struct mvm_rec_sweep *
records_table_rec(const struct records *r, const struct mvm_rec_sweep *key, uint32_t mode)
{
	struct mvm_rec_sweep k = *key;
	uint32_t s;

	if (!r->rows.cap)
		return NULL;
	k.mode = mode;
	s = *cell_slot(r, &k);
	return s ? &r->sweep[s - 1] : NULL;
}

static int add_batch(struct records *r, size_t first, uint32_t n, const uint64_t *kvm,
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
	*b = (struct batch){ first, n, r->last_row, NULL };
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

static int reserve(struct records *r, size_t n)
{
	size_t cap = r->capsweep ? r->capsweep : 64;
	struct mvm_rec_sweep *p;
	uint32_t *q;

	if (r->nsweep + n <= r->capsweep)
		return 0;
	while (cap < r->nsweep + n)
		cap *= 2;
	p = realloc(r->sweep, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	r->sweep = p;
	q = realloc(r->batch_of, cap * sizeof(*q));
	if (!q)
		return -ENOMEM;
	r->batch_of = q;
	r->capsweep = cap;
	return 0;
}

int records_add_sweep(struct records *r, const struct mvm_rec_sweep *recs, uint32_t n,
		      const uint64_t *kvm, unsigned nkvm, char *err, size_t errlen)
{
	int ret = 0;

	if (!n)
		return 0; /* where counting starts: the caller sampled KVM's counters */
	pthread_mutex_lock(&r->lock);
	if (r->nbatch >= MVM_SWEEP_BATCHES_MAX) {
		ret = OVER(err, errlen, "sweep batches", MVM_SWEEP_BATCHES_MAX);
		goto out;
	}
	if (r->nsweep + n > MVM_SWEEP_RECORDS_MAX) {
		ret = OVER(err, errlen, "sweep records", MVM_SWEEP_RECORDS_MAX);
		goto out;
	}
	ret = reserve(r, n);
	ret = ret ?: add_batch(r, r->nsweep, n, kvm, nkvm);
	if (ret)
		goto out;
	memcpy(&r->sweep[r->nsweep], recs, n * sizeof(*recs));
	for (uint32_t i = 0; i < n && !ret; i++) {
		uint32_t v = r->sweep[r->nsweep].vcpu;

		r->batch_of[r->nsweep] = (uint32_t)(r->nbatch - 1);
		ret = rows_add(r, r->nsweep++);
		if (v == 0 || v == MVM_VCPU_ALL)
			r->last_row = r->nsweep;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "no memory for %u more records", n);
out:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

size_t records_row_before(const struct records *r, size_t i)
{
	return i < r->nsweep ? r->batch[r->batch_of[i]].row_before : r->last_row;
}

/* The guest's --eager=touch pass: once a run (MVM_TOUCH_BATCHES_MAX). */
int records_add_touch(struct records *r, const struct mvm_rec_touch *recs, uint32_t n,
		      char *err, size_t errlen)
{
	struct mvm_rec_touch *copy;
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (r->ntouch_batches >= MVM_TOUCH_BATCHES_MAX) {
		ret = OVER(err, errlen, "touch batches", MVM_TOUCH_BATCHES_MAX);
		goto out;
	}
	copy = malloc(n ? n * sizeof(*copy) : 1);
	if (!copy) {
		snprintf(err, errlen, "no memory for %u touch records", n);
		ret = -ENOMEM;
		goto out;
	}
	memcpy(copy, recs, n * sizeof(*copy));
	r->touch = copy;
	r->ntouch = n;
	r->ntouch_batches++;
out:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* Readers run after the vCPU threads were joined, or on the thread that added. */
const struct mvm_rec_sweep *records_sweep(const struct records *r, size_t *n)
{
	*n = r->nsweep;
	return r->sweep;
}

const uint64_t *records_kvm(const struct records *r, size_t i, unsigned *nkvm)
{
	const struct batch *bt;

	if (i >= r->nsweep)
		return NULL;
	bt = &r->batch[r->batch_of[i]];
	/* Counted for the whole batch: they belong to its one record, or its aggregate. */
	if (bt->n > 1 && r->sweep[i].vcpu != MVM_VCPU_ALL)
		return NULL;
	*nkvm = r->nkvm;
	return bt->kvm;
}

const struct mvm_rec_touch *records_touch(const struct records *r, size_t *n)
{
	*n = r->ntouch;
	return r->touch;
}

/* An ABI violation the store found (the rules that span batches): -EPROTO with err set. */
static int bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/* Each vCPU's one order record, its pass and how many points that pass takes. */
static int check_orders(struct records *r, const struct mvm_rec_order *o, uint32_t n,
			char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n; i++) {
		struct frontier_state *f;

		if (o[i].vcpu >= r->nvcpus)
			return bad(err, errlen,
				   "order record %u: vCPU %u, the guest has %u", i,
				   o[i].vcpu, r->nvcpus);
		f = &r->frontier[o[i].vcpu];
		if (f->have_order)
			return bad(
				err, errlen,
				"order record %u: a second one for vCPU %u (one per vCPU a run)",
				i, o[i].vcpu);
		if (o[i].start_gpa > o[i].end_gpa)
			return bad(err, errlen,
				   "order record %u: its pages end before they start", i);
		*f = (struct frontier_state){ .have_order = 1,
					      .pass_bytes =
						      o[i].end_gpa - o[i].start_gpa };
		if (o[i].progress_bytes)
			f->max_points = f->pass_bytes / o[i].progress_bytes + 2;
	}
	return 0;
}

/* Points after their vCPU's order record, of its pass, in order, no more than it takes. */
static int check_points(struct records *r, const struct mvm_rec_progress *p, uint32_t n,
			char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n; i++) {
		struct frontier_state *f;

		if (p[i].vcpu >= r->nvcpus)
			return bad(err, errlen,
				   "progress record %u: vCPU %u, the guest has %u", i,
				   p[i].vcpu, r->nvcpus);
		f = &r->frontier[p[i].vcpu];
		if (!f->have_order)
			return bad(
				err, errlen,
				"progress record %u: vCPU %u sent no order record before its points",
				i, p[i].vcpu);
		if (p[i].bytes_total != f->pass_bytes ||
		    p[i].bytes_done > p[i].bytes_total)
			return bad(
				err, errlen,
				"progress record %u: %llu bytes done of %llu, vCPU %u's pass is %llu bytes",
				i, (unsigned long long)p[i].bytes_done,
				(unsigned long long)p[i].bytes_total, p[i].vcpu,
				(unsigned long long)f->pass_bytes);
		if (f->points && p[i].bytes_done < f->last_done)
			return bad(
				err, errlen,
				"progress record %u: vCPU %u's points go back (%llu bytes done after %llu)",
				i, p[i].vcpu, (unsigned long long)p[i].bytes_done,
				(unsigned long long)f->last_done);
		if (f->points == f->max_points)
			return bad(
				err, errlen,
				"progress record %u: more points for vCPU %u than its order record's stride takes (%llu)",
				i, p[i].vcpu, (unsigned long long)f->max_points);
		f->points++;
		f->last_done = p[i].bytes_done;
	}
	return 0;
}

/*
 * ABI 2: the touch frontier and the order of a pass, kept as the guest sent
 * them, bounded, once the rules that span batches hold (each vCPU's order
 * record once, before its points; its points in order, as many as its pass
 * takes): consumers may size what they build from them by these counts. 0,
 * -EPROTO (a violation: nothing of the batch is kept; the vCPUs' state may
 * have counted part of it, and the run ends), -E2BIG past the bound, -ENOMEM.
 */
int records_add_progress(struct records *r, uint32_t kind, const void *recs, uint32_t n,
			 char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	ret = kind == MVM_REC_ORDER ? check_orders(r, recs, n, err, errlen)
				    : check_points(r, recs, n, err, errlen);
	ret = ret
		      ?: rec_array_add(kind == MVM_REC_ORDER ? &r->order : &r->progress,
				       recs, n, err, errlen);
	pthread_mutex_unlock(&r->lock);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "no memory for %u more records", n);
	return ret;
}

const struct mvm_rec_progress *records_progress(const struct records *r, size_t *n)
{
	*n = r->progress.n;
	return r->progress.v;
}

const struct mvm_rec_order *records_order(const struct records *r, size_t *n)
{
	*n = r->order.n;
	return r->order.v;
}

const char *sweep_workload_name(uint32_t w)
{
	return w == MVM_WL_SWEEP  ? "sweep"
	       : w == MVM_WL_FLAT ? "flat"
	       : w == MVM_WL_PERM ? "perm"
				  : "unknown";
}

/*
 * How the measured memory was mapped in the guest: "map_populate" is the
 * guest's own mmap(MAP_POPULATE), nothing to do with --eager=populate.
 */
const char *sweep_mapping_name(const struct mvm_rec_sweep *r)
{
	if (r->workload == MVM_WL_FLAT || r->workload == MVM_WL_PERM)
		return "direct_map";
	return r->mode == MVM_MODE_DEMAND     ? "demand"
	       : r->mode == MVM_MODE_POPULATE ? "map_populate"
					      : "unknown";
}
