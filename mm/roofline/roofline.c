/* This machine's populate ceilings, read from bench/roofline's TSV, and what they predict. */
#include "roofline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOFLINE_MAX_ROWS  256
#define ROOFLINE_MAX_BYTES (1 << 20)
#define GIB_F		   (1024.0 * 1024.0 * 1024.0)

struct roof_row {
	char backing[16];
	char op[16];
	unsigned threads;
	double gib_per_s;
	uint64_t bytes;	      /* the size it was measured at; 0: not said */
	double min_gib_per_s; /* its slowest run; 0: not said (an older file) */
};

struct mm_roofline {
	char source[MM_PATH_BYTES];
	unsigned n;
	struct roof_row row[ROOFLINE_MAX_ROWS];
};

/* Field i (0-based) of a tab-separated line, copied into buf. 0, or -1 if absent. */
static int field(const char *line, int i, char *buf, size_t len)
{
	const char *p = line, *e;

	for (; i > 0; i--) {
		p = strchr(p, '\t');
		if (!p)
			return -1;
		p++;
	}
	e = p + strcspn(p, "\t\n");
	if ((size_t)(e - p) >= len)
		return -1;
	memcpy(buf, p, (size_t)(e - p));
	buf[e - p] = '\0';
	return 0;
}

/* Column index of name in the header line, or -1. */
static int column(const char *header, const char *name)
{
	char buf[64];

	for (int i = 0; field(header, i, buf, sizeof(buf)) == 0; i++)
		if (!strcmp(buf, name))
			return i;
	return -1;
}

int mm_roofline_parse(const char *text, struct mm_roofline **out, char *err,
		      size_t errlen)
{
	struct mm_roofline *r = calloc(1, sizeof(*r));
	const char *header = NULL;
	int cb = -1, co = -1, ct = -1, cr = -1, cy = -1, cm = -1;
	unsigned lineno = 0;

	*out = NULL;
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char b[16], o[16], t[64], g[64], *end;
		struct roof_row *row;
		unsigned long th;
		double rate;

		lineno++;
		if (*p == '#' || *p == '\n')
			continue;
		if (!header) {
			header = p;
			cb = column(p, "backing");
			co = column(p, "op");
			ct = column(p, "threads");
			cr = column(p, "gib_per_s");
			cy = column(p, "bytes"); /* optional */
			cm = column(
				p,
				"min_gib_per_s"); /* optional: bench/roofline since round 4 */
			if (cb < 0 || co < 0 || ct < 0 || cr < 0) {
				snprintf(
					err, errlen,
					"line %u: the header lacks backing, op, threads or gib_per_s (not a bench/roofline file?)",
					lineno);
				goto bad;
			}
			continue;
		}
		if (field(p, cb, b, sizeof(b)) || field(p, co, o, sizeof(o)) ||
		    field(p, ct, t, sizeof(t)) || field(p, cr, g, sizeof(g))) {
			snprintf(err, errlen, "line %u: a column is missing or too long",
				 lineno);
			goto bad;
		}
		errno = 0;
		th = strtoul(t, &end, 10);
		if (errno || *end || !th || th > 4096) {
			snprintf(err, errlen, "line %u: threads '%s' is not a number",
				 lineno, t);
			goto bad;
		}
		rate = strtod(g, &end);
		if (*end || !(rate > 0) || rate > 1e15) {
			snprintf(err, errlen,
				 "line %u: gib_per_s '%s' is not a positive rate", lineno,
				 g);
			goto bad;
		}
		if (r->n == ROOFLINE_MAX_ROWS) {
			snprintf(err, errlen, "more than %d rows", ROOFLINE_MAX_ROWS);
			goto bad;
		}
		row = &r->row[r->n++];
		snprintf(row->backing, sizeof(row->backing), "%s", b);
		snprintf(row->op, sizeof(row->op), "%s", o);
		row->threads = (unsigned)th;
		row->gib_per_s = rate;
		if (cy >= 0 && !field(p, cy, t, sizeof(t)))
			row->bytes = strtoull(t, NULL, 10);
		if (cm >= 0 && !field(p, cm, g, sizeof(g)))
			row->min_gib_per_s = strtod(g, NULL);
	}
	if (!r->n) {
		snprintf(err, errlen, "no rows");
		goto bad;
	}
	*out = r;
	return 0;
bad:
	free(r);
	return -EINVAL;
}

int mm_roofline_load(const char *path, struct mm_roofline **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *text, why[200];
	size_t n;
	int r;

	*out = NULL;
	if (!f) {
		snprintf(err, errlen, "--roofline %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	text = malloc(ROOFLINE_MAX_BYTES + 1);
	if (!text) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n = fread(text, 1, ROOFLINE_MAX_BYTES, f);
	text[n] = '\0';
	fclose(f);
	r = mm_roofline_parse(text, out, why, sizeof(why));
	free(text);
	if (r) {
		snprintf(err, errlen, "--roofline %s: %s", path, why);
		return r;
	}
	snprintf((*out)->source, sizeof((*out)->source), "%s", path);
	return 0;
}

void mm_roofline_free(struct mm_roofline *r)
{
	free(r);
}

static const struct roof_row *find(const struct mm_roofline *r, const char *backing,
				   const char *op, unsigned threads)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->row[i].backing, backing) && !strcmp(r->row[i].op, op) &&
		    r->row[i].threads == threads)
			return &r->row[i];
	return NULL;
}

