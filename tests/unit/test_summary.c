/* Unit tests: spreads of repeated runs, number formatting, and --compare's verdict. */
#include <math.h>

#include "check.h"
#include "report.h"

void test_spread(void)
{
	double v[] = { 5, 1, 4, 2, 3 }, big[300];
	struct spread s, t;
	char buf[FMT_BYTES], sp[FMT_SPREAD_BYTES];

	spread_of(v, 5, &s);
	CHECK(s.n == 5 && s.median == 3 && s.min == 1 && s.max == 5 && s.q1 == 2 &&
	      s.q3 == 4);
	spread_of(v, 4, &s); /* 5 1 4 2: even count, median between the middle two */
	CHECK(s.median == 3 && s.q1 == 1.75 && s.q3 == 4.25);
	spread_of(v, 0, &s);
	CHECK(s.n == 0);
	for (unsigned i = 0; i < 300; i++)
		big[i] = 300 - i; /* more than qsort's 1 KiB threshold: our own sort */
	spread_of(big, 300, &s);
	CHECK(s.min == 1 && s.max == 300 && s.median == 150.5);

	spread_of(v, 2, &s);	 /* [1, 5] */
	spread_of(v + 2, 2, &t); /* [2, 4] */
	CHECK(spreads_overlap(&s, &t));
	t = (struct spread){ .n = 1, .median = 6, .min = 6, .max = 6 };
	CHECK(!spreads_overlap(&s, &t));

	/* A measured value never prints as 0.000; counts print whole. */
	CHECK(!strcmp(fmt_value(buf, 0.0004, 3), "0.00040"));
	CHECK(!strcmp(fmt_value(buf, 0.123456, 3), "0.123"));
	CHECK(!strcmp(fmt_value(buf, 12.5, 1), "12.5"));
	CHECK(!strcmp(fmt_value(buf, 0.04, 1), "0.040"));
	CHECK(!strcmp(fmt_value(buf, 7, 0), "7"));
	CHECK(!strcmp(fmt_value(buf, 7.5, 0), "7.5"));
	spread_of(v, 5, &s);
	CHECK(!strcmp(fmt_spread(sp, &s, 1), "3.0 [1.0-5.0]"));
}

static struct run_facts facts(double setup, double eager, double pass, double fuw)
{
	return (struct run_facts){ .s.ms = { [SUM_SETUP] = setup,
					     [SUM_EAGER] = eager,
					     [SUM_FIRST_PASS] = pass,
					     [SUM_FIRST_USEFUL_WORK] = fuw,
					     [SUM_TOTAL] = fuw + 1 },
				   .touched_bytes = 1 << 30,
				   .ram_bytes = 4.0 * (1 << 30),
				   .pf_taken = -1,
				   .uffd_faults = -1,
				   .uffd_p50_ns = -1 };
}

void test_verdict(void)
{
	struct run_facts lazy[3] = { facts(3, -1, 1000, 1100), facts(3, -1, 1100, 1200),
				     facts(3, -1, 900, 1000) };
	struct run_facts eager[3] = { facts(400, 390, 100, 600),
				      facts(410, 400, 110, 620),
				      facts(390, 380, 90, 580) };
	struct verdict v;

	compare_verdict(lazy, eager, 3, &v);
	CHECK(v.pairs == 3 && v.have_work);
	CHECK(v.eager_cost_ms.median == 390 && v.first_pass_lazy_ms.median == 1000);
	CHECK(v.saved_ms == 900 && v.saved_conclusive);
	CHECK(!strcmp(v.sooner, "eager") && v.sooner_conclusive);
	/* Pair 0: 390 ms up front against 900 ms saved per GiB touched, 4 GiB of RAM. */
	CHECK(v.break_even.n == 3 &&
	      fabs(v.break_even.median - 390.0 / (900.0 * 4)) < 1e-9);
	CHECK(v.above_all == 0);
	/* 5 s up front against 0.9 s saved per GiB of 4 GiB: above 100%, never pays off. */
	eager[1].s.ms[SUM_EAGER] = 5000;
	compare_verdict(lazy, eager, 3, &v);
	CHECK(v.above_all == 1 && v.break_even.max > 1);
	eager[1].s.ms[SUM_EAGER] = 400;

	/* Overlapping spreads: the verdict may not pick a side. */
	eager[0].s.ms[SUM_FIRST_USEFUL_WORK] = 1150;
	eager[1].s.ms[SUM_FIRST_USEFUL_WORK] = 950;
	eager[2].s.ms[SUM_FIRST_USEFUL_WORK] = 1050;
	compare_verdict(lazy, eager, 3, &v);
	CHECK(!v.sooner_conclusive);

	/* Eager that saves nothing never breaks even. */
	for (int i = 0; i < 3; i++)
		eager[i].s.ms[SUM_FIRST_PASS] = lazy[i].s.ms[SUM_FIRST_PASS] + 5;
	compare_verdict(lazy, eager, 3, &v);
	CHECK(v.break_even.n == 0 && v.never == 3);

	/* A run interrupted before its guest ran measured no setup: left out, never a -1 in a spread. */
	eager[2].s.ms[SUM_SETUP] = -1;
	eager[2].s.ms[SUM_EAGER] = -1;
	compare_verdict(lazy, eager, 3, &v);
	CHECK(v.setup_eager_ms.n == 2 && v.setup_eager_ms.min == 400);
	CHECK(v.eager_cost_ms.n == 2 && v.eager_cost_ms.min == 390);
}

