/* Command line: one table of options, from which getopt's list and --help are made. */
#include "options_internal.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "a, b, c": the names of a table's rows, for messages. */
static const char *names(char *buf, size_t len, const char *(*name)(unsigned),
			 unsigned from, unsigned n)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned i = from; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i > from ? ", " : "",
				       name(i));
	return buf;
}

/* "; did you mean X?" when typed is a typo of a table's row name, else "". buf. */
static const char *near(char *buf, size_t len, const char *typed,
			const char *(*name)(unsigned), unsigned from, unsigned n)
{
	const char *all[64], *best;

	for (unsigned i = from; i < n && i - from < ARRAY_SIZE(all); i++)
		all[i - from] = name(i);
	best = suggest_name(typed, all,
			    n - from < ARRAY_SIZE(all) ? n - from : ARRAY_SIZE(all));
	snprintf(buf, len, "%s%s%s", best ? "; did you mean " : "", best ? best : "",
		 best ? "?" : "");
	return buf;
}

static const char *backing_name(unsigned i)
{
	return mm_backends[i].name;
}

static const char *strategy_name(unsigned i)
{
	return eager_strategies[i].name;
}

static int unsigned_arg(const char *arg, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 10);
	return errno || *end || !isdigit((unsigned char)*arg) || *out > max ? -EINVAL : 0;
}

static int set_mem(struct config *cfg, const char *arg)
{
	cfg->mem_given = 1;
	if (mm_parse_size(arg, &cfg->vm.mem_bytes))
		return bad("--mem: '%s' is not a size (bytes, or with K/M/G/T)", arg);
	/* "--mem 64": a number without a unit is bytes, which nobody means here. */
	if (cfg->vm.mem_bytes < MVM_MIN_MEM_BYTES && cfg->vm.mem_bytes &&
	    strspn(arg, "0123456789") == strlen(arg))
		return bad(
			"--mem %s: read as %s bytes (no K/M/G/T suffix), below the minimum of 8M; for %s MiB write --mem %sM",
			arg, arg, arg, arg);
	if (cfg->vm.mem_bytes < MVM_MIN_MEM_BYTES)
		return bad("--mem %s: below the minimum of 8M; write --mem 8M or more",
			   arg);
	if (cfg->vm.mem_bytes > MVM_MAX_MEM_BYTES)
		return bad("--mem %s: above the maximum of 1T; write --mem 1T or less",
			   arg);
	if (cfg->vm.mem_bytes % MVM_RAM_ALIGN_BYTES) {
		char below[24], above[24];

		return bad("--mem %s: not a multiple of 2M; write --mem %s or --mem %s",
			   arg,
			   mem_arg(below, sizeof(below), cfg->vm.mem_bytes,
				   MVM_RAM_ALIGN_BYTES, 0),
			   mem_arg(above, sizeof(above), cfg->vm.mem_bytes,
				   MVM_RAM_ALIGN_BYTES, 1));
	}
	return 0;
}

/*
 * A bound on the number alone, far above any KVM's KVM_CAP_MAX_VCPUS (x86's
 * CONFIG_KVM_MAX_NR_VCPUS is at most 4096): KVM's limit, the image's
 * header's and RLIMIT_NOFILE are the ones that refuse, each saying which.
 */
#define VCPUS_MAX 65536

static int set_vcpus(struct config *cfg, const char *arg)
{
	unsigned long n;

	if (unsigned_arg(arg, ULONG_MAX, &n))
		return bad("--vcpus: '%s' is not a number", arg);
	if (n == 0)
		return bad("--vcpus %s: need at least one vCPU", arg);
	if (n > VCPUS_MAX)
		return bad("--vcpus %s: more than %d", arg, VCPUS_MAX);
	cfg->vm.vcpus = (unsigned)n;
	cfg->vcpus_given = 1;
	return 0;
}

static int set_snapshot(struct config *cfg, const char *arg)
{
	if (!*arg)
		return bad("--snapshot needs a directory to write");
	cfg->snapshot_dir = arg;
	return 0;
}

static int set_restore(struct config *cfg, const char *arg)
{
	cfg->restore_dir = arg;
	return 0;
}

static int set_restore_mode(struct config *cfg, const char *arg)
{
	const char *names[16];
	const char *near;
	unsigned n = 0;

	cfg->restore_mode = restore_mode_find(arg);
	if (cfg->restore_mode)
		return 0;
	for (unsigned i = 0; i < restore_mode_count && n < ARRAY_SIZE(names); i++)
		names[n++] = restore_modes[i].name;
	near = suggest_name(arg, names, n);
	if (near)
		return bad(
			"--restore-mode: no mode '%s'; did you mean %s? (--help lists them)",
			arg, near);
	return bad("--restore-mode: no mode '%s' (--help lists them)", arg);
}

static void list_restore_modes(FILE *f)
{
	for (unsigned i = 0; i < restore_mode_count; i++)
		for (unsigned k = 0;
		     k < ARRAY_SIZE(restore_modes[i].help) && restore_modes[i].help[k];
		     k++)
			fprintf(f, "%24s%-8s %s\n", "", k ? "" : restore_modes[i].name,
				restore_modes[i].help[k]);
}

static int set_results(struct config *cfg, const char *arg)
{
	cfg->results_path = arg;
	return 0;
}

static int set_timeout(struct config *cfg, const char *arg)
{
	char *end;

	errno = 0;
	cfg->vm.timeout_s = strtod(arg, &end);
	if (end != arg && !errno && !strcmp(end, "s") && cfg->vm.timeout_s > 0)
		return bad(
			"--timeout %s: SEC is a plain number of seconds; write --timeout %.*s",
			arg, (int)(end - arg), arg);
	if (errno || *end || end == arg || !(cfg->vm.timeout_s > 0) ||
	    cfg->vm.timeout_s > 1e7)
		return bad(
			"--timeout: '%s' is not a positive number of seconds (up to 10000000); e.g. --timeout 60",
			arg);
	return 0;
}

