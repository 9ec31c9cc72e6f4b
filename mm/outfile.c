/* Files written whole or not at all, through symlinks: a temporary beside the target, renamed over it. */
#include "mm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A file a run writes (results, trace, first-touch record, snapshot) is
 * replaced only once its successor is complete: what is written goes to a
 * temporary in the target's directory (so the rename is atomic), made
 * durable with fsync and renamed over the target at the end. A process
 * killed on the way (SIGKILL, the OOM killer, a node's end) leaves the
 * previous file as it was.
 *
 * The target is found through symlinks, also dangling ones ("ln -s
 * real.json link.json" before real.json exists): the temporary goes in the
 * directory of the file the last link names, and the rename replaces that
 * file, never the link.
 *
 * The temporary is an unnamed O_TMPFILE where the file system has them
 * (nothing is left behind whatever kills the process); it gets its name,
 * TARGET.minivmm-PID.tmp, only at the end (linkat through /proc/self/fd,
 * then renameat: linkat does not replace). Elsewhere it is created under
 * that name at once. Every ending the process sees removes a named one,
 * and a later open with the same target removes those whose process is
 * gone. Targets that are not regular files (/dev/null, a FIFO, a terminal)
 * are written in place, and so is a descriptor of this process named as a
 * file (/dev/stdout, /dev/fd/N, /proc/self/fd/N; a link to one): what it
 * is open on (a pipe, a file, a terminal) gets what is written, at its
 * offset, as the shell set it up.
 */

#define LINK_HOPS_MAX 40 /* as the kernel's MAXSYMLINKS */

/*
 * The descriptor path names, when it names one of this process's: /dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N,
 * /proc/PID/fd/N of our own PID. /proc's links for them are magic: their
 * text ("pipe:[1234]", a file's name then) is no path to follow, and a
 * file's may be replaced under it; what is written goes to the descriptor,
 * as any tool's output does. -1 otherwise.
 */
static int fd_named(const char *path)
{
	char own[32];
	const char *n = NULL;
	char *end;
	long fd;

	if (!strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	snprintf(own, sizeof(own), "/proc/%ld/fd/", (long)getpid());
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	else if (!strncmp(path, "/proc/thread-self/fd/", 21))
		n = path + 21;
	else if (!strncmp(path, own, strlen(own)))
		n = path + strlen(own);
	if (!n || *n < '0' || *n > '9')
		return -1;
	errno = 0;
	fd = strtol(n, &end, 10);
	return *end || errno || fd > INT_MAX ? -1 : (int)fd;
}

static void tmp_name(const struct mm_outfile *o, char *buf, size_t len, long pid)
{
	snprintf(buf, len, "%s.minivmm-%ld.tmp", o->base, pid);
}

/* Remove TARGET.minivmm-PID.tmp files whose process is gone (SIGKILLed runs). */
static void remove_stale(const struct mm_outfile *o)
{
	size_t blen = strlen(o->base);
	int fd = dup(o->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		const char *p = e->d_name;
		char *end;
		long pid;

		if (strncmp(p, o->base, blen) || strncmp(p + blen, ".minivmm-", 9))
			continue;
		pid = strtol(p + blen + 9, &end, 10);
		if (end == p + blen + 9 || strcmp(end, ".tmp") || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) && errno == ESRCH)
			unlinkat(o->dirfd, p, 0);
	}
	closedir(d);
}

int mm_outfile_target(const char *path, char *out, size_t len)
{
	char cur[PATH_MAX], link[PATH_MAX];
	struct stat st;

	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return -ENAMETOOLONG;
	for (int hops = 0;; hops++) {
		ssize_t n;
		char *slash;

		if (fd_named(cur) >= 0)
			break; /* a descriptor: written to as it is */
		if (lstat(cur, &st)) {
			if (errno != ENOENT)
				return -errno;
			break; /* a new file, or a missing directory: open says which */
		}
		if (!S_ISLNK(st.st_mode))
			break;
		if (hops == LINK_HOPS_MAX)
			return -ELOOP;
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash) {
			snprintf(cur, sizeof(cur), "%s", link);
		} else {
			/* Relative to the link's own directory. */
			slash[1] = '\0';
			if (strlen(cur) + strlen(link) >= sizeof(cur))
				return -ENAMETOOLONG;
			strcat(cur, link);
		}
	}
	if (snprintf(out, len, "%s", cur) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* dirname of a path, "." for a bare name, "/" for one at the root. */
static void dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/*
 * The target's directory (opened) and name, through symlinks. 0, or -errno
 * with the reason in err (a missing directory is named, with what to type).
 */
static int locate(struct mm_outfile *o, struct stat *st, int *exists, char *err,
		  size_t errlen)
{
	char real[PATH_MAX], dir[PATH_MAX], via[PATH_MAX + 32] = "";
	const char *base;
	int e;

	if (!o->path[0] || o->path[strlen(o->path) - 1] == '/') {
		snprintf(err, errlen, "%s %s: a directory, not a file name", o->what,
			 o->path);
		return -EISDIR;
	}
	e = mm_outfile_target(o->path, real, sizeof(real));
	if (e) {
		snprintf(err, errlen, "%s %s: %s", o->what, o->path, strerror(-e));
		return e;
	}
	if (strcmp(real, o->path))
		snprintf(via, sizeof(via), " (a link to %s)", real);
	*exists = stat(real, st) == 0;
	if (*exists && S_ISDIR(st->st_mode)) {
		snprintf(err, errlen,
			 "%s %s%s: a directory; name a file in it (%s/results.json)",
			 o->what, o->path, via, o->path);
		return -EISDIR;
	}
	base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	if (snprintf(o->base, sizeof(o->base), "%s", base) >= (int)sizeof(o->base)) {
		snprintf(err, errlen, "%s %s: %s", o->what, o->path,
			 strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	dir_of(real, dir, sizeof(dir));
	snprintf(o->dir, sizeof(o->dir), "%s", dir);
	o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd >= 0)
		return 0;
	e = -errno;
	if (e == -ENOENT)
		snprintf(err, errlen,
			 "%s %s%s: no directory %s (make it first: mkdir -p %s)", o->what,
			 o->path, via, dir, dir);
	else if (e == -ENOTDIR)
		snprintf(err, errlen, "%s %s%s: %s is not a directory", o->what, o->path,
			 via, dir);
	else
		snprintf(err, errlen, "%s %s%s: its directory %s: %s", o->what, o->path,
			 via, dir, strerror(-e));
	return e;
}

/* The temporary: unnamed where the file system can, else named at once. 0 or -errno. */
static int create_tmp(struct mm_outfile *o)
{
	o->fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	if (o->fd >= 0) {
		o->unnamed = 1;
		snprintf(o->proc_path, sizeof(o->proc_path), "/proc/self/fd/%d", o->fd);
		/* linkat at the end goes through /proc: it must be there now. */
		if (access(o->proc_path, F_OK) == 0)
			return 0;
		close(o->fd);
		o->unnamed = 0;
	} else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
		return -errno;
	}
	o->fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (o->fd < 0)
		return -errno;
	o->named = 1;
	return 0;
}

/* A probe byte, written and taken back: a full disk or a read-only file system shows now. */
static int probe(int fd, int regular)
{
	if (write(fd, "\n", 1) != 1)
		return errno ? -errno : -EIO;
	if (regular && (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET)))
		return -errno;
	return 0;
}

int mm_write_all(int fd, const void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += (size_t)n;
	}
	return 0;
}

static void outfile_close(struct mm_outfile *o)
{
	if (o->named)
		unlinkat(o->dirfd, o->tmp, 0);
	o->named = 0;
	if (o->fd >= 0)
		close(o->fd);
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->fd = o->dirfd = -1;
}

/* Path names descriptor fd (a link to one included): o writes to a duplicate of it. 0 or -errno with err. */
static int open_descriptor(struct mm_outfile *o, int fd, const char *real, char *err,
			   size_t errlen)
{
	char via[PATH_MAX + 32] = "";
	int fl = fcntl(fd, F_GETFL), e = 0;

	if (strcmp(real, o->path))
		snprintf(via, sizeof(via), " (a link to %s)", real);
	o->in_place = 1;
	if (fl < 0) {
		e = -errno;
		snprintf(err, errlen, "%s %s%s: descriptor %d is not open", o->what,
			 o->path, via, fd);
	} else if ((fl & O_ACCMODE) == O_RDONLY) {
		e = -EBADF;
		snprintf(err, errlen, "%s %s%s: descriptor %d is open for reading only",
			 o->what, o->path, via, fd);
	} else if ((o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		e = -errno;
		snprintf(err, errlen, "%s %s%s: %s", o->what, o->path, via, strerror(-e));
	}
	return e;
}

int mm_outfile_open(struct mm_outfile *o, const char *what, const char *path, char *err,
		    size_t errlen)
{
	char real[PATH_MAX];
	struct stat st;
	int exists = 0, e, fd;

	*o = (struct mm_outfile){ .what = what, .path = path, .fd = -1, .dirfd = -1 };
	if (path[0] && !mm_outfile_target(path, real, sizeof(real)) &&
	    (fd = fd_named(real)) >= 0) {
		e = open_descriptor(o, fd, real, err, errlen);
		if (e)
			outfile_close(o);
		return e;
	}
	e = locate(o, &st, &exists, err, errlen);
	if (!e && exists && !S_ISREG(st.st_mode)) {
		/* A device, a FIFO, a socket: written in place (a device keeps the probe). */
		close(o->dirfd);
		o->dirfd = -1;
		o->in_place = 1;
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		e = o->fd < 0 ? -errno : 0;
		if (!e && S_ISCHR(st.st_mode))
			e = probe(o->fd, 0);
		if (e)
			snprintf(err, errlen, "%s %s: %s%s", what, path,
				 o->fd >= 0 ? "cannot write: " : "", strerror(-e));
	} else if (!e) {
		remove_stale(o);
		tmp_name(o, o->tmp, sizeof(o->tmp), (long)getpid());
		e = create_tmp(o);
		if (e)
			snprintf(err, errlen, "%s %s: %s", what, path, strerror(-e));
		if (!e && exists)
			fchmod(o->fd, st.st_mode & 07777); /* the file keeps its mode */
		if (!e) {
			e = probe(o->fd, 1);
			if (e)
				snprintf(err, errlen, "%s %s: cannot write: %s", what,
					 path, strerror(-e));
		}
	}
	if (e)
		outfile_close(o);
	return e;
}

int mm_outfile_commit(struct mm_outfile *o, char *err, size_t errlen)
{
	int e = 0;

	if (o->fd < 0)
		return 0;
	if (o->in_place) {
		/* close(2) is where some file systems (NFS) report a failed write. */
		e = close(o->fd) ? -errno : 0;
		o->fd = -1;
	} else {
		if (fsync(o->fd))
			e = -errno;
		if (!e && o->unnamed) {
			if (linkat(AT_FDCWD, o->proc_path, o->dirfd, o->tmp,
				   AT_SYMLINK_FOLLOW))
				e = -errno;
			else
				o->named = 1;
		}
		if (!e && renameat(o->dirfd, o->tmp, o->dirfd, o->base))
			e = -errno;
		if (!e) {
			o->named = 0;
			fsync(o->dirfd); /* the rename itself, durable */
		}
	}
	if (e)
		snprintf(err, errlen, "%s %s: %s; the file there is as it was", o->what,
			 o->path, strerror(-e));
	outfile_close(o);
	return e;
}

void mm_outfile_discard(struct mm_outfile *o)
{
	outfile_close(o);
}

void mm_outfile_unlink_now(const struct mm_outfile *o)
{
	if (o->named)
		unlinkat(o->dirfd, o->tmp, 0);
}
