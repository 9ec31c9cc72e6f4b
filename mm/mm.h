/*
 * mm/'s base, which every mm room includes: guest RAM as a mapping
 * (struct guest_ram), the one checked gpa -> hva translator, guest-physical
 * ranges, and the small text people and the kernel write (text.c). The
 * rooms on it, lowest first (docs/architecture.md): backing/ (how RAM is
 * backed, the capacity preflight), numa/ and roofline/ (beside it),
 * file/ (RAM in a file, the reservoir), ram/ (creating guest RAM,
 * residency, population, the memslot), paging/ (userfaultfd paging).
 */
#ifndef MINIVMM_MM_H
#define MINIVMM_MM_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kvm_compat.h"

/* CLOCK_MONOTONIC: the one clock of the tree (vmm's now_s is this one too). */
static inline uint64_t mm_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static inline double mm_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct mm_backend; /* backing/backing.h */
struct mm_file;	   /* file/file.h */

struct guest_ram {
	uint8_t *hva;	/* host mapping of guest-physical [0, size), page-aligned */
	uint64_t size;	/* bytes */
	void *map_base; /* what to munmap (may start below hva for alignment) */
	uint64_t map_bytes;
	int fd; /* memfd or --mem-path file backing, or -1 */
	const struct mm_backend *backend;
	struct mm_file *file; /* --mem-path / --reservoir: what the file is, else NULL */
};

#define MM_PATH_BYTES 4096

/* A guest-physical range [gpa, gpa + bytes). */
struct gpa_range {
	uint64_t gpa, bytes;
};

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

/* ---- text.c: small /proc and /sys files, sizes as people type them -------- */

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

/* ---- outfile.c: files written whole or not at all, through symlinks ---- */

/* Writes all LEN bytes of BUF to FD (short writes and EINTR retried): 0 or -errno (-EIO: wrote nothing). */
int mm_write_all(int fd, const void *buf, size_t len);

/*
 * One file a run writes (-o, --trace, --record-touch, a snapshot): opened,
 * and found writable, before anything runs (a sandboxed thread may not
 * open(2)); written to a temporary in the directory of the file a symlink
 * names (dangling or not), renamed over that file at the end, so a process
 * killed on the way leaves the previous file as it was. Not a regular
 * file (a device, a FIFO): written in place; a descriptor named as a file
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N): written to a duplicate of it.
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
/*
 * The file path names once every symlink is followed, dangling or not, into
 * out; a link chain stops at a path naming a descriptor (/dev/stdout,
 * /proc/self/fd/N). 0 or -errno.
 */
int mm_outfile_target(const char *path, char *out, size_t len);

#endif /* MINIVMM_MM_H */
