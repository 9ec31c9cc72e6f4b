/*
 * mm/paging's private header (no other room includes it): the pager and its
 * handler threads, shared by uffd.c (open, register, stop), uffd_handler.c
 * (the handlers' loop) and uffd_stats.c (what they measured).
 */
#ifndef MINIVMM_MM_UFFD_INTERNAL_H
#define MINIVMM_MM_UFFD_INTERNAL_H

#include "paging.h"

#include <errno.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <time.h>

#define NSEC_PER_S   1000000000ULL
#define NSEC_PER_US  1000ULL
#define SPIN_TAIL_NS (10 * NSEC_PER_US) /* --uffd-delay-us spins this last part */

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

/*
 * uffd_fill.c: RAM restored from a memory file. The handlers copy a
 * fault's page from map (data) or zero (a hole); filler threads copy
 * chunks in. present: one bit per page installed by either, set with
 * atomics (a hint for the fillers; the kernel's EEXIST is the truth).
 */
struct uffd_file {
	int fd;
	uint64_t bytes; /* of the file */
	const uint8_t *map;
	uint64_t *data;	   /* one bit per page: the file has data there */
	uint64_t *present; /* one bit per page: installed */
	uint64_t data_bytes;
	int minor; /* MINOR from a tmpfs/hugetlbfs file: no copy, no fallocate */
	char fs[16];
	struct uffd_filler *fill; /* uffd_fill_start's threads, or NULL */
};

static inline int bit_test(const uint64_t *b, uint64_t i)
{
	return (int)((__atomic_load_n(&b[i / 64], __ATOMIC_RELAXED) >> (i % 64)) & 1);
}

static inline void bit_set(uint64_t *b, uint64_t i)
{
	__atomic_fetch_or(&b[i / 64], 1ULL << (i % 64), __ATOMIC_RELAXED);
}

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
	struct uffd_file *file; /* uffd_set_file: restoring from a memory file */
	int external; /* uffd_set_external: the socket to the handler process, or -1 */
};

static inline int uffd_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* A handler thread (pthread_create's start, arg its struct uffd_thread): returns NULL. */
void *uffd_handler(void *arg);

/* uffd_fill.c: where a MISSING fault's page comes from (the file, or zeros). */
const void *uffd_file_src(const struct uffd_pager *p, uint64_t gpa);
void uffd_file_installed(const struct uffd_pager *p, uint64_t gpa);
void uffd_fill_join(struct uffd_pager *p);  /* uffd_stop: before the uffds close */
void uffd_file_unmap(struct uffd_pager *p); /* uffd_stop: the handlers' source mapping */
void uffd_file_free(struct uffd_pager *p);
void uffd_filler_free(struct uffd_filler *f);

#endif /* MINIVMM_MM_UFFD_INTERNAL_H */
