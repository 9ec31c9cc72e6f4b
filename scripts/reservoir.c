/*
 * scripts/reservoir: prepare, inspect, scrub and remove a pool of pre-zeroed
 * memory that minivmm --reservoir leases guest RAM from (mm/file/reservoir.c).
 *   reservoir create SIZE [--page 4k|2m|1g] [--dir DIR]
 *   reservoir status  [--dir DIR]
 *   reservoir scrub   [--all] [--dir DIR]
 *   reservoir destroy [--wait SEC] [--dir DIR]
 * Exit status: 0 done, 2 usage, 3 the host cannot (not root, pages short,
 * in use).
 */
#include "file.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE	2
#define EXIT_HOST	3
#define SZ_2M		(2ULL << 20)
#define MIB(x)		((unsigned long long)((x) >> 20))
#define GIB_F		(1024.0 * 1024.0 * 1024.0)
#define STATE_SOURCE	"minivmm-reservoir"
#define POOL_SOURCE	"minivmm-reservoir-pool"
#define STATE_MIN_BYTES (1ULL << 20)
#define POLL_NS		(50 * 1000 * 1000)
#define DEFAULT_WAIT_S	120.0

static const char *prog = "reservoir", *invoked = "reservoir"; /* its name, and argv[0] */
static char
	rest_opts[512]; /* create's options but SIZE, for the command lines it suggests */

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double gib_s(uint64_t bytes, double s)
{
	return s > 0 ? (double)bytes / GIB_F / s : 0;
}

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "%s: %s\n", prog, why);
	fprintf(stderr,
		"usage: %s create SIZE [--page 4k|2m|1g] [--dir DIR]\n"
		"       %s status [--dir DIR]\n"
		"       %s scrub [--all] [--dir DIR]\n"
		"       %s destroy [--wait SEC] [--dir DIR]\n"
		"DIR defaults to %s; SIZE takes K/M/G/T; pages default to 2m.\n",
		prog, prog, prog, prog, MM_RESERVOIR_DIR);
	return EXIT_USAGE;
}

static int host_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int host_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_HOST;
}

static long long read_ll(const char *dir, const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return mm_read_count(path);
}

static int write_ll(const char *dir, const char *file, long long v)
{
	char path[256];
	FILE *f;
	int bad;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "%lld\n", v);
	bad = ferror(f);
	return fclose(f) || bad ? -EIO : 0;
}

/* Give back the pages create added: nr_hugepages as it was, whatever others did since. */
static void restore_pool(const struct mm_reservoir_info *info)
{
	long long nr, target, got;

	if (!info->pool_sysfs[0] || info->pages_added <= 0)
		return;
	nr = read_ll(info->pool_sysfs, "nr_hugepages");
	target = nr - info->pages_added > 0 ? nr - info->pages_added : 0;
	if (nr < 0 || write_ll(info->pool_sysfs, "nr_hugepages", target)) {
		fprintf(stderr,
			"%s: could not give back %lld pages: write %lld to %s/nr_hugepages\n",
			prog, info->pages_added, target, info->pool_sysfs);
		return;
	}
	got = read_ll(info->pool_sysfs, "nr_hugepages");
	printf("hugetlb pool %s: nr_hugepages %lld -> %lld (gave back the %lld pages create added%s)\n",
	       info->pool_sysfs, nr, got, info->pages_added,
	       got != target ? "; some are still in use" : "");
}

