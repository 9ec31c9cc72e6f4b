/* What every column of every table minivmm prints means: --explain, the man page, the guide. */
#include "report.h"

#include <string.h>

/*
 * One row per column; the man page and docs/guide.md carry the same words
 * (tests check). The LEGEND_COUNTERS rows are also the counters the tables
 * show, in this order (table_counter).
 */
const struct legend_row legend[] = {
	{ LEGEND_SWEEP, "MiB",
	  "size of the guest mapping, MiB (1, 2, 4, ... as OSv's benchmark)" },
	{ LEGEND_SWEEP, "demand",
	  "seconds of the touch loop (one byte written per 4 KiB page, OSv's timed region) over a plain mmap: every page faults on first touch, in the guest (#PF) and in the hypervisor (second-level fault)" },
	{ LEGEND_SWEEP, "populate",
	  "the same over the guest's mmap(MAP_POPULATE), which mapped every page before the loop; not --eager=populate" },
	{ LEGEND_SWEEP, "mmap",
	  "seconds of the guest's mmap call, demand and populate (outside OSv's timed region)" },
	{ LEGEND_SWEEP, "munmap",
	  "seconds of the guest's munmap call afterwards (outside OSv's timed region)" },
	{ LEGEND_SWEEP, "touch",
	  "flat and perm: seconds of the touch loop over the firmware's direct map (perm: in its order): no guest faults, so iteration 1 is the hypervisor's first touch alone" },
	{ LEGEND_TIMELINE, "phase",
	  "named for the event that ends it; it runs from the end of the phase above" },
	{ LEGEND_TIMELINE, "start",
	  "ms since exec (main() entered) when the phase began" },
	{ LEGEND_TIMELINE, "end", "ms since exec when its event happened" },
	{ LEGEND_TIMELINE, "duration", "end - start, ms" },
	{ LEGEND_TIMELINE, "setup",
	  "exec to the first KVM_RUN (guest_entry), eager populate and prefault included (--eager=touch runs in the guest, after it; --eager=background beside it)" },
	{ LEGEND_TIMELINE, "first useful work",
	  "exec to the workload's first full pass over its memory" },
	{ LEGEND_TIMELINE, "total", "exec to the end of the run (vm_exit)" },
	{ LEGEND_COUNTERS, "exits",
	  "VM exits to KVM, all vCPUs (KVM's counters are per phase: the change during it)" },
	{ LEGEND_COUNTERS, "io_exits",
	  "exits the CPU took for port I/O (hypercalls, console); 0 on PVM, which emulates the guest kernel's OUT instructions" },
	{ LEGEND_COUNTERS, "pf_taken",
	  "page faults KVM handled: with shadow paging the guest's own (reflected) and the shadow faults; with EPT/NPT the EPT/NPT violations; accesses made by emulated instructions take none" },
	{ LEGEND_COUNTERS, "pf_fixed",
	  "faults KVM fixed by installing a second-level (shadow or EPT/NPT) entry" },
	{ LEGEND_COUNTERS, "insn_emulation",
	  "guest instructions KVM emulated (on PVM: all guest kernel code)" },
	{ LEGEND_COUNTERS, "mmu_pte_write",
	  "stores by emulated guest instructions, which KVM checks against the guest page tables it shadows: it counts every such store, page-table write or not (0 with EPT/NPT)" },
	{ LEGEND_COUNTERS, "-", "not measured: KVM's counters exist once the vCPUs do" },
	{ LEGEND_EAGER, "eager",
	  "the strategy that ran (auto resolves to prefault or populate), its threads, the guest RAM it covered and the time" },
	{ LEGEND_EAGER, "made resident",
	  "host memory eager backed itself: resident (mincore) after minus before" },
	{ LEGEND_EAGER, "background",
	  "--eager=background: threads of its own populate beside the running guest, in --eager-order; when they finished or were stopped (ms since exec), in which phase, and how long before or after first useful work" },
	{ LEGEND_EAGER, "covered first",
	  "the part of the guest's first pass whose chunks eager had populated before the guest got there (between two of the guest's frontier points; for a random order, before its pass): a lower bound, from both frontiers on one clock" },
	{ LEGEND_EAGER, "roofline",
	  "eager's rate (guest RAM covered over its time) as a percentage of this machine's ceiling for its backing and thread count (--roofline): clear for fresh pages, map for a file's pre-allocated ones" },
	{ LEGEND_REPEAT, "median [min-max]",
	  "over the measured runs of a mode (warm-ups left out), each column taken on its own" },
	{ LEGEND_REPEAT, "IQR",
	  "interquartile range (q3 - q1), once there are 5 runs or more" },
	{ LEGEND_COMPARE, "lazy",
	  "no eager: the kernel backs each page of guest RAM on its first touch" },
	{ LEGEND_COMPARE, "eager",
	  "--eager=HOW (auto by default): guest RAM backed before the guest runs" },
	{ LEGEND_COMPARE, "background",
	  "--eager=background:HOW: host threads back guest RAM while the guest runs; its faults on pages they have not reached are served as lazy ones" },
	{ LEGEND_COMPARE, "uffd",
	  "lazy with --paging uffd: minivmm's userfaultfd handlers back each page on its first touch, each fault timed" },
	{ LEGEND_COMPARE, "replay",
	  "background in a first-touch order: that of --eager-order FILE, or of a recording run made first" },
	{ LEGEND_COMPARE, "record",
	  "the recording run (replay without --eager-order FILE): lazy with --paging uffd --record-touch, run first and not counted; its file is kept" },
	{ LEGEND_VERDICT, "ranking",
	  "the modes by median first useful work, each with its setup, first pass and first-pass pf_taken, and how far it is ahead of the next, or inconclusive when their [min-max] spreads overlap" },
	{ LEGEND_VERDICT, "uffd faults",
	  "a --paging uffd mode's first pass: the faults its userfaultfd handlers resolved, and their median latency (p50)" },
	{ LEGEND_VERDICT, "eager cost",
	  "the eager runs' population time, paid up front" },
	{ LEGEND_VERDICT, "first pass",
	  "the workload's first pass over its memory; lazy minus eager is the first-touch time saved" },
	{ LEGEND_VERDICT, "sooner",
	  "which mode reached first useful work first, from medians" },
	{ LEGEND_VERDICT, "inconclusive",
	  "two modes' [min-max] spreads overlap (lazy's and eager's, or neighbours in the ranking): the difference is not larger than the runs' own spread" },
	{ LEGEND_VERDICT, "break-even",
	  "the fraction of RAM the guest must touch for eager to pay off: cost / (saved per byte x RAM), one per lazy/eager pair (the range spans the pairs); above 100%: eager never pays off, not even if the guest touched all of its RAM" },
};
const unsigned legend_count = ARRAY_SIZE(legend);

