/* Output files written whole or not at all: a temporary beside the target, renamed over it at the end. */
#include "app.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A results file is replaced only once its successor is complete: what a
 * run writes goes to a temporary in the target's directory (so the rename
 * is atomic), made durable with fsync and renamed over the target at the
 * end. A run killed on the way (SIGKILL, the OOM killer, a node's end)
 * leaves the previous file as it was.
 *
 * The temporary is an unnamed O_TMPFILE where the file system has them
 * (nothing is left behind whatever kills the process); it gets its name,
 * TARGET.minivmm-PID.tmp, only at the end (linkat through /proc/self/fd,
 * then renameat: linkat does not replace). Elsewhere it is created under
 * that name at once. Every ending the process sees removes a named one
 * (a failed write, the second SIGINT's immediate exit), and a later run
 * with the same target removes those whose process is gone. Targets that
 * are not regular files (/dev/null, a FIFO, a terminal) are written in
 * place, as before, and so is "-": stdout.
 */

static struct outputs *live; /* for the signal handler: what to remove */

static void tmp_name(const struct output *o, char *buf, size_t len, long pid)
{
	snprintf(buf, len, "%s.minivmm-%ld.tmp", o->base, pid);
}

/* Remove TARGET.minivmm-PID.tmp files whose process is gone (SIGKILLed runs). */
static void remove_stale(const struct output *o)
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

/* The target's directory and name, through symlinks: the rename replaces the file, not a link to it. */
static int locate(struct output *o, struct stat *st, int *exists)
{
	char *copy, *real = NULL;
	const char *dir;
	int e = 0;

	if (o->path[0] && o->path[strlen(o->path) - 1] == '/')
		return -EISDIR;
	*exists = stat(o->path, st) == 0;
	if (*exists)
		real = realpath(o->path, NULL);
	copy = strdup(real ? real : o->path);
	if (!copy) {
		free(real);
		return -ENOMEM;
	}
	if (snprintf(o->base, sizeof(o->base), "%s", basename(copy)) >=
	    (int)sizeof(o->base))
		e = -ENAMETOOLONG;
	if (!e) {
		strcpy(copy, real ? real : o->path);
		dir = dirname(copy);
		o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (o->dirfd < 0)
			e = -errno;
	}
	free(copy);
	free(real);
	return e;
}

/* The temporary: unnamed where the file system can, else named at once. 0 or -errno. */
static int create_tmp(struct output *o)
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

static void output_close(struct output *o)
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

int output_open(struct output *o, const char *opt, const char *path)
{
	struct stat st;
	int exists, e, probed = 0;

	*o = (struct output){ .opt = opt, .path = path, .fd = -1, .dirfd = -1 };
	e = locate(o, &st, &exists);
	if (!e && exists && S_ISDIR(st.st_mode))
		e = -EISDIR;
	if (!e && exists && !S_ISREG(st.st_mode)) {
		/* A device, a FIFO, a socket: written in place (a device keeps the probe). */
		close(o->dirfd);
		o->dirfd = -1;
		o->in_place = 1;
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		e = o->fd < 0 ? -errno : 0;
		if (!e && S_ISCHR(st.st_mode)) {
			probed = 1;
			e = probe(o->fd, 0);
		}
	} else if (!e) {
		remove_stale(o);
		tmp_name(o, o->tmp, sizeof(o->tmp), (long)getpid());
		e = create_tmp(o);
		if (!e && exists)
			fchmod(o->fd, st.st_mode & 07777); /* the file keeps its mode */
		if (!e) {
			probed = 1;
			e = probe(o->fd, 1);
		}
	}
	if (e) {
		fprintf(stderr, "minivmm: %s %s: %s%s\n", opt, path,
			probed ? "cannot write: " : "", strerror(-e));
		output_close(o);
	}
	return e;
}

int output_commit(struct output *o)
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
		fprintf(stderr, "minivmm: %s %s: %s; the file there is as it was\n",
			o->opt, o->path, strerror(-e));
	output_close(o);
	return e;
}

void output_discard(struct output *o)
{
	output_close(o);
}

/* On the way out at once (the second SIGINT): async-signal-safe, unlinkat only. */
static void discard_now(void)
{
	for (int i = 0; live && i < OUTPUT_COUNT; i++)
		if (live->file[i].named)
			unlinkat(live->file[i].dirfd, live->file[i].tmp, 0);
}

static int is_stdout(const char *path)
{
	return path && !strcmp(path, "-");
}

/*
 * "-o -" (or "--trace -"): the JSON is what stdout carries, for "| jq";
 * everything else minivmm prints there (tables, the guest's console) goes
 * to stderr instead. 0 or -errno, said.
 */
static int open_stdout(struct output *o, const char *opt)
{
	*o = (struct output){ .opt = opt, .path = "-", .in_place = 1, .dirfd = -1 };
	fflush(stdout);
	o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (o->fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "minivmm: %s -: stdout: %s\n", opt, strerror(errno));
		output_close(o);
		return -1;
	}
	return 0;
}

int outputs_open(const struct config *cfg, struct outputs *o)
{
	const char *paths[OUTPUT_COUNT] = { cfg->results_path, cfg->trace_path };
	const char *opts[OUTPUT_COUNT] = { "--results", "--trace" };

	*o = (struct outputs){ 0 };
	if (is_stdout(paths[OUTPUT_RESULTS]) && is_stdout(paths[OUTPUT_TRACE])) {
		fprintf(stderr,
			"minivmm: -o - and --trace -: two JSON documents on stdout; give one of them a file\n");
		return -1;
	}
	for (int i = 0; i < OUTPUT_COUNT; i++) {
		o->file[i] = (struct output){ .fd = -1, .dirfd = -1 };
		if (!paths[i])
			continue;
		if (is_stdout(paths[i]) ? open_stdout(&o->file[i], opts[i])
					: output_open(&o->file[i], opts[i], paths[i])) {
			outputs_discard(o);
			return -1;
		}
		o->fds[o->n++] = o->file[i].fd;
		if (o->file[i].dirfd >= 0)
			o->dirfds[o->ndirs++] = o->file[i].dirfd;
	}
	live = o;
	vm_set_exit_hook(discard_now);
	return 0;
}

void outputs_discard(struct outputs *o)
{
	for (int i = 0; i < OUTPUT_COUNT; i++)
		output_discard(&o->file[i]);
}
