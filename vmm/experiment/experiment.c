/* An experiment: one run, --repeat N runs, or --compare's modes, each in a fresh VM, in a Williams order. */
#include "experiment.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MODES  COMPARE_MAX_MODES
#define MAX_LABELS (MAX_MODES + 1) /* and the recording */

struct experiment {
	const struct config *cfg;
	struct env *env;
	const struct outputs *out;
	struct config
		mode_cfg[MAX_LABELS]; /* compare: each mode's; then the recording's */
	const char *label[MAX_LABELS];
	unsigned nmodes, repeat, warmup; /* nmodes: the measured modes */
	int recording; /* run 1 records the first-touch order replay replays (label nmodes) */
	char record_path[PATH_MAX];
	unsigned planned, done;
	int classic; /* one run per mode, no warm-up: each run prints as it goes */
	struct run **runs;
	struct run_view *views; /* of the runs done, once they are */
	unsigned *mode;		/* of each planned run */
	int *is_warmup;		/* of each planned run (the recording counts as one) */
	int *fds,
		*threads; /* open in the process: [0] before the first run, [i + 1] after run i */
	DIR *proc_fd, *proc_task;
};

/*
 * Row r of the Williams design for n modes (a balanced Latin square, as
 * scripts/mvmtools/design.py makes it): first row 0, 1, n-1, 2, n-2, ...;
 * row r adds r (mod n); for an odd n the next n rows are those reversed.
 * Over a whole cycle every mode runs equally often in every position and
 * right after every other: on these machines whatever runs second finds
 * memory its host has just backed, so no mode may always follow another.
 * With two modes the rows are A B, B A: ABBA.
 */
static void williams_row(unsigned n, unsigned r, unsigned *row)
{
	unsigned cycle = n % 2 ? 2 * n : n, rev;

	r %= cycle;
	rev = r >= n;
	r %= n;
	for (unsigned k = 0; k < n; k++) {
		unsigned f = k == 0 ? 0 : k % 2 ? (k + 1) / 2 : n - k / 2;

		row[rev ? n - 1 - k : k] = (f + r) % n;
	}
}

