/* Workload dispatch: the first guest argument names the workload. */
#include "guest.h"

static const struct workload workloads[] = {
	{ "sweep", "sweep [--max-mib N] [--iterations N]   (the default)", sweep_main },
	{ "flat", "flat [--max-mib N] [--iterations N]", flat_main },
	{ "hello", "hello", hello_main },
	{ NULL, NULL, NULL },
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

	printf("workloads:\n");
	for (unsigned t = 0; t < 2; t++)
		for (const struct workload *w = tables[t]; w->name; w++)
			printf("  %s\n", w->usage);
}

/* Entered at CPL3 from the firmware; never returns. */
void guest_main(void);
void guest_main(void)
{
	static const char *const dflt[] = { "sweep", NULL };
	struct fw_info info;
	const struct workload *w;
	const char *const *argv;
	int argc;

	get_info(&info);
	argc = info.argc ? info.argc : 1;
	argv = info.argc ? info.argv : dflt;
	w = lookup(workloads, argv[0]);
	if (!w)
		w = lookup(test_workloads, argv[0]);
	if (!w) {
		printf("guest: unknown workload '%s'\n", argv[0]);
		usage();
		exit(2);
	}
	exit(w->main(argc, argv, &info));
}
