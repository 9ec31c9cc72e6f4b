/* Guest RAM: backends, the memslot, eager population, and the one gpa -> hva translator. */
#ifndef MINIVMM_MM_H
#define MINIVMM_MM_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "kvm_compat.h"

struct mm_backend;
struct mm_file;
struct mm_file_request;

struct guest_ram {
	uint8_t *hva;	/* host mapping of guest-physical [0, size), page-aligned */
	uint64_t size;	/* bytes */
	void *map_base; /* what to munmap (may start below hva for alignment) */
	uint64_t map_bytes;
	int fd; /* memfd or --mem-path file backing, or -1 */
	const struct mm_backend *backend;
	struct mm_file *file; /* --mem-path / --reservoir: what the file is, else NULL */
};

/*
 * A way to back guest RAM. Every backend has one creation path,
 * mm_ram_create(). mm_backends[] has one row per enum value, in enum order:
 * its length is checked against MM_BACKING_COUNT at compile time (backend.c)
 * and each row's id against its index by the unit tests. --help, the option
 * errors and the docs' lists come from the table.
 */
enum mm_backing {
	MM_ANON,
	MM_THP,
	MM_HUGETLB2M,
	MM_HUGETLB1G,
	MM_MEMFD,
	MM_BACKING_COUNT
};

struct mm_backend {
	enum mm_backing id;
	const char *name;
	const char *help;	   /* one line for --help and the docs */
	uint64_t page_bytes;	   /* host page size: guest RAM is a multiple of it */
	const char *hugetlb_sysfs; /* pool directory for hugetlb backends, else NULL */
	/* Map size bytes into ram (hva, map_base, map_bytes, fd). 0 or -errno. */
	int (*map)(struct guest_ram *ram, uint64_t size);
	/*
	 * The file system (statfs f_type) whose files this backing maps with
	 * --mem-path, MAP_SHARED (file.c); 0: none (private anonymous memory).
	 */
	long file_fs;
};

extern const struct mm_backend mm_backends[];
const struct mm_backend *mm_backend_find(const char *name); /* NULL if unknown */

/*
 * Map size bytes of guest RAM from backend b: fresh memory, or with file
 * (not NULL, a path or a reservoir named) a file's pages mapped shared
 * (file.c), where b may be NULL to take the file system's kind. Nothing is
 * backed until touched (hugetlb pools are reserved). Returns 0, or -errno
 * with a message in err: -EINVAL when the request does not fit (the
 * options' fault: a usage error), anything else is the host's. On failure
 * nothing is left mapped, locked or leased.
 */
int mm_ram_create(struct guest_ram *ram, const struct mm_backend *b, uint64_t size,
		  const struct mm_file_request *file, char *err, size_t errlen);
/*
 * Unmap, close, end a lease (its range is scrubbed in the background). The
 * backend and the file's description stay for the report until
 * mm_ram_free(); the ram can be destroyed twice.
 */
void mm_ram_destroy(struct guest_ram *ram);
void mm_ram_free(struct guest_ram *ram); /* after mm_ram_destroy: the description */

/*
 * Can the host back the size bytes of b right now that are not backed yet
 * (all of fresh memory; a file's holes, file NULL for fresh memory) from
 * MemAvailable, or from free pages in the hugetlb pool? 0, or -ENOMEM with
 * the numbers and what to type in err.
 */
int mm_ram_check_capacity(const struct mm_backend *b, uint64_t size,
			  const struct mm_file *file, char *err, size_t errlen);
/* The whole of a small text file (/proc, /sys) into buf, NUL-terminated: 0, or -errno. */
int mm_read_text(const char *path, char *buf, size_t len);
/* A non-negative integer from a small file (nr_hugepages): the number, or -1. */
long long mm_read_count(const char *path);
/*
 * A size as users type it: digits, then K, M, G or T (any case, optionally
 * followed by B or iB) for powers of 1024. 0, or -EINVAL (overflow too).
 */
int mm_parse_size(const char *s, uint64_t *out);
/* Field KEY ("MemTotal") in bytes from the text of /proc/meminfo; 0 when absent. */
uint64_t mm_meminfo_bytes(const char *meminfo, const char *key);
uint64_t mm_meminfo_available(const char *meminfo); /* MemAvailable */

