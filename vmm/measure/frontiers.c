/* The two frontiers on one clock: how much of the guest's first pass eager had populated before the guest got there. */
#include "measure.h"

#include <errno.h>
#include <stdlib.h>

void coverage_compute(const uint64_t *chunk_ns, uint64_t nchunks, uint64_t chunk_bytes,
		      const struct cover_segment *seg, size_t nseg, struct coverage *c)
{
	c->covered = c->total = 0;
	for (size_t i = 0; i < nseg; i++) {
		uint64_t end = seg[i].gpa + seg[i].bytes;
		double t_ns = seg[i].t * NSEC_PER_SEC;

		c->total += seg[i].bytes;
		for (uint64_t at = seg[i].gpa; at < end;) {
			uint64_t k = at / chunk_bytes, cend = (k + 1) * chunk_bytes;

			if (cend > end)
				cend = end;
			if (k < nchunks && chunk_ns[k] && (double)chunk_ns[k] <= t_ns)
				c->covered += cend - at;
			at = cend;
		}
	}
	c->fraction = c->total ? (double)c->covered / (double)c->total : 0;
}

/* Segment n of what cover_segments finds: kept only while there is room. */
static void put(struct cover_segment *out, size_t room, size_t *n, uint64_t gpa,
		uint64_t bytes, double t)
{
	if (*n < room)
		out[*n] = (struct cover_segment){ gpa, bytes, t };
	(*n)++;
}

/* vCPU o's first-pass points, in the order it sent them, as segments. */
static void segments(const struct mvm_rec_order *o, const struct mvm_rec_progress *p,
		     const double *t, size_t np, struct cover_segment *out, size_t room,
		     size_t *n)
{
	double prev_t = 0;
	uint64_t prev_b = 0;
	int have = 0;

	for (size_t i = 0; i < np; i++) {
		if (p[i].vcpu != o->vcpu || p[i].iteration != 1 || t[i] <= 0)
			continue;
		if (o->order != MVM_ORDER_SEQUENTIAL) {
			/* Any page of the pass may come first: covered only if done before it began. */
			put(out, room, n, o->start_gpa, o->end_gpa - o->start_gpa, t[i]);
			return;
		}
		if (have && p[i].bytes_done > prev_b)
			put(out, room, n, o->start_gpa + prev_b, p[i].bytes_done - prev_b,
			    prev_t);
		prev_t = t[i];
		prev_b = p[i].bytes_done;
		have = 1;
	}
}

size_t cover_segments(const struct mvm_rec_order *o, size_t no,
		      const struct mvm_rec_progress *p, const double *t, size_t np,
		      struct cover_segment *out, size_t room)
{
	size_t n = 0;

	for (size_t i = 0; i < no; i++)
		segments(&o[i], p, t, np, out, room, &n);
	return n;
}

int run_coverage(const struct run_view *v, struct coverage *c)
{
	struct eager_facts f;
	size_t no, np, n;
	const struct mvm_rec_order *o = records_order(v->rec, &no);
	const struct mvm_rec_progress *p = records_progress(v->rec, &np);
	struct cover_segment *seg;
	double *t;

	*c = (struct coverage){ 0 };
	if (eager_facts(v->eager, &f) || !no || !np || !f.chunk_ns)
		return -ENOENT;
	t = malloc(np * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < np; i++)
		t[i] = timeline_guest_time(v->tl, p[i].tsc);
	/* Counted first, then kept: as many as there are, whatever the records say. */
	n = cover_segments(o, no, p, t, np, NULL, 0);
	seg = calloc(n ? n : 1, sizeof(*seg));
	if (!seg) {
		free(t);
		return -ENOMEM;
	}
	n = cover_segments(o, no, p, t, np, seg, n);
	free(t);
	c->sequential = 1;
	for (size_t i = 0; i < no; i++)
		c->sequential &= o[i].order == MVM_ORDER_SEQUENTIAL;
	coverage_compute(f.chunk_ns, f.nchunks, f.chunk_bytes, seg, n, c);
	c->known = c->total > 0;
	free(seg);
	return c->known ? 0 : -ENOENT;
}
