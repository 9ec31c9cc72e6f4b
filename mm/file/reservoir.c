/* The reservoir's leases: exclusive ranges of a pre-zeroed pool, scrubbed after each lessee. */
#include "file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB(x)		((unsigned long long)((x) >> 20))
#define BYTES_PER_GIB_F (1024.0 * 1024.0 * 1024.0)
#define WAIT_POLL_NS	(2 * 1000 * 1000) /* between looks at a range being scrubbed */
#define WAIT_SAY_S	1.0		  /* say so once a wait is this long */
#define STATE_CHUNK	4096
#define INFO_LINE	512
#define RESERVOIR_MAGIC "# minivmm reservoir 1"

void mm_reservoir_path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* A directory of dir that is a reservoir ("reservoir" first), its name in buf: 1, or 0. */
static int reservoir_below(const char *dir, char *buf, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[MM_PATH_BYTES + 300];
	int found = 0;

	while (d && (e = readdir(d)) && found < 2) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/reservoir.info", dir, e->d_name);
		if (access(path, R_OK))
			continue;
		if (!found || !strcmp(e->d_name, "reservoir"))
			snprintf(buf, len, "%s", e->d_name);
		found = !strcmp(e->d_name, "reservoir") ? 2 : 1;
	}
	if (d)
		closedir(d);
	return found > 0;
}

int mm_reservoir_info_read(const char *dir, struct mm_reservoir_info *info, char *err,
			   size_t errlen)
{
	char path[MM_PATH_BYTES + 32], line[INFO_LINE];
	FILE *f;
	int magic = 0;

	*info = (struct mm_reservoir_info){ 0 };
	mm_reservoir_path(path, sizeof(path), dir, "reservoir.info");
	f = fopen(path, "re");
	if (!f) {
		int e = errno;
		char below[256];

		/* "--reservoir /run/minivmm": the parent of one (the default is .../reservoir). */
		if (reservoir_below(dir, below, sizeof(below))) {
			snprintf(err, errlen, "no reservoir at %s; did you mean %s/%s?",
				 dir, dir, below);
			return -e;
		}
		snprintf(
			err, errlen,
			"no reservoir at %s (%s): make one with scripts/reservoir create SIZE --dir %s",
			dir, strerror(e), dir);
		return -e;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		double d;

		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, RESERVOIR_MAGIC))
			magic = 1;
		else if (sscanf(line, "bytes=%llu", &v) == 1)
			info->bytes = v;
		else if (sscanf(line, "page_bytes=%llu", &v) == 1)
			info->page_bytes = v;
		else if (sscanf(line, "unit_bytes=%llu", &v) == 1)
			info->unit_bytes = v;
		else if (sscanf(line, "pages_added=%lld", &info->pages_added) == 1)
			;
		else if (sscanf(line, "create_s=%lf", &d) == 1)
			info->create_s = d;
		else if (!strncmp(line, "backing=", 8))
			snprintf(info->backing, sizeof(info->backing), "%.*s",
				 (int)sizeof(info->backing) - 1, line + 8);
		else if (!strncmp(line, "pool_sysfs=", 11))
			snprintf(info->pool_sysfs, sizeof(info->pool_sysfs), "%.*s",
				 (int)sizeof(info->pool_sysfs) - 1, line + 11);
	}
	fclose(f);
	if (!magic || !info->bytes || !info->unit_bytes || !info->page_bytes ||
	    info->bytes % info->unit_bytes || !mm_backend_find(info->backing)) {
		snprintf(err, errlen, "%s: not a minivmm reservoir description", path);
		return -EINVAL;
	}
	return 0;
}

