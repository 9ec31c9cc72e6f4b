/* One handler process for many: other processes' uffds (sent over a socket) served from one mapping of the memory file (--clones). */
#include "uffd_internal.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define SERVE_MAX_FDS 1024 /* uffds per handler thread */
#define MSGS_PER_READ 16
#define MAX_EAGAIN    1000

struct served {
	int uffd;
	unsigned owner;
	uint64_t hva, gpa, bytes;
};

/* One handler thread: the uffds of the owners o with o % threads == its index. */
struct server_worker {
	struct uffd_server *s;
	int wake; /* eventfd: a slice added, or stop */
	pthread_t tid;
	int started;
	pthread_mutex_t lock;		   /* add[] */
	struct served live[SERVE_MAX_FDS]; /* the thread's own */
	unsigned nlive;
	struct served add[SERVE_MAX_FDS]; /* handed over under lock */
	unsigned nadd;
};

struct uffd_server {
	const uint8_t *src;
	uint64_t bytes, page;
	unsigned owners, nworkers;
	int stop;
	struct server_worker *w;
	uint64_t *faults; /* per owner, written by its worker (atomics) */
};

static void drop(struct server_worker *w, unsigned i)
{
	close(w->live[i].uffd);
	w->live[i] = w->live[--w->nlive];
}

