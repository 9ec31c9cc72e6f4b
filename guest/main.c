/* Workload dispatch on every vCPU: the first guest argument names the workload. */
#include "guest.h"

static int help_main(int argc, const char *const *argv, const struct fw_info *info);

static const struct workload workloads[] = {
	{ "sweep",
	  "sweep [--max-mib N] [--iterations N] [--parallel]   (the default)\n"
	  "      OSv's benchmark: mmap (demand, populate), touch, munmap of 1, 2, 4 ... MiB",
	  NULL, sweep_main },
	{ "flat",
	  "flat [--max-mib N] [--iterations N] [--parallel] [--progress-mib N]\n"
	  "      sweep's sizes in the direct map: no guest faults, the hypervisor's first\n"
	  "      touch alone; pass 1 records its touch frontier every --progress-mib MiB\n"
	  "      (default: a power of two giving at most 256 points per vCPU; 0: none)",
	  NULL, flat_main },
	{ "perm",
	  "perm [--mib N] [--iterations N] [--seed S] [--stride PAGES | --blocks PAGES]\n"
	  "     [--parallel] [--progress-mib N]\n"
	  "      every page of free RAM (or --mib N per vCPU) once per pass, in a random\n"
	  "      order fixed by --seed (default 1), strided (--stride), or blocks of\n"
	  "      PAGES pages in a random order, each first to last (--blocks); 2 passes\n"
	  "      by default, the first cold, then warm; pass 1's touch frontier as flat's",
	  NULL, perm_main },
	{ "hello",
	  "hello\n      what the guest learned at boot: RAM, vCPUs, TSC, its arguments",
	  hello_main, NULL },
	{ "help", "help\n      this list", help_main, NULL },
	{ NULL, NULL, NULL, NULL },
};

static const struct workload *lookup(const struct workload *w, const char *name)
{
	for (; w->name; w++)
		if (!strcmp(w->name, name))
			return w;
	return NULL;
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
		printf("guest: unknown workload '%s'\n", c.argv[0]);
		usage();
		exit(MVM_EXIT_USAGE);
	}
	mark(MVM_MARK_WORKLOAD_START);
	status = w->smp_main ? w->smp_main(&c) : w->main(c.argc, c.argv, &info);
	mark(MVM_MARK_WORKLOAD_END);
	exit(status);
}
