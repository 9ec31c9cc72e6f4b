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

#define SERVE_MAX_FDS 4096
#define MSGS_PER_READ 16
#define MAX_EAGAIN    1000

struct served {
	int uffd;
	unsigned owner;
	uint64_t hva, gpa, bytes;
};

struct uffd_server {
	const uint8_t *src;
	uint64_t bytes, page;
	unsigned owners;
	int wake; /* eventfd: a slice added, or stop */
	int stop;
	pthread_t tid;
	pthread_mutex_t lock;		   /* new[] and the counts' readers */
	struct served live[SERVE_MAX_FDS]; /* the thread's own */
	unsigned nlive;
	struct served add[SERVE_MAX_FDS]; /* handed over under lock */
	unsigned nadd;
	uint64_t *faults; /* per owner, written by the thread (atomics) */
};

static void drop(struct uffd_server *s, unsigned i)
{
	close(s->live[i].uffd);
	s->live[i] = s->live[--s->nlive];
}

/* Resolve what uffd i has pending: 0, or -1 when it is to be dropped (its process is gone). */
static int serve(struct uffd_server *s, unsigned i)
{
	struct uffd_msg msg[MSGS_PER_READ];
	struct served *d = &s->live[i];

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
				struct uffdio_range w = { .start = addr, .len = s->page };

				uffd_ioctl(d->uffd, UFFDIO_WAKE, &w);
			} else if (r) {
				return -1; /* ESRCH: its process is gone */
			}
			__atomic_fetch_add(&s->faults[d->owner], 1, __ATOMIC_RELAXED);
		}
	}
}

static void *server_thread(void *arg)
{
	struct uffd_server *s = arg;
	struct pollfd *p = calloc(SERVE_MAX_FDS + 1, sizeof(*p));

	while (p) {
		uint64_t v;

		pthread_mutex_lock(&s->lock);
		for (unsigned i = 0; i < s->nadd && s->nlive < SERVE_MAX_FDS; i++)
			s->live[s->nlive++] = s->add[i];
		s->nadd = 0;
		pthread_mutex_unlock(&s->lock);
		if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
			break;
		p[0] = (struct pollfd){ .fd = s->wake, .events = POLLIN };
		for (unsigned i = 0; i < s->nlive; i++)
			p[i + 1] = (struct pollfd){ .fd = s->live[i].uffd,
						    .events = POLLIN };
		if (poll(p, s->nlive + 1, -1) < 0)
			continue;
		if (p[0].revents && read(s->wake, &v, sizeof(v)) < 0) {
			/* EAGAIN: read by an earlier round */
		}
		for (unsigned i = s->nlive; i-- > 0;)
			if (p[i + 1].revents &&
			    (serve(s, i) || (p[i + 1].revents & (POLLERR | POLLHUP))))
				drop(s, i);
	}
	free(p);
	return NULL;
}

int uffd_server_start(const void *src, uint64_t bytes, uint64_t page, unsigned owners,
		      struct uffd_server **out)
{
	struct uffd_server *s = calloc(1, sizeof(*s));
	int r;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	*s = (struct uffd_server){
		.src = src, .bytes = bytes, .page = page, .owners = owners
	};
	s->faults = calloc(owners ? owners : 1, sizeof(*s->faults));
	s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&s->lock, NULL);
	r = !s->faults ? -ENOMEM : s->wake < 0 ? -errno : 0;
	if (!r)
		r = -pthread_create(&s->tid, NULL, server_thread, s);
	if (r) {
		if (s->wake >= 0)
			close(s->wake);
		free(s->faults);
		free(s);
		return r;
	}
	*out = s;
	return 0;
}

static void wake(struct uffd_server *s)
{
	uint64_t one = 1;

	if (write(s->wake, &one, sizeof(one)) != sizeof(one)) {
		/* the counter is already non-zero: the thread wakes anyway */
	}
}

int uffd_server_add(struct uffd_server *s, unsigned owner, const char *msg, size_t len,
		    const int *fds, unsigned nfds)
{
	const char *end = memmem(msg, len, "\nend\n", 5), *at = msg;
	struct served sl[UFFD_SERVE_MAX];
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
	pthread_mutex_lock(&s->lock);
	if (s->nadd + n > SERVE_MAX_FDS) {
		pthread_mutex_unlock(&s->lock);
		goto bad;
	}
	memcpy(s->add + s->nadd, sl, n * sizeof(*sl));
	s->nadd += n;
	pthread_mutex_unlock(&s->lock);
	wake(s);
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
	wake(s);
	pthread_join(s->tid, NULL);
	for (unsigned i = 0; i < s->nlive; i++)
		close(s->live[i].uffd);
	for (unsigned i = 0; i < s->nadd; i++)
		close(s->add[i].uffd);
	close(s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s->faults);
	free(s);
}
