/* Unit tests: --eager-order's cursors (front, back, frontier, a file), the coverage of the two frontiers. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "internal.h"
#include "measure.h"

#define MIB (1ULL << 20)

/* Every range a cursor hands out, in order: their gpas (one per chunk in these tests). */
static unsigned drain(struct order_plan *p, struct order_cursor *c, uint64_t *gpas,
		      unsigned max, uint64_t *bytes)
{
	uint64_t gpa, len;
	int from_file;
	unsigned n = 0;

	*bytes = 0;
	while (n < max && order_next(p, c, &gpa, &len, &from_file)) {
		gpas[n++] = gpa;
		*bytes += len;
		order_done(p, gpa, len, 1000 + n);
	}
	return n;
}

static void test_front_back(void)
{
	struct order_plan p;
	struct order_cursor c;
	uint64_t g[64], bytes;

	/* 16 MiB, two threads: 8 MiB slices of four 2 MiB chunks. */
	CHECK_EQ(order_plan_init(&p, EAGER_ORDER_FRONT, 16 * MIB, 4096, 2, NULL), 0);
	CHECK_EQ(p.chunk, 2 * MIB);
	order_cursor_init(&p, 1, &c);
	CHECK(c.lo == 8 * MIB && c.hi == 16 * MIB);
	CHECK_EQ(drain(&p, &c, g, 64, &bytes), 4);
	CHECK(g[0] == 8 * MIB && g[1] == 10 * MIB && g[3] == 14 * MIB &&
	      bytes == 8 * MIB);
	/* Each chunk done once, at the time it was done; thread 0's not at all. */
	CHECK(p.chunk_ns[4] == 1001 && p.chunk_ns[7] == 1004 && p.chunk_ns[0] == 0);
	order_plan_free(&p);

	CHECK_EQ(order_plan_init(&p, EAGER_ORDER_BACK, 16 * MIB, 4096, 2, NULL), 0);
	order_cursor_init(&p, 0, &c);
	CHECK_EQ(drain(&p, &c, g, 64, &bytes), 4);
	CHECK(g[0] == 6 * MIB && g[1] == 4 * MIB && g[3] == 0 && bytes == 8 * MIB);
	order_plan_free(&p);

	/* Pages larger than 2 MiB: chunks of a page. */
	CHECK_EQ(order_plan_init(&p, EAGER_ORDER_FRONT, 2048 * MIB, 1024 * MIB, 1, NULL),
		 0);
	order_cursor_init(&p, 0, &c);
	CHECK_EQ(drain(&p, &c, g, 64, &bytes), 2);
	CHECK(p.chunk == 1024 * MIB && g[1] == 1024 * MIB);
	order_plan_free(&p);
}

/* A fake residency: below `guest_at` (the guest's path) and [extra, extra_end) (a buffer it cleared). */
static uint64_t guest_at, extra, extra_end;

static uint64_t fake_residency(void *cookie, uint64_t gpa, uint64_t len, uint64_t *top)
{
	uint64_t n = 0;

	(void)cookie;
	*top = gpa;
	for (uint64_t a = gpa; a < gpa + len; a += 4096)
		if (a < guest_at || (a >= extra && a < extra_end)) {
			n++;
			*top = a + 4096;
		}
	return n;
}