/* Bytes of guest RAM resident in host memory now (mincore). -errno on failure. */
int64_t mm_resident_bytes(const struct guest_ram *ram);
/*
 * The same, for RAM nothing has touched since mm_ram_create: from what a
 * file had allocated where that is known exactly (a lease, tmpfs), else
 * from mincore. -errno on failure.
 */
int64_t mm_resident_untouched(const struct guest_ram *ram);
/*
 * How many 4 KiB host pages of guest-physical [gpa, gpa + len) are
 * resident (mincore), and in *top the end of the highest (gpa when none).
 * 0 when mincore fails or the range is not RAM. No allocation: a vector on
 * the stack per 2 MiB.
 */
uint64_t mm_resident_count(const struct guest_ram *ram, uint64_t gpa, uint64_t len,
			   uint64_t *top);

/*
 * Back [hva, hva + len) with host memory for writing. Uses
 * MADV_POPULATE_WRITE; where the kernel lacks it, sets *fell_back and writes
 * one byte per page instead. Returns 0 or -errno.
 */
int mm_populate_range(uint8_t *hva, uint64_t len, uint64_t page_bytes, int *fell_back);

/* KVM_PRE_FAULT_MEMORY, injectable for tests. Returns like ioctl(2). */
typedef int (*prefault_ioctl_fn)(int vcpu_fd, struct kvm_pre_fault_memory *range);
int mm_prefault_ioctl(int vcpu_fd, struct kvm_pre_fault_memory *range);

struct prefault_stats {
	uint64_t bytes;	  /* pre-faulted */
	unsigned calls;	  /* ioctls made */
	unsigned retries; /* EINTR/EAGAIN */
};

#define PREFAULT_MAX_STUCK 1000 /* EINTR/EAGAIN in a row without progress */

/*
 * Build the second-level entries for [gpa, gpa + size) through vcpu_fd: call
 * until size shrinks to 0, retrying EINTR/EAGAIN (KVM reports partial
 * progress by advancing gpa and shrinking size). Returns 0 or -errno:
 * -ENOENT means the range left the memslots (a minivmm bug), -EIO a KVM
 * that claimed success without progress.
 */
int mm_prefault_range(int vcpu_fd, uint64_t gpa, uint64_t size, prefault_ioctl_fn fn,
		      struct prefault_stats *st);

/* Register the whole of `ram` as memslot 0 at guest-physical 0. Returns 0 or -errno. */
int mm_memslot_register(int vm_fd, const struct guest_ram *ram);

/*
 * The host address of guest-physical [gpa, gpa + len), or NULL when any
 * byte of it lies outside guest RAM (overflow-checked). len may be 0.
 * Every host access to guest memory goes through here.
 */
static inline void *mm_gpa_to_hva(const struct guest_ram *ram, uint64_t gpa, uint64_t len)
{
	uint64_t end;

	if (__builtin_add_overflow(gpa, len, &end) || end > ram->size || gpa > ram->size)
		return NULL;
	return ram->hva + gpa;
}

/* ---- file.c: guest RAM in a file (--mem-path, --reservoir), mapped shared ---- */

/* What mm_ram_create should map instead of fresh memory. */
struct mm_file_request {
	const char *path; /* a file, or a directory: an unlinked file of our own there */
	const char
		*reservoir; /* lease a range of the reservoir at this directory instead */
	int grow;   /* create a missing file, extend a short one (never shrinks) */
	int any_fs; /* allow a file on a disk file system (its page cache) */
};

#define MM_PATH_BYTES 4096

