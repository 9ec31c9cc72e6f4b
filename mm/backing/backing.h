/*
 * mm/backing: the ways to back guest RAM (mm_backends[], one row per enum
 * mm_backing: name, help line, page size, hugetlb pool, map function,
 * file system), and whether the host can back more of it right now (the
 * capacity preflight). Uses the base (mm.h) alone.
 */
#ifndef MINIVMM_MM_BACKING_H
#define MINIVMM_MM_BACKING_H

#include "mm.h"

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
 * Can the host back `need` more bytes of b right now: from MemAvailable,
 * or from free pages in b's hugetlb pool? holes: they are a file's holes
 * (the message says so). 0, or -ENOMEM with the numbers and what to type
 * in err.
 */
int mm_backing_check_capacity(const struct mm_backend *b, uint64_t need, int holes,
			      char *err, size_t errlen);

#endif /* MINIVMM_MM_BACKING_H */
