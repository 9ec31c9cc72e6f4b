/* The snapshot directory: a temporary beside its target, renamed into place once whole; and read back. */
#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * As mm/outfile.c's files: what is written goes to a temporary directory
 * beside the target (NAME.minivmm-PID.tmp), is made durable (fsync of both
 * files and of the directory) and renamed to NAME at the end. A process
 * killed on the way leaves no NAME; a later snapshot to the same NAME
 * removes temporaries whose process is gone. An existing NAME is refused,
 * whatever it is (an empty directory too), when the run starts and again
 * at the rename: no snapshot or directory is lost to a typo. Everything
 * below the directory NAME is in is reached through its descriptor and
 * never through a link: a link planted where a temporary would be (a
 * shared /tmp) is not followed.
 */

static void split(const char *path, char *dir, char *base, size_t len)
{
	char a[MM_PATH_BYTES], b[MM_PATH_BYTES];

	snprintf(a, sizeof(a), "%s", path);
	snprintf(b, sizeof(b), "%s", path);
	snprintf(dir, len, "%s", dirname(a));
	snprintf(base, len, "%s", basename(b));
}

/* Remove the temporary name (in dir_fd) and its two files, when it is a directory of ours. */
static void remove_tree(int dir_fd, const char *name)
{
	struct stat st, tst;
	int t;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid())
		return; /* a link, a file or someone else's: not a temporary of ours */
	t = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t < 0)
		return;
	if (!fstat(t, &tst) && tst.st_dev == st.st_dev && tst.st_ino == st.st_ino) {
		unlinkat(t, SNAP_STATE_FILE, 0);
		unlinkat(t, SNAP_MEMORY_FILE, 0);
		/* Fails on a link put there since, or on what is not empty. */
		unlinkat(dir_fd, name, AT_REMOVEDIR);
	}
	close(t);
}

/* Temporaries of SIGKILLed snapshots to the same name. */
static void remove_stale(int dir_fd, const char *base)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	size_t blen = strlen(base);
	struct dirent *e;

	if (!d && fd >= 0)
		close(fd);
	while (d && (e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, base, blen) ||
		    strncmp(e->d_name + blen, ".minivmm-", 9))
			continue;
		pid = strtol(e->d_name + blen + 9, &end, 10);
		if (end == e->d_name + blen + 9 || strcmp(end, ".tmp") || pid <= 0 ||
		    !(kill((pid_t)pid, 0) && errno == ESRCH))
			continue;
		remove_tree(dir_fd, e->d_name);
	}
	if (d)
		closedir(d);
}

static int begin_fail(struct snap_dir *d, int e, char *err, size_t errlen,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int begin_fail(struct snap_dir *d, int e, char *err, size_t errlen,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	snap_dir_discard(d);
	return e;
}

int snap_dir_begin(struct snap_dir *d, const char *path, char *err, size_t errlen)
{
	char dir[MM_PATH_BYTES];
	struct stat st;
	int e;

	*d = (struct snap_dir){
		.dir_fd = -1, .tmp_fd = -1, .state_fd = -1, .mem_fd = -1, .pagemap_fd = -1
	};
	snprintf(d->path, sizeof(d->path), "%s", path);
	split(path, dir, d->name, sizeof(dir));
	d->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->dir_fd < 0)
		return begin_fail(d, -ENOENT, err, errlen,
				  "--snapshot %s: no directory %s to write it in", path,
				  dir);
	if (!fstatat(d->dir_fd, d->name, &st, AT_SYMLINK_NOFOLLOW) ||
	    !strcmp(d->name, "/") || !strcmp(d->name, ".") || !strcmp(d->name, ".."))
		return begin_fail(d, -EEXIST, err, errlen,
				  "--snapshot %s: it exists; remove it, or name another",
				  path);
	remove_stale(d->dir_fd, d->name);
	if (snprintf(d->tmp_name, sizeof(d->tmp_name), "%s.minivmm-%ld.tmp", d->name,
		     (long)getpid()) >= (int)sizeof(d->tmp_name) ||
	    snprintf(d->tmp, sizeof(d->tmp), "%s/%s", dir, d->tmp_name) >=
		    (int)sizeof(d->tmp))
		return begin_fail(d, -ENAMETOOLONG, err, errlen,
				  "--snapshot %s: the path is too long", path);
	if (mkdirat(d->dir_fd, d->tmp_name, 0755)) {
		e = -errno;
		return begin_fail(d, e, err, errlen,
				  "--snapshot %s: cannot create %s: %s", path, d->tmp,
				  strerror(-e));
	}
	d->tmp_fd = openat(d->dir_fd, d->tmp_name,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->tmp_fd >= 0)
		d->state_fd = openat(d->tmp_fd, SNAP_STATE_FILE,
				     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				     0644);
	if (d->state_fd >= 0)
		d->mem_fd = openat(d->tmp_fd, SNAP_MEMORY_FILE,
				   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				   0644);
	if (d->mem_fd < 0) {
		e = -errno;
		if (d->tmp_fd < 0) /* made, not opened: snap_dir_discard would leave it */
			unlinkat(d->dir_fd, d->tmp_name, AT_REMOVEDIR);
		return begin_fail(d, e, err, errlen,
				  "--snapshot %s: cannot create its files in %s: %s",
				  path, d->tmp, strerror(-e));
	}
	/* Now, before the main thread's filter: the save reads it (-1: the pages' contents decide). */
	d->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	return 0;
}

