/* Guest RAM: created through a backing or the file room, destroyed, registered as the memslot. */
#include "ram.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

int mm_ram_create(struct guest_ram *ram, const struct mm_backend *b, uint64_t size,
		  const struct mm_file_request *file, char *err, size_t errlen)
{
	int r;

	*ram = (struct guest_ram){ .fd = -1, .backend = b };
	if (file && (file->path || file->reservoir))
		return mm_file_map(ram, b, size, file, err, errlen);
	if (size % b->page_bytes) {
		snprintf(err, errlen,
			 "--backing %s: guest RAM must be a multiple of %llu MiB",
			 b->name, (unsigned long long)(b->page_bytes >> 20));
		return -EINVAL;
	}
	r = b->map(ram, size);
	if (r) {
		if (b->hugetlb_sysfs && r == -ENOMEM) {
			char cap[256];

			if (mm_ram_check_capacity(b, size, NULL, cap, sizeof(cap)))
				snprintf(err, errlen, "%s", cap);
			else
				snprintf(err, errlen,
					 "--backing %s: mapping %llu MiB: %s", b->name,
					 (unsigned long long)(size >> 20), strerror(-r));
		} else {
			snprintf(err, errlen, "--backing %s: mapping %llu MiB: %s",
				 b->name, (unsigned long long)(size >> 20), strerror(-r));
		}
		*ram = (struct guest_ram){ .fd = -1 };
		return r;
	}
	ram->size = size;
	return 0;
}

void mm_ram_destroy(struct guest_ram *ram)
{
	if (ram->file) {
		mm_file_unmap(ram);
	} else {
		if (ram->map_base)
			munmap(ram->map_base, ram->map_bytes);
		if (ram->fd >= 0)
			close(ram->fd);
	}
	/* What it was stays for the report: the backend, the file's description. */
	*ram = (struct guest_ram){ .fd = -1, .backend = ram->backend, .file = ram->file };
}

void mm_ram_free(struct guest_ram *ram)
{
	free(ram->file);
	ram->file = NULL;
}

int mm_ram_check_capacity(const struct mm_backend *b, uint64_t size,
			  const struct mm_file *file, char *err, size_t errlen)
{
	/* A file's allocated pages are backed already: only its holes need memory. */
	if (file)
		size -= file->held_before < size ? file->held_before : size;
	return mm_backing_check_capacity(b, size, file != NULL, err, errlen);
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
