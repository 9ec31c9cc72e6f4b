/*
 * The kernel's own populate rate, the reference for minivmm's eager populate:
 * MADV_POPULATE_WRITE of a fresh anonymous mapping by N threads.
 *   populate-ref BYTES THREADS [4k|thp]
 * Same mapping flags and slicing as minivmm's anon (4k: MADV_NOHUGEPAGE) and
 * thp (MADV_HUGEPAGE on a 2 MiB-aligned mapping) backings and its eager
 * threads. Prints the populate's seconds (all threads released to all joined).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "minivmm_abi.h"
#include "kvm_compat.h"

#define NSEC_PER_SEC 1e9
#define HUGE_2M	     (2ULL << 20)
#define MAX_THREADS  256

struct slice {
	uint8_t *p;
	uint64_t len;
	int err; /* errno of the thread's madvise, 0 when it succeeded */
	pthread_barrier_t *go;
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / NSEC_PER_SEC;
}

static void *populate(void *arg)
{
	struct slice *s = arg;

	pthread_barrier_wait(s->go);
	s->err = s->len && madvise(s->p, s->len, MADV_POPULATE_WRITE) ? errno : 0;
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 1ULL << 30;
	unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1;
	int thp = argc > 3 && !strcmp(argv[3], "thp");
	pthread_t tid[MAX_THREADS];
	struct slice s[MAX_THREADS];
	pthread_barrier_t go;
	uint8_t *p;
	double t0, t1;

	if (!n || n > MAX_THREADS || !bytes || argc > 4 ||
	    (argc > 3 && !thp && strcmp(argv[3], "4k"))) {
		fprintf(stderr, "usage: populate-ref BYTES THREADS [4k|thp]\n");
		return 2;
	}
	/* thp: one extra huge page of address space so the start can be aligned. */
	p = mmap(NULL, bytes + (thp ? HUGE_2M : 0), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		perror("populate-ref: mmap");
		return 1;
	}
	if (thp)
		p = (uint8_t *)(((uintptr_t)p + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
	if (madvise(p, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		perror("populate-ref: madvise");
		return 1;
	}
	/*
	 * Every thread exists before any populates: creating a thread maps its
	 * stack, which waits for the mmap lock a running MADV_POPULATE_WRITE holds,
	 * so threads started one by one would populate one after the other.
	 */
	pthread_barrier_init(&go, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		uint64_t a, b;

		mvm_slice(bytes, n, i, HUGE_2M, &a, &b);
		s[i] = (struct slice){ p + a, b - a, 0, &go };
		if (pthread_create(&tid[i], NULL, populate, &s[i])) {
			fprintf(stderr, "populate-ref: pthread_create failed\n");
			return 1;
		}
	}
	t0 = now_s();
	pthread_barrier_wait(&go);
	for (unsigned i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		if (s[i].err) {
			fprintf(stderr, "populate-ref: MADV_POPULATE_WRITE: %s\n",
				strerror(s[i].err));
			return 1;
		}
	}
	t1 = now_s();
	printf("%.9f\n", t1 - t0);
	return 0;
}
