/* Userfaultfd paging: guest RAM's first touches resolved, and each one timed, by handler threads. */
#include "mm.h"

#include "minivmm_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_S	1000000000ULL
#define NSEC_PER_US	1000ULL
#define SLICE_ALIGN	(2ULL << 20) /* slices in the guest's 2 MiB units (mvm_slice) */
#define MSGS_PER_READ	16
#define MAX_EAGAIN	1000 /* in a row for one fault: the mm keeps changing */
#define SPIN_TAIL_NS	(10 * NSEC_PER_US)
#define DEV_USERFAULTFD "/dev/userfaultfd"
#define SYSCTL_UNPRIV	"/proc/sys/vm/unprivileged_userfaultfd"

#ifndef USERFAULTFD_IOC_NEW /* <linux/userfaultfd.h> before Linux 6.1 */
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

/* One handler: its own uffd and slice of RAM; only the handler writes its counters. */
struct uffd_thread {
	struct uffd_pager *p;
	unsigned index;
	int uffd;
	uint64_t gpa, bytes;
	pthread_t tid;
	int started;
	uint64_t faults, write_faults, pages, duplicates, retries, first_ns, last_ns,
		wake_ns;
	uint8_t *seen;		/* one bit per page of the slice: touched already */
	struct uffd_touch *rec; /* record: first touches, capacity = the slice's pages */
	uint64_t nrec;
	int failed;
	char what[192];
	/*
	 * Read live by uffd_sample: the histogram and the latest faults'
	 * times and buckets, under a sequence count the handler makes odd
	 * while it updates them (readers retry; the handler never waits).
	 */
	unsigned seq;
	uint64_t nrecent; /* faults written to recent[] (index mod UFFD_RECENT) */
	struct recent {
		uint64_t t_ns;
		uint32_t bucket;
	} recent[UFFD_RECENT];
	struct lat_hist lat;
} __attribute__((aligned(64)));

struct uffd_pager {
	const struct mm_backend *backend;
	uint64_t ram_bytes;
	const struct guest_ram *ram; /* from uffd_start */
	enum uffd_mode mode;
	uint64_t page;
	unsigned nthreads;
	struct uffd_thread *th;
	uint64_t delay_ns;
	int record;
	int stop_fd; /* eventfd: readable once the handlers are to stop */
	const char *source;
	uint8_t *zero; /* MISSING: UFFDIO_COPY's source, one page of zeros */
	struct uffd_hooks hooks;
	int64_t resident_at_start;
	double fill_s;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * NSEC_PER_S + (uint64_t)t.tv_nsec;
}

enum uffd_mode uffd_mode(const struct uffd_pager *p)
{
	return p->mode;
}

const char *uffd_mode_name(enum uffd_mode m)
{
	return m == UFFD_MINOR ? "minor" : "missing";
}

const char *uffd_resolve_name(const struct uffd_pager *p)
{
	return p->mode == UFFD_MINOR ? "UFFDIO_CONTINUE" : "UFFDIO_COPY";
}

const char *uffd_source(const struct uffd_pager *p)
{
	return p->source;
}

const char *uffd_delay_method(const struct uffd_pager *p)
{
	return !p->delay_ns ? "none" : p->delay_ns > SPIN_TAIL_NS ? "sleep+spin" : "spin";
}

uint64_t uffd_page_bytes(const struct uffd_pager *p)
{
	return p->page;
}

unsigned uffd_threads(const struct uffd_pager *p)
{
	return p->nthreads;
}

int uffd_stop_fd(const struct uffd_pager *p)
{
	return p->stop_fd;
}

int64_t uffd_resident_at_start(const struct uffd_pager *p)
{
	return p->resident_at_start;
}

double uffd_fill_seconds(const struct uffd_pager *p)
{
	return p->fill_s;
}

/* --- opening --------------------------------------------------------------- */

