/* An experiment: one run, --repeat N runs, or --compare, each in a fresh VM, in ABBA order. */
#include "vmm.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_MODES	       2
#define RESULTS_SCHEMA	       "minivmm-results"
#define RESULTS_SCHEMA_VERSION 2

/* Open fds and threads of the process, around each run: nothing may leak. */
struct resources {
	int fds, threads;
};

struct experiment {
	const struct config *cfg;
	struct env *env;
	const struct outputs *out;
	struct config mode_cfg[MAX_MODES]; /* compare: lazy, eager */
	const char *label[MAX_MODES];
	unsigned nmodes, repeat, warmup;
	unsigned planned, done;
	int classic; /* one run per mode, no warm-up: each run prints as it goes */
	struct run *runs;
	unsigned *mode;	       /* of each planned run */
	int *is_warmup;	       /* of each planned run */
	struct resources *res; /* [0] before the first run, [i + 1] after run i */
	DIR *proc_fd, *proc_task;
};

/*
 * The order of runs: warm-ups first (not counted), then the measured runs.
 * With two modes the measured runs alternate ABBA (lazy eager eager lazy
 * lazy ...): on these machines whatever runs second in a pair finds memory
 * its host has just backed, so neither mode may always go first.
 */
static unsigned mode_of(const struct experiment *x, unsigned i)
{
	if (x->nmodes == 1)
		return 0;
	if (i < x->warmup)
		return i % 2;
	i -= x->warmup;
	return i % 4 == 0 || i % 4 == 3 ? 0 : 1;
}

/*
 * Open fds and threads of this process: nothing may leak from one run to
 * the next. The /proc directories are opened before any sandbox and re-read
 * (getdents64) each time.
 */
static int count_entries(DIR *d)
{
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	rewinddir(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	return n;
}

static void count_resources(const struct experiment *x, struct resources *r)
{
	r->fds = count_entries(x->proc_fd);
	r->threads = count_entries(x->proc_task);
}

static int plan(struct experiment *x)
{
	const struct config *cfg = x->cfg;

	x->nmodes = cfg->compare ? 2 : 1;
	x->mode_cfg[0] = *cfg;
	x->label[0] = "run";
	if (cfg->compare) {
		x->mode_cfg[0].eager = EAGER_NONE;
		x->mode_cfg[0].eager_threads = 0;
		x->mode_cfg[1] = *cfg;
		x->label[0] = "lazy";
		x->label[1] = "eager";
	}
	x->repeat = cfg->repeat;
	x->warmup = cfg->warmup;
	x->classic = x->repeat == 1 && x->warmup == 0;
	x->planned = x->warmup + x->repeat * x->nmodes;
	x->runs = calloc(x->planned, sizeof(*x->runs));
	x->mode = calloc(x->planned, sizeof(*x->mode));
	x->is_warmup = calloc(x->planned, sizeof(*x->is_warmup));
	x->res = calloc(x->planned + 1, sizeof(*x->res));
	if (!x->runs || !x->mode || !x->is_warmup || !x->res)
		return -ENOMEM;
	for (unsigned i = 0; i < x->planned; i++) {
		x->mode[i] = mode_of(x, i);
		x->is_warmup[i] = i < x->warmup;
	}
	x->proc_fd = opendir("/proc/self/fd");
	x->proc_task = opendir("/proc/self/task");
	return 0;
}

/* The measured runs of mode m (warm-ups left out), in the order they ran. */
static unsigned measured(const struct experiment *x, unsigned m, const struct run **out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < x->done; i++)
		if (x->mode[i] == m && !x->is_warmup[i])
			out[n++] = &x->runs[i];
	return n;
}

static void one_line(const struct run *r, int status, FILE *f)
{
	struct tl_summary s;
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES], d[FMT_BYTES];

	run_summary(r, &s);
	fprintf(f,
		"  status %d (%s): setup %s ms, %s%s%s, first useful work %s ms, total %s ms\n",
		status, vm_end_reason(&r->vm), fmt_value(a, s.setup_ms, 1),
		s.eager_ms >= 0 ? "eager " : "no eager",
		s.eager_ms >= 0 ? fmt_value(b, s.eager_ms, 1) : "",
		s.eager_ms >= 0 ? " ms" : "",
		s.first_useful_work_ms >= 0 ? fmt_value(c, s.first_useful_work_ms, 1)
					    : "-",
		fmt_value(d, s.total_ms, 1));
	fflush(f);
}

