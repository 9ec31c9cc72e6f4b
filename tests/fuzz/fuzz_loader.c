/* libFuzzer: the image checks on arbitrary files, RAM sizes and vCPU counts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mvm_image_header h;
	char err[256];
	uint32_t knobs = 0;
	uint64_t mem;
	unsigned vcpus;
	int r;

	if (size < 4)
		return 0;
	memcpy(&knobs, data, 4);
	mem = (uint64_t)(knobs & 0xffff) << 21; /* up to 128 GiB in 2 MiB steps */
	vcpus = (knobs >> 16) % 300 + 1;
	r = loader_check(data + 4, size - 4, mem, vcpus, &h, err, sizeof(err));
	if (r == 0) {
		/* Accepted: the image and its bss fit in RAM and the entry is in the file. */
		if (h.load_gpa != MVM_LOAD_GPA || h.end_gpa > mem ||
		    h.entry_gpa < MVM_LOAD_GPA ||
		    h.entry_gpa >= MVM_LOAD_GPA + (size - 4) || vcpus > h.max_vcpus)
			abort();
	} else if (!err[0]) {
		abort();
	}
	return 0;
}