static const char *unprivileged_sysctl(char *buf, size_t len)
{
	FILE *f = fopen(SYSCTL_UNPRIV, "re");

	snprintf(buf, len, "unreadable");
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

/*
 * A userfaultfd for this process: the system call first, /dev/userfaultfd
 * (Linux 6.1+, its file permissions decide) when the call is refused.
 * Never UFFD_USER_MODE_ONLY, all an unprivileged process may ask of the
 * call under vm.unprivileged_userfaultfd = 0: KVM faults guest RAM in from
 * the kernel (get_user_pages, and the emulator's copies), and such a uffd
 * does not see kernel faults: the kernel fails them. Tried on PVM: KVM
 * then took the guest's first stack write for MMIO (an unclaimed access)
 * and the guest triple-faulted in its firmware. So a refusal is reported
 * with the ways to allow a uffd that sees them.
 */
static int open_fd(const char **source, char *err, size_t errlen)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK), e, dev, de;
	char sysctl[32];

	if (fd >= 0) {
		*source = "userfaultfd(2)";
		return fd;
	}
	e = errno;
	if (e == ENOSYS) {
		snprintf(
			err, errlen,
			"--paging uffd: this kernel has no userfaultfd (userfaultfd(2): ENOSYS; CONFIG_USERFAULTFD is off)");
		return -ENOSYS;
	}
	dev = open(DEV_USERFAULTFD, O_RDWR | O_CLOEXEC);
	de = dev < 0 ? errno : 0;
	if (dev >= 0) {
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		de = fd < 0 ? errno : 0;
		close(dev);
		if (fd >= 0) {
			*source = DEV_USERFAULTFD;
			return fd;
		}
	}
	if (e == EPERM)
		snprintf(
			err, errlen,
			"--paging uffd: userfaultfd(2) refused (EPERM: vm.unprivileged_userfaultfd = %s and this process lacks CAP_SYS_PTRACE) and %s: %s. KVM faults guest RAM in from the kernel, which a UFFD_USER_MODE_ONLY userfaultfd never sees; allow it with: sysctl vm.unprivileged_userfaultfd=1, or read-write access to %s (Linux >= 6.1), or run as root",
			unprivileged_sysctl(sysctl, sizeof(sysctl)), DEV_USERFAULTFD,
			strerror(de), DEV_USERFAULTFD);
	else
		snprintf(err, errlen, "--paging uffd: userfaultfd(2): %s; %s: %s",
			 strerror(e), DEV_USERFAULTFD, strerror(de));
	return -e;
}

static const char *feature_name(uint64_t f)
{
	switch (f) {
	case UFFD_FEATURE_MISSING_HUGETLBFS:
		return "UFFD_FEATURE_MISSING_HUGETLBFS (Linux >= 4.11)";
	case UFFD_FEATURE_MINOR_SHMEM:
		return "UFFD_FEATURE_MINOR_SHMEM (Linux >= 5.14)";
	case UFFD_FEATURE_MINOR_HUGETLBFS:
		return "UFFD_FEATURE_MINOR_HUGETLBFS (Linux >= 5.13)";
	default:
		return "a userfaultfd feature";
	}
}

/* Open and handshake one uffd with the features the backing needs. fd or -errno. */
static int open_uffd(uint64_t features, const char **source, char *err, size_t errlen)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int fd = open_fd(source, err, errlen), e;

	if (fd < 0)
		return fd;
	if (ioctl(fd, UFFDIO_API, &api) == 0)
		return fd;
	e = errno;
	close(fd);
	if (e == EINVAL && features) {
		/* Which of them is missing: a second uffd asked for none lists what it has. */
		struct uffdio_api probe = { .api = UFFD_API };
		int pfd = open_fd(source, err, errlen);
		uint64_t missing = features;

		if (pfd >= 0) {
			if (ioctl(pfd, UFFDIO_API, &probe) == 0)
				missing &= ~probe.features;
			close(pfd);
		}
		snprintf(
			err, errlen,
			"--paging uffd: this kernel's userfaultfd lacks %s, which this backing needs",
			feature_name(missing & -missing));
		return -EOPNOTSUPP;
	}
	snprintf(err, errlen, "--paging uffd: UFFDIO_API: %s", strerror(e));
	return -e;
}

