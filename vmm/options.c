/* Command line: options, defaults and the size parser. */
#include "vmm.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return -1;
	}
	if (shift) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static const char *const usage_lines[] = {
	"usage: minivmm [OPTIONS] GUEST.bin [-- GUEST-ARGS...]",
	"",
	"Boot a minivmm guest image on /dev/kvm and report what it measured.",
	"",
	"  -m, --mem SIZE        guest RAM; bytes or K/M/G/T suffix, a multiple of 2M",
	"                        (default 1G)",
	"  -c, --vcpus N         number of vCPUs (default 1)",
	"  -o, --results FILE    write machine-readable results (JSON) (default: none)",
	"      --timeout SEC     end the run if the guest still runs after SEC seconds",
	"                        (default: no timeout)",
	"      --eager[=HOW]     back guest RAM up front, one slice per vCPU thread,",
	"                        before the guest runs (default: lazy). HOW:",
	"                        auto      prefault where KVM has it, else populate",
	"                                  (the default HOW)",
	"                        populate  MADV_POPULATE_WRITE: host pages only",
	"                        prefault  populate, then KVM_PRE_FAULT_MEMORY: also",
	"                                  EPT/NPT entries (Linux >= 6.11, TDP only)",
	"                        touch     each vCPU writes one byte per page of its",
	"                                  slice in the guest (builds shadow entries)",
	"      --eager-threads N host threads for populate/prefault (default: one",
	"                        per vCPU, on the vCPU threads)",
	"      --backing KIND    guest RAM backing (default anon):",
	"                        anon       anonymous, 4 KiB pages",
	"                        thp        anonymous with MADV_HUGEPAGE",
	"                        hugetlb2m  hugetlbfs pool, 2 MiB pages",
	"                        hugetlb1g  hugetlbfs pool, 1 GiB pages (--mem in 1G)",
	"                        memfd      shared memory from memfd_create",
	"      --trace FILE      write the run as Chrome trace events (Perfetto,",
	"                        chrome://tracing): setup, vCPU and eager threads",
	"      --compare         run the guest twice, lazy then with --eager (its HOW,",
	"                        or auto), fresh VMs; print both timelines and a",
	"                        verdict (eager cost, first-touch time saved, "
	"break-even)",
	"      --strict-io       end the run (exit 4) at the first port or MMIO access",
	"                        no device claims (default: count them, reads see ~0)",
	"      --no-sandbox      do not install the seccomp filters (default: every",
	"                        thread gets a kill-by-default allowlist before it",
	"                        enters the guest)",
	"  -q, --quiet           only the result tables (no guest console, no info)",
	"  -h, --help            this text",
	"  -V, --version         print the version and guest ABI version",
	"",
	"Arguments after -- go to the guest (boot info /chosen); the first names",
	"the workload. guest/guest.bin: sweep (the default), flat, hello, ...;",
	"'-- help' lists them.",
	"",
	"Exit status:",
	"  0    the guest exited with status 0",
	"  1    the guest exited with a non-zero status",
	"  2    usage error (bad option, unreadable or unsuitable guest image)",
	"  3    host or KVM error (no /dev/kvm, out of memory, ioctl failure)",
	"  4    the guest crashed (triple fault, unhandled exception, emulation",
	"       failure, halt, ABI violation, not a minivmm guest)",
	"  5    timeout (--timeout)",
	"  130  interrupted (SIGINT or SIGTERM)",
};

static void usage(FILE *f)
{
	for (size_t i = 0; i < sizeof(usage_lines) / sizeof(usage_lines[0]); i++)
		fprintf(f, "%s\n", usage_lines[i]);
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "minivmm: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'minivmm --help'.\n");
	return -1;
}

enum {
	OPT_TIMEOUT = 256,
	OPT_EAGER,
	OPT_EAGER_THREADS,
	OPT_BACKING,
	OPT_TRACE,
	OPT_COMPARE,
	OPT_NO_SANDBOX,
	OPT_STRICT_IO,
};