/* The file that holds guest RAM, as the report and the results describe it. */
struct mm_file {
	char path[MM_PATH_BYTES];  /* the file (for a directory: the directory) */
	char mount[MM_PATH_BYTES]; /* mount point of its file system, "" if unknown */
	const char *fs;		   /* "hugetlbfs", "tmpfs", "ramfs", "ext4", ... */
	long fs_magic;		   /* statfs f_type */
	uint64_t fs_page_bytes;	   /* the pages it hands out (hugetlbfs: its page size) */
	uint64_t offset;	   /* where guest-physical 0 is in the file */
	uint64_t file_bytes_before;
	/*
	 * Bytes of [offset, offset + size) allocated before the run: pre-zeroed
	 * or written, so populating them only builds page tables. Exact on
	 * tmpfs (SEEK_DATA) and for a lease; on hugetlbfs, which does not say
	 * where its pages are, min(size, the file's allocated bytes).
	 */
	uint64_t allocated_before;
	int allocated_exact;
	/*
	 * Bytes of the range that need no more memory or space: allocated
	 * zeroed or not (tmpfs's fallocate leaves pages to be cleared at their
	 * first fault). The capacity checks use it.
	 */
	uint64_t held_before;
	int backing_inferred; /* the backing came from the file system, not --backing */
	int tmpfile;	      /* path was a directory: an unlinked file (O_TMPFILE) */
	int grew;	      /* --mem-grow created or extended it */
	int disk;	      /* on a disk file system (--mem-any-fs): page cache */
	int locked;	      /* an OFD write lock on [offset, offset + size) is held */
	struct mm_lease_info {
		int leased; /* from a reservoir */
		char dir[MM_PATH_BYTES];
		int keeper_pid;	 /* scrubs the range once this process lets go */
		double waited_s; /* for another lease's scrub to finish */
		uint64_t
			scrubbed_bytes; /* left dirty by an earlier lessee, scrubbed now */
		double scrub_s;
		int inuse_fd;  /* holds the in-use lock; -1 once ended */
		int keeper_fd; /* the keeper reads EOF on it when we let go */
	} lease;
};

/*
 * The backing for a file on a file system of type fs_magic handing out
 * fs_page_bytes pages: `asked` (--backing, may be NULL) if it fits, else
 * the one that maps such files. NULL with the reason in err when they do
 * not fit, or the file system cannot hold guest RAM (a disk file system
 * without any_fs). Pure: unit-tested.
 */
const struct mm_backend *mm_file_backing(long fs_magic, uint64_t fs_page_bytes,
					 const struct mm_backend *asked, int any_fs,
					 char *err, size_t errlen);
const char *mm_fs_name(long fs_magic); /* "ext4" for 0xEF53, ...; "other" if unknown */
/* Map size bytes of req's file into ram (mm_ram_create's file path). As mm_ram_create. */
int mm_file_map(struct guest_ram *ram, const struct mm_backend *asked, uint64_t size,
		const struct mm_file_request *req, char *err, size_t errlen);
void mm_file_unmap(struct guest_ram *ram); /* unmap, unlock, end the lease */

/* ---- reservoir.c: a pool of pre-zeroed memory, leased in exclusive ranges ---- */
/*
 * DIR (default MM_RESERVOIR_DIR) is a small tmpfs holding reservoir.info,
 * state (one byte per unit: '1' while a lessee's data may be in it) and
 * scrub.log; DIR/pool is a hugetlbfs (or tmpfs for 4 KiB pages) mount
 * holding the pool file DIR/pool/mem, allocated (and zeroed) up front.
 * A lease is an OFD write lock on its range of the pool file, held by the
 * lessee and by its keeper process (forked at lease time); a second OFD
 * lock on the same range of the state file says a VM is running in it.
 * When the lessee lets go (or dies), the keeper scrubs the range (punch a
 * hole, allocate again: the kernel zeroes it), marks it clean, logs the
 * rate and exits, which ends the lease.
 */
#define MM_RESERVOIR_DIR    "/run/minivmm/reservoir"
#define MM_RESERVOIR_WAIT_S 120.0 /* for a range being scrubbed, at most */

struct mm_reservoir_info {
	uint64_t bytes, page_bytes, unit_bytes;
	char backing[16];      /* the mm_backends name of its pages */
	char pool_sysfs[160];  /* the hugetlb pool it grew, "" for 4 KiB */
	long long pages_added; /* to nr_hugepages at create: destroy takes them back */
	double create_s;       /* allocating and zeroing all of it */
};

