/* minivmm: the options, the output files, the environment, then the experiment. */
#include "app.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Open an output file now (the sandbox allows no open(2) later) and find out
 * whether it can be written before a long run: a probe byte, written and
 * taken back, meets a full disk or a read-only file system here rather than
 * after the run. Returns the fd, or -1 after saying why.
 */
static int open_output(const char *opt, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	struct stat st;

	if (fd < 0) {
		fprintf(stderr, "minivmm: %s %s: %s\n", opt, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
		int e = write(fd, "\n", 1) == 1 ? 0 : errno ? errno : EIO;

		/* A regular file gets its probe back; a device (/dev/null, /dev/full) keeps it. */
		if (!e && S_ISREG(st.st_mode) &&
		    (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET)))
			e = errno;
		if (e) {
			fprintf(stderr, "minivmm: %s %s: cannot write: %s\n", opt, path,
				strerror(e));
			close(fd);
			return -1;
		}
	}
	return fd;
}

static int open_outputs(const struct config *cfg, struct outputs *o)
{
	*o = (struct outputs){ .results_fd = -1, .trace_fd = -1 };
	if (cfg->results_path) {
		o->results_fd = open_output("--results", cfg->results_path);
		if (o->results_fd < 0)
			return -1;
		o->fds[o->n++] = o->results_fd;
	}
	if (cfg->trace_path) {
		o->trace_fd = open_output("--trace", cfg->trace_path);
		if (o->trace_fd < 0) {
			if (o->results_fd >= 0)
				close(o->results_fd);
			return -1;
		}
		o->fds[o->n++] = o->trace_fd;
	}
	return 0;
}

static int close_outputs(const struct config *cfg, struct outputs *o)
{
	int e = 0;

	/* close(2) is where some file systems (NFS) report a failed write. */
	if (o->results_fd >= 0 && close(o->results_fd)) {
		e = errno;
		fprintf(stderr, "minivmm: writing results to %s: %s\n", cfg->results_path,
			strerror(e));
	}
	if (o->trace_fd >= 0 && close(o->trace_fd)) {
		e = errno;
		fprintf(stderr, "minivmm: writing trace to %s: %s\n", cfg->trace_path,
			strerror(e));
	}
	return e;
}

/* --check-touch FILE: read it as a replay would, against --mem. The exit status. */
static int check_touch(const struct config *cfg)
{
	struct touch_order o;
	char err[512];
	int r = touch_order_read(cfg->check_touch_path, cfg->vm.mem_bytes, &o, err,
				 sizeof(err));

	if (r) {
		fprintf(stderr, "minivmm: --check-touch %s\n", err);
		return r == -ENOMEM ? EXIT_HOST : EXIT_USAGE;
	}
	printf("%s: %llu pages of %llu KiB in %zu ranges of first-touch order, for %llu MiB of guest RAM: ok\n",
	       cfg->check_touch_path, (unsigned long long)o.pages,
	       (unsigned long long)(o.page_bytes >> 10), o.nranges,
	       (unsigned long long)(o.ram_bytes >> 20));
	touch_order_free(&o);
	return EXIT_GUEST_OK;
}

/*
 * glibc's malloc, made to ask the kernel nothing once the threads are
 * sandboxed (vmm/machine/sandbox.c lists every lazy call and where it is
 * avoided): trimming a thread's arena reads /proc/sys/vm/overcommit_memory
 * the first time (never trim: freed memory is reused by the next run), and
 * a ninth arena asks sched_getaffinity how many CPUs there are (a fixed
 * number of arenas instead).
 */
#define MALLOC_TRIM_NEVER ((int)(~0U >> 1))
#define MALLOC_ARENAS	  8

static char stdout_buf[BUFSIZ];

int main(int argc, char **argv)
{
	struct config cfg;
	struct outputs o;
	struct env *env = NULL;
	double t_exec = now_s();
	int r, status;

	mallopt(M_TRIM_THRESHOLD, MALLOC_TRIM_NEVER);
	mallopt(M_ARENA_MAX, MALLOC_ARENAS);
	r = options_parse(argc, argv, &cfg);

	if (r)
		return r > 0 ? EXIT_GUEST_OK : EXIT_USAGE;
	cfg.t_exec = t_exec;
	if (cfg.check_touch_path)
		return check_touch(&cfg);
	/*
	 * stdout gets a buffer of its own now, line-buffered whatever it is: a
	 * buffer glibc allocates lazily probes the stream on the first write
	 * (fstat, then isatty's ioctl on a character device such as /dev/ptmx),
	 * which the sandbox forbids; and rows and messages reach a file or a
	 * pipe (| tee, Slurm) as they are printed, not at exit.
	 */
	setvbuf(stdout, stdout_buf, _IOLBF, sizeof(stdout_buf));
	/* "minivmm ... | head": a closed stdout must not kill the run before its results are written. */
	signal(SIGPIPE, SIG_IGN);
	if (open_outputs(&cfg, &o))
		return EXIT_USAGE;
	if (env_start(argc, argv, &env))
		fprintf(stderr, "minivmm: out of memory for the environment record\n");
	status = experiment_main(&cfg, env, &o);
	if (close_outputs(&cfg, &o) && status == EXIT_GUEST_OK)
		status = EXIT_HOST;
	env_free(env);
	return status;
}
