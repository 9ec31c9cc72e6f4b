/*
 * The plain programs bench/restore rates minivmm's snapshot I/O against, on
 * the same sparse file (a snapshot's memory file):
 *   file-rate read FILE [CHUNK_KIB]   drop FILE's page cache (POSIX_FADV_DONTNEED),
 *                                     then read its data extents (SEEK_DATA/SEEK_HOLE)
 *                                     into one buffer of the file's size, CHUNK at a
 *                                     time: the cold read ceiling of a copy restore
 *   file-rate write FILE OUT [CHUNK_KIB]  read FILE into memory (not timed), then
 *                                     write its extents to OUT.tmp (pwrite at their
 *                                     offsets, ftruncate to the size, fsync) and rename
 *                                     it to OUT: the ceiling of writing a snapshot
 *   file-rate drop FILE               only drop FILE's page cache (before a cold restore)
 * Prints one line: "file-rate MODE bytes=B seconds=S mib_per_s=R extents=N".
 *   make build/bench/file-rate
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CHUNK (1ULL << 20)

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "file-rate: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct extent {
	off_t off, len;
};

/* FILE's data extents (SEEK_DATA/SEEK_HOLE), a new array. */
static struct extent *extents(int fd, off_t size, size_t *n)
{
	struct extent *e = NULL;
	size_t cap = 0;
	off_t off = 0, d, h;

	*n = 0;
	while (off < size) {
		d = lseek(fd, off, SEEK_DATA);
		if (d < 0) {
			if (errno == ENXIO)
				break;
			die("SEEK_DATA");
		}
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			die("SEEK_HOLE");
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			e = realloc(e, cap * sizeof(*e));
			if (!e)
				die("realloc");
		}
		e[(*n)++] = (struct extent){ d, h - d };
		off = h;
	}
	return e;
}

/* [off, off + len) of fd into buf + off (read) or from it (write), chunk at a time. */
static void transfer(int fd, uint8_t *buf, off_t off, off_t len, uint64_t chunk, int wr)
{
	while (len > 0) {
		size_t n = (uint64_t)len < chunk ? (size_t)len : (size_t)chunk;
		ssize_t r =
			wr ? pwrite(fd, buf + off, n, off) : pread(fd, buf + off, n, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die(wr ? "pwrite" : "pread");
		off += r;
		len -= r;
	}
}

int main(int argc, char **argv)
{
	int wr = argc >= 4 && !strcmp(argv[1], "write");
	const char *chunk_arg = argc > (wr ? 4 : 3) ? argv[wr ? 4 : 3] : NULL;
	uint64_t chunk = chunk_arg ? strtoull(chunk_arg, NULL, 10) << 10 : DEFAULT_CHUNK;
	uint64_t bytes = 0;
	struct extent *e;
	struct stat st;
	uint8_t *buf;
	size_t n;
	double t0, t1;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "drop")) {
		fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
			die(argv[2]);
		return 0;
	}
	if (argc < 3 || (!wr && strcmp(argv[1], "read")) || !chunk) {
		fprintf(stderr,
			"usage: file-rate read FILE [CHUNK_KIB] | write FILE OUT [CHUNK_KIB] | drop FILE\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		die(argv[2]);
	e = extents(fd, st.st_size, &n);
	buf = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	for (size_t i = 0; i < n; i++)
		bytes += (uint64_t)e[i].len;
	if (!wr) {
		/* As minivmm's copy restore reads into fresh guest RAM: the buffer is fresh too. */
		if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
			die("posix_fadvise");
		t0 = now_s();
		for (size_t i = 0; i < n; i++)
			transfer(fd, buf, e[i].off, e[i].len, chunk, 0);
		t1 = now_s();
	} else {
		char tmp[4096];
		int out;

		for (size_t i = 0; i < n; i++)
			transfer(fd, buf, e[i].off, e[i].len, chunk, 0);
		snprintf(tmp, sizeof(tmp), "%s.tmp", argv[3]);
		t0 = now_s();
		out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (out < 0)
			die(tmp);
		for (size_t i = 0; i < n; i++)
			transfer(out, buf, e[i].off, e[i].len, chunk, 1);
		if (ftruncate(out, st.st_size) || fsync(out) || close(out) ||
		    rename(tmp, argv[3]))
			die(argv[3]);
		t1 = now_s();
	}
	printf("file-rate %s bytes=%llu seconds=%.6f mib_per_s=%.1f extents=%zu\n",
	       wr ? "write" : "read", (unsigned long long)bytes, t1 - t0,
	       (double)bytes / (1 << 20) / (t1 - t0), n);
	return 0;
}
