/*
 * mm/paging: guest RAM paged from user space: userfaultfd handler threads
 * (uffd.c: the pager opened and registered; uffd_handler.c: the handlers'
 * loop; uffd_stats.c: what they measured), each fault timed into a
 * lock-free histogram (latency.c), and the first-touch order file
 * (touch_order.c). Restoring guest RAM from a snapshot's memory file by
 * userfaultfd goes here. Uses ram/, file/, backing/ and the base.
 */
#ifndef MINIVMM_MM_PAGING_H
#define MINIVMM_MM_PAGING_H

#include "backing.h"

/* ---- latency.c: per-fault latency histograms (userfaultfd paging) --------- */

/*
 * Nanoseconds in buckets of 1/16 octave: values below 32 ns exactly, above
 * that [2^k, 2^(k+1)) split in 16 equal parts (6.25% wide), up to 2^40 ns
 * (18 minutes; longer ones count in the last bucket). One writer thread
 * (lat_record), any number of readers (lat_add, during the run): every
 * field is written and read with relaxed atomics, so a reader sees each
 * counter whole, though the fields of one fault may land a moment apart.
 */
#define LAT_SUB_BITS 4
#define LAT_MAX_LOG2 40
#define LAT_BUCKETS  ((LAT_MAX_LOG2 - LAT_SUB_BITS + 1) << LAT_SUB_BITS)

struct lat_hist {
	uint64_t count, sum_ns, max_ns;
	uint64_t min_ns; /* UINT64_MAX while empty (lat_init) */
	uint64_t b[LAT_BUCKETS];
};

void lat_init(struct lat_hist *h);
unsigned lat_bucket(uint64_t ns);		  /* the index ns counts in */
uint64_t lat_bucket_lo(unsigned i);		  /* smallest value of bucket i */
uint64_t lat_bucket_hi(unsigned i);		  /* one past its largest */
void lat_record(struct lat_hist *h, uint64_t ns); /* the owner thread only */
/* dst += src (src may be live: read with relaxed loads). */
void lat_add(struct lat_hist *dst, const struct lat_hist *src);
/*
 * dst = later - earlier, two snapshots of one growing histogram: the
 * buckets and count only (min and max are not differences; dst keeps
 * later's max as an upper bound and has no min).
 */
void lat_sub(struct lat_hist *dst, const struct lat_hist *later,
	     const struct lat_hist *earlier);
uint64_t lat_bucket_total(const struct lat_hist *h); /* sum of the buckets */
/*
 * The p-th percentile (0 < p <= 100) by rank ceil(p% of the bucket
 * total): the largest value of the bucket holding that rank, clamped to
 * [min, max] when they are known. 0 for an empty histogram.
 */
uint64_t lat_percentile(const struct lat_hist *h, double p);

/* ---- uffd.c: guest RAM paged by userfaultfd handler threads ------------- */

/*
 * How a backing is paged. Private memory (anon, the hugetlb backings) is
 * registered MISSING: a page never touched faults to a handler, which
 * installs it with UFFDIO_COPY. Shared file memory (memfd) is registered
 * MINOR: its page cache is filled up front (fallocate) and the handler maps
 * the cached page with UFFDIO_CONTINUE. THP is refused: UFFDIO_COPY installs
 * 4 KiB pages, which would quietly make it anon.
 */
enum uffd_mode { UFFD_MISSING, UFFD_MINOR };

struct uffd_config {
	unsigned threads;  /* handler threads, each with its own uffd and slice */
	unsigned delay_us; /* each resolution waits this long after its event */
	int record;	   /* keep every page's first touch (uffd_touches) */
};

/* What the owner does on each handler thread and when one fails. */
struct uffd_hooks {
	void *cookie;
	/* On the handler thread, before its loop (the sandbox): 0 or -errno. */
	int (*thread_enter)(void *cookie, unsigned index, int uffd, int stop_fd);
	/* A handler cannot go on: once, with why; its slice is unregistered and woken. */
	void (*failed)(void *cookie, const char *msg);
	/*
	 * On a filler thread (uffd_fill_start), before its first page (the
	 * sandbox): the memory file it reads, the uffds it copies through. 0 or -errno.
	 */
	int (*filler_enter)(void *cookie, int file_fd, const int *uffds, unsigned n);
};

struct uffd_pager;

/*
 * Open one userfaultfd per handler thread for ram_bytes of guest RAM from
 * backing b (shared: a shared file mapping such as memfd, paged MINOR) and
 * check that this kernel pages it in that mode. Needs no RAM yet: nothing
 * is registered. 0 with *out, or -errno with err set: -EPERM
 * (vm.unprivileged_userfaultfd, /dev/userfaultfd's permissions), -ENOSYS
 * (no CONFIG_USERFAULTFD), -EOPNOTSUPP (backing or kernel feature),
 * -EINVAL (threads), -ENOMEM. Nothing is left open on failure.
 */
int uffd_open(const struct mm_backend *b, uint64_t ram_bytes, int shared,
	      const struct uffd_config *c, struct uffd_pager **out, char *err,
	      size_t errlen);
