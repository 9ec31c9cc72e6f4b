/*
 * This machine's populate ceilings, for minivmm --roofline (mm/roofline/roofline.c):
 *   clear   MADV_POPULATE_WRITE of a fresh mapping made as minivmm's backing
 *           makes it (anon: MADV_NOHUGEPAGE, thp: MADV_HUGEPAGE, hugetlb2m/1g:
 *           MAP_HUGETLB, memfd: shared): the kernel allocates, clears, maps
 *   map     MADV_POPULATE_WRITE of a fresh MAP_SHARED mapping of a file whose
 *           pages are allocated and zeroed already (memfd on tmpfs, memfd on
 *           hugetlbfs): page tables only, what a reservoir lease costs
 *   memset  memset of resident anonymous memory: the CPU's zeroing bandwidth
 * per backing and thread count (threads populate their mvm_slice at once).
 *   roofline [--size SIZE] [--map-size SIZE] [--threads 1,2] [--runs N]
 *            [--backings LIST] [--grow-pools] [-o FILE]
 * --map-size (default: --size) is the size of the map rows alone: a clear
 * ceiling is flat past a few GiB, but page-table set-up on 2 MiB pages takes
 * microseconds per GiB, so its ceiling is measured at the size of interest.
 * Writes TSV (one row per backing, op and thread count; gib_per_s is the
 * best run's, the ceiling; median_gib_per_s and min_gib_per_s the median and
 * slowest runs'); rows it cannot measure (a hugetlb pool short of pages) are
 * '#' comments saying why. --grow-pools (root) grows the hugetlb pools for
 * the measurement and gives the pages back before it exits.
 *
 * Like for like with a guest (docs/PLATFORM.md, "Fourth look"): every run is
 * a process of its own, as every minivmm run is, and the thread counts of a
 * backing and op take turns run by run. Measure at the guest's size
 * (--size 4G for --mem 4G): this machine's host backs memory late (free
 * page reporting), so a small ceiling, measured in memory the host still
 * backs, overstates what a big fresh populate reaches.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <linux/mman.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "minivmm_abi.h"
#include "kvm_compat.h"

#define NSEC_PER_SEC 1e9
#define SZ_2M	     (2ULL << 20)
#define SZ_1G	     (1ULL << 30)
#define GIB_F	     (1024.0 * 1024.0 * 1024.0)
#define MAX_THREADS  64
#define MAX_RUNS     100
#define DEFAULT_SIZE (256ULL << 20)
#define DEFAULT_RUNS 3
#define POOL_2M	     "/sys/kernel/mm/hugepages/hugepages-2048kB"
#define POOL_1G	     "/sys/kernel/mm/hugepages/hugepages-1048576kB"

enum op { OP_CLEAR, OP_MAP, OP_MEMSET };
static const char *const op_names[] = { "clear", "map", "memset" };

/* The backings, as minivmm names them (mm/backing/backend.c). */
static const struct kind {
	const char *name;
	uint64_t page;
	const char *pool; /* hugetlb pool, else NULL */
	int map_ok;	  /* has a pre-zeroed file to map */
} kinds[] = {
	{ "anon", 4096, NULL, 0 },	    { "thp", SZ_2M, NULL, 0 },
	{ "hugetlb2m", SZ_2M, POOL_2M, 1 }, { "hugetlb1g", SZ_1G, POOL_1G, 1 },
	{ "memfd", 4096, NULL, 1 },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

struct slice {
	uint8_t *p;
	uint64_t len;
	int memset_it;
	int err;
	double t0, t1;
	pthread_barrier_t *go;
};

/* Pools grown for the measurement: given back at exit, however it exits. */
static struct {
	const char *pool;
	long long added;
} grown[2];

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / NSEC_PER_SEC;
}

