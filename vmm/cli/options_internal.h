/*
 * The command line's own helpers, private to vmm/cli/options*.c: options.c (the
 * option table and the parse) and options_check.c (the checks of the options
 * together, once all are parsed), which calls nothing in options.c.
 */
#ifndef MINIVMM_OPTIONS_INTERNAL_H
#define MINIVMM_OPTIONS_INTERNAL_H

#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#define UFFD_DELAY_UNSET UINT_MAX /* no --uffd-delay-us: 0, and no --paging uffd needed */
/* No --numa-policy: bind, and no --numa needed. */
#define NUMA_POLICY_UNSET NUMA_POLICY_COUNT

/* The one message for a bad command line, on stderr. -EINVAL. */
static inline int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "minivmm: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'minivmm --help'.\n");
	return -EINVAL;
}

/*
 * The multiple of unit nearest bytes from below (up: from above, and never
 * below the minimum) as --mem writes it: "64M", "2G". buf.
 */
static inline const char *mem_arg(char *buf, size_t len, uint64_t bytes, uint64_t unit,
				  int up)
{
	uint64_t v = bytes / unit * unit + (up && bytes % unit ? unit : 0);

	if (v < MVM_MIN_MEM_BYTES)
		v = (MVM_MIN_MEM_BYTES + unit - 1) / unit * unit;
	if (v % (1ULL << 30) == 0)
		snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
	else
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	return buf;
}

/*
 * The options against each other, once all are parsed (before the guest
 * image and its arguments are looked at): sets the defaults that depend on
 * others (--numa-policy, --uffd-delay-us, --uffd-threads). 0, or -EINVAL
 * with the message said.
 */
int options_check(struct config *cfg);

#endif