/*
 * Page ram (as planned) from now on: what is resident in it now stays and
 * never faults (the loader's pages). MINOR: fill the page cache. Register
 * each slice and start its handler. 0, or -errno with err set (threads
 * started so far are stopped).
 */
int uffd_start(struct uffd_pager *p, const struct guest_ram *ram,
	       const struct uffd_hooks *h, char *err, size_t errlen);
/* Stop and join the handlers, close the uffds (registrations go with them). */
void uffd_stop(struct uffd_pager *p);
void uffd_free(struct uffd_pager *p);

enum uffd_mode uffd_mode(const struct uffd_pager *p);
const char *uffd_mode_name(enum uffd_mode m);		   /* "missing", "minor" */
const char *uffd_resolve_name(const struct uffd_pager *p); /* "UFFDIO_COPY", ... */
const char *
uffd_source(const struct uffd_pager *p); /* "userfaultfd(2)" or "/dev/userfaultfd" */
const char *
uffd_delay_method(const struct uffd_pager *p); /* "none", "spin", "sleep+spin" */
uint64_t uffd_page_bytes(const struct uffd_pager *p);
unsigned uffd_threads(const struct uffd_pager *p);
int uffd_stop_fd(const struct uffd_pager *p); /* uffd_stop writes it (for the sandbox) */
int64_t uffd_resident_at_start(const struct uffd_pager *p); /* bytes; -1 unknown */
double uffd_fill_seconds(const struct uffd_pager *p);	    /* MINOR's fallocate */

struct uffd_stats {
	uint64_t gpa, bytes;	    /* the thread's slice */
	uint64_t faults;	    /* resolved by this thread's ioctl */
	uint64_t write_faults;	    /* of them, UFFD_PAGEFAULT_FLAG_WRITE */
	uint64_t pages;		    /* distinct pages: first touches */
	uint64_t duplicates;	    /* EEXIST: resolved already, woken */
	uint64_t retries;	    /* EAGAIN */
	uint64_t first_ns, last_ns; /* CLOCK_MONOTONIC: first event read, last resolved */
	uint64_t wake_ns;	    /* in UFFDIO_WAKE after the installs, summed */
	struct lat_hist lat;	    /* event read to the page installed, per fault */
};
/* Thread i's counts (all threads summed for i == UINT32_MAX). After uffd_stop. */
void uffd_stats(const struct uffd_pager *p, unsigned i, struct uffd_stats *out);
/*
 * Every thread's histogram of the faults resolved by t_ns (CLOCK_MONOTONIC),
 * summed into *h (lat_init'ed by the caller), while they run: any thread,
 * no locks, no system calls. Faults resolved after t_ns are left out by
 * their timestamps (the last UFFD_RECENT of each thread are kept).
 */
#define UFFD_RECENT 1024
void uffd_sample(const struct uffd_pager *p, uint64_t t_ns, struct lat_hist *h);

struct uffd_touch {
	uint64_t gpa;  /* page-aligned */
	uint64_t t_ns; /* CLOCK_MONOTONIC when the fault was resolved */
};
/* With record: every first touch, in time order (a new array, the caller's to free). */
int uffd_touches(const struct uffd_pager *p, struct uffd_touch **out, size_t *n);

/* ---- uffd_fill.c: guest RAM restored from a memory file by userfaultfd ---- */

/*
 * Page from fd (a snapshot's memory file, opened for reading, at least RAM
 * long; holes read as zeros) instead of zeros: after uffd_open, before
 * uffd_start. MISSING: each fault's page is copied (UFFDIO_COPY) from the
 * file, mapped read-only (the kernel reads it from the page cache or the
 * disk), a hole's (SEEK_DATA/SEEK_HOLE) from the page of zeros. MINOR
 * (uffd_open's shared; the guest RAM maps fd, MAP_PRIVATE): the file must
 * be on tmpfs or hugetlbfs, whose page cache is its memory, and a first
 * touch of a data page is a minor fault UFFDIO_CONTINUE maps (FaaSnap);
 * nothing is filled up front. 0, or -errno with err set: -EINVAL (the
 * file is shorter than RAM), -EOPNOTSUPP (MINOR on another file system).
 */
int uffd_set_file(struct uffd_pager *p, int fd, char *err, size_t errlen);
/*
 * After uffd_open, before uffd_start: the faults are another process's to
 * resolve (--clones' shared handler, uffd_serve.c). uffd_start registers
 * the slices as ever, then sends their uffds over the connected Unix
 * socket sock (one message: UFFD_SERVE_HELLO, then each slice's host
 * address, guest address and length; the fds as SCM_RIGHTS) and starts no
 * handler thread. MISSING mode only. 0 or -EINVAL with err set.
 */
int uffd_set_external(struct uffd_pager *p, int sock, char *err, size_t errlen);

