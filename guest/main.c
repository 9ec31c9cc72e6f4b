/* Workload dispatch on every vCPU: the first guest argument names the workload. */
#include "guest.h"

static int help_main(int argc, const char *const *argv, const struct fw_info *info);

static const struct workload workloads[] = {
	{ "sweep",
	  "sweep [--max-mib N] [--iterations N] [--parallel]   (the default)\n"
	  "      OSv's benchmark: mmap (demand, populate), touch, munmap of 1, 2, 4 ... MiB",
	  NULL, sweep_main, 0 },
	{ "flat",
	  "flat [--max-mib N] [--iterations N] [--parallel] [--progress-mib N]\n"
	  "      sweep's sizes in the direct map: no guest faults, the hypervisor's first\n"
	  "      touch alone; pass 1 records its touch frontier every --progress-mib MiB\n"
	  "      (default: a power of two giving at most 256 points per vCPU; 0: none);\n"
	  "      --snapshot-after N: minivmm --snapshot saves the VM after pass N;\n"
	  "      --read-after-snapshot: the passes after it read their pages (its clones share them)",
	  NULL, flat_main, 1 },
	{ "perm",
	  "perm [--mib N] [--iterations N] [--seed S] [--stride PAGES | --blocks PAGES]\n"
	  "     [--parallel] [--progress-mib N]\n"
	  "      every page of free RAM (or --mib N per vCPU) once per pass, in a random\n"
	  "      order fixed by --seed (default 1), strided (--stride), or blocks of\n"
	  "      PAGES pages in a random order, each first to last (--blocks); 2 passes\n"
	  "      by default, the first cold, then warm; pass 1's touch frontier as flat's;\n"
	  "      --snapshot-after N as flat's",
	  NULL, perm_main, 1 },
	{ "hello",
	  "hello\n      what the guest learned at boot: RAM, vCPUs, TSC, its arguments",
	  hello_main, NULL, 0 },
	{ "help", "help\n      this list", help_main, NULL, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};

static const struct workload *lookup(const struct workload *w, const char *name)
{
	for (; w->name; w++)
		if (!strcmp(w->name, name))
			return w;
	return NULL;
}

/*
 * Edit distance of a and b (a swap of neighbours is one edit), or a large
 * number for names longer than NAME_MAX_CHARS: for "did you mean".
 */
#define NAME_MAX_CHARS 32
static unsigned distance(const char *a, const char *b)
{
	unsigned d[NAME_MAX_CHARS + 1][NAME_MAX_CHARS + 1];
	size_t n = strlen(a), m = strlen(b);

	if (n > NAME_MAX_CHARS || m > NAME_MAX_CHARS)
		return ~0u;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

/* The workload whose name a typo ("flta") is nearest, or NULL. */
static const char *nearest(const char *name)
{
	const struct workload *tables[] = { workloads, test_workloads };
	const char *best = NULL;
	unsigned bd = ~0u;

	for (unsigned t = 0; t < 2; t++)
		for (const struct workload *w = tables[t]; w->name; w++) {
			unsigned d = distance(name, w->name);

			if (d < bd) {
				bd = d;
				best = w->name;
			}
		}
	/* One edit, or two in a long name: "nosuch" is not a typo of "touch". */
	return bd == 1 || (bd == 2 && strlen(name) >= 7) ? best : NULL;
}

static void usage(void)
{
	const struct workload *tables[] = { workloads, test_workloads };

	printf("workloads (the first guest argument: minivmm ... -- NAME ARGS):\n");
	for (unsigned t = 0; t < 2; t++) {
		if (t)
			printf("test workloads (minivmm's own test suite uses them):\n");
		for (const struct workload *w = tables[t]; w->name; w++)
			printf("  %s\n", w->usage);
	}
}

static int help_main(int argc, const char *const *argv, const struct fw_info *info)
{
	(void)argc;
	(void)argv;
	(void)info;
	usage();
	return 0;
}

/* vCPU 0 names the workload; the others wait for it (natively, at CPL3). */
static const struct workload *volatile chosen;
static volatile int decided;

/*
 * Entered at CPL3 on every vCPU from the firmware; never returns. With
 * --eager=touch, every vCPU first touches its slice of RAM. Then vCPU 0
 * picks the workload: an SMP one runs on every vCPU, any other on vCPU 0
 * alone while the rest park.
 */
void guest_main(uint64_t cpu);
void guest_main(uint64_t cpu)
{
	static const char *const dflt[] = { "sweep", NULL };
	struct fw_info info;
	struct ctx c = { .cpu = (uint32_t)cpu, .info = &info };
	const struct workload *w = NULL;
	int status;

	get_info(&info);
	c.argc = info.argc ? info.argc : 1;
	c.argv = info.argc ? info.argv : dflt;
	if (info.eager_touch)
		eager_touch(&c);
	if (cpu != 0) {
		while (!__atomic_load_n(&decided, __ATOMIC_ACQUIRE))
			__builtin_ia32_pause();
		if (chosen && chosen->smp_main)
			chosen->smp_main(&c);
		park();
	}
	w = lookup(workloads, c.argv[0]);
	if (!w)
		w = lookup(test_workloads, c.argv[0]);
	chosen = w;
	__atomic_store_n(&decided, 1, __ATOMIC_RELEASE);
	if (!w) {
		const char *near = nearest(c.argv[0]);

		/* The list, then what was wrong: last, where -q's tail of the console shows it. */
		usage();
		if (near)
			printf("guest: unknown workload '%s'; did you mean %s? (minivmm ... -- %s%s)\n",
			       c.argv[0], near, near, c.argc > 1 ? " ARGS" : "");
		else
			printf("guest: unknown workload '%s' (the list above)\n",
			       c.argv[0]);
		exit(MVM_EXIT_USAGE);
	}
	mark(MVM_MARK_WORKLOAD_START);
	/* --snapshot: a workload without a snapshot point of its own is saved here. */
	if (info.snapshot && !w->snapshots)
		snapshot_take(&c, NULL, 0, 0);
	status = w->smp_main ? w->smp_main(&c) : w->main(c.argc, c.argv, &info);
	mark(MVM_MARK_WORKLOAD_END);
	exit(status);
}
