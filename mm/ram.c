/* Guest RAM mapping and memslot registration. */
#include "mm.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kvm_compat.h"

int mm_ram_create(struct guest_ram *ram, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	ram->hva = p;
	ram->size = size;
	ram->map_bytes = size;
	return 0;
}

void mm_ram_destroy(struct guest_ram *ram)
{
	if (ram->hva)
		munmap(ram->hva, ram->map_bytes);
	ram->hva = NULL;
}

int mm_memslot_register(int vm_fd, const struct guest_ram *ram)
{
	struct kvm_userspace_memory_region r = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = ram->size,
		.userspace_addr = (uintptr_t)ram->hva,
	};

	return ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &r) ? -errno : 0;
}
