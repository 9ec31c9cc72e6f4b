/* Guest RAM in a file (--mem-path, --reservoir): hugetlbfs or tmpfs pages, mapped shared. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#define MIB(x) ((unsigned long long)((x) >> 20))

#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif

static const struct {
	long magic;
	const char *name;
	int memory; /* its pages are memory only: no disk behind them */
} fs_names[] = {
	{ HUGETLBFS_MAGIC, "hugetlbfs", 1 },
	{ TMPFS_MAGIC, "tmpfs", 1 },
	{ RAMFS_MAGIC, "ramfs", 1 },
	{ EXT4_SUPER_MAGIC, "ext4", 0 }, /* ext2 and ext3 share it */
	{ XFS_SUPER_MAGIC, "xfs", 0 },
	{ BTRFS_SUPER_MAGIC, "btrfs", 0 },
	{ OVERLAYFS_SUPER_MAGIC, "overlay", 0 },
	{ NFS_SUPER_MAGIC, "nfs", 0 },
	{ FUSE_SUPER_MAGIC, "fuse", 0 },
	{ V9FS_MAGIC, "9p", 0 },
};

const char *mm_fs_name(long fs_magic)
{
	for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]); i++)
		if (fs_names[i].magic == fs_magic)
			return fs_names[i].name;
	return "other";
}

long mm_fd_fs_magic(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) ? 0 : (long)sf.f_type;
}

int mm_fs_is_shmem(long fs_magic)
{
	return fs_magic == TMPFS_MAGIC || fs_magic == HUGETLBFS_MAGIC;
}

/* Memory-only file systems whose pages are shared memory: shmem and ramfs, 4 KiB. */
static int shared_memory_fs(long fs_magic)
{
	return fs_magic == TMPFS_MAGIC || fs_magic == RAMFS_MAGIC;
}

const struct mm_backend *mm_file_backing(long fs_magic, uint64_t fs_page_bytes,
					 const struct mm_backend *asked, int any_fs,
					 char *err, size_t errlen)
{
	const char *fs = mm_fs_name(fs_magic);
	const struct mm_backend *fits = NULL;

	if (fs_magic == HUGETLBFS_MAGIC) {
		for (int i = 0; i < MM_BACKING_COUNT; i++)
			if (mm_backends[i].file_fs == HUGETLBFS_MAGIC &&
			    mm_backends[i].page_bytes == fs_page_bytes)
				fits = &mm_backends[i];
		if (!fits) {
			snprintf(
				err, errlen,
				"the file is on hugetlbfs with %llu KiB pages, a size no backing maps (2M and 1G do)",
				(unsigned long long)(fs_page_bytes >> 10));
			return NULL;
		}
	} else if (shared_memory_fs(fs_magic) || any_fs) {
		fits = &mm_backends[MM_MEMFD]; /* shared 4 KiB pages */
	} else {
		snprintf(
			err, errlen,
			"the file is on %s (f_type 0x%lx), not hugetlbfs or tmpfs: its pages would be a disk's page cache, written back as the guest runs, so guest RAM would measure the disk; use a file on hugetlbfs or tmpfs, or add --mem-any-fs to insist",
			fs, fs_magic);
		return NULL;
	}
	if (!asked || asked == fits)
		return fits;
	if (!asked->file_fs)
		snprintf(
			err, errlen,
			"--backing %s is private anonymous memory; a --mem-path file is mapped shared: leave --backing out (the file system decides: %s here) or name %s",
			asked->name, fits->name, fits->name);
	else if (fs_magic == HUGETLBFS_MAGIC && asked->file_fs == HUGETLBFS_MAGIC)
		snprintf(
			err, errlen,
			"--backing %s asks for %llu MiB pages; the file is on hugetlbfs with %llu MiB pages: use --backing %s, or a hugetlbfs mounted with -o pagesize=%s",
			asked->name, MIB(asked->page_bytes), MIB(fs_page_bytes),
			fits->name, asked->page_bytes >= (1ULL << 30) ? "1G" : "2M");
	else
		snprintf(
			err, errlen,
			"--backing %s maps files on %s; the file is on %s (%s): use --backing %s or leave it out",
			asked->name, mm_fs_name(asked->file_fs), fs,
			fits == &mm_backends[MM_MEMFD] ? "4 KiB pages" : "huge pages",
			fits->name);
	return NULL;
}