/* Enough free huge pages for need: grow the pool if not. 0 or an exit status. */
static int grow_pool(const struct mm_backend *b, uint64_t need, long long *added)
{
	const char *d = b->hugetlb_sysfs;
	long long nr = read_ll(d, "nr_hugepages"), fr = read_ll(d, "free_hugepages"),
		  resv = read_ll(d, "resv_hugepages"), avail, want, got;

	*added = 0;
	if (nr < 0 || fr < 0 || resv < 0)
		return host_error("%s: no hugetlb pool of %llu MiB pages here", d,
				  MIB(b->page_bytes));
	avail = fr > resv ? fr - resv : 0;
	if (avail >= (long long)need) {
		printf("hugetlb pool %s: %lld of its %lld pages free, %llu needed: enough\n",
		       d, avail, nr, (unsigned long long)need);
		return 0;
	}
	want = nr + (long long)need - avail;
	if (write_ll(d, "nr_hugepages", want))
		return host_error("writing %lld to %s/nr_hugepages: %s", want, d,
				  strerror(errno));
	got = read_ll(d, "nr_hugepages");
	if (got < want) {
		write_ll(d, "nr_hugepages", nr);
		return host_error(
			"asked the kernel for %lld more %llu MiB pages, it granted %lld (too little free or too fragmented memory); nr_hugepages is back at %lld: try a smaller SIZE or --page 4k",
			want - nr, MIB(b->page_bytes), got - nr, nr);
	}
	*added = got - nr;
	printf("hugetlb pool %s: nr_hugepages %lld -> %lld (%lld were free, %llu needed)\n",
	       d, nr, got, avail, (unsigned long long)need);
	return 0;
}

