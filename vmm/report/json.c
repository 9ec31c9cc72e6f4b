/* A streaming JSON writer: correct escaping, commas and nesting, nothing more. */
#include "report.h"
#include "mm.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The length of the well-formed UTF-8 sequence at p (1 to 4 bytes), or 0
 * with *bad its maximal invalid part (at least 1 byte, never past a NUL):
 * overlong forms, surrogates and code points past U+10FFFF are invalid.
 */
static size_t utf8_seq(const unsigned char *p, size_t *bad)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else {
		*bad = 1;
		return 0;
	}
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* past U+10FFFF */
	for (size_t i = 1; i < n; i++) {
		if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf)) {
			*bad = i;
			return 0;
		}
	}
	return n;
}

int json_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, bad;

	for (; *p; p += n)
		if (!(n = utf8_seq(p, &bad)))
			return 0;
	return 1;
}

/* s as a JSON string: escapes, and U+FFFD for each maximal invalid part of its UTF-8. */
static void escaped(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, bad;

	fputc('"', f);
	for (; *p; p += n) {
		n = utf8_seq(p, &bad);
		if (!n) {
			fputs("\\ufffd", f);
			n = bad;
			continue;
		}
		if (n > 1) {
			fwrite(p, 1, n, f);
			continue;
		}
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

/* KEY_hex: the bytes of s in hex, for a string that is not UTF-8. */
static void hex_twin(struct json *j, const char *key, const char *s)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_hex", key ? key : "");
	member(j, key ? name : NULL);
	fputc('"', j->f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		fprintf(j->f, "%02x", *p);
	fputc('"', j->f);
}

void json_bytes(struct json *j, const char *key, const char *s)
{
	json_string(j, key, s);
	if (s && !json_utf8_valid(s))
		hex_twin(j, key, s);
}

void json_bytes_array(struct json *j, const char *key, char *const *v, int n)
{
	char name[64];
	int valid = 1;

	json_begin_array(j, key);
	for (int i = 0; i < n; i++) {
		json_string(j, NULL, v[i]);
		valid &= json_utf8_valid(v[i]);
	}
	json_end_array(j);
	if (valid)
		return;
	snprintf(name, sizeof(name), "%s_hex", key);
	json_begin_array(j, name);
	for (int i = 0; i < n; i++)
		hex_twin(j, NULL, v[i]);
	json_end_array(j);
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

void json_ns(struct json *j, const char *key, int64_t ns, uint64_t ns_per_unit)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	int decimals = 0;

	for (uint64_t u = ns_per_unit; u >= 10; u /= 10)
		decimals++;
	member(j, key);
	fprintf(j->f, "%s%" PRIu64, ns < 0 ? "-" : "", a / ns_per_unit);
	if (decimals)
		fprintf(j->f, ".%0*" PRIu64, decimals, a % ns_per_unit);
}

void json_ms(struct json *j, const char *key, double ms)
{
	if (ms >= 0)
		json_ms_signed(j, key, ms);
	else
		json_null(j, key);
}

void json_ms_signed(struct json *j, const char *key, double ms)
{
	if (isfinite(ms))
		json_ns(j, key, ns_of_ms(ms), NSEC_PER_MSEC);
	else
		json_null(j, key);
}

void json_seconds(struct json *j, const char *key, double s)
{
	if (isfinite(s))
		json_ns(j, key, ns_of_s(s), NSEC_PER_SEC);
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
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct json j = { .f = mem };
	int e = 0;

	if (!mem)
		return -errno;
	build(&j, arg);
	if (fclose(mem))
		e = -errno;
	if (!e)
		e = mm_write_all(fd, buf, len);
	free(buf);
	return e;
}
