/* Unit tests: latency histograms, the touch-order file, and userfaultfd paging of plain memory (no KVM). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "machine.h"

void test_latency_hist(void)
{
	struct lat_hist h, g, d;

	/* Buckets tile [0, 2^40): each starts where the one before ends, 1/16 octave wide. */
	for (unsigned i = 1; i < LAT_BUCKETS; i++)
		CHECK_EQ(lat_bucket_lo(i), lat_bucket_hi(i - 1));
	for (uint64_t v = 0; v < 5000; v++) {
		unsigned i = lat_bucket(v);

		CHECK(lat_bucket_lo(i) <= v && v < lat_bucket_hi(i));
	}
	for (uint64_t v = 5000; v < (1ULL << 40); v = v * 3 + 7) {
		unsigned i = lat_bucket(v);

		CHECK(lat_bucket_lo(i) <= v && v < lat_bucket_hi(i));
		CHECK((lat_bucket_hi(i) - lat_bucket_lo(i)) * 16 <= lat_bucket_lo(i));
	}
	CHECK_EQ(lat_bucket(UINT64_MAX), LAT_BUCKETS - 1);

	lat_init(&h);
	CHECK_EQ(lat_percentile(&h, 50), 0);
	for (uint64_t v = 1; v <= 1000; v++)
		lat_record(&h, v * 1000); /* 1 us .. 1 ms */
	CHECK_EQ(h.count, 1000);
	CHECK_EQ(lat_bucket_total(&h), 1000);
	CHECK_EQ(h.min_ns, 1000);
	CHECK_EQ(h.max_ns, 1000000);
	/* Within one bucket (6.25%) above the exact rank, never below it. */
	CHECK(lat_percentile(&h, 50) >= 500000 && lat_percentile(&h, 50) <= 532000);
	CHECK(lat_percentile(&h, 99) >= 990000 && lat_percentile(&h, 99) <= 1000000);
	CHECK_EQ(lat_percentile(&h, 100), 1000000);
	/* The largest value of the rank's bucket: 1000 ns counts in [992, 1024). */
	CHECK_EQ(lat_percentile(&h, 0.01), 1023);

	/* Sums and differences of snapshots. */
	lat_init(&g);
	lat_add(&g, &h);
	lat_add(&g, &h);
	CHECK_EQ(g.count, 2000);
	lat_sub(&d, &g, &h);
	CHECK_EQ(lat_bucket_total(&d), 1000);
	CHECK_EQ(lat_percentile(&d, 50), lat_percentile(&h, 50));
}

static char temp_dir[64]; /* made by temp_file, removed at the end of test_touch_order */