/* ---- uffd_serve.c: one handler process for the uffds of many (--clones) ---- */
#define UFFD_SERVE_HELLO "uffd-slices"
#define UFFD_SERVE_MAX	 16 /* slices of one process */
struct uffd_server;
/*
 * threads handler threads (owner o's uffds on thread o % threads)
 * resolving MISSING faults of other processes' uffds by UFFDIO_COPY from
 * src (this process's mapping of the memory file, bytes long: one copy for
 * all). 0 or -errno.
 */
int uffd_server_start(const void *src, uint64_t bytes, uint64_t page, unsigned owners,
		      unsigned threads, struct uffd_server **out);
/*
 * Serve for owner (0 .. owners) the uffds uffd_set_external sent: msg its
 * text (from UFFD_SERVE_HELLO to its "end" line), fds[0 .. nfds) the
 * descriptors that came with it, taken (closed on failure too). Returns
 * the bytes of msg it used, or -EINVAL for a message that is not one.
 */
int uffd_server_add(struct uffd_server *s, unsigned owner, const char *msg, size_t len,
		    const int *fds, unsigned nfds);
uint64_t uffd_server_faults(struct uffd_server *s, unsigned owner); /* resolved so far */
void uffd_server_stop(
	struct uffd_server *s); /* joins the thread, closes the uffds, frees */
/* 0 if a MINOR restore can page from fd's file system, else -EOPNOTSUPP with err. */
int uffd_minor_check(int fd, char *err, size_t errlen);
uint64_t uffd_file_data_bytes(const struct uffd_pager *p); /* not holes */
const char *uffd_file_fs(const struct uffd_pager *p); /* "tmpfs", "hugetlbfs", "other" */

/*
 * Filler threads copying the file into RAM beside the handlers, racing
 * them page by page (a page one of them installed is EEXIST to the other,
 * and skipped): first the ranges in first, in that order (a recorded
 * working set: replay), then with rest every page not installed yet in
 * address order (background). Each read is one pread(2) of up to
 * chunk_bytes, copied in by one UFFDIO_COPY.
 */
struct uffd_fill_plan {
	const struct gpa_range *first;
	size_t nfirst;
	int rest;
	unsigned threads;     /* >= 1 */
	uint64_t chunk_bytes; /* a multiple of the page */
};
/* After uffd_start on a MISSING pager with a file. 0 or -errno with err. */
int uffd_fill_start(struct uffd_pager *p, const struct uffd_fill_plan *plan, char *err,
		    size_t errlen);
/* Block until the plan's first ranges are in: 0, or -EIO with err (a filler failed). */
int uffd_fill_wait_first(struct uffd_pager *p, char *err, size_t errlen);

struct uffd_fill_stats {
	uint64_t reads, read_bytes; /* pread(2) calls and bytes */
	uint64_t pages;		    /* installed by the fillers */
	uint64_t first_pages;	    /* of them, while filling the first ranges */
	uint64_t raced;		    /* pages found installed already (EEXIST) */
	double first_s,
		all_s; /* uffd_fill_start to the first ranges in, to all (0: not) */
	int failed;
	char what[160];
};
void uffd_fill_stats(const struct uffd_pager *p, struct uffd_fill_stats *out);

/* ---- touch_order.c: the first-touch order file (--record-touch) ----------- */

/*
 * Text, one line each: the header "minivmm-touch-order 1 ram_bytes=R
 * page_bytes=P pages=N clock=ns_since_exec [k=v...]", then N lines "GPA T"
 * (GPA in hex, 0x-prefixed and page-aligned; T decimal ns since exec), in
 * first-touch order, then "end N". docs/guide.md describes it.
 */
#define TOUCH_ORDER_MAGIC   "minivmm-touch-order"
#define TOUCH_ORDER_VERSION 1

/* Write n records (times made relative to t0_ns) to fd. extra: " k=v..." or "". 0 or -errno. */
int touch_order_write(int fd, uint64_t ram_bytes, uint64_t page_bytes,
		      const struct uffd_touch *t, size_t n, uint64_t t0_ns,
		      const char *extra);

struct touch_order {
	uint64_t ram_bytes, page_bytes, pages;
	struct gpa_range *ranges; /* in touch order, neighbours merged */
	size_t nranges;
};
/*
 * Read and check a touch-order file against a run with ram_bytes of RAM:
 * header, RAM size (recorded with ram_bytes or less: o->ram_bytes says
 * which), every GPA page-aligned, inside RAM and seen once, the
 * count and the end line. 0 with *o filled (touch_order_free), or -errno
 * with err set: -EINVAL for a corrupt, truncated or mismatched file (callers
 * exit 2), the open's errno otherwise.
 */
int touch_order_read(const char *path, uint64_t ram_bytes, struct touch_order *o,
		     char *err, size_t errlen);
/* The same from fd, open already (closed here); path names it in messages. */
int touch_order_read_fd(int fd, const char *path, uint64_t ram_bytes,
			struct touch_order *o, char *err, size_t errlen);
void touch_order_free(struct touch_order *o);

#endif /* MINIVMM_MM_PAGING_H */