/* A HOW of --eager=HOW (or of background:HOW): 0, or -EINVAL after the message. */
static int eager_how(struct config *cfg, const char *arg, const char *what, unsigned last)
{
	char list[128], guess[64];

	for (unsigned i = EAGER_AUTO; i <= last; i++)
		if (!strcmp(arg, eager_strategies[i].name)) {
			cfg->vm.eager = eager_strategies[i].id;
			return 0;
		}
	return bad(
		"--eager=%s: %s are %s%s%s", what,
		last == EAGER_TOUCH ? "strategies" : "background's HOWs",
		names(list, sizeof(list), strategy_name, EAGER_AUTO, last + 1),
		last == EAGER_TOUCH
			? ", background[:HOW]"
			: " (touch runs in the guest before the workload: it cannot go beside it)",
		near(guess, sizeof(guess), arg, strategy_name, EAGER_AUTO, last + 1));
}

static int set_eager(struct config *cfg, const char *arg)
{
	cfg->vm.eager = EAGER_AUTO;
	cfg->vm.eager_background = 0;
	if (!arg)
		return 0;
	if (!strcmp(arg, "background"))
		return cfg->vm.eager_background = 1, 0;
	if (!strncmp(arg, "background:", strlen("background:"))) {
		cfg->vm.eager_background = 1;
		return eager_how(cfg, arg + strlen("background:"), arg, EAGER_PREFAULT);
	}
	return eager_how(cfg, arg, arg, EAGER_TOUCH);
}

static int set_eager_order(struct config *cfg, const char *arg)
{
	if (!*arg)
		return bad(
			"--eager-order: an empty order (front, back, frontier or a FILE)");
	cfg->vm.eager_order = arg;
	return 0;
}

static int set_eager_threads(struct config *cfg, const char *arg)
{
	unsigned long n;

	if (unsigned_arg(arg, 1024, &n) || n == 0)
		return bad("--eager-threads: '%s' is not a number from 1 to 1024", arg);
	cfg->vm.eager_threads = (unsigned)n;
	return 0;
}

static int set_numa(struct config *cfg, const char *arg)
{
	int n;

	cfg->vm.numa_arg = arg ? arg : "auto";
	cfg->vm.numa = !arg || strcmp(arg, "off");
	cfg->vm.numa_auto = !arg || !strcmp(arg, "auto");
	if (!cfg->vm.numa || cfg->vm.numa_auto)
		return 0;
	n = mm_cpulist_parse(arg, &cfg->vm.numa_nodes);
	if (n <= 0 || strchr(arg, '\n'))
		return bad(
			"--numa=%s: not auto, off or a list of node numbers (0,1 or 0-3)",
			arg);
	return 0;
}

static const char *numa_policy_row_name(unsigned i)
{
	return numa_policies[i].name;
}

static int set_numa_policy(struct config *cfg, const char *arg)
{
	char list[64], guess[64];

	for (unsigned i = 0; i < NUMA_POLICY_COUNT; i++)
		if (!strcmp(arg, numa_policies[i].name)) {
			cfg->vm.numa_policy = numa_policies[i].id;
			return 0;
		}
	return bad("--numa-policy %s: policies are %s%s", arg,
		   names(list, sizeof(list), numa_policy_row_name, 0, NUMA_POLICY_COUNT),
		   near(guess, sizeof(guess), arg, numa_policy_row_name, 0,
			NUMA_POLICY_COUNT));
}

static int set_backing(struct config *cfg, const char *arg)
{
	char list[128], guess[64];

	cfg->vm.backing = mm_backend_find(arg);
	if (!cfg->vm.backing)
		return bad("--backing %s: kinds are %s%s", arg,
			   names(list, sizeof(list), backing_name, 0, MM_BACKING_COUNT),
			   near(guess, sizeof(guess), arg, backing_name, 0,
				MM_BACKING_COUNT));
	cfg->vm.backing_set = 1;
	return 0;
}

static int set_mem_path(struct config *cfg, const char *arg)
{
	if (!*arg)
		return bad("--mem-path: an empty path");
	cfg->vm.mem_path = arg;
	return 0;
}

static int set_reservoir(struct config *cfg, const char *arg)
{
	if (!*arg)
		return bad("--reservoir: an empty path");
	cfg->vm.reservoir = arg;
	return 0;
}

static int set_roofline(struct config *cfg, const char *arg)
{
	cfg->vm.roofline_path = arg;
	return 0;
}

static int set_kernel(struct config *cfg, const char *arg)
{
	if (!*arg)
		return bad("--kernel: an empty path");
	cfg->vm.kernel_path = arg;
	return 0;
}

static int set_initrd(struct config *cfg, const char *arg)
{
	if (!*arg)
		return bad("--initrd: an empty path");
	cfg->vm.initrd_path = arg;
	return 0;
}

static int set_cmdline(struct config *cfg, const char *arg)
{
	cfg->vm.cmdline = arg;
	return 0;
}

static int set_trace(struct config *cfg, const char *arg)
{
	cfg->trace_path = arg;
	return 0;
}

static int set_repeat(struct config *cfg, const char *arg)
{
	unsigned long n;

	if (unsigned_arg(arg, 10000, &n) || n == 0)
		return bad("--repeat: '%s' is not a number from 1 to 10000", arg);
	cfg->repeat = (unsigned)n;
	return 0;
}

static int set_clones(struct config *cfg, const char *arg)
{
	unsigned long n;

	if (unsigned_arg(arg, CLONES_MAX, &n) || n == 0)
		return bad(
			"--clones: '%s' is not a number from 1 to %d (the processes that restore the snapshot at once)",
			arg, CLONES_MAX);
	cfg->clones = (unsigned)n;
	return 0;
}

static int set_clone_handler(struct config *cfg, const char *arg)
{
	unsigned long n = 0;

	if (!strncmp(arg, "shared:", 7) && (unsigned_arg(arg + 7, 64, &n) || n == 0))
		return bad(
			"--clone-handler shared:THREADS: '%s' is not a number from 1 to 64",
			arg + 7);
	if (strcmp(arg, "shared") && strcmp(arg, "own") && !n)
		return bad("--clone-handler: '%s' is not shared, shared:THREADS or own",
			   arg);
	cfg->clone_handler_own = !strcmp(arg, "own");
	cfg->clone_handler_threads = (unsigned)n;
	cfg->clone_handler_given = 1;
	return 0;
}

