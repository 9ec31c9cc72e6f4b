/* Numbers for people: values that never print as 0.000, spreads, wrapped text. */
#include "report.h"

#include <math.h>
#include <string.h>

static void spread_json(const struct spread *s, struct json *j, const char *key,
			void (*value)(struct json *j, const char *key, double v))
{
	json_begin_object(j, key);
	json_u64(j, "n", s->n);
	if (s->n) {
		value(j, "median", s->median);
		value(j, "min", s->min);
		value(j, "max", s->max);
		value(j, "q1", s->q1);
		value(j, "q3", s->q3);
	}
	json_end_object(j);
}

void spread_write_json(const struct spread *s, struct json *j, const char *key)
{
	spread_json(s, j, key, json_double);
}

void spread_write_json_ms(const struct spread *s, struct json *j, const char *key)
{
	spread_json(s, j, key, json_ms_signed);
}

void spread_write_json_s(const struct spread *s, struct json *j, const char *key)
{
	spread_json(s, j, key, json_seconds);
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

const char *fmt_duration(char buf[FMT_BYTES], double seconds)
{
	char v[FMT_BYTES];

	fmt_value(v, seconds * 1e3, 1);
	v[FMT_BYTES - 4] = '\0'; /* room for " ms" */
	/* Under a second in ms, as the summary line prints eager: the same number reads the same. */
	if (seconds < 1)
		snprintf(buf, FMT_BYTES, "%.28s ms", v);
	else
		snprintf(buf, FMT_BYTES, "%.3f s", seconds);
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

const char *fmt_size(char buf[FMT_BYTES], double bytes)
{
	if (bytes >= BYTES_PER_GIB)
		snprintf(buf, FMT_BYTES, "%.2f GiB", bytes / BYTES_PER_GIB);
	else if (bytes >= BYTES_PER_MIB)
		snprintf(buf, FMT_BYTES,
			 fmod(bytes, BYTES_PER_MIB) ? "%.1f MiB" : "%.0f MiB",
			 bytes / BYTES_PER_MIB);
	else if (bytes > 0)
		snprintf(buf, FMT_BYTES, "%.0f KiB", bytes / 1024);
	else
		snprintf(buf, FMT_BYTES, "0 bytes");
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
