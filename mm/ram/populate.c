/* Populating guest RAM up front: host pages (populate) and second-level entries (prefault). */
#include "ram.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

int mm_populate_range(uint8_t *hva, uint64_t len, uint64_t page_bytes, int *fell_back)
{
	if (!len)
		return 0;
	if (!*fell_back) {
		if (madvise(hva, len, MADV_POPULATE_WRITE) == 0)
			return 0;
		if (errno != EINVAL)
			return -errno;
		*fell_back = 1; /* kernel older than 5.14: no MADV_POPULATE_WRITE */
	}
	/* Write, not read: a read would map the shared zero page and fault again later. */
	for (uint64_t off = 0; off < len; off += page_bytes)
		__atomic_fetch_or(hva + off, 0, __ATOMIC_RELAXED);
	return 0;
}

int mm_prefault_ioctl(int vcpu_fd, struct kvm_pre_fault_memory *range)
{
	return ioctl(vcpu_fd, KVM_PRE_FAULT_MEMORY, range);
}

int mm_prefault_range(int vcpu_fd, uint64_t gpa, uint64_t size, prefault_ioctl_fn fn,
		      struct prefault_stats *st)
{
	struct kvm_pre_fault_memory r = { .gpa = gpa, .size = size };
	unsigned stuck = 0;

	while (r.size) {
		uint64_t before = r.size;
		int rc = fn(vcpu_fd, &r);

		st->calls++;
		if (r.size > before)
			return -EIO; /* KVM never grows the range */
		st->bytes += before - r.size;
		if (rc == 0 && r.size == before)
			return -EIO; /* success without progress would loop forever */
		if (rc < 0) {
			int e = errno;

			if (e == EINTR || e == EAGAIN) {
				st->retries++;
				stuck = r.size == before ? stuck + 1 : 0;
				if (stuck > PREFAULT_MAX_STUCK)
					return -e;
				continue;
			}
			return -e; /* ENOENT: outside every memslot, our bug; others: KVM's */
		}
		stuck = 0;
	}
	return 0;
}
