/*
 * OSv's mmap benchmark (tests/misc-mmap-anon-perf.cc) in a plain Linux process:
 * the same timed region, loop order and table, plus the map and unmap times
 * OSv leaves untimed, in a second table and in the TSV records.
 *
 * The same static binary is the Linux guest's sweep and flat workloads
 * (guest/linux/, make linux-guest): under minivmm (its /init says so in the
 * environment, mvm.h) it also sends every measurement as the minivmm
 * guest's records (struct mvm_rec_sweep: TSC cycles, the guest's faults in
 * the touch loop, the sum of the frames mapped) and the same marks, so
 * minivmm's tables, --compare and the scripts read it unchanged. Called
 * `flat` (argv[0]) it is --flat.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "mvm.h"
#include "snappoint.h"

#define MIB	     (1UL << 20)
#define PAGE	     4096UL
#define NSEC_PER_SEC 1e9
#define MAX_SIZES    40

struct sample {
	double map_s, touch_s, unmap_s;
	struct mvm_rec_sweep rec; /* under minivmm: what goes to the VMM */
};

#define PAGEMAP_CHUNK 512 /* entries read per pread */

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

static long minor_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_minflt;
}

/*
 * Under minivmm: the sum of the guest-physical frames of [p, p + bytes)
 * (the minivmm guest's reuse check, pfn_sum), from /proc/self/pagemap,
 * after the timed loop. 0 elsewhere.
 */
static uint64_t pfn_sum(const char *p, size_t bytes)
{
	static int fd = -2;
	uint64_t ent[PAGEMAP_CHUNK], sum = 0;
	size_t pages = bytes / PAGE;

	if (!mvm_active())
		return 0;
	if (fd == -2)
		fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	for (size_t i = 0; fd >= 0 && i < pages; i += PAGEMAP_CHUNK) {
		size_t n = pages - i < PAGEMAP_CHUNK ? pages - i : PAGEMAP_CHUNK;
		ssize_t got = pread(fd, ent, n * sizeof(ent[0]),
				    (off_t)(((uintptr_t)p / PAGE + i) * sizeof(ent[0])));

		for (ssize_t k = 0; k < got / (ssize_t)sizeof(ent[0]); k++)
			sum += ent[k] & ((1ULL << 55) - 1);
	}
	return sum;
}

/* The record a sample is, sent as one batch: the VMM samples KVM's counters at each. */
static void send_sample(struct sample *s, uint32_t workload, uint32_t mode, unsigned it,
			unsigned long mb)
{
	s->rec.workload = workload;
	s->rec.mode = mode;
	s->rec.iteration = it;
	s->rec.size_mib = (uint32_t)mb;
	s->rec.vcpu = 0;
	s->rec.pages = mb * MIB / PAGE;
	if (mvm_records(MVM_REC_SWEEP, &s->rec, 1, sizeof(s->rec)))
		fprintf(stderr, "sweep-host: a record did not fit the hypercall page\n");
}

/*
 * OSv's mmap_and_write(): mmap outside the timed region, the timed region is
 * the touch loop alone, munmap after the clock stopped. The extra clock reads
 * around mmap and munmap sit outside the touch loop's two, and so do the
 * TSC reads, the fault counts and the frames' sum under minivmm.
 */
static struct sample mmap_and_write(unsigned long mb, int flags)
{
	size_t size = mb * MIB;
	struct sample s = { 0 };
	double t0, t1, t2, t3, t4;
	uint64_t c0, c1, c2, c3, c4;
	long f0, f1;
	char *p;

	c0 = mvm_rdtsc();
	t0 = now_s();
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS | MAP_PRIVATE,
		 -1, 0);
	t1 = now_s();
	c1 = mvm_rdtsc();
	if (p == MAP_FAILED) {
		fprintf(stderr, "sweep-host: mmap of %lu MiB: %s\n", mb, strerror(errno));
		exit(1);
	}
	f0 = minor_faults();
	t2 = now_s();
	c2 = mvm_rdtsc();
	touch(p, size);
	c3 = mvm_rdtsc();
	t3 = now_s();
	f1 = minor_faults();
	s.rec.pfn_sum = pfn_sum(p, size);
	t4 = now_s();
	c4 = mvm_rdtsc();
	if (munmap(p, size)) {
		fprintf(stderr, "sweep-host: munmap of %lu MiB: %s\n", mb,
			strerror(errno));
		exit(1);
	}
	s.map_s = t1 - t0;
	s.touch_s = t3 - t2;
	s.unmap_s = now_s() - t4;
	s.rec.map_cycles = c1 - c0;
	s.rec.touch_cycles = c3 - c2;
	s.rec.unmap_cycles = mvm_rdtsc() - c4;
	s.rec.guest_faults = (uint64_t)(f1 - f0);
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
			send_sample(&d[n], MVM_WL_SWEEP, MVM_MODE_DEMAND, i, mb);
			p[n] = mmap_and_write(mb, MAP_POPULATE);
			send_sample(&p[n], MVM_WL_SWEEP, MVM_MODE_POPULATE, i, mb);
			printf("%4lu %-6.3f %-6.3f\n", mb, d[n].touch_s, p[n].touch_s);
			if (!mvm_active()) /* under minivmm: printed after, not between measurements */
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
		if (i == 1)
			mvm_mark(
				MVM_MARK_FIRST_USEFUL_WORK); /* every size touched once */
	}
}

