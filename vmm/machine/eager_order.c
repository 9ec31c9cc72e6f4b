/* --eager-order: which range of guest RAM each eager thread populates next (front, back, frontier, a file). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* In enum order; --help lists every row but "file" (any other value is a FILE). */
const struct eager_order_row eager_orders[] = {
	{ EAGER_ORDER_FRONT, "front", { "each thread's slice, front to back", NULL } },
	{ EAGER_ORDER_BACK,
	  "back",
	  { "each slice from its far end: a guest touching",
	    "from the front meets it" } },
	{ EAGER_ORDER_FRONTIER,
	  "frontier",
	  { "background only: from the chunk after the",
	    "guest's frontier (where mincore sees it grow)" } },
	{ EAGER_ORDER_FILE,
	  "file",
	  { "a --record-touch file: its pages first, in",
	    "its order, then the rest front to back" } },
};
_Static_assert(ARRAY_SIZE(eager_orders) == EAGER_ORDER_COUNT,
	       "one row per enum eager_order, in order");

const char *eager_order_name(enum eager_order o)
{
	return o < EAGER_ORDER_COUNT ? eager_orders[o].name : "?";
}

enum eager_order eager_order_of(const char *arg)
{
	if (!arg)
		return EAGER_ORDER_FRONT;
	for (unsigned i = 0; i < EAGER_ORDER_FILE; i++)
		if (!strcmp(arg, eager_orders[i].name))
			return eager_orders[i].id;
	return EAGER_ORDER_FILE;
}

void order_plan_free(struct order_plan *p)
{
	free(p->chunk_ns);
	free(p->chunk_pages);
	free(p->taken);
	free(p->seen);
	free(p->claimed);
	free(p->pieces);
	memset(p, 0, sizeof(*p));
}

/*
 * The file's ranges (pages of its recording, in touch order) in the
 * backing's pages: rounded out to them, split at chunk boundaries, so a
 * piece is a claim inside one chunk.
 */
static int file_pieces(struct order_plan *p, const struct touch_order *f)
{
	size_t cap = 0;
	uint64_t *seen = calloc(p->ram_bytes / p->page / 64 + 1, sizeof(*seen));

	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < f->nranges; i++) {
		uint64_t lo = f->ranges[i].gpa / p->page * p->page;
		uint64_t hi = (f->ranges[i].gpa + f->ranges[i].bytes + p->page - 1) /
			      p->page * p->page;

		if (hi > p->ram_bytes)
			hi = p->ram_bytes; /* touch_order_read checked: never, but be safe */
		for (uint64_t pg = lo / p->page; pg < hi / p->page; pg++)
			if (!(seen[pg / 64] & (1ULL << (pg % 64)))) {
				seen[pg / 64] |= 1ULL << (pg % 64);
				p->file_pages++;
			}
		while (lo < hi) {
			uint64_t end = (lo / p->chunk + 1) * p->chunk;

			if (end > hi)
				end = hi;
			if (p->npieces == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct gpa_range *n =
					realloc(p->pieces, ncap * sizeof(*n));

				if (!n) {
					free(seen);
					return -ENOMEM;
				}
				p->pieces = n;
				cap = ncap;
			}
			p->pieces[p->npieces++] = (struct gpa_range){ lo, end - lo };
			lo = end;
		}
	}
	free(seen);
	p->file_bytes = p->file_pages * p->page;
	p->file_ram_bytes = f->ram_bytes;
	return 0;
}

int order_plan_init(struct order_plan *p, enum eager_order kind, uint64_t ram_bytes,
		    uint64_t page, unsigned nthreads, const struct touch_order *file)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->ram_bytes = ram_bytes;
	p->page = page;
	p->chunk = page > ORDER_CHUNK_BYTES ? page : ORDER_CHUNK_BYTES;
	p->nchunks = (ram_bytes + p->chunk - 1) / p->chunk;
	p->nthreads = nthreads ? nthreads : 1;
	p->chunk_ns = calloc(p->nchunks, sizeof(*p->chunk_ns));
	p->chunk_pages = calloc(p->nchunks, sizeof(*p->chunk_pages));
	if (!p->chunk_ns || !p->chunk_pages)
		return -ENOMEM;
	if (kind == EAGER_ORDER_FRONTIER) {
		p->taken = calloc(p->nchunks, 1);
		p->seen = calloc(p->nchunks, sizeof(*p->seen));
		if (!p->taken || !p->seen)
			return -ENOMEM;
	}
	if (kind == EAGER_ORDER_FILE) {
		p->claimed = calloc(ram_bytes / page / 64 + 1, sizeof(*p->claimed));
		if (!p->claimed)
			return -ENOMEM;
		if (file)
			return file_pieces(p, file);
	}
	return 0;
}