int uffd_open(const struct mm_backend *b, uint64_t ram_bytes, int shared,
	      const struct uffd_config *c, struct uffd_pager **out, char *err,
	      size_t errlen)
{
	uint64_t features = 0, align;
	struct uffd_pager *p;
	int r;

	*out = NULL;
	if (b->id == MM_THP) {
		snprintf(
			err, errlen,
			"--paging uffd with --backing thp: userfaultfd installs a fault's page 4 KiB at a time (UFFDIO_COPY), so THP's 2 MiB pages would never form; use --backing anon, memfd or hugetlb2m");
		return -EOPNOTSUPP;
	}
	align = b->page_bytes > SLICE_ALIGN ? b->page_bytes : SLICE_ALIGN;
	if (!c->threads || c->threads > ram_bytes / align) {
		snprintf(
			err, errlen,
			"--uffd-threads %u: guest RAM has %llu slices of %llu MiB to share out",
			c->threads, (unsigned long long)(ram_bytes / align),
			(unsigned long long)(align >> 20));
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || posix_memalign((void **)&p->th, 64, c->threads * sizeof(*p->th))) {
		free(p);
		snprintf(err, errlen, "--paging uffd: out of memory");
		return -ENOMEM;
	}
	memset(p->th, 0, c->threads * sizeof(*p->th));
	p->ram_bytes = ram_bytes;
	p->backend = b;
	p->mode = shared ? UFFD_MINOR : UFFD_MISSING;
	p->page = b->page_bytes;
	p->nthreads = c->threads;
	p->delay_ns = (uint64_t)c->delay_us * NSEC_PER_US;
	p->record = c->record;
	p->resident_at_start = -1;
	p->stop_fd = -1;
	for (unsigned i = 0; i < p->nthreads; i++)
		p->th[i].uffd = -1;
	if (b->hugetlb_sysfs)
		features = p->mode == UFFD_MINOR ? UFFD_FEATURE_MINOR_HUGETLBFS
						 : UFFD_FEATURE_MISSING_HUGETLBFS;
	else if (p->mode == UFFD_MINOR)
		features = UFFD_FEATURE_MINOR_SHMEM;
	p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->stop_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "--paging uffd: eventfd: %s", strerror(-r));
		goto fail;
	}
	if (p->mode == UFFD_MISSING) {
		/* Never written: its reads are the shared zero page, whatever the page size. */
		p->zero = mmap(NULL, p->page, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p->zero == MAP_FAILED) {
			p->zero = NULL;
			r = -errno;
			snprintf(err, errlen, "--paging uffd: mmap: %s", strerror(-r));
			goto fail;
		}
	}
	for (unsigned i = 0; i < p->nthreads; i++) {
		struct uffd_thread *t = &p->th[i];
		uint64_t start, end, pages;

		mvm_slice(ram_bytes, p->nthreads, i, align, &start, &end);
		pages = (end - start) / p->page;
		t->p = p;
		t->index = i;
		t->gpa = start;
		t->bytes = end - start;
		lat_init(&t->lat);
		t->uffd = open_uffd(features, &p->source, err, errlen);
		if (t->uffd < 0) {
			r = t->uffd;
			goto fail;
		}
		t->seen = calloc((pages + 7) / 8, 1);
		if (p->record)
			t->rec = mmap(NULL, pages * sizeof(*t->rec),
				      PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (!t->seen || t->rec == MAP_FAILED) {
			t->rec = NULL;
			r = -ENOMEM;
			snprintf(err, errlen, "--paging uffd: out of memory");
			goto fail;
		}
	}
	*out = p;
	return 0;
fail:
	uffd_free(p);
	return r;
}

/* --- the handlers ---------------------------------------------------------- */

static int uffd_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
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
static int install(const struct uffd_pager *p, int fd, uint64_t addr)
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
		 * contents, fetched and copied in.
		 */
		struct uffdio_copy c = { .dst = addr,
					 .src = (uintptr_t)p->zero,
					 .len = p->page,
					 .mode = UFFDIO_COPY_MODE_DONTWAKE };

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
	while (now_ns() < deadline)
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
	while ((r = install(p, t->uffd, addr)) == -EAGAIN && ++again < MAX_EAGAIN)
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
	t_done = now_ns();
	/* Published before the wake: the woken guest may mark its next phase at once. */
	publish(t, t_done, t_done - t_read);
	r = uffd_ioctl(t->uffd, UFFDIO_WAKE, &w);
	if (r) {
		fail(t, "UFFDIO_WAKE at GPA 0x%llx: %s", (unsigned long long)gpa,
		     strerror(-r));
		return -1;
	}
	t->wake_ns += now_ns() - t_done;
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

static void *handler(void *arg)
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
		t_read = now_ns();
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

/* --- starting and stopping ------------------------------------------------- */

