/* Whether the host can back more guest RAM right now: MemAvailable, or a hugetlb pool's free pages. */
#include "backing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int mm_backing_check_capacity(const struct mm_backend *b, uint64_t need, int holes,
			      char *err, size_t errlen)
{
	char buf[4096], path[160];
	uint64_t avail;

	if (!need)
		return 0;
	if (b->hugetlb_sysfs) {
		unsigned long long free_pages = 0, resv = 0, total = 0;
		unsigned long long pages = (need + b->page_bytes - 1) / b->page_bytes;

		snprintf(path, sizeof(path), "%s/free_hugepages", b->hugetlb_sysfs);
		if (mm_read_text(path, buf, sizeof(buf)) == 0)
			free_pages = strtoull(buf, NULL, 10);
		snprintf(path, sizeof(path), "%s/resv_hugepages", b->hugetlb_sysfs);
		if (mm_read_text(path, buf, sizeof(buf)) == 0)
			resv = strtoull(buf, NULL, 10);
		free_pages = free_pages > resv ? free_pages - resv
					       : 0; /* others' reservations */
		snprintf(path, sizeof(path), "%s/nr_hugepages", b->hugetlb_sysfs);
		if (mm_read_text(path, buf, sizeof(buf)) == 0)
			total = strtoull(buf, NULL, 10);
		if (free_pages >= pages)
			return 0;
		snprintf(
			err, errlen,
			"--backing %s: the hugetlb pool has %llu free pages of %llu MiB, %llu needed%s; grow it with: echo %llu > %s/nr_hugepages",
			b->name, free_pages, (unsigned long long)(b->page_bytes >> 20),
			pages, holes ? " (the file's holes)" : "",
			total + pages - free_pages, b->hugetlb_sysfs);
		return -ENOMEM;
	}
	if (mm_read_text("/proc/meminfo", buf, sizeof(buf)))
		return 0; /* cannot tell: let the kernel decide */
	avail = mm_meminfo_available(buf);
	if (!avail || avail >= need)
		return 0;
	/* What fits now, in whole 2 MiB (a file: that much less of its holes); or lazy. */
	if (holes)
		snprintf(
			err, errlen,
			"cannot back %llu MiB of guest RAM up front (the file's unallocated part): the host has %llu MiB available (MemAvailable); use a --mem %lluM smaller, or leave out --eager (lazy backs only the pages the guest touches)",
			(unsigned long long)(need >> 20),
			(unsigned long long)(avail >> 20),
			(unsigned long long)((((need - avail) + (2ULL << 20) - 1) >> 21)
					     << 1));
	else
		snprintf(
			err, errlen,
			"cannot back %llu MiB of guest RAM up front: the host has %llu MiB available (MemAvailable); use --mem %lluM or less, or leave out --eager (lazy backs only the pages the guest touches)",
			(unsigned long long)(need >> 20),
			(unsigned long long)(avail >> 20),
			(unsigned long long)(((avail / b->page_bytes * b->page_bytes) >>
					      21)
					     << 1));
	return -ENOMEM;
}
