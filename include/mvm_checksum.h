/* The snapshot point's memory checksum, one definition for both guests (guest/snapshot.c, guest/linux/snappoint.c). */
#ifndef MINIVMM_CHECKSUM_H
#define MINIVMM_CHECKSUM_H

#include <stdint.h>

#define MVM_CHECKSUM_PAGE  4096UL
#define MVM_CHECKSUM_WORDS (MVM_CHECKSUM_PAGE / sizeof(uint64_t))
#define MVM_FNV_BASIS	   0xcbf29ce484222325ULL
#define MVM_FNV_PRIME	   0x100000001b3ULL

/*
 * Words 1 .. 511 of every page of [p, p + bytes), each hashed with its
 * place: the passes write word 0 (flat 0xfe, perm its pass's value), so the
 * rest of a page is what the snapshot must bring back as it was.
 */
static inline uint64_t mvm_pages_checksum(const volatile char *p, uint64_t bytes)
{
	uint64_t h = MVM_FNV_BASIS;

	for (uint64_t off = 0; off < bytes; off += MVM_CHECKSUM_PAGE) {
		const volatile uint64_t *w = (const volatile uint64_t *)(p + off);

		for (uint64_t i = 1; i < MVM_CHECKSUM_WORDS; i++)
			h = (h ^ (w[i] + off + i)) * MVM_FNV_PRIME;
	}
	return h;
}

#endif /* MINIVMM_CHECKSUM_H */
