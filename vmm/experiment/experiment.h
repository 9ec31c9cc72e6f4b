/* The experiment: one run, --repeat N, --compare, in a Williams order; the page cache before each restore; --clones. */
#ifndef MINIVMM_EXPERIMENT_H
#define MINIVMM_EXPERIMENT_H

/*
 * vmm/experiment: the runs of one command line (experiment.c) and the
 * memory file's page cache before each restore (restore_cache.c). Uses
 * vmm/run for each run and vmm/cli for the modes.
 */

#include "run.h"

/* ---- experiment.c: one run, --repeat N, --compare, in a Williams order ---- */
/*
 * The order of an experiment's runs: warmup warm-ups (mode i % nmodes),
 * then repeat rounds, round r the Williams design's row r (ABBA for two
 * modes; scripts/mvmtools/design.py makes the same rows). out: warmup +
 * repeat * nmodes mode indices.
 */
void experiment_order(unsigned nmodes, unsigned repeat, unsigned warmup, unsigned *out);
/*
 * Before any output file is opened: a --compare's list of modes fits the
 * other options. 0, or EXIT_USAGE after a message. (Whether each mode can
 * run on this machine is asked before the first run, which carries a
 * refusal into the results file.)
 */
int experiment_check(const struct config *cfg);
/* Writes and commits the output files at the end (or discards one whose writing failed). */
int experiment_main(const struct config *cfg, struct env *env, struct outputs *o);

/* ---- restore_cache.c: the memory file's page cache before each restore ---- */
struct restore_cache {
	uint64_t file_bytes;   /* the memory file's size */
	uint64_t cached_bytes; /* of it in the page cache afterwards (mincore) */
};
/*
 * Cold (warm 0): drop path's page cache (POSIX_FADV_DONTNEED); warm: read
 * its data once. Then count what is cached. 0, or -errno with err set.
 */
int restore_cache_set(const char *path, int warm, struct restore_cache *out, char *err,
		      size_t errlen);
/* Bytes of fd's first size bytes in the page cache now (mincore over a read-only mapping). 0 or -errno. */
int restore_cache_bytes(int fd, uint64_t size, uint64_t *out);

/* ---- clones.c: --clones N, one snapshot restored by N processes at once ---- */
/*
 * Starts N clones of this command line (each a process restoring the
 * snapshot, without --clones, with --clone-hold: vmm/run/run.c) released
 * together; waits until each has reported and holds its memory, or ended;
 * measures their memory (smaps_rollup) and the memory file's page cache at
 * that moment; lets them go. Prints each one's first useful work and
 * restore latency, their p50/p95/max; writes o's results file (a "clones"
 * document). Refuses (EXIT_HOST) before any starts when N do not fit in
 * the host's available memory. The exit status: 0, or the first failed
 * clone's (EXIT_HOST for one killed by a signal).
 */
int clones_main(const struct config *cfg, struct env *env, struct outputs *o);
/* Who resolves a uffd clone's faults (--restore-mode uffd with --clones, and in each clone). */
enum clone_handler {
	CLONE_HANDLER_NONE, /* not --restore-mode uffd */
	CLONE_HANDLER_SHARED, /* the parent's threads (--clone-handler shared[:T], the default) */
	CLONE_HANDLER_OWN /* each clone its own (--clone-handler own) */
};
enum clone_handler clones_handler(const struct config *cfg);

#endif /* MINIVMM_EXPERIMENT_H */