/* Resolve what uffd i has pending: 0, or -1 when it is to be dropped (its process is gone). */
static int serve(struct server_worker *w, unsigned i)
{
	struct uffd_msg msg[MSGS_PER_READ];
	struct uffd_server *s = w->s;
	struct served *d = &w->live[i];

	for (;;) {
		ssize_t got = read(d->uffd, msg, sizeof(msg));

		if (got < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (got == 0 || got % (ssize_t)sizeof(msg[0]))
			return -1;
		for (ssize_t k = 0; k < got / (ssize_t)sizeof(msg[0]); k++) {
			uint64_t addr = msg[k].arg.pagefault.address & ~(s->page - 1),
				 gpa;
			struct uffdio_copy c;
			int r;

			if (msg[k].event != UFFD_EVENT_PAGEFAULT)
				continue;
			if (addr < d->hva || addr - d->hva >= d->bytes)
				return -1; /* not its slice: nothing to copy from */
			gpa = d->gpa + (addr - d->hva);
			if (gpa + s->page > s->bytes)
				return -1;
			c = (struct uffdio_copy){ .dst = addr,
						  .src = (uintptr_t)(s->src + gpa),
						  .len = s->page };
			r = uffd_ioctl(d->uffd, UFFDIO_COPY, &c);
			for (int tries = 0; r == -EAGAIN && tries < MAX_EAGAIN; tries++)
				r = uffd_ioctl(d->uffd, UFFDIO_COPY,
					       &c); /* its mm changing */
			if (r == -EEXIST) {
				/* Another fault of the same page resolved it: wake the waiter. */
				struct uffdio_range rg = { .start = addr,
							   .len = s->page };

				uffd_ioctl(d->uffd, UFFDIO_WAKE, &rg);
			} else if (r) {
				return -1; /* ESRCH: its process is gone */
			}
			__atomic_fetch_add(&s->faults[d->owner], 1, __ATOMIC_RELAXED);
		}
	}
}

static void *server_thread(void *arg)
{
	struct server_worker *w = arg;
	struct uffd_server *s = w->s;
	struct pollfd *p = calloc(SERVE_MAX_FDS + 1, sizeof(*p));

	while (p) {
		uint64_t v;

		pthread_mutex_lock(&w->lock);
		for (unsigned i = 0; i < w->nadd && w->nlive < SERVE_MAX_FDS; i++)
			w->live[w->nlive++] = w->add[i];
		w->nadd = 0;
		pthread_mutex_unlock(&w->lock);
		if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
			break;
		p[0] = (struct pollfd){ .fd = w->wake, .events = POLLIN };
		for (unsigned i = 0; i < w->nlive; i++)
			p[i + 1] = (struct pollfd){ .fd = w->live[i].uffd,
						    .events = POLLIN };
		if (poll(p, w->nlive + 1, -1) < 0)
			continue;
		if (p[0].revents && read(w->wake, &v, sizeof(v)) < 0) {
			/* EAGAIN: read by an earlier round */
		}
		for (unsigned i = w->nlive; i-- > 0;)
			if (p[i + 1].revents &&
			    (serve(w, i) || (p[i + 1].revents & (POLLERR | POLLHUP))))
				drop(w, i);
	}
	free(p);
	return NULL;
}

static void wake(struct server_worker *w)
{
	uint64_t one = 1;

	if (write(w->wake, &one, sizeof(one)) != sizeof(one)) {
		/* the counter is already non-zero: the thread wakes anyway */
	}
}

int uffd_server_start(const void *src, uint64_t bytes, uint64_t page, unsigned owners,
		      unsigned threads, struct uffd_server **out)
{
	struct uffd_server *s = calloc(1, sizeof(*s));
	int r = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	*s = (struct uffd_server){
		.src = src, .bytes = bytes, .page = page, .owners = owners
	};
	s->nworkers = threads ? threads : 1;
	s->faults = calloc(owners ? owners : 1, sizeof(*s->faults));
	s->w = calloc(s->nworkers, sizeof(*s->w));
	if (!s->faults || !s->w) {
		free(s->faults);
		free(s->w);
		free(s);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < s->nworkers; k++) {
		struct server_worker *w = &s->w[k];

		w->s = s;
		pthread_mutex_init(&w->lock, NULL);
		w->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		r = w->wake < 0 ? -errno
				: -pthread_create(&w->tid, NULL, server_thread, w);
		if (r)
			break;
		w->started = 1;
	}
	if (r) {
		uffd_server_stop(s);
		return r;
	}
	*out = s;
	return 0;
}

int uffd_server_add(struct uffd_server *s, unsigned owner, const char *msg, size_t len,
		    const int *fds, unsigned nfds)
{
	const char *end = memmem(msg, len, "\nend\n", 5), *at = msg;
	struct served sl[UFFD_SERVE_MAX];
	struct server_worker *w;
	unsigned n = 0, k;
	unsigned long long page;
	int used;

	if (!end || owner >= s->owners ||
	    sscanf(at, UFFD_SERVE_HELLO " %u %llu%n", &n, &page, &used) != 2 ||
	    n != nfds || n > UFFD_SERVE_MAX || page != s->page)
		goto bad;
	at += used;
	for (k = 0; k < n; k++) {
		unsigned long long hva, gpa, bytes;

		if (sscanf(at, " %llx %llx %llx%n", &hva, &gpa, &bytes, &used) != 3 ||
		    at + used > end || gpa > s->bytes || bytes > s->bytes - gpa)
			goto bad;
		at += used;
		sl[k] = (struct served){ fds[k], owner, hva, gpa, bytes };
		/* The same file description as the clone's: nonblocking already, made sure. */
		fcntl(fds[k], F_SETFL, fcntl(fds[k], F_GETFL) | O_NONBLOCK);
	}
	w = &s->w[owner % s->nworkers];
	pthread_mutex_lock(&w->lock);
	if (w->nadd + w->nlive + n > SERVE_MAX_FDS) {
		pthread_mutex_unlock(&w->lock);
		goto bad;
	}
	memcpy(w->add + w->nadd, sl, n * sizeof(*sl));
	w->nadd += n;
	pthread_mutex_unlock(&w->lock);
	wake(w);
	return (int)(end + 5 - msg);
bad:
	for (k = 0; k < nfds; k++)
		close(fds[k]);
	return -EINVAL;
}

uint64_t uffd_server_faults(struct uffd_server *s, unsigned owner)
{
	return owner < s->owners ? __atomic_load_n(&s->faults[owner], __ATOMIC_RELAXED)
				 : 0;
}

void uffd_server_stop(struct uffd_server *s)
{
	if (!s)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	for (unsigned k = 0; k < s->nworkers; k++) {
		struct server_worker *w = &s->w[k];

		if (w->started) {
			wake(w);
			pthread_join(w->tid, NULL);
		}
		for (unsigned i = 0; i < w->nlive; i++)
			close(w->live[i].uffd);
		for (unsigned i = 0; i < w->nadd; i++)
			close(w->add[i].uffd);
		if (w->wake > 0)
			close(w->wake);
		pthread_mutex_destroy(&w->lock);
	}
	free(s->w);
	free(s->faults);
	free(s);
}
