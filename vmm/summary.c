/* Numbers for people: spreads of repeated measurements and values that never print as 0.000. */
#include "vmm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

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

void spread_write_json(const struct spread *s, struct json *j, const char *key)
{
	json_begin_object(j, key);
	json_u64(j, "n", s->n);
	if (s->n) {
		json_double(j, "median", s->median);
		json_double(j, "min", s->min);
		json_double(j, "max", s->max);
		json_double(j, "q1", s->q1);
		json_double(j, "q3", s->q3);
	}
	json_end_object(j);
}

const char *fmt_value(char buf[FMT_BYTES], double v, int decimals)
{
	/* A count: whole, or a median halfway between two. */
	if (decimals == 0) {
		snprintf(buf, FMT_BYTES, v == (double)(long long)v ? "%.0f" : "%.1f", v);
		return buf;
	}
	/* Enough decimals for two significant digits: a measured value never reads 0.000. */
	if (v != 0 && isfinite(v))
		while (decimals < 9 && fabs(v) < 10 * pow(10, -decimals))
			decimals++;
	snprintf(buf, FMT_BYTES, "%.*f", decimals, v);
	return buf;
}

const char *fmt_spread(char buf[FMT_SPREAD_BYTES], const struct spread *s, int decimals)
{
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES];

	if (!s->n)
		snprintf(buf, FMT_SPREAD_BYTES, "-");
	else if (s->n == 1)
		snprintf(buf, FMT_SPREAD_BYTES, "%s", fmt_value(a, s->median, decimals));
	else
		snprintf(buf, FMT_SPREAD_BYTES, "%s [%s-%s]",
			 fmt_value(a, s->median, decimals),
			 fmt_value(b, s->min, decimals), fmt_value(c, s->max, decimals));
	return buf;
}

/* Print text from column `indent` (the first line's indent is already out), wrapped at width. */
void print_wrapped(FILE *f, const char *text, int indent, int width)
{
	int col = indent;

	while (*text) {
		int word = (int)strcspn(text, " ");

		if (col > indent && col + 1 + word > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", word, text);
		col += word;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}
