/* The first-touch order file: written after a --record-touch run, read back as GPA ranges. */
#include "paging.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_BYTES 256
#define CHUNK_BYTES    (64 * 1024)

/* --- writing --------------------------------------------------------------- */

struct out {
	int fd, err;
	char buf[CHUNK_BYTES];
	size_t n;
};

static void flush_out(struct out *o)
{
	if (!o->err)
		o->err = mm_write_all(o->fd, o->buf, o->n);
	o->n = 0;
}

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (o->n + LINE_MAX_BYTES > sizeof(o->buf))
		flush_out(o);
	va_start(ap, fmt);
	len = vsnprintf(o->buf + o->n, sizeof(o->buf) - o->n, fmt, ap);
	va_end(ap);
	if (len > 0)
		o->n += (size_t)len < sizeof(o->buf) - o->n ? (size_t)len : 0;
}

int touch_order_write(int fd, uint64_t ram_bytes, uint64_t page_bytes,
		      const struct uffd_touch *t, size_t n, uint64_t t0_ns,
		      const char *extra)
{
	struct out *o = malloc(sizeof(*o));
	int e;

	if (!o)
		return -ENOMEM;
	o->fd = fd;
	o->err = 0;
	o->n = 0;
	put(o,
	    "%s %d ram_bytes=%" PRIu64 " page_bytes=%" PRIu64
	    " pages=%zu clock=ns_since_exec%s\n",
	    TOUCH_ORDER_MAGIC, TOUCH_ORDER_VERSION, ram_bytes, page_bytes, n,
	    extra ? extra : "");
	for (size_t i = 0; i < n; i++)
		put(o, "0x%" PRIx64 " %" PRIu64 "\n", t[i].gpa,
		    t[i].t_ns > t0_ns ? t[i].t_ns - t0_ns : 0);
	put(o, "end %zu\n", n);
	flush_out(o);
	e = o->err;
	free(o);
	return e;
}

/* --- reading --------------------------------------------------------------- */

static int bad(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "%s: ", path);

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* "key=value" among the header's words: 0 with *v, -1 if absent or not a number. */
static int header_u64(const char *line, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	char *end;

	for (const char *p = line; (p = strstr(p, key)); p += klen) {
		if ((p != line && p[-1] != ' ') || p[klen] != '=')
			continue;
		errno = 0;
		*v = strtoull(p + klen + 1, &end, 10);
		return errno || end == p + klen + 1 || (*end != ' ' && *end != '\n') ? -1
										     : 0;
	}
	return -1;
}

/* A line of at most LINE_MAX_BYTES ending in '\n': 1, 0 at EOF, -1 if longer or unterminated. */
static int read_line(FILE *f, char *line)
{
	size_t len;

	if (!fgets(line, LINE_MAX_BYTES, f))
		return 0;
	len = strlen(line);
	return len && line[len - 1] == '\n' ? 1 : -1;
}

static int check_header(const char *path, const char *line, uint64_t ram_bytes,
			struct touch_order *o, char *err, size_t errlen)
{
	char magic[32];
	int version;

	if (sscanf(line, "%31s %d", magic, &version) != 2 ||
	    strcmp(magic, TOUCH_ORDER_MAGIC))
		return bad(err, errlen, path, "not a touch-order file (no '%s' header)",
			   TOUCH_ORDER_MAGIC);
	if (version != TOUCH_ORDER_VERSION)
		return bad(err, errlen, path,
			   "touch-order version %d; this minivmm reads %d", version,
			   TOUCH_ORDER_VERSION);
	if (header_u64(line, "ram_bytes", &o->ram_bytes) ||
	    header_u64(line, "page_bytes", &o->page_bytes) ||
	    header_u64(line, "pages", &o->pages))
		return bad(err, errlen, path,
			   "the header lacks ram_bytes=, page_bytes= or pages=");
	/*
	 * Recorded with less RAM: every page it names lies in its own RAM (the
	 * body is checked against that), so inside this run's too. With more,
	 * some may not.
	 */
	if (o->ram_bytes > ram_bytes)
		return bad(err, errlen, path,
			   "recorded with %" PRIu64
			   " MiB of guest RAM, more than this run's %" PRIu64
			   " MiB (--mem): run with --mem %" PRIu64
			   "M, or record again with --mem %" PRIu64 "M",
			   o->ram_bytes >> 20, ram_bytes >> 20, o->ram_bytes >> 20,
			   ram_bytes >> 20);
	if (!o->ram_bytes || o->page_bytes < 4096 ||
	    (o->page_bytes & (o->page_bytes - 1)) || ram_bytes % o->page_bytes ||
	    o->ram_bytes % o->page_bytes)
		return bad(err, errlen, path,
			   "page_bytes=%" PRIu64
			   " is not a power of two >= 4096 dividing the RAM",
			   o->page_bytes);
	if (o->pages > o->ram_bytes / o->page_bytes)
		return bad(err, errlen, path,
			   "pages=%" PRIu64 " is more than the %" PRIu64
			   " pages of guest RAM",
			   o->pages, o->ram_bytes / o->page_bytes);
	return 0;
}