static int is_mountpoint(const char *dir)
{
	char parent[MM_PATH_BYTES + 4];
	struct stat a, b;

	snprintf(parent, sizeof(parent), "%s/..", dir);
	return stat(dir, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

static int mkdir_p(const char *dir)
{
	char buf[MM_PATH_BYTES];

	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	return mkdir(buf, 0755) && errno != EEXIST ? -errno : 0;
}

static int write_state(const char *dir, uint64_t units)
{
	char path[MM_PATH_BYTES + 32], buf[4096];
	int fd, r = 0;

	mm_reservoir_path(path, sizeof(path), dir, "state");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	memset(buf, '0', sizeof(buf));
	for (uint64_t at = 0; at < units && !r;) {
		size_t k = units - at < sizeof(buf) ? (size_t)(units - at) : sizeof(buf);

		r = write(fd, buf, k) == (ssize_t)k ? 0 : -EIO;
		at += k;
	}
	close(fd);
	return r;
}

static int cmd_create(const char *dir, uint64_t bytes, const struct mm_backend *b)
{
	struct mm_reservoir_info info, probe;
	char pool[MM_PATH_BYTES + 32], mem[MM_PATH_BYTES + 32], opts[256], err[512];
	uint64_t units;
	int mounted_state = 0, mounted_pool = 0, fd = -1, status = EXIT_HOST, r;
	struct mm_scrub st;

	info = (struct mm_reservoir_info){ .bytes = bytes,
					   .page_bytes = b->page_bytes,
					   .unit_bytes = b->page_bytes > SZ_2M
								 ? b->page_bytes
								 : SZ_2M };
	snprintf(info.backing, sizeof(info.backing), "%s", b->name);
	if (bytes % info.unit_bytes) {
		unsigned long long below = MIB(bytes / info.unit_bytes * info.unit_bytes),
				   above = below + MIB(info.unit_bytes);
		char or_above[48] = "";

		if (below)
			snprintf(or_above, sizeof(or_above), " (or %lluM)", above);
		fprintf(stderr,
			"%s: SIZE must be a multiple of %llu MiB for %s pages; write: %s create %lluM%s%s\n",
			prog, MIB(info.unit_bytes), b->name, invoked,
			below ? below : above, rest_opts, or_above);
		rmdir(dir); /* main made it; empty, it goes again */
		return EXIT_USAGE;
	}
	units = bytes / info.unit_bytes;
	if (geteuid() != 0)
		return host_error("create needs root: it mounts file systems%s",
				  b->hugetlb_sysfs ? " and sets nr_hugepages" : "");
	if (mm_reservoir_info_read(dir, &probe, err, sizeof(err)) == 0)
		return host_error(
			"%s is a reservoir already (%s status, or %s destroy first)", dir,
			prog, prog);
	r = mkdir_p(dir);
	if (r)
		return host_error("mkdir %s: %s", dir, strerror(-r));
	if (is_mountpoint(dir))
		return host_error("something is mounted at %s already", dir);
	if (b->hugetlb_sysfs) {
		snprintf(info.pool_sysfs, sizeof(info.pool_sysfs), "%s",
			 b->hugetlb_sysfs);
		r = grow_pool(b, bytes / b->page_bytes, &info.pages_added);
		if (r)
			return r;
	} else {
		char mi[4096];
		FILE *f = fopen("/proc/meminfo", "re");
		size_t n = f ? fread(mi, 1, sizeof(mi) - 1, f) : 0;
		uint64_t avail;

		if (f)
			fclose(f);
		mi[n] = '\0';
		avail = mm_meminfo_available(mi);
		if (avail && avail < bytes)
			return host_error(
				"%llu MiB asked, the host has %llu MiB available (MemAvailable)",
				MIB(bytes), MIB(avail));
	}
	/* The state lives and dies with the pool: a tmpfs of its own at DIR. */
	snprintf(opts, sizeof(opts), "size=%llu,mode=0755",
		 (unsigned long long)(units + STATE_MIN_BYTES));
	if (mount(STATE_SOURCE, dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts)) {
		host_error("mount tmpfs at %s: %s", dir, strerror(errno));
		goto undo;
	}
	mounted_state = 1;
	mm_reservoir_path(pool, sizeof(pool), dir, "pool");
	if (mkdir(pool, 0700)) {
		host_error("mkdir %s: %s", pool, strerror(errno));
		goto undo;
	}
	/* min_size: pages a scrub punches out stay reserved for the pool, not for anyone. */
	if (b->hugetlb_sysfs)
		snprintf(opts, sizeof(opts),
			 "pagesize=%lluM,size=%llu,min_size=%llu,mode=0700",
			 MIB(b->page_bytes), (unsigned long long)bytes,
			 (unsigned long long)bytes);
	else
		snprintf(opts, sizeof(opts), "size=%llu,huge=never,mode=0700",
			 (unsigned long long)bytes);
	if (mount(POOL_SOURCE, pool, b->hugetlb_sysfs ? "hugetlbfs" : "tmpfs",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC, opts)) {
		host_error("mount %s at %s (%s): %s",
			   b->hugetlb_sysfs ? "hugetlbfs" : "tmpfs", pool, opts,
			   strerror(errno));
		goto undo;
	}
	mounted_pool = 1;
	mm_reservoir_path(mem, sizeof(mem), dir, "pool/mem");
	fd = open(mem, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		host_error("creating %s: %s", mem, strerror(errno));
		goto undo;
	}
	r = mm_reservoir_scrub(fd, 0, bytes, !b->hugetlb_sysfs, &st);
	if (r) {
		host_error("allocating %llu MiB in %s: %s", MIB(bytes), mem,
			   strerror(-r));
		goto undo;
	}
	info.create_s = mm_scrub_seconds(&st);
	r = write_state(dir, units);
	r = r ?: mm_reservoir_info_write(dir, &info);
	if (r) {
		host_error("writing the state in %s: %s", dir, strerror(-r));
		goto undo;
	}
	mm_reservoir_log(dir, "create", 0, &st, 0);
	close(fd);
	printf("reservoir %s: %llu MiB of %llu KiB pages (%s at %s), allocated and zeroed in %.3f s (%.2f GiB/s); lease it with: minivmm --reservoir %s ...\n",
	       dir, MIB(bytes), (unsigned long long)(b->page_bytes >> 10),
	       b->hugetlb_sysfs ? "hugetlbfs" : "tmpfs", pool, info.create_s,
	       gib_s(bytes, info.create_s), dir);
	return 0;
undo:
	if (fd >= 0)
		close(fd);
	if (mounted_pool)
		umount(pool);
	if (mounted_state)
		umount(dir);
	rmdir(dir);
	restore_pool(&info);
	return status;
}

/* The state of units [0, n): '1' dirty. NULL on failure. */
static char *read_state(const char *dir, uint64_t n)
{
	char path[MM_PATH_BYTES + 32], *s = malloc(n ? n : 1);
	int fd;

	mm_reservoir_path(path, sizeof(path), dir, "state");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!s || fd < 0 || pread(fd, s, n, 0) != (ssize_t)n) {
		free(s);
		s = NULL;
	}
	if (fd >= 0)
		close(fd);
	return s;
}

/* 0 free, 1 a running VM, 2 a keeper scrubbing; -1 error. */
static int lease_of(int pool_fd, int state_fd, uint64_t off, uint64_t len)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = (off_t)off,
			    .l_len = (off_t)len };

	if (fcntl(pool_fd, F_OFD_GETLK, &fl))
		return -1;
	if (fl.l_type == F_UNLCK)
		return 0;
	fl = (struct flock){ .l_type = F_WRLCK,
			     .l_whence = SEEK_SET,
			     .l_start = (off_t)off,
			     .l_len = (off_t)len };
	if (fcntl(state_fd, F_OFD_GETLK, &fl))
		return -1;
	return fl.l_type == F_UNLCK ? 2 : 1;
}

