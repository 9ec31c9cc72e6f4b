/* The report: the JSON writer, the results file and its schema, the tables, the legend, the trace. */
#ifndef MINIVMM_REPORT_H
#define MINIVMM_REPORT_H

/*
 * This room turns what the machine did and what was measured into what a
 * person reads (tables, messages) and what a script reads (the results
 * file, the trace). It decides nothing about the run. May include: report/,
 * measure/, machine/, devices/, mm/, include/.
 */

#include "measure.h"

/* ---- json.c: a streaming JSON writer: escaping, commas and nesting ------- */
#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	int count[JSON_MAX_DEPTH]; /* members written at each level */
	int flat; /* depth inside the flat object being written (one line); 0: none */
};

/* key is NULL inside arrays and for the top-level value. */
void json_begin_object(struct json *j, const char *key);
/*
 * An object on one line, whatever it holds (json_end_object ends it): for
 * the items of the arrays a guest fills (records), a third of the bytes.
 */
void json_begin_flat_object(struct json *j, const char *key);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);
/* s as valid UTF-8: each maximal invalid part becomes U+FFFD. NULL: null. */
void json_string(struct json *j, const char *key, const char *s);
/*
 * A string from outside (a path, an argument) whose bytes matter: as
 * json_string, and when it is not UTF-8 also KEY_hex, its bytes in hex
 * (json_bytes_array: KEY_hex, every item's).
 */
void json_bytes(struct json *j, const char *key, const char *s);
void json_bytes_array(struct json *j, const char *key, char *const *v, int n);
int json_utf8_valid(const char *s); /* 1 if s is well-formed UTF-8 */
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v); /* non-finite: null */
/*
 * Times, never json_double: whole ns written exactly in a unit of
 * ns_per_unit ns (NSEC_PER_SEC, _MSEC, _USEC), with the decimals that
 * takes ("1234.567891" ms). The times a run measured are whole ns
 * (timeline_ns), so printed ones add up to the last digit: a phase's
 * end - start is its dur, a summary item the difference of the phase ends
 * it spans. jq and Python read them as doubles: equal to about 1e-13 ms.
 */
void json_ns(struct json *j, const char *key, int64_t ns, uint64_t ns_per_unit);
void json_ms(struct json *j, const char *key,
	     double ms); /* to the ns; negative (not measured): null */
void json_ms_signed(struct json *j, const char *key,
		    double ms); /* a difference: any sign; non-finite: null */
void json_seconds(struct json *j, const char *key,
		  double s); /* to the ns; non-finite: null */
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);

/*
 * Build a document with build(j, arg) in memory, then write all of it to
 * fd. Returns 0, or -errno of the write that failed (ENOSPC, EIO, ...).
 */
int json_write_fd(int fd, void (*build)(struct json *j, const void *arg),
		  const void *arg);

/* ---- fmt.c: numbers for people ------------------------------------------- */
#define FMT_BYTES	 32
#define FMT_SPREAD_BYTES 112
/* v with `decimals` decimals, or more where needed for two significant digits. */
const char *fmt_value(char buf[FMT_BYTES], double v, int decimals);
/* "median [min-max]" (just the value for one sample, "-" for none). */
const char *fmt_spread(char buf[FMT_SPREAD_BYTES], const struct spread *s, int decimals);
/* A size for people: "512 KiB", "64 MiB", "1.50 GiB" (MiB below 1 GiB, so 64 MiB never reads 0.06 GiB). */
const char *fmt_size(char buf[FMT_BYTES], double bytes);
/* A measured duration: "1.3 ms" under a second (the digits it needs), else "2.615 s". */
const char *fmt_duration(char buf[FMT_BYTES], double seconds);
/* text from column indent (the first line's indent already printed), wrapped at width. */
void print_wrapped(FILE *f, const char *text, int indent, int width);
void spread_write_json(const struct spread *s, struct json *j, const char *key);
/* A spread of times in ms or s: each to the ns (json_ms_signed, json_seconds). */
void spread_write_json_ms(const struct spread *s, struct json *j, const char *key);
void spread_write_json_s(const struct spread *s, struct json *j, const char *key);