/* A file in a fresh temporary directory, with contents; the path is static. */
static const char *temp_file(const char *name, const char *text)
{
	static char path[128];
	char *dir = temp_dir;
	FILE *f;

	if (!dir[0]) {
		snprintf(dir, sizeof(temp_dir), "/tmp/minivmm-unit-XXXXXX");
		if (!mkdtemp(dir))
			return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	return path;
}

/* Read text as a touch-order file against ram_bytes: the return, err in *why. */
static int read_text(const char *text, uint64_t ram_bytes, struct touch_order *o,
		     char *why, size_t len)
{
	const char *p = temp_file("order", text);
	int r;

	if (!p)
		return -EIO;
	r = touch_order_read(p, ram_bytes, o, why, len);
	unlink(p);
	return r;
}

#define HDR \
	"minivmm-touch-order 1 ram_bytes=8388608 page_bytes=4096 pages=3 clock=ns_since_exec"
#define LONG32 "                                "
#define LONG   LONG32 LONG32 LONG32 LONG32 LONG32 LONG32 LONG32 LONG32 /* 256 */

void test_touch_order(void)
{
	const struct uffd_touch t[] = {
		{ 0x3000, 10 }, { 0x4000, 20 }, { 0x1000, 30 }, { 0x5000, 40 }
	};
	struct touch_order o;
	char err[512], path[160];
	int fd, e;

	/* Written and read back: four pages, neighbours in order merge into ranges. */
	snprintf(path, sizeof(path), "%s", temp_file("written", ""));
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_EQ(touch_order_write(fd, 8 << 20, 4096, t, 4, 5, " paging=uffd-missing"),
		 0);
	close(fd);
	e = touch_order_read(path, 8 << 20, &o, err, sizeof(err));
	CHECK_EQ(e, 0);
	CHECK_EQ(o.pages, 4);
	CHECK_EQ(o.nranges, 3);
	if (!e && o.nranges == 3) {
		CHECK(o.ranges[0].gpa == 0x3000 && o.ranges[0].bytes == 0x2000);
		CHECK(o.ranges[1].gpa == 0x1000 && o.ranges[1].bytes == 0x1000);
		CHECK(o.ranges[2].gpa == 0x5000 && o.ranges[2].bytes == 0x1000);
	}
	touch_order_free(&o);
	/* More RAM than recorded: every page fits, so it is read; less is refused, naming both. */
	CHECK_EQ(touch_order_read(path, 16 << 20, &o, err, sizeof(err)), 0);
	CHECK(o.ram_bytes == 8 << 20 && o.pages == 4 && o.nranges == 3);
	touch_order_free(&o);
	CHECK_EQ(touch_order_read(path, 4 << 20, &o, err, sizeof(err)), -EINVAL);
	CHECK_STR_CONTAINS(
		err,
		"recorded with 8 MiB of guest RAM, more than this run's 4 MiB (--mem): run with --mem 8M, or record again with --mem 4M");
	unlink(path);
	CHECK_EQ(touch_order_read("/nonexistent/order", 8 << 20, &o, err, sizeof(err)),
		 -ENOENT);

	/* Every kind of damage is -EINVAL with its reason. */
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "", "no header" },
		{ "something else 1\n", "not a touch-order file" },
		{ "minivmm-touch-order 2 ram_bytes=8388608 page_bytes=4096 pages=0\nend 0\n",
		  "version 2" },
		{ "minivmm-touch-order 1 ram_bytes=8388608 pages=0\nend 0\n", "lacks" },
		{ "minivmm-touch-order 1 ram_bytes=8388608 page_bytes=4000 pages=0\nend 0\n",
		  "power of two" },
		{ HDR "\n0x1000 1\n0x2000 2\n", "truncated: 2 of the 3" },
		{ HDR "\n0x1000 1\n0x2000 2\n0x3000 3\n", "no 'end 3' line" },
		{ HDR "\n0x1000 1\n0x2000 2\n0x3000 3\nend 3", "no 'end 3' line" },
		{ HDR "\n0x1000 1\n0x2000 2\n0x3000 3\nend 4\n", "counts 4 pages" },
		{ HDR "\n0x1000 1\n0x2000 2\n0x3000 3\nend 3\nmore\n", "after the end" },
		{ HDR "\n0x1000 1\n0x1000 2\n0x3000 3\nend 3\n", "appears twice" },
		{ HDR "\n0x1000 1\n0x2001 2\n0x3000 3\nend 3\n",
		  "not a page of guest RAM" },
		{ HDR "\n0x1000 1\n0x800000 2\n0x3000 3\nend 3\n",
		  "not a page of guest RAM" },
		{ HDR "\n0x1000 1\n4096 2\n0x3000 3\nend 3\n", "is not 'GPA TIME'" },
		{ HDR "\n0x1000 1\n0x2000\n0x3000 3\nend 3\n", "is not 'GPA TIME'" },
		{ HDR "\n0x1000 1\n0x10000000000000000 2\n0x3000 3\nend 3\n",
		  "is not 'GPA TIME'" }, /* 17 hex digits: overflows */
		{ HDR "\n0x1000 1\n0x2000 99999999999999999999\n0x3000 3\nend 3\n",
		  "is not 'GPA TIME'" },
		{ HDR "\n0x1000 1\n0x2000 2 \n0x3000 3\nend 3\n", "is not 'GPA TIME'" },
		{ HDR "\n0x1000 1\n0x2000 2" LONG "\n0x3000 3\nend 3\n",
		  "truncated: 1 of the 3" }, /* a line longer than any the writer makes */
		{ "minivmm-touch-order 1 ram_bytes=8388608 page_bytes=4096 pages=9999\n",
		  "more than the 2048 pages" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		CHECK_EQ(read_text(bad[i].text, 8 << 20, &o, err, sizeof(err)), -EINVAL);
		CHECK_STR_CONTAINS(err, bad[i].why);
		CHECK(o.ranges == NULL);
	}
	CHECK_EQ(read_text(HDR "\n0x1000 1\n0x2000 2\n0x3000 3\nend 3\n", 8 << 20, &o,
			   err, sizeof(err)),
		 0);
	CHECK(o.nranges == 1 && o.ranges[0].gpa == 0x1000 && o.ranges[0].bytes == 0x3000);
	touch_order_free(&o);
	CHECK(rmdir(temp_dir) == 0); /* every file in it was removed */
	temp_dir[0] = '\0';
}

/* --- the pager on plain memory: this process's own thread is the "guest" --- */

struct outcome {
	int status; /* 0 ran, 1 skipped (no userfaultfd), 2 failed */
	char what[200];
	uint64_t faults, pages, write_faults, bucket_total, p50, min_ns;
	size_t ntouch;
	int order_ok, content_ok;
};

static int enter_uffd_sandbox(void *cookie, unsigned index, int uffd, int stop_fd)
{
	struct sandbox_fds f = { .vcpu_fd = -1, .uffd_fd = uffd, .stop_fd = stop_fd };

	(void)index;
	return *(int *)cookie ? sandbox_enter(SANDBOX_UFFD, &f) : 0;
}

