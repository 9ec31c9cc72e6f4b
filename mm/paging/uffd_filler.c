/* Filler threads: a memory file copied into userfaultfd-registered RAM in large reads, racing the handlers. */
#include "uffd_internal.h"

#include <errno.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_STUCK 1000 /* EAGAIN in a row without progress */

struct item {
	uint64_t gpa, bytes;
};

struct worker;

struct uffd_filler {
	struct uffd_pager *p;
	struct item *items;
	size_t nitems, nfirst; /* items [0, nfirst) are the plan's first ranges */
	size_t next;	       /* the next item to take (atomic) */
	size_t first_done;     /* first items finished (under lock) */
	size_t items_done;     /* all items finished (atomic) */
	uint64_t chunk;
	int rest;
	unsigned nthreads, started;
	pthread_t tid[64];
	struct worker *w[64]; /* mapped and freed here, on the caller's thread */
	int uffds[64];	      /* the handlers', for the fillers' sandbox */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t t0, t_first, t_all;
	unsigned running;
	/* Summed under lock as each thread ends; reads/pages also live (atomic). */
	uint64_t reads, read_bytes, pages, first_pages, raced;
	int failed;
	char what[200];
};

/* The handler thread whose uffd (and slice) holds gpa. */
static struct uffd_thread *owner(struct uffd_pager *p, uint64_t gpa)
{
	for (unsigned i = 0; i < p->nthreads; i++)
		if (gpa >= p->th[i].gpa && gpa - p->th[i].gpa < p->th[i].bytes)
			return &p->th[i];
	return NULL;
}

/* Append [gpa, gpa + bytes) cut at chunk and slice boundaries. 0 or -ENOMEM. */
static int add_items(struct uffd_filler *f, size_t *cap, uint64_t gpa, uint64_t bytes)
{
	while (bytes) {
		struct uffd_thread *t = owner(f->p, gpa);
		uint64_t n = bytes < f->chunk ? bytes : f->chunk, slice_end;

		if (!t)
			return -EINVAL;
		slice_end = t->gpa + t->bytes;
		if (gpa + n > slice_end)
			n = slice_end - gpa;
		if (f->nitems == *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			struct item *it = realloc(f->items, c * sizeof(*it));

			if (!it)
				return -ENOMEM;
			f->items = it;
			*cap = c;
		}
		f->items[f->nitems++] = (struct item){ gpa, n };
		gpa += n;
		bytes -= n;
	}
	return 0;
}

struct worker {
	struct uffd_filler *f;
	uint8_t *buf;
	uint64_t reads, read_bytes, pages, first_pages, raced;
	int err;
	char what[160];
};

/* Copy [gpa, gpa + len) from buf into RAM through t's uffd, page by page past EEXIST. 0 or -errno. */
static int copy_in(struct worker *w, struct uffd_thread *t, uint64_t gpa, uint64_t len,
		   const uint8_t *buf, int first)
{
	struct uffd_pager *p = w->f->p;
	uint64_t off = 0;
	unsigned stuck = 0;

	while (off < len) {
		struct uffdio_copy c = { .dst = (uintptr_t)p->ram->hva + gpa + off,
					 .src = (uintptr_t)buf + off,
					 .len = len - off };
		int r = uffd_ioctl(t->uffd, UFFDIO_COPY, &c);
		uint64_t done = r == 0 ? len - off : c.copy > 0 ? (uint64_t)c.copy : 0;

		for (uint64_t k = 0; k < done; k += p->page)
			bit_set(p->file->present, (gpa + off + k) / p->page);
		w->pages += done / p->page;
		if (first)
			w->first_pages += done / p->page;
		off += done;
		if (r == 0 || done)
			continue;
		if (r == -EEXIST || c.copy == -EEXIST) {
			w->raced++; /* a handler (or another filler) installed it */
			off += p->page;
		} else if (r == -EAGAIN && ++stuck < MAX_STUCK) {
			continue;
		} else {
			snprintf(w->what, sizeof(w->what),
				 "UFFDIO_COPY of %llu KiB at GPA 0x%llx: %s",
				 (unsigned long long)((len - off) >> 10),
				 (unsigned long long)(gpa + off), strerror(-r));
			return r;
		}
	}
	return 0;
}

