/* A streaming JSON writer: correct escaping, commas and nesting, nothing more. */
#ifndef MINIVMM_JSON_H
#define MINIVMM_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	int count[JSON_MAX_DEPTH]; /* members written at each level */
};

/* key is NULL inside arrays and for the top-level value. */
void json_begin_object(struct json *j, const char *key);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);
void json_string(struct json *j, const char *key, const char *s);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v); /* non-finite: null */
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
/* A value already rendered as JSON (NULL or empty: null). */
void json_raw(struct json *j, const char *key, const char *value);

/*
 * Build a document with build(j, arg) in memory, then write all of it to
 * fd. Returns 0, or -errno of the write that failed (ENOSPC, EIO, ...).
 */
int json_write_fd(int fd, void (*build)(struct json *j, const void *arg),
		  const void *arg);

#endif /* MINIVMM_JSON_H */
