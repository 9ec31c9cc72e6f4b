/* libFuzzer: the hypercall decoder against arbitrary guest memory and argument addresses. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"

#define RAM_BYTES (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t mem[RAM_BYTES];
	struct guest_ram ram = { .hva = mem,
				 .size = sizeof(mem),
				 .map_bytes = sizeof(mem) };
	static struct hc_call c;
	const union hc_args *out = &c.a;
	char err[256];
	uint64_t gpa;

	if (size < 8)
		return 0;
	memcpy(&gpa, data, sizeof(gpa));
	gpa &= 0xffffffff; /* one 32-bit OUT carries it */
	memset(mem, 0, sizeof(mem));
	/* The rest of the input is guest memory, placed where the guest says. */
	memcpy(mem + (gpa % RAM_BYTES), data + 8,
	       size - 8 < RAM_BYTES - gpa % RAM_BYTES ? size - 8
						      : RAM_BYTES - gpa % RAM_BYTES);
	if (hc_decode(&ram, 1 + data[0] % 4, gpa, &c, err, sizeof(err)) == 0) {
		/* Whatever decoded must name only guest memory. */
		if (out->hdr.nr == MVM_HC_CONSOLE &&
		    !mm_gpa_to_hva(&ram, out->console.buf_gpa, out->console.len))
			abort();
		if (out->hdr.nr == MVM_HC_ZERO)
			for (uint32_t i = 0; i < out->zero.count; i++)
				if (!mm_gpa_to_hva(&ram, c.runs[i].gpa,
						   c.runs[i].pages * MVM_PAGE_BYTES))
					abort();
		if (out->hdr.nr == MVM_HC_ABORT &&
		    (memchr(out->abort.msg, 0, sizeof(out->abort.msg)) == NULL ||
		     memchr(out->abort.file, 0, sizeof(out->abort.file)) == NULL))
			abort();
	} else if (!memchr(err, 0, sizeof(err)) || !err[0]) {
		abort(); /* a violation always says what it was */
	}
	return 0;
}
