/*
 * mm/ram: guest RAM created and destroyed (a backing's map function, or
 * the file room's mapping: mm_ram_create is the one path), what of it is
 * resident (mincore; resident.c), populating it up front (populate.c:
 * MADV_POPULATE_WRITE, KVM_PRE_FAULT_MEMORY) and its memslot. Uses file/,
 * backing/ and the base.
 */
#ifndef MINIVMM_MM_RAM_H
#define MINIVMM_MM_RAM_H

#include "file.h"

/*
 * Map size bytes of guest RAM from backend b: fresh memory, or with file
 * (not NULL, a path or a reservoir named) a file's pages mapped shared
 * (file.c), where b may be NULL to take the file system's kind. Nothing is
 * backed until touched (hugetlb pools are reserved). Returns 0, or -errno
 * with a message in err: -EINVAL when the request does not fit (the
 * options' fault: a usage error), anything else is the host's. On failure
 * nothing is left mapped, locked or leased.
 */
int mm_ram_create(struct guest_ram *ram, const struct mm_backend *b, uint64_t size,
		  const struct mm_file_request *file, char *err, size_t errlen);
/*
 * Unmap, close, end a lease (its range is scrubbed in the background). The
 * backend and the file's description stay for the report until
 * mm_ram_free(); the ram can be destroyed twice.
 */
void mm_ram_destroy(struct guest_ram *ram);
void mm_ram_free(struct guest_ram *ram); /* after mm_ram_destroy: the description */

/*
 * Can the host back the size bytes of b right now that are not backed yet
 * (all of fresh memory; a file's holes, file NULL for fresh memory)?
 * mm_backing_check_capacity on what is left: 0, or -ENOMEM with the
 * numbers and what to type in err.
 */
int mm_ram_check_capacity(const struct mm_backend *b, uint64_t size,
			  const struct mm_file *file, char *err, size_t errlen);

/* Bytes of guest RAM resident in host memory now (mincore). -errno on failure. */
int64_t mm_resident_bytes(const struct guest_ram *ram);
/*
 * The same, for RAM nothing has touched since mm_ram_create: from what a
 * file had allocated where that is known exactly (a lease, tmpfs), else
 * from mincore. -errno on failure.
 */
int64_t mm_resident_untouched(const struct guest_ram *ram);
/*
 * How many 4 KiB host pages of guest-physical [gpa, gpa + len) are
 * resident (mincore), and in *top the end of the highest (gpa when none).
 * 0 when mincore fails or the range is not RAM. No allocation: a vector on
 * the stack per 2 MiB.
 */
uint64_t mm_resident_count(const struct guest_ram *ram, uint64_t gpa, uint64_t len,
			   uint64_t *top);

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

#endif /* MINIVMM_MM_RAM_H */
