/* A file's data extents (SEEK_DATA/SEEK_HOLE): the one walker of the tree. */
#include "file.h"

#include <errno.h>
#include <unistd.h>

int mm_file_each_extent(int fd, uint64_t off, uint64_t end,
			int (*fn)(void *cookie, uint64_t off, uint64_t end), void *cookie)
{
	off_t at = (off_t)off;

	while ((uint64_t)at < end) {
		off_t d = lseek(fd, at, SEEK_DATA), h;
		int r;

		if (d < 0)
			return errno == ENXIO ? 0 : -errno; /* ENXIO: holes to EOF */
		if ((uint64_t)d >= end)
			return 0;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			return -errno;
		if (d < at || h <= d)
			return -EINVAL; /* not a file's answer (not a regular file) */
		if ((uint64_t)h > end)
			h = (off_t)end;
		r = fn(cookie, (uint64_t)d, (uint64_t)h);
		if (r)
			return r;
		at = h;
	}
	return 0;
}
