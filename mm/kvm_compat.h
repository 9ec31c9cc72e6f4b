/* KVM constants newer than the Linux 6.1 <linux/kvm.h> that Debian 12 ships. */
#ifndef MINIVMM_KVM_COMPAT_H
#define MINIVMM_KVM_COMPAT_H

#include <linux/kvm.h>
#include <stdint.h>

#ifndef KVM_CAP_USER_MEMORY2
#define KVM_CAP_USER_MEMORY2 231
#endif
#ifndef KVM_CAP_GUEST_MEMFD
#define KVM_CAP_GUEST_MEMFD 234
#endif
#ifndef KVM_CAP_PRE_FAULT_MEMORY
#define KVM_CAP_PRE_FAULT_MEMORY 236
#endif

#ifndef KVM_PRE_FAULT_MEMORY
/* Linux 6.11: populate the second-level page tables for [gpa, gpa + size). */
struct kvm_pre_fault_memory {
	uint64_t gpa;
	uint64_t size;
	uint64_t flags;
	uint64_t padding[5];
};
#define KVM_PRE_FAULT_MEMORY _IOWR(KVMIO, 0xd5, struct kvm_pre_fault_memory)
#endif

#ifndef KVM_STATS_NAME_SIZE
#define KVM_STATS_NAME_SIZE 48 /* Linux 6.2; descriptors' name_size in practice */
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#endif /* MINIVMM_KVM_COMPAT_H */