static long long pool_read(const char *pool, const char *file)
{
	char path[160];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", pool, file);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int pool_write(const char *pool, long long v)
{
	char path[160];
	FILE *f;
	int bad;

	snprintf(path, sizeof(path), "%s/nr_hugepages", pool);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fprintf(f, "%lld\n", v);
	bad = ferror(f);
	return fclose(f) || bad ? -1 : 0;
}

static void give_back(void)
{
	for (int i = 0; i < 2; i++)
		if (grown[i].added > 0) {
			long long nr = pool_read(grown[i].pool, "nr_hugepages");

			pool_write(grown[i].pool,
				   nr - grown[i].added > 0 ? nr - grown[i].added : 0);
			grown[i].added = 0;
		}
}

static void on_signal(int sig)
{
	give_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Free pages for `need` of pool (grown if allowed). 0, or -1 with why in buf. */
static int pool_ready(const char *pool, long long need, int grow, char *why, size_t len)
{
	long long nr = pool_read(pool, "nr_hugepages"),
		  fr = pool_read(pool, "free_hugepages"),
		  resv = pool_read(pool, "resv_hugepages"), avail, got;
	int slot = strcmp(pool, POOL_2M) != 0;

	if (nr < 0) {
		snprintf(why, len, "no pool %s", pool);
		return -1;
	}
	avail = fr - resv;
	if (avail >= need)
		return 0;
	if (!grow) {
		snprintf(why, len,
			 "%lld of %lld pages free in %s (--grow-pools grows it)", avail,
			 need, pool);
		return -1;
	}
	pool_write(pool, nr + need - avail);
	got = pool_read(pool, "nr_hugepages");
	grown[slot].pool = pool;
	grown[slot].added += got > nr ? got - nr : 0;
	if (got - nr < need - avail) {
		snprintf(why, len, "the kernel granted %lld of %lld more pages in %s",
			 got - nr, need - avail, pool);
		return -1;
	}
	return 0;
}

static void *worker(void *arg)
{
	struct slice *s = arg;

	pthread_barrier_wait(s->go);
	s->t0 = now_s();
	if (s->memset_it)
		memset(s->p, 0, s->len);
	else if (s->len && madvise(s->p, s->len, MADV_POPULATE_WRITE))
		s->err = errno;
	s->t1 = now_s();
	return NULL;
}

/* n threads over [p, p + bytes) at once: first start to last end, or < 0 (errno). */
static double on_threads(uint8_t *p, uint64_t bytes, uint64_t page, unsigned n,
			 int memset_it)
{
	pthread_t tid[MAX_THREADS];
	struct slice s[MAX_THREADS];
	pthread_barrier_t go;
	double t0 = 0, t1 = 0;
	int err = 0;

	/* Every thread exists before any starts: a new stack waits for the mmap lock. */
	pthread_barrier_init(&go, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		uint64_t a, b;

		mvm_slice(bytes, n, i, page, &a, &b);
		s[i] = (struct slice){ p + a, b - a, memset_it, 0, 0, 0, &go };
		if (pthread_create(&tid[i], NULL, worker, &s[i])) {
			fprintf(stderr, "roofline: pthread_create failed\n");
			exit(1);
		}
	}
	pthread_barrier_wait(&go);
	for (unsigned i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		err = err ?: s[i].err;
		if (!i || s[i].t0 < t0)
			t0 = s[i].t0;
		if (s[i].t1 > t1)
			t1 = s[i].t1;
	}
	pthread_barrier_destroy(&go);
	return err ? -err : t1 - t0;
}

/* A fresh mapping as minivmm's backing k makes it (mm/backing/backend.c). NULL on failure. */
static uint8_t *fresh(const struct kind *k, uint64_t bytes, void **base, uint64_t *len,
		      int *fd)
{
	uint8_t *p;

	*fd = -1;
	*len = bytes + SZ_2M;
	if (!strcmp(k->name, "memfd")) {
		*fd = memfd_create("roofline", MFD_CLOEXEC);
		if (*fd < 0 || ftruncate(*fd, (off_t)bytes))
			return NULL;
		*len = bytes;
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	} else if (k->pool) {
		*len = bytes;
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
				 (k->page == SZ_1G ? MAP_HUGE_1GB : MAP_HUGE_2MB),
			 -1, 0);
	} else {
		p = mmap(NULL, *len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	}
	if (p == MAP_FAILED)
		return NULL;
	*base = p;
	if (!k->pool && *fd < 0) {
		p = (uint8_t *)(((uintptr_t)p + SZ_2M - 1) & ~(uintptr_t)(SZ_2M - 1));
		if (madvise(p, bytes,
			    strcmp(k->name, "thp") ? MADV_NOHUGEPAGE : MADV_HUGEPAGE))
			return NULL;
	}
	return p;
}

/* A file of bytes, allocated and zeroed: memfd on tmpfs or on hugetlbfs. fd or -1. */
static int prezeroed(const struct kind *k, uint64_t bytes)
{
	unsigned flags = MFD_CLOEXEC;
	int fd;

	if (k->pool)
		flags |= MFD_HUGETLB | (k->page == SZ_1G ? MFD_HUGE_1GB : MFD_HUGE_2MB);
	fd = memfd_create("roofline-prezeroed", flags);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) || fallocate(fd, 0, 0, (off_t)bytes))
		return -1;
	if (!k->pool) {
		/* tmpfs's fallocate leaves pages to be cleared at their first fault: fault them. */
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED || madvise(p, bytes, MADV_POPULATE_WRITE))
			return -1;
		munmap(p, bytes);
	}
	return fd;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * One run in a child process of its own, as minivmm populates in a process
 * of its own: the mapping, the populate (or memset) and the unmap happen
 * there, and the process's exit frees it all, as a VM's end does. The
 * seconds, or -errno.
 */
