/* Unit test: spread_of's quartiles on the cases tests/fixtures/quantiles.tsv shares with scripts/mvmtools. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "measure.h"

#define FIXTURE	    "tests/fixtures/quantiles.tsv"
#define MAX_SAMPLES 64

/* Equal up to rounding: the fixture's values are exact, the code's are doubles. */
static int close_to(double got, double want)
{
	return got == want || fabs(got - want) <= 1e-12 * fmax(fabs(got), fabs(want));
}

/* One fixture line: name, samples, n, min, q1, median, q3, max. Returns 0 or -EINVAL. */
static int check_line(const char *path, char *line, int lineno)
{
	char *name = strtok(line, "\t"), *list = strtok(NULL, "\t"), *f[6], *end;
	double v[MAX_SAMPLES], want[6];
	unsigned n = 0;
	struct spread s;

	for (int i = 0; i < 6; i++)
		f[i] = strtok(NULL, "\t\n");
	if (!name || !list || !f[5])
		return -EINVAL;
	for (char *x = strtok(list, ","); x && n < MAX_SAMPLES; x = strtok(NULL, ",")) {
		v[n++] = strtod(x, &end);
		if (*end)
			return -EINVAL;
	}
	for (int i = 0; i < 6; i++) {
		want[i] = strtod(f[i], &end);
		if (*end)
			return -EINVAL;
	}
	spread_of(v, n, &s);
	if (s.n != (unsigned)want[0] || !close_to(s.min, want[1]) ||
	    !close_to(s.q1, want[2]) || !close_to(s.median, want[3]) ||
	    !close_to(s.q3, want[4]) || !close_to(s.max, want[5])) {
		fprintf(stderr,
			"    %s:%d (%s): spread_of gives n %u min %.17g q1 %.17g median %.17g q3 %.17g max %.17g\n",
			path, lineno, name, s.n, s.min, s.q1, s.median, s.q3, s.max);
		check_failures++;
	}
	return 0;
}

void test_quantile_fixture(void)
{
	const char *dir = getenv("MINIVMM_FIXTURES");
	char path[512], line[1024];
	int lineno = 0, cases = 0;
	FILE *f;

	if (dir)
		snprintf(path, sizeof(path), "%s/quantiles.tsv", dir);
	else
		snprintf(path, sizeof(path), "%s", FIXTURE);
	f = fopen(path, "r");
	CHECK(f != NULL); /* run from the top directory, or set MINIVMM_FIXTURES */
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n' || !strncmp(line, "name\t", 5))
			continue;
		if (check_line(path, line, lineno)) {
			fprintf(stderr, "    %s:%d: not a fixture line\n", path, lineno);
			check_failures++;
		}
		cases++;
	}
	fclose(f);
	CHECK(cases >= 10);
}
