/* Reference for bench/eager-scaling: MADV_POPULATE_WRITE of a fresh mapping by N threads. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "minivmm_abi.h"
#include "kvm_compat.h"

#define NSEC_PER_SEC 1e9

struct slice {
	uint8_t *p;
	uint64_t len;
	int err;
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

	s->err = s->len && madvise(s->p, s->len, MADV_POPULATE_WRITE);
	return NULL;
}

/* Same mapping flags and slicing as minivmm's anon backing and eager threads. */
int main(int argc, char **argv)
{
	uint64_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 1ULL << 30;
	unsigned n = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1;
	pthread_t tid[256];
	struct slice s[256];
	uint8_t *p;
	double t0, t1;

	if (!n || n > 256 || !bytes) {
		fprintf(stderr, "usage: populate-ref BYTES THREADS\n");
		return 2;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED || madvise(p, bytes, MADV_NOHUGEPAGE)) {
		perror("populate-ref: mmap");
		return 1;
	}
	t0 = now_s();
	for (unsigned i = 0; i < n; i++) {
		uint64_t a, b;

		mvm_slice(bytes, n, i, 2ULL << 20, &a, &b);
		s[i] = (struct slice){ p + a, b - a, 0 };
		pthread_create(&tid[i], NULL, populate, &s[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		if (s[i].err) {
			perror("populate-ref: MADV_POPULATE_WRITE");
			return 1;
		}
	}
	t1 = now_s();
	printf("%.9f\n", t1 - t0);
	return 0;
}
