/*
 * OSv's mmap benchmark (tests/misc-mmap-anon-perf.cc) in a plain Linux process:
 * the same timed region, loop order and table, plus the map and unmap times
 * OSv leaves untimed, in a second table and in the TSV records.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#define MIB	     (1UL << 20)
#define PAGE	     4096UL
#define NSEC_PER_SEC 1e9
#define MAX_SIZES    40

struct sample {
	double map_s, touch_s, unmap_s;
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / NSEC_PER_SEC;
}

/* OSv's loop: one byte, 0xfe, every 4096 bytes. volatile: the stores must happen. */
static void touch(volatile char *p, size_t bytes)
{
	for (size_t i = 0; i < bytes; i += PAGE)
		p[i] = (char)0xfe;
}

/*
 * OSv's mmap_and_write(): mmap outside the timed region, the timed region is
 * the touch loop alone, munmap after the clock stopped. The extra clock reads
 * around mmap and munmap sit outside the touch loop's two.
 */
static struct sample mmap_and_write(unsigned long mb, int flags)
{
	size_t size = mb * MIB;
	struct sample s;
	double t0, t1, t2, t3, t4;
	char *p;

	t0 = now_s();
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS | MAP_PRIVATE,
		 -1, 0);
	t1 = now_s();
	if (p == MAP_FAILED) {
		fprintf(stderr, "sweep-host: mmap of %lu MiB: %s\n", mb, strerror(errno));
		exit(1);
	}
	t2 = now_s();
	touch(p, size);
	t3 = now_s();
	if (munmap(p, size)) {
		fprintf(stderr, "sweep-host: munmap of %lu MiB: %s\n", mb,
			strerror(errno));
		exit(1);
	}
	t4 = now_s();
	s.map_s = t1 - t0;
	s.touch_s = t3 - t2;
	s.unmap_s = t4 - t3;
	return s;
}

static void tsv_record(FILE *tsv, unsigned it, unsigned long mb, const char *mode,
		       const struct sample *s)
{
	if (tsv)
		fprintf(tsv, "%u\t%lu\t%s\t%.9f\t%.9f\t%.9f\n", it, mb, mode, s->map_s,
			s->touch_s, s->unmap_s);
}

/* OSv's main(): iterations of sizes 1..max MiB, demand then populate for each size. */
static void sweep(unsigned long max_mib, unsigned iterations, FILE *tsv)
{
	struct sample d[MAX_SIZES], p[MAX_SIZES];

	for (unsigned i = 1; i <= iterations; i++) {
		unsigned n = 0;

		printf("Iteration %u\n\n", i);
		printf("     time (seconds)\n");
		printf(" MiB demand populate\n");
		for (unsigned long mb = 1; mb <= max_mib && n < MAX_SIZES; mb *= 2, n++) {
			d[n] = mmap_and_write(mb, 0);
			p[n] = mmap_and_write(mb, MAP_POPULATE);
			printf("%4lu %-6.3f %-6.3f\n", mb, d[n].touch_s, p[n].touch_s);
			fflush(stdout);
			tsv_record(tsv, i, mb, "demand", &d[n]);
			tsv_record(tsv, i, mb, "populate", &p[n]);
		}
		printf("\n");
		/* Not in OSv's output: what its table leaves out, printed after it. */
		printf("     map and unmap (seconds, outside the timed loop)\n");
		printf(" MiB    demand map     unmap  populate map     unmap\n");
		for (unsigned k = 0, mb = 1; k < n; k++, mb *= 2)
			printf("%4u %13.6f %9.6f %13.6f %9.6f\n", mb, d[k].map_s,
			       d[k].unmap_s, p[k].map_s, p[k].unmap_s);
		printf("\n");
	}
}

/*
 * The host side of the guest's `flat` workload: one mapping holding every
 * size back to back (1 + 2 + ... + max MiB), each size touched once per
 * iteration in the same order. Iteration 1 is the first touch; later ones
 * are warm passes over pages already present.
 */
static void flat(unsigned long max_mib, unsigned iterations, FILE *tsv)
{
	size_t total = 0;
	char *base;

	for (size_t mb = 1; mb <= max_mib; mb *= 2)
		total += mb * MIB;
	base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1,
		    0);
	if (base == MAP_FAILED) {
		fprintf(stderr, "sweep-host: mmap of %zu MiB: %s\n", total / MIB,
			strerror(errno));
		exit(1);
	}
	for (unsigned i = 1; i <= iterations; i++) {
		char *p = base;

		printf("Iteration %u (flat: one mapping, touch timed)\n\n", i);
		printf("     time (seconds)\n");
		printf(" MiB  touch\n");
		for (size_t mb = 1; mb <= max_mib; mb *= 2) {
			struct sample s = { 0 };
			double t0 = now_s();

			touch(p, mb * MIB);
			s.touch_s = now_s() - t0;
			printf("%4zu  %-6.3f\n", mb, s.touch_s);
			tsv_record(tsv, i, mb, "flat", &s);
			p += mb * MIB;
		}
		printf("\n");
	}
	munmap(base, total);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sweep-host [--max-mib N] [--iterations N] [--flat] [--no-thp] "
		   "[--tsv FILE]\n"
		   "  OSv's mmap benchmark (1..N MiB, doubling; default 1024 MiB, 5 "
		   "iterations);\n"
		   "  --flat: the guest's flat workload; --no-thp: PR_SET_THP_DISABLE "
		   "(4 KiB pages\n"
		   "  whatever the THP knob says); --tsv: every sample, with map and "
		   "unmap times\n");
}

static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || *out == 0 || *out > max ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "max-mib", required_argument, NULL, 'm' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "flat", no_argument, NULL, 'f' },
		{ "no-thp", no_argument, NULL, 'n' },
		{ "tsv", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long max_mib = 1024, iterations = 5;
	int is_flat = 0, c;
	FILE *tsv = NULL;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (parse_count(optarg, 1UL << 20, &max_mib)) {
				fprintf(stderr,
					"sweep-host: --max-mib: bad number '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'i':
			if (parse_count(optarg, 1000, &iterations)) {
				fprintf(stderr,
					"sweep-host: --iterations: bad number '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'f':
			is_flat = 1;
			break;
		case 'n':
			if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)) {
				fprintf(stderr, "sweep-host: PR_SET_THP_DISABLE: %s\n",
					strerror(errno));
				return 1;
			}
			break;
		case 't':
			tsv = fopen(optarg, "w");
			if (!tsv) {
				fprintf(stderr, "sweep-host: %s: %s\n", optarg,
					strerror(errno));
				return 1;
			}
			fprintf(tsv,
				"iteration\tsize_mib\tmode\tmap_s\ttouch_s\tunmap_s\n");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sweep-host: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (is_flat)
		flat(max_mib, (unsigned)iterations, tsv);
	else
		sweep(max_mib, (unsigned)iterations, tsv);
	if (tsv && fclose(tsv)) {
		fprintf(stderr, "sweep-host: writing the TSV: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
