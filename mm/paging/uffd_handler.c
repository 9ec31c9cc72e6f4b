/* The userfaultfd handlers' loop: each fault on a thread's slice read, resolved, timed and woken. */
#include "uffd_internal.h"

#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MSGS_PER_READ 16
#define MAX_EAGAIN    1000 /* in a row for one fault: the mm keeps changing */

const char *uffd_resolve_name(const struct uffd_pager *p)
{
	return p->mode == UFFD_MINOR ? "UFFDIO_CONTINUE" : "UFFDIO_COPY";
}

/*
 * Install the page at addr: a zero page (MISSING) or the cached one
 * (MINOR), without waking the faulting thread (DONTWAKE): the caller reads
 * the clock, then wakes it. Woken inside the ioctl, the vCPU thread often
 * took the handler's CPU before the ioctl returned (2 CPUs here), and the
 * latency then included the guest's run up to its next fault: 16-64 us
 * instead of 2-5 (p90 31-33 us against 1.7-2.7 us, the first pass as fast).
 * 0 or -errno.
 */
static int install(const struct uffd_pager *p, int fd, uint64_t addr, uint64_t gpa)
{
	if (p->mode == UFFD_MINOR) {
		struct uffdio_continue c = { .range = { .start = addr, .len = p->page },
					     .mode = UFFDIO_CONTINUE_MODE_DONTWAKE };

		return uffd_ioctl(fd, UFFDIO_CONTINUE, &c);
	} else {
		/*
		 * UFFDIO_COPY rather than UFFDIO_ZEROPAGE. ZEROPAGE maps the
		 * shared zero page read-only: on a write fault the writer
		 * retries and takes a second, copy-on-write fault that the
		 * kernel handles out of our sight (uncounted, untimed), and a
		 * read fault leaves the same fault for the first write. KVM
		 * maps a page it faults for a guest write with FOLL_WRITE (a
		 * write fault here), and guests mostly write fresh memory. In a
		 * host process here (bench/uffd-resolve, 4096 pages, 4 rounds),
		 * per page: write 7.7-11.5 us with COPY, 11.8-14.0 with ZEROPAGE;
		 * read then write 4.8-7.4 against 8.1-12.3; only read-only
		 * touches were cheaper with ZEROPAGE (3.8-5.7 against 6.9-9.8).
		 * COPY is also what remote memory is (--uffd-delay-us): a page of
		 * contents, fetched and copied in. Restoring a snapshot
		 * (uffd_set_file), the page comes from the memory file's mapping
		 * (the kernel reads it in, from the page cache or the disk) or,
		 * for a hole, is the same page of zeros.
		 */
		struct uffdio_copy c = {
			.dst = addr,
			.src = (uintptr_t)(p->file ? uffd_file_src(p, gpa) : p->zero),
			.len = p->page,
			.mode = UFFDIO_COPY_MODE_DONTWAKE
		};

		return uffd_ioctl(fd, UFFDIO_COPY, &c);
	}
}

static void fail(struct uffd_thread *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct uffd_thread *t, const char *fmt, ...)
{
	const struct uffd_pager *p = t->p;
	struct uffdio_range r = { .start = (uintptr_t)p->ram->hva + t->gpa,
				  .len = t->bytes };
	int n = snprintf(t->what, sizeof(t->what), "handler %u: ", t->index);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->what + n, sizeof(t->what) - (size_t)n, fmt, ap);
	va_end(ap);
	t->failed = 1;
	/* Hand the slice back to the kernel and wake its waiters: no vCPU waits for us forever. */
	uffd_ioctl(t->uffd, UFFDIO_UNREGISTER, &r);
	uffd_ioctl(t->uffd, UFFDIO_WAKE, &r);
	if (p->hooks.failed)
		p->hooks.failed(p->hooks.cookie, t->what);
}

/*
 * --uffd-delay-us: wait until deadline. Sleep (timer slack 1 ns, set on this
 * thread) for all but the last SPIN_TAIL_NS, then spin: the thread gives up
 * its CPU, as one waiting on a network would, and the wake-up's lateness
 * (5 us on average, up to 50 here) is mostly absorbed by the spin.
 */
static void wait_until(uint64_t deadline, uint64_t delay)
{
	if (delay > SPIN_TAIL_NS) {
		uint64_t s = deadline - SPIN_TAIL_NS;
		struct timespec ts = { .tv_sec = (time_t)(s / NSEC_PER_S),
				       .tv_nsec = (long)(s % NSEC_PER_S) };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
		       EINTR)
			;
	}
	while (mm_now_ns() < deadline)
		__asm__ volatile("pause");
}

