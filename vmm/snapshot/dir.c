/* The snapshot directory: a temporary beside its target, renamed into place once whole; and read back. */
#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
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
 * removes temporaries whose process is gone. An existing NAME is refused:
 * a directory is not replaced by rename, and no snapshot is lost to a typo.
 */

static void split(const char *path, char *dir, char *base, size_t len)
{
	char a[MM_PATH_BYTES], b[MM_PATH_BYTES];

	snprintf(a, sizeof(a), "%s", path);
	snprintf(b, sizeof(b), "%s", path);
	snprintf(dir, len, "%s", dirname(a));
	snprintf(base, len, "%s", basename(b));
}

static void remove_tree(const char *tmp)
{
	char p[3 * MM_PATH_BYTES];

	if (snprintf(p, sizeof(p), "%s/" SNAP_STATE_FILE, tmp) < (int)sizeof(p))
		unlink(p);
	if (snprintf(p, sizeof(p), "%s/" SNAP_MEMORY_FILE, tmp) < (int)sizeof(p))
		unlink(p);
	rmdir(tmp);
}

/* Temporaries of SIGKILLed snapshots to the same name. */
static void remove_stale(const char *dir, const char *base)
{
	DIR *d = opendir(dir);
	size_t blen = strlen(base);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *end, p[2 * MM_PATH_BYTES];
		long pid;

		if (strncmp(e->d_name, base, blen) ||
		    strncmp(e->d_name + blen, ".minivmm-", 9))
			continue;
		pid = strtol(e->d_name + blen + 9, &end, 10);
		if (end == e->d_name + blen + 9 || strcmp(end, ".tmp") || pid <= 0 ||
		    !(kill((pid_t)pid, 0) && errno == ESRCH))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		remove_tree(p);
	}
	if (d)
		closedir(d);
}

int snap_dir_begin(struct snap_dir *d, const char *path, char *err, size_t errlen)
{
	char dir[MM_PATH_BYTES], base[MM_PATH_BYTES];
	struct stat st;
	int e;

	*d = (struct snap_dir){
		.parent_fd = -1, .tmp_fd = -1, .state_fd = -1, .mem_fd = -1
	};
	snprintf(d->path, sizeof(d->path), "%s", path);
	split(path, dir, base, sizeof(dir));
	if (!lstat(path, &st)) {
		snprintf(err, errlen,
			 "--snapshot %s: it exists; remove it, or name another", path);
		return -EEXIST;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--snapshot %s: no directory %s to write it in",
			 path, dir);
		return -ENOENT;
	}
	remove_stale(dir, base);
	if (snprintf(d->tmp, sizeof(d->tmp), "%s/%s.minivmm-%ld.tmp", dir, base,
		     (long)getpid()) >= (int)sizeof(d->tmp)) {
		snprintf(err, errlen, "--snapshot %s: the path is too long", path);
		d->tmp[0] = '\0';
		return -ENAMETOOLONG;
	}
	snprintf(d->name, sizeof(d->name), "%s", base);
	snprintf(d->tmp_name, sizeof(d->tmp_name), "%s.minivmm-%ld.tmp", base,
		 (long)getpid());
	d->parent_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->parent_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "--snapshot %s: cannot open %s: %s", path, dir,
			 strerror(-e));
		d->tmp[0] = '\0';
		return e;
	}
	if (mkdir(d->tmp, 0755)) {
		e = -errno;
		snprintf(err, errlen, "--snapshot %s: cannot create %s: %s", path, d->tmp,
			 strerror(-e));
		d->tmp[0] = '\0';
		return e;
	}
	d->tmp_fd = open(d->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->tmp_fd >= 0)
		d->state_fd = openat(d->tmp_fd, SNAP_STATE_FILE,
				     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (d->state_fd >= 0)
		d->mem_fd = openat(d->tmp_fd, SNAP_MEMORY_FILE,
				   O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (d->mem_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "--snapshot %s: cannot create its files in %s: %s",
			 path, d->tmp, strerror(-e));
		snap_dir_discard(d);
		return e;
	}
	return 0;
}

int snap_dir_commit(struct snap_dir *d, const struct snap_buf *state, char *err,
		    size_t errlen)
{
	int e = mm_write_all(d->state_fd, state->p, state->len);

	if (!e && (fsync(d->state_fd) || fsync(d->mem_fd) || fsync(d->tmp_fd)))
		e = -errno;
	/* Relative to the directory opened at the start: the main thread's filter allows no path. */
	if (!e && (renameat(d->parent_fd, d->tmp_name, d->parent_fd, d->name) ||
		   fsync(d->parent_fd)))
		e = -errno;
	if (e) {
		snprintf(err, errlen, "--snapshot %s: writing it: %s", d->path,
			 strerror(-e));
		snap_dir_discard(d);
		return e;
	}
	d->tmp[0] = '\0'; /* it is the snapshot now */
	snap_dir_discard(d);
	return 0;
}

void snap_dir_unlink_now(const struct snap_dir *d)
{
	if (!d->tmp[0] || d->tmp_fd < 0 || d->parent_fd < 0)
		return;
	unlinkat(d->tmp_fd, SNAP_STATE_FILE, 0);
	unlinkat(d->tmp_fd, SNAP_MEMORY_FILE, 0);
	unlinkat(d->parent_fd, d->tmp_name, AT_REMOVEDIR);
}

void snap_dir_discard(struct snap_dir *d)
{
	if (d->tmp[0] && d->tmp_fd >= 0 && d->parent_fd >= 0)
		snap_dir_unlink_now(d);
	else if (d->tmp[0])
		remove_tree(d->tmp);
	if (d->state_fd >= 0)
		close(d->state_fd);
	if (d->mem_fd >= 0)
		close(d->mem_fd);
	if (d->tmp_fd >= 0)
		close(d->tmp_fd);
	if (d->parent_fd >= 0)
		close(d->parent_fd);
	d->state_fd = d->mem_fd = d->tmp_fd = d->parent_fd = -1;
	d->tmp[0] = '\0';
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

int snapshot_load(const char *dir, struct snapshot *s, char *err, size_t errlen)
{
	char p[MM_PATH_BYTES + 16], why[512];
	struct stat st;
	int fd, e;
	const char *a;

	memset(s, 0, sizeof(*s));
	s->mem_fd = -1;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--restore %s: no such snapshot directory", dir);
		return -ENOENT;
	}
	snprintf(p, sizeof(p), "%s/" SNAP_STATE_FILE, dir);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen,
			 "--restore %s: the snapshot has no state file (%s: %s)", dir, p,
			 strerror(-e));
		return e == -ENOENT ? -ENOENT : e;
	}
	e = read_state(s, fd, err, errlen);
	close(fd);
	if (e) {
		if (!err[0])
			snprintf(err, errlen, "--restore %s: reading its state file: %s",
				 dir, strerror(-e));
		return e;
	}
	e = snap_parse(s->state, s->state_len, &s->v, why, sizeof(why));
	if (e) {
		snprintf(err, errlen, "--restore %s: %s", dir,
			 e == -ENOMEM ? "out of memory" : why);
		return e;
	}
	snprintf(p, sizeof(p), "%s/" SNAP_MEMORY_FILE, dir);
	s->mem_fd = open(p, O_RDONLY | O_CLOEXEC);
	if (s->mem_fd < 0 || fstat(s->mem_fd, &st)) {
		e = -errno;
		snprintf(err, errlen,
			 "--restore %s: the snapshot has no memory file (%s: %s)", dir, p,
			 strerror(-e));
		return e == -ENOENT ? -ENOENT : e;
	}
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