/* The mount point of the file system on device dev (/proc/self/mountinfo), or "". */
static void mount_point(dev_t dev, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[2 * MM_PATH_BYTES];
	unsigned maj, mn;

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[MM_PATH_BYTES];

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... (spaces in paths are \040). */
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &mn, mnt) == 3 &&
		    makedev(maj, mn) == dev)
			snprintf(buf, len, "%s", mnt);
	}
	fclose(f);
}

/*
 * The type (mountinfo's fstype: "devtmpfs", "hugetlbfs", ...) of the file
 * system path is on, or would be created on: that of the longest mount point
 * above it, the last one mounted there winning. "" if unknown. devtmpfs and
 * tmpfs share a statfs magic: only mountinfo tells them apart.
 */
static void path_fstype(const char *path, char *type, size_t len)
{
	char real[PATH_MAX], try[MM_PATH_BYTES], line[2 * MM_PATH_BYTES];
	size_t best = 0;
	FILE *f;

	type[0] = '\0';
	snprintf(try, sizeof(try), "%s", path);
	/* The path itself, or its nearest existing directory. */
	while (!realpath(try, real)) {
		char *slash = strrchr(try, '/');

		if (!slash || slash == try) {
			if (!realpath(slash ? "/" : ".", real))
				return;
			break;
		}
		*slash = '\0';
	}
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[MM_PATH_BYTES], fstype[64];
		const char *dash = strstr(line, " - ");
		size_t n;

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - FSTYPE SOURCE OPTS */
		if (!dash || sscanf(line, "%*u %*u %*u:%*u %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s", fstype) != 1)
			continue;
		n = strlen(mnt);
		if (strncmp(real, mnt, n) ||
		    (real[n] != '/' && real[n] != '\0' && strcmp(mnt, "/")) || n < best)
			continue;
		best = n;
		snprintf(type, len, "%s", fstype);
	}
	fclose(f);
}

/*
 * A --mem-path in /dev that no hugetlbfs is mounted on (Debian mounts none
 * at /dev/hugepages): devtmpfs holds device nodes, and a file made there is
 * 4 KiB shared memory, not huge pages. Refused with how to set hugetlbfs up;
 * never "create a file in /dev". 0, or -EINVAL with err set.
 */
static int not_in_dev(const struct mm_file_request *req, const struct mm_backend *asked,
		      uint64_t size, char *err, size_t errlen)
{
	const struct mm_backend *b =
		asked && asked->hugetlb_sysfs ? asked : &mm_backends[MM_HUGETLB2M];
	unsigned long long need = (size + b->page_bytes - 1) / b->page_bytes;
	char type[64], nr[64], real[PATH_MAX];
	const char *mp = "/dev/hugepages"; /* where Debian's systemd would mount it */
	struct stat st;
	long long have;

	path_fstype(req->path, type, sizeof(type));
	if (strcmp(type, "devtmpfs"))
		return 0;
	/* A directory of its own below /dev is the mount point asked for; /dev itself never. */
	if (!stat(req->path, &st) && S_ISDIR(st.st_mode) && realpath(req->path, real) &&
	    strcmp(real, "/dev"))
		mp = req->path;
	snprintf(nr, sizeof(nr), "%s/nr_hugepages", b->hugetlb_sysfs);
	have = mm_read_count(nr);
	snprintf(
		err, errlen,
		"--mem-path %s: no hugetlbfs is mounted there: it is on devtmpfs (/dev, the kernel's device nodes), where a file would be 4 KiB shared memory, not huge pages. Set up hugetlbfs (docs/guide.md, \"Guest RAM in a file\"): mkdir -p %s && mount -t hugetlbfs -o pagesize=%s none %s && echo %llu > %s/nr_hugepages (%llu pages of %llu MiB for --mem %lluM%s), then --mem-path %s; for 4 KiB pages use tmpfs: --mem-path /dev/shm",
		req->path, mp, b->page_bytes >= (1ULL << 30) ? "1G" : "2M", mp,
		(unsigned long long)(have > 0 ? have : 0) + need, b->hugetlb_sysfs, need,
		MIB(b->page_bytes), MIB(size), have > 0 ? ", added to the pool's" : "",
		mp);
	return -EINVAL;
}

