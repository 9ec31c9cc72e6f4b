/* Unit tests: the guest-physical to host translator's edges. */
#include "check.h"
#include "mm.h"

void test_gpa_translator(void)
{
	static uint8_t buf[8192];
	struct guest_ram ram = { .hva = buf,
				 .size = sizeof(buf),
				 .map_bytes = sizeof(buf) };

	CHECK(mm_gpa_to_hva(&ram, 0, 0) == buf);
	CHECK(mm_gpa_to_hva(&ram, 0, 8192) == buf);
	CHECK(mm_gpa_to_hva(&ram, 8191, 1) == buf + 8191);
	CHECK(mm_gpa_to_hva(&ram, 8192, 0) == buf + 8192); /* empty range at the end */
	CHECK(mm_gpa_to_hva(&ram, 8192, 1) == NULL);
	CHECK(mm_gpa_to_hva(&ram, 8191, 2) == NULL);
	CHECK(mm_gpa_to_hva(&ram, 0, 8193) == NULL);
	CHECK(mm_gpa_to_hva(&ram, 8193, 0) == NULL);
	CHECK(mm_gpa_to_hva(&ram, UINT64_MAX, 1) == NULL);
	CHECK(mm_gpa_to_hva(&ram, 1, UINT64_MAX) == NULL); /* wraps */
	CHECK(mm_gpa_to_hva(&ram, UINT64_MAX - 10, 20) == NULL);
}