int mm_reservoir_info_write(const char *dir, const struct mm_reservoir_info *info)
{
	char path[MM_PATH_BYTES + 32], tmp[MM_PATH_BYTES + 40];
	FILE *f;
	int bad;

	mm_reservoir_path(path, sizeof(path), dir, "reservoir.info");
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f,
		"%s\nbytes=%llu\npage_bytes=%llu\nunit_bytes=%llu\nbacking=%s\npool_sysfs=%s\npages_added=%lld\ncreate_s=%.6f\n",
		RESERVOIR_MAGIC, (unsigned long long)info->bytes,
		(unsigned long long)info->page_bytes,
		(unsigned long long)info->unit_bytes, info->backing, info->pool_sysfs,
		info->pages_added, info->create_s);
	bad = ferror(f);
	if (fclose(f) || bad)
		return -EIO;
	return rename(tmp, path) ? -errno : 0;
}

int mm_reservoir_scrub(int pool_fd, uint64_t off, uint64_t len, int zero_pass,
		       struct mm_scrub *st)
{
	double t0 = mm_now_s(), t1, t2;

	*st = (struct mm_scrub){ .bytes = len };
	if (fallocate(pool_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		      (off_t)len))
		return -errno;
	t1 = mm_now_s();
	if (fallocate(pool_fd, 0, (off_t)off, (off_t)len))
		return -errno;
	t2 = mm_now_s();
	st->punch_s = t1 - t0;
	st->alloc_s = t2 - t1;
	if (zero_pass) {
		/* tmpfs allocates unzeroed pages and clears each at its first fault: fault them now. */
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, pool_fd,
			       (off_t)off);
		int r = 0;

		if (p == MAP_FAILED)
			return -errno;
		if (madvise(p, len, MADV_POPULATE_WRITE))
			r = -errno;
		munmap(p, len);
		if (r)
			return r;
		st->zero_s = mm_now_s() - t2;
	}
	return 0;
}

/* No stdio: the keeper calls this in a child forked from a process that may have threads. */
void mm_reservoir_log(const char *dir, const char *who, uint64_t off,
		      const struct mm_scrub *st, int result)
{
	char path[MM_PATH_BYTES + 32], line[256];
	double s = mm_scrub_seconds(st);
	int fd, n;

	mm_reservoir_path(path, sizeof(path), dir, "scrub.log");
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%lld\t%s\t%d\t%llu\t%llu\t%.6f\t%.3f\t%s\n",
		     (long long)time(NULL), who, (int)getpid(), (unsigned long long)off,
		     (unsigned long long)st->bytes, s,
		     s > 0 ? (double)st->bytes / BYTES_PER_GIB_F / s : 0,
		     result ? strerror(-result) : "ok");
	if (n > 0 && write(fd, line, (size_t)n) < 0)
		n = 0; /* nothing to do about a full log */
	close(fd);
}

/* The state bytes of units [u, u + n): '0' clean, '1' may hold a lessee's data. */
static int state_io(int fd, uint64_t u, uint64_t n, char *buf, int write_it, char fill)
{
	while (n) {
		size_t k = n < STATE_CHUNK ? (size_t)n : STATE_CHUNK;
		ssize_t got;

		if (write_it) {
			memset(buf, fill, k);
			got = pwrite(fd, buf, k, (off_t)u);
		} else {
			got = pread(fd, buf, k, (off_t)u);
		}
		if (got != (ssize_t)k)
			return got < 0 ? -errno : -EIO;
		if (!write_it && memchr(buf, '1', k))
			return 1;
		u += k;
		n -= k;
	}
	return 0;
}

static int lock(int fd, int cmd, short type, uint64_t off, uint64_t len,
		struct flock *out)
{
	struct flock fl = { .l_type = type,
			    .l_whence = SEEK_SET,
			    .l_start = (off_t)off,
			    .l_len = (off_t)len };
	int r = fcntl(fd, cmd, &fl);

	if (out)
		*out = fl;
	return r ? -errno : 0;
}

