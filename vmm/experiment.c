/* An experiment: one run, --repeat N runs, or --compare, each in a fresh VM, in ABBA order. */
#include "app.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODES 2

struct experiment {
	const struct config *cfg;
	struct env *env;
	const struct outputs *out;
	struct config mode_cfg[MAX_MODES]; /* compare: lazy, eager */
	const char *label[MAX_MODES];
	unsigned nmodes, repeat, warmup;
	unsigned planned, done;
	int classic; /* one run per mode, no warm-up: each run prints as it goes */
	struct run **runs;
	struct run_view *views; /* of the runs done, once they are */
	unsigned *mode;		/* of each planned run */
	int *is_warmup;		/* of each planned run */
	int *fds,
		*threads; /* open in the process: [0] before the first run, [i + 1] after run i */
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

static void count_resources(const struct experiment *x, unsigned i)
{
	x->fds[i] = count_entries(x->proc_fd);
	x->threads[i] = count_entries(x->proc_task);
}

static int plan(struct experiment *x)
{
	const struct config *cfg = x->cfg;

	x->nmodes = cfg->compare ? 2 : 1;
	x->mode_cfg[0] = *cfg;
	x->label[0] = "run";
	if (cfg->compare) {
		x->mode_cfg[0].vm.eager = EAGER_NONE;
		x->mode_cfg[0].vm.eager_threads = 0;
		x->mode_cfg[1] = *cfg;
		x->label[0] = "lazy";
		x->label[1] = "eager";
	}
	x->repeat = cfg->repeat;
	x->warmup = cfg->warmup;
	x->classic = x->repeat == 1 && x->warmup == 0;
	x->planned = x->warmup + x->repeat * x->nmodes;
	x->runs = calloc(x->planned, sizeof(*x->runs));
	x->views = calloc(x->planned, sizeof(*x->views));
	x->mode = calloc(x->planned, sizeof(*x->mode));
	x->is_warmup = calloc(x->planned, sizeof(*x->is_warmup));
	x->fds = calloc(x->planned + 1, sizeof(*x->fds));
	x->threads = calloc(x->planned + 1, sizeof(*x->threads));
	if (!x->runs || !x->views || !x->mode || !x->is_warmup || !x->fds || !x->threads)
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
static unsigned measured(const struct experiment *x, unsigned m,
			 const struct run_view **out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < x->done; i++)
		if (x->mode[i] == m && !x->is_warmup[i])
			out[n++] = &x->views[i];
	return n;
}

static void one_line(const struct run_view *v, int status, FILE *f)
{
	struct tl_summary s;
	char a[FMT_BYTES], b[FMT_BYTES], c[FMT_BYTES], d[FMT_BYTES];
	const double *ms = s.ms;

	run_summary(v, &s);
	fprintf(f,
		"  status %d (%s): setup %s ms, %s%s%s, first useful work %s ms, total %s ms\n",
		status, vm_end_reason(v->vm),
		ms[SUM_SETUP] >= 0 ? fmt_value(a, ms[SUM_SETUP], 1) : "-",
		ms[SUM_EAGER] >= 0 ? "eager " : "no eager",
		ms[SUM_EAGER] >= 0 ? fmt_value(b, ms[SUM_EAGER], 1) : "",
		ms[SUM_EAGER] >= 0 ? " ms" : "",
		ms[SUM_FIRST_USEFUL_WORK] >= 0
			? fmt_value(c, ms[SUM_FIRST_USEFUL_WORK], 1)
			: "-",
		ms[SUM_TOTAL] >= 0 ? fmt_value(d, ms[SUM_TOTAL], 1) : "-");
	fflush(f);
}

static void header(const struct experiment *x, unsigned i)
{
	char what[64] = "";

	if (x->is_warmup[i])
		snprintf(what, sizeof(what), " (warm-up, not counted)");
	else if (x->mode[i] == 1 && x->classic)
		snprintf(what, sizeof(what), " (--eager=%s)",
			 eager_strategy_name(x->mode_cfg[1].vm.eager));
	printf("%s== run %u of %u: %s%s\n", x->classic && i ? "\n" : "", i + 1,
	       x->planned, x->label[x->mode[i]], what);
	fflush(stdout);
}

/* Run the plan until it ends or a run fails; returns the first non-zero status. */
static int execute(struct experiment *x)
{
	int status = EXIT_GUEST_OK;

	count_resources(x, 0);
	for (unsigned i = 0; i < x->planned; i++) {
		struct run *r;
		const struct run_opts o = { .env = x->env,
					    .t_exec = i == 0 ? x->cfg->t_exec : now_s(),
					    .out = x->out,
					    .sandbox_main = i + 1 == x->planned,
					    .tables = x->classic,
					    .verbose = x->classic && !x->cfg->quiet };

		if (x->planned > 1 && !x->cfg->quiet)
			header(x, i);
		r = x->runs[i] = run_new(&x->mode_cfg[x->mode[i]], &o);
		if (!r) {
			fprintf(stderr, "minivmm: out of memory\n");
			return EXIT_HOST;
		}
		x->done++;
		status = run_execute(r);
		run_view(r, &x->views[i]); /* what setup made: stats, eager */
		run_report(r, status, x->classic && x->nmodes == 1);
		count_resources(x, i + 1);
		if (!x->classic && !x->cfg->quiet)
			one_line(&x->views[i], status, stdout);
		if (status != EXIT_GUEST_OK)
			break;
	}
	return status;
}

/* --- the files ------------------------------------------------------------ */

static int verdict_of(const struct experiment *x, struct verdict *v)
{
	const struct run_view *l[x->repeat + 1], *e[x->repeat + 1];
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

static void view_of(const struct experiment *x, struct verdict *v,
		    struct experiment_view *out)
{
	*out = (struct experiment_view){ .env = x->env,
					 .planned = x->planned,
					 .done = x->done,
					 .repeat = x->repeat,
					 .warmup = x->warmup,
					 .nmodes = x->nmodes,
					 .kind = x->nmodes == 2 ? "compare" : "repeat",
					 .mode_label = x->label,
					 .mode = x->mode,
					 .is_warmup = x->is_warmup,
					 .runs = x->views,
					 .verdict = verdict_of(x, v) ? v : NULL,
					 .fds = x->fds,
					 .threads = x->threads };
}

/*
 * Write a file that was asked for and put it in place; a failure is
 * reported with its real errno, and leaves the file there as it was.
 */
static int write_file(struct output *o, const char *what,
		      int (*fn)(int, const struct experiment_view *),
		      const struct experiment_view *xv)
{
	int e;

	if (o->fd < 0)
		return 0;
	e = fn(o->fd, xv);
	if (e) {
		fprintf(stderr,
			"minivmm: writing %s to %s: %s; the file there is as it was\n",
			what, o->path, strerror(-e));
		output_discard(o);
		return e;
	}
	return output_commit(o);
}

/* --- after the runs: what they say ----------------------------------------- */

static void print_aggregates(const struct experiment *x)
{
	const struct run_view *rs[MAX_MODES][x->repeat + 1];
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
		records_sweep(x->views[i].rec, &n);
	if (n)
		tables |= 1u << LEGEND_SWEEP;
	if (x->cfg->vm.eager != EAGER_NONE)
		tables |= 1u << LEGEND_EAGER;
	if (!x->classic)
		tables |= 1u << LEGEND_REPEAT;
	if (x->nmodes == 2)
		tables |= 1u << LEGEND_VERDICT;
	printf("\nWhat the columns mean (--explain; the man page and docs/guide.md say the same):\n");
	legend_print(tables, stdout);
	fflush(stdout);
}

int experiment_main(const struct config *cfg, struct env *env, struct outputs *o)
{
	struct experiment x = { .cfg = cfg, .env = env, .out = o };
	struct experiment_view xv;
	struct verdict v;
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
	view_of(&x, &v, &xv);
	xv.status = status;
	e = write_file(&o->file[OUTPUT_RESULTS], "results", results_file_write, &xv);
	e = write_file(&o->file[OUTPUT_TRACE], "trace", trace_file_write, &xv) ?: e;
	if (e && status == EXIT_GUEST_OK)
		status =
			EXIT_HOST; /* a script trusting the status must not lose the data */
out:
	for (unsigned i = 0; i < x.done; i++)
		run_free(x.runs[i]);
	free(x.runs);
	free(x.views);
	free(x.mode);
	free(x.is_warmup);
	free(x.fds);
	free(x.threads);
	if (x.proc_fd)
		closedir(x.proc_fd);
	if (x.proc_task)
		closedir(x.proc_task);
	return status;
}
