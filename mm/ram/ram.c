/* Guest RAM: creation through a backend, capacity checks, memslot registration. */
#include "mm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

const struct mm_backend *mm_backend_find(const char *name)
{
	for (int i = 0; i < MM_BACKING_COUNT; i++)
		if (!strcmp(mm_backends[i].name, name))
			return &mm_backends[i];
	return NULL;
}

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

uint64_t mm_meminfo_bytes(const char *meminfo, const char *key)
{
	size_t klen = strlen(key);
	unsigned long long kib;

	for (const char *p = meminfo; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return sscanf(p + klen + 1, "%llu kB", &kib) == 1
				       ? (uint64_t)kib << 10
				       : 0;
	}
	return 0;
}

uint64_t mm_meminfo_available(const char *meminfo)
{
	return mm_meminfo_bytes(meminfo, "MemAvailable");
}

int mm_ram_check_capacity(const struct mm_backend *b, uint64_t size,
			  const struct mm_file *file, char *err, size_t errlen)
{
	char buf[4096], path[160];
	uint64_t avail;

	/* A file's allocated pages are backed already: only its holes need memory. */
	if (file)
		size -= file->held_before < size ? file->held_before : size;
	if (!size)
		return 0;
	if (b->hugetlb_sysfs) {
		unsigned long long free_pages = 0, resv = 0, total = 0;
		unsigned long long need = (size + b->page_bytes - 1) / b->page_bytes;

		snprintf(path, sizeof(path), "%s/free_hugepages", b->hugetlb_sysfs);
		if (mm_read_text(path, buf, sizeof(buf)) == 0)
			free_pages = strtoull(buf, NULL, 10);
		snprintf(path, sizeof(path), "%s/resv_hugepages", b->hugetlb_sysfs);
		if (mm_read_text(path, buf, sizeof(buf)) == 0)
			resv = strtoull(buf, NULL, 10);
		free_pages = free_pages > resv ? free_pages - resv
					       : 0; /* others' reservations */
		snprintf(path, sizeof(path), "%s/nr_hugepages", b->hugetlb_sysfs);
		if (mm_read_text(path, buf, sizeof(buf)) == 0)
			total = strtoull(buf, NULL, 10);
		if (free_pages >= need)
			return 0;
		snprintf(
			err, errlen,
			"--backing %s: the hugetlb pool has %llu free pages of %llu MiB, %llu needed%s; grow it with: echo %llu > %s/nr_hugepages",
			b->name, free_pages, (unsigned long long)(b->page_bytes >> 20),
			need, file ? " (the file's holes)" : "",
			total + need - free_pages, b->hugetlb_sysfs);
		return -ENOMEM;
	}
	if (mm_read_text("/proc/meminfo", buf, sizeof(buf)))
		return 0; /* cannot tell: let the kernel decide */
	avail = mm_meminfo_available(buf);
	if (!avail || avail >= size)
		return 0;
	snprintf(
		err, errlen,
		"cannot back %llu MiB of guest RAM up front%s: the host has %llu MiB available (MemAvailable)",
		(unsigned long long)(size >> 20),
		file ? " (the file's unallocated part)" : "",
		(unsigned long long)(avail >> 20));
	return -ENOMEM;
}

int64_t mm_resident_bytes(const struct guest_ram *ram)
{
	const uint64_t chunk = 1ULL << 30, page = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(chunk / page);
	int64_t resident = 0;

	if (!vec)
		return -ENOMEM;
	for (uint64_t off = 0; off < ram->size; off += chunk) {
		uint64_t n = ram->size - off < chunk ? ram->size - off : chunk;

		if (mincore(ram->hva + off, n, vec)) {
			int e = -errno;

			free(vec);
			return e;
		}
		for (uint64_t i = 0; i < (n + page - 1) / page; i++)
			resident += (vec[i] & 1) ? (int64_t)page : 0;
	}
	free(vec);
	return resident;
}

int64_t mm_resident_untouched(const struct guest_ram *ram)
{
	/*
	 * A shared file mapping's resident pages are the file's pages in the
	 * page cache: what it had allocated. mincore would find them too, but
	 * before anything mapped them it looks each 4 KiB page up in the page
	 * cache (8 ms per GiB on hugetlbfs here, against 0.4 once mapped).
	 */
	if (ram->file && ram->file->allocated_exact)
		return (int64_t)ram->file->allocated_before;
	return mm_resident_bytes(ram);
}

#define TOP_WINDOW_BYTES (2ULL << 20)

uint64_t mm_resident_count(const struct guest_ram *ram, uint64_t gpa, uint64_t len,
			   uint64_t *top)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned char vec[TOP_WINDOW_BYTES / 4096];
	uint8_t *hva = mm_gpa_to_hva(ram, gpa, len);
	uint64_t n = 0;

	*top = gpa;
	if (!hva || gpa % page || page != 4096)
		return 0;
	for (uint64_t off = 0; off < len; off += TOP_WINDOW_BYTES) {
		uint64_t w = len - off < TOP_WINDOW_BYTES ? len - off : TOP_WINDOW_BYTES;

		if (mincore(hva + off, w, vec))
			return n;
		for (uint64_t i = 0; i < (w + page - 1) / page; i++)
			if (vec[i] & 1) {
				n++;
				*top = gpa + off + (i + 1) * page;
			}
	}
	if (*top > gpa + len)
		*top = gpa + len;
	return n;
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
