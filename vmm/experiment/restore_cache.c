/* --compare --restore: before each run, the memory file's page cache dropped (cold) or filled (warm), and what is cached then counted. */
#include "experiment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define WARM_CHUNK (1ULL << 20)

int restore_cache_bytes(int fd, uint64_t size, uint64_t *out)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pages = (size + (uint64_t)page - 1) / (uint64_t)page, n = 0;
	unsigned char *vec;
	void *map;

	*out = 0;
	if (!size)
		return 0;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	vec = malloc(pages);
	if (!vec) {
		munmap(map, size);
		return -ENOMEM;
	}
	if (mincore(map, size, vec)) {
		int e = -errno;

		free(vec);
		munmap(map, size);
		return e;
	}
	for (uint64_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	munmap(map, size);
	*out = n * (uint64_t)page;
	return 0;
}

struct warm {
	int fd;
	char *buf;
};

static int read_extent(void *cookie, uint64_t off, uint64_t end)
{
	struct warm *w = cookie;

	while (off < end) {
		size_t n = end - off < WARM_CHUNK ? (size_t)(end - off) : WARM_CHUNK;
		ssize_t got = pread(w->fd, w->buf, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		off += (uint64_t)got;
	}
	return 0;
}

/* Read the file's data once (SEEK_DATA/SEEK_HOLE extents, a 1 MiB buffer): its pages cached. */
static int fill(int fd, uint64_t size)
{
	struct warm w = { fd, malloc(WARM_CHUNK) };
	int r;

	if (!w.buf)
		return -ENOMEM;
	r = mm_file_each_extent(fd, 0, size, read_extent, &w);
	free(w.buf);
	return r;
}

int restore_cache_set(const char *path, int warm, struct restore_cache *out, char *err,
		      size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;
	struct stat st;

	*out = (struct restore_cache){ 0 };
	if (fd < 0 || fstat(fd, &st)) {
		r = -errno;
		snprintf(err, errlen, "--restore-cache: %s: %s", path, strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	out->file_bytes = (uint64_t)st.st_size;
	if (warm)
		r = fill(fd, out->file_bytes);
	else
		r = -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* returns the errno */
	if (!r)
		r = restore_cache_bytes(fd, out->file_bytes, &out->cached_bytes);
	if (r)
		snprintf(err, errlen, "--restore-cache %s: %s: %s",
			 warm ? "warm" : "cold", path, strerror(-r));
	close(fd);
	return r;
}