#define SNAP_AFTER_NONE (~0UL)

/*
 * The host side of the guest's `flat` workload: one mapping holding every
 * size back to back (1 + 2 + ... + max MiB), each size touched once per
 * iteration in the same order. Iteration 1 is the first touch; later ones
 * are warm passes over pages already present. --snapshot-after N: after
 * pass N the guest asks minivmm for a snapshot; a restored guest runs the
 * rest (its first pass is its first useful work) and checks the mapping's
 * checksum at the end. 0, or 1 when that checksum differs.
 */
static int flat(unsigned long max_mib, unsigned iterations, unsigned long snap_after,
		FILE *tsv)
{
	struct snappoint sp = { 0 };
	size_t total = 0;
	unsigned useful_at = 1;
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
	for (unsigned i = 1; i <= iterations + 1; i++) {
		char *p = base;

		if (i - 1 == snap_after && snappoint_take(&sp, "flat", base, total,
							  i - 1) == MVM_SNAP_RESTORED) {
			useful_at = i;
			if (i > iterations)
				mvm_mark(MVM_MARK_FIRST_USEFUL_WORK);
		}
		if (i > iterations)
			break;
		printf("Iteration %u (flat: one mapping, touch timed)\n\n", i);
		printf("     time (seconds)\n");
		printf(" MiB  touch\n");
		for (size_t mb = 1; mb <= max_mib; mb *= 2) {
			struct sample s = { 0 };
			long f0 = minor_faults();
			double t0 = now_s();
			uint64_t c0 = mvm_rdtsc();

			touch(p, mb * MIB);
			s.rec.touch_cycles = mvm_rdtsc() - c0;
			s.touch_s = now_s() - t0;
			s.rec.guest_faults = (uint64_t)(minor_faults() - f0);
			s.rec.pfn_sum = pfn_sum(p, mb * MIB);
			send_sample(&s, MVM_WL_FLAT, MVM_MODE_DEMAND, i, mb);
			printf("%4zu  %-6.3f\n", mb, s.touch_s);
			tsv_record(tsv, i, mb, "flat", &s);
			p += mb * MIB;
		}
		printf("\n");
		if (i == useful_at)
			mvm_mark(
				MVM_MARK_FIRST_USEFUL_WORK); /* every size touched once */
	}
	if (snappoint_check(&sp, "flat")) {
		munmap(base, total);
		return 1;
	}
	munmap(base, total);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sweep-host [--max-mib N] [--iterations N] [--flat] [--no-thp] "
		"[--tsv FILE] [--snapshot-after N]\n"
		"  OSv's mmap benchmark (1..N MiB, doubling; default 1024 MiB, 5 "
		"iterations);\n"
		"  --flat: the guest's flat workload; --no-thp: PR_SET_THP_DISABLE "
		"(4 KiB pages\n"
		"  whatever the THP knob says); --tsv: every sample, with map and "
		"unmap times\n"
		"  Run as `flat` (argv[0]) it is --flat. Under minivmm (the Linux guest's\n"
		"  sweep and flat) it reports to the VMM too; its default size is then the\n"
		"  largest free memory holds, and --progress-mib N is accepted (no frontier\n"
		"  is sent: a mapping's pages are not physically in order). flat\n"
		"  --snapshot-after N: after pass N it asks minivmm for a snapshot (--snapshot\n"
		"  DIR) and checks its mapping's checksum at its end, restored or not.\n");
}

#define FREE_MARGIN_MIB	 16 /* what the kernel and this program need besides the sizes */
#define DEFAULT_MAX_MIB	 1024
#define PROGRESS_MAX_MIB (1UL << 30)

