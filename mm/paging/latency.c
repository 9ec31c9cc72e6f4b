/* Per-fault latency histograms: 1/16-octave buckets of nanoseconds, one writer, lock-free readers. */
#include "paging.h"

#include <string.h>

#define SUB	    (1u << LAT_SUB_BITS)
#define EXACT_BELOW (2u * SUB) /* values below this have a bucket each */

#define LOAD(p)	    __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

void lat_init(struct lat_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min_ns = UINT64_MAX;
}

unsigned lat_bucket(uint64_t ns)
{
	unsigned k, i;

	if (ns < EXACT_BELOW)
		return (unsigned)ns;
	k = 63u - (unsigned)__builtin_clzll(ns); /* ns in [2^k, 2^(k+1)), k >= 5 */
	if (k > LAT_MAX_LOG2)
		return LAT_BUCKETS - 1;
	i = (k - LAT_SUB_BITS + 1) * SUB +
	    (unsigned)((ns >> (k - LAT_SUB_BITS)) & (SUB - 1));
	return i < LAT_BUCKETS ? i : LAT_BUCKETS - 1;
}

uint64_t lat_bucket_lo(unsigned i)
{
	unsigned k = i / SUB + LAT_SUB_BITS - 1;

	if (i < EXACT_BELOW)
		return i;
	return (uint64_t)(SUB + i % SUB) << (k - LAT_SUB_BITS);
}

uint64_t lat_bucket_hi(unsigned i)
{
	unsigned k = i / SUB + LAT_SUB_BITS - 1;

	if (i < EXACT_BELOW)
		return i + 1;
	return (uint64_t)(SUB + i % SUB + 1) << (k - LAT_SUB_BITS);
}

void lat_record(struct lat_hist *h, uint64_t ns)
{
	unsigned i = lat_bucket(ns);

	/* One writer: plain read-modify-write, stored whole for the readers. */
	STORE(&h->b[i], h->b[i] + 1);
	STORE(&h->sum_ns, h->sum_ns + ns);
	if (ns > h->max_ns)
		STORE(&h->max_ns, ns);
	if (ns < h->min_ns)
		STORE(&h->min_ns, ns);
	STORE(&h->count, h->count + 1);
}

void lat_add(struct lat_hist *dst, const struct lat_hist *src)
{
	uint64_t mx = LOAD(&src->max_ns), mn = LOAD(&src->min_ns);

	for (unsigned i = 0; i < LAT_BUCKETS; i++)
		dst->b[i] += LOAD(&src->b[i]);
	dst->count += LOAD(&src->count);
	dst->sum_ns += LOAD(&src->sum_ns);
	if (mx > dst->max_ns)
		dst->max_ns = mx;
	if (mn < dst->min_ns)
		dst->min_ns = mn;
}

void lat_sub(struct lat_hist *dst, const struct lat_hist *later,
	     const struct lat_hist *earlier)
{
	lat_init(dst);
	for (unsigned i = 0; i < LAT_BUCKETS; i++)
		dst->b[i] = later->b[i] > earlier->b[i] ? later->b[i] - earlier->b[i] : 0;
	dst->count = later->count > earlier->count ? later->count - earlier->count : 0;
	dst->sum_ns =
		later->sum_ns > earlier->sum_ns ? later->sum_ns - earlier->sum_ns : 0;
	dst->max_ns = later->max_ns;
}

uint64_t lat_bucket_total(const struct lat_hist *h)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < LAT_BUCKETS; i++)
		n += h->b[i];
	return n;
}

uint64_t lat_percentile(const struct lat_hist *h, double p)
{
	uint64_t total = lat_bucket_total(h), rank, seen = 0, v;

	if (!total || !(p > 0))
		return 0;
	rank = (uint64_t)(p / 100.0 * (double)total);
	if ((double)rank < p / 100.0 * (double)total)
		rank++; /* ceil */
	if (rank < 1)
		rank = 1;
	if (rank > total)
		rank = total;
	for (unsigned i = 0; i < LAT_BUCKETS; i++) {
		seen += h->b[i];
		if (seen < rank)
			continue;
		v = lat_bucket_hi(i) - 1;
		if (h->max_ns && v > h->max_ns)
			v = h->max_ns;
		if (h->min_ns != UINT64_MAX && v < h->min_ns)
			v = h->min_ns;
		return v;
	}
	return h->max_ns;
}
