/* Unit tests: an output file named by a descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N) is written to that descriptor (mm/outfile.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mm.h"

/* Open path as an output, write text, commit: 0 or -errno, err said. */
static int put(const char *path, const char *text, char *err, size_t errlen)
{
	struct mm_outfile o;
	int e = mm_outfile_open(&o, "-o", path, err, errlen);

	if (e)
		return e;
	CHECK(o.in_place);
	CHECK(mm_write_all(o.fd, text, strlen(text)) == 0);
	return mm_outfile_commit(&o, err, errlen);
}

void test_outfile_descriptor(void)
{
	char dir[] = "/tmp/minivmm-outfd-XXXXXX", path[128], link[160], err[512];
	char buf[64] = "";
	int p[2], fd, rd;
	ssize_t n;

	CHECK(mkdtemp(dir) != NULL);
	/* A pipe: /proc's link says "pipe:[N]", which is no path. */
	CHECK(pipe(p) == 0);
	snprintf(path, sizeof(path), "/dev/fd/%d", p[1]);
	CHECK(put(path, "one", err, sizeof(err)) == 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	CHECK(put(path, " two", err, sizeof(err)) == 0);
	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)getpid(), p[1]);
	CHECK(put(path, " three", err, sizeof(err)) == 0);
	/* A symlink to one: the link is followed to the descriptor. */
	snprintf(path, sizeof(path), "/dev/fd/%d", p[1]);
	snprintf(link, sizeof(link), "%s/out.json", dir);
	CHECK(symlink(path, link) == 0);
	CHECK(put(link, " four", err, sizeof(err)) == 0);
	close(p[1]); /* each put closed only its duplicate */
	n = read(p[0], buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(!strcmp(buf, "one two three four"));
	close(p[0]);

	/* A file opened for appending (>>): appended to, not replaced. */
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	CHECK(fd >= 0 && write(fd, "before\n", 7) == 7);
	rd = open(path, O_RDONLY);
	snprintf(link, sizeof(link), "/dev/fd/%d", fd);
	CHECK(put(link, "after\n", err, sizeof(err)) == 0);
	n = pread(rd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(!strcmp(buf, "before\nafter\n"));
	/* A descriptor not open, or open for reading only: one clear error. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", rd);
	CHECK(put(link, "x", err, sizeof(err)) == -EBADF);
	CHECK_STR_CONTAINS(err, "is open for reading only");
	close(fd);
	close(rd);
	snprintf(link, sizeof(link), "/dev/fd/%d", fd);
	CHECK(put(link, "x", err, sizeof(err)) == -EBADF);
	CHECK_STR_CONTAINS(err, "is not open");
	snprintf(path, sizeof(path), "%s/file", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/out.json", dir);
	unlink(path);
	rmdir(dir);
}