/* --compare's ranking: by median first useful work, how sure each step is, modes without work last. */
void test_ranking(void)
{
	struct run_facts a[3] = { facts(3, -1, 100, 500), facts(3, -1, 110, 520),
				  facts(3, -1, 90, 480) };
	struct run_facts b[3] = { facts(300, 290, 10, 350), facts(310, 300, 11, 360),
				  facts(290, 280, 9, 340) };
	struct run_facts c[3] = { facts(3, -1, 120, 510), facts(3, -1, 130, 530),
				  facts(3, -1, 100, 470) };
	struct run_facts d[1] = { facts(3, -1, -1, -1) };
	const struct run_facts *fs[] = { a, b, c, d };
	const char *names[] = { "lazy", "eager", "uffd", "none" };
	unsigned n[] = { 3, 3, 3, 1 };
	struct ranking r;

	for (int i = 0; i < 3; i++) {
		a[i].pf_taken = 2000;
		c[i].uffd = 1;
		c[i].uffd_faults = 2000 + i;
		c[i].uffd_p50_ns = 1500;
	}
	compare_rank(fs, n, names, 4, &r);
	CHECK(r.n == 4);
	CHECK(!strcmp(r.row[0].mode, "eager") && !strcmp(r.row[1].mode, "lazy") &&
	      !strcmp(r.row[2].mode, "uffd") && !strcmp(r.row[3].mode, "none"));
	CHECK(r.row[0].conclusive_vs_next && r.row[0].ahead_ms == 150);
	/* lazy 480-520 and uffd 470-530 overlap: inconclusive, medians 10 ms apart. */
	CHECK(!r.row[1].conclusive_vs_next && r.row[1].ahead_ms == 10);
	CHECK(r.row[1].pf_taken.n == 3 && r.row[1].pf_taken.median == 2000);
	CHECK(r.row[0].pf_taken.n == 0); /* -1: not measured, left out */
	CHECK(r.row[2].uffd && r.row[2].uffd_faults.median == 2001 &&
	      r.row[2].uffd_p50_ns.median == 1500 && !r.row[0].uffd);
	CHECK(!r.row[3].have_work && !r.row[2].conclusive_vs_next);
	CHECK(r.row[0].setup_ms.median == 300 && r.row[0].first_pass_ms.median == 10);

	/* One run each: no spread, so never conclusive; equal medians keep the given order. */
	n[0] = n[1] = n[2] = 1;
	b[0].s.ms[SUM_FIRST_USEFUL_WORK] = 500;
	compare_rank(fs, n, names, 3, &r);
	CHECK(!strcmp(r.row[0].mode, "lazy") && !strcmp(r.row[1].mode, "eager") &&
	      !r.row[0].conclusive_vs_next && r.row[0].ahead_ms == 0);
	CHECK(!strcmp(r.row[2].mode, "uffd") && r.row[1].ahead_ms == 10);
}
