/* Eager population: strategies, populating host memory, KVM_PRE_FAULT_MEMORY. */
#ifndef MINIVMM_EAGER_H
#define MINIVMM_EAGER_H

#include <stdint.h>

#include "kvm_compat.h"

enum eager_strategy {
	EAGER_NONE,	/* lazy: everything faults in on first touch */
	EAGER_AUTO,	/* prefault where KVM has it, else populate */
	EAGER_POPULATE, /* MADV_POPULATE_WRITE on each thread's slice */
	EAGER_PREFAULT, /* populate, then KVM_PRE_FAULT_MEMORY (TDP only) */
	EAGER_TOUCH,	/* each vCPU writes its slice in the guest before the workload */
	EAGER_STRATEGY_COUNT
};

const char *eager_strategy_name(enum eager_strategy s);
int eager_strategy_parse(const char *name, enum eager_strategy *out); /* not "none" */

/*
 * Back [hva, hva + len) with host memory for writing. Uses
 * MADV_POPULATE_WRITE; where the kernel lacks it, sets *fell_back and writes
 * one byte per page instead. Returns 0 or -errno.
 */
int mm_populate_range(uint8_t *hva, uint64_t len, uint64_t page_bytes, int *fell_back);

/* KVM_PRE_FAULT_MEMORY, injectable for tests. Returns like ioctl(2). */
typedef int (*prefault_ioctl_fn)(int vcpu_fd, struct kvm_pre_fault_memory *range);
int kvm_pre_fault_ioctl(int vcpu_fd, struct kvm_pre_fault_memory *range);

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

#endif /* MINIVMM_EAGER_H */