/* Scrub the dirty units of a range whose lease the caller holds, then mark them clean. */
static int scrub_dirty(const char *dir, int pool_fd, int state_fd,
		       const struct mm_reservoir_info *info, uint64_t off, uint64_t len,
		       const char *who, struct mm_scrub *total)
{
	uint64_t unit = info->unit_bytes, u0 = off / unit, n = len / unit;
	char buf[STATE_CHUNK];

	*total = (struct mm_scrub){ 0 };
	for (uint64_t u = u0; u < u0 + n;) {
		uint64_t run = 0;
		struct mm_scrub st;
		int r;

		while (u + run < u0 + n && state_io(state_fd, u + run, 1, buf, 0, 0) == 1)
			run++;
		if (!run) {
			u++;
			continue;
		}
		r = mm_reservoir_scrub(pool_fd, u * unit, run * unit,
				       info->page_bytes == 4096, &st);
		mm_reservoir_log(dir, who, u * unit, &st, r);
		if (r)
			return r;
		r = state_io(state_fd, u, run, buf, 1, '0');
		if (r)
			return r;
		total->bytes += st.bytes;
		total->punch_s += st.punch_s;
		total->alloc_s += st.alloc_s;
		total->zero_s += st.zero_s;
		u += run;
	}
	return 0;
}

/*
 * The keeper, in its own session (the terminal's and timeout(1)'s signals
 * are for minivmm): it holds the lease through the inherited pool fd,
 * waits for EOF on rd (the lessee let go, or died), scrubs the range, marks
 * it clean, logs the rate and exits, which ends the lease.
 */
