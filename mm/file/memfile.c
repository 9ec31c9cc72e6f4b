/* The snapshot's memory file: guest RAM written sparse, its data extents, read back or mapped private. */
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SCAN_PAGE   4096ULL
#define SCAN_CHUNK  (2ULL << 20)  /* mincore's window: one vector on the stack */
#define IO_MAX	    (64ULL << 20) /* one pread/pwrite at most */
#define EXTENTS_MIN 64

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int all_zero(const uint8_t *p, uint64_t len)
{
	const uint64_t *w = (const uint64_t *)p;

	for (uint64_t i = 0; i < len / sizeof(*w); i++)
		if (w[i])
			return 0;
	return 1;
}

struct stopper {
	int (*fn)(void *);
	void *cookie;
};

/* Write [off, off + len) of src at the same offset of fd, whole. 0, -EINTR (stopped) or -errno. */
static int write_all(int fd, const uint8_t *src, uint64_t off, uint64_t len,
		     const struct stopper *s)
{
	while (len) {
		ssize_t n;

		if (s->fn && s->fn(s->cookie))
			return -EINTR;
		n = pwrite(fd, src + off, len < IO_MAX ? len : IO_MAX, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

int mm_memfile_write(const struct guest_ram *ram, int fd, int (*stop)(void *),
		     void *cookie, struct mm_memfile_stats *st, char *err, size_t errlen)
{
	unsigned char vec[SCAN_CHUNK / SCAN_PAGE];
	uint64_t run = 0, run_len = 0;
	const struct stopper s = { stop, cookie };
	double t0 = now();
	int e = 0;

	memset(st, 0, sizeof(*st));
	/* The file's size is RAM's: what is never written reads as zero (a hole). */
	if (ftruncate(fd, (off_t)ram->size)) {
		e = -errno;
		snprintf(err, errlen, "sizing the memory file to %llu bytes: %s",
			 (unsigned long long)ram->size, strerror(-e));
		return e;
	}
	for (uint64_t at = 0; at < ram->size && !e; at += SCAN_CHUNK) {
		uint64_t len = ram->size - at < SCAN_CHUNK ? ram->size - at : SCAN_CHUNK;

		/* Asked to stop (a SIGINT): at a chunk's edge, the file left as it is. */
		if (stop && stop(cookie)) {
			e = -EINTR;
			snprintf(err, errlen, "stopped after %llu of %llu MiB",
				 (unsigned long long)(at >> 20),
				 (unsigned long long)(ram->size >> 20));
			break;
		}
		/* Pages the host never backed were never touched: holes, not read. */
		if (mincore(ram->hva + at, len, vec)) {
			e = -errno;
			snprintf(err, errlen, "mincore of guest RAM at 0x%llx: %s",
				 (unsigned long long)at, strerror(-e));
			break;
		}
		for (uint64_t p = 0; p < len / SCAN_PAGE && !e; p++) {
			uint64_t gpa = at + p * SCAN_PAGE;
			int data = (vec[p] & 1) && !all_zero(ram->hva + gpa, SCAN_PAGE);

			st->resident_bytes += (vec[p] & 1) ? SCAN_PAGE : 0;
			if (data && run_len && run + run_len == gpa) {
				run_len += SCAN_PAGE;
				continue;
			}
			if (run_len) {
				e = write_all(fd, ram->hva, run, run_len, &s);
				st->data_bytes += run_len;
				st->extents++;
				run_len = 0;
			}
			if (data) {
				run = gpa;
				run_len = SCAN_PAGE;
			}
		}
	}
	if (!e && run_len) {
		e = write_all(fd, ram->hva, run, run_len, &s);
		st->data_bytes += run_len;
		st->extents++;
	}
	if (e == -EINTR && !err[0])
		snprintf(err, errlen, "stopped while writing the memory file");
	else if (e && !err[0])
		snprintf(err, errlen, "writing the memory file: %s", strerror(-e));
	st->seconds = now() - t0;
	return e;
}

int mm_memfile_extents(int fd, uint64_t size, struct gpa_range **out, size_t *n,
		       char *err, size_t errlen)
{
	size_t cap = EXTENTS_MIN;
	struct gpa_range *x = malloc(cap * sizeof(*x));
	off_t at = 0;

	*out = NULL;
	*n = 0;
	if (!x) {
		snprintf(err, errlen, "out of memory for the memory file's extents");
		return -ENOMEM;
	}
	while ((uint64_t)at < size) {
		off_t data = lseek(fd, at, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* nothing but hole to the end */
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (data < 0 || hole < 0) {
			int e = -errno;

			snprintf(err, errlen,
				 "SEEK_DATA/SEEK_HOLE on the memory file: %s",
				 strerror(-e));
			free(x);
			return e;
		}
		if ((uint64_t)hole > size)
			hole = (off_t)size;
		if (*n == cap) {
			struct gpa_range *y = realloc(x, 2 * cap * sizeof(*x));

			if (!y) {
				free(x);
				snprintf(err, errlen,
					 "out of memory for the memory file's extents");
				return -ENOMEM;
			}
			x = y;
			cap *= 2;
		}
		x[(*n)++] = (struct gpa_range){ (uint64_t)data, (uint64_t)(hole - data) };
		at = hole;
	}
	*out = x;
	return 0;
}

int mm_memfile_read(struct guest_ram *ram, int fd, const struct gpa_range *x, size_t n,
		    char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t off = x[i].gpa, left = x[i].bytes;

		if (!mm_gpa_to_hva(ram, off, left)) {
			snprintf(err, errlen,
				 "memory file extent 0x%llx+%llu is outside guest RAM",
				 (unsigned long long)off, (unsigned long long)left);
			return -EINVAL;
		}
		while (left) {
			ssize_t r = pread(fd, ram->hva + off,
					  left < IO_MAX ? left : IO_MAX, (off_t)off);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				int e = r < 0 ? -errno : -EIO;

				snprintf(err, errlen,
					 "reading the memory file at 0x%llx: %s",
					 (unsigned long long)off,
					 r < 0 ? strerror(-e) : "it ended early");
				return e;
			}
			off += (uint64_t)r;
			left -= (uint64_t)r;
		}
	}
	return 0;
}

int mm_memfile_map_private(struct guest_ram *ram, int fd, char *err, size_t errlen)
{
	void *p = mmap(ram->hva, ram->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd, 0);

	if (p == MAP_FAILED) {
		int e = -errno;

		snprintf(err, errlen,
			 "mapping the memory file MAP_PRIVATE over guest RAM: %s",
			 strerror(-e));
		return e;
	}
	return 0;
}