/* ---- legend.c: what every column of every table means ------------------- */
enum legend_table {
	LEGEND_SWEEP,
	LEGEND_TIMELINE,
	LEGEND_COUNTERS,
	LEGEND_EAGER,
	LEGEND_REPEAT,
	LEGEND_COMPARE,
	LEGEND_VERDICT,
	LEGEND_TABLE_COUNT
};
struct legend_row {
	enum legend_table table;
	const char *column;
	const char *meaning;
};
extern const struct legend_row legend[];
extern const unsigned legend_count;
void legend_print(unsigned tables, FILE *f); /* tables: a mask of 1u << LEGEND_* */
/*
 * The KVM counters every table shows, in order: the LEGEND_COUNTERS rows of
 * legend[] (but "-"), so a counter column is added by adding its meaning.
 */
#define TABLE_COUNTERS_MAX 16
unsigned table_counter_count(void);
const char *table_counter(unsigned k); /* NULL past the end */

/* ---- tables.c: the OSv sweep table, row by row, and eager touch ----------- */
/* Print what the batch of records from index `from` on completes of the OSv tables. */
void tables_sweep_batch(const struct records *r, size_t from, FILE *f);
void tables_touch(const struct records *r, FILE *f);

/* ---- progress.c: the touch frontier in the results file ------------------ */
/* "touch_order" and "progress": each vCPU's first-pass points and its pass's order. */
void progress_write_json(const struct run_view *r, struct json *j);

/* ---- phases.c: the timeline as a table and in the results file ------------ */
/*
 * The table and the summary line. ended: how the run ended when it failed or
 * was stopped (an exit reason such as "interrupted"), else NULL: a phase it
 * did not reach is then said to be not reached, not missing.
 */
void timeline_print(const struct timeline *tl, const struct tl_summary *s,
		    const char *ended, FILE *f);
void timeline_write_json(const struct timeline *tl, const struct tl_summary *s,
			 struct json *j);

/* ---- eager.c: what eager did, for people and in the results file ---------- */
/*
 * What eager did. stopped: the run's end reason when it is ending (eager may
 * have been stopped part way), else NULL.
 */
void eager_report(const struct eager *e, const char *stopped, FILE *f);
/*
 * After eager_report: a populate of fresh memory longer than 5 s, or below
 * half its clear ceiling, gets one line on what a 2 MiB reservoir would
 * cost here (from the roofline's hugetlb2m rows, when it has them) and the
 * two commands (cfg: the run's, for the second).
 */
void eager_slow_note(const struct eager *e, const struct vm_config *cfg, FILE *f);
/* --eager=background, after the run: what it did, when it ended against the guest's marks. */
void eager_background_report(const struct run_view *v, FILE *f);
/* The members of the results' "eager" object (the run adds a touch pass's). */
void eager_write_json(const struct run_view *v, struct json *j);

/* ---- numa.c: --numa's placement and pinning, reported ------------------- */
/* The nodes and the audit's counts, if the audit ran at `when` (else nothing). */
void numa_report(const struct numa *n, enum numa_audit_when when, FILE *f);
void numa_write_json(const struct numa *n,
		     struct json *j); /* "numa": {...}; none without */

/* ---- ram.c: where guest RAM came from (a file, a lease), reported ------- */
/* What guest RAM is (a file, a lease), for people. Nothing for fresh memory. */
void ram_print(const struct guest_ram *ram, FILE *f);
/* The results' "ram" object: where guest RAM came from and what it was. */
void ram_write_json(const struct guest_ram *ram, const struct vm_config *cfg,
		    struct json *j);
/* The backing that ran (or was asked for, before RAM existed), for config.backing. */
const char *ram_backing_name(const struct guest_ram *ram, const struct vm_config *cfg);
uint64_t ram_backing_page_bytes(const struct guest_ram *ram,
				const struct vm_config *cfg); /* 0: auto */

