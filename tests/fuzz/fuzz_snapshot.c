/*
 * libFuzzer: the snapshot state file's parser on arbitrary bytes. The
 * header's length and checksum are made right after the mutation (as a
 * writer would), so mutated sections reach the section parser and the
 * record checks instead of all stopping at the checksum.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t *copy =
		malloc(size / 8 * 8 + 8); /* the parser wants 8-aligned buffers */
	struct snap_view v;
	char err[256] = "";
	int r;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= sizeof(struct snap_header)) {
		struct snap_header *h = (struct snap_header *)copy;

		h->body_bytes = size - sizeof(*h);
		h->checksum = snap_state_checksum((const uint8_t *)copy, size);
	}
	r = snap_parse((const uint8_t *)copy, size, &v, err, sizeof(err));
	if (r == 0) {
		/* Accepted: every vCPU is there in order, every batch inside the buffer. */
		for (unsigned i = 0; i < v.hdr->nvcpus; i++)
			if (!v.vcpu[i] || v.vcpu[i]->index != i)
				abort();
		for (size_t i = 0; i < v.nbatches; i++)
			if ((const uint8_t *)v.batches[i].recs < (const uint8_t *)copy ||
			    (const uint8_t *)v.batches[i].recs +
					    (size_t)v.batches[i].count *
						    snap_record_size(v.batches[i].kind) >
				    (const uint8_t *)copy + size)
				abort();
		snap_view_free(&v);
	} else if (!err[0] && r != -ENOMEM) {
		abort();
	}
	free(copy);
	return 0;
}