int uffd_start(struct uffd_pager *p, const struct guest_ram *ram,
	       const struct uffd_hooks *h, char *err, size_t errlen)
{
	int r;

	if (ram->size != p->ram_bytes || ram->backend != p->backend ||
	    (ram->fd >= 0) != (p->mode == UFFD_MINOR)) {
		snprintf(err, errlen, "--paging uffd: guest RAM is not what was planned");
		return -EINVAL;
	}
	p->ram = ram;
	p->hooks = h ? *h : (struct uffd_hooks){ 0 };
	/* Pages present now (the loader's) are mapped: they never fault, nor count. */
	p->resident_at_start = mm_resident_bytes(ram);
	if (p->mode == UFFD_MINOR) {
		/*
		 * MINOR faults only where the page is in the page cache and not
		 * mapped: fill the cache now (the kernel zeroes it, as a fresh
		 * anonymous page would be), and the guest's first touch of
		 * each page is then a minor fault that UFFDIO_CONTINUE maps.
		 */
		double t0 = (double)now_ns();

		if (fallocate(ram->fd, 0, 0, (off_t)ram->size)) {
			r = -errno;
			snprintf(
				err, errlen,
				"--paging uffd: fallocate of %llu MiB of memfd page cache (MINOR mode needs it up front): %s",
				(unsigned long long)(ram->size >> 20), strerror(-r));
			return r;
		}
		p->fill_s = ((double)now_ns() - t0) / (double)NSEC_PER_S;
	}
	for (unsigned i = 0; i < p->nthreads; i++) {
		struct uffd_thread *t = &p->th[i];
		struct uffdio_register reg = {
			.range = { .start = (uintptr_t)ram->hva + t->gpa,
				   .len = t->bytes },
			.mode = p->mode == UFFD_MINOR ? UFFDIO_REGISTER_MODE_MINOR
						      : UFFDIO_REGISTER_MODE_MISSING
		};
		uint64_t need =
			1ULL << (p->mode == UFFD_MINOR ? _UFFDIO_CONTINUE : _UFFDIO_COPY);

		r = uffd_ioctl(t->uffd, UFFDIO_REGISTER, &reg);
		if (!r && !(reg.ioctls & need))
			r = -EOPNOTSUPP;
		if (r) {
			snprintf(
				err, errlen,
				"--paging uffd: UFFDIO_REGISTER (%s) of [0x%llx, +%llu MiB) for --backing %s: %s",
				uffd_mode_name(p->mode), (unsigned long long)t->gpa,
				(unsigned long long)(t->bytes >> 20), ram->backend->name,
				r == -EOPNOTSUPP
					? "the range does not offer that mode's ioctl"
					: strerror(-r));
			goto fail;
		}
	}
	for (unsigned i = 0; i < p->nthreads; i++) {
		r = -pthread_create(&p->th[i].tid, NULL, handler, &p->th[i]);
		if (r) {
			snprintf(err, errlen, "--paging uffd: pthread_create: %s",
				 strerror(-r));
			goto fail;
		}
		p->th[i].started = 1;
	}
	return 0;
fail:
	uffd_stop(p);
	return r;
}

/*
 * Once: every fd goes here, so that nothing is left open between runs and
 * a later uffd_free makes no system call a later run's sandbox forbids.
 */
void uffd_stop(struct uffd_pager *p)
{
	uint64_t one = 1;

	if (!p || p->stop_fd < 0)
		return;
	if (write(p->stop_fd, &one, sizeof(one)) != sizeof(one)) {
		/* eventfd's counter cannot overflow from one write: nothing else can fail here */
	}
	for (unsigned i = 0; i < p->nthreads; i++) {
		struct uffd_thread *t = &p->th[i];

		if (t->started)
			pthread_join(t->tid, NULL);
		t->started = 0;
		if (t->uffd >= 0)
			close(t->uffd); /* unregisters its slice */
		t->uffd = -1;
	}
	close(p->stop_fd);
	p->stop_fd = -1;
}

void uffd_free(struct uffd_pager *p)
{
	if (!p)
		return;
	uffd_stop(p);
	for (unsigned i = 0; i < p->nthreads; i++) {
		struct uffd_thread *t = &p->th[i];

		free(t->seen);
		if (t->rec)
			munmap(t->rec, t->bytes / p->page * sizeof(*t->rec));
	}
	if (p->zero)
		munmap(p->zero, p->page);
	free(p->th);
	free(p);
}

/* --- what they measured ---------------------------------------------------- */

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