void experiment_order(unsigned nmodes, unsigned repeat, unsigned warmup, unsigned *out)
{
	for (unsigned i = 0; i < warmup; i++)
		*out++ = i % nmodes;
	for (unsigned r = 0; r < repeat; r++, out += nmodes)
		williams_row(nmodes, r, out);
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

/*
 * Where the recording goes: beside the results file (its name, .json
 * replaced by .touch), else in $TMPDIR (or /tmp). It is kept: --eager-order
 * FILE replays it again without recording.
 */
static void record_path(const struct config *cfg, char *buf, size_t len)
{
	const char *res = cfg->results_path, *tmp = getenv("TMPDIR");
	size_t n;

	if (res && strcmp(res, "-") && strncmp(res, "/dev/", 5)) {
		n = strlen(res);
		if (n > 5 && !strcmp(res + n - 5, ".json"))
			n -= 5;
		snprintf(buf, len, "%.*s.touch", (int)n, res);
	} else {
		snprintf(buf, len, "%s/minivmm-%d.touch", tmp && *tmp ? tmp : "/tmp",
			 (int)getpid());
	}
}

/*
 * --compare --restore: each mode restores the snapshot its own way. A
 * replay without a recording in the snapshot directory gets one first: a
 * replay run that records (a uffd restore), not counted.
 */
static int build_restore_modes(struct experiment *x)
{
	const struct config *cfg = x->cfg;
	char path[PATH_MAX];

	for (unsigned m = 0; m < x->nmodes; m++) {
		const struct restore_mode *rm = &restore_modes[cfg->compare_modes[m]];

		x->mode_cfg[m] = *cfg;
		x->mode_cfg[m].restore_mode = rm;
		x->label[m] = rm->name;
		if (rm->prepare == restore_replay &&
		    !snap_recording(cfg->restore_dir, path, sizeof(path)) &&
		    !x->recording) {
			x->recording = 1;
			snprintf(x->record_path, sizeof(x->record_path), "%s", path);
			x->mode_cfg[x->nmodes] = x->mode_cfg[m];
			x->label[x->nmodes] = "record";
		}
	}
	return 0;
}

/*
 * Each mode's config from the options given (and the recording's, if a
 * replay needs one). 0, or -EINVAL with err set: the options do not fit a
 * mode.
 */
static int build_modes(struct experiment *x, char *err, size_t errlen)
{
	const struct config *cfg = x->cfg;

	x->nmodes = 1;
	x->mode_cfg[0] = *cfg;
	x->label[0] = "run";
	if (!cfg->compare)
		return 0;
	x->nmodes = cfg->ncompare_modes;
	if (cfg->compare_restore)
		return build_restore_modes(x);
	for (unsigned m = 0; m < x->nmodes; m++) {
		const struct compare_mode_row *row =
			&compare_modes[cfg->compare_modes[m]];
		int r;

		x->mode_cfg[m] = *cfg;
		x->label[m] = row->name;
		r = row->apply(&cfg->vm, &x->mode_cfg[m].vm, err, errlen);
		if (r)
			return r;
		if (compare_mode_needs_recording(row->id, &cfg->vm)) {
			if (!x->recording)
				record_path(cfg, x->record_path, sizeof(x->record_path));
			x->recording = 1;
			x->mode_cfg[m].vm.eager_order = x->record_path;
		}
	}
	if (x->recording) {
		x->mode_cfg[x->nmodes] = *cfg;
		x->label[x->nmodes] = "record";
		compare_recording_config(&cfg->vm, x->record_path,
					 &x->mode_cfg[x->nmodes].vm);
	}
	return 0;
}

/* "--eager=populate": how mode m's runs differ from the options given, for the run headers. */
static const char *mode_what(const struct experiment *x, unsigned m, char *buf,
			     size_t len)
{
	const struct vm_config *c = &x->mode_cfg[m].vm;
	size_t at = 0;

	buf[0] = '\0';
	if (x->mode_cfg[m].restore_dir && x->cfg->compare)
		at += (size_t)snprintf(buf + at, len - at, " --restore-mode %s",
				       x->mode_cfg[m].restore_mode->name);
	if (c->eager != EAGER_NONE)
		at += (size_t)snprintf(buf + at, len - at, " --eager=%s%s",
				       c->eager_background ? "background:" : "",
				       eager_strategy_name(c->eager));
	if (c->eager_order && at < len)
		at += (size_t)snprintf(buf + at, len - at, " --eager-order %s",
				       c->eager_order);
	if (c->paging == PAGING_UFFD && at < len)
		at += (size_t)snprintf(buf + at, len - at, " --paging uffd");
	if (c->record_touch_path && at < len)
		snprintf(buf + at, len - at, " --record-touch %s", c->record_touch_path);
	return buf[0] ? buf + 1 : buf;
}

/*
 * Fresh guest RAM larger than the host's MemAvailable, backed lazily: it
 * runs, and is fine while the guest touches less than that, so it is not
 * refused (eager is: mm_ram_check_capacity); it is said, once.
 */
static void note_overcommit(const struct config *cfg)
{
	char meminfo[4096];
	uint64_t avail;

	if (cfg->vm.mem_path || cfg->vm.reservoir || cfg->vm.backing->hugetlb_sysfs ||
	    (cfg->vm.eager != EAGER_NONE && !cfg->compare && !cfg->vm.eager_background) ||
	    mm_read_text("/proc/meminfo", meminfo, sizeof(meminfo)))
		return;
	avail = mm_meminfo_available(meminfo);
	if (!avail || cfg->vm.mem_bytes <= avail)
		return;
	fprintf(stderr,
		"minivmm: note: --mem %llu MiB is more than the host's %llu MiB available (MemAvailable): guest RAM is overcommitted; fine while the guest touches less than that, past it the kernel's OOM killer may end the run (--mem %lluM or less fits now)\n",
		(unsigned long long)(cfg->vm.mem_bytes >> 20),
		(unsigned long long)(avail >> 20),
		(unsigned long long)(((avail >> 21) << 21) >> 20));
}

int experiment_check(const struct config *cfg)
{
	struct experiment x = { .cfg = cfg };
	char err[1024];

	if (cfg->compare && build_modes(&x, err, sizeof(err))) {
		fprintf(stderr, "minivmm: %s\n", err);
		return EXIT_USAGE;
	}
	note_overcommit(cfg);
	return 0;
}

static int plan(struct experiment *x)
{
	const struct config *cfg = x->cfg;
	char err[1024];
	unsigned first;

	if (build_modes(x, err, sizeof(err))) /* experiment_check said so already */
		return -EINVAL;
	x->repeat = cfg->repeat;
	x->warmup = cfg->warmup;
	x->classic = x->repeat == 1 && x->warmup == 0;
	first = (unsigned)x->recording;
	x->planned = first + x->warmup + x->repeat * x->nmodes;
	x->runs = calloc(x->planned, sizeof(*x->runs));
	x->views = calloc(x->planned, sizeof(*x->views));
	x->mode = calloc(x->planned, sizeof(*x->mode));
	x->is_warmup = calloc(x->planned, sizeof(*x->is_warmup));
	x->fds = calloc(x->planned + 1, sizeof(*x->fds));
	x->threads = calloc(x->planned + 1, sizeof(*x->threads));
	if (!x->runs || !x->views || !x->mode || !x->is_warmup || !x->fds || !x->threads)
		return -ENOMEM;
	if (x->recording) {
		x->mode[0] = x->nmodes;
		x->is_warmup[0] = 1;
	}
	experiment_order(x->nmodes, x->repeat, x->warmup, x->mode + first);
	for (unsigned i = first; i < first + x->warmup; i++)
		x->is_warmup[i] = 1;
	/* Only an experiment's results say what each run left open: a single run reads nothing. */
	if (x->planned > 1) {
		x->proc_fd = opendir("/proc/self/fd");
		x->proc_task = opendir("/proc/self/task");
	}
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
	char what[PATH_MAX + 160] = "", buf[PATH_MAX + 96];
	unsigned m = x->mode[i];
	const char *how = mode_what(x, m, buf, sizeof(buf));

	if (m == x->nmodes && x->recording)
		snprintf(what, sizeof(what),
			 " (the guest's first-touch order, for replay; not counted: %s)",
			 how);
	else if (x->is_warmup[i])
		snprintf(what, sizeof(what), " (warm-up, not counted)");
	else if (x->classic && x->nmodes > 1 && *how)
		snprintf(what, sizeof(what), " (%s)", how);
	printf("%s== run %u of %u: %s%s\n", x->classic && i ? "\n" : "", i + 1,
	       x->planned, x->label[m], what);
	fflush(stdout);
}

/* After the recording run: what it wrote, or why the replays cannot go on. 0 or the exit status. */
static int recorded(const struct experiment *x, unsigned i)
{
	struct paging_facts pg = { 0 };

	if (!x->recording || i != 0)
		return EXIT_GUEST_OK;
	if (paging_facts(x->views[0].paging, &pg) || pg.record_err || !pg.recorded) {
		fprintf(stderr,
			"minivmm: --compare: the recording run wrote no first-touch order to %s%s%s: nothing to replay\n",
			x->record_path, pg.record_err ? ": " : "",
			pg.record_err ? strerror(-pg.record_err) : "");
		return EXIT_HOST;
	}
	if (!x->cfg->quiet && x->cfg->compare_restore)
		printf("  recorded %zu pages in first-touch order to %s (kept in the snapshot: every later replay fetches them first)\n",
		       pg.recorded, x->record_path);
	else if (!x->cfg->quiet)
		printf("  recorded %zu pages in first-touch order to %s (kept: --eager-order %s replays it without recording)\n",
		       pg.recorded, x->record_path, x->record_path);
	return EXIT_GUEST_OK;
}

/*
 * Can every mode of the plan (the recording run too) run here? Asked before
 * the first run: else --compare --eager=prefault on a KVM without it would
 * run all the lazy runs first. 0, or -errno with why set.
 */
static int check_modes(const struct experiment *x, char *why, size_t len)
{
	char err[KVM_ERR_BYTES], what[PATH_MAX + 96], hint[KVM_ERR_BYTES];

	for (unsigned m = 0; m < x->nmodes + (unsigned)x->recording; m++) {
		struct vm_config c = x->mode_cfg[m].vm;
		int e;

		if (c.eager_order == x->record_path)
			c.eager_order =
				NULL; /* recorded by the first run: not there yet */
		if (x->cfg->compare_restore) {
			e = restore_mode_usable(x->mode_cfg[m].restore_mode,
						x->cfg->restore, err, sizeof(err));
			if (e) {
				snprintf(
					why, len,
					"--compare --restore: mode %s cannot run here, so no run was started: %s",
					x->label[m], err);
				return e;
			}
			continue;
		}
		e = vm_config_check(&c, err, sizeof(err));
		if (!e)
			continue;
		if (kvm_missing(e)) /* no mode could run here: none is named */
			snprintf(why, len, "KVM: %s%s", err,
				 emu_host_hint(x->cfg, hint, sizeof(hint)));
		else if (m == x->nmodes)
			snprintf(
				why, len,
				"--compare: mode replay first records the guest's first-touch order (%s), which cannot run here, so no run was started: %s (or give --eager-order FILE)",
				mode_what(x, m, what, sizeof(what)), err);
		else if (x->cfg->compare)
			snprintf(
				why, len,
				"--compare: mode %s (%s) cannot run here, so no run was started: %s",
				x->label[m], mode_what(x, m, what, sizeof(what)), err);
		else
			snprintf(
				why, len,
				"--repeat: the runs cannot run here, so none was started: %s",
				err);
		return e;
	}
	return 0;
}

/*
 * --restore with several runs: before each, the memory file's page cache
 * dropped (cold) or filled (warm), and how much of it is cached said.
 */
static int set_cache(const struct experiment *x, unsigned i)
{
	char path[PATH_MAX], err[PATH_MAX + 128], a[FMT_BYTES];
	struct restore_cache c;
	int e;

	snprintf(path, sizeof(path), "%s/%s", x->cfg->restore_dir, SNAP_MEMORY_FILE);
	e = restore_cache_set(path, x->cfg->restore_cache_warm, &c, err, sizeof(err));
	if (e) {
		fprintf(stderr, "minivmm: %s\n", err);
		return e;
	}
	if (x->cfg->quiet && i == 0)
		printf("restore: before each run the page cache of %s is %s\n", path,
		       x->cfg->restore_cache_warm
			       ? "filled (the file read once): warm"
			       : "dropped (POSIX_FADV_DONTNEED): cold");
	else if (!x->cfg->quiet)
		printf("  page cache of %s: %s; %s MiB of it cached now (mincore)\n",
		       path,
		       x->cfg->restore_cache_warm ? "filled (read once)"
						  : "dropped (POSIX_FADV_DONTNEED)",
		       fmt_value(a, (double)c.cached_bytes / (1 << 20), 1));
	return 0;
}

/* Run the plan until it ends or a run fails; returns the first non-zero status. */
static int execute(struct experiment *x)
{
	int status = EXIT_GUEST_OK;
	char why[VM_MESSAGE_BYTES];
	int e = x->planned > 1 ? check_modes(x, why, sizeof(why)) : 0;

	count_resources(x, 0);
	if (e) {
		/* The first run carries the refusal, so the results file says why. */
		const struct run_opts o = { .env = x->env,
					    .t_exec = x->cfg->t_exec,
					    .out = x->out };
		struct run *r = x->runs[0] = run_new(&x->mode_cfg[x->mode[0]], &o);

		if (!r) {
			fprintf(stderr, "minivmm: out of memory\n");
			return EXIT_HOST;
		}
		x->done = 1;
		status = run_refuse(r, e == -EINVAL ? END_USAGE : END_HOST_ERROR, why);
		run_view(r, &x->views[0]);
		run_report(r, status, 0);
		count_resources(x, 1);
		return status;
	}
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
		if (x->cfg->restore_dir && x->planned > 1 && set_cache(x, i) < 0)
			return EXIT_HOST;
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
		if (status == EXIT_GUEST_OK)
			status = recorded(x, i);
		if (status != EXIT_GUEST_OK)
			break;
	}
	return status;
}