static const char *const table_names[] = {
	[LEGEND_SWEEP] = "the OSv table (per iteration)",
	[LEGEND_TIMELINE] = "the timeline",
	[LEGEND_COUNTERS] = "KVM's counters (timeline and compare tables)",
	[LEGEND_EAGER] = "the eager report",
	[LEGEND_REPEAT] = "repeated runs",
	[LEGEND_COMPARE] = "the --compare modes (the compare table's columns)",
	[LEGEND_VERDICT] = "the --compare verdict",
};
_Static_assert(ARRAY_SIZE(table_names) == LEGEND_TABLE_COUNT, "a name for every table");

/* The k-th counter row, or NULL. */
const char *table_counter(unsigned k)
{
	for (unsigned i = 0; i < legend_count; i++)
		if (legend[i].table == LEGEND_COUNTERS && strcmp(legend[i].column, "-") &&
		    k-- == 0)
			return legend[i].column;
	return NULL;
}

unsigned table_counter_count(void)
{
	unsigned n = 0;

	while (n < TABLE_COUNTERS_MAX && table_counter(n))
		n++;
	return n;
}

void legend_print(unsigned tables, FILE *f)
{
	for (unsigned t = 0; t < LEGEND_TABLE_COUNT; t++) {
		if (!(tables & (1u << t)))
			continue;
		fprintf(f, "\n%s:\n", table_names[t]);
		for (unsigned i = 0; i < legend_count; i++)
			if (legend[i].table == t)
				fprintf(f, "  %-18s ", legend[i].column),
					print_wrapped(f, legend[i].meaning, 21, 79);
	}
}
