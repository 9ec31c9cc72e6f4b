/* The Linux guest's workloads: the names after minivmm's `--` and the programs /init runs. */
#ifndef WORKLOADS_H
#define WORKLOADS_H

#include <stdio.h>

/*
 * One row per workload: /init runs `path` with argv[0] = name and the
 * arguments after the name. sweep and flat are one program,
 * bench/sweep-host.c, the one bench/sweep-host runs on the host: it reads
 * its argv[0] (flat: OSv's loop over one mapping, as the minivmm guest's
 * flat does) and reports through mvm.c when it runs under minivmm.
 */
struct lx_workload {
	const char *name;
	const char *path; /* inside the initramfs */
	const char *usage;
};

extern const struct lx_workload lx_workloads[]; /* ends at a NULL name */

const struct lx_workload *lx_workload_find(const char *name); /* NULL: no such workload */
void lx_workload_list(FILE *f); /* the usage lines, for `help` and a wrong name */

#endif /* WORKLOADS_H */