static double run_once(const struct kind *k, enum op op, unsigned n, uint64_t bytes,
		       int file)
{
	int fds[2];
	double t = -EIO;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		t = -errno;
		close(fds[0]);
		close(fds[1]);
		return t;
	}
	if (pid == 0) {
		void *base = NULL;
		uint64_t len = bytes;
		uint8_t *p;
		int fd = -1;

		close(fds[0]);
		if (op == OP_MAP) {
			p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, file,
				 0);
			base = p = p == MAP_FAILED ? NULL : p;
		} else {
			p = fresh(k, bytes, &base, &len, &fd);
		}
		if (!p) {
			t = -errno;
		} else {
			/* memset: resident first, so it measures zeroing, not faults. */
			t = op == OP_MEMSET ? on_threads(p, bytes, k->page, 1, 0) : 0;
			if (t >= 0)
				t = on_threads(p, bytes, k->page, n, op == OP_MEMSET);
		}
		if (write(fds[1], &t, sizeof(t)) != sizeof(t))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &t, sizeof(t)) != sizeof(t))
		t = -EIO;
	close(fds[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return t;
}

/*
 * `runs` runs of op on k for each thread count in threads[], interleaved:
 * round r runs every count once, so no count gets all its runs in one of
 * the machine's fast or slow spells (its host backs memory late: free page
 * reporting). Each run is a process of its own. One row per count (or a
 * '#' line saying why not).
 */
static void measure(FILE *out, const struct kind *k, enum op op, const unsigned *threads,
		    unsigned nthreads, uint64_t size, unsigned runs, int grow)
{
	double t[MAX_THREADS][MAX_RUNS];
	int bad[MAX_THREADS] = { 0 };
	uint64_t bytes = (size + k->page - 1) / k->page * k->page, most = 1;
	char why[256];
	int file = -1;

	for (unsigned i = 0; i < nthreads; i++)
		most = threads[i] > most ? threads[i] : most;
	if (bytes / k->page < most)
		bytes = most * k->page; /* a page per thread at least */
	if (k->pool &&
	    pool_ready(k->pool, (long long)(bytes / k->page), grow, why, sizeof(why))) {
		fprintf(out, "# skipped %s %s: %s\n", k->name, op_names[op], why);
		return;
	}
	if (op == OP_MAP && (file = prezeroed(k, bytes)) < 0) {
		fprintf(out, "# skipped %s map: a pre-zeroed file of %llu MiB: %s\n",
			k->name, (unsigned long long)(bytes >> 20), strerror(errno));
		return;
	}
	for (unsigned r = 0; r < runs; r++)
		for (unsigned i = 0; i < nthreads; i++) {
			if (bad[i])
				continue;
			t[i][r] = run_once(k, op, threads[i], bytes, file);
			if (t[i][r] < 0) {
				bad[i] = 1;
				fprintf(out, "# skipped %s %s %u threads: %s\n", k->name,
					op_names[op], threads[i],
					strerror((int)-t[i][r]));
			}
		}
	for (unsigned i = 0; i < nthreads; i++) {
		double best, median, worst;

		if (bad[i])
			continue;
		qsort(t[i], runs, sizeof(t[i][0]), cmp_double);
		best = t[i][0];
		worst = t[i][runs - 1];
		median = runs % 2 ? t[i][runs / 2]
				  : (t[i][runs / 2 - 1] + t[i][runs / 2]) / 2;
		fprintf(out,
			"%s\t%s\t%u\t%llu\t%llu\t%u\t%.9f\t%.9f\t%.3f\t%.3f\t%.1f\t%.3f\n",
			k->name, op_names[op], threads[i], (unsigned long long)bytes,
			(unsigned long long)k->page, runs, best, median,
			(double)bytes / GIB_F / best, (double)bytes / GIB_F / median,
			best / ((double)bytes / (double)k->page) * NSEC_PER_SEC,
			(double)bytes / GIB_F / worst);
		fflush(out);
	}
	if (file >= 0)
		close(file);
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = toupper((unsigned char)*end) == 'K'	  ? 10
		    : toupper((unsigned char)*end) == 'M' ? 20
		    : toupper((unsigned char)*end) == 'G' ? 30
							  : 0;

	end += shift != 0;
	if (!isdigit((unsigned char)*s) || *end || !v)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: roofline [--size SIZE] [--map-size SIZE] [--threads 1,2] [--runs N] [--backings anon,thp,hugetlb2m,hugetlb1g,memfd] [--grow-pools] [-o FILE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t size = DEFAULT_SIZE, map_size = 0;
	unsigned threads[MAX_THREADS], nthreads = 0, runs = DEFAULT_RUNS;
	const char *backings = "anon,thp,hugetlb2m,hugetlb1g,memfd", *path = NULL;
	int grow = 0;
	struct utsname u;
	FILE *out = stdout;
	char list[256];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--size") && v && !parse_size(v, &size))
			i++;
		else if (!strcmp(a, "--map-size") && v && !parse_size(v, &map_size))
			i++;
		else if (!strcmp(a, "--runs") && v && (runs = (unsigned)atoi(v)) >= 1 &&
			 runs <= MAX_RUNS)
			i++;
		else if (!strcmp(a, "--backings") && v)
			backings = argv[++i];
		else if (!strcmp(a, "-o") && v)
			path = argv[++i];
		else if (!strcmp(a, "--grow-pools"))
			grow = 1;
		else if (!strcmp(a, "--threads") && v) {
			char *p = argv[++i], *end;

			for (nthreads = 0; *p && nthreads < MAX_THREADS;
			     p = end + (*end == ',')) {
				unsigned long t = strtoul(p, &end, 10);

				if (end == p || !t || t > MAX_THREADS ||
				    (*end && *end != ','))
					return usage();
				threads[nthreads++] = (unsigned)t;
			}
		} else
			return usage();
	}
	if (!nthreads) {
		threads[0] = 1;
		threads[1] = 2;
		nthreads = 2;
	}
	snprintf(list, sizeof(list), ",%s,", backings);
	for (char *p = list + 1, *e; *p; p = e + 1) {
		size_t k = 0;

		e = strchr(p, ',');
		while (k < NKINDS && (strlen(kinds[k].name) != (size_t)(e - p) ||
				      strncmp(kinds[k].name, p, (size_t)(e - p))))
			k++;
		if (k == NKINDS) {
			fprintf(stderr,
				"roofline: --backings: '%.*s' is not one of anon, thp, hugetlb2m, hugetlb1g, memfd\n",
				(int)(e - p), p);
			return 2;
		}
	}
	if (path && !(out = fopen(path, "we"))) {
		perror("roofline: -o");
		return 1;
	}
	atexit(give_back);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	uname(&u);
	fprintf(out,
		"# minivmm roofline 1: populate ceilings of this machine (bench/roofline.c)\n");
	fprintf(out, "# host %s, kernel %s, %ld CPUs online, %lld s since the epoch\n",
		u.nodename, u.release, sysconf(_SC_NPROCESSORS_ONLN),
		(long long)time(NULL));
	if (!map_size)
		map_size = size;
	fprintf(out,
		"# size %llu MiB (map rows: %llu MiB), best of %u runs, each a process of its own, the thread counts interleaved; gib_per_s is the ceiling minivmm uses, min_gib_per_s the slowest run\n",
		(unsigned long long)(size >> 20), (unsigned long long)(map_size >> 20),
		runs);
	fprintf(out,
		"backing\top\tthreads\tbytes\tpage_bytes\truns\tbest_s\tmedian_s\tgib_per_s\t"
		"median_gib_per_s\tns_per_page\tmin_gib_per_s\n");
	measure(out, &kinds[0], OP_MEMSET, threads, nthreads, size, runs, grow);
	for (size_t k = 0; k < NKINDS; k++) {
		char name[32];

		snprintf(name, sizeof(name), ",%s,", kinds[k].name);
		if (!strstr(list, name))
			continue;
		measure(out, &kinds[k], OP_CLEAR, threads, nthreads, size, runs, grow);
		if (kinds[k].map_ok)
			measure(out, &kinds[k], OP_MAP, threads, nthreads, map_size, runs,
				grow);
		/* Before the next backing: a 16000 MiB pool held on would leave it no room. */
		give_back();
	}
	if (out != stdout && fclose(out)) {
		perror("roofline: writing");
		return 1;
	}
	return 0;
}