int options_parse(int argc, char **argv, struct config *cfg)
{
	static const struct option longopts[] = {
		{ "mem", required_argument, NULL, 'm' },
		{ "vcpus", required_argument, NULL, 'c' },
		{ "results", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "eager", optional_argument, NULL, OPT_EAGER },
		{ "eager-threads", required_argument, NULL, OPT_EAGER_THREADS },
		{ "backing", required_argument, NULL, OPT_BACKING },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "compare", no_argument, NULL, OPT_COMPARE },
		{ "no-sandbox", no_argument, NULL, OPT_NO_SANDBOX },
		{ "strict-io", no_argument, NULL, OPT_STRICT_IO },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long n;
	char *end;
	int c;

	*cfg = (struct config){ .mem_bytes = MVM_DEFAULT_MEM_BYTES,
				.vcpus = 1,
				.backing = &mm_backends[MM_ANON] };
	opterr = 0;
	/*
	 * 0, not 1: glibc then forgets its position inside the last argument.
	 * With 1, a parse that stopped inside an option cluster ("-qZ") left
	 * getopt pointing into that argv, and the next parse read it after it
	 * was freed (found by tests/fuzz/fuzz_options).
	 */
	optind = 0;
	/* '+': stop at the first non-option, so guest arguments are never parsed here. */
	while ((c = getopt_long(argc, argv, "+:m:c:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (parse_size(optarg, &cfg->mem_bytes))
				return bad("--mem: '%s' is not a size (bytes, or with "
					   "K/M/G/T)",
					   optarg);
			if (cfg->mem_bytes < MVM_MIN_MEM_BYTES)
				return bad("--mem %s: below the minimum of 8M", optarg);
			if (cfg->mem_bytes > MVM_MAX_MEM_BYTES)
				return bad("--mem %s: above the maximum of 1T", optarg);
			if (cfg->mem_bytes % MVM_RAM_ALIGN_BYTES)
				return bad("--mem %s: not a multiple of 2M", optarg);
			break;
		case 'c':
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || !isdigit((unsigned char)*optarg))
				return bad("--vcpus: '%s' is not a number", optarg);
			if (n == 0)
				return bad("--vcpus %s: need at least one vCPU", optarg);
			if (n > 4096)
				return bad("--vcpus %s: more than 4096", optarg);
			cfg->vcpus = (unsigned)n;
			break;
		case 'o':
			cfg->results_path = optarg;
			break;
		case OPT_TIMEOUT:
			errno = 0;
			cfg->timeout_s = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(cfg->timeout_s > 0) ||
			    cfg->timeout_s > 1e7)
				return bad("--timeout: '%s' is not a positive number of "
					   "seconds",
					   optarg);
			break;
		case 'q':
			cfg->quiet = 1;
			break;
		case OPT_EAGER:
			cfg->eager = EAGER_AUTO;
			if (optarg && eager_strategy_parse(optarg, &cfg->eager))
				return bad("--eager=%s: strategies are auto, populate, "
					   "prefault, touch",
					   optarg);
			break;
		case OPT_EAGER_THREADS:
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || !isdigit((unsigned char)*optarg) || n == 0 ||
			    n > 1024)
				return bad("--eager-threads: '%s' is not a number from 1 "
					   "to 1024",
					   optarg);
			cfg->eager_threads = (unsigned)n;
			break;
		case OPT_TRACE:
			cfg->trace_path = optarg;
			break;
		case OPT_COMPARE:
			cfg->compare = 1;
			break;
		case OPT_NO_SANDBOX:
			cfg->no_sandbox = 1;
			break;
		case OPT_STRICT_IO:
			cfg->strict_io = 1;
			break;
		case OPT_BACKING:
			cfg->backing = mm_backend_find(optarg);
			if (!cfg->backing)
				return bad("--backing %s: kinds are anon, thp, "
					   "hugetlb2m, hugetlb1g, "
					   "memfd",
					   optarg);
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("minivmm %s (guest ABI %d)\n", MINIVMM_VERSION,
			       MVM_ABI_VERSION);
			return 1;
		case ':':
			return bad("option '%s' needs an argument", argv[optind - 1]);
		default:
			return bad("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (cfg->compare && cfg->eager == EAGER_NONE)
		cfg->eager = EAGER_AUTO; /* the eager half of --compare */
	if (cfg->eager_threads &&
	    !(cfg->eager == EAGER_AUTO || cfg->eager == EAGER_POPULATE ||
	      cfg->eager == EAGER_PREFAULT))
		return bad("%s",
			   "--eager-threads needs --eager (auto, populate or prefault)");
	if (cfg->mem_bytes % cfg->backing->page_bytes)
		return bad("--backing %s: --mem must be a multiple of that backing's "
			   "page size",
			   cfg->backing->name);
	if (optind >= argc)
		return bad("%s", "no guest image given");
	if (!strcmp(argv[optind], "--"))
		return bad("%s", "no guest image given before '--'");
	cfg->guest_path = argv[optind++];
	if (optind < argc) {
		if (strcmp(argv[optind], "--"))
			return bad(
				"unexpected argument '%s' (guest arguments go after --)",
				argv[optind]);
		optind++;
	}
	cfg->guest_argc = argc - optind;
	cfg->guest_argv = argv + optind;
	return 0;
}
