/* Spreads of repeated measurements: median, quartiles (R's type 7), min and max. */
#include "measure.h"

#include <stdlib.h>
#include <string.h>

/*
 * Shell sort, not qsort(3): glibc's qsort asks the kernel for the machine's
 * memory (sysinfo) once the array passes 1 KiB, a call the sandboxed main
 * thread may not make. n is at most a few thousand.
 */
static void sort(double *v, unsigned n)
{
	static const unsigned gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };

	for (size_t g = 0; g < ARRAY_SIZE(gaps); g++)
		for (unsigned i = gaps[g]; i < n; i++) {
			double x = v[i];
			unsigned j = i;

			for (; j >= gaps[g] && v[j - gaps[g]] > x; j -= gaps[g])
				v[j] = v[j - gaps[g]];
			v[j] = x;
		}
}

/* Quantile q of sorted v[0..n-1], linear between order statistics (R's type 7). */
static double quantile(const double *v, unsigned n, double q)
{
	double pos = q * (n - 1);
	unsigned lo = (unsigned)pos;

	return lo + 1 < n ? v[lo] + (pos - lo) * (v[lo + 1] - v[lo]) : v[n - 1];
}

void spread_of(const double *samples, unsigned n, struct spread *s)
{
	double *v;

	memset(s, 0, sizeof(*s));
	s->n = n;
	if (!n || !(v = malloc(n * sizeof(*v)))) {
		s->n = 0;
		return;
	}
	memcpy(v, samples, n * sizeof(*v));
	sort(v, n);
	s->min = v[0];
	s->max = v[n - 1];
	s->median = quantile(v, n, 0.5);
	s->q1 = quantile(v, n, 0.25);
	s->q3 = quantile(v, n, 0.75);
	free(v);
}

int spreads_overlap(const struct spread *a, const struct spread *b)
{
	return a->n && b->n && a->min <= b->max && b->min <= a->max;
}
