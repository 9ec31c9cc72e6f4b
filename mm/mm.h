/* Guest RAM: backends, the memslot, eager population, and the one gpa -> hva translator. */
#ifndef MINIVMM_MM_H
#define MINIVMM_MM_H

#include <stddef.h>
#include <stdint.h>

#include "kvm_compat.h"

struct mm_backend;

struct guest_ram {
	uint8_t *hva;	/* host mapping of guest-physical [0, size), page-aligned */
	uint64_t size;	/* bytes */
	void *map_base; /* what to munmap (may start below hva for alignment) */
	uint64_t map_bytes;
	int fd; /* memfd backing, or -1 */
	const struct mm_backend *backend;
};

/*
 * A way to back guest RAM. Every backend has one creation path,
 * mm_ram_create(). mm_backends[] has one row per enum value, in enum order:
 * its length is checked against MM_BACKING_COUNT at compile time (backend.c)
 * and each row's id against its index by the unit tests. --help, the option
 * errors and the docs' lists come from the table.
 */
enum mm_backing {
	MM_ANON,
	MM_THP,
	MM_HUGETLB2M,
	MM_HUGETLB1G,
	MM_MEMFD,
	MM_BACKING_COUNT
};

struct mm_backend {
	enum mm_backing id;
	const char *name;
	const char *help;	   /* one line for --help and the docs */
	uint64_t page_bytes;	   /* host page size: guest RAM is a multiple of it */
	const char *hugetlb_sysfs; /* pool directory for hugetlb backends, else NULL */
	/* Map size bytes into ram (hva, map_base, map_bytes, fd). 0 or -errno. */
	int (*map)(struct guest_ram *ram, uint64_t size);
};

extern const struct mm_backend mm_backends[];
const struct mm_backend *mm_backend_find(const char *name); /* NULL if unknown */

/*
 * Map size bytes of guest RAM from backend b. Nothing is backed until
 * touched (hugetlb pools are reserved). Returns 0, or -errno with a
 * message in err; on failure nothing is left mapped.
 */
int mm_ram_create(struct guest_ram *ram, const struct mm_backend *b, uint64_t size,
		  char *err, size_t errlen);
void mm_ram_destroy(struct guest_ram *ram);

/*
 * Can the host back size bytes with b right now (MemAvailable, or free pages
 * in the hugetlb pool)? 0, or -ENOMEM with the numbers in err.
 */
int mm_ram_check_capacity(const struct mm_backend *b, uint64_t size, char *err,
			  size_t errlen);
/* Field KEY ("MemTotal") in bytes from the text of /proc/meminfo; 0 when absent. */
uint64_t mm_meminfo_bytes(const char *meminfo, const char *key);
uint64_t mm_meminfo_available(const char *meminfo); /* MemAvailable */

/* Bytes of guest RAM resident in host memory now (mincore). -errno on failure. */
int64_t mm_resident_bytes(const struct guest_ram *ram);

/*
 * Back [hva, hva + len) with host memory for writing. Uses
 * MADV_POPULATE_WRITE; where the kernel lacks it, sets *fell_back and writes
 * one byte per page instead. Returns 0 or -errno.
 */
int mm_populate_range(uint8_t *hva, uint64_t len, uint64_t page_bytes, int *fell_back);

/* KVM_PRE_FAULT_MEMORY, injectable for tests. Returns like ioctl(2). */
typedef int (*prefault_ioctl_fn)(int vcpu_fd, struct kvm_pre_fault_memory *range);
int mm_prefault_ioctl(int vcpu_fd, struct kvm_pre_fault_memory *range);

struct prefault_stats {
	uint64_t bytes;	  /* pre-faulted */
	unsigned calls;	  /* ioctls made */
	unsigned retries; /* EINTR/EAGAIN */
};

#define PREFAULT_MAX_STUCK 1000 /* EINTR/EAGAIN in a row without progress */

/*
 * Build the second-level entries for [gpa, gpa + size) through vcpu_fd: call
 * until size shrinks to 0, retrying EINTR/EAGAIN (KVM reports partial
 * progress by advancing gpa and shrinking size). Returns 0 or -errno:
 * -ENOENT means the range left the memslots (a minivmm bug), -EIO a KVM
 * that claimed success without progress.
 */
int mm_prefault_range(int vcpu_fd, uint64_t gpa, uint64_t size, prefault_ioctl_fn fn,
		      struct prefault_stats *st);

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
