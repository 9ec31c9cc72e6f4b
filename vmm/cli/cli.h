/* The command line: options, --compare's modes, what to type instead, the emulated host's line. */
#ifndef MINIVMM_CLI_H
#define MINIVMM_CLI_H

/*
 * vmm/cli: the command line made into a struct config (options, checked),
 * --compare's modes (each a function of the base config), suggestions for a
 * mistyped word, and where /dev/kvm is missing, the line that runs elsewhere.
 * Pure but for options_parse's messages; may include every room below vmm/.
 */

#include <limits.h>

#include "boot.h"
#include "report.h"
#include "snapshot.h"

#define MVM_DEFAULT_MEM_BYTES (1ULL << 30)
#define MVM_MAX_MEM_BYTES     (1ULL << 40)

/* ---- modes.c: --compare's modes, each a function of the base config ------ */
enum compare_mode {
	MODE_LAZY,	 /* no eager: the kernel backs each page on first touch */
	MODE_EAGER,	 /* --eager's HOW (or auto), before the guest runs */
	MODE_BACKGROUND, /* --eager=background:HOW, while the guest runs */
	MODE_UFFD,	 /* --paging uffd, lazy: minivmm's userfaultfd handlers */
	MODE_REPLAY,	 /* background in a recorded first-touch order */
	COMPARE_MODE_COUNT
};
#define COMPARE_MAX_MODES	      8 /* each at most once: the boot modes, or --restore's */
#define COMPARE_DEFAULT_MODES	      "lazy,eager"
#define COMPARE_RESTORE_DEFAULT_MODES "copy,private,uffd,replay" /* with --restore */

struct compare_mode_row {
	enum compare_mode id;
	const char *name;    /* in --compare=LIST, the tables, the results' labels */
	const char *help[3]; /* --help lines (NULL after the last) */
	/*
	 * The mode's machine from the base one (the options given). 0, or
	 * -EINVAL with err set when the options do not fit the mode.
	 */
	int (*apply)(const struct vm_config *base, struct vm_config *out, char *err,
		     size_t errlen);
};
extern const struct compare_mode_row compare_modes[];
/*
 * "lazy,eager,uffd" into mode ids (each at most once, two or more). 0, or
 * -EINVAL with err set (naming the modes there are).
 */
int compare_modes_parse(const char *list, unsigned *modes, unsigned *n, char *err,
			size_t errlen);
/*
 * With --restore: "copy,uffd" into indices of restore_modes[] (each at most
 * once, two or more). 0, or -EINVAL with err set.
 */
int compare_restore_modes_parse(const char *list, unsigned *modes, unsigned *n, char *err,
				size_t errlen);
/* Replay with no --eager-order FILE: the experiment records the order first. */
int compare_mode_needs_recording(enum compare_mode m, const struct vm_config *base);
/*
 * The recording run's machine: lazy, --paging uffd, --record-touch path
 * (the --uffd-threads and --uffd-delay-us given, if any).
 */
void compare_recording_config(const struct vm_config *base, const char *path,
			      struct vm_config *out);

/* ---- options.c ---------------------------------------------------------- */
struct config {
	struct vm_config vm;	  /* what the machine is asked to be */
	const char *results_path; /* -o */
	const char *trace_path;	  /* --trace: Chrome trace-event JSON */
	int quiet;
	int compare;				   /* --compare: its modes side by side */
	unsigned compare_modes[COMPARE_MAX_MODES]; /* --compare=LIST: enum compare_mode */
	unsigned ncompare_modes;
	const char *compare_list; /* --compare=LIST as given (NULL: the default) */
	int compare_restore;	/* with --restore: compare_modes index restore_modes[] */
	int restore_cache_warm; /* --restore-cache warm: the memory file cached first */
	int restore_cache_given;
	unsigned repeat; /* --repeat: measured runs (of each mode with --compare) */
	unsigned warmup; /* --warmup: runs before them, not counted */
	int no_sandbox;	 /* --no-sandbox */
	int explain;	 /* --explain: the tables' legend after the run */
	const char *check_touch_path; /* --check-touch FILE: check it, run nothing */
	int dry_run;		      /* --dry-run: check the command line, run nothing */
	double t_exec;		      /* main() entered: the first run's "exec" */
	const char *snapshot_dir;     /* --snapshot DIR: save where the guest asks */
	int snapshot_continue;	      /* --snapshot-continue: and run on */
	const char *restore_dir;      /* --restore DIR */
	const struct restore_mode *restore_mode; /* --restore-mode (copy) */
	struct snapshot *restore; /* --restore: loaded by main before the run */
	unsigned clones;   /* --clones N: N processes restore it at once (0: not) */
	int clone_hold_fd; /* --clone-hold FD: a clone's channel to its parent, or -1 */
	int clone_handler_own; /* --clone-handler own: each uffd clone its own handlers */
	int clone_handler_given;
	unsigned
		clone_handler_threads; /* --clone-handler shared:T (0: one per clone, up to 64) */
	/* argv[a, b) that gave --clones and -o (0, 0: none): left out of each clone's command line */
	int argv_clones[2], argv_results[2];
	int mem_given, vcpus_given, backing_given; /* on the command line */
	int argc; /* minivmm's own command line, for the environment record */
	char **argv;
};

/*
 * Parse argv into cfg. Returns 0 to run, 1 when --help or --version was
 * handled, or -EINVAL after printing a usage error to stderr.
 */
int options_parse(int argc, char **argv, struct config *cfg);
void options_usage(FILE *f); /* the --help text, built from the tables */
#define CLONES_MAX 256	     /* --clones: processes of one burst */
const char *options_default_guest(void);

/* ---- suggest.c: what to type instead (pure) ------------------------------ */
/*
 * The option nearest `typed` (a long option's name without "--", maybe with
 * "=VALUE") among names[0..n): "--NAME", or "--A, --B" when typed begins
 * several, in buf; NULL when none is near (more than two edits away).
 */
const char *suggest_option(const char *typed, const char *const *names, unsigned n,
			   char *buf, size_t len);
/* The one of names[0..n) nearest typed (a typo: 2 edits or fewer), or NULL. */
const char *suggest_name(const char *typed, const char *const *names, unsigned n);
/* words[0..n) as one shell command line, quoted where a shell needs it, in buf. */
const char *suggest_cmdline(char *buf, size_t len, const char *const *words, int n);
/*
 * The line that runs the minivmm command line words[0..n) (words[0]: minivmm
 * as typed) in an emulated KVM host: "SCRIPT [--mem MEM_MIB] -- WORDS...",
 * script being scripts/emu-host as the user would type it; with script NULL
 * (minivmm is in no checkout that has one) the line is for a checkout's top:
 * "scripts/emu-host ... -- ./minivmm WORDS[1..]". mem_mib 0: the emulated
 * host's default RAM. buf, or NULL when the line does not fit in it.
 */
const char *suggest_emu_host(char *buf, size_t len, const char *script, unsigned mem_mib,
			     const char *const *words, int n);

/* ---- emu_host.c: where /dev/kvm is missing, the line that runs elsewhere -- */
/*
 * ". Run the same line in an emulated KVM host: LINE" for this command line
 * (cfg->argv), to follow a message that says why this machine has no
 * /dev/kvm; LINE is suggest_emu_host's with the scripts/emu-host beside this
 * minivmm if there is one, and an emulated host's RAM to hold cfg's. In buf.
 */
const char *emu_host_hint(const struct config *cfg, char *buf, size_t len);

#endif /* MINIVMM_CLI_H */