static int open_pool(const char *dir, struct mm_reservoir_info *info, int *pool_fd,
		     int *state_fd)
{
	char path[MM_PATH_BYTES + 32], err[512];
	int r = mm_reservoir_info_read(dir, info, err, sizeof(err));

	if (r)
		return host_error("%s", err);
	mm_reservoir_path(path, sizeof(path), dir, "pool/mem");
	*pool_fd = open(path, O_RDWR | O_CLOEXEC);
	if (*pool_fd < 0)
		return host_error("opening %s: %s", path, strerror(errno));
	mm_reservoir_path(path, sizeof(path), dir, "state");
	*state_fd = open(path, O_RDWR | O_CLOEXEC);
	if (*state_fd < 0) {
		close(*pool_fd);
		return host_error("opening %s: %s", path, strerror(errno));
	}
	return 0;
}

static void print_scrubs(const char *dir)
{
	char path[MM_PATH_BYTES + 32], line[512], who[32], last[512] = "";
	unsigned long long bytes, total = 0;
	double s, rate, total_s = 0;
	unsigned n = 0;
	FILE *f;

	mm_reservoir_path(path, sizeof(path), dir, "scrub.log");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* time who pid offset bytes seconds GiB/s result */
		if (sscanf(line, "%*d %31s %*d %*u %llu %lf %lf", who, &bytes, &s,
			   &rate) != 4 ||
		    !strcmp(who, "create") || !strstr(line, "\tok"))
			continue;
		n++;
		total += bytes;
		total_s += s;
		snprintf(last, sizeof(last), "%llu MiB in %.3f s (%.2f GiB/s, at %s)",
			 bytes >> 20, s, rate, who);
	}
	fclose(f);
	if (n)
		printf("scrubs: %u, %llu MiB in %.3f s (%.2f GiB/s); last: %s\n", n,
		       total >> 20, total_s, gib_s(total, total_s), last);
	else
		printf("scrubs: none yet\n");
}

static int cmd_status(const char *dir)
{
	struct mm_reservoir_info info;
	int pool_fd, state_fd, r = open_pool(dir, &info, &pool_fd, &state_fd);
	uint64_t n, dirty = 0, leased[3] = { 0 };
	char *state;

	if (r)
		return r;
	n = info.bytes / info.unit_bytes;
	state = read_state(dir, n);
	printf("reservoir %s: %llu MiB of %llu KiB pages (--backing %s), %llu units of %llu MiB\n",
	       dir, MIB(info.bytes), (unsigned long long)(info.page_bytes >> 10),
	       info.backing, (unsigned long long)n, MIB(info.unit_bytes));
	printf("created: allocated and zeroed in %.3f s (%.2f GiB/s)\n", info.create_s,
	       gib_s(info.bytes, info.create_s));
	for (uint64_t u = 0; u < n;) {
		int kind =
			lease_of(pool_fd, state_fd, u * info.unit_bytes, info.unit_bytes);
		uint64_t v = u + 1;

		if (kind < 0) {
			r = host_error("reading the leases: %s", strerror(errno));
			goto out;
		}
		while (v < n && lease_of(pool_fd, state_fd, v * info.unit_bytes,
					 info.unit_bytes) == kind)
			v++;
		leased[kind] += (v - u) * info.unit_bytes;
		if (kind)
			printf("lease: [%llu, %llu) MiB: %s\n", MIB(u * info.unit_bytes),
			       MIB(v * info.unit_bytes),
			       kind == 1 ? "a running VM" : "being scrubbed");
		u = v;
	}
	for (uint64_t u = 0; state && u < n; u++)
		dirty += state[u] == '1' ? info.unit_bytes : 0;
	printf("free: %llu MiB, in use: %llu MiB, being scrubbed: %llu MiB, dirty: %llu MiB\n",
	       MIB(leased[0]), MIB(leased[1]), MIB(leased[2]), MIB(dirty));
	if (info.pool_sysfs[0])
		printf("hugetlb pool %s: nr_hugepages %lld, free %lld (create added %lld)\n",
		       info.pool_sysfs, read_ll(info.pool_sysfs, "nr_hugepages"),
		       read_ll(info.pool_sysfs, "free_hugepages"), info.pages_added);
	print_scrubs(dir);
out:
	free(state);
	close(pool_fd);
	close(state_fd);
	return r;
}