static int set_clone_hold(struct config *cfg, const char *arg)
{
	unsigned long n;

	if (unsigned_arg(arg, 1 << 20, &n) || n < 3)
		return bad(
			"--clone-hold: '%s' is not an open descriptor above 2 (it is --clones' own)",
			arg);
	cfg->clone_hold_fd = (int)n;
	return 0;
}

static int set_warmup(struct config *cfg, const char *arg)
{
	unsigned long n;

	if (unsigned_arg(arg, 100, &n))
		return bad("--warmup: '%s' is not a number from 0 to 100", arg);
	cfg->warmup = (unsigned)n;
	return 0;
}

static const char *paging_name(unsigned i)
{
	return paging_kinds[i].name;
}

static int set_paging(struct config *cfg, const char *arg)
{
	char list[64], guess[64];

	for (unsigned i = 0; i < PAGING_KIND_COUNT; i++)
		if (!strcmp(arg, paging_kinds[i].name)) {
			cfg->vm.paging = paging_kinds[i].id;
			return 0;
		}
	return bad("--paging %s: kinds are %s%s", arg,
		   names(list, sizeof(list), paging_name, 0, PAGING_KIND_COUNT),
		   near(guess, sizeof(guess), arg, paging_name, 0, PAGING_KIND_COUNT));
}

static int set_uffd_threads(struct config *cfg, const char *arg)
{
	unsigned long n;

	if (unsigned_arg(arg, 1024, &n) || n == 0)
		return bad("--uffd-threads: '%s' is not a number from 1 to 1024", arg);
	cfg->vm.uffd_threads = (unsigned)n;
	return 0;
}

#define UFFD_DELAY_MAX_US 1000000

static int set_uffd_delay(struct config *cfg, const char *arg)
{
	unsigned long n;

	if (unsigned_arg(arg, UFFD_DELAY_MAX_US, &n))
		return bad("--uffd-delay-us: '%s' is not a number from 0 to %d", arg,
			   UFFD_DELAY_MAX_US);
	cfg->vm.uffd_delay_us = (unsigned)n;
	return 0;
}

static int set_record_touch(struct config *cfg, const char *arg)
{
	cfg->vm.record_touch_path = arg;
	return 0;
}

static int set_check_touch(struct config *cfg, const char *arg)
{
	cfg->check_touch_path = arg;
	return 0;
}

/* The list is read once every option is: with --restore its names are restore modes. */
static int set_compare(struct config *cfg, const char *arg)
{
	cfg->compare = 1;
	cfg->compare_list = arg;
	return 0;
}

static int parse_compare(struct config *cfg)
{
	char err[512];
	int r;

	if (!cfg->compare)
		return 0;
	cfg->compare_restore = cfg->restore_dir != NULL;
	if (cfg->compare_restore)
		r = compare_restore_modes_parse(
			cfg->compare_list ? cfg->compare_list
					  : COMPARE_RESTORE_DEFAULT_MODES,
			cfg->compare_modes, &cfg->ncompare_modes, err, sizeof(err));
	else
		r = compare_modes_parse(
			cfg->compare_list ? cfg->compare_list : COMPARE_DEFAULT_MODES,
			cfg->compare_modes, &cfg->ncompare_modes, err, sizeof(err));
	return r ? bad("%s", err) : 0;
}

static int set_restore_cache(struct config *cfg, const char *arg)
{
	if (!strcmp(arg, "cold") || !strcmp(arg, "warm")) {
		cfg->restore_cache_warm = !strcmp(arg, "warm");
		cfg->restore_cache_given = 1;
		return 0;
	}
	return bad("--restore-cache: '%s' is neither cold nor warm", arg);
}

/* --help lists the kinds an option takes, from their tables. */
static void list_modes(FILE *f)
{
	for (unsigned i = 0; i < COMPARE_MODE_COUNT; i++)
		for (unsigned k = 0;
		     k < ARRAY_SIZE(compare_modes[i].help) && compare_modes[i].help[k];
		     k++)
			fprintf(f, "%24s%-10s %s\n", "", k ? "" : compare_modes[i].name,
				compare_modes[i].help[k]);
}

static void list_strategies(FILE *f)
{
	for (unsigned i = EAGER_AUTO; i < EAGER_STRATEGY_COUNT; i++) {
		const struct eager_strategy_row *s = &eager_strategies[i];

		fprintf(f, "%24s%-9s %s\n", "", s->name, s->help[0]);
		if (s->help[1])
			fprintf(f, "%34s%s\n", "", s->help[1]);
	}
	fprintf(f, "%24sbackground[:HOW]\n", "");
	fprintf(f, "%34sthe guest runs at once; --eager-threads\n", "");
	fprintf(f, "%34spopulate beside it (HOW: auto, populate or\n", "");
	fprintf(f, "%34sprefault; default auto)\n", "");
}

static void list_orders(FILE *f)
{
	for (unsigned i = 0; i < EAGER_ORDER_COUNT; i++) {
		const struct eager_order_row *o = &eager_orders[i];

		fprintf(f, "%24s%-9s %s\n", "", i == EAGER_ORDER_FILE ? "FILE" : o->name,
			o->help[0]);
		if (o->help[1])
			fprintf(f, "%34s%s\n", "", o->help[1]);
	}
}

static void list_paging(FILE *f)
{
	for (unsigned i = 0; i < PAGING_KIND_COUNT; i++)
		for (unsigned k = 0;
		     k < ARRAY_SIZE(paging_kinds[i].help) && paging_kinds[i].help[k]; k++)
			fprintf(f, "%24s%-7s %s\n", "", k ? "" : paging_kinds[i].name,
				paging_kinds[i].help[k]);
}

static void list_numa_policies(FILE *f)
{
	for (unsigned i = 0; i < NUMA_POLICY_COUNT; i++)
		for (unsigned k = 0;
		     k < ARRAY_SIZE(numa_policies[i].help) && numa_policies[i].help[k];
		     k++)
			fprintf(f, "%24s%-11s %s\n", "", k ? "" : numa_policies[i].name,
				numa_policies[i].help[k]);
}

