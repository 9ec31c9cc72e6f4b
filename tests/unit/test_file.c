/* Unit tests: file-backed RAM (backing from the file system, checks), the reservoir's leases, the roofline. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "experiment.h"

#define MB(x) ((uint64_t)(x) << 20)

static const struct mm_backend *bk(const char *name)
{
	return mm_backend_find(name);
}

void test_file_backing(void)
{
	char err[512];

	/* Without --backing, the file system decides. */
	CHECK(mm_file_backing(HUGETLBFS_MAGIC, MB(2), NULL, 0, err, sizeof(err)) ==
	      bk("hugetlb2m"));
	CHECK(mm_file_backing(HUGETLBFS_MAGIC, MB(1024), NULL, 0, err, sizeof(err)) ==
	      bk("hugetlb1g"));
	CHECK(mm_file_backing(TMPFS_MAGIC, 4096, NULL, 0, err, sizeof(err)) ==
	      bk("memfd"));
	CHECK(mm_file_backing(HUGETLBFS_MAGIC, 64 << 10, NULL, 0, err, sizeof(err)) ==
	      NULL);
	CHECK_STR_CONTAINS(err, "64 KiB pages");
	/* A disk file system: refused unless asked, then its page cache (4 KiB, shared). */
	CHECK(mm_file_backing(EXT4_SUPER_MAGIC, 4096, NULL, 0, err, sizeof(err)) == NULL);
	CHECK_STR_CONTAINS(err, "ext4");
	CHECK_STR_CONTAINS(err, "--mem-any-fs");
	CHECK(mm_file_backing(EXT4_SUPER_MAGIC, 4096, NULL, 1, err, sizeof(err)) ==
	      bk("memfd"));
	/* --backing must agree with the file system. */
	CHECK(mm_file_backing(HUGETLBFS_MAGIC, MB(2), bk("hugetlb2m"), 0, err,
			      sizeof(err)) == bk("hugetlb2m"));
	CHECK(mm_file_backing(HUGETLBFS_MAGIC, MB(2), bk("hugetlb1g"), 0, err,
			      sizeof(err)) == NULL);
	CHECK_STR_CONTAINS(err,
			   "1024 MiB pages; the file is on hugetlbfs with 2 MiB pages");
	CHECK(mm_file_backing(TMPFS_MAGIC, 4096, bk("anon"), 0, err, sizeof(err)) ==
	      NULL);
	CHECK_STR_CONTAINS(err, "private anonymous");
	CHECK(mm_file_backing(TMPFS_MAGIC, 4096, bk("hugetlb2m"), 0, err, sizeof(err)) ==
	      NULL);
	CHECK_STR_CONTAINS(err, "the file is on tmpfs");
	CHECK(mm_file_backing(HUGETLBFS_MAGIC, MB(2), bk("memfd"), 0, err, sizeof(err)) ==
	      NULL);
	CHECK(!strcmp(mm_fs_name(TMPFS_MAGIC), "tmpfs") &&
	      !strcmp(mm_fs_name(0x1234), "other"));
}

void test_capacity_file(void)
{
	struct mm_file f = { .held_before = 1ULL << 40 };
	char err[512];

	/* A file whose range is allocated already needs nothing more, however large. */
	CHECK(mm_ram_check_capacity(bk("memfd"), 1ULL << 40, &f, err, sizeof(err)) == 0);
	f.held_before = 0;
	CHECK(mm_ram_check_capacity(bk("memfd"), 1ULL << 40, &f, err, sizeof(err)) ==
	      -ENOMEM);
	CHECK_STR_CONTAINS(err, "the file's unallocated part");
	CHECK(mm_ram_check_capacity(bk("memfd"), 1ULL << 40, NULL, err, sizeof(err)) ==
	      -ENOMEM);
}