struct mm_scrub {
	uint64_t bytes;
	double punch_s, alloc_s,
		zero_s; /* zero_s: 4 KiB pools, which allocate unzeroed */
};
static inline double mm_scrub_seconds(const struct mm_scrub *s)
{
	return s->punch_s + s->alloc_s + s->zero_s;
}

/* DIR's reservoir.info. 0, or -errno (-ENOENT: no reservoir there) with err set. */
int mm_reservoir_info_read(const char *dir, struct mm_reservoir_info *info, char *err,
			   size_t errlen);
int mm_reservoir_info_write(const char *dir, const struct mm_reservoir_info *info);
/* "DIR/pool/mem" and friends. */
void mm_reservoir_path(char *buf, size_t len, const char *dir, const char *name);
/*
 * Make [off, off + len) of the pool file fresh zeroed memory: punch the hole
 * (the pages go back to their pool), allocate again (hugetlbfs zeroes each
 * page as it allocates; tmpfs does not, so zero_pass maps and writes it).
 * The caller holds the range's lease. 0 or -errno.
 */
int mm_reservoir_scrub(int pool_fd, uint64_t off, uint64_t len, int zero_pass,
		       struct mm_scrub *st);
/* Append a scrub to DIR/scrub.log (TSV: time who pid offset bytes seconds GiB/s result). */
void mm_reservoir_log(const char *dir, const char *who, uint64_t off,
		      const struct mm_scrub *st, int result);
/*
 * Lease size bytes: lock the first free range, scrub what an earlier lessee
 * left dirty, mark it dirty, fork the keeper. Waits (up to
 * MM_RESERVOIR_WAIT_S) when every free-able range is being scrubbed.
 * Returns the pool file's fd (O_RDWR, holding the lease) and *off, or
 * -errno with err set: -EBUSY when the reservoir is leased out, -EINVAL when
 * size does not fit it. li describes the lease; mm_lease_end() ends it.
 */
int mm_reservoir_lease(const char *dir, uint64_t size, uint64_t *off,
		       struct mm_lease_info *li, struct mm_reservoir_info *info,
		       char *err, size_t errlen);
/* The lessee lets go (after munmap): the keeper scrubs, then the range is free. */
void mm_lease_end(struct mm_lease_info *li);

/* ---- roofline.c: this machine's populate ceilings (bench/roofline's TSV) ---- */
struct mm_roofline;
/* Read a roofline file. 0, or -EINVAL / -errno with the reason in err. */
int mm_roofline_load(const char *path, struct mm_roofline **out, char *err,
		     size_t errlen);
int mm_roofline_parse(const char *text, struct mm_roofline **out, char *err,
		      size_t errlen);
void mm_roofline_free(struct mm_roofline *r);

/*
 * The ceiling for populating `bytes` of backing `backing` with `threads`
 * threads, `prezeroed` of them allocated already: those cost page tables
 * only (op "map"), the rest clearing (op "clear"). The combined ceiling is
 * bytes over the predicted time. found = 0 (and why in missing) when the
 * roofline has no row for what is needed.
 */
struct mm_ceiling {
	int found;
	const char *op;		/* "clear", "map" or "mixed" */
	double clear_gib_per_s; /* 0 when not needed */
	double map_gib_per_s;
	double gib_per_s; /* bytes / predicted_s */
	double predicted_s;
	uint64_t row_bytes; /* the size the (clear) ceiling was measured at; 0: unknown */
	double min_gib_per_s; /* that row's slowest run; 0: unknown */
	/* What a 2 MiB reservoir would cost: its map (the lease) and clear (made once) rates; 0: none. */
	double lease_map_gib_per_s, lease_clear_gib_per_s;
	int free_page_reporting; /* mm_free_page_reporting(), at the time of the ceiling */
	char balloon[16];
	char missing[160];
	char source[MM_PATH_BYTES]; /* the roofline file */
};
void mm_roofline_ceiling(const struct mm_roofline *r, const char *backing,
			 unsigned threads, uint64_t bytes, uint64_t prezeroed,
			 struct mm_ceiling *c);