static void list_backings(FILE *f)
{
	for (unsigned i = 0; i < MM_BACKING_COUNT; i++)
		fprintf(f, "%24s%-10s %s\n", "", mm_backends[i].name,
			mm_backends[i].help);
}

/*
 * "--compare lazy,eager g.bin": getopt's optional arguments need '=', so
 * the list became the guest image. When argv[i] follows a bare --compare,
 * is no file, and has a comma or is a mode's name, say so with the command
 * line corrected. 1 with msg set, or 0.
 */
static int compare_list_misplaced(int argc, char **argv, int i, char *msg, size_t len)
{
	int mode = 0;
	size_t at;

	for (unsigned m = 0; m < COMPARE_MODE_COUNT; m++)
		mode |= !strcmp(argv[i], compare_modes[m].name);
	if (i < 1 || strcmp(argv[i - 1], "--compare") || access(argv[i], F_OK) == 0 ||
	    (!strchr(argv[i], ',') && !mode))
		return 0;
	at = (size_t)snprintf(
		msg, len,
		"'%s' after --compare is taken as the guest image, and there is no such file: the list needs '=' (--compare=%s):\n ",
		argv[i], argv[i]);
	for (int k = 0; k < argc && at < len; k++)
		if (k != i)
			at += (size_t)snprintf(msg + at, len - at, " %s%s%s", argv[k],
					       k == i - 1 ? "=" : "",
					       k == i - 1 ? argv[i] : "");
	return 1;
}

/*
 * "--compare=lazy, eager": the shell ended the list at the space, so its
 * last mode would become the guest image. When the list ends with ',' and
 * the next word (argv[next]) is not an option, say so with the words joined.
 * 1 with msg set, or 0.
 */
static int list_split(int argc, char **argv, int next, const char *list, char *msg,
		      size_t len)
{
	const char *words[argc + 1];
	char joined[256], line[1024];
	int n = 0;

	if (!*list || list[strlen(list) - 1] != ',' || next >= argc || next < 1 ||
	    argv[next][0] == '-')
		return 0;
	snprintf(joined, sizeof(joined), "--compare=%s%s", list, argv[next]);
	for (int i = 0; i < argc; i++)
		if (i == next - 1)
			words[n++] = joined;
		else if (i != next)
			words[n++] = argv[i];
	snprintf(
		msg, len,
		"--compare=%s %s: the space after the comma ended the list, and '%s' would be taken as the guest image; write the list without spaces: %s",
		list, argv[next], argv[next],
		suggest_cmdline(line, sizeof(line), words, n));
	return 1;
}

#define OPT_HELP    'h'
#define OPT_VERSION 'V'

#define WARMUP_UNSET UINT_MAX /* no --warmup: the default follows --repeat */

/* On/off options: the int in config that the option sets to 1. */
#define FLAG(name, field)                           \
	static int *flag_##name(struct config *cfg) \
	{                                           \
		return &cfg->field;                 \
	}
FLAG(strict_io, vm.strict_io)
FLAG(no_sandbox, no_sandbox)
FLAG(quiet, quiet)
FLAG(raw, vm.raw)
FLAG(explain, explain)
FLAG(mem_grow, vm.mem_grow)
FLAG(mem_any_fs, vm.mem_any_fs)
FLAG(dry_run, dry_run)
FLAG(snapshot_continue, snapshot_continue)
FLAG(kernel_anyway, vm.kernel_anyway)
#undef FLAG

