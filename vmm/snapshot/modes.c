/* The restore modes (--restore-mode): one row each, what it needs of the platform, how it fills RAM. */
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int restore_copy(struct restore_ctx *ctx)
{
	return mm_memfile_read(ctx->ram, ctx->mem_fd, ctx->extents, ctx->nextents,
			       ctx->err, ctx->errlen);
}

int restore_private(struct restore_ctx *ctx)
{
	return mm_memfile_map_private(ctx->ram, ctx->mem_fd, ctx->err, ctx->errlen);
}

/*
 * Every mode, in the order --help lists them. A row's prepare runs before
 * the vCPUs resume; resumed and finish are for modes with threads of their
 * own. Modes built on userfaultfd live beside the pager (mm/paging/).
 */
const struct restore_mode restore_modes[] = {
	{ "copy",
	  { "read every data extent into fresh guest RAM, then",
	    "resume (cloud-hypervisor's default)" },
	  0,
	  NULL,
	  restore_copy,
	  NULL,
	  NULL },
	{ "private",
	  { "map the file MAP_PRIVATE as guest RAM: pages on",
	    "demand from the page cache, copied on write (Firecracker)" },
	  0,
	  NULL,
	  restore_private,
	  NULL,
	  NULL },
	{ "populate",
	  { "private, then MADV_POPULATE_WRITE and, where KVM has it,",
	    "KVM_PRE_FAULT_MEMORY, before resuming" },
	  RESTORE_NEEDS_POPULATE,
	  NULL,
	  restore_populate,
	  NULL,
	  NULL },
	{ "uffd",
	  { "fresh RAM; each first touch copied from the file by",
	    "minivmm's userfaultfd handlers (Firecracker's Uffd)" },
	  RESTORE_NEEDS_UFFD,
	  NULL,
	  restore_uffd,
	  NULL,
	  NULL },
	{ "background",
	  { "uffd, and a thread copying the rest in 1 MiB reads while",
	    "the guest runs (cloud-hypervisor #8150)" },
	  RESTORE_NEEDS_UFFD,
	  NULL,
	  restore_uffd,
	  restore_background_resumed,
	  NULL },
	{ "replay",
	  { "uffd, the working set recorded by an earlier replay fetched",
	    "first in 1 MiB reads (REAP); the first replay records it" },
	  RESTORE_NEEDS_UFFD,
	  NULL,
	  restore_replay,
	  NULL,
	  NULL },
	{ "minor",
	  { "the file on tmpfs/hugetlbfs mapped private, first touches",
	    "as minor faults mapped by UFFDIO_CONTINUE (FaaSnap)" },
	  RESTORE_NEEDS_UFFD_MINOR | RESTORE_NEEDS_SHMEM_FILE,
	  NULL,
	  restore_minor,
	  NULL,
	  NULL },
};
const unsigned restore_mode_count = sizeof(restore_modes) / sizeof(restore_modes[0]);

const struct restore_mode *restore_mode_find(const char *name)
{
	for (unsigned i = 0; i < restore_mode_count; i++)
		if (!strcmp(restore_modes[i].name, name))
			return &restore_modes[i];
	return NULL;
}

/* A userfaultfd can be opened here (the syscall, else /dev/userfaultfd). */
static int uffd_here(void)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0)
		fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

static int populate_here(void)
{
	void *p = mmap(NULL, MVM_PAGE_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int e = 0;

	if (p == MAP_FAILED)
		return -errno;
	if (madvise(p, MVM_PAGE_BYTES, MADV_POPULATE_WRITE))
		e = -errno;
	munmap(p, MVM_PAGE_BYTES);
	return e;
}

int restore_mode_usable(const struct restore_mode *m, const struct snapshot *snap,
			char *err, size_t errlen)
{
	int e;

	if ((m->needs & (RESTORE_NEEDS_UFFD | RESTORE_NEEDS_UFFD_MINOR)) &&
	    (e = uffd_here())) {
		snprintf(
			err, errlen,
			"--restore-mode %s needs userfaultfd, which this process cannot open here: %s",
			m->name, strerror(-e));
		return -EOPNOTSUPP;
	}
	if ((m->needs & RESTORE_NEEDS_POPULATE) && (e = populate_here())) {
		snprintf(
			err, errlen,
			"--restore-mode %s needs MADV_POPULATE_WRITE (Linux 5.14), which this kernel refuses: %s",
			m->name, strerror(-e));
		return -EOPNOTSUPP;
	}
	if ((m->needs & RESTORE_NEEDS_SHMEM_FILE) &&
	    !mm_fs_is_shmem(
		    mm_fd_fs_magic(snap->mem_fd))) { /* the open file's, not a path's */
		snprintf(
			err, errlen,
			"--restore-mode %s needs the memory file on tmpfs or hugetlbfs, whose page cache is the file's memory (minor faults map it): copy the snapshot there (e.g. /dev/shm), or use another mode",
			m->name);
		return -EOPNOTSUPP;
	}
	return m->check ? m->check(snap->dir, err, errlen) : 0;
}
