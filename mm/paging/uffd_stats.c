/* What the userfaultfd handlers measured: counts, live histograms, the first touches in time order. */
#include "uffd_internal.h"

#include <sched.h>
#include <stdlib.h>

static void add_stats(struct uffd_stats *s, const struct uffd_thread *t)
{
	s->faults += t->faults;
	s->write_faults += t->write_faults;
	s->pages += t->pages;
	s->duplicates += t->duplicates;
	s->retries += t->retries;
	s->wake_ns += t->wake_ns;
	if (t->first_ns && (!s->first_ns || t->first_ns < s->first_ns))
		s->first_ns = t->first_ns;
	if (t->last_ns > s->last_ns)
		s->last_ns = t->last_ns;
	lat_add(&s->lat, &t->lat);
}

void uffd_stats(const struct uffd_pager *p, unsigned i, struct uffd_stats *out)
{
	*out = (struct uffd_stats){ 0 };
	lat_init(&out->lat);
	if (i == UINT32_MAX) {
		out->bytes = p->ram_bytes;
		for (unsigned k = 0; k < p->nthreads; k++)
			add_stats(out, &p->th[k]);
	} else if (i < p->nthreads) {
		out->gpa = p->th[i].gpa;
		out->bytes = p->th[i].bytes;
		add_stats(out, &p->th[i]);
	}
}

/* Thread t's histogram of faults resolved by t_ns into *h: 0, or -EAGAIN if it moved meanwhile. */
static int sample_thread(const struct uffd_thread *t, uint64_t t_ns, struct lat_hist *h)
{
	struct lat_hist copy;
	unsigned s0 = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE), s1;
	uint64_t n;

	if (s0 & 1)
		return -EAGAIN;
	lat_init(&copy);
	lat_add(&copy, &t->lat);
	n = __atomic_load_n(&t->nrecent, __ATOMIC_RELAXED);
	for (uint64_t k = 0; k < n && k < UFFD_RECENT; k++) {
		const struct recent *r = &t->recent[(n - 1 - k) % UFFD_RECENT];
		uint32_t b = __atomic_load_n(&r->bucket, __ATOMIC_RELAXED);

		if (__atomic_load_n(&r->t_ns, __ATOMIC_RELAXED) <= t_ns)
			break;
		copy.b[b] -=
			copy.b[b] ? 1 : 0; /* resolved after t_ns: the next phase's */
		copy.count -= copy.count ? 1 : 0;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s1 = __atomic_load_n(&t->seq, __ATOMIC_RELAXED);
	if (s1 != s0)
		return -EAGAIN;
	lat_add(h, &copy);
	return 0;
}

void uffd_sample(const struct uffd_pager *p, uint64_t t_ns, struct lat_hist *h)
{
	for (unsigned i = 0; i < p->nthreads; i++)
		for (unsigned tries = 1; sample_thread(&p->th[i], t_ns, h); tries++)
			if (tries %
			    1024) /* a handler preempted mid-update: let it finish */
				__asm__ volatile("pause");
			else
				sched_yield();
}

/* Record a of thread x comes before record b of thread y: by time, then GPA. */
static int before(const struct uffd_touch *a, const struct uffd_touch *b)
{
	return a->t_ns != b->t_ns ? a->t_ns < b->t_ns : a->gpa < b->gpa;
}

/*
 * Each thread's records are in time order already: merge them with a heap
 * of the threads by their next record. Not qsort(3): glibc's asks the
 * kernel for the machine's memory (sysinfo), which the sandboxed main
 * thread may not do.
 */
struct cursor {
	const struct uffd_touch *next, *end;
};

static void sift_down(struct cursor *h, unsigned n, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;
		struct cursor tmp;

		if (l < n && before(h[l].next, h[m].next))
			m = l;
		if (r < n && before(h[r].next, h[m].next))
			m = r;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

int uffd_touches(const struct uffd_pager *p, struct uffd_touch **out, size_t *n)
{
	struct cursor *h = calloc(p->nthreads ? p->nthreads : 1, sizeof(*h));
	size_t total = 0, at = 0;
	struct uffd_touch *all;
	unsigned nh = 0;

	for (unsigned i = 0; i < p->nthreads; i++)
		total += p->th[i].nrec;
	all = malloc((total ? total : 1) * sizeof(*all));
	if (!all || !h) {
		free(all);
		free(h);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < p->nthreads; i++)
		if (p->th[i].nrec)
			h[nh++] = (struct cursor){ p->th[i].rec,
						   p->th[i].rec + p->th[i].nrec };
	for (unsigned i = nh / 2; i-- > 0;)
		sift_down(h, nh, i);
	while (nh) {
		all[at++] = *h[0].next++;
		if (h[0].next == h[0].end)
			h[0] = h[--nh];
		sift_down(h, nh, 0);
	}
	free(h);
	*out = all;
	*n = total;
	return 0;
}
