/* One measured run: its outputs (-o, --trace) and the machine, the measurement and the report wired together. */
#ifndef MINIVMM_RUN_H
#define MINIVMM_RUN_H

/*
 * vmm/run: one run from setup to teardown (run.c), with its Linux guest
 * (run_linux.c) and snapshot wiring (run_snapshot.c), and the output files
 * it writes (output.c). Uses vmm/cli's struct config.
 */

#include "cli.h"

/* ---- output.c: -o and --trace, written whole or not at all --------------- */

/*
 * -o and --trace: opened, and found writable, before anything runs (the
 * sandbox allows no open(2) later); written through mm_outfile (mm/outfile.c:
 * a temporary beside the file a symlink names, renamed over it at the end),
 * so that a run killed on the way leaves the previous file as it was. "-"
 * is stdout.
 */
/* 0, or -errno after saying why on stderr (nothing is left then). */
int output_open(struct mm_outfile *o, const char *opt, const char *path);
/* fsync and rename over the target (or close one written in place). 0 or -errno, said. */
int output_commit(struct mm_outfile *o);
void output_discard(struct mm_outfile *o); /* the temporary goes, the target stays */

enum { OUTPUT_RESULTS, OUTPUT_TRACE, OUTPUT_COUNT };
struct outputs {
	struct mm_outfile file[OUTPUT_COUNT];
	int fds[OUTPUT_COUNT], n;	 /* the open ones, for the sandbox */
	int dirfds[OUTPUT_COUNT], ndirs; /* their directories, for the final rename */
};
/*
 * Open -o and --trace as cfg asks; -1 after saying why. From then on the
 * second SIGINT's immediate exit removes their temporaries too.
 */
int outputs_open(const struct config *cfg, struct outputs *o);
void outputs_discard(struct outputs *o); /* what was not committed */

/* ---- run.c: one measured run -------------------------------------------- */

/* How one run is to behave within its experiment. */
struct run_opts {
	struct env *env; /* completed before the main thread's sandbox goes on */
	double t_exec;	 /* this run's "exec": main()'s entry for the first run */
	const struct outputs *out; /* the sandbox lets the main thread write these */
	int sandbox_main;	   /* this is the process's last run: sandbox main too */
	int tables;  /* print the sweep tables as records arrive (one run, not repeats) */
	int verbose; /* also the platform, eager report, console and timeline */
};

/*
 * One VM from options to results: the VM, its devices, and the subsystems
 * that measure it, each owning its state. The run wires them together: it
 * is the devices' host (hypercalls) and the VM's hooks. Opaque (run.c).
 */
struct run;
/* Everything without KVM: devices wired, subsystems created. NULL when out of memory. */
struct run *run_new(const struct config *cfg, const struct run_opts *o);
/* Claim the devices' ports on the VM's bus. 0 or -errno. */
int run_register_devices(struct run *r);
/* Set up, run the guest to its end, tear the VM down. Returns the exit status. */
int run_execute(struct run *r);
/* Instead of run_execute: the run ends before it starts, as `end`, saying why. The status. */
int run_refuse(struct run *r, enum run_end end, const char *why);
/* What ended the run, unclaimed devices, dropped console output, the timeline. */
void run_report(struct run *r, int status, int timeline);
/* The run's pieces, for the report; valid until run_free(). */
void run_view(const struct run *r, struct run_view *v);
struct vm *run_vm(struct run *r);
void run_free(struct run *r);

#endif /* MINIVMM_RUN_H */
