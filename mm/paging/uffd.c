/* Userfaultfd paging: the pager opened and checked against the kernel, its slices registered, stopped. */
#include "uffd_internal.h"

#include "ram.h"

#include "minivmm_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLICE_ALIGN	(2ULL << 20) /* slices in the guest's 2 MiB units (mvm_slice) */
#define DEV_USERFAULTFD "/dev/userfaultfd"
#define SYSCTL_UNPRIV	"/proc/sys/vm/unprivileged_userfaultfd"

#ifndef USERFAULTFD_IOC_NEW /* <linux/userfaultfd.h> before Linux 6.1 */
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

enum uffd_mode uffd_mode(const struct uffd_pager *p)
{
	return p->mode;
}

const char *uffd_mode_name(enum uffd_mode m)
{
	return m == UFFD_MINOR ? "minor" : "missing";
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
	p->external = -1;
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

/* --- starting and stopping ------------------------------------------------- */

int uffd_set_external(struct uffd_pager *p, int sock, char *err, size_t errlen)
{
	if (p->mode != UFFD_MISSING || p->nthreads > UFFD_SERVE_MAX) {
		snprintf(
			err, errlen,
			"a shared userfaultfd handler serves MISSING faults of at most %d slices",
			UFFD_SERVE_MAX);
		return -EINVAL;
	}
	p->external = sock;
	return 0;
}

/* The registered slices' uffds to the handler process, in one message (uffd_serve.c reads it). */
static int send_external(struct uffd_pager *p, char *err, size_t errlen)
{
	char text[128 + UFFD_SERVE_MAX * 64];
	union {
		char buf[CMSG_SPACE(sizeof(int) * UFFD_SERVE_MAX)];
		struct cmsghdr align;
	} u = { 0 };
	struct iovec iov = { text, 0 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * p->nthreads) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	size_t n = (size_t)snprintf(text, sizeof(text), "%s %u %llu\n", UFFD_SERVE_HELLO,
				    p->nthreads, (unsigned long long)p->page);
	ssize_t sent;

	for (unsigned i = 0; i < p->nthreads; i++) {
		const struct uffd_thread *t = &p->th[i];

		n += (size_t)snprintf(
			text + n, sizeof(text) - n, "%llx %llx %llx\n",
			(unsigned long long)((uintptr_t)p->ram->hva + t->gpa),
			(unsigned long long)t->gpa, (unsigned long long)t->bytes);
		((int *)(void *)CMSG_DATA(c))[i] = t->uffd;
	}
	n += (size_t)snprintf(text + n, sizeof(text) - n, "end\n");
	iov.iov_len = n;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * p->nthreads);
	do
		sent = sendmsg(p->external, &m, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent == (ssize_t)n)
		return 0;
	snprintf(err, errlen,
		 "--clones' shared userfaultfd handler: sending it the uffds: %s",
		 sent < 0 ? strerror(errno) : "a short write");
	return sent < 0 ? -errno : -EIO;
}

int uffd_start(struct uffd_pager *p, const struct guest_ram *ram,
	       const struct uffd_hooks *h, char *err, size_t errlen)
{
	int r;

	if (ram->size != p->ram_bytes || ram->backend != p->backend ||
	    (!p->file && (ram->fd >= 0) != (p->mode == UFFD_MINOR))) {
		snprintf(err, errlen, "--paging uffd: guest RAM is not what was planned");
		return -EINVAL;
	}
	p->ram = ram;
	p->hooks = h ? *h : (struct uffd_hooks){ 0 };
	/* Pages present now (the loader's) are mapped: they never fault, nor count. */
	p->resident_at_start = mm_resident_bytes(ram);
	if (p->mode == UFFD_MINOR && !p->file) {
		/*
		 * MINOR faults only where the page is in the page cache and not
		 * mapped: fill the cache now (the kernel zeroes it, as a fresh
		 * anonymous page would be), and the guest's first touch of
		 * each page is then a minor fault that UFFDIO_CONTINUE maps.
		 */
		double t0 = (double)mm_now_ns();

		if (fallocate(ram->fd, 0, 0, (off_t)ram->size)) {
			r = -errno;
			snprintf(
				err, errlen,
				"--paging uffd: fallocate of %llu MiB of memfd page cache (MINOR mode needs it up front): %s",
				(unsigned long long)(ram->size >> 20), strerror(-r));
			return r;
		}
		p->fill_s = ((double)mm_now_ns() - t0) / (double)NSEC_PER_S;
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
	if (p->external >= 0) {
		r = send_external(p, err, errlen);
		if (r)
			goto fail;
		return 0;
	}
	for (unsigned i = 0; i < p->nthreads; i++) {
		r = -pthread_create(&p->th[i].tid, NULL, uffd_handler, &p->th[i]);
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
	uffd_fill_join(p); /* the fillers use the handlers' uffds */
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
	uffd_file_unmap(p); /* nothing copies from it now: its page cache may go */
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
	uffd_file_free(p);
	free(p->th);
	free(p);
}