static void header(const struct experiment *x, unsigned i)
{
	char what[64] = "";

	if (x->is_warmup[i])
		snprintf(what, sizeof(what), " (warm-up, not counted)");
	else if (x->mode[i] == 1 && x->classic)
		snprintf(what, sizeof(what), " (--eager=%s)",
			 eager_strategy_name(x->mode_cfg[1].eager));
	printf("%s== run %u of %u: %s%s\n", x->classic && i ? "\n" : "", i + 1,
	       x->planned, x->label[x->mode[i]], what);
	fflush(stdout);
}

/* Run the plan until it ends or a run fails; returns the first non-zero status. */
static int execute(struct experiment *x)
{
	int status = EXIT_GUEST_OK;

	count_resources(x, &x->res[0]);
	for (unsigned i = 0; i < x->planned; i++) {
		struct run *r = &x->runs[i];
		const struct run_opts o = { .env = x->env,
					    .t_exec = i == 0 ? x->cfg->t_exec : now_s(),
					    .out = x->out,
					    .sandbox_main = i + 1 == x->planned,
					    .tables = x->classic,
					    .verbose = x->classic && !x->cfg->quiet };

		if (x->planned > 1 && !x->cfg->quiet)
			header(x, i);
		if (run_init(r, &x->mode_cfg[x->mode[i]], &o)) {
			fprintf(stderr, "minivmm: out of memory\n");
			return EXIT_HOST;
		}
		x->done++;
		status = run_execute(r);
		run_report(r, status, x->classic && x->nmodes == 1);
		count_resources(x, &x->res[i + 1]);
		if (!x->classic && !x->cfg->quiet)
			one_line(r, status, stdout);
		if (status != EXIT_GUEST_OK)
			break;
	}
	return status;
}

/* --- the results file ------------------------------------------------------ */

static void top(const struct experiment *x, struct json *j)
{
	json_string(j, "schema", RESULTS_SCHEMA);
	json_u64(j, "schema_version", RESULTS_SCHEMA_VERSION);
	env_write_json(x->env, j);
}

static void resources_json(const struct experiment *x, struct json *j)
{
	json_begin_object(j, "resources");
	json_begin_array(j, "fds");
	for (unsigned i = 0; i <= x->done; i++)
		json_i64(j, NULL, x->res[i].fds);
	json_end_array(j);
	json_begin_array(j, "threads");
	for (unsigned i = 0; i <= x->done; i++)
		json_i64(j, NULL, x->res[i].threads);
	json_end_array(j);
	json_end_object(j);
}

static int verdict_of(const struct experiment *x, struct verdict *v)
{
	const struct run *l[x->repeat + 1], *e[x->repeat + 1];
	struct run_facts lf[x->repeat + 1], ef[x->repeat + 1];
	unsigned nl = measured(x, 0, l), ne = measured(x, 1, e), n = nl < ne ? nl : ne;

	if (x->nmodes != 2 || !n)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		run_facts(l[i], &lf[i]);
		run_facts(e[i], &ef[i]);
	}
	compare_verdict(lf, ef, n, v);
	return 1;
}

