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

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [OPTIONS] GUEST.bin [-- GUEST-ARGS...]\n"
		"\n"
		"Boot a minivmm guest image on /dev/kvm and report what it measured.\n"
		"\n"
		"  -m, --mem SIZE        guest RAM; bytes or K/M/G/T suffix, a multiple "
		"of 2M\n"
		"                        (default 1G)\n"
		"  -c, --vcpus N         number of vCPUs (default 1)\n"
		"  -o, --results FILE    write machine-readable results (JSON) (default: "
		"none)\n"
		"      --timeout SEC     end the run if the guest is still running after "
		"SEC\n"
		"                        seconds (default: no timeout)\n"
		"  -q, --quiet           only the result tables (no guest console, no "
		"info lines)\n"
		"  -h, --help            this text\n"
		"  -V, --version         print the version and guest ABI version\n"
		"\n"
		"Arguments after -- go to the guest (boot info /chosen); the first "
		"names\n"
		"the workload (guest/guest.bin: hello, exit N, touch ADDR, spin, ...).\n"
		"\n"
		"Exit status:\n"
		"  0    the guest exited with status 0\n"
		"  1    the guest exited with a non-zero status\n"
		"  2    usage error (bad option, unreadable or unsuitable guest image)\n"
		"  3    host or KVM error (no /dev/kvm, out of memory, ioctl failure)\n"
		"  4    the guest crashed (triple fault, unhandled exception, emulation\n"
		"       failure, halt, ABI violation, not a minivmm guest)\n"
		"  5    timeout (--timeout)\n"
		"  130  interrupted (SIGINT or SIGTERM)\n",
		prog);
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "minivmm: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'minivmm --help'.\n");
	return -1;
}

enum { OPT_TIMEOUT = 256 };

int options_parse(int argc, char **argv, struct config *cfg)
{
	static const struct option longopts[] = {
		{ "mem", required_argument, NULL, 'm' },
		{ "vcpus", required_argument, NULL, 'c' },
		{ "results", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long n;
	char *end;
	int c;

	*cfg = (struct config){ .mem_bytes = MVM_DEFAULT_MEM_BYTES, .vcpus = 1 };
	opterr = 0;
	optind = 1;
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
		case 'h':
			usage(stdout, "minivmm");
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
