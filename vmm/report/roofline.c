/* --roofline: eager populate against this machine's measured ceilings (mm/roofline/roofline.c). */
#include "report.h"

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

void roofline_report(const struct mm_ceiling *c, double gib_per_s, FILE *f)
{
	if (!c->found) {
		fprintf(f, "  roofline: no ceiling: %s\n", c->missing);
		return;
	}
	fprintf(f,
		"  roofline: %.2f GiB/s is %.0f%% of the %s ceiling, %.2f GiB/s (predicted %.3f s; %s)\n",
		gib_per_s, PERCENT * gib_per_s / c->gib_per_s, c->op, c->gib_per_s,
		c->predicted_s, c->source);
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