static void build(struct json *j, const void *arg)
{
	const struct experiment *x = arg;
	struct verdict v;

	json_begin_object(j, NULL);
	top(x, j);
	if (x->planned == 1) { /* one run: its members at the top */
		run_write_members(&x->runs[0], j);
		json_end_object(j);
		return;
	}
	json_begin_object(j, "experiment");
	json_string(j, "kind", x->nmodes == 2 ? "compare" : "repeat");
	json_u64(j, "repeat", x->repeat);
	json_u64(j, "warmup", x->warmup);
	json_begin_array(j, "order");
	for (unsigned i = 0; i < x->planned; i++)
		json_string(j, NULL, x->label[x->mode[i]]);
	json_end_array(j);
	json_u64(j, "runs_done", x->done);
	json_end_object(j);
	json_begin_array(j, "runs");
	for (unsigned i = 0; i < x->done; i++) {
		json_begin_object(j, NULL);
		json_u64(j, "index", i + 1);
		json_string(j, "label", x->label[x->mode[i]]);
		json_bool(j, "warmup", x->is_warmup[i]);
		run_write_members(&x->runs[i], j);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_object(j, "aggregate");
	for (unsigned m = 0; m < x->nmodes; m++) {
		const struct run *rs[x->repeat + 1];
		struct run_set set = { rs, measured(x, m, rs), x->label[m] };

		aggregate_write_json(&set, j);
	}
	json_end_object(j);
	if (verdict_of(x, &v))
		verdict_write_json(&v, j);
	resources_json(x, j);
	json_end_object(j);
}

static void build_trace(struct json *j, const void *arg)
{
	const struct experiment *x = arg;
	const struct run *runs[x->done ? x->done : 1];
	const char *labels[x->done ? x->done : 1];
	char names[x->done ? x->done : 1][32];

	for (unsigned i = 0; i < x->done; i++) {
		runs[i] = &x->runs[i];
		if (x->planned == 1)
			snprintf(names[i], sizeof(names[i]), "minivmm");
		else
			snprintf(names[i], sizeof(names[i]), "%s (run %u)",
				 x->label[x->mode[i]], i + 1);
		labels[i] = names[i];
	}
	trace_write(j, runs, labels, (int)x->done);
}

/* Write a file that was asked for; a failure is reported with its real errno. */
static int write_file(int fd, const char *what, const char *path,
		      void (*fn)(struct json *, const void *), const void *arg)
{
	int e;

	if (fd < 0)
		return 0;
	e = json_write_fd(fd, fn, arg);
	if (e)
		fprintf(stderr, "minivmm: writing %s to %s: %s\n", what, path,
			strerror(-e));
	return e;
}

/* --- after the runs: what they say ----------------------------------------- */

static void print_aggregates(const struct experiment *x)
{
	const struct run *rs[MAX_MODES][x->repeat + 1];
	struct run_set sets[MAX_MODES];
	struct verdict v;

	for (unsigned m = 0; m < x->nmodes; m++)
		sets[m] = (struct run_set){ rs[m], measured(x, m, rs[m]), x->label[m] };
	if (!x->classic)
		for (unsigned m = 0; m < x->nmodes; m++)
			aggregate_print(&sets[m], x->nmodes == 1, stdout);
	if (x->nmodes == 2 && sets[0].n && sets[1].n && sets[0].n == sets[1].n) {
		compare_table_print(&sets[0], &sets[1],
				    eager_strategy(sets[1].runs[0]->eager), stdout);
		if (verdict_of(x, &v))
			verdict_print(&v, stdout);
	}
	fflush(stdout);
}

/* --explain: the legend of the tables this run printed. */
static void explain(const struct experiment *x)
{
	unsigned tables = 1u << LEGEND_TIMELINE | 1u << LEGEND_COUNTERS;
	size_t n = 0;

	for (unsigned i = 0; i < x->done && !n; i++)
		results_sweep(x->runs[i].res, &n);
	if (n)
		tables |= 1u << LEGEND_SWEEP;
	if (x->cfg->eager != EAGER_NONE)
		tables |= 1u << LEGEND_EAGER;
	if (!x->classic)
		tables |= 1u << LEGEND_REPEAT;
	if (x->nmodes == 2)
		tables |= 1u << LEGEND_VERDICT;
	printf("\nWhat the columns mean (--explain; the man page and docs/guide.md say the same):\n");
	legend_print(tables, stdout);
	fflush(stdout);
}

int experiment_main(const struct config *cfg, struct env *env, const struct outputs *o)
{
	struct experiment x = { .cfg = cfg, .env = env, .out = o };
	int status, e;

	if (plan(&x)) {
		fprintf(stderr, "minivmm: out of memory\n");
		status = EXIT_HOST;
		goto out;
	}
	status = execute(&x);
	if (status == EXIT_GUEST_OK && x.planned > 1)
		print_aggregates(&x);
	if (cfg->explain)
		explain(&x);
	env_complete(
		env); /* if no run got as far as its guest (and no sandbox went on) */
	e = write_file(o->results_fd, "results", cfg->results_path, build, &x);
	e = write_file(o->trace_fd, "trace", cfg->trace_path, build_trace, &x) ?: e;
	if (e && status == EXIT_GUEST_OK)
		status =
			EXIT_HOST; /* a script trusting the status must not lose the data */
out:
	for (unsigned i = 0; i < x.done; i++)
		run_free(&x.runs[i]);
	free(x.runs);
	free(x.mode);
	free(x.is_warmup);
	free(x.res);
	if (x.proc_fd)
		closedir(x.proc_fd);
	if (x.proc_task)
		closedir(x.proc_task);
	return status;
}