static int count_data(void *cookie, uint64_t off, uint64_t end)
{
	*(uint64_t *)cookie += end - off;
	return 0;
}

/* Bytes of [off, off + len) with data (SEEK_DATA/SEEK_HOLE); -1 where the fs cannot say. */
static int64_t data_bytes(int fd, uint64_t off, uint64_t len)
{
	uint64_t data = 0;

	return mm_file_each_extent(fd, off, off + len, count_data, &data) ? -1
									  : (int64_t)data;
}

/* A --mem-path that is a reservoir's pool file: only a lease may map it. */
static int is_reservoir_pool(const char *path)
{
	char copy[MM_PATH_BYTES], info[MM_PATH_BYTES + 32];

	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(info, sizeof(info), "%s/../reservoir.info", dirname(copy));
	return access(info, F_OK) == 0;
}

/* Open (or, with grow, create) the file, or an unlinked one in a directory. fd or -errno. */
static int open_file(const struct mm_file_request *req, struct mm_file *f, char *err,
		     size_t errlen)
{
	struct stat st;
	int fd;

	if (stat(req->path, &st) == 0 && S_ISDIR(st.st_mode)) {
		fd = open(req->path, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0) {
			int e = errno;

			snprintf(
				err, errlen,
				"--mem-path %s: cannot make an unlinked file there (O_TMPFILE): %s",
				req->path, strerror(e));
			return e == EOPNOTSUPP || e == EISDIR ? -EINVAL : -e;
		}
		f->tmpfile = 1;
		return fd;
	}
	fd = open(req->path, O_RDWR | O_CLOEXEC | (req->grow ? O_CREAT : 0), 0600);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			snprintf(
				err, errlen,
				"--mem-path %s: no such file: create it (fallocate -l SIZE %s, or truncate -s SIZE), name a directory for an unlinked file, or add --mem-grow",
				req->path, req->path);
		else
			snprintf(err, errlen,
				 "--mem-path %s: cannot open it for writing: %s",
				 req->path, strerror(e));
		return e == ENOENT ? -EINVAL : -e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(
			err, errlen,
			"--mem-path %s: not a regular file or a directory (guest RAM is a file's pages)",
			req->path);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/*
 * A file system with a size limit (tmpfs size=, hugetlbfs size=) must hold
 * the holes, or the guest gets SIGBUS at its first touch past the limit:
 * refuse now. hugetlbfs also reserves at mmap (no MAP_NORESERVE), which
 * catches a short pool exactly.
 */
static int check_space(const struct mm_file *f, const struct statfs *sf, uint64_t need,
		       char *err, size_t errlen)
{
	uint64_t avail = (uint64_t)sf->f_bavail * (uint64_t)sf->f_bsize;

	if (!need || sf->f_blocks == 0 || avail >= need)
		return 0; /* f_blocks 0: no limit */
	if (f->fs_magic == HUGETLBFS_MAGIC)
		snprintf(
			err, errlen,
			"--mem-path %s: its hugetlbfs (%s) has %llu MiB left below its size= limit, %llu MiB more needed: mount -o remount,size=%lluM %s",
			f->path, f->mount[0] ? f->mount : "?", MIB(avail), MIB(need),
			MIB((uint64_t)sf->f_blocks * (uint64_t)sf->f_bsize - avail +
			    need),
			f->mount[0] ? f->mount : "MOUNTPOINT");
	else
		snprintf(
			err, errlen,
			"--mem-path %s: its %s (%s) has %llu MiB free, %llu MiB more needed (the guest would get SIGBUS): mount -o remount,size=%lluM %s",
			f->path, f->fs, f->mount[0] ? f->mount : "?", MIB(avail),
			MIB(need),
			MIB((uint64_t)sf->f_blocks * (uint64_t)sf->f_bsize - avail +
			    need),
			f->mount[0] ? f->mount : "MOUNTPOINT");
	return -ENOSPC;
}

/* Two VMs never share guest RAM: an OFD write lock on the range (released with the fd). */
static int lock_range(int fd, const struct mm_file *f, uint64_t size, char *err,
		      size_t errlen)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = (off_t)f->offset,
			    .l_len = (off_t)size };

	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno == EAGAIN || errno == EACCES) {
		/* Say what the holder has: its range, not ours. */
		fl = (struct flock){ .l_type = F_WRLCK,
				     .l_whence = SEEK_SET,
				     .l_start = (off_t)f->offset,
				     .l_len = (off_t)size };
		if (fcntl(fd, F_OFD_GETLK, &fl) || fl.l_type == F_UNLCK)
			fl = (struct flock){ .l_start = (off_t)f->offset,
					     .l_len = (off_t)size };
		snprintf(
			err, errlen,
			"--mem-path %s: another process (a running minivmm?) holds [%llu, %llu) MiB of it: two VMs never share guest RAM",
			f->path, MIB((uint64_t)fl.l_start),
			fl.l_len ? MIB((uint64_t)(fl.l_start + fl.l_len))
				 : MIB(UINT64_MAX));
		return -EBUSY;
	}
	snprintf(err, errlen, "--mem-path %s: locking it: %s", f->path, strerror(errno));
	return -errno;
}

