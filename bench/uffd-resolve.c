/*
 * UFFDIO_COPY against UFFDIO_ZEROPAGE for MISSING faults, in a plain process
 * (no KVM): one thread touches fresh anonymous pages (write, read, or read
 * then write), a handler thread resolves each fault one way or the other.
 * Prints the toucher's time per page and the resolving ioctl's time.
 * The comparison behind mm/paging/uffd_handler.c's choice of UFFDIO_COPY.
 *   make build/bench/uffd-resolve && build/bench/uffd-resolve [MIB] [ROUNDS]
 * Runs each case once per round, the cases interleaved (ABAB...).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE	   4096UL
#define NS_PER_S   1e9
#define NS_PER_US  1e3
#define DEFAULT_MB 16

enum touch { WRITE, READ, READ_WRITE };
static const char *const touch_names[] = { "write", "read", "read+write" };

struct job {
	int uffd, zeropage, stop;
	double ioctl_ns;
	long faults;
	int err;
};

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * NS_PER_S + (double)t.tv_nsec;
}

static void *handler(void *arg)
{
	static char zero[PAGE] __attribute__((aligned(PAGE)));
	struct job *j = arg;
	struct uffd_msg m;

	while (!__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { .fd = j->uffd, .events = POLLIN };
		unsigned long addr;
		double t0;
		int r;

		if (poll(&p, 1, 10) <= 0 || read(j->uffd, &m, sizeof(m)) != sizeof(m))
			continue;
		addr = m.arg.pagefault.address & ~(PAGE - 1);
		t0 = now_ns();
		if (j->zeropage) {
			struct uffdio_zeropage z = { .range = { addr, PAGE } };

			r = ioctl(j->uffd, UFFDIO_ZEROPAGE, &z);
		} else {
			struct uffdio_copy c = { .dst = addr,
						 .src = (unsigned long)zero,
						 .len = PAGE };

			r = ioctl(j->uffd, UFFDIO_COPY, &c);
		}
		j->ioctl_ns += now_ns() - t0;
		j->faults++;
		if (r && !j->err)
			j->err = errno;
	}
	return NULL;
}

/* One case: a fresh mapping of bytes, registered MISSING, touched once per page. */
static int run_case(size_t bytes, enum touch how, int zeropage)
{
	struct job j = { .zeropage = zeropage };
	struct uffdio_api api = { .api = UFFD_API };
	volatile char *mem;
	volatile char sink = 0;
	pthread_t t;
	double t0, t1;

	j.uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (j.uffd < 0 || ioctl(j.uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		return -1;
	}
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED || madvise((void *)mem, bytes, MADV_NOHUGEPAGE)) {
		perror("mmap");
		return -1;
	}
	struct uffdio_register reg = { .range = { (unsigned long)mem, bytes },
				       .mode = UFFDIO_REGISTER_MODE_MISSING };
	if (ioctl(j.uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return -1;
	}
	if (pthread_create(&t, NULL, handler, &j))
		return -1;
	t0 = now_ns();
	for (size_t off = 0; off < bytes; off += PAGE) {
		if (how != WRITE)
			sink += mem[off];
		if (how != READ)
			mem[off] = 1;
	}
	t1 = now_ns();
	__atomic_store_n(&j.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	munmap((void *)mem, bytes);
	close(j.uffd);
	if (j.err) {
		fprintf(stderr, "resolve: %s\n", strerror(j.err));
		return -1;
	}
	printf("%-16s %-10s %6ld faults  toucher %6.2f us/page  ioctl %5.2f us\n",
	       zeropage ? "UFFDIO_ZEROPAGE" : "UFFDIO_COPY", touch_names[how], j.faults,
	       (t1 - t0) / NS_PER_US / (double)(bytes / PAGE),
	       j.ioctl_ns / NS_PER_US / (double)(j.faults ? j.faults : 1));
	return 0;
}

int main(int argc, char **argv)
{
	size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : DEFAULT_MB) << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 2;

	if (!bytes || rounds < 1) {
		fprintf(stderr, "usage: %s [MIB] [ROUNDS]\n", argv[0]);
		return 2;
	}
	for (int r = 0; r < rounds; r++)
		for (int how = WRITE; how <= READ_WRITE; how++)
			for (int z = 0; z < 2; z++)
				if (run_case(bytes, (enum touch)how, z))
					return 1;
	return 0;
}
