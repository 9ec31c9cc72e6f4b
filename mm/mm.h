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

#include "kvm_compat.h"

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

#endif /* MINIVMM_MM_H */