/* Every option once: getopt's tables and --help are made from these rows. */
static const struct opt {
	const char *name;
	int short_name; /* 0: long only */
	int has_arg;	/* no_argument, required_argument, optional_argument */
	const char *arg;
	const char *help[4];
	int (*set)(struct config *cfg,
		   const char *arg);	  /* 0, or -EINVAL after a message */
	void (*list)(FILE *f);		  /* the kinds it takes */
	int *(*flag)(struct config *cfg); /* set == NULL: this int in config becomes 1 */
} opts[] = {
	{ "mem",
	  'm',
	  required_argument,
	  "SIZE",
	  { "guest RAM, 8M to 1T: bytes or K/M/G/T suffix, a multiple",
	    "of 2M (of 1G with --backing hugetlb1g) (default 1G)" },
	  set_mem,
	  NULL,
	  NULL },
	{ "vcpus",
	  'c',
	  required_argument,
	  "N",
	  { "number of vCPUs, one thread each (default 1; at most",
	    "what KVM and the image's header allow: 256 for guest.bin)" },
	  set_vcpus,
	  NULL,
	  NULL },
	{ "results",
	  'o',
	  required_argument,
	  "FILE",
	  { "write machine-readable results (JSON) (default: none;",
	    "- is stdout, and the rest goes to stderr)" },
	  set_results,
	  NULL,
	  NULL },
	{ "timeout",
	  0,
	  required_argument,
	  "SEC",
	  { "end the run if the guest still runs after SEC seconds",
	    "(default: no timeout)" },
	  set_timeout,
	  NULL,
	  NULL },
	{ "eager",
	  0,
	  optional_argument,
	  "[=HOW]",
	  { "back guest RAM up front, one slice per vCPU thread,",
	    "before the guest runs (default: lazy). HOW:" },
	  set_eager,
	  list_strategies,
	  NULL },
	{ "eager-threads",
	  0,
	  required_argument,
	  "N",
	  { "host threads, 1 to 1024, for populate and prefault",
	    "(default: one per vCPU, on the vCPU threads; in the",
	    "background, threads of their own: one per CPU the",
	    "vCPUs leave idle, at least one)" },
	  set_eager_threads,
	  NULL,
	  NULL },
	{ "eager-order",
	  0,
	  required_argument,
	  "ORDER",
	  { "the order eager populates guest RAM in, in chunks of",
	    "2 MiB (or the backing's page) (default front):" },
	  set_eager_order,
	  list_orders,
	  NULL },
	{ "numa",
	  0,
	  optional_argument,
	  "[=NODES]",
	  { "guest RAM in one range per host NUMA node (auto: every",
	    "node, up to one per vCPU; or a list: 0,1), each range",
	    "bound there, its vCPUs and eager threads pinned to the",
	    "node's CPUs; placement audited (default: off)" },
	  set_numa,
	  NULL,
	  NULL },
	{ "numa-policy",
	  0,
	  required_argument,
	  "POLICY",
	  { "--numa: how a range's pages are kept on its node:" },
	  set_numa_policy,
	  list_numa_policies,
	  NULL },
	{ "backing",
	  0,
	  required_argument,
	  "KIND",
	  { "guest RAM backing (default anon; with --mem-path or",
	    "--reservoir, what its file system holds):" },
	  set_backing,
	  list_backings,
	  NULL },
	{ "mem-path",
	  0,
	  required_argument,
	  "PATH",
	  { "guest RAM is this file's pages, mapped shared: on",
	    "hugetlbfs (2M/1G pages) or tmpfs (4K); a directory:",
	    "an unlinked file of its own; locked while in use,",
	    "never shrunk or deleted; keeps what the guest wrote" },
	  set_mem_path,
	  NULL,
	  NULL },
	{ "mem-grow",
	  0,
	  no_argument,
	  NULL,
	  { "create a missing --mem-path file, extend a short one" },
	  NULL,
	  NULL,
	  flag_mem_grow },
	{ "mem-any-fs",
	  0,
	  no_argument,
	  NULL,
	  { "allow a --mem-path file on a disk file system (its page",
	    "cache, written back: guest RAM would measure the disk)" },
	  NULL,
	  NULL,
	  flag_mem_any_fs },
	{ "reservoir",
	  0,
	  required_argument,
	  "DIR",
	  { "lease guest RAM from the pre-zeroed pool at DIR",
	    "(scripts/reservoir create): no other VM shares it, and",
	    "it is scrubbed in the background after the run" },
	  set_reservoir,
	  NULL,
	  NULL },
	{ "roofline",
	  0,
	  required_argument,
	  "FILE",
	  { "rate --eager's populate against this machine's ceilings",
	    "(build/bench/roofline's TSV) and predict long ones" },
	  set_roofline,
	  NULL,
	  NULL },
	{ "paging",
	  0,
	  required_argument,
	  "MODE",
	  { "who backs a page of guest RAM when the guest first", "touches it:" },
	  set_paging,
	  list_paging,
	  NULL },
	{ "uffd-threads",
	  0,
	  required_argument,
	  "N",
	  { "--paging uffd: handler threads, 1 to 1024, each with its",
	    "own userfaultfd and slice of RAM (default: one per vCPU)" },
	  set_uffd_threads,
	  NULL,
	  NULL },
	{ "uffd-delay-us",
	  0,
	  required_argument,
	  "N",
	  { "--paging uffd: each fault waits N us before its page is",
	    "installed, as if fetched over a network (default 0)" },
	  set_uffd_delay,
	  NULL,
	  NULL },
	{ "record-touch",
	  0,
	  required_argument,
	  "FILE",
	  { "--paging uffd: write the guest's first touch of each page",
	    "(GPA, ns since exec), in order (format: docs/guide.md)" },
	  set_record_touch,
	  NULL,
	  NULL },
	{ "snapshot",
	  0,
	  required_argument,
	  "DIR",
	  { "save the VM into DIR (a new directory) where the guest",
	    "asks (flat, perm: --snapshot-after N; else workload_start)",
	    "and end the run (exit 0); --restore DIR runs it on" },
	  set_snapshot,
	  NULL,
	  NULL },
	{ "snapshot-continue",
	  0,
	  no_argument,
	  NULL,
	  { "--snapshot: the guest runs on after it is saved" },
	  NULL,
	  NULL,
	  flag_snapshot_continue },
	{ "restore",
	  0,
	  required_argument,
	  "DIR",
	  { "run the VM saved in DIR on from where it was (no image:",
	    "RAM, vCPUs, the guest's arguments come from the snapshot)" },
	  set_restore,
	  NULL,
	  NULL },
	{ "restore-mode",
	  0,
	  required_argument,
	  "MODE",
	  { "--restore: how guest RAM gets its content (default copy):" },
	  set_restore_mode,
	  list_restore_modes,
	  NULL },
	{ "clones",
	  0,
	  required_argument,
	  "N",
	  { "--restore: N processes restore the snapshot at once, each",
	    "a VM of its own; print each one's first useful work and",
	    "restore latency, their p50/p95/max and the host memory",
	    "they hold (summed Pss, the memory file's page cache)" },
	  set_clones,
	  NULL,
	  NULL },
	{ "clone-handler",
	  0,
	  required_argument,
	  "shared[:T]|own",
	  { "--clones --restore-mode uffd: one handler process (this",
	    "one) serves every clone's faults from one mapping of the",
	    "memory file (shared, the default: T threads, default one",
	    "per clone up to 64), or each clone its own (own)" },
	  set_clone_handler,
	  NULL,
	  NULL },
	{ "clone-hold",
	  0,
	  required_argument,
	  "FD",
	  { "(--clones' own: a clone reports on FD and holds its",
	    "memory until the parent has measured it)" },
	  set_clone_hold,
	  NULL,
	  NULL },
	{ "restore-cache",
	  0,
	  required_argument,
	  "cold|warm",
	  { "--compare --restore: each run with the memory file's page",
	    "cache dropped first (cold, POSIX_FADV_DONTNEED: the default)",
	    "or the file read once first (warm)" },
	  set_restore_cache,
	  NULL,
	  NULL },
	{ "check-touch",
	  0,
	  required_argument,
	  "FILE",
	  { "check a --record-touch file against --mem (as a replay",
	    "reads it), print what it holds, run nothing" },
	  set_check_touch,
	  NULL,
	  NULL },
	{ "trace",
	  0,
	  required_argument,
	  "FILE",
	  { "write the run as Chrome trace events (- is stdout;",
	    "Perfetto, chrome://tracing): setup, vCPU, eager threads" },
	  set_trace,
	  NULL,
	  NULL },
	{ "compare",
	  0,
	  optional_argument,
	  "[=LIST]",
	  { "run the guest in each mode of LIST (default lazy,eager;",
	    "the '=' is needed), each in a fresh VM; print their",
	    "timelines, a table and a verdict ranking them by first",
	    "useful work (lazy and eager: cost, saved, break-even):" },
	  set_compare,
	  list_modes,
	  NULL },
	{ "repeat",
	  0,
	  required_argument,
	  "N",
	  { "run the guest N times, each in a fresh VM (with --compare,",
	    "N of each, round by round in a Williams order: two modes",
	    "ABBA, lazy eager eager lazy ...); print median [min-max]",
	    "per phase, sweep row and summary (default 1)" },
	  set_repeat,
	  NULL,
	  NULL },
	{ "warmup",
	  0,
	  required_argument,
	  "N",
	  { "runs before the measured ones, not counted (default 1",
	    "with --repeat N > 1, else 0)" },
	  set_warmup,
	  NULL,
	  NULL },
	{ "strict-io",
	  0,
	  no_argument,
	  NULL,
	  { "end the run (exit 4) at the first port or MMIO access",
	    "no device claims (default: count them; reads see all-ones)" },
	  NULL,
	  NULL,
	  flag_strict_io },
	{ "no-sandbox",
	  0,
	  no_argument,
	  NULL,
	  { "do not install the seccomp filters (default: every",
	    "thread gets a kill-by-default allowlist before it", "enters the guest)" },
	  NULL,
	  NULL,
	  flag_no_sandbox },
	{ "quiet",
	  'q',
	  no_argument,
	  NULL,
	  { "only the OSv tables, and --repeat's and --compare's",
	    "summaries: no guest console, info or timeline (a",
	    "failing guest's last console lines still show)" },
	  NULL,
	  NULL,
	  flag_quiet },
	{ "raw",
	  0,
	  no_argument,
	  NULL,
	  { "the image is a flat 64-bit binary with no minivmm header:",
	    "loaded at 0x100000 and entered at its first byte (entry",
	    "state in docs/guide.md); port 0xE9 prints, OUT to 0xF4 exits" },
	  NULL,
	  NULL,
	  flag_raw },
	{ "kernel",
	  0,
	  required_argument,
	  "FILE",
	  { "boot this Linux kernel (an x86-64 bzImage, boot protocol",
	    ">= 2.12) instead of a guest image; its /init gets the",
	    "arguments after -- (a PC: irqchip, PIT, COM1 with IRQ 4,",
	    "CMOS clock, MP table; refused on PVM: see --kernel-anyway)" },
	  set_kernel,
	  NULL,
	  NULL },
	{ "initrd",
	  0,
	  required_argument,
	  "FILE",
	  { "--kernel: this initramfs (cpio, compressed or not)" },
	  set_initrd,
	  NULL,
	  NULL },
	{ "cmdline",
	  0,
	  required_argument,
	  "STRING",
	  { "--kernel: the kernel command line (default: a fast boot,",
	    "'" LINUX_CMDLINE_1, LINUX_CMDLINE_2 "');",
	    "' -- ' and the arguments after -- are appended" },
	  set_cmdline,
	  NULL,
	  NULL },
	{ "append",
	  0,
	  required_argument,
	  "STRING",
	  { "the same as --cmdline (QEMU's name)" },
	  set_cmdline,
	  NULL,
	  NULL },
	{ "kernel-anyway",
	  0,
	  no_argument,
	  NULL,
	  { "--kernel on PVM, where guest kernel code is emulated (Debian's kernel",
	    "stops in its decompressor), and a Linux guest's --restore there: try anyway" },
	  NULL,
	  NULL,
	  flag_kernel_anyway },
	{ "explain",
	  0,
	  no_argument,
	  NULL,
	  { "after the run, say what every column of its tables means" },
	  NULL,
	  NULL,
	  flag_explain },
	{ "dry-run",
	  0,
	  no_argument,
	  NULL,
	  { "check the options and their combinations as a run would",
	    "(not this machine's KVM, memory or files) and exit: 0, or",
	    "2 with the message (scripts/campaign checks each cell so)" },
	  NULL,
	  NULL,
	  flag_dry_run },
	{ "help", OPT_HELP, no_argument, NULL, { "this text" }, NULL, NULL, NULL },
	{ "version",
	  OPT_VERSION,
	  no_argument,
	  NULL,
	  { "print the version and guest ABI version" },
	  NULL,
	  NULL,
	  NULL },
};