/* The touch order: a permutation of pages spread over all of RAM, one read among them. */
#define TOUCHES 48
static uint64_t touch_page(unsigned i)
{
	return ((uint64_t)i * 37 % TOUCHES) * 43 + 2; /* pages 2 .. 2 + 47 * 43 of 2048 */
}

static void pager_child(const char *backing, unsigned threads, unsigned delay_us,
			int sandboxed, struct outcome *out)
{
	const struct mm_backend *b = mm_backend_find(backing);
	struct uffd_config c = { .threads = threads, .delay_us = delay_us, .record = 1 };
	struct uffd_hooks h = { &sandboxed, enter_uffd_sandbox, NULL, NULL };
	struct uffd_pager *p;
	struct guest_ram ram;
	struct uffd_stats st;
	struct uffd_touch *t = NULL;
	volatile uint8_t sink = 0;
	int r;

	if (mm_ram_create(&ram, b, 8 << 20, NULL, out->what, sizeof(out->what)))
		return;
	ram.hva[0x1000] = 1; /* "the loader's": present before the start, never faults */
	r = uffd_open(b, ram.size, b->id == MM_MEMFD, &c, &p, out->what,
		      sizeof(out->what));
	if (r) {
		out->status = r == -EPERM || r == -ENOSYS ? 1 : 2;
		return;
	}
	if (uffd_start(p, &ram, &h, out->what, sizeof(out->what)))
		return;
	for (unsigned i = 0; i < TOUCHES; i++) {
		if (i == 5)
			sink += ram.hva[touch_page(i) * 4096]; /* a read fault */
		else
			ram.hva[touch_page(i) * 4096 + 7] = (uint8_t)i;
	}
	sink += ram.hva[0x1000];
	uffd_stop(p);
	uffd_stats(p, UINT32_MAX, &st);
	out->faults = st.faults;
	out->pages = st.pages;
	out->write_faults = st.write_faults;
	out->bucket_total = lat_bucket_total(&st.lat);
	out->p50 = lat_percentile(&st.lat, 50);
	out->min_ns = st.lat.min_ns;
	out->order_ok = uffd_touches(p, &t, &out->ntouch) == 0;
	for (size_t i = 0; out->order_ok && i < out->ntouch; i++)
		out->order_ok = i < TOUCHES &&
				t[i].gpa == touch_page((unsigned)i) * 4096 &&
				(!i || t[i].t_ns >= t[i - 1].t_ns);
	out->content_ok = sink == 1;
	for (unsigned i = 0; i < TOUCHES; i++)
		out->content_ok &=
			ram.hva[touch_page(i) * 4096 + 7] == (i == 5 ? 0 : i) &&
			ram.hva[touch_page(i) * 4096] == 0;
	free(t);
	uffd_free(p);
	mm_ram_destroy(&ram);
	out->status = 0;
}

/* Run it in a child (a sandbox violation kills only the child); the outcome comes back by pipe. */
static struct outcome pager(const char *backing, unsigned threads, unsigned delay_us,
			    int sandboxed)
{
	struct outcome out = { .status = 2 };
	int fds[2], st = 0;
	pid_t pid;

	fflush(NULL);
	if (pipe(fds))
		return out;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		pager_child(backing, threads, delay_us, sandboxed, &out);
		_exit(write(fds[1], &out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &out, sizeof(out)) != sizeof(out))
		snprintf(out.what, sizeof(out.what), "the child died");
	close(fds[0]);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		out.status = 2;
		snprintf(out.what, sizeof(out.what), "child wait status 0x%x", st);
	}
	return out;
}

static void check_pager(const char *backing, unsigned threads, unsigned delay_us,
			int sandboxed)
{
	struct outcome o = pager(backing, threads, delay_us, sandboxed);

	if (o.status == 1) {
		fprintf(stderr, "    (no userfaultfd here: %s)\n", o.what);
		return;
	}
	if (o.status)
		fprintf(stderr, "    pager %s x%u: %s\n", backing, threads, o.what);
	CHECK_EQ(o.status, 0);
	CHECK_EQ(o.faults, TOUCHES); /* the loader's page did not fault */
	CHECK_EQ(o.pages, TOUCHES);
	CHECK_EQ(o.write_faults, TOUCHES - 1);
	CHECK_EQ(o.bucket_total, TOUCHES);
	CHECK_EQ(o.ntouch, TOUCHES);
	CHECK(o.order_ok);
	CHECK(o.content_ok);
	if (delay_us)
		CHECK(o.min_ns >= delay_us * 1000ULL && o.p50 >= delay_us * 1000ULL);
}

void test_uffd_pager(void)
{
	check_pager("anon", 1, 0, 0);
	check_pager("anon", 3, 0, 1);	/* under the handlers' seccomp filter */
	check_pager("memfd", 2, 0, 1);	/* MINOR: fallocate, UFFDIO_CONTINUE */
	check_pager("anon", 2, 300, 1); /* each resolution waits 300 us */
}
