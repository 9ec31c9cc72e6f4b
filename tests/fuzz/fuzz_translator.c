/* libFuzzer: the gpa -> hva translator never returns a range outside guest RAM. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "experiment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t v[3] = { 0 };
	struct guest_ram ram;
	uint8_t *p;

	memcpy(v, data, size < sizeof(v) ? size : sizeof(v));
	/* Guest RAM is at most MVM_MAX_MEM_BYTES and mapped, so hva + size never wraps. */
	ram = (struct guest_ram){ .hva = (uint8_t *)0x100000,
				  .size = v[2] % (MVM_MAX_MEM_BYTES + 1) };
	p = mm_gpa_to_hva(&ram, v[0], v[1]);
	if (p) {
		uint64_t off = (uint64_t)(p - ram.hva);

		if (off != v[0] || off > ram.size || v[1] > ram.size - off)
			abort();
	} else if (v[0] <= ram.size && v[1] <= ram.size - v[0]) {
		abort(); /* a valid range was refused */
	}
	return 0;
}
