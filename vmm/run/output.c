/* -o and --trace: written whole or not at all (mm/outfile.c), or to stdout. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/*
 * -o and --trace go through mm_outfile (mm/outfile.c): a temporary in the
 * directory of the file a symlink names, fsynced and renamed over it at the
 * end, so a run killed on the way (SIGKILL, the OOM killer, a node's end)
 * leaves the previous file as it was; "-" is stdout.
 */

static struct outputs *live; /* for the signal handler: what to remove */

int output_open(struct mm_outfile *o, const char *opt, const char *path)
{
	char err[MM_PATH_BYTES + 256];
	int e = mm_outfile_open(o, opt, path, err, sizeof(err));

	if (e)
		fprintf(stderr, "minivmm: %s\n", err);
	return e;
}

int output_commit(struct mm_outfile *o)
{
	char err[MM_PATH_BYTES + 256];
	int e = mm_outfile_commit(o, err, sizeof(err));

	if (e)
		fprintf(stderr, "minivmm: %s\n", err);
	return e;
}

void output_discard(struct mm_outfile *o)
{
	mm_outfile_discard(o);
}

/* On the way out at once (the second SIGINT): async-signal-safe, unlinkat only. */
static void discard_now(void)
{
	for (int i = 0; live && i < OUTPUT_COUNT; i++)
		mm_outfile_unlink_now(&live->file[i]);
}

static int is_stdout(const char *path)
{
	return path && !strcmp(path, "-");
}

/*
 * "-o -" (or "--trace -"): the JSON is what stdout carries, for "| jq";
 * everything else minivmm prints there (tables, the guest's console) goes
 * to stderr instead. 0 or -errno, said.
 */
static int open_stdout(struct mm_outfile *o, const char *opt)
{
	*o = (struct mm_outfile){ .what = opt, .path = "-", .in_place = 1, .dirfd = -1 };
	fflush(stdout);
	o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (o->fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "minivmm: %s -: stdout: %s\n", opt, strerror(errno));
		mm_outfile_discard(o);
		return -1;
	}
	return 0;
}

int outputs_open(const struct config *cfg, struct outputs *o)
{
	const char *paths[OUTPUT_COUNT] = { cfg->results_path, cfg->trace_path };
	const char *opts[OUTPUT_COUNT] = { "--results", "--trace" };

	*o = (struct outputs){ 0 };
	if (is_stdout(paths[OUTPUT_RESULTS]) && is_stdout(paths[OUTPUT_TRACE])) {
		fprintf(stderr,
			"minivmm: -o - and --trace -: two JSON documents on stdout; give one of them a file\n");
		return -1;
	}
	for (int i = 0; i < OUTPUT_COUNT; i++) {
		o->file[i] = (struct mm_outfile){ .fd = -1, .dirfd = -1 };
		if (!paths[i])
			continue;
		if (is_stdout(paths[i]) ? open_stdout(&o->file[i], opts[i])
					: output_open(&o->file[i], opts[i], paths[i])) {
			outputs_discard(o);
			return -1;
		}
		o->fds[o->n++] = o->file[i].fd;
		if (o->file[i].dirfd >= 0)
			o->dirfds[o->ndirs++] = o->file[i].dirfd;
	}
	live = o;
	vm_set_exit_hook(discard_now);
	return 0;
}

void outputs_discard(struct outputs *o)
{
	for (int i = 0; i < OUTPUT_COUNT; i++)
		output_discard(&o->file[i]);
}
