/* The snapshot's memory file: guest RAM written sparse (holes decided by content), its data extents, read back or mapped private. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SCAN_PAGE   4096ULL
#define SCAN_CHUNK  (2ULL << 20) /* one window: its pagemap words, or its bytes read */
#define SCAN_PAGES  (SCAN_CHUNK / SCAN_PAGE)
#define IO_MAX	    (64ULL << 20) /* one pread/pwrite at most */
#define EXTENTS_MIN 64
#define PM_PRESENT  (1ULL << 63) /* /proc/PID/pagemap: the page is in RAM */
#define PM_SWAPPED  (1ULL << 62) /* ... or in swap */

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

/* Read [off, off + len) of fd into dst, whole (what lies past the file's end reads as zero). 0 or -errno. */
static int read_all(int fd, uint8_t *dst, uint64_t off, uint64_t len)
{
	while (len) {
		ssize_t n = pread(fd, dst, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			memset(dst, 0, len);
			return 0;
		}
		dst += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/*
 * How the save finds the pages that may hold data, and reads them. Not
 * mincore: it says "absent" of an anonymous page in swap and of a file's
 * page the page cache let go (a --mem-path file on disk, a memfd in swap),
 * whose contents are the guest's all the same.
 */
struct scan {
	const struct guest_ram *ram;
	int pagemap;	   /* anonymous RAM: /proc/self/pagemap, or -1: read every page */
	uint64_t file_off; /* RAM in a file (ram->fd): where guest-physical 0 is */
	uint64_t pm[SCAN_PAGES];
	uint8_t *buf; /* RAM in a file: one window, read from the file */
};

/* mm_file_each_extent's callback for window(): the pages of a data extent. */
struct marks {
	uint8_t *maybe;
	uint64_t n, base; /* the window's pages, the file offset of its first */
	uint64_t any;
};

static int mark_pages(void *cookie, uint64_t off, uint64_t end)
{
	struct marks *m = cookie;

	for (uint64_t p = (off - m->base) / SCAN_PAGE;
	     p < m->n && m->base + p * SCAN_PAGE < end; p++, m->any++)
		m->maybe[p] = 1;
	return 0;
}

/*
 * Which pages of [at, at + len) may hold data (maybe[p]), and where their
 * bytes are to be looked at (*src: the window's first byte). Anonymous
 * RAM: the pages pagemap says are present or swapped (a page never
 * touched is neither), read through the mapping (a swapped page comes
 * back). RAM in a file: the pages in its data extents (SEEK_DATA; swapped
 * and evicted pages are data), read with pread, which gives a hole's zeros
 * without allocating it (hugetlbfs, which reports all of a file as data).
 * 0 or -errno with err.
 */
static int window(struct scan *sc, uint64_t at, uint64_t len, uint8_t *maybe,
		  const uint8_t **src, char *err, size_t errlen)
{
	const struct guest_ram *ram = sc->ram;
	uint64_t n = len / SCAN_PAGE, any;
	struct marks mk;
	int e;

	if (ram->fd < 0) {
		uint64_t word = ((uint64_t)(uintptr_t)(ram->hva + at) / SCAN_PAGE) * 8;

		*src = ram->hva + at;
		if (sc->pagemap < 0 ||
		    (e = read_all(sc->pagemap, (uint8_t *)sc->pm, word, n * 8))) {
			memset(maybe, 1, n); /* no pagemap: the contents decide */
			return 0;
		}
		for (uint64_t p = 0; p < n; p++)
			maybe[p] = !!(sc->pm[p] & (PM_PRESENT | PM_SWAPPED));
		return 0;
	}
	memset(maybe, 0, n);
	mk = (struct marks){ maybe, n, sc->file_off + at, 0 };
	e = mm_file_each_extent(ram->fd, mk.base, mk.base + len, mark_pages, &mk);
	if (e == -EINVAL || e == -EOPNOTSUPP) {
		/* The file system cannot say (or not a regular file): the contents decide. */
		memset(maybe, 1, n);
		mk.any = n;
	} else if (e) {
		snprintf(err, errlen, "SEEK_DATA/SEEK_HOLE on guest RAM's file: %s",
			 strerror(-e));
		return e;
	}
	any = mk.any;
	*src = sc->buf;
	if (!any)
		return 0;
	e = read_all(ram->fd, sc->buf, sc->file_off + at, len);
	if (e)
		snprintf(err, errlen, "reading guest RAM's file at 0x%llx: %s",
			 (unsigned long long)(sc->file_off + at), strerror(-e));
	return e;
}

int mm_memfile_write(const struct guest_ram *ram, int fd, int pagemap_fd,
		     int (*stop)(void *), void *cookie, struct mm_memfile_stats *st,
		     char *err, size_t errlen)
{
	const struct stopper stopper = { stop, cookie };
	struct scan *sc = calloc(1, sizeof(*sc));
	uint8_t maybe[SCAN_PAGES];
	uint64_t run = 0, run_len = 0;
	double t0 = mm_now_s();
	int e = 0;

	memset(st, 0, sizeof(*st));
	err[0] = '\0';
	if (!sc) {
		snprintf(err, errlen, "out of memory for the memory file's scan");
		return -ENOMEM;
	}
	sc->ram = ram;
	sc->pagemap = -1;
	if (ram->fd >= 0) {
		sc->file_off = ram->file ? ram->file->offset : 0;
		sc->buf = malloc(SCAN_CHUNK);
		if (!sc->buf) {
			free(sc);
			snprintf(err, errlen, "out of memory for the memory file's scan");
			return -ENOMEM;
		}
	} else {
		sc->pagemap = pagemap_fd >= 0
				      ? pagemap_fd
				      : open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	}
	/* The file's size is RAM's: what is never written reads as zero (a hole). */
	if (ftruncate(fd, (off_t)ram->size)) {
		e = -errno;
		snprintf(err, errlen, "sizing the memory file to %llu bytes: %s",
			 (unsigned long long)ram->size, strerror(-e));
	}
	for (uint64_t at = 0; at < ram->size && !e; at += SCAN_CHUNK) {
		uint64_t len = ram->size - at < SCAN_CHUNK ? ram->size - at : SCAN_CHUNK;
		const uint8_t *src = NULL;

		/* Asked to stop (a SIGINT): at a window's edge, the file left as it is. */
		if (stop && stop(cookie)) {
			e = -EINTR;
			snprintf(err, errlen, "stopped after %llu of %llu MiB",
				 (unsigned long long)(at >> 20),
				 (unsigned long long)(ram->size >> 20));
			break;
		}
		e = window(sc, at, len, maybe, &src, err, errlen);
		for (uint64_t p = 0; p < len / SCAN_PAGE && !e; p++) {
			uint64_t gpa = at + p * SCAN_PAGE;
			int data = maybe[p] && !all_zero(src + p * SCAN_PAGE, SCAN_PAGE);

			st->resident_bytes += maybe[p] ? SCAN_PAGE : 0;
			if (data && run_len && run + run_len == gpa) {
				run_len += SCAN_PAGE;
				continue;
			}
			if (run_len) {
				e = write_all(fd, ram->hva, run, run_len, &stopper);
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
		e = write_all(fd, ram->hva, run, run_len, &stopper);
		st->data_bytes += run_len;
		st->extents++;
	}
	if (e == -EINTR && !err[0])
		snprintf(err, errlen, "stopped while writing the memory file");
	else if (e && !err[0])
		snprintf(err, errlen, "writing the memory file: %s", strerror(-e));
	if (sc->pagemap >= 0 && sc->pagemap != pagemap_fd)
		close(sc->pagemap);
	free(sc->buf);
	free(sc);
	st->seconds = mm_now_s() - t0;
	return e;
}

struct extents {
	struct gpa_range *x;
	size_t n, cap;
};

static int add_extent(void *cookie, uint64_t off, uint64_t end)
{
	struct extents *e = cookie;

	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : EXTENTS_MIN;
		struct gpa_range *y = realloc(e->x, cap * sizeof(*y));

		if (!y)
			return -ENOMEM;
		e->x = y;
		e->cap = cap;
	}
	e->x[e->n++] = (struct gpa_range){ off, end - off };
	return 0;
}

int mm_memfile_extents(int fd, uint64_t size, struct gpa_range **out, size_t *n,
		       char *err, size_t errlen)
{
	struct extents e = { 0 };
	int r = mm_file_each_extent(fd, 0, size, add_extent, &e);

	*out = NULL;
	*n = 0;
	if (r) {
		free(e.x);
		if (r == -ENOMEM)
			snprintf(err, errlen,
				 "out of memory for the memory file's extents");
		else
			snprintf(err, errlen,
				 "SEEK_DATA/SEEK_HOLE on the memory file: %s",
				 strerror(-r));
		return r;
	}
	*out = e.x;
	*n = e.n;
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