/* A row's rate (op "clear" or "map"), the closest thread count at or below threads; 0 if none. */
double mm_roofline_rate(const struct mm_roofline *r, const char *backing, const char *op,
			unsigned threads);
/*
 * Does this machine's balloon hand freed memory back to its host (virtio
 * balloon, VIRTIO_BALLOON_F_REPORTING, /sys/bus/virtio/devices/<N>/features
 * bit 5)? 1, 0, or -1 when there is no balloon to ask; dev names it ("virtio0").
 */
int mm_free_page_reporting(char *dev, size_t len);

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

struct gpa_range {
	uint64_t gpa, bytes;
};
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
void touch_order_free(struct touch_order *o);

/* ---- numa.c: the host's NUMA nodes, guest RAM placed on them and audited -- */

#define MM_NUMA_SYSFS	      "/sys/devices/system/node"
#define MM_NUMA_MAX_NODES     64    /* host node ids minivmm places RAM on: 0..63 */
#define MM_NUMA_AUDIT_SAMPLES 65536 /* pages asked about per range, at most */

/* One online host node, as sysfs describes it. */
struct mm_numa_node {
	int id;				      /* nodeN */
	cpu_set_t cpus;			      /* its cpulist */
	unsigned ncpus;			      /* CPUs in it */
	uint64_t mem_total, mem_free;	      /* its meminfo's MemTotal and MemFree */
	long long huge_free_2m, huge_free_1g; /* its pools' free_hugepages; -1 unknown */
	long long huge_nr_2m, huge_nr_1g;     /* ... and nr_hugepages */
};

struct mm_numa_host {
	unsigned n; /* online nodes with ids below MM_NUMA_MAX_NODES, in id order */
	struct mm_numa_node node[MM_NUMA_MAX_NODES];
	unsigned skipped; /* online nodes with larger ids (not usable) */
	int balancing;	  /* /proc/sys/kernel/numa_balancing; -1 unknown */
};

/*
 * Read the online nodes under root (MM_NUMA_SYSFS; the unit tests pass a
 * tree of their own): root/online, then each nodeN's cpulist, meminfo and
 * hugepages/hugepages-{2048,1048576}kB/{free,nr}_hugepages. 0, -ENOENT when
 * root/online is missing (a kernel without CONFIG_NUMA), or -EINVAL (a
 * malformed file) / -EIO (a node's file missing or unreadable) / -errno
 * with err set.
 */
int mm_numa_read(const char *root, struct mm_numa_host *h, char *err, size_t errlen);
const struct mm_numa_node *mm_numa_node(const struct mm_numa_host *h,
					int id); /* NULL: not online */

/*
 * A list in sysfs syntax ("0-3,8,10-11", what cpulist and online hold; a
 * trailing newline is allowed) into set: the number of members, or -EINVAL
 * (bad syntax, a descending range, a number >= CPU_SETSIZE). "" is 0.
 * Node lists use the same syntax and type. Pure.
 */
int mm_cpulist_parse(const char *s, cpu_set_t *set);
/* set in the same syntax ("0-3,8"; "" when empty), truncated to len. Returns buf. */
char *mm_cpulist_format(const cpu_set_t *set, char *buf, size_t len);
/* Field key ("MemFree") of a node's meminfo text ("Node 0 MemFree:  12 kB") in bytes; 0 when absent. */
uint64_t mm_node_meminfo_bytes(const char *text, const char *key);

/*
 * Worker i of nworkers over the per-node ranges (contiguous, in order):
 * with at least as many workers as ranges, range k gets workers [k *
 * nworkers / nranges, (k + 1) * nworkers / nranges) (at least one) and
 * each the mvm_slice of it in align units; with fewer, worker i covers the
 * whole ranges [i * nranges / nworkers, (i + 1) * nranges / nworkers).
 * vCPUs are placed on nodes by the same rule. Pure.
 */
struct mm_numa_share {
	uint64_t gpa, bytes;
	unsigned node;	/* the first range it covers: where the worker runs */
	unsigned nodes; /* ranges it covers: 1 unless workers are fewer than ranges */
};
void mm_numa_share(const struct gpa_range *ranges, unsigned nranges, unsigned nworkers,
		   unsigned i, uint64_t align, struct mm_numa_share *s);

