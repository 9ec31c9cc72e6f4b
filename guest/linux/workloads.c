/* The Linux guest's workload table (workloads.h). */
#include "workloads.h"

#include <string.h>

const struct lx_workload lx_workloads[] = {
	{ "sweep", "/bin/sweep-host",
	  "sweep [--max-mib N] [--iterations N] [--no-thp]\n"
	  "      OSv's benchmark: mmap (demand, populate), touch, munmap of 1, 2, 4 ... MiB\n"
	  "      (bench/sweep-host's program; default: the largest size free memory holds)" },
	{ "flat", "/bin/sweep-host",
	  "flat [--max-mib N] [--iterations N] [--no-thp] [--progress-mib N] [--snapshot-after N]\n"
	  "      sweep's sizes back to back in one mapping, touch timed: the first pass takes\n"
	  "      the guest's faults and the hypervisor's first touch, later passes neither\n"
	  "      (--progress-mib is accepted for the minivmm guest's command lines; no\n"
	  "      frontier is sent: the pages of a Linux mapping are not physically in order;\n"
	  "      --snapshot-after N: minivmm --snapshot DIR saves the VM after pass N, and\n"
	  "      minivmm --restore DIR runs the rest and checks the mapping's checksum)" },
	{ "hello", "/bin/hello",
	  "hello [--exit N]\n"
	  "      what the kernel says: release, command line, CPUs, RAM, the arguments;\n"
	  "      ends with status N (default 0)" },
	{ "help", "/bin/hello", "help\n      this list" },
	{ NULL, NULL, NULL },
};

const struct lx_workload *lx_workload_find(const char *name)
{
	for (const struct lx_workload *w = lx_workloads; w->name; w++)
		if (!strcmp(w->name, name))
			return w;
	return NULL;
}

void lx_workload_list(FILE *f)
{
	fprintf(f, "workloads of the Linux guest (minivmm --kernel ... -- NAME ARGS):\n");
	for (const struct lx_workload *w = lx_workloads; w->name; w++)
		fprintf(f, "  %s\n", w->usage);
}