static int cmd_scrub(const char *dir, int all)
{
	struct mm_reservoir_info info;
	int pool_fd, state_fd, r = open_pool(dir, &info, &pool_fd, &state_fd);
	uint64_t n, done = 0, busy = 0;
	double secs = 0;
	char *state;

	if (r)
		return r;
	n = info.bytes / info.unit_bytes;
	for (uint64_t u = 0; u < n;) {
		uint64_t v = u;
		struct flock fl;
		struct mm_scrub st;
		char one = 0;

		/* A run of units that are ours to lock (no lease) and dirty (or --all). */
		while (v < n) {
			fl = (struct flock){ .l_type = F_WRLCK,
					     .l_whence = SEEK_SET,
					     .l_start = (off_t)(v * info.unit_bytes),
					     .l_len = (off_t)info.unit_bytes };
			if (fcntl(pool_fd, F_OFD_SETLK, &fl)) {
				busy += v == u ? info.unit_bytes
					       : 0; /* else counted next time */
				break;
			}
			if (pread(state_fd, &one, 1, (off_t)v) != 1 ||
			    (!all && one != '1')) {
				fl.l_type = F_UNLCK;
				fcntl(pool_fd, F_OFD_SETLK, &fl);
				break;
			}
			v++;
		}
		if (v == u) {
			u++;
			continue;
		}
		r = mm_reservoir_scrub(pool_fd, u * info.unit_bytes,
				       (v - u) * info.unit_bytes, info.page_bytes == 4096,
				       &st);
		mm_reservoir_log(dir, "tool", u * info.unit_bytes, &st, r);
		if (!r) {
			state = malloc(v - u);
			if (!state || (memset(state, '0', v - u),
				       pwrite(state_fd, state, v - u, (off_t)u) !=
					       (ssize_t)(v - u)))
				r = -EIO;
			free(state);
		}
		fl = (struct flock){ .l_type = F_UNLCK,
				     .l_whence = SEEK_SET,
				     .l_start = (off_t)(u * info.unit_bytes),
				     .l_len = (off_t)((v - u) * info.unit_bytes) };
		fcntl(pool_fd, F_OFD_SETLK, &fl);
		if (r) {
			r = host_error("scrubbing [%llu, %llu) MiB: %s",
				       MIB(u * info.unit_bytes), MIB(v * info.unit_bytes),
				       strerror(-r));
			break;
		}
		printf("scrubbed [%llu, %llu) MiB: %llu MiB in %.3f s (%.2f GiB/s: punch %.3f s, allocate %.3f s, zero %.3f s)\n",
		       MIB(u * info.unit_bytes), MIB(v * info.unit_bytes), MIB(st.bytes),
		       mm_scrub_seconds(&st), gib_s(st.bytes, mm_scrub_seconds(&st)),
		       st.punch_s, st.alloc_s, st.zero_s);
		done += st.bytes;
		secs += mm_scrub_seconds(&st);
		u = v;
	}
	if (!r)
		printf("scrub: %llu MiB in %.3f s (%.2f GiB/s)%s; %llu MiB leased, left alone\n",
		       MIB(done), secs, gib_s(done, secs),
		       done ? "" : " (nothing was dirty)", MIB(busy));
	close(pool_fd);
	close(state_fd);
	return r;
}

