/* The sweep in a plain Linux process: same sizes, iterations and timing boundaries as the guest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MIB	     (1UL << 20)
#define PAGE	     4096UL
#define NSEC_PER_SEC 1e9

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / NSEC_PER_SEC;
}

/* mmap timed with the touch loop, as in the guest (OSv timed only the touch). */
static void measure(unsigned it, unsigned long mib, int populate)
{
	size_t bytes = mib * MIB;
	double t0, t1, t2;
	volatile char *p;

	t0 = now_s();
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
	t1 = now_s();
	if (p == MAP_FAILED) {
		perror("sweep-host: mmap");
		exit(1);
	}
	for (size_t off = 0; off < bytes; off += PAGE)
		p[off] = 1;
	t2 = now_s();
	munmap((void *)p, bytes);
	printf("%u\t%lu\t%s\t%.9f\t%.9f\n", it, mib, populate ? "populate" : "demand",
	       t1 - t0, t2 - t1);
}

int main(int argc, char **argv)
{
	unsigned long max_mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 1024;
	unsigned iterations = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 5;

	if (!max_mib || !iterations) {
		fprintf(stderr, "usage: sweep-host [MAX_MIB] [ITERATIONS]\n");
		return 2;
	}
	printf("iteration\tsize_mib\tmode\tmap_s\ttouch_s\n");
	for (unsigned it = 1; it <= iterations; it++)
		for (unsigned long mib = 1; mib <= max_mib; mib *= 2)
			for (int populate = 0; populate < 2; populate++)
				measure(it, mib, populate);
	return 0;
}