static void test_frontier(void)
{
	struct order_plan p;
	struct order_cursor c;
	uint64_t gpa, len, bytes, g[64];
	int ff;

	CHECK_EQ(order_plan_init(&p, EAGER_ORDER_FRONTIER, 64 * MIB, 4096, 1, NULL), 0);
	p.residency = fake_residency;
	order_cursor_init(&p, 0, &c);
	/* The guest at 5 MiB: the rest of its chunk is left to it, then from 6 MiB on. */
	guest_at = 5 * MIB;
	CHECK(order_next(&p, &c, &gpa, &len, &ff) && gpa == 6 * MIB && len == 2 * MIB);
	CHECK_EQ(c.guest, 5 * MIB);
	order_done(&p, gpa, len, 1);
	/* It is inside the thread's chunk now, hidden: the thread goes on past its own. */
	guest_at = 7 * MIB;
	CHECK(order_next(&p, &c, &gpa, &len, &ff) && gpa == 8 * MIB);
	/* A buffer it cleared once, far ahead, while its frontier moved on: not the frontier. */
	guest_at = 13 * MIB;
	extra = 20 * MIB, extra_end = 21 * MIB;
	CHECK(order_next(&p, &c, &gpa, &len, &ff) && gpa == 14 * MIB);
	CHECK_EQ(c.guest, 13 * MIB);
	/* It overtook the thread (at 26 MiB, within the window): the thread jumps ahead. */
	guest_at = 26 * MIB;
	CHECK(order_next(&p, &c, &gpa, &len, &ff) && gpa == 26 * MIB);
	CHECK_EQ(c.guest, 26 * MIB);
	/* The rest: up to the end, then what the guest went past, front to back; each once. */
	CHECK_EQ(drain(&p, &c, g, 64, &bytes), 32 - 4);
	CHECK(g[0] == 28 * MIB && g[17] == 62 * MIB && g[18] == 0 && g[19] == 2 * MIB &&
	      g[21] == 10 * MIB);
	CHECK(!order_next(&p, &c, &gpa, &len, &ff));
	order_plan_free(&p);
}

static void test_file(void)
{
	struct gpa_range r[] = { { 0x5000, 0x2000 },
				 { 0x1000, 0x1000 },
				 { 0x401000, 0x1000 } };
	struct touch_order o = { .ram_bytes = 8 * MIB,
				 .page_bytes = 4096,
				 .pages = 4,
				 .ranges = r,
				 .nranges = 3 };
	struct order_plan p;
	struct order_cursor a, b;
	uint64_t gpa, len, total = 0;
	int ff;

	/* 4 KiB pages: the file's pages first, in its order, each once; then the rest. */
	CHECK_EQ(order_plan_init(&p, EAGER_ORDER_FILE, 8 * MIB, 4096, 2, &o), 0);
	CHECK(p.file_pages == 4 && p.file_bytes == 4 * 4096 && p.npieces == 3);
	order_cursor_init(&p, 0, &a);
	order_cursor_init(&p, 1, &b);
	CHECK(order_next(&p, &a, &gpa, &len, &ff) && gpa == 0x5000 && len == 0x2000 &&
	      ff);
	CHECK(order_next(&p, &b, &gpa, &len, &ff) && gpa == 0x1000 && len == 0x1000 &&
	      ff);
	CHECK(order_next(&p, &a, &gpa, &len, &ff) && gpa == 0x401000 && ff);
	/* The rest, chunk by chunk, skipping what the file's pieces claimed. */
	CHECK(order_next(&p, &b, &gpa, &len, &ff) && gpa == 0 && len == 0x1000 && !ff);
	CHECK(order_next(&p, &b, &gpa, &len, &ff) && gpa == 0x2000 && len == 0x3000);
	CHECK(order_next(&p, &b, &gpa, &len, &ff) && gpa == 0x7000);
	total = 0x2000 + 0x1000 + 0x1000 + 0x1000 + 0x3000 + len;
	while (order_next(&p, &a, &gpa, &len, &ff))
		total += len;
	while (order_next(&p, &b, &gpa, &len, &ff))
		total += len;
	CHECK_EQ(total, 8 * MIB); /* every page once */
	order_plan_free(&p);

	/* 2 MiB pages: the file's 4 KiB pages round out to the pages that hold them. */
	CHECK_EQ(order_plan_init(&p, EAGER_ORDER_FILE, 8 * MIB, 2 * MIB, 1, &o), 0);
	CHECK(p.file_pages == 2 && p.file_bytes == 4 * MIB);
	order_cursor_init(&p, 0, &a);
	CHECK(order_next(&p, &a, &gpa, &len, &ff) && gpa == 0 && len == 2 * MIB && ff);
	CHECK(order_next(&p, &a, &gpa, &len, &ff) && gpa == 4 * MIB && ff);
	CHECK(order_next(&p, &a, &gpa, &len, &ff) && gpa == 2 * MIB && !ff);
	order_plan_free(&p);
}

