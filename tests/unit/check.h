/* A minimal unit-test harness: CHECK records failures, tests register in a table. */
#ifndef MINIVMM_CHECK_H
#define MINIVMM_CHECK_H

#include <stdio.h>
#include <string.h>

extern int check_failures;

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "    %s:%d: CHECK(%s) failed\n", __FILE__, \
				__LINE__, #cond);                                  \
			check_failures++;                                          \
		}                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                            \
	do {                                                                      \
		unsigned long long a_ = (unsigned long long)(a);                  \
		unsigned long long b_ = (unsigned long long)(b);                  \
		if (a_ != b_) {                                                   \
			fprintf(stderr,                                           \
				"    %s:%d: %s == %s failed: 0x%llx != 0x%llx\n", \
				__FILE__, __LINE__, #a, #b, a_, b_);              \
			check_failures++;                                         \
		}                                                                 \
	} while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                \
	do {                                                                           \
		if (!strstr((hay), (needle))) {                                        \
			fprintf(stderr, "    %s:%d: \"%s\" does not contain \"%s\"\n", \
				__FILE__, __LINE__, (hay), (needle));                  \
			check_failures++;                                              \
		}                                                                      \
	} while (0)

#define T(name) void test_##name(void);
#include "unit_list.h"
#undef T

struct unit_test {
	const char *name;
	void (*fn)(void);
};

#endif /* MINIVMM_CHECK_H */