/* A --mem-path file on tmpfs (/dev/shm): sized, locked, counted, refused when short. */
void test_file_map(void)
{
	char path[64], dir[64], err[768];
	struct guest_ram a, b;
	struct mm_file_request req = { .path = path };
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/minivmm-unit-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/dev/shm/minivmm-unit-dir-%d", (int)getpid());
	unlink(path);
	CHECK(mm_ram_create(&a, NULL, MB(4), &req, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "no such file");
	req.grow = 1;
	CHECK(mm_ram_create(&a, NULL, MB(4), &req, err, sizeof(err)) == 0);
	CHECK(a.backend == bk("memfd") && a.file && a.file->backing_inferred &&
	      a.file->grew && a.file->locked && a.file->allocated_before == 0);
	a.hva[MB(1)] = 7; /* one page written: data */
	/* The same range again while held: refused (two VMs never share RAM). */
	CHECK(mm_ram_create(&b, NULL, MB(4), &req, err, sizeof(err)) == -EBUSY);
	CHECK_STR_CONTAINS(err, "never share");
	mm_ram_destroy(&a);
	CHECK(a.file && a.backend && a.fd == -1 && !a.hva); /* the description stays */
	mm_ram_free(&a);
	/* Let go: it maps again, and sees what was written (a file keeps its contents). */
	req.grow = 0;
	CHECK(mm_ram_create(&b, bk("memfd"), MB(4), &req, err, sizeof(err)) == 0);
	CHECK(b.hva && b.hva[MB(1)] == 7 && b.file->allocated_before == 4096 &&
	      b.file->allocated_exact && !b.file->backing_inferred);
	mm_ram_destroy(&b);
	mm_ram_free(&b);
	/* Short, and not asked to grow: refused; never shrunk. */
	CHECK(mm_ram_create(&b, NULL, MB(8), &req, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "--mem-grow");
	CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size == MB(4));
	CHECK(mm_ram_create(&b, bk("anon"), MB(4), &req, err, sizeof(err)) == -EINVAL);
	CHECK(mm_ram_create(&b, NULL, MB(2), &req, err, sizeof(err)) == 0);
	mm_ram_destroy(&b);
	mm_ram_free(&b);
	CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size == MB(4));
	/* A directory: an unlinked file of its own, nothing left there. */
	CHECK(mkdir(dir, 0700) == 0);
	req.path = dir;
	CHECK(mm_ram_create(&b, NULL, MB(4), &req, err, sizeof(err)) == 0);
	CHECK(b.file && b.file->tmpfile && !b.file->locked);
	mm_ram_destroy(&b);
	mm_ram_free(&b);
	CHECK(rmdir(dir) == 0); /* empty */
	/* Not a regular file. */
	req.path = "/dev/null";
	CHECK(mm_ram_create(&b, NULL, MB(4), &req, err, sizeof(err)) == -EINVAL);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	close(fd);
	unlink(path);
}

/* Until nobody holds a lease on the pool: every keeper has scrubbed, logged and exited. */
static void wait_unleased(const char *pool)
{
	int fd = open(pool, O_RDONLY);

	for (int i = 0; fd >= 0 && i < 1000; i++) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		if (fcntl(fd, F_OFD_GETLK, &fl) || fl.l_type == F_UNLCK)
			break;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	if (fd >= 0)
		close(fd);
}

/* Once every keeper is done: the hand-made reservoir's files, then DIR. rmdir's result. */
static int remove_reservoir(const char *dir)
{
	static const char *const files[] = { "pool/mem", "pool", "state", "scrub.log",
					     "reservoir.info" };
	char path[128];

	snprintf(path, sizeof(path), "%s/pool/mem", dir);
	wait_unleased(path);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		remove(path);
	}
	return rmdir(dir);
}

/* A lease of size bytes, or a failed check saying why (and 0: nothing to go on with). */
static int leased(struct guest_ram *r, uint64_t size, const struct mm_file_request *req,
		  const char *when)
{
	char err[768];

	if (mm_ram_create(r, NULL, size, req, err, sizeof(err)) == 0)
		return 1;
	fprintf(stderr, "    %s:%d: no lease %s: %s\n", __FILE__, __LINE__, when, err);
	check_failures++;
	return 0;
}

