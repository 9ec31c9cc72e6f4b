/* Guest RAM backends: anonymous 4 KiB, THP, hugetlbfs 2 MiB / 1 GiB, memfd (shared). */
#include "backing.h"

#include <errno.h>
#include <linux/magic.h>
#include <linux/mman.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SZ_2M (2ULL << 20)
#define SZ_1G (1ULL << 30)

/* Anonymous memory, over-mapped by `align` so hva can be aligned inside it. */
static int map_anon_aligned(struct guest_ram *ram, uint64_t size, uint64_t align,
			    int flags)
{
	uint64_t len = size + align;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	ram->map_base = p;
	ram->map_bytes = len;
	ram->hva = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	return 0;
}

/* 4 KiB pages, even where THP is "always": the baseline for fault counts. */
static int map_anon(struct guest_ram *ram, uint64_t size)
{
	int r = map_anon_aligned(ram, size, SZ_2M, 0);

	if (!r && madvise(ram->hva, size, MADV_NOHUGEPAGE))
		r = -errno;
	return r;
}

static int map_thp(struct guest_ram *ram, uint64_t size)
{
	int r = map_anon_aligned(ram, size, SZ_2M, 0);

	if (!r && madvise(ram->hva, size, MADV_HUGEPAGE))
		r = -errno;
	return r;
}

/* Without MAP_NORESERVE: the pool is reserved now, so a short pool fails here, not later. */
static int map_hugetlb(struct guest_ram *ram, uint64_t size, int huge_flag)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | huge_flag, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	ram->map_base = ram->hva = p;
	ram->map_bytes = size;
	return 0;
}

static int map_hugetlb2m(struct guest_ram *ram, uint64_t size)
{
	return map_hugetlb(ram, size, MAP_HUGE_2MB);
}

static int map_hugetlb1g(struct guest_ram *ram, uint64_t size)
{
	return map_hugetlb(ram, size, MAP_HUGE_1GB);
}

static int map_memfd(struct guest_ram *ram, uint64_t size)
{
	int fd = memfd_create("minivmm-ram", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size))
		goto fail;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	ram->fd = fd;
	ram->map_base = ram->hva = p;
	ram->map_bytes = size;
	return 0;
fail : {
	int e = -errno;

	close(fd);
	return e;
}
}

/* file_fs: the --mem-path files each maps (file.c); anon and thp are private memory. */
const struct mm_backend mm_backends[] = {
	{ MM_ANON, "anon", "anonymous, 4 KiB pages (the default)", 4096, NULL, map_anon,
	  0 },
	{ MM_THP, "thp", "anonymous with MADV_HUGEPAGE (2 MiB where it can)", SZ_2M, NULL,
	  map_thp, 0 },
	{ MM_HUGETLB2M, "hugetlb2m", "hugetlbfs pool, 2 MiB pages", SZ_2M,
	  "/sys/kernel/mm/hugepages/hugepages-2048kB", map_hugetlb2m, HUGETLBFS_MAGIC },
	{ MM_HUGETLB1G, "hugetlb1g", "hugetlbfs pool, 1 GiB pages (--mem in 1G)", SZ_1G,
	  "/sys/kernel/mm/hugepages/hugepages-1048576kB", map_hugetlb1g,
	  HUGETLBFS_MAGIC },
	{ MM_MEMFD, "memfd", "shared memory, 4 KiB (memfd, or a tmpfs file)", 4096, NULL,
	  map_memfd, TMPFS_MAGIC },
};
/* Deleting or adding a row without its enum value does not build. */
_Static_assert(sizeof(mm_backends) / sizeof(mm_backends[0]) == MM_BACKING_COUNT,
	       "one row per enum mm_backing, in enum order");

const struct mm_backend *mm_backend_find(const char *name)
{
	for (int i = 0; i < MM_BACKING_COUNT; i++)
		if (!strcmp(mm_backends[i].name, name))
			return &mm_backends[i];
	return NULL;
}
