/* A streaming JSON writer: correct escaping, commas and nesting, nothing more. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* A member's separator and indent: a new line at its depth, or (inside a flat object) a space. */
static void member(struct json *j, const char *key)
{
	int later = j->depth > 0 && j->count[j->depth - 1]++;

	if (later)
		fputc(',', j->f);
	if (j->flat && j->depth >= j->flat) {
		if (later)
			fputc(' ', j->f);
	} else if (j->depth > 0) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	if (key) {
		escaped(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_(struct json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH)
		j->count[j->depth] = 0;
	j->depth++;
}

static void close_(struct json *j, char c)
{
	j->depth--;
	if (j->flat && j->depth >= j->flat - 1) {
		if (j->depth == j->flat - 1)
			j->flat = 0; /* the flat object itself ends */
	} else if (j->depth < JSON_MAX_DEPTH && j->count[j->depth]) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void json_begin_object(struct json *j, const char *key)
{
	open_(j, key, '{');
}

void json_begin_flat_object(struct json *j, const char *key)
{
	open_(j, key, '{');
	if (!j->flat)
		j->flat = j->depth;
}

void json_end_object(struct json *j)
{
	close_(j, '}');
}

void json_begin_array(struct json *j, const char *key)
{
	open_(j, key, '[');
}

void json_end_array(struct json *j)
{
	close_(j, ']');
}

void json_string(struct json *j, const char *key, const char *s)
{
	member(j, key);
	if (s)
		escaped(j->f, s);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void json_double(struct json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.9g", v);
	else
		fputs("null", j->f);
}

void json_ms(struct json *j, const char *key, double ms)
{
	if (ms >= 0)
		json_double(j, key, ms);
	else
		json_null(j, key);
}

void json_bool(struct json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

int json_write_fd(int fd, void (*build)(struct json *j, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len = 0, off = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct json j = { .f = mem };
	int e = 0;

	if (!mem)
		return -errno;
	build(&j, arg);
	if (fclose(mem))
		e = -errno;
	while (!e && off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			e = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	free(buf);
	return e;
}