/*
 * The temporary becomes NAME, and nothing at NAME is replaced. Without
 * RENAME_NOREPLACE (9p, NFS: EINVAL) NAME is claimed by mkdir, which
 * fails on anything there, and the temporary renamed over that empty
 * directory of ours (a crash between the two leaves an empty NAME).
 */
static int put_in_place(struct snap_dir *d)
{
	int e;

	if (!renameat2(d->dir_fd, d->tmp_name, d->dir_fd, d->name, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (mkdirat(d->dir_fd, d->name, 0700))
		return -errno;
	if (!renameat(d->dir_fd, d->tmp_name, d->dir_fd, d->name))
		return 0;
	e = -errno;
	unlinkat(d->dir_fd, d->name, AT_REMOVEDIR);
	return e;
}

int snap_dir_commit(struct snap_dir *d, const struct snap_buf *state, char *err,
		    size_t errlen)
{
	int e = mm_write_all(d->state_fd, state->p, state->len);

	if (!e && (fsync(d->state_fd) || fsync(d->mem_fd) || fsync(d->tmp_fd)))
		e = -errno;
	e = e ?: put_in_place(d);
	if (e == -EEXIST || e == -ENOTEMPTY) {
		snprintf(
			err, errlen,
			"--snapshot %s: something was put there while the guest ran; it is not replaced, and this snapshot was not kept",
			d->path);
		snap_dir_discard(d);
		return -EEXIST;
	}
	if (e) {
		snprintf(err, errlen, "--snapshot %s: writing it: %s", d->path,
			 strerror(-e));
		snap_dir_discard(d);
		return e;
	}
	d->tmp_name[0] = '\0'; /* it is the snapshot now */
	snap_dir_discard(d);
	return 0;
}

void snap_dir_unlink_now(const struct snap_dir *d)
{
	if (!d->tmp_name[0] || d->tmp_fd < 0 || d->dir_fd < 0)
		return; /* nothing begun, or committed: the snapshot is the user's */
	unlinkat(d->tmp_fd, SNAP_STATE_FILE, 0);
	unlinkat(d->tmp_fd, SNAP_MEMORY_FILE, 0);
	unlinkat(d->dir_fd, d->tmp_name, AT_REMOVEDIR);
}

void snap_dir_discard(struct snap_dir *d)
{
	snap_dir_unlink_now(d);
	if (d->state_fd >= 0)
		close(d->state_fd);
	if (d->mem_fd >= 0)
		close(d->mem_fd);
	if (d->tmp_fd >= 0)
		close(d->tmp_fd);
	if (d->dir_fd >= 0)
		close(d->dir_fd);
	if (d->pagemap_fd >= 0)
		close(d->pagemap_fd);
	d->state_fd = d->mem_fd = d->tmp_fd = d->dir_fd = d->pagemap_fd = -1;
	d->tmp_name[0] = '\0';
}

/* ---- reading it back -------------------------------------------------------- */

#define STATE_MAX_BYTES (64ULL << 20)

static int read_state(struct snapshot *s, int fd, char *err, size_t errlen)
{
	struct stat st;
	size_t off = 0;

	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size > STATE_MAX_BYTES) {
		snprintf(err, errlen,
			 "--restore %s: its state file is %lld bytes (at most %llu)",
			 s->dir, (long long)st.st_size, STATE_MAX_BYTES);
		return -EINVAL;
	}
	s->state_len = (size_t)st.st_size;
	s->state = malloc(s->state_len ? s->state_len : 1);
	if (!s->state)
		return -ENOMEM;
	while (off < s->state_len) {
		ssize_t n = read(fd, s->state + off, s->state_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += (size_t)n;
	}
	return 0;
}

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISLNK(m)  ? "a symbolic link"
			     : "not a regular file";
}

/*
 * One of the snapshot's files, by name in its directory: a regular file,
 * never a link followed out of the directory, never a FIFO or device
 * waited on (its type is looked at before the open, which does not block,
 * and checked again on the descriptor). The descriptor, or -errno with err.
 */
static int open_member(int dfd, const char *dir, const char *name, char *err,
		       size_t errlen)
{
	struct stat st;
	int fd = -1, e;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		e = -errno;
		snprintf(err, errlen,
			 "--restore %s: the snapshot has no %s file (%s/%s: %s)", dir,
			 name, dir, name, strerror(-e));
		return e == -ENOENT ? -ENOENT : e;
	}
	if (S_ISREG(st.st_mode)) {
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno != ELOOP) {
			e = -errno;
			snprintf(err, errlen, "--restore %s: opening its %s file: %s",
				 dir, name, strerror(-e));
			return e;
		}
		if (fd < 0)
			st.st_mode = S_IFLNK; /* it became one since */
		else if (fstat(fd, &st) || fcntl(fd, F_SETFL, 0)) {
			e = -errno;
			close(fd);
			snprintf(err, errlen, "--restore %s: its %s file: %s", dir, name,
				 strerror(-e));
			return e;
		}
	}
	if (!S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		snprintf(
			err, errlen,
			"--restore %s: its %s file is %s; a snapshot's files are regular files in its directory (minivmm follows no link out of it)",
			dir, name, kind_of(st.st_mode));
		return -EINVAL;
	}
	return fd;
}