/* Close every fd but 0-2 and the n in keep[] (sorted), without stdio or malloc. */
static void close_all_but(const int *keep, int n)
{
	unsigned from = 3;

	for (int i = 0; i < n; i++) {
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

static void keeper(const char *dir, const struct mm_reservoir_info *info, int pool_fd,
		   int rd, int ready, uint64_t off, uint64_t len)
{
	char path[MM_PATH_BYTES + 32], buf[STATE_CHUNK], c;
	int keep[3] = { pool_fd, rd, ready };
	struct mm_scrub st;
	sigset_t none;
	pid_t me;
	int fd, r;

	setsid();
	prctl(PR_SET_NAME, "mvm-keeper");
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	fd = open("/dev/null", O_RDWR);
	for (int i = 0; fd >= 0 && i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	/*
	 * Nothing else of minivmm's stays open in here: not its KVM fds or
	 * results file, not the pipe's write end (or EOF would never come),
	 * and not the lessee's in-use lock (or the range would look in use
	 * after the lessee let go). The lessee waits for `ready` until then.
	 */
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];

				keep[i] = keep[j];
				keep[j] = t;
			}
	close_all_but(keep, 3);
	me = getpid();
	if (write(ready, &me, sizeof(me)) != sizeof(me))
		_exit(1);
	close(ready);
	if (chdir("/"))
		_exit(1);
	for (;;) {
		ssize_t n = read(rd, &c, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	r = mm_reservoir_scrub(pool_fd, off, len, info->page_bytes == 4096, &st);
	mm_reservoir_log(dir, "release", off, &st, r);
	if (r)
		_exit(1); /* left marked dirty: the next lessee scrubs it */
	mm_reservoir_path(path, sizeof(path), dir, "state");
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 ||
	    state_io(fd, off / info->unit_bytes, len / info->unit_bytes, buf, 1, '0'))
		_exit(1);
	_exit(0);
}

/*
 * Fork the keeper twice removed, so that init reaps it, not a minivmm that
 * never waits for it: the middle child forks it and exits. The lessee waits
 * until the keeper holds nothing but its own fds: then it sends its pid.
 * The keeper's pid, or -errno.
 */
static pid_t spawn_keeper(const char *dir, const struct mm_reservoir_info *info,
			  int pool_fd, int rd, uint64_t off, uint64_t len)
{
	int said[2], status;
	pid_t mid, k = -1;

	if (pipe2(said, O_CLOEXEC))
		return -errno;
	fflush(NULL); /* the children must not write our buffered output again */
	mid = fork();
	if (mid == 0) {
		k = fork();
		if (k == 0)
			keeper(dir, info, pool_fd, rd, said[1], off, len);
		_exit(k > 0 ? 0 : 1);
	}
	close(said[1]);
	if (mid < 0)
		k = -errno;
	/* EOF instead: no keeper, or it died before it was ready (the range stays dirty). */
	else if (read(said[0], &k, sizeof(k)) != sizeof(k) || k <= 0)
		k = -ECHILD;
	close(said[0]);
	if (mid > 0)
		waitpid(mid, &status, 0);
	return k;
}

/* A free range of size bytes: locked in pool_fd. 1 found, 0 none now, -errno. */
static int find_range(int pool_fd, int state_fd, const struct mm_reservoir_info *info,
		      uint64_t size, uint64_t *off, unsigned *running,
		      unsigned *scrubbing)
{
	*running = *scrubbing = 0;
	for (uint64_t o = 0; o + size <= info->bytes;) {
		struct flock g, u;
		uint64_t end;
		int r = lock(pool_fd, F_OFD_SETLK, F_WRLCK, o, size, NULL);

		if (!r) {
			*off = o;
			return 1;
		}
		if (r != -EAGAIN && r != -EACCES)
			return r;
		r = lock(pool_fd, F_OFD_GETLK, F_WRLCK, o, size, &g);
		if (r)
			return r;
		if (g.l_type == F_UNLCK)
			continue; /* let go in between: try again */
		/* The lessee's in-use lock: a VM runs there; without it, a keeper scrubs. */
		r = lock(state_fd, F_OFD_GETLK, F_WRLCK, (uint64_t)g.l_start,
			 g.l_len ? (uint64_t)g.l_len : info->bytes, &u);
		if (r)
			return r;
		if (u.l_type == F_UNLCK)
			++*scrubbing;
		else
			++*running;
		end = g.l_len ? (uint64_t)(g.l_start + g.l_len) : info->bytes;
		o = (end + info->unit_bytes - 1) / info->unit_bytes * info->unit_bytes;
	}
	return 0;
}

int mm_reservoir_lease(const char *dir, uint64_t size, uint64_t *off,
		       struct mm_lease_info *li, struct mm_reservoir_info *info,
		       char *err, size_t errlen)
{
	char path[MM_PATH_BYTES + 32], buf[STATE_CHUNK], abs_dir[MM_PATH_BYTES];
	int pool_fd = -1, state_fd = -1, pipefd[2] = { -1, -1 }, said = 0, r;
	double t0 = mm_now_s();
	unsigned running, scrubbing;
	struct mm_scrub st;
	pid_t pid;

	/* The keeper works from "/": every path it is given is absolute. */
	if (realpath(dir, abs_dir))
		dir = abs_dir;
	r = mm_reservoir_info_read(dir, info, err, errlen);
	if (r)
		return r;
	snprintf(li->dir, sizeof(li->dir), "%s", dir);
	if (size > info->bytes) {
		snprintf(
			err, errlen,
			"--reservoir %s: guest RAM of %llu MiB does not fit: the reservoir has %llu MiB; use --mem %lluM or less, or make a larger one: scripts/reservoir destroy --dir %s && scripts/reservoir create %lluM --page %s --dir %s",
			dir, MIB(size), MIB(info->bytes), MIB(info->bytes), dir,
			MIB(size),
			info->page_bytes >= (1ULL << 30)   ? "1g"
			: info->page_bytes >= (2ULL << 20) ? "2m"
							   : "4k",
			dir);
		return -EINVAL;
	}
	if (size % info->unit_bytes) {
		snprintf(
			err, errlen,
			"--reservoir %s: guest RAM of %llu MiB is not a whole number of the reservoir's %llu MiB units; use --mem %lluM or --mem %lluM",
			dir, MIB(size), MIB(info->unit_bytes),
			MIB(size / info->unit_bytes * info->unit_bytes),
			MIB((size / info->unit_bytes + 1) * info->unit_bytes));
		return -EINVAL;
	}
	mm_reservoir_path(path, sizeof(path), dir, "pool/mem");
	pool_fd = open(path, O_RDWR | O_CLOEXEC);
	if (pool_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "--reservoir %s: opening %s: %s", dir, path,
			 strerror(-r));
		goto fail;
	}
	mm_reservoir_path(path, sizeof(path), dir, "state");
	state_fd = open(path, O_RDWR | O_CLOEXEC);
	if (state_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "--reservoir %s: opening %s: %s", dir, path,
			 strerror(-r));
		goto fail;
	}
	for (;;) {
		r = find_range(pool_fd, state_fd, info, size, off, &running, &scrubbing);
		if (r < 0) {
			snprintf(err, errlen, "--reservoir %s: locking a range: %s", dir,
				 strerror(-r));
			goto fail;
		}
		if (r == 1) {
			/* Ours: nobody else may hold its in-use lock (they let go first). */
			r = lock(state_fd, F_OFD_SETLK, F_WRLCK, *off, size, NULL);
			if (!r)
				break;
			lock(pool_fd, F_OFD_SETLK, F_UNLCK, *off, size, NULL);
		} else if (!scrubbing || mm_now_s() - t0 > MM_RESERVOIR_WAIT_S) {
			snprintf(
				err, errlen,
				"--reservoir %s: no free %llu MiB in its %llu MiB: %u range%s in use by running VMs, %u being scrubbed%s; see scripts/reservoir status --dir %s",
				dir, MIB(size), MIB(info->bytes), running,
				running == 1 ? "" : "s", scrubbing,
				scrubbing ? " (waited for them)" : "", dir);
			r = -EBUSY;
			goto fail;
		} else if (mm_now_s() - t0 > WAIT_SAY_S && !said++) {
			fprintf(stderr,
				"minivmm: --reservoir %s: waiting for the scrub of an earlier lease\n",
				dir);
		}
		nanosleep(&(struct timespec){ 0, WAIT_POLL_NS }, NULL);
	}
	li->waited_s = mm_now_s() - t0;
	/* An earlier lessee or keeper died before its scrub: scrub it now, before anyone maps it. */
	r = scrub_dirty(dir, pool_fd, state_fd, info, *off, size, "lease", &st);
	if (r) {
		snprintf(
			err, errlen,
			"--reservoir %s: scrubbing what an earlier lease left at %llu MiB: %s",
			dir, MIB(*off), strerror(-r));
		goto fail;
	}
	li->scrubbed_bytes = st.bytes;
	li->scrub_s = mm_scrub_seconds(&st);
	r = state_io(state_fd, *off / info->unit_bytes, size / info->unit_bytes, buf, 1,
		     '1');
	if (r || pipe2(pipefd, O_CLOEXEC)) {
		r = r ?: -errno;
		snprintf(err, errlen, "--reservoir %s: marking the lease: %s", dir,
			 strerror(-r));
		goto fail;
	}
	pid = spawn_keeper(dir, info, pool_fd, pipefd[0], *off, size);
	if (pid < 0) {
		r = (int)pid;
		snprintf(err, errlen, "--reservoir %s: starting the lease's keeper: %s",
			 dir, strerror(-r));
		goto fail; /* marked dirty: the next lessee scrubs it */
	}
	close(pipefd[0]);
	li->leased = 1;
	li->keeper_pid = (int)pid;
	li->keeper_fd = pipefd[1];
	li->inuse_fd = state_fd;
	return pool_fd;
fail:
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	if (state_fd >= 0)
		close(state_fd);
	if (pool_fd >= 0)
		close(pool_fd);
	return r;
}

void mm_lease_end(struct mm_lease_info *li)
{
	/* In-use lock first: from now on a waiting lessee knows the keeper scrubs. */
	if (li->inuse_fd >= 0)
		close(li->inuse_fd);
	if (li->keeper_fd >= 0)
		close(li->keeper_fd);
	li->inuse_fd = li->keeper_fd = -1;
}