static int add_page(struct touch_order *o, size_t *cap, uint64_t gpa)
{
	struct gpa_range *last = o->nranges ? &o->ranges[o->nranges - 1] : NULL;

	if (last && last->gpa + last->bytes == gpa) {
		last->bytes += o->page_bytes;
		return 0;
	}
	if (o->nranges == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct gpa_range *r = realloc(o->ranges, ncap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		o->ranges = r;
		*cap = ncap;
	}
	o->ranges[o->nranges++] = (struct gpa_range){ gpa, o->page_bytes };
	return 0;
}

/*
 * The body is read whole and parsed by hand: 1 GiB of RAM recorded is about
 * 260,000 lines (5.6 MB), which fgets and sscanf took 115 ms over, before
 * the guest could start; this takes a few.
 */
static char *read_rest(FILE *f, size_t max, size_t *len)
{
	size_t cap = 1 << 20, n = 0, got;
	char *buf = malloc(cap + 1), *grown;

	while (buf && n <= max && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n < cap || n > max)
			continue;
		cap *= 2;
		grown = realloc(buf, cap + 1);
		if (!grown)
			free(buf);
		buf = grown;
	}
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* The next line of [*p, end): its start with *next after its '\n', or NULL if none or too long. */
static const char *next_line(const char **p, const char *end, const char **next)
{
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));

	if (!nl || nl - s >= LINE_MAX_BYTES - 1)
		return NULL;
	*next = nl + 1;
	return s;
}

static unsigned digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (unsigned)(c - 'A' + 10);
	return 16;
}

/* Digits in base 16 or 10 at *s (at least one, no overflow): 0 with *s past them, or -1. */
static int digits(const char **s, unsigned base, uint64_t *v)
{
	const char *c = *s;
	unsigned d;

	for (*v = 0; (d = digit_value(*c)) < base; c++)
		if (__builtin_mul_overflow(*v, base, v) ||
		    __builtin_add_overflow(*v, d, v))
			return -1;
	if (c == *s)
		return -1;
	*s = c;
	return 0;
}

/* "0xGPA TIME\n" */
static int page_line(const char *s, uint64_t *gpa)
{
	uint64_t t;

	if (s[0] != '0' || s[1] != 'x')
		return -1;
	s += 2;
	if (digits(&s, 16, gpa) || *s != ' ')
		return -1;
	while (*s == ' ')
		s++;
	return digits(&s, 10, &t) || *s != '\n' ? -1 : 0;
}

static int read_body(FILE *f, const char *path, struct touch_order *o, char *err,
		     size_t errlen)
{
	/* check_header: page_bytes is a power of two dividing the RAM */
	unsigned shift = (unsigned)__builtin_ctzll(o->page_bytes);
	uint64_t npages = o->ram_bytes >> shift, gpa, pg, count;
	uint8_t *seen = calloc(npages / 8 + 1, 1);
	size_t cap = 0, len = 0;
	/* A longer file cannot be right: stop reading past what its lines can take. */
	char *text = seen ? read_rest(f, (o->pages + 1) * LINE_MAX_BYTES, &len) : NULL;
	const char *p, *end, *line, *next;
	int r = 0;
	char tail;

	if (!text) {
		free(seen);
		return -ENOMEM;
	}
	p = text;
	end = text + len;
	for (uint64_t i = 0; i < o->pages && !r; i++, p = next) {
		line = next_line(&p, end, &next);
		if (!line) {
			r = bad(err, errlen, path,
				"truncated: %" PRIu64 " of the %" PRIu64
				" pages the header announces",
				i, o->pages);
			break;
		}
		if (page_line(line, &gpa)) {
			int shown = next - line - 1 < 60 ? (int)(next - line - 1) : 60;

			r = bad(err, errlen, path,
				"line %" PRIu64 " is not 'GPA TIME': %.*s", i + 2, shown,
				line);
			break;
		}
		pg = gpa >> shift;
		if (gpa & (o->page_bytes - 1) || pg >= npages) {
			r = bad(err, errlen, path,
				"line %" PRIu64 ": GPA 0x%" PRIx64
				" is not a page of guest RAM (page-aligned, below 0x%" PRIx64
				")",
				i + 2, gpa, o->ram_bytes);
			break;
		}
		if (seen[pg / 8] & (1u << (pg % 8))) {
			r = bad(err, errlen, path,
				"line %" PRIu64 ": GPA 0x%" PRIx64 " appears twice",
				i + 2, gpa);
			break;
		}
		seen[pg / 8] |= (uint8_t)(1u << (pg % 8));
		r = add_page(o, &cap, gpa);
	}
	free(seen);
	if (!r) {
		line = next_line(&p, end, &next);
		if (!line || sscanf(line, "end %" SCNu64 "%c", &count, &tail) != 2 ||
		    tail != '\n')
			r = bad(err, errlen, path,
				"truncated or overlong: no 'end %" PRIu64
				"' line after the pages",
				o->pages);
		else if (count != o->pages)
			r = bad(err, errlen, path,
				"the end line counts %" PRIu64
				" pages, the header %" PRIu64,
				count, o->pages);
		else if (next != end)
			r = bad(err, errlen, path, "data after the end line");
	}
	free(text);
	return r;
}

int touch_order_read(const char *path, uint64_t ram_bytes, struct touch_order *o,
		     char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	*o = (struct touch_order){ 0 };
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	return touch_order_read_fd(fd, path, ram_bytes, o, err, errlen);
}

int touch_order_read_fd(int fd, const char *path, uint64_t ram_bytes,
			struct touch_order *o, char *err, size_t errlen)
{
	char line[LINE_MAX_BYTES];
	FILE *f = fdopen(fd, "re");
	int r;

	*o = (struct touch_order){ 0 };
	if (!f) {
		r = -errno;
		close(fd);
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	if (read_line(f, line) <= 0)
		r = bad(err, errlen, path, "empty, or no header line");
	else
		r = check_header(path, line, ram_bytes, o, err, errlen);
	if (!r)
		r = read_body(f, path, o, err, errlen);
	if (!r && ferror(f))
		r = bad(err, errlen, path, "read error");
	fclose(f);
	if (r)
		touch_order_free(o);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	return r;
}

void touch_order_free(struct touch_order *o)
{
	free(o->ranges);
	o->ranges = NULL;
	o->nranges = 0;
}