#define OPT_LONG_ONLY 256 /* getopt's value for opts[i] without a short name: + i */

/* Is arg one of minivmm's options ("--mem", "--mem=64M", "-m"), by its full name? */
static int is_option(const char *arg)
{
	if (arg[0] != '-' || !arg[1])
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (arg[1] == '-' ? strlen(opts[i].name) == strcspn(arg + 2, "=") &&
					    !strncmp(arg + 2, opts[i].name,
						     strlen(opts[i].name))
				  : arg[1] == opts[i].short_name)
			return 1;
	return 0;
}

/* "unknown option '--memory'", and the name it is nearest. */
static int unknown_option(const char *arg)
{
	const char *names[ARRAY_SIZE(opts)];
	char near[256];

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		names[i] = opts[i].name;
	if (!strncmp(arg, "--", 2) &&
	    suggest_option(arg + 2, names, ARRAY_SIZE(opts), near, sizeof(near)))
		return bad("unknown option '%s'; did you mean %s?", arg, near);
	return bad("unknown option '%s'", arg);
}

/*
 * A name with no '/' or '.' that is not a file ("minivmm --mem 64M hello")
 * is a workload that lost its "--". The workloads are the guest's to list
 * ('-- help'), so this does not guess which names are.
 */
static int workload_like(const char *path)
{
	return isalpha((unsigned char)*path) && !strpbrk(path, "/.") &&
	       access(path, F_OK) && errno == ENOENT;
}

/*
 * What to type instead of argv when argv[img] is the image and what follows
 * it, from argv[from], went wrong. A NULL in words[] is argv's first "--" at
 * or after from, left out.
 */