/* Open and check the file, size it, lock it, count what is allocated: 0 or -errno. */
static int prepare(struct guest_ram *ram, struct mm_file *f,
		   const struct mm_backend *asked, uint64_t size,
		   const struct mm_file_request *req, int fd, char *err, size_t errlen)
{
	char why[512];
	struct statfs sf;
	struct stat st;
	const struct mm_backend *b;
	uint64_t end = f->offset + size, blocks;
	int64_t data;
	int r;

	if (fstatfs(fd, &sf) || fstat(fd, &st)) {
		snprintf(err, errlen, "--mem-path %s: fstatfs: %s", f->path,
			 strerror(errno));
		return -errno;
	}
	f->fs_magic = (long)sf.f_type;
	f->fs = mm_fs_name(f->fs_magic);
	f->fs_page_bytes = sf.f_type == HUGETLBFS_MAGIC ? (uint64_t)sf.f_bsize
							: (uint64_t)sysconf(_SC_PAGESIZE);
	f->file_bytes_before = (uint64_t)st.st_size;
	mount_point(st.st_dev, f->mount, sizeof(f->mount));
	b = mm_file_backing(f->fs_magic, f->fs_page_bytes, asked, req->any_fs, why,
			    sizeof(why));
	if (!b) {
		snprintf(err, errlen, "--mem-path %s: %s", f->path, why);
		return -EINVAL;
	}
	ram->backend = b;
	f->backing_inferred = !asked;
	f->disk = f->fs_magic != HUGETLBFS_MAGIC && !shared_memory_fs(f->fs_magic);
	if (size % b->page_bytes || f->offset % b->page_bytes) {
		snprintf(
			err, errlen,
			"--mem-path %s (%s pages): guest RAM and its offset must be multiples of %llu KiB",
			f->path, b->name, (unsigned long long)(b->page_bytes >> 10));
		return -EINVAL;
	}
	if ((uint64_t)st.st_size < end) {
		if (!req->grow && !f->tmpfile && !f->lease.leased) {
			snprintf(
				err, errlen,
				"--mem-path %s: the file has %llu MiB, guest RAM needs %llu MiB: grow it (fallocate -l %lluM %s, or truncate -s %lluM) or add --mem-grow",
				f->path, MIB(st.st_size), MIB(end), MIB(end), f->path,
				MIB(end));
			return -EINVAL;
		}
		/* Grows only: a file is never made shorter. On hugetlbfs this allocates nothing. */
		if (ftruncate(fd, (off_t)end)) {
			snprintf(err, errlen, "--mem-path %s: growing it to %llu MiB: %s",
				 f->path, MIB(end), strerror(errno));
			return -errno;
		}
		f->grew = !f->tmpfile;
	}
	if (!f->tmpfile && !f->lease.leased) {
		r = lock_range(fd, f, size, err, errlen);
		if (r)
			return r;
		f->locked = 1;
	}
	blocks = (uint64_t)st.st_blocks * 512;
	if (f->lease.leased) {
		f->allocated_before = size; /* a clean range is allocated and zeroed */
		f->allocated_exact = 1;
	} else if (f->fs_magic != TMPFS_MAGIC ||
		   (data = data_bytes(fd, f->offset, size)) < 0) {
		/* hugetlbfs and ramfs say nothing of holes: what the file has allocated at most. */
		f->allocated_before = blocks < size ? blocks : size;
	} else {
		f->allocated_before = (uint64_t)data;
		f->allocated_exact = 1;
	}
	f->held_before = blocks < size ? blocks : size;
	if (f->held_before < f->allocated_before)
		f->held_before = f->allocated_before;
	return check_space(f, &sf, size - f->held_before, err, errlen);
}