/* "1, 2": the thread counts the roofline has for backing and op. */
static void counts(const struct mm_roofline *r, const char *backing, const char *op,
		   char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < r->n && at < len; i++)
		if (!strcmp(r->row[i].backing, backing) && !strcmp(r->row[i].op, op))
			at += (size_t)snprintf(buf + at, len - at, "%s%u", at ? ", " : "",
					       r->row[i].threads);
}

void mm_roofline_ceiling(const struct mm_roofline *r, const char *backing,
			 unsigned threads, uint64_t bytes, uint64_t prezeroed,
			 struct mm_ceiling *c)
{
	uint64_t fresh = bytes - (prezeroed < bytes ? prezeroed : bytes);
	const char *need[2] = { fresh ? "clear" : NULL, bytes - fresh ? "map" : NULL };
	const struct roof_row *row[2] = { NULL, NULL };

	*c = (struct mm_ceiling){ 0 };
	snprintf(c->source, sizeof(c->source), "%s", r->source);
	c->op = fresh == bytes ? "clear" : fresh ? "mixed" : "map";
	for (int k = 0; k < 2; k++) {
		char have[64];

		if (!need[k])
			continue;
		row[k] = find(r, backing, need[k], threads);
		if (row[k])
			continue;
		counts(r, backing, need[k], have, sizeof(have));
		snprintf(c->missing, sizeof(c->missing),
			 "the roofline has no %s %s row for %u thread%s%s%s%s", backing,
			 need[k], threads, threads == 1 ? "" : "s",
			 have[0] ? " (it has " : "", have, have[0] ? ")" : "");
		return;
	}
	c->clear_gib_per_s = row[0] ? row[0]->gib_per_s : 0;
	c->map_gib_per_s = row[1] ? row[1]->gib_per_s : 0;
	c->row_bytes = row[0] ? row[0]->bytes : row[1]->bytes;
	c->lease_map_gib_per_s = mm_roofline_rate(r, "hugetlb2m", "map", threads);
	c->lease_clear_gib_per_s = mm_roofline_rate(r, "hugetlb2m", "clear", threads);
	c->free_page_reporting = mm_free_page_reporting(c->balloon, sizeof(c->balloon));
	c->min_gib_per_s = row[0] ? row[0]->min_gib_per_s : row[1]->min_gib_per_s;
	if (c->min_gib_per_s > (row[0] ? row[0] : row[1])->gib_per_s)
		c->min_gib_per_s = 0; /* not a rate below the ceiling: ignored */
	c->predicted_s =
		(row[0] ? (double)fresh / GIB_F / row[0]->gib_per_s : 0) +
		(row[1] ? (double)(bytes - fresh) / GIB_F / row[1]->gib_per_s : 0);
	c->gib_per_s = c->predicted_s > 0 ? (double)bytes / GIB_F / c->predicted_s : 0;
	c->found = bytes > 0;
}

double mm_roofline_rate(const struct mm_roofline *r, const char *backing, const char *op,
			unsigned threads)
{
	const struct roof_row *best = NULL;

	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->row[i].backing, backing) && !strcmp(r->row[i].op, op) &&
		    r->row[i].threads <= threads &&
		    (!best || r->row[i].threads > best->threads))
			best = &r->row[i];
	return best ? best->gib_per_s : 0;
}

#define VIRTIO_ID_BALLOON	   "0x0005"
#define VIRTIO_BALLOON_F_REPORTING 5

int mm_free_page_reporting(char *dev, size_t len)
{
	char path[96], text[512];
	int found = -1;

	dev[0] = '\0';
	for (int i = 0; i < 64 && found < 0; i++) {
		snprintf(path, sizeof(path), "/sys/bus/virtio/devices/virtio%d/device",
			 i);
		if (mm_read_text(path, text, sizeof(text)))
			continue;
		if (strncmp(text, VIRTIO_ID_BALLOON, strlen(VIRTIO_ID_BALLOON)))
			continue;
		/* features: one '0' or '1' per feature bit, bit 0 first. */
		snprintf(path, sizeof(path), "/sys/bus/virtio/devices/virtio%d/features",
			 i);
		if (mm_read_text(path, text, sizeof(text)) ||
		    strlen(text) <= VIRTIO_BALLOON_F_REPORTING)
			continue;
		found = text[VIRTIO_BALLOON_F_REPORTING] == '1';
		snprintf(dev, len, "virtio%d", i);
	}
	return found;
}