/* A fault's latency into the histogram, and its time into recent[], for uffd_sample. */
static void publish(struct uffd_thread *t, uint64_t t_done, uint64_t ns)
{
	struct recent *r = &t->recent[t->nrecent % UFFD_RECENT];

	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&r->t_ns, t_done, __ATOMIC_RELAXED);
	__atomic_store_n(&r->bucket, lat_bucket(ns), __ATOMIC_RELAXED);
	__atomic_store_n(&t->nrecent, t->nrecent + 1, __ATOMIC_RELAXED);
	lat_record(&t->lat, ns);
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE);
}

/* One event: wait (delay), install, time it from t_read, wake. 0, or -1 after fail(). */
static int resolve(struct uffd_thread *t, const struct uffd_msg *m, uint64_t t_read)
{
	const struct uffd_pager *p = t->p;
	uint64_t addr = m->arg.pagefault.address & ~(p->page - 1);
	uint64_t gpa = addr - (uintptr_t)p->ram->hva, t_done, page;
	struct uffdio_range w = { .start = addr, .len = p->page };
	unsigned again = 0;
	int r;

	if (m->event != UFFD_EVENT_PAGEFAULT)
		return 0; /* no other event was asked for */
	if (addr < (uintptr_t)p->ram->hva || gpa < t->gpa || gpa - t->gpa >= t->bytes) {
		fail(t, "a fault at 0x%llx, outside its slice", (unsigned long long)addr);
		return -1;
	}
	if (p->delay_ns)
		wait_until(t_read + p->delay_ns, p->delay_ns);
	while ((r = install(p, t->uffd, addr, gpa)) == -EAGAIN && ++again < MAX_EAGAIN)
		t->retries++;
	if (r == -EEXIST) {
		/* Resolved already (two vCPUs, or KVM, faulted it): its waiters still need waking. */
		t->duplicates++;
		r = uffd_ioctl(t->uffd, UFFDIO_WAKE, &w);
		if (r)
			fail(t, "UFFDIO_WAKE at GPA 0x%llx: %s", (unsigned long long)gpa,
			     strerror(-r));
		return r ? -1 : 0;
	}
	if (r) {
		fail(t, "%s at GPA 0x%llx: %s", uffd_resolve_name(p),
		     (unsigned long long)gpa, strerror(-r));
		return -1;
	}
	t_done = mm_now_ns();
	if (p->file)
		uffd_file_installed(p, gpa);
	/* Published before the wake: the woken guest may mark its next phase at once. */
	publish(t, t_done, t_done - t_read);
	r = uffd_ioctl(t->uffd, UFFDIO_WAKE, &w);
	if (r) {
		fail(t, "UFFDIO_WAKE at GPA 0x%llx: %s", (unsigned long long)gpa,
		     strerror(-r));
		return -1;
	}
	t->wake_ns += mm_now_ns() - t_done;
	t->faults++;
	t->write_faults += !!(m->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WRITE);
	if (!t->first_ns)
		t->first_ns = t_read;
	t->last_ns = t_done;
	page = (gpa - t->gpa) / p->page;
	if (!(t->seen[page / 8] & (1u << (page % 8)))) {
		t->seen[page / 8] |= (uint8_t)(1u << (page % 8));
		t->pages++;
		if (t->rec)
			t->rec[t->nrec++] = (struct uffd_touch){ gpa, t_done };
	}
	return 0;
}

void *uffd_handler(void *arg)
{
	struct uffd_thread *t = arg;
	const struct uffd_pager *p = t->p;
	struct uffd_msg msg[MSGS_PER_READ];

	/* Before the sandbox: --uffd-delay-us's sleeps end on time, not up to 50 us late. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (p->hooks.thread_enter) {
		int e = p->hooks.thread_enter(p->hooks.cookie, t->index, t->uffd,
					      p->stop_fd);

		if (e) {
			fail(t, "sandbox: %s", strerror(-e));
			return NULL;
		}
	}
	for (;;) {
		struct pollfd pfd[2] = { { .fd = t->uffd, .events = POLLIN },
					 { .fd = p->stop_fd, .events = POLLIN } };
		uint64_t t_read;
		ssize_t n;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail(t, "poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents & POLLIN)
			break;
		if (pfd[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			fail(t, "poll: the userfaultfd reports an error (revents 0x%x)",
			     pfd[0].revents);
			break;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		n = read(t->uffd, msg, sizeof(msg));
		/* The clock starts here: every event of this read waited from now on. */
		t_read = mm_now_ns();
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue; /* another reader, or a fault that went away */
			fail(t, "read: %s", strerror(errno));
			break;
		}
		if (n % (ssize_t)sizeof(msg[0])) {
			fail(t, "read %zd bytes, not whole events", n);
			break;
		}
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(msg[0]); i++)
			if (resolve(t, &msg[i], t_read))
				return NULL;
	}
	return NULL;
}