/* --- the files ------------------------------------------------------------ */

/* The index of mode `id` among the measured modes, or -1. */
static int mode_index(const struct experiment *x, enum compare_mode id)
{
	for (unsigned m = 0; x->cfg->compare && !x->cfg->compare_restore && m < x->nmodes;
	     m++)
		if (x->cfg->compare_modes[m] == (unsigned)id)
			return (int)m;
	return -1;
}

/*
 * The verdict: the modes ranked by first useful work and, when lazy and
 * eager both ran, lazy against eager (pair i: their i-th runs, in the
 * same round of the order). 0 when there is none (not a --compare, no
 * measured run).
 */
static int verdict_of(const struct experiment *x, struct verdict *v)
{
	const unsigned cap = x->repeat + 1;
	/* On the heap: --repeat 10000 of five modes would not fit a thread's stack. */
	const struct run_view **rs = calloc((size_t)x->nmodes * cap, sizeof(*rs));
	struct run_facts *facts = calloc((size_t)x->nmodes * cap, sizeof(*facts));
	const struct run_facts *fp[MAX_MODES];
	unsigned n[MAX_MODES], any = 0;
	int l = mode_index(x, MODE_LAZY), e = mode_index(x, MODE_EAGER);

	if (!x->cfg->compare || !rs || !facts)
		goto none;
	for (unsigned m = 0; m < x->nmodes; m++) {
		unsigned all = measured(x, m, rs + m * cap);

		/*
		 * Runs that ended well: an interrupted eager run's cost is part of
		 * one. A plan stops at its first failure, so only the last run
		 * can be one, and pairs stay in step.
		 */
		n[m] = 0;
		for (unsigned i = 0; i < all; i++)
			if (vm_exit_status(rs[m * cap + i]->vm) == EXIT_GUEST_OK)
				run_facts(rs[m * cap + i], &facts[m * cap + n[m]++]);
		any += n[m] > 0;
		fp[m] = facts + m * cap;
	}
	if (any < 2) /* nothing to compare: one mode at most ran to its end */
		goto none;
	memset(v, 0, sizeof(*v));
	if (l >= 0 && e >= 0 && n[l] && n[e])
		compare_verdict(fp[l], fp[e], n[l] < n[e] ? n[l] : n[e], v);
	compare_rank(fp, n, x->label, x->nmodes, &v->ranking);
	free(rs);
	free(facts);
	return 1;
none:
	free(rs);
	free(facts);
	return 0;
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
					 .kind = x->cfg->compare ? "compare" : "repeat",
					 .recording = x->recording,
					 .record_path = x->record_path,
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
static int write_file(struct mm_outfile *o, const char *what,
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
	const unsigned cap = x->repeat + 1;
	const struct run_view **rs = calloc((size_t)x->nmodes * cap, sizeof(*rs));
	struct run_set sets[MAX_MODES];
	struct verdict v;
	int all = 1;

	if (!rs) {
		fprintf(stderr, "minivmm: out of memory for the aggregates\n");
		return;
	}
	for (unsigned m = 0; m < x->nmodes; m++) {
		sets[m] = (struct run_set){ rs + m * cap, measured(x, m, rs + m * cap),
					    x->label[m] };
		all &= sets[m].n == sets[0].n && sets[m].n > 0;
	}
	if (!x->classic)
		for (unsigned m = 0; m < x->nmodes; m++)
			aggregate_print(&sets[m], x->nmodes == 1, stdout);
	if (x->cfg->compare && all) {
		aggregate_compare_print(sets, x->nmodes, stdout);
		if (verdict_of(x, &v))
			verdict_print(&v, stdout);
	}
	fflush(stdout);
	free(rs);
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
	if (x->cfg->compare)
		tables |= 1u << LEGEND_COMPARE | 1u << LEGEND_VERDICT;
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

	e = plan(&x);
	if (e) {
		if (e == -ENOMEM)
			fprintf(stderr, "minivmm: out of memory\n");
		status = e == -ENOMEM ? EXIT_HOST : EXIT_USAGE;
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