void order_cursor_init(const struct order_plan *p, unsigned i, struct order_cursor *c)
{
	memset(c, 0, sizeof(*c));
	if (p->kind == EAGER_ORDER_FILE)
		return; /* the threads share RAM through the plan's cursors */
	mvm_slice(p->ram_bytes, p->nthreads, i, p->chunk, &c->lo, &c->hi);
	c->front = c->guest = c->lo;
	c->back = c->hi;
	c->left = (c->hi - c->lo + p->chunk - 1) / p->chunk;
}

/* A chunk's range, clipped to RAM. */
static void chunk_range(const struct order_plan *p, uint64_t k, uint64_t *gpa,
			uint64_t *len)
{
	*gpa = k * p->chunk;
	*len = p->ram_bytes - *gpa < p->chunk ? p->ram_bytes - *gpa : p->chunk;
}

/*
 * frontier: where the guest is in the slice, as the host can see it. A
 * page the guest touches first becomes resident (the kernel backs it), so
 * the guest is where residency grows. Each look counts the resident pages
 * of the chunks this thread has not taken (its own are resident whole and
 * hide the guest while it is inside), from the one below the last sighting
 * up to ORDER_FRONTIER_WINDOW bytes of them past it. The guest is at the top
 * of the run of chunks that grew since they were last counted and that
 * starts at the last sighting (at most ORDER_FRONTIER_GAP chunks away; the
 * thread's own chunks do not count, nor break the run): it moves on from
 * where it was. Growth further away (a buffer the guest clears once) is
 * counted and so forgotten. With no growth at the sighting for
 * ORDER_FRONTIER_QUIET looks (the guest inside the thread's chunks, or
 * gone elsewhere), a look goes over the whole slice and takes the lowest
 * run that grew, wherever it is.
 */
static void frontier_look(struct order_plan *p, struct order_cursor *c)
{
	int whole = c->quiet >= ORDER_FRONTIER_QUIET, started = 0, ended = 0;
	uint64_t k0 = c->lo / p->chunk, k1 = (c->hi + p->chunk - 1) / p->chunk;
	uint64_t at = c->guest / p->chunk, k = whole ? k0 : at, past = 0, n, top,
		 guest = 0;
	unsigned gap = 0;

	if (!whole && k > k0)
		k--;
	for (; k < k1 && (whole || past < ORDER_FRONTIER_WINDOW); k++) {
		uint64_t gpa, len;
		int grew;

		if (p->taken[k])
			continue;
		chunk_range(p, k, &gpa, &len);
		n = p->residency(p->resident_cookie, gpa, len, &top);
		grew = n > p->seen[k];
		p->seen[k] = (uint32_t)n;
		if (gpa >= c->guest)
			past += len;
		if (ended)
			continue; /* counted, so that growth here is not news at the next look */
		if (grew && (started || whole || gap <= ORDER_FRONTIER_GAP)) {
			started = 1;
			guest = top;
		} else if (started || grew) {
			ended = 1;
		} else if (k >= at) {
			gap++;
		}
	}
	if (started) {
		c->guest = guest;
		c->quiet = 0;
	} else {
		c->quiet = whole ? 0 : c->quiet + 1;
	}
}