static void test_orders_named(void)
{
	CHECK_EQ(eager_order_of(NULL), EAGER_ORDER_FRONT);
	CHECK_EQ(eager_order_of("back"), EAGER_ORDER_BACK);
	CHECK_EQ(eager_order_of("frontier"), EAGER_ORDER_FRONTIER);
	CHECK_EQ(eager_order_of("file"), EAGER_ORDER_FILE); /* a file named "file" */
	CHECK_EQ(eager_order_of("/tmp/x.touch"), EAGER_ORDER_FILE);
	for (unsigned i = 0; i < EAGER_ORDER_COUNT; i++)
		CHECK_EQ(eager_orders[i].id, i);
}

static void test_coverage(void)
{
	uint64_t ns[4] = { 100, 300, 0, 200 }; /* 4 chunks of 2 MiB; chunk 2 never */
	struct cover_segment s[] = {
		{ 0, 3 * MIB, 250e-9 },	      /* chunk 0 before, chunk 1 after */
		{ 3 * MIB, 5 * MIB, 400e-9 }, /* chunks 1 and 3 before, 2 never */
	};
	struct coverage c;

	coverage_compute(ns, 4, 2 * MIB, s, 2, &c);
	CHECK_EQ(c.total, 8 * MIB);
	CHECK_EQ(c.covered, 2 * MIB + 1 * MIB + 2 * MIB);
	CHECK(c.fraction > 0.62 && c.fraction < 0.63);
	coverage_compute(ns, 4, 2 * MIB, s, 0, &c);
	CHECK(c.total == 0 && c.fraction == 0);
}

/*
 * The hostile sequence of issue 38 fed to the segments directly: two order
 * records for vCPU 0 and five points. Each order record makes a segment
 * between each two points (8), more than the np + no (7) run_coverage once
 * allocated: nothing may be written past the room it is given.
 */
static void test_cover_segments_bounded(void)
{
	struct mvm_rec_order o = { .vcpu = 0,
				   .workload = MVM_WL_FLAT,
				   .order = MVM_ORDER_SEQUENTIAL,
				   .start_gpa = 4 * MIB,
				   .end_gpa = 5 * MIB,
				   .progress_bytes = MIB / 4 };
	struct mvm_rec_order two[2] = { o, o };
	struct mvm_rec_progress p[5];
	double t[5];
	const size_t room = 5 + 2; /* np + no */
	struct cover_segment *seg = malloc((room + 4) * sizeof(*seg));

	CHECK(seg != NULL);
	if (!seg)
		return;
	for (unsigned i = 0; i < 5; i++) {
		p[i] = (struct mvm_rec_progress){ .vcpu = 0,
						  .iteration = 1,
						  .bytes_done = i * MIB / 4,
						  .bytes_total = MIB };
		t[i] = 1.0 + i;
	}
	for (size_t i = 0; i < room + 4; i++)
		seg[i] = (struct cover_segment){ 0xdead, 0xbeef, -1 }; /* the canary */
	CHECK_EQ(cover_segments(two, 2, p, t, 5, NULL, 0), 8);
	CHECK_EQ(cover_segments(two, 2, p, t, 5, seg, room), 8);
	for (size_t i = room; i < room + 4; i++)
		CHECK(seg[i].gpa == 0xdead && seg[i].bytes == 0xbeef && seg[i].t == -1);
	CHECK(seg[0].gpa == 4 * MIB && seg[0].bytes == MIB / 4 && seg[0].t == 1.0);
	CHECK(seg[4].gpa == 4 * MIB &&
	      seg[4].t == 1.0); /* the second order record's first */
	/* One order record: one segment between each two points, and a point without time left out. */
	t[2] = 0;
	CHECK_EQ(cover_segments(&o, 1, p, t, 5, seg, room), 3);
	CHECK(seg[1].gpa == 4 * MIB + MIB / 4 && seg[1].bytes == MIB / 2 &&
	      seg[1].t == 2.0);
	free(seg);
}

void test_eager_order(void)
{
	test_front_back();
	test_frontier();
	test_file();
	test_orders_named();
	test_coverage();
	test_cover_segments_bounded();
}
