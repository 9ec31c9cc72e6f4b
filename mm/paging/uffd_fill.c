/* Userfaultfd paging from a snapshot's memory file: its data found, mapped, and each fault's source page. */
#include "uffd_internal.h"

#include "file.h"

#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int uffd_minor_check(int fd, char *err, size_t errlen)
{
	long magic = mm_fd_fs_magic(fd);
	const char *fs = magic ? mm_fs_name(magic) : "unknown";

	if (mm_fs_is_shmem(magic))
		return 0;
	snprintf(
		err, errlen,
		"--restore-mode minor: the memory file is not on tmpfs or hugetlbfs (file system: %s); minor faults need its page cache to be its memory: copy the snapshot to /dev/shm, or use another mode",
		fs);
	return -EOPNOTSUPP;
}

struct mark {
	struct uffd_file *f;
	uint64_t page;
};

static int mark_data(void *cookie, uint64_t off, uint64_t end)
{
	struct mark *m = cookie;

	for (uint64_t i = off / m->page; i < (end + m->page - 1) / m->page; i++)
		if (!bit_test(m->f->data, i)) {
			bit_set(m->f->data, i);
			m->f->data_bytes += m->page;
		}
	return 0;
}

/* Mark the pages holding data (SEEK_DATA/SEEK_HOLE) in f->data. 0 or -errno. */
static int find_data(struct uffd_file *f, uint64_t page, uint64_t ram_bytes)
{
	struct mark m = { f, page };

	return mm_file_each_extent(f->fd, 0, ram_bytes, mark_data, &m);
}

int uffd_set_file(struct uffd_pager *p, int fd, char *err, size_t errlen)
{
	uint64_t pages = p->ram_bytes / p->page, words = (pages + 63) / 64;
	struct uffd_file *f;
	struct stat st;
	long magic;
	int r;

	if (fstat(fd, &st)) {
		r = -errno;
		snprintf(err, errlen, "the memory file: fstat: %s", strerror(-r));
		return r;
	}
	if ((uint64_t)st.st_size < p->ram_bytes) {
		snprintf(err, errlen,
			 "the memory file has %llu bytes, less than guest RAM's %llu",
			 (unsigned long long)st.st_size,
			 (unsigned long long)p->ram_bytes);
		return -EINVAL;
	}
	if (p->mode == UFFD_MINOR && (r = uffd_minor_check(fd, err, errlen)))
		return r;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto oom;
	f->fd = fd;
	f->bytes = (uint64_t)st.st_size;
	f->minor = p->mode == UFFD_MINOR;
	magic = mm_fd_fs_magic(fd);
	snprintf(f->fs, sizeof(f->fs), "%s", magic ? mm_fs_name(magic) : "unknown");
	p->file = f; /* uffd_file_free from here on */
	f->data = calloc(words, sizeof(uint64_t));
	if (!f->data)
		goto oom;
	if (f->minor) /* the handlers map the page cache: nothing to copy from */
		goto data;
	f->present = calloc(words, sizeof(uint64_t));
	if (!f->present)
		goto oom;
	f->map = mmap(NULL, p->ram_bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		r = -errno;
		snprintf(err, errlen, "the memory file: mmap: %s", strerror(-r));
		return r;
	}
data:
	r = find_data(f, p->page, p->ram_bytes);
	if (r)
		snprintf(err, errlen, "the memory file: SEEK_DATA/SEEK_HOLE: %s",
			 strerror(-r));
	return r;
oom:
	snprintf(err, errlen, "--restore: out of memory");
	return -ENOMEM;
}

uint64_t uffd_file_data_bytes(const struct uffd_pager *p)
{
	return p->file ? p->file->data_bytes : 0;
}

const char *uffd_file_fs(const struct uffd_pager *p)
{
	return p->file ? p->file->fs : "";
}

const void *uffd_file_src(const struct uffd_pager *p, uint64_t gpa)
{
	return bit_test(p->file->data, gpa / p->page) ? p->file->map + gpa : p->zero;
}

void uffd_file_installed(const struct uffd_pager *p, uint64_t gpa)
{
	if (p->file->present)
		bit_set(p->file->present, gpa / p->page);
}

/*
 * A mapped page stays in the page cache whatever POSIX_FADV_DONTNEED says:
 * the next restore of a --compare would find the file cached.
 */
void uffd_file_unmap(struct uffd_pager *p)
{
	if (p->file && p->file->map) {
		munmap((void *)p->file->map, p->ram_bytes);
		p->file->map = NULL;
	}
}

void uffd_file_free(struct uffd_pager *p)
{
	struct uffd_file *f = p->file;

	if (!f)
		return;
	uffd_filler_free(f->fill);
	uffd_file_unmap(p);
	free(f->data);
	free(f->present);
	free(f);
	p->file = NULL;
}
