/* Guest RAM: the host mapping, its memslot, and the one checked gpa -> hva translator. */
#ifndef MINIVMM_MM_H
#define MINIVMM_MM_H

#include <stddef.h>
#include <stdint.h>

struct guest_ram {
	uint8_t *hva;	    /* host mapping of guest-physical [0, size) */
	uint64_t size;	    /* bytes */
	uint64_t map_bytes; /* length of the host mapping (for munmap) */
};

/*
 * Map `size` bytes of anonymous, MAP_NORESERVE memory (nothing is backed
 * until touched). Returns 0 or -errno; on failure nothing is left mapped.
 */
int mm_ram_create(struct guest_ram *ram, uint64_t size);
void mm_ram_destroy(struct guest_ram *ram);

/* Register the whole of `ram` as memslot 0 at guest-physical 0. Returns 0 or -errno. */
int mm_memslot_register(int vm_fd, const struct guest_ram *ram);

/*
 * The host address of guest-physical [gpa, gpa + len), or NULL when any
 * byte of it lies outside guest RAM (overflow-checked). len may be 0.
 * Every host access to guest memory goes through here.
 */
static inline void *mm_gpa_to_hva(const struct guest_ram *ram, uint64_t gpa, uint64_t len)
{
	uint64_t end;

	if (__builtin_add_overflow(gpa, len, &end) || end > ram->size || gpa > ram->size)
		return NULL;
	return ram->hva + gpa;
}

#endif /* MINIVMM_MM_H */
