/* Unit tests of pure VMM logic: no /dev/kvm needed. */
#include "check.h"

int check_failures;

static const struct unit_test tests[] = {
#define T(name) { #name, test_##name },
#include "unit_list.h"
#undef T
};

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int before = check_failures;

		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		tests[i].fn();
		if (check_failures == before) {
			printf("PASS unit/%s\n", tests[i].name);
			passed++;
		} else {
			printf("FAIL unit/%s\n", tests[i].name);
			failed++;
		}
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
