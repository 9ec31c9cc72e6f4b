/* The application: options, one measured run wired together, and the experiment of many runs. */
#ifndef MINIVMM_APP_H
#define MINIVMM_APP_H

/*
 * The top of vmm/: the process (main), its options, the run that wires the
 * machine, the measurement and the report together, and the experiment
 * (--repeat, --compare). May include every room below it.
 */

#include "report.h"

#define MVM_DEFAULT_MEM_BYTES (1ULL << 30)
#define MVM_MAX_MEM_BYTES     (1ULL << 40)

/* ---- options.c ---------------------------------------------------------- */
struct config {
	struct vm_config vm;	  /* what the machine is asked to be */
	const char *results_path; /* -o */
	const char *trace_path;	  /* --trace: Chrome trace-event JSON */
	int quiet;
	int compare;	 /* --compare: lazy, then eager, side by side */
	unsigned repeat; /* --repeat: measured runs (of each mode with --compare) */
	unsigned warmup; /* --warmup: runs before them, not counted */
	int no_sandbox;	 /* --no-sandbox */
	int explain;	 /* --explain: the tables' legend after the run */
	const char *check_touch_path; /* --check-touch FILE: check it, run nothing */
	double t_exec;		      /* main() entered: the first run's "exec" */
	int argc; /* minivmm's own command line, for the environment record */
	char **argv;
};

/*
 * Parse argv into cfg. Returns 0 to run, 1 when --help or --version was
 * handled, or -EINVAL after printing a usage error to stderr.
 */
int options_parse(int argc, char **argv, struct config *cfg);
/* "64M", "1G", "4096": bytes with an optional binary K/M/G/T suffix. 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *out);
void options_usage(FILE *f); /* the --help text, built from the tables */
const char *options_default_guest(void);

/* ---- run.c: one measured run -------------------------------------------- */

/*
 * Output files, opened (and found writable) before anything runs: the
 * sandbox allows no open(2) later. -1 when not asked for.
 */
struct outputs {
	int results_fd, trace_fd;
	int fds[2], n; /* the open ones, for the sandbox */
};

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
/* What ended the run, unclaimed devices, dropped console output, the timeline. */
void run_report(struct run *r, int status, int timeline);
/* The run's pieces, for the report; valid until run_free(). */
void run_view(const struct run *r, struct run_view *v);
struct vm *run_vm(struct run *r);
void run_free(struct run *r);

/* ---- experiment.c: one run, --repeat N, --compare, in ABBA order ---------- */
int experiment_main(const struct config *cfg, struct env *env, const struct outputs *o);

#endif /* MINIVMM_APP_H */
