/*
 * mm/file: guest RAM in a file (--mem-path: hugetlbfs or tmpfs pages, the
 * backing from the file system, mapped shared; file.c) and the reservoir,
 * a pool of pre-zeroed memory leased in exclusive ranges (reservoir.c).
 * The snapshot's memory file I/O (sparse writes, a private map of it) goes
 * here too. Uses backing/ and the base; knows nothing of ram/, which calls
 * it: on failure it cleans up after itself.
 */
#ifndef MINIVMM_MM_FILE_H
#define MINIVMM_MM_FILE_H

#include "backing.h"

/* ---- file.c: guest RAM in a file (--mem-path, --reservoir), mapped shared ---- */

/* What mm_ram_create should map instead of fresh memory. */
struct mm_file_request {
	const char *path; /* a file, or a directory: an unlinked file of our own there */
	const char
		*reservoir; /* lease a range of the reservoir at this directory instead */
	int grow;   /* create a missing file, extend a short one (never shrinks) */
	int any_fs; /* allow a file on a disk file system (its page cache) */
};

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
/* The file system of an open file (fstatfs: the descriptor's, never a path's); 0 if it cannot say. */
long mm_fd_fs_magic(int fd);
/* tmpfs or hugetlbfs: the page cache is the file's memory (userfaultfd minor faults map it). */
int mm_fs_is_shmem(long fs_magic);
/*
 * Map size bytes of req's file into ram (mm_ram_create's file path). As
 * mm_ram_create; on failure ram is reset and its description freed here.
 */
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

/* ---- memfile.c: a snapshot's memory file (guest-physical address = offset) ---- */
struct mm_memfile_stats {
	uint64_t
		resident_bytes; /* RAM that may hold data: present or swapped, a file's data */
	uint64_t data_bytes; /* written: resident pages not all zero */
	uint64_t extents;    /* runs of them, one pwrite each (up to 64 MiB) */
	double seconds;
};
/*
 * Write guest RAM into fd (empty, opened for writing) as a sparse file of
 * RAM's size: a page is a hole when it is all zero, or when the host never
 * backed it (anonymous RAM: neither present nor swapped in pagemap; RAM in
 * a file: a hole of the file). Pages in swap, or evicted from the page
 * cache, are read back and saved. 0, or -errno with err set (-ENOSPC: the
 * file system is full). pagemap_fd: /proc/self/pagemap open (the caller's,
 * opened before a seccomp filter), or -1 to open it here. stop(cookie)
 * (may be NULL), asked every few MiB,
 * ends it early with -EINTR: the file is then incomplete, the caller's to
 * remove.
 */
int mm_memfile_write(const struct guest_ram *ram, int fd, int pagemap_fd,
		     int (*stop)(void *), void *cookie, struct mm_memfile_stats *st,
		     char *err, size_t errlen);
/*
 * fn(cookie, start, end) for each data extent of fd within [off, end), in
 * order and clipped to it (SEEK_DATA/SEEK_HOLE; extents.c, the tree's one
 * walker). 0 at the end, fn's non-zero return, -EINVAL where lseek gave no
 * file's answer (not a regular file), or -errno of lseek (on a file
 * system that cannot say: the whole file is data there, which SEEK_DATA
 * reports by itself).
 */
int mm_file_each_extent(int fd, uint64_t off, uint64_t end,
			int (*fn)(void *cookie, uint64_t off, uint64_t end),
			void *cookie);
/* The data extents of fd's first size bytes (SEEK_DATA/SEEK_HOLE), malloc'ed in *out. 0 or -errno with err. */
int mm_memfile_extents(int fd, uint64_t size, struct gpa_range **out, size_t *n,
		       char *err, size_t errlen);
/* Read each extent into RAM at its offset (the rest of fresh RAM is zero already). 0 or -errno with err. */
int mm_memfile_read(struct guest_ram *ram, int fd, const struct gpa_range *x, size_t n,
		    char *err, size_t errlen);
/* Map fd MAP_PRIVATE over all of RAM (the memslot follows): pages from the page cache on demand, copied on write. */
int mm_memfile_map_private(struct guest_ram *ram, int fd, char *err, size_t errlen);

#endif /* MINIVMM_MM_FILE_H */
