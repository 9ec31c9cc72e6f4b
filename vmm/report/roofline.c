/* --roofline: eager populate against this machine's measured ceilings (mm/roofline/roofline.c). */
#include "report.h"

#include <string.h>

#define PREDICT_MIN_BYTES (1ULL << 30) /* shorter ones are over before anyone waits */
#define PERCENT		  100.0

void roofline_predict_print(const struct mm_ceiling *c, uint64_t bytes, unsigned threads,
			    const char *backing, FILE *f)
{
	char size[FMT_BYTES];

	if (!c->found || bytes <= PREDICT_MIN_BYTES)
		return;
	fprintf(f,
		"eager: predicted %.2f s for %s of %s with %u thread%s (roofline %s: %s at %.2f GiB/s)\n",
		c->predicted_s, fmt_size(size, (double)bytes), backing, threads,
		threads == 1 ? "" : "s", c->source, c->op, c->gib_per_s);
	fflush(f);
}

#define FAR_BELOW_PERCENT 50.0	/* under it: say why it may be, and what to do */
#define FAR_ABOVE_PERCENT 150.0 /* over it: the ceiling was measured too low */
#define UNLIKE_SIZE_RATIO \
	2 /* a ceiling measured at a size this far off: not like for like */

/* The command that measures this population's ceiling like for like. */
static void like_for_like(uint64_t bytes, const char *backing, unsigned threads, FILE *f)
{
	fprintf(f,
		"build/bench/roofline --size %lluM --backings %s --threads %u -o FILE (each run a process of its own, just before the guest)",
		(unsigned long long)(bytes >> 20), backing, threads);
}

void roofline_report(const struct mm_ceiling *c, double gib_per_s, uint64_t bytes,
		     const char *backing, unsigned threads, FILE *f)
{
	char a[FMT_BYTES], b[FMT_BYTES];
	double pct;
	int unlike;

	if (!c->found) {
		fprintf(f, "  roofline: no ceiling: %s\n", c->missing);
		return;
	}
	pct = PERCENT * gib_per_s / c->gib_per_s;
	fprintf(f,
		"  roofline: %.2f GiB/s is %.0f%% of the %s ceiling, %.2f GiB/s (predicted %s; %s)\n",
		gib_per_s, pct, c->op, c->gib_per_s, fmt_duration(a, c->predicted_s),
		c->source);
	unlike = c->row_bytes && (bytes > UNLIKE_SIZE_RATIO * c->row_bytes ||
				  bytes * UNLIKE_SIZE_RATIO < c->row_bytes);
	if (unlike) {
		fprintf(f,
			"  roofline: not like for like: the ceiling was measured at %s, this populate was %s; measure it at this size: ",
			fmt_size(a, (double)c->row_bytes), fmt_size(b, (double)bytes));
		like_for_like(bytes, backing, threads, f);
		fputc('\n', f);
	}
	/* Far below a map ceiling is the fixed cost of a tiny populate, not memory: unsaid. */
	if (pct < FAR_BELOW_PERCENT && !strcmp(c->op, "clear")) {
		fprintf(f, "  roofline: far below the ceiling");
		if (c->min_gib_per_s > 0 && gib_per_s >= c->min_gib_per_s * 0.9)
			fprintf(f, ", within the roofline's own runs (%.2f-%.2f GiB/s)",
				c->min_gib_per_s, c->gib_per_s);
		if (c->free_page_reporting == 1)
			fprintf(f,
				". This machine's balloon (%s) hands memory a process freed back to its host (free page reporting; docs/PLATFORM.md, \"Fourth look\"): memory freed seconds ago must be backed by the host again, so fresh populates here swing from run to run.",
				c->balloon);
		else
			fprintf(f,
				". Something else held the machine's memory or CPUs meanwhile (%s).",
				c->free_page_reporting == 0
					? "its balloon reports no free pages to a host"
					: "there is no virtio balloon here");
		fprintf(f, " Measure the ceiling like for like: ");
		if (unlike)
			fprintf(f, "the command above");
		else
			like_for_like(bytes, backing, threads, f);
		fprintf(f,
			"; or use memory that stays backed: a hugetlb pool (--backing hugetlb2m) or a reservoir\n");
	} else if (pct > FAR_ABOVE_PERCENT) {
		fprintf(f,
			"  roofline: above the ceiling: it was measured slower than this machine goes (while something else ran, or in memory its host had to back); measure it again: ");
		like_for_like(bytes, backing, threads, f);
		fputc('\n', f);
	}
}

void roofline_write_json(const struct mm_ceiling *c, double gib_per_s, struct json *j)
{
	json_begin_object(j, "roofline");
	json_bytes(j, "file", c->source);
	json_bool(j, "found", c->found);
	if (c->found) {
		json_string(j, "op", c->op);
		json_double(j, "clear_gib_per_s", c->clear_gib_per_s);
		json_double(j, "map_gib_per_s", c->map_gib_per_s);
		json_double(j, "ceiling_gib_per_s", c->gib_per_s);
		json_double(j, "predicted_s", c->predicted_s);
		json_double(j, "gib_per_s", gib_per_s);
		json_double(j, "percent_of_ceiling", PERCENT * gib_per_s / c->gib_per_s);
	} else {
		json_string(j, "missing", c->missing);
	}
	json_end_object(j);
}