/* One item: each run of pages not installed yet read with one pread and copied in. 0 or -errno. */
static int fill_item(struct worker *w, const struct item *it, int first)
{
	struct uffd_pager *p = w->f->p;
	struct uffd_thread *t = owner(p, it->gpa);
	uint64_t page = p->page, end = it->gpa + it->bytes;

	for (uint64_t g = it->gpa; g < end;) {
		uint64_t run = g, got = 0;
		int data = 0;

		while (g < end && bit_test(p->file->present, g / page))
			g += page;
		for (run = g; run < end && !bit_test(p->file->present, run / page);
		     run += page)
			data |= bit_test(p->file->data, run / page);
		if (run == g)
			continue;
		if (data) {
			while (got < run - g) {
				ssize_t n = pread(p->file->fd, w->buf + got,
						  run - g - got, (off_t)(g + got));

				if (n < 0 && errno == EINTR)
					continue;
				if (n < 0) {
					snprintf(w->what, sizeof(w->what),
						 "pread of the memory file at 0x%llx: %s",
						 (unsigned long long)(g + got),
						 strerror(errno));
					return -errno;
				}
				w->reads++;
				w->read_bytes += (uint64_t)n;
				if (!n) { /* past its end: zeros */
					memset(w->buf + got, 0, run - g - got);
					n = (ssize_t)(run - g - got);
				}
				got += (uint64_t)n;
			}
		} else {
			memset(w->buf, 0, run - g); /* all holes: no read */
		}
		if (copy_in(w, t, g, run - g, w->buf, first))
			return -EIO;
		g = run;
	}
	return 0;
}

static void *filler(void *arg)
{
	struct worker *w = arg;
	struct uffd_filler *f = w->f;
	const struct uffd_hooks *h = &f->p->hooks;
	size_t i;

	if (h->filler_enter) {
		w->err = h->filler_enter(h->cookie, f->p->file->fd, f->uffds,
					 f->p->nthreads);
		if (w->err)
			snprintf(w->what, sizeof(w->what), "its sandbox: %s",
				 strerror(-w->err));
	}
	while (!w->err &&
	       (i = __atomic_fetch_add(&f->next, 1, __ATOMIC_RELAXED)) < f->nitems) {
		if (__atomic_load_n(&f->failed, __ATOMIC_RELAXED))
			break;
		w->err = fill_item(w, &f->items[i], i < f->nfirst);
		if (!w->err)
			__atomic_fetch_add(&f->items_done, 1, __ATOMIC_RELAXED);
		if (i < f->nfirst && !w->err) {
			pthread_mutex_lock(&f->lock);
			if (++f->first_done == f->nfirst) {
				f->t_first = mm_now_ns();
				pthread_cond_broadcast(&f->cond);
			}
			pthread_mutex_unlock(&f->lock);
		}
	}
	pthread_mutex_lock(&f->lock);
	f->reads += w->reads;
	f->read_bytes += w->read_bytes;
	f->pages += w->pages;
	f->first_pages += w->first_pages;
	f->raced += w->raced;
	if (w->err && !f->failed) {
		f->failed = 1;
		snprintf(f->what, sizeof(f->what), "filler: %s", w->what);
	}
	if (--f->running == 0 && !f->failed &&
	    __atomic_load_n(&f->items_done, __ATOMIC_RELAXED) == f->nitems)
		f->t_all = mm_now_ns();
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return NULL; /* w and its buffer: uffd_fill_join's */
}

static void worker_free(struct uffd_filler *f, struct worker *w)
{
	if (w && w->buf && w->buf != MAP_FAILED)
		munmap(w->buf, f->chunk);
	free(w);
}