int snapshot_load(const char *dir, struct snapshot *s, char *err, size_t errlen)
{
	char why[512];
	struct stat st;
	int dfd, fd, e;
	const char *a;

	memset(s, 0, sizeof(*s));
	s->mem_fd = -1;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		e = -errno;
		if (e == -ELOOP ||
		    (e == -ENOTDIR && !lstat(dir, &st) && S_ISLNK(st.st_mode)))
			snprintf(
				err, errlen,
				"--restore %s: a symbolic link; name the snapshot directory itself",
				dir);
		else if (e == -ENOENT || e == -ENOTDIR)
			snprintf(err, errlen, "--restore %s: no such snapshot directory",
				 dir);
		else
			snprintf(err, errlen, "--restore %s: %s", dir, strerror(-e));
		return e == -ELOOP || e == -ENOTDIR ? -EINVAL : e;
	}
	fd = open_member(dfd, dir, SNAP_STATE_FILE, err, errlen);
	if (fd < 0) {
		close(dfd);
		return fd;
	}
	e = read_state(s, fd, err, errlen);
	close(fd);
	if (e) {
		close(dfd);
		if (!err[0])
			snprintf(err, errlen, "--restore %s: reading its state file: %s",
				 dir, strerror(-e));
		return e;
	}
	e = snap_parse(s->state, s->state_len, &s->v, why, sizeof(why));
	if (e) {
		close(dfd);
		snprintf(err, errlen, "--restore %s: %s", dir,
			 e == -ENOMEM ? "out of memory" : why);
		return e;
	}
	s->mem_fd = open_member(dfd, dir, SNAP_MEMORY_FILE, err, errlen);
	close(dfd);
	if (s->mem_fd < 0) {
		e = s->mem_fd;
		s->mem_fd = -1;
		return e;
	}
	if (fstat(s->mem_fd, &st))
		return -errno;
	s->mem_bytes = (uint64_t)st.st_size;
	if (s->mem_bytes != s->v.hdr->ram_bytes) {
		snprintf(
			err, errlen,
			"--restore %s: the memory file is %llu bytes, the guest's RAM %llu: %s",
			dir, (unsigned long long)s->mem_bytes,
			(unsigned long long)s->v.hdr->ram_bytes,
			s->mem_bytes < s->v.hdr->ram_bytes ? "truncated"
							   : "not this snapshot's");
		return -EINVAL;
	}
	a = s->v.cfg->args;
	for (uint32_t i = 0; i < s->v.cfg->guest_argc; i++) {
		s->argv[s->argc++] = a;
		a += strlen(a) + 1;
	}
	s->argv[s->argc] = NULL;
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	snap_view_free(&s->v);
	free(s->state);
	s->state = NULL;
	if (s->mem_fd >= 0)
		close(s->mem_fd);
	s->mem_fd = -1;
}