/* frontier: the first chunk not handed out from `from` to the slice end, or from lo. */
static int frontier_next(struct order_plan *p, struct order_cursor *c, uint64_t *gpa,
			 uint64_t *len)
{
	uint64_t from, k0 = c->lo / p->chunk, k1 = (c->hi + p->chunk - 1) / p->chunk, k;

	if (!c->left)
		return 0;
	if (p->residency)
		frontier_look(p, c);
	from = (c->guest + p->chunk - 1) / p->chunk + ORDER_FRONTIER_LEAD;
	for (k = from > k0 ? from : k0; k < k1 && p->taken[k]; k++)
		;
	if (k >= k1) /* nothing left ahead: what the guest went past, front to back */
		for (k = k0; k < k1 && p->taken[k]; k++)
			;
	__atomic_store_n(&p->taken[k], 1, __ATOMIC_RELAXED);
	c->left--;
	chunk_range(p, k, gpa, len);
	return 1;
}

/* file: claim page pg for this thread; 0 if another thread has it. */
static int claim(struct order_plan *p, uint64_t pg)
{
	uint64_t bit = 1ULL << (pg % 64);

	return !(__atomic_fetch_or(&p->claimed[pg / 64], bit, __ATOMIC_RELAXED) & bit);
}

/* file: the next piece (the file's, in order), then the next chunk of the rest. */
static int file_take(struct order_plan *p, struct order_cursor *c)
{
	uint64_t i, len;

	if (!c->in_rest) {
		i = __atomic_fetch_add(&p->next_piece, 1, __ATOMIC_RELAXED);
		if (i < p->npieces) {
			c->at = p->pieces[i].gpa;
			c->end = c->at + p->pieces[i].bytes;
			c->from_file = 1;
			return 1;
		}
		c->in_rest = 1;
	}
	i = __atomic_fetch_add(&p->next_rest, 1, __ATOMIC_RELAXED);
	if (i >= p->nchunks)
		return 0;
	chunk_range(p, i, &c->at, &len);
	c->end = c->at + len;
	c->from_file = 0;
	return 1;
}

/* file: the first run of pages this thread can claim in what it took. */
static int file_next(struct order_plan *p, struct order_cursor *c, uint64_t *gpa,
		     uint64_t *len, int *from_file)
{
	for (;;) {
		if (!c->have) {
			if (!file_take(p, c))
				return 0;
			c->have = 1;
		}
		while (c->at < c->end && !claim(p, c->at / p->page))
			c->at += p->page;
		if (c->at < c->end) {
			*gpa = c->at;
			for (c->at += p->page;
			     c->at < c->end && claim(p, c->at / p->page);
			     c->at += p->page)
				;
			*len = c->at - *gpa;
			*from_file = c->from_file;
			return 1;
		}
		c->have = 0;
	}
}

int order_next(struct order_plan *p, struct order_cursor *c, uint64_t *gpa, uint64_t *len,
	       int *from_file)
{
	*from_file = 0;
	switch (p->kind) {
	case EAGER_ORDER_FRONT:
		if (c->front >= c->hi)
			return 0;
		*gpa = c->front;
		*len = c->hi - c->front < p->chunk ? c->hi - c->front : p->chunk;
		c->front += *len;
		return 1;
	case EAGER_ORDER_BACK:
		if (c->back <= c->lo)
			return 0;
		*gpa = (c->back - 1) / p->chunk * p->chunk;
		if (*gpa < c->lo)
			*gpa = c->lo;
		*len = c->back - *gpa;
		c->back = *gpa;
		return 1;
	case EAGER_ORDER_FRONTIER:
		return frontier_next(p, c, gpa, len);
	case EAGER_ORDER_FILE:
		return file_next(p, c, gpa, len, from_file);
	case EAGER_ORDER_COUNT:
		break;
	}
	return 0;
}

void order_done(struct order_plan *p, uint64_t gpa, uint64_t len, uint64_t t_ns)
{
	uint64_t k = gpa / p->chunk, cg, clen;
	uint32_t pages = (uint32_t)(len / p->page), whole;

	if (k >= p->nchunks)
		return;
	chunk_range(p, k, &cg, &clen);
	whole = (uint32_t)((clen + p->page - 1) / p->page);
	/* The thread that completes the chunk says when: its range ended last. */
	if (__atomic_add_fetch(&p->chunk_pages[k], pages, __ATOMIC_ACQ_REL) >= whole)
		__atomic_store_n(&p->chunk_ns[k], t_ns, __ATOMIC_RELEASE);
}