int uffd_fill_start(struct uffd_pager *p, const struct uffd_fill_plan *plan, char *err,
		    size_t errlen)
{
	struct uffd_filler *f;
	size_t cap = 0;
	int r = 0;

	if (!p->file || p->file->minor || !p->ram || p->file->fill || !plan->threads ||
	    plan->threads > sizeof(f->tid) / sizeof(f->tid[0]) || !plan->chunk_bytes ||
	    plan->chunk_bytes % p->page) {
		snprintf(
			err, errlen,
			"filling guest RAM: needs a started MISSING pager with a memory file, 1..64 threads and whole pages per read");
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		goto oom;
	f->p = p;
	f->chunk = plan->chunk_bytes;
	f->rest = plan->rest;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	for (size_t i = 0; !r && i < plan->nfirst; i++) {
		uint64_t g = plan->first[i].gpa & ~(p->page - 1),
			 e = plan->first[i].gpa + plan->first[i].bytes;

		if (e > p->ram_bytes)
			e = p->ram_bytes;
		if (g < e)
			r = add_items(f, &cap, g, (e - g + p->page - 1) & ~(p->page - 1));
	}
	f->nfirst = f->nitems;
	if (!r && plan->rest)
		r = add_items(f, &cap, 0, p->ram_bytes);
	if (r)
		goto fail;
	if (p->nthreads > sizeof(f->uffds) / sizeof(f->uffds[0])) {
		r = -E2BIG;
		snprintf(err, errlen, "filling guest RAM: more than %zu handler threads",
			 sizeof(f->uffds) / sizeof(f->uffds[0]));
		goto fail;
	}
	for (unsigned i = 0; i < p->nthreads; i++)
		f->uffds[i] = p->th[i].uffd;
	p->file->fill = f;
	f->t0 = mm_now_ns();
	if (!f->nfirst)
		f->t_first = f->t0;
	for (unsigned i = 0; i < plan->threads; i++) {
		struct worker *w = calloc(1, sizeof(*w));

		if (w)
			w->buf = mmap(NULL, f->chunk, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (!w || w->buf == MAP_FAILED) {
			worker_free(f, w);
			break;
		}
		w->f = f;
		pthread_mutex_lock(&f->lock);
		f->running++;
		pthread_mutex_unlock(&f->lock);
		if (pthread_create(&f->tid[f->started], NULL, filler, w)) {
			pthread_mutex_lock(&f->lock);
			f->running--;
			pthread_mutex_unlock(&f->lock);
			worker_free(f, w);
			break;
		}
		f->w[f->started++] = w;
	}
	if (f->started)
		return 0;
	snprintf(err, errlen, "filling guest RAM: no filler thread could start");
	p->file->fill = NULL;
	r = -ENOMEM;
	goto fail;
oom:
	r = -ENOMEM;
	snprintf(err, errlen, "filling guest RAM: out of memory");
fail:
	if (f) {
		if (r == -EINVAL)
			snprintf(err, errlen, "filling guest RAM: a range outside RAM");
		free(f->items);
		free(f);
	}
	return r;
}

int uffd_fill_wait_first(struct uffd_pager *p, char *err, size_t errlen)
{
	struct uffd_filler *f = p->file ? p->file->fill : NULL;
	int r = 0;

	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	while (!f->t_first && !f->failed && f->running)
		pthread_cond_wait(&f->cond, &f->lock);
	if (!f->t_first) {
		snprintf(err, errlen, "%s",
			 f->failed ? f->what : "the fillers ended early");
		r = -EIO;
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

/* Stop taking items, join; called by uffd_stop before the uffds close. */
void uffd_fill_join(struct uffd_pager *p)
{
	struct uffd_filler *f = p->file ? p->file->fill : NULL;

	if (!f)
		return;
	__atomic_store_n(&f->next, f->nitems, __ATOMIC_RELAXED); /* no more items */
	for (unsigned i = 0; i < f->started; i++) {
		pthread_join(f->tid[i], NULL);
		worker_free(f, f->w[i]);
		f->w[i] = NULL;
	}
	f->started = 0;
}

void uffd_fill_stats(const struct uffd_pager *p, struct uffd_fill_stats *out)
{
	struct uffd_filler *f = p->file ? p->file->fill : NULL;

	*out = (struct uffd_fill_stats){ 0 };
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	out->reads = f->reads;
	out->read_bytes = f->read_bytes;
	out->pages = f->pages;
	out->first_pages = f->first_pages;
	out->raced = f->raced;
	out->first_s = f->t_first ? (double)(f->t_first - f->t0) / NSEC_PER_S : 0;
	out->all_s = f->t_all ? (double)(f->t_all - f->t0) / NSEC_PER_S : 0;
	out->failed = f->failed;
	snprintf(out->what, sizeof(out->what), "%.150s", f->what);
	pthread_mutex_unlock(&f->lock);
}

void uffd_filler_free(struct uffd_filler *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f->items);
	free(f);
}