/* ---- roofline.c: eager populate against this machine's measured ceilings -- */
/* Before a long eager: the roofline's predicted time (nothing without one). */
void roofline_predict_print(const struct mm_ceiling *c, uint64_t bytes, unsigned threads,
			    const char *backing, FILE *f);
/* After it: the measured rate as a percentage of the ceiling, or why there is none. */
/*
 * Eager's rate against its ceiling; when it lands far from it, or the
 * ceiling was measured at another size, why it may be and the command that
 * measures it like for like (bytes, backing, threads: this population's).
 */
void roofline_report(const struct mm_ceiling *c, double gib_per_s, uint64_t bytes,
		     const char *backing, unsigned threads, FILE *f);
void roofline_write_json(const struct mm_ceiling *c, double gib_per_s, struct json *j);
/* With --roofline, before a long eager population: what it should take. */
void eager_predict_print(const struct eager *e, FILE *f);

/* ---- paging.c: --paging uffd, what the handlers measured ------------------ */
void paging_report(const struct run_view *v, FILE *f); /* the summary line(s) */
/* snapshot.c: --snapshot's cost and --restore's steps: a line each, and the results' members. */
struct snapshot_facts;
struct restore_facts;
void snapshot_print(const struct snapshot_facts *f, FILE *out);
void restore_print(const struct restore_facts *f, FILE *out);
void snapshot_write_json(const struct run_view *v, struct json *j);
void paging_write_json(const struct run_view *v, struct json *j);

/* ---- ending.c: how a run ended, for a person ------------------------------ */
void platform_print(const struct platform *p, FILE *f);
/*
 * What ended the run (with the guest's last console lines when it failed
 * and verbose is off), unclaimed devices and dropped console output
 * (verbose), the timeline (verbose and timeline).
 */
void ending_print(const struct run_view *v, int status, int verbose, int timeline);

/* ---- aggregate.c: the measured runs of one mode, summed up --------------- */
struct run_set {
	const struct run_view *const *runs;
	unsigned n;
	const char *label;
};
void aggregate_print(const struct run_set *s, int sweep_tables, FILE *f);
void aggregate_write_json(const struct run_set *s, struct json *j); /* as s->label */
/*
 * --compare: every phase of every mode side by side (n sets, each with
 * runs): for two modes ends, durations and pf_taken with spreads; for more,
 * compact (medians of the ends and pf_taken).
 */
void aggregate_compare_print(const struct run_set *sets, unsigned n, FILE *f);

/* ---- verdict.c: --compare's verdict, printed and written ------------------ */
void verdict_print(const struct verdict *v, FILE *f);
void verdict_write_json(const struct verdict *v, struct json *j);

/* ---- results_file.c: the results file, its schema and version in one place */
#define RESULTS_SCHEMA	       "minivmm-results"
#define RESULTS_SCHEMA_VERSION 2
/* A results document's first members: schema, schema_version, environment. */
void results_header_json(const struct env *env, struct json *j);

/* An experiment as the results file and the trace see it. */
struct experiment_view {
	const struct env *env;
	unsigned planned;	       /* runs planned, warm-ups included */
	unsigned done;		       /* runs that started */
	unsigned repeat, warmup;       /* measured runs of each mode, warm-ups */
	unsigned nmodes;	       /* 1, or --compare's modes */
	const char *kind;	       /* "repeat" or "compare" (planned > 1) */
	const char *const *mode_label; /* nmodes (and the recording's, "record") */
	const unsigned *mode;	       /* planned: each run's mode */
	int recording;		       /* run 1 recorded the order replay replays */
	const char *record_path;
	const int *is_warmup;	       /* planned */
	const struct run_view *runs;   /* done */
	const struct verdict *verdict; /* NULL when there is none */
	const int *fds, *threads;      /* done + 1: the process's, around each run */
	int status; /* the experiment's exit status (before the files) */
};
/* The results file (one run: its members at the top). 0 or -errno of the write. */
int results_file_write(int fd, const struct experiment_view *x);
/* --trace: Chrome trace events, one process track per run. 0 or -errno. */
int trace_file_write(int fd, const struct experiment_view *x);

#endif /* MINIVMM_REPORT_H */