static int cmd_destroy(const char *dir, double wait_s)
{
	struct mm_reservoir_info info;
	char pool[MM_PATH_BYTES + 32];
	int pool_fd, state_fd, r = open_pool(dir, &info, &pool_fd, &state_fd), kind;
	double t0 = mono_s();

	if (r)
		return r;
	/* A lease being scrubbed ends by itself: wait for it. A running VM does not. */
	while ((kind = lease_of(pool_fd, state_fd, 0, info.bytes)) == 2 &&
	       mono_s() - t0 < wait_s)
		nanosleep(&(struct timespec){ 0, POLL_NS }, NULL);
	close(pool_fd);
	close(state_fd);
	if (kind == 1)
		return host_error("%s is in use by a running VM: end it first", dir);
	if (kind == 2)
		return host_error(
			"%s: a scrub still runs after %.0f s (--wait SEC to wait longer)",
			dir, wait_s);
	mm_reservoir_path(pool, sizeof(pool), dir, "pool");
	if (umount(pool))
		return host_error("umount %s: %s", pool, strerror(errno));
	if (umount(dir))
		return host_error("umount %s: %s (the pool is gone; umount it by hand)",
				  dir, strerror(errno));
	rmdir(dir);
	printf("reservoir %s: destroyed (%llu MiB)\n", dir, MIB(info.bytes));
	restore_pool(&info);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = MM_RESERVOIR_DIR, *cmd, *page = "2m";
	double wait_s = DEFAULT_WAIT_S;
	char abs_dir[MM_PATH_BYTES];
	uint64_t size = 0;
	int all = 0;

	prog = argc > 0 ? basename(argv[0]) : prog;
	invoked = argc > 0 ? argv[0] : prog;
	/* create's options as given, for the corrected command lines. */
	for (int i = 2, at = 0; i < argc && at < (int)sizeof(rest_opts); i++)
		if (!isdigit((unsigned char)argv[i][0]) ||
		    (i > 2 && argv[i - 1][0] == '-'))
			at += snprintf(rest_opts + at, sizeof(rest_opts) - (size_t)at,
				       " %s", argv[i]);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return argc < 2 ? usage(NULL) : (usage(NULL), 0);
	cmd = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		char *end;

		if (!strcmp(a, "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(a, "--page") && i + 1 < argc)
			page = argv[++i];
		else if (!strcmp(a, "--all"))
			all = 1;
		else if (!strcmp(a, "--wait") && i + 1 < argc) {
			wait_s = strtod(argv[++i], &end);
			if (*end || !(wait_s >= 0))
				return usage("--wait: a number of seconds");
		} else if (!strcmp(cmd, "create") && !size &&
			   isdigit((unsigned char)*a)) {
			if (mm_parse_size(a, &size) || !size)
				return usage("SIZE: bytes, or with K/M/G/T");
			/* "create 512": bytes, which nobody means for a pool of pages. */
			if (strspn(a, "0123456789") == strlen(a) && size < SZ_2M) {
				fprintf(stderr,
					"%s: create %s: read as %s bytes (no K/M/G/T suffix); for %s MiB write: %s create %sM%s\n",
					prog, a, a, a, invoked, a, rest_opts);
				return EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "%s: unexpected '%s'\n", prog, a);
			return usage(NULL);
		}
	}
	if (!*dir)
		return usage("--dir: an empty path");
	/* Absolute from here on: the keepers that minivmm forks work from "/". */
	if (!strcmp(cmd, "create") && mkdir_p(dir) == 0 && realpath(dir, abs_dir))
		dir = abs_dir;
	else if (strcmp(cmd, "create") && realpath(dir, abs_dir))
		dir = abs_dir;
	if (!strcmp(cmd, "create")) {
		/* Any case, as --mem takes it ("2M", "4K", "1G"). */
		const struct mm_backend *b =
			!strcasecmp(page, "4k")	  ? &mm_backends[MM_MEMFD]
			: !strcasecmp(page, "2m") ? &mm_backends[MM_HUGETLB2M]
			: !strcasecmp(page, "1g") ? &mm_backends[MM_HUGETLB1G]
						  : NULL;

		if (!size)
			return usage("create: SIZE is missing");
		if (!b)
			return usage("--page: 4k, 2m or 1g (any case)");
		return cmd_create(dir, size, b);
	}
	if (!strcmp(cmd, "status"))
		return cmd_status(dir);
	if (!strcmp(cmd, "scrub"))
		return cmd_scrub(dir, all);
	if (!strcmp(cmd, "destroy"))
		return cmd_destroy(dir, wait_s);
	fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
	return usage(NULL);
}
