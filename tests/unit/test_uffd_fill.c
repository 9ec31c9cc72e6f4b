/* Unit tests: restoring RAM from a sparse memory file by userfaultfd (faults, fillers, replay, minor), no KVM. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "experiment.h"

#define RAM   (8ULL << 20)
#define PAGE  4096ULL
#define PAGES (RAM / PAGE)
#define SKIP  77 /* the child's exit: no userfaultfd here */

/* Page i of the file: data (a pattern naming it) on two pages of three, the third a hole. */
static int is_data(uint64_t i)
{
	return i % 3 != 2;
}

static uint64_t word(uint64_t i, uint64_t k)
{
	return (i << 20) ^ (k * 0x9e3779b97f4a7c15ULL) ^ 1;
}

/* A sparse memory file of RAM bytes in dir: 0 or -errno, the path in path. */
static int make_file(const char *dir, char *path, size_t len)
{
	uint64_t buf[PAGE / 8];
	int fd;

	snprintf(path, len, "%s/minivmm-unit-mem-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)RAM))
		return -errno;
	for (uint64_t i = 0; i < PAGES; i++) {
		if (!is_data(i))
			continue;
		for (uint64_t k = 0; k < PAGE / 8; k++)
			buf[k] = word(i, k);
		if (pwrite(fd, buf, PAGE, (off_t)(i * PAGE)) != (ssize_t)PAGE)
			return -EIO;
	}
	close(fd);
	return 0;
}

/* Page i of RAM holds what page i of the file holds. */
static int page_ok(const uint8_t *hva, uint64_t i)
{
	const uint64_t *w = (const uint64_t *)(hva + i * PAGE);

	for (uint64_t k = 0; k < PAGE / 8; k++)
		if (w[k] != (is_data(i) ? word(i, k) : 0))
			return 0;
	return 1;
}

enum how { FAULTS, BACKGROUND, REPLAY, MINOR };

/* In a child: restore RAM from path one way and check it; exits with the failure count. */
static void restore_child(const char *path, enum how how)
{
	const struct mm_backend *b = mm_backend_find(how == MINOR ? "memfd" : "anon");
	struct uffd_config c = { .threads = 2 };
	struct uffd_pager *p;
	struct guest_ram ram = { 0 };
	struct uffd_stats st;
	struct uffd_fill_stats fs;
	char err[512];
	int fd = open(path, O_RDONLY), r;
	uint64_t touched = 0, data_touched = 0;
	/* Replay's working set: pages 100..299 and 4, in that order. */
	const struct gpa_range ws[] = { { 100 * PAGE, 200 * PAGE }, { 4 * PAGE, PAGE } };

	CHECK(fd >= 0);
	if (how == MINOR) {
		ram.hva = mmap(NULL, RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		CHECK(ram.hva != MAP_FAILED);
		ram.size = ram.map_bytes = RAM;
		ram.map_base = ram.hva;
		ram.fd = fd;
		ram.backend = b;
	} else {
		CHECK_EQ(mm_ram_create(&ram, b, RAM, NULL, err, sizeof(err)), 0);
	}
	r = uffd_open(b, RAM, how == MINOR, &c, &p, err, sizeof(err));
	if (r == -EPERM || r == -ENOSYS)
		_exit(SKIP);
	CHECK_EQ(r, 0);
	r = uffd_set_file(p, fd, err, sizeof(err));
	if (r)
		fprintf(stderr, "    %s\n", err);
	CHECK_EQ(r, 0);
	CHECK_EQ(uffd_file_data_bytes(p), (PAGES - PAGES / 3) * PAGE);
	r = uffd_start(p, &ram, NULL, err, sizeof(err));
	if (r)
		fprintf(stderr, "    %s\n", err);
	CHECK_EQ(r, 0);
	if (how != FAULTS && how != MINOR) {
		struct uffd_fill_plan plan = { .first = how == REPLAY ? ws : NULL,
					       .nfirst = how == REPLAY ? 2 : 0,
					       .rest = how == BACKGROUND,
					       .threads = 2,
					       .chunk_bytes = 64 * PAGE };

		CHECK_EQ(uffd_fill_start(p, &plan, err, sizeof(err)), 0);
		CHECK_EQ(uffd_fill_wait_first(p, err, sizeof(err)), 0);
	}
	if (how == REPLAY) {
		/* The working set is in: touching it takes no fault. */
		for (uint64_t i = 100; i < 300; i++)
			CHECK(page_ok(ram.hva, i));
		CHECK(page_ok(ram.hva, 4));
	}
	/* The "guest": every 5th page read, written in between. */
	for (uint64_t i = 0; i < PAGES; i += 5) {
		CHECK(page_ok(ram.hva, i));
		ram.hva[i * PAGE + 8] ^= 0xff;
		ram.hva[i * PAGE + 8] ^= 0xff;
		touched += !(how == REPLAY && ((i >= 100 && i < 300) || i == 4));
		data_touched += is_data(i);
	}
	if (how == BACKGROUND) {
		for (unsigned ms = 0; ms < 10000; ms++) {
			uffd_fill_stats(p, &fs);
			if (fs.all_s > 0 || fs.failed)
				break;
			usleep(1000);
		}
	}
	uffd_stop(p);
	uffd_stats(p, UINT32_MAX, &st);
	uffd_fill_stats(p, &fs);
	CHECK(!fs.failed);
	/* What was touched or filled is the file's (after the stop, the rest is fresh zeros). */
	for (uint64_t i = 0; i < PAGES; i++)
		if (how == BACKGROUND || how == MINOR || i % 5 == 0 ||
		    (how == REPLAY && ((i >= 100 && i < 300) || i == 4)))
			CHECK(page_ok(ram.hva, i));
	switch (how) {
	case FAULTS: /* one fault per page touched */
		CHECK_EQ(st.faults, touched);
		CHECK_EQ(st.pages, touched);
		CHECK_EQ(lat_bucket_total(&st.lat), touched);
		break;
	case BACKGROUND: /* every page exactly once, by a handler or a filler */
		CHECK(fs.all_s > 0);
		CHECK_EQ(st.pages + fs.pages, PAGES);
		CHECK(fs.reads > 0 && fs.read_bytes <= RAM);
		break;
	case REPLAY: /* the working set by the fillers in large reads, the rest by faults */
		CHECK_EQ(fs.first_pages, 201);
		CHECK_EQ(fs.pages, 201);
		CHECK(fs.reads >= 4 &&
		      fs.reads <= 20); /* 64 pages a read, holes not read */
		CHECK_EQ(st.faults, touched);
		CHECK(fs.first_s > 0);
		break;
	case MINOR: /* only data pages fault (minor); holes are the kernel's */
		CHECK_EQ(st.faults, data_touched);
		break;
	}
	uffd_free(p);
	if (how == MINOR) {
		munmap(ram.hva, RAM);
		/* The guest's writes stayed private: the file is as it was. */
		ram.hva = mmap(NULL, RAM, PROT_READ, MAP_SHARED, fd, 0);
		for (uint64_t i = 0; i < PAGES; i += 5)
			CHECK(page_ok(ram.hva, i));
		munmap(ram.hva, RAM);
	} else {
		mm_ram_destroy(&ram);
	}
	close(fd);
	_exit(check_failures ? 1 : 0);
}

static void restore(const char *path, enum how how)
{
	int st = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		check_failures = 0;
		restore_child(path, how);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == SKIP) {
		fprintf(stderr, "    (no userfaultfd here)\n");
		return;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "    restore way %d: child wait status 0x%x\n", how, st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

void test_uffd_fill(void)
{
	char path[128], shm[128], err[512];
	int fd;

	CHECK_EQ(make_file("/tmp", path, sizeof(path)), 0);
	restore(path, FAULTS);
	restore(path, BACKGROUND);
	restore(path, REPLAY);
	/* MINOR needs tmpfs or hugetlbfs: refused elsewhere, naming the file system. */
	fd = open(path, O_RDONLY);
	if (uffd_minor_check(fd, err, sizeof(err)))
		CHECK_STR_CONTAINS(err, "not on tmpfs or hugetlbfs");
	close(fd);
	unlink(path);
	if (make_file("/dev/shm", shm, sizeof(shm)) == 0) {
		restore(shm, MINOR);
		unlink(shm);
	}
}

/* The memory file's page cache before a --compare restore: filled (warm), dropped (cold). */
void test_restore_cache(void)
{
	struct restore_cache c;
	char path[128], err[512];
	int fd;

	CHECK_EQ(make_file("/tmp", path, sizeof(path)), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && fdatasync(fd) == 0); /* clean pages: DONTNEED drops them */
	close(fd);
	CHECK_EQ(restore_cache_set(path, 1, &c, err, sizeof(err)), 0);
	CHECK_EQ(c.file_bytes, RAM);
	CHECK(c.cached_bytes >= (PAGES - PAGES / 3) * PAGE); /* every data page */
	/* DONTNEED is advice: under load (another emulator, a campaign beside
	 * the unit tests) a page now and then is still being read back or sits
	 * in another CPU's LRU batch. A few tries, then the bound. */
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(restore_cache_set(path, 0, &c, err, sizeof(err)), 0);
		if (c.cached_bytes < RAM / 4)
			break;
		usleep(100 * 1000);
	}
	CHECK(c.cached_bytes < RAM / 4);
	unlink(path);
	CHECK(restore_cache_set(path, 0, &c, err, sizeof(err)) == -ENOENT);
	CHECK_STR_CONTAINS(err, "No such file");
}
