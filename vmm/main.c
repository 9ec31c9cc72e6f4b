/* minivmm: the options, the output files, the environment, then the experiment. */
#include "experiment.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --check-touch FILE: read it as a replay would, against --mem. The exit status. */
static int check_touch(const struct config *cfg)
{
	struct touch_order o;
	char err[512], mib[24];
	int r = touch_order_read(cfg->check_touch_path, cfg->vm.mem_bytes, &o, err,
				 sizeof(err));

	if (r) {
		fprintf(stderr, "minivmm: --check-touch %s\n", err);
		return r == -ENOMEM ? EXIT_HOST : EXIT_USAGE;
	}
	snprintf(mib, sizeof(mib), "%llu", (unsigned long long)(cfg->vm.mem_bytes >> 20));
	printf("%s: %llu pages of %llu KiB in %zu ranges of first-touch order, for %llu MiB of guest RAM%s%s%s: ok\n",
	       cfg->check_touch_path, (unsigned long long)o.pages,
	       (unsigned long long)(o.page_bytes >> 10), o.nranges,
	       (unsigned long long)(o.ram_bytes >> 20),
	       o.ram_bytes < cfg->vm.mem_bytes ? ", in this run's " : "",
	       o.ram_bytes < cfg->vm.mem_bytes ? mib : "",
	       o.ram_bytes < cfg->vm.mem_bytes ? " MiB" : "");
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
/*
 * --restore: the snapshot's RAM, vCPUs, backing and guest arguments become
 * the run's; an option given that says otherwise is refused, and so is a
 * restore mode this machine lacks, before anything runs. The exit status,
 * or 0 to run.
 */
static struct snapshot restored;

static int load_restore(struct config *cfg)
{
	const struct snap_header *h;
	const struct mm_backend *b;
	char err[1024];
	int e = snapshot_load(cfg->restore_dir, &restored, err, sizeof(err));

	if (e) {
		fprintf(stderr, "minivmm: %s\n", err);
		return e == -EINVAL || e == -ENOENT ? EXIT_USAGE : EXIT_HOST;
	}
	h = restored.v.hdr;
	b = mm_backend_find(h->backing);
	if (!b || b->page_bytes != h->page_bytes) {
		fprintf(stderr,
			"minivmm: --restore %s: saved on backing '%s', which this minivmm does not have\n",
			cfg->restore_dir, h->backing);
		return EXIT_USAGE;
	}
	if ((cfg->mem_given && cfg->vm.mem_bytes != h->ram_bytes) ||
	    (cfg->vcpus_given && cfg->vm.vcpus != h->nvcpus) ||
	    (cfg->vm.backing_set && cfg->vm.backing != b)) {
		fprintf(stderr,
			"minivmm: --restore %s: the snapshot is of %llu MiB of RAM, %u vCPU%s, backing %s; --%s says otherwise (leave it out: it comes from the snapshot)\n",
			cfg->restore_dir, (unsigned long long)(h->ram_bytes >> 20),
			h->nvcpus, h->nvcpus == 1 ? "" : "s", b->name,
			cfg->mem_given && cfg->vm.mem_bytes != h->ram_bytes ? "mem"
			: cfg->vcpus_given && cfg->vm.vcpus != h->nvcpus    ? "vcpus"
									    : "backing");
		return EXIT_USAGE;
	}
	if (!restored.v.lx && cfg->vm.kernel_path) {
		fprintf(stderr,
			"minivmm: --restore %s: the snapshot is of the minivmm guest %s, not of a Linux guest: leave out --kernel\n",
			cfg->restore_dir, restored.v.cfg->image);
		return EXIT_USAGE;
	}
	cfg->vm.mem_bytes = h->ram_bytes;
	cfg->vm.vcpus = h->nvcpus;
	cfg->vm.backing = b;
	cfg->vm.guest_path = restored.v.cfg->image;
	/* A Linux guest's files: those given (checked against the snapshot), or those it booted. */
	if (restored.v.lx) {
		const struct snap_linux *lx = restored.v.lx;

		if (!cfg->vm.kernel_path)
			cfg->vm.kernel_path = lx->kernel;
		if (!cfg->vm.initrd_path && lx->initrd[0])
			cfg->vm.initrd_path = lx->initrd;
		if (!cfg->vm.cmdline && lx->cmdline[0])
			cfg->vm.cmdline = lx->cmdline;
		cfg->vm.guest_path = cfg->vm.kernel_path;
	}
	cfg->vm.guest_argc = restored.argc;
	cfg->vm.guest_argv = (char **)restored.argv;
	if (!cfg->restore_mode)
		cfg->restore_mode = &restore_modes[0];
	e = restore_mode_usable(cfg->restore_mode, &restored, err, sizeof(err));
	if (e) {
		fprintf(stderr, "minivmm: %s\n", err);
		return e == -EINVAL ? EXIT_USAGE : EXIT_HOST;
	}
	cfg->restore = &restored;
	return 0;
}

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
	if (cfg.dry_run) {
		printf("minivmm --dry-run: the options are valid; nothing was run\n");
		return EXIT_GUEST_OK;
	}
	if (cfg.check_touch_path)
		return check_touch(&cfg);
	if (cfg.restore_dir && (status = load_restore(&cfg)))
		return status;
	/* A clone of --clones in uffd mode: its faults go to the parent's handler, unless each has its own. */
	if (cfg.clone_hold_fd >= 0 && clones_handler(&cfg) == CLONE_HANDLER_SHARED)
		cfg.vm.uffd_external_fd = cfg.clone_hold_fd;
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
	/* Modes this machine cannot run are refused before any file is written. */
	status = experiment_check(&cfg);
	if (status)
		return status;
	if (outputs_open(&cfg, &o))
		return EXIT_USAGE;
	if (env_start(argc, argv, &env))
		fprintf(stderr, "minivmm: out of memory for the environment record\n");
	if (cfg.clones) {
		status = clones_main(&cfg, env, &o);
		outputs_discard(&o);
		env_free(env);
		return status;
	}
	status = experiment_main(&cfg, env, &o);
	outputs_discard(&o); /* anything not committed (the experiment could not start) */
	env_free(env);
	return status;
}