/* A reservoir on tmpfs made by hand as scripts/reservoir makes one (without its mounts). */
void test_reservoir_lease(void)
{
	char dir[64], path[128], err[768];
	struct mm_reservoir_info info = { .bytes = MB(8),
					  .page_bytes = 4096,
					  .unit_bytes = MB(2),
					  .backing = "memfd" };
	struct mm_reservoir_info got;
	struct mm_file_request req = { 0 };
	struct guest_ram a, b;
	int fd;

	snprintf(dir, sizeof(dir), "/dev/shm/minivmm-unit-res-%d", (int)getpid());
	req.reservoir = dir;
	CHECK(mm_ram_create(&a, NULL, MB(4), &req, err, sizeof(err)) == -ENOENT);
	CHECK_STR_CONTAINS(err, "no reservoir at");
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(path, sizeof(path), "%s/pool", dir);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(mm_reservoir_info_write(dir, &info) == 0);
	CHECK(mm_reservoir_info_read(dir, &got, err, sizeof(err)) == 0);
	CHECK(got.bytes == MB(8) && got.unit_bytes == MB(2) &&
	      !strcmp(got.backing, "memfd"));
	snprintf(path, sizeof(path), "%s/state", dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0 && write(fd, "0000", 4) == 4);
	close(fd);
	snprintf(path, sizeof(path), "%s/pool/mem", dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0 && fallocate(fd, 0, 0, (off_t)MB(8)) == 0);
	close(fd);

	/* Two lessees get ranges of their own; a third finds none. */
	CHECK(mm_ram_create(&a, NULL, MB(4), &req, err, sizeof(err)) == 0);
	CHECK(a.file->lease.leased && a.file->offset == 0 &&
	      a.file->allocated_before == MB(4));
	CHECK(mm_ram_create(&b, NULL, MB(4), &req, err, sizeof(err)) == 0);
	CHECK(b.file->offset == MB(4));
	memset(a.hva, 0xa5, MB(4)); /* what the next lessee must never see */
	mm_ram_destroy(&b);
	mm_ram_free(&b);
	/* (It waits for b's scrub, then finds a's range in use.) */
	CHECK(mm_ram_create(&b, NULL, MB(8), &req, err, sizeof(err)) == -EBUSY);
	CHECK_STR_CONTAINS(err, "1 range in use by running VMs");
	CHECK(mm_ram_create(&b, NULL, MB(3), &req, err, sizeof(err)) == -EINVAL);
	/* The first lets go: its keeper scrubs, and the next lessee (it waits) sees zeros. */
	mm_ram_destroy(&a);
	if (!leased(&b, MB(8), &req, "once the keeper has scrubbed")) {
		remove_reservoir(dir);
		return;
	}
	CHECK(b.file->offset == 0);
	for (uint64_t i = 0; i < MB(8); i += 512)
		if (b.hva[i]) {
			CHECK(!"the scrubbed lease is all zero");
			break;
		}
	/* Its keeper is killed before it scrubs: the next lessee scrubs itself. */
	memset(b.hva, 0x5a, MB(8));
	kill(b.file->lease.keeper_pid, SIGKILL);
	mm_ram_destroy(&b);
	mm_ram_free(&b);
	if (!leased(&b, MB(8), &req, "after its keeper died")) {
		remove_reservoir(dir);
		return;
	}
	CHECK(b.file->lease.scrubbed_bytes == MB(8) && b.hva[MB(5)] == 0 &&
	      b.hva[0] == 0);
	mm_ram_destroy(&b);
	mm_ram_free(&b);
	mm_ram_free(&a);
	wait_unleased(path);
	/* --mem-path on the pool itself: refused, only a lease may map it. */
	req = (struct mm_file_request){ .path = path };
	CHECK(mm_ram_create(&a, NULL, MB(4), &req, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "reservoir's pool");
	CHECK(remove_reservoir(dir) == 0);
}

void test_roofline(void)
{
	static const char text[] = "# minivmm roofline 1\n"
				   "backing\top\tthreads\tbytes\tgib_per_s\n"
				   "anon\tclear\t1\t1\t2.0\n"
				   "anon\tclear\t2\t1\t4.0\n"
				   "hugetlb2m\tclear\t1\t1\t8.0\n"
				   "hugetlb2m\tmap\t1\t1\t1000.0\n";
	struct mm_roofline *r;
	struct mm_ceiling c;
	char err[256];

	CHECK(mm_roofline_parse(text, &r, err, sizeof(err)) == 0);
	mm_roofline_ceiling(r, "anon", 2, 1ULL << 30, 0, &c);
	CHECK(c.found && !strcmp(c.op, "clear") && c.gib_per_s == 4.0 &&
	      c.predicted_s == 0.25);
	/* Pre-zeroed: page tables only. */
	mm_roofline_ceiling(r, "hugetlb2m", 1, 2ULL << 30, 2ULL << 30, &c);
	CHECK(c.found && !strcmp(c.op, "map") && c.predicted_s == 0.002);
	/* Half and half: 0.5 GiB / 8 + 0.5 GiB / 1000. */
	mm_roofline_ceiling(r, "hugetlb2m", 1, 1ULL << 30, 1ULL << 29, &c);
	CHECK(c.found && !strcmp(c.op, "mixed"));
	CHECK(c.predicted_s > 0.0629 && c.predicted_s < 0.0631);
	CHECK(c.gib_per_s > 15.8 && c.gib_per_s < 15.9);
	mm_roofline_ceiling(r, "anon", 3, 1ULL << 30, 0, &c);
	CHECK(!c.found);
	CHECK_STR_CONTAINS(c.missing, "no anon clear row for 3 threads (it has 1, 2)");
	mm_roofline_ceiling(r, "hugetlb2m", 2, 1ULL << 30, 1ULL << 30, &c);
	CHECK(!c.found);
	/* What a 2 MiB reservoir would cost, for any backing: its rows at 1 thread. */
	mm_roofline_ceiling(r, "anon", 2, 1ULL << 30, 0, &c);
	CHECK(c.lease_map_gib_per_s == 1000.0 && c.lease_clear_gib_per_s == 8.0);
	CHECK(c.row_bytes == 1 &&
	      c.min_gib_per_s == 0); /* an older file: no slowest run */
	CHECK(mm_roofline_rate(r, "anon", "clear", 7) == 4.0);
	CHECK(mm_roofline_rate(r, "memfd", "clear", 1) == 0);
	mm_roofline_free(r);
	/* bench/roofline's own file: the size measured at, and the slowest run. */
	CHECK(mm_roofline_parse("backing\top\tthreads\tbytes\tgib_per_s\tmin_gib_per_s\n"
				"anon\tclear\t1\t268435456\t2.5\t1.25\n",
				&r, err, sizeof(err)) == 0);
	mm_roofline_ceiling(r, "anon", 1, 1ULL << 30, 0, &c);
	CHECK(c.found && c.row_bytes == 268435456 && c.min_gib_per_s == 1.25);
	mm_roofline_free(r);
	CHECK(mm_roofline_parse("backing\top\n", &r, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "header lacks");
	CHECK(mm_roofline_parse("backing\top\tthreads\tgib_per_s\nanon\tclear\t1\t-3\n",
				&r, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "line 2");
	CHECK(mm_roofline_parse("backing\top\tthreads\tgib_per_s\nanon\tclear\tx\t3\n",
				&r, err, sizeof(err)) == -EINVAL);
	CHECK(mm_roofline_parse("# only\n", &r, err, sizeof(err)) == -EINVAL);
}

void test_file_options(void)
{
	struct config c;
	char *v1[] = {
		"minivmm", "--mem-path", "/dev/shm/x", "--mem-grow", "g.bin", NULL
	};
	char *v2[] = {
		"minivmm", "--mem-path", "/x", "--reservoir", "/y", "g.bin", NULL
	};
	char *v3[] = { "minivmm", "--mem-grow", "g.bin", NULL };
	char roof[64];
	char *v4[] = { "minivmm", "--roofline", roof, "g.bin", NULL };
	char *v5[] = { "minivmm",   "--compare",   "--roofline", roof,	  "--backing",
		       "hugetlb2m", "--reservoir", "/y",	 "g.bin", NULL };
	char *v6[] = { "minivmm", "--eager", "--roofline", "/nonexistent/r.tsv",
		       "g.bin",	  NULL };
	FILE *f;

	snprintf(roof, sizeof(roof), "/dev/shm/minivmm-unit-roof-%d", (int)getpid());
	f = fopen(roof, "w");
	CHECK(f &&
	      fputs("backing\top\tthreads\tgib_per_s\nanon\tclear\t1\t2.5\n", f) >= 0);
	if (f)
		fclose(f);
	CHECK(options_parse(5, v1, &c) == 0 && c.vm.mem_grow && !c.vm.backing_set &&
	      !strcmp(c.vm.mem_path, "/dev/shm/x"));
	CHECK(options_parse(6, v2, &c) == -EINVAL);
	CHECK(options_parse(3, v3, &c) == -EINVAL);
	CHECK(options_parse(4, v4, &c) == -EINVAL);
	CHECK(options_parse(9, v5, &c) == 0 && c.vm.backing_set &&
	      c.vm.eager == EAGER_AUTO && !strcmp(c.vm.reservoir, "/y") &&
	      !strcmp(c.vm.roofline_path, roof));
	CHECK(options_parse(5, v6, &c) == -EINVAL); /* refused before any run */
	unlink(roof);
}