static int say_instead(int argc, char **argv, int img, int from, const char *why)
{
	const char *words[argc + 1];
	char line[1024];
	int n = 0, end = from;

	while (end < argc && strcmp(argv[end], "--"))
		end++;
	for (int i = 0; i < img; i++)
		words[n++] = argv[i];
	if (from > img && is_option(argv[from])) {
		/* Options after the image: moved before it, the guest's arguments kept after. */
		for (int i = from; i < end; i++)
			words[n++] = argv[i];
		for (int i = img; i < from; i++)
			words[n++] = argv[i];
		for (int i = end; i < argc; i++)
			words[n++] = argv[i];
	} else {
		/* Guest arguments without "--": it goes before them. */
		for (int i = img; i < from; i++)
			words[n++] = argv[i];
		words[n++] = "--";
		for (int i = from; i < argc; i++)
			if (i != end)
				words[n++] = argv[i];
	}
	return bad("%s; write: %s", why, suggest_cmdline(line, sizeof(line), words, n));
}

void options_usage(FILE *f)
{
	fprintf(f, "usage: minivmm [OPTIONS] [GUEST.bin] [-- GUEST-ARGS...]\n\n");
	fprintf(f,
		"Boot a minivmm guest image on /dev/kvm and report what it measured.\n\n");
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		const struct opt *o = &opts[i];
		char lead[40];

		snprintf(lead, sizeof(lead), "%c%c%c --%s%s%s", o->short_name ? '-' : ' ',
			 o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ',
			 o->name, o->arg && o->arg[0] != '[' ? " " : "",
			 o->arg ? o->arg : "");
		/* A long option and its argument take a line of their own. */
		if (strlen(lead) > 21)
			fprintf(f, "  %s\n%24s%s\n", lead, "", o->help[0]);
		else
			fprintf(f, "  %-21s %s\n", lead, o->help[0]);
		for (size_t k = 1; k < ARRAY_SIZE(o->help) && o->help[k]; k++)
			fprintf(f, "%24s%s\n", "", o->help[k]);
		if (o->list)
			o->list(f);
	}
	fprintf(f,
		"\nWithout GUEST.bin, minivmm runs the guest.bin beside it (the build tree's\n");
	fprintf(f,
		"guest/guest.bin, or the installed ../lib/minivmm/guest.bin). Arguments after\n");
	fprintf(f,
		"-- go to the guest (boot info /chosen); the first names the workload:\n");
	fprintf(f,
		"sweep (the default), flat, perm, hello, ...; '-- help' lists them. Options\n");
	fprintf(f,
		"go before GUEST.bin, by their full names (--vcpus, not --vcpu: no abbreviations).\n");
	fprintf(f, "\nExit status (and exit.reason in the results file):\n");
	for (unsigned i = 0; i < exit_status_count; i++) {
		char names[256] = "", line[512];
		size_t at = 0;
		int any = 0;

		for (unsigned e = END_GUEST_EXIT; e < END_COUNT; e++) {
			const struct run_end_row *r = &run_ends[e];
			int ok = r->status == exit_statuses[i].status ||
				 (e == END_GUEST_EXIT &&
				  exit_statuses[i].status == EXIT_GUEST_FAILED);

			if (ok && at < sizeof(names))
				at += (size_t)snprintf(names + at, sizeof(names) - at,
						       "%s%s", any++ ? ", " : "",
						       r->reason);
		}
		snprintf(line, sizeof(line), "%s (reason%s: %s)",
			 exit_statuses[i].meaning, any > 1 ? "s" : "", names);
		fprintf(f, "  %-4d ", exit_statuses[i].status);
		print_wrapped(f, line, 7, 79);
	}
}

/*
 * The guest image when none is named: beside the minivmm binary, in the
 * build tree (guest/guest.bin) or where make install puts it
 * (../lib/minivmm/guest.bin), so an installed minivmm needs no path. NULL if
 * neither exists. The result lives until the next call.
 */
const char *options_default_guest(void)
{
	static char path[PATH_MAX + 32];
	static const char *const beside[] = { "guest/guest.bin",
					      "../lib/minivmm/guest.bin" };
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(beside); i++) {
		snprintf(path, sizeof(path), "%s/%s", exe, beside[i]);
		if (access(path, R_OK) == 0)
			return path;
	}
	return NULL;
}