/*
 * Can host node nodes[k] hold ranges[k] (each node once) of backing b:
 * MemFree for 4 KiB and THP memory, free pages of its hugetlb pool for the
 * hugetlb backings? 0, or -ENOMEM with the node, the numbers and what to do
 * in err. Pure.
 */
int mm_numa_preflight(const struct mm_numa_host *h, const int *nodes,
		      const struct gpa_range *ranges, unsigned n,
		      const struct mm_backend *b, char *err, size_t errlen);

/*
 * mbind(2) [hva, hva + len) to host node `node`, mode MPOL_BIND (pages
 * come from that node or not at all) or MPOL_PREFERRED (from it while it
 * has them). Before anything touches it: pages already backed stay where
 * they are. 0 or -errno (-ENOSYS: a kernel without NUMA).
 */
int mm_numa_bind(void *hva, uint64_t len, int node, int mode);
/* The nodes this process may allocate on (get_mempolicy MPOL_F_MEMS_ALLOWED: its cpuset). 0 or -errno. */
int mm_numa_mems_allowed(cpu_set_t *nodes);

/* Where the sampled pages of a range are. */
struct mm_numa_count {
	uint64_t sampled;		/* pages asked about */
	uint64_t absent;		/* not backed: never touched, or the zero page */
	uint64_t on[MM_NUMA_MAX_NODES]; /* backed on host node i */
	uint64_t elsewhere;		/* on a node with a larger id */
};
/* One page in every stride bytes: every page of len, or MM_NUMA_AUDIT_SAMPLES spread over it. Pure. */
uint64_t mm_numa_audit_stride(uint64_t len, uint64_t page_bytes);
/*
 * Ask move_pages(2), with no target nodes (so nothing moves), where the
 * page at every stride bytes of [hva, hva + len) is, and add the answers
 * to *c. No allocation (a sandboxed thread may call it). 0 or -errno
 * (-ENOSYS: a kernel without NUMA).
 */
int mm_numa_audit(uint8_t *hva, uint64_t len, uint64_t stride, struct mm_numa_count *c);

/* ---- outfile.c: files written whole or not at all, through symlinks ---- */

/*
 * One file a run writes (-o, --trace, --record-touch, a snapshot): opened,
 * and found writable, before anything runs (a sandboxed thread may not
 * open(2)); written to a temporary in the directory of the file a symlink
 * names (dangling or not), renamed over that file at the end, so a process
 * killed on the way leaves the previous file as it was. Not a regular
 * file (a device, a FIFO): written in place.
 */
struct mm_outfile {
	const char *what, *path;  /* for messages ("--results"), and as given */
	int fd;			  /* what is written; -1: not open */
	int dirfd;		  /* the target's directory; -1 when written in place */
	int in_place;		  /* not a regular file: no temporary */
	int unnamed;		  /* an O_TMPFILE: named only at the end */
	int named;		  /* the temporary has a name now: remove it on failure */
	char base[256], tmp[256]; /* names in dirfd (NAME_MAX + 1) */
	char dir[MM_PATH_BYTES];  /* the target's directory, for messages */
	char proc_path[32];	  /* /proc/self/fd/N of an O_TMPFILE */
};
/*
 * Open path for writing as above. 0, or -errno with why (and what to type)
 * in err; nothing is left open or created then.
 */
int mm_outfile_open(struct mm_outfile *o, const char *what, const char *path, char *err,
		    size_t errlen);
/* fsync and rename over the target (or close one written in place); closes o. 0, or -errno with err set. */
int mm_outfile_commit(struct mm_outfile *o, char *err, size_t errlen);
/* The temporary goes, the target stays as it was; closes o. */
void mm_outfile_discard(struct mm_outfile *o);
/* Async-signal-safe (an immediate exit): remove a named temporary, nothing else. */
void mm_outfile_unlink_now(const struct mm_outfile *o);
/* The file path names once every symlink is followed, dangling or not, into out. 0 or -errno. */
int mm_outfile_target(const char *path, char *out, size_t len);

#endif /* MINIVMM_MM_H */
