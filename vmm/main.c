/* minivmm: set up a VM from the options, run the guest, report what it measured. */
#include "vmm.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static void write_err(const char *what, const char *path, int err)
{
	if (err)
		fprintf(stderr, "minivmm: writing %s to %s: %s\n", what, path,
			strerror(-err));
}

static int open_outputs(const struct config *cfg, struct outputs *o)
{
	*o = (struct outputs){ 0 };
	if (cfg->results_path && !(o->results = fopen(cfg->results_path, "we"))) {
		fprintf(stderr, "minivmm: --results %s: %s\n", cfg->results_path,
			strerror(errno));
		return -1;
	}
	if (cfg->trace_path && !(o->trace = fopen(cfg->trace_path, "we"))) {
		fprintf(stderr, "minivmm: --trace %s: %s\n", cfg->trace_path,
			strerror(errno));
		if (o->results)
			fclose(o->results);
		return -1;
	}
	/* Buffers now: stdio's first write would fstat and isatty (an ioctl) under the filter. */
	if (o->results) {
		setvbuf(o->results, NULL, _IOFBF, BUFSIZ);
		o->fds[o->n++] = fileno(o->results);
	}
	if (o->trace) {
		setvbuf(o->trace, NULL, _IOFBF, BUFSIZ);
		o->fds[o->n++] = fileno(o->trace);
	}
	return 0;
}

static void close_outputs(struct outputs *o)
{
	if (o->results)
		fclose(o->results);
	if (o->trace)
		fclose(o->trace);
}

static int single(const struct config *cfg, const struct outputs *o)
{
	static struct run run;
	const struct run *runs[] = { &run };
	const char *labels[] = { "minivmm" };
	int status;

	if (run_init(&run, cfg, cfg->t_exec, o, 1)) {
		fprintf(stderr, "minivmm: out of memory\n");
		return EXIT_HOST;
	}
	status = run_execute(&run);
	run_report(&run, status, 1);
	if (o->results)
		write_err("results", cfg->results_path, run_write_json(&run, o->results));
	if (o->trace)
		write_err("trace", cfg->trace_path,
			  trace_write(o->trace, runs, labels, 1));
	run_free(&run);
	return status;
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct outputs o;
	double t_exec = now_s();
	int r = options_parse(argc, argv, &cfg), status;

	if (r)
		return r > 0 ? EXIT_GUEST_OK : EXIT_USAGE;
	cfg.t_exec = t_exec;
	/*
	 * Give stdout its buffer before any thread is sandboxed: glibc would
	 * otherwise probe the stream on its first write (fstat, then isatty's
	 * ioctl on a character device such as /dev/null or a terminal), which
	 * the vCPU threads' filter forbids. Same buffering glibc would choose.
	 */
	setvbuf(stdout, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	if (open_outputs(&cfg, &o))
		return EXIT_USAGE;
	status = cfg.compare ? compare_main(&cfg, &o) : single(&cfg, &o);
	close_outputs(&o);
	return status;
}