int options_parse(int argc, char **argv, struct config *cfg)
{
	struct option longopts[ARRAY_SIZE(opts) + 1];
	char shorts[2 * ARRAY_SIZE(opts) + 4] = "+:";
	size_t ns = strlen(shorts);
	char msg[1024];
	int c, e, img = -1;

	*cfg = (struct config){ .vm = { .mem_bytes = MVM_DEFAULT_MEM_BYTES,
					.vcpus = 1,
					.backing = &mm_backends[MM_ANON],
					.uffd_delay_us = UFFD_DELAY_UNSET,
					.numa_policy = NUMA_POLICY_UNSET },
				.repeat = 1,
				.warmup = WARMUP_UNSET,
				.clone_hold_fd = -1,
				.argc = argc,
				.argv = argv };
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		longopts[i] =
			(struct option){ opts[i].name, opts[i].has_arg, NULL,
					 opts[i].short_name ? opts[i].short_name
							    : OPT_LONG_ONLY + (int)i };
		if (opts[i].short_name) {
			shorts[ns++] = (char)opts[i].short_name;
			if (opts[i].has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	longopts[ARRAY_SIZE(opts)] = (struct option){ 0 };
	shorts[ns] = '\0';
	opterr = 0;
	/*
	 * 0, not 1: glibc then forgets its position inside the last argument.
	 * With 1, a parse that stopped inside an option cluster ("-qZ") left
	 * getopt pointing into that argv, and the next parse read it after it
	 * was freed (found by tests/fuzz/fuzz_options).
	 */
	optind = 0;
	/* '+': stop at the first non-option, so guest arguments are never parsed here. */
	for (;;) {
		const struct opt *o = NULL;
		int at = optind ? optind : 1,
		    li = -1; /* the argument getopt reads next */

		c = getopt_long(argc, argv, shorts, longopts, &li);
		if (c == -1)
			break;
		/*
		 * Full names only: getopt_long would take "--vcpu" for --vcpus,
		 * and a later option could make any abbreviation ambiguous.
		 */
		if (li >= 0 && at < argc && !strncmp(argv[at], "--", 2) &&
		    strcspn(argv[at] + 2, "=") != strlen(opts[li].name))
			return bad(
				"'%.*s' is short for --%s: minivmm takes options by their full names only; write --%s",
				(int)strcspn(argv[at], "="), argv[at], opts[li].name,
				opts[li].name);
		if (c == OPT_HELP) {
			options_usage(stdout);
			return 1;
		}
		if (c == OPT_VERSION) {
			printf("minivmm %s (guest ABI %d)\n", MINIVMM_VERSION,
			       MVM_ABI_VERSION);
			return 1;
		}
		if (c == ':')
			return bad("option '%s' needs an argument", argv[optind - 1]);
		if (c >= OPT_LONG_ONLY && c < OPT_LONG_ONLY + (int)ARRAY_SIZE(opts))
			o = &opts[c - OPT_LONG_ONLY];
		for (size_t i = 0; !o && i < ARRAY_SIZE(opts); i++)
			if (opts[i].short_name == c)
				o = &opts[i];
		if (!o)
			return unknown_option(argv[optind - 1]);
		if (o->set == set_compare && optarg)
			if (list_split(argc, argv, optind, optarg, msg, sizeof(msg)))
				return bad("%s", msg);
		if (!o->set)
			*o->flag(cfg) = 1;
		else if (o->set(cfg, optarg))
			return -EINVAL;
		if (o->set == set_clones || o->short_name == 'o') {
			int *w = o->set == set_clones ? cfg->argv_clones
						      : cfg->argv_results;

			/* "-qo FILE": one word with another option in it, which a clone needs. */
			if (argv[at][0] == '-' && argv[at][1] != '-' &&
			    argv[at][1] != 'o')
				w[0] = w[1] = -1;
			else
				w[0] = at, w[1] = optind;
		}
	}
	if (parse_compare(cfg))
		return -EINVAL;
	if (cfg->compare && cfg->vm.eager == EAGER_NONE && !cfg->restore_dir)
		cfg->vm.eager = EAGER_AUTO; /* the eager half of --compare */
	if (cfg->warmup == WARMUP_UNSET)
		cfg->warmup =
			cfg->repeat > 1; /* first-run effects stay out of the medians */
	e = options_check(cfg);
	if (e)
		return e;
	/* getopt consumed a "--" that ended the options: no image named, guest arguments follow. */
	if (optind > 1 && optind <= argc && !strcmp(argv[optind - 1], "--")) {
		cfg->vm.guest_path = NULL;
	} else if (optind < argc && strcmp(argv[optind], "--")) {
		img = optind;
		cfg->vm.guest_path = argv[optind++];
		if (compare_list_misplaced(argc, argv, optind - 1, msg, sizeof(msg)))
			return bad("%s", msg);
	} else {
		cfg->vm.guest_path = NULL;
		if (optind < argc)
			optind++; /* the "--" */
	}
	if (cfg->vm.kernel_path && img >= 0)
		return bad(
			"--kernel %s boots a Linux guest, and '%s' would be a minivmm guest image too: give one (the Linux workload's arguments go after --)",
			cfg->vm.kernel_path, cfg->vm.guest_path);
	if (cfg->vm.kernel_path && cfg->restore_dir && optind < argc)
		return bad(
			"--restore %s takes no guest arguments: the snapshot holds the Linux guest's (--kernel and --initrd name the files it booted, checked against it)",
			cfg->restore_dir);
	if (cfg->vm.kernel_path) {
		/* The guest is the kernel's file: what names a guest names it. */
		cfg->vm.guest_path = cfg->vm.kernel_path;
		cfg->vm.guest_argc = argc - optind;
		cfg->vm.guest_argv = argv + optind;
		return 0;
	}
	/* "--eager populate g.bin": getopt's optional arguments need '='. */
	for (unsigned i = EAGER_AUTO; i < EAGER_STRATEGY_COUNT && img >= 1; i++)
		if (!strcmp(argv[img - 1], "--eager") &&
		    (!strcmp(cfg->vm.guest_path, eager_strategies[i].name) ||
		     !strncmp(cfg->vm.guest_path, "background", strlen("background"))))
			return bad(
				"'%s' after --eager is taken as the guest image: write --eager=%s (its HOW needs '=')",
				cfg->vm.guest_path, cfg->vm.guest_path);
	if (cfg->restore_dir && (img >= 0 || optind < argc))
		return bad(
			"--restore %s takes no guest image and no guest arguments: the snapshot holds the guest, its RAM and its arguments",
			cfg->restore_dir);
	if (cfg->restore_dir) {
		cfg->vm.guest_argc = 0;
		cfg->vm.guest_argv = argv + argc;
		return 0;
	}
	if (img >= 0 && workload_like(cfg->vm.guest_path)) {
		snprintf(
			msg, sizeof(msg),
			"guest image '%s': no such file; if %s is a workload ('-- help' lists them), it goes after --",
			cfg->vm.guest_path, cfg->vm.guest_path);
		return say_instead(argc, argv, img, img, msg);
	}
	if (!cfg->vm.guest_path) {
		cfg->vm.guest_path = options_default_guest();
		/* A dry run checks a line that may run elsewhere, with an image there. */
		if (!cfg->vm.guest_path && cfg->dry_run)
			cfg->vm.guest_path = "guest.bin";
		if (!cfg->vm.guest_path)
			return bad(
				"no guest image given, and none found beside minivmm (guest/guest.bin, or ../lib/minivmm/guest.bin once installed)");
	} else if (optind < argc) {
		if (strcmp(argv[optind], "--")) {
			snprintf(
				msg, sizeof(msg),
				is_option(argv[optind])
					? "'%s' after the guest image: options go before the image (what follows it goes to the guest, after --)"
					: "unexpected argument '%s' after the guest image (guest arguments go after --)",
				argv[optind]);
			return say_instead(argc, argv, img, optind, msg);
		}
		optind++;
	}
	cfg->vm.guest_argc = argc - optind;
	cfg->vm.guest_argv = argv + optind;
	return 0;
}