int mm_file_map(struct guest_ram *ram, const struct mm_backend *asked, uint64_t size,
		const struct mm_file_request *req, char *err, size_t errlen)
{
	struct mm_file *f = calloc(1, sizeof(*f));
	struct mm_reservoir_info
		info; /* the lease checked it; prepare() checks the pool's fs */
	void *p;
	int fd, r;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f->lease.inuse_fd = f->lease.keeper_fd = -1;
	ram->file = f;
	if (req->reservoir) {
		snprintf(f->lease.dir, sizeof(f->lease.dir), "%s", req->reservoir);
		fd = mm_reservoir_lease(req->reservoir, size, &f->offset, &f->lease,
					&info, err, errlen);
		mm_reservoir_path(f->path, sizeof(f->path), f->lease.dir, "pool/mem");
	} else {
		snprintf(f->path, sizeof(f->path), "%s", req->path);
		if (is_reservoir_pool(req->path)) {
			snprintf(
				err, errlen,
				"--mem-path %s is a reservoir's pool: lease guest RAM from it with --reservoir (the lease scrubs what a guest wrote)",
				req->path);
			fd = -EINVAL;
		} else {
			fd = not_in_dev(req, asked, size, err, errlen);
			if (!fd)
				fd = open_file(req, f, err, errlen);
		}
	}
	if (fd < 0) {
		r = fd;
		goto fail;
	}
	ram->fd = fd;
	r = prepare(ram, f, asked, size, req, fd, err, errlen);
	if (r)
		goto fail;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)f->offset);
	if (p == MAP_FAILED) {
		r = -errno;
		/* hugetlbfs reserved the holes' pages at mmap: a short pool fails here. */
		if (r == -ENOMEM && ram->backend->hugetlb_sysfs &&
		    mm_backing_check_capacity(ram->backend, size - f->held_before, 1, err,
					      errlen))
			goto fail;
		snprintf(
			err, errlen,
			"--mem-path %s: mapping %llu MiB at offset %llu MiB: %s%s",
			f->path, MIB(size), MIB(f->offset), strerror(-r),
			r == -ENOMEM && ram->backend->hugetlb_sysfs
				? " (the hugetlb pool or the mount's size= limit is short)"
				: "");
		goto fail;
	}
	ram->hva = ram->map_base = p;
	ram->map_bytes = size;
	ram->size = size;
	return 0;
fail:
	mm_file_unmap(ram);
	free(f);
	*ram = (struct guest_ram){ .fd = -1 };
	return r;
}

void mm_file_unmap(struct guest_ram *ram)
{
	if (ram->map_base)
		munmap(ram->map_base, ram->map_bytes);
	ram->map_base = ram->hva = NULL;
	/* Closing our fd drops our lock; a lease's keeper holds its own until it has scrubbed. */
	if (ram->fd >= 0)
		close(ram->fd);
	ram->fd = -1;
	if (ram->file && ram->file->lease.leased)
		mm_lease_end(&ram->file->lease);
}
