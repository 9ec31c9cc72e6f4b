/* Unit test: experiment_order's Williams rows on the cases tests/fixtures/williams.tsv shares with scripts/mvmtools. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "experiment.h"

#define FIXTURE	 "tests/fixtures/williams.tsv"
#define MAX_RUNS 256

/* One fixture line: n, rounds, the order. Returns 0 or -EINVAL. */
static int check_line(const char *path, char *line, int lineno)
{
	char *n_s = strtok(line, "\t"), *r_s = strtok(NULL, "\t"),
	     *list = strtok(NULL, "\t\n"), *end;
	unsigned want[MAX_RUNS], got[MAX_RUNS], n, rounds, k = 0;

	if (!n_s || !r_s || !list)
		return -EINVAL;
	n = (unsigned)strtoul(n_s, &end, 10);
	if (*end || !n)
		return -EINVAL;
	rounds = (unsigned)strtoul(r_s, &end, 10);
	if (*end || n * rounds > MAX_RUNS)
		return -EINVAL;
	for (char *x = strtok(list, " "); x && k < MAX_RUNS; x = strtok(NULL, " ")) {
		want[k++] = (unsigned)strtoul(x, &end, 10);
		if (*end)
			return -EINVAL;
	}
	if (k != n * rounds)
		return -EINVAL;
	experiment_order(n, rounds, 0, got);
	for (unsigned i = 0; i < k; i++)
		if (got[i] != want[i]) {
			fprintf(stderr,
				"    %s:%d: %u modes, %u rounds: run %u is mode %u, the fixture says %u\n",
				path, lineno, n, rounds, i + 1, got[i], want[i]);
			check_failures++;
			break;
		}
	return 0;
}

void test_williams_fixture(void)
{
	const char *dir = getenv("MINIVMM_FIXTURES");
	char path[512], line[2048];
	int lineno = 0, cases = 0;
	unsigned o[2 + 2 * 3];
	FILE *f;

	if (dir)
		snprintf(path, sizeof(path), "%s/williams.tsv", dir);
	else
		snprintf(path, sizeof(path), "%s", FIXTURE);
	f = fopen(path, "r");
	CHECK(f != NULL); /* run from the top directory, or set MINIVMM_FIXTURES */
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n' || !strncmp(line, "n\t", 2))
			continue;
		if (check_line(path, line, lineno)) {
			fprintf(stderr, "    %s:%d: not a fixture line\n", path, lineno);
			check_failures++;
		}
		cases++;
	}
	fclose(f);
	CHECK(cases >= 10);
	/* Warm-ups come first, cycling through the modes, and are not rounds. */
	experiment_order(3, 2, 2, o);
	CHECK(o[0] == 0 && o[1] == 1 && o[2] == 0 && o[3] == 1 && o[4] == 2 &&
	      o[5] == 1 && o[6] == 2 && o[7] == 0);
}