/* MiB of free memory sizes 1..max need: flat maps them all at once, sweep one at a time. */
static unsigned long need_mib(unsigned long max_mib, int is_flat)
{
	unsigned long largest = 1;

	while (largest * 2 <= max_mib)
		largest *= 2;
	return is_flat ? 2 * largest - 1 : largest + largest / 256 + 2;
}

static unsigned long free_mib(void)
{
	struct sysinfo si;

	return sysinfo(&si) ? 0 : (unsigned long)(si.freeram * si.mem_unit / MIB);
}

/*
 * Under minivmm, as the minivmm guest: without --max-mib the largest power of
 * two free memory holds; with it, a size that does not fit is refused with
 * the --mem that would (0), or -1 after the message.
 */
static int guest_sizes(unsigned long *max_mib, int given, int is_flat)
{
	unsigned long have = free_mib(), want;

	if (!given) {
		*max_mib = DEFAULT_MAX_MIB;
		while (*max_mib > 1 &&
		       need_mib(*max_mib, is_flat) + FREE_MARGIN_MIB > have)
			*max_mib /= 2;
		return 0;
	}
	want = need_mib(*max_mib, is_flat);
	if (want + FREE_MARGIN_MIB <= have)
		return 0;
	fprintf(stderr,
		"sweep-host: %s --max-mib %lu needs %lu MiB of free guest memory and this guest has %lu MiB free: give minivmm a larger --mem, or a smaller --max-mib\n",
		is_flat ? "flat" : "sweep", *max_mib, want, have);
	return -1;
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
		{ "progress-mib", required_argument, NULL, 'p' },
		{ "parallel", no_argument, NULL, 'P' },
		{ "snapshot-after", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	unsigned long max_mib = DEFAULT_MAX_MIB, iterations = 5, progress,
		      snap_after = SNAP_AFTER_NONE;
	int status = 0, is_flat = !strcmp(base, "flat"), max_given = 0, c,
	    under = mvm_open();
	FILE *tsv = NULL, *con;
	char *end;

	if (under < 0)
		return 1;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (parse_count(optarg, 1UL << 20, &max_mib)) {
				fprintf(stderr,
					"sweep-host: --max-mib: bad number '%s'\n",
					optarg);
				return 2;
			}
			max_given = 1;
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
		case 'p':
			errno = 0;
			progress = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end ||
			    progress > PROGRESS_MAX_MIB) {
				fprintf(stderr,
					"sweep-host: --progress-mib: bad number '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 's': /* 0 too: before the first pass */
			errno = 0;
			snap_after = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || snap_after > 1000) {
				fprintf(stderr,
					"sweep-host: --snapshot-after: bad number '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'P':
			fprintf(stderr,
				"sweep-host: --parallel: the Linux guest's workloads measure on one CPU\n");
			return 2;
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
	if (snap_after != SNAP_AFTER_NONE && (!is_flat || snap_after > iterations)) {
		fprintf(stderr,
			is_flat ? "sweep-host: --snapshot-after %lu is past its %lu iterations\n"
				: "sweep-host: --snapshot-after is flat's (one mapping to check)\n",
			snap_after, iterations);
		return 2;
	}
	if (under && guest_sizes(&max_mib, max_given, is_flat))
		return 2;
	con = under ? mvm_console_file() : NULL;
	if (con) {
		/* Printed at the end: no console exit lands in a measurement's counters. */
		setvbuf(con, NULL, _IOFBF, 1 << 16);
		stdout = con;
	}
	mvm_mark(MVM_MARK_WORKLOAD_START);
	if (under)
		printf("%s: 1..%lu MiB, %lu iteration%s, %s (the Linux guest)\n",
		       is_flat ? "flat" : "sweep", max_mib, iterations,
		       iterations == 1 ? "" : "s",
		       is_flat ? "one mapping, touch timed"
			       : "demand and populate, the touch loop timed (mmap and munmap apart)");
	/* An empty batch: the VMM's counters for the first measurement start here. */
	mvm_records(MVM_REC_SWEEP, NULL, 0, sizeof(struct mvm_rec_sweep));
	if (is_flat)
		status = flat(max_mib, (unsigned)iterations, snap_after, tsv);
	else
		sweep(max_mib, (unsigned)iterations, tsv);
	mvm_mark(MVM_MARK_WORKLOAD_END);
	if (tsv && fclose(tsv)) {
		fprintf(stderr, "sweep-host: writing the TSV: %s\n", strerror(errno));
		return 1;
	}
	return status;
}
