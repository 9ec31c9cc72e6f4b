/*
 * seccomp sandbox: a kill-by-default allowlist per thread role, installed before KVM_RUN.
 * These rules are the source of truth; the programs minivmm loads are built from
 * them at compile time (gen/sandbox_gen.c, loaded by sandbox_load.c), with each
 * run-time value (an fd, the pid) in a slot of internal.h. A rule on a new
 * run-time value needs a new slot there.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <seccomp.h>
#include <stdio.h> /* RENAME_NOREPLACE */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * What the C library does lazily, the first time, on a thread whose filter
 * is on, and how each is kept out of the filters (a new one shows up as
 * SIGSYS, exit 159, in tests/hostile.sh's long --repeat and quiet cases):
 *   - malloc trimming a thread's arena reads /proc/sys/vm/overcommit_memory
 *     once: main() sets M_TRIM_THRESHOLD so that nothing is ever trimmed;
 *   - a ninth malloc arena asks sched_getaffinity for the CPU count: main()
 *     sets M_ARENA_MAX;
 *   - stdio's first write to a stream whose buffer glibc must allocate runs
 *     fstat and, on a character device, isatty's ioctl: main() gives stdout
 *     a static buffer; stderr is unbuffered;
 *   - qsort of more than 1 KiB asks sysinfo for the machine's memory:
 *     measure/stats.c and mm/paging/uffd_stats.c sort by hand;
 *   - localtime and strftime open the time zone: measure/env.c formats
 *     gmtime_r by hand;
 *   - sysconf(_SC_NPROCESSORS_*) reads /sys, and the environment record
 *     opens files: env_complete runs before the main thread's filter, and
 *     experiment_main's later call is a no-op once it has;
 *   - setlocale and message catalogs (strerror in another locale): never
 *     called, the C locale needs no file;
 *   - pthread_create (its stack, the first signal setup): every thread is
 *     created before the main thread's filter, and vCPU and handler
 *     threads create none.
 */

#define ALLOW(ctx, nr, ...) \
	seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(nr), __VA_ARGS__)

/* Memory for malloc (records, timeline samples), never executable. */
static int allow_memory(scmp_filter_ctx ctx)
{
	int r = 0;

	/* malloc: arenas and large blocks; PROT_EXEC is refused (only R/W/none pass). */
	r = r ?: ALLOW(ctx, mmap, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	r = r ?: ALLOW(ctx, mprotect, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	r = r ?: ALLOW(ctx, munmap, 0); /* free() of large blocks */
	r = r ?: ALLOW(ctx, mremap, 0); /* realloc() of large blocks (records) */
	r = r ?: ALLOW(ctx, brk, 0);	/* malloc's main heap */
	/* glibc returns a finished thread's stack and malloc trims with MADV_DONTNEED. */
	r = r ?: ALLOW(ctx, madvise, 1, SCMP_A2(SCMP_CMP_EQ, MADV_DONTNEED));
	return r;
}

#if SANDBOX_SANITIZER_RULES
/*
 * make SAN=1 builds only: what the ASan/UBSan runtime does behind our back
 * (alternate signal stacks per thread, returning shadow memory, reading
 * /proc/self/maps when it reports an error). Never in normal builds.
 * LeakSanitizer cannot run under any filter (it ptraces every thread at
 * exit): the tests run it with --no-sandbox (tests/lib.sh).
 */
static int allow_sanitizer_runtime(scmp_filter_ctx ctx)
{
	int r = 0;

	r = r ?: ALLOW(ctx, sigaltstack, 0);
	r = r ?: ALLOW(ctx, madvise, 0);
	r = r ?: ALLOW(ctx, openat, 0);
	r = r ?: ALLOW(ctx, read, 0);
	r = r ?: ALLOW(ctx, readlink, 0);
	r = r ?: ALLOW(ctx, close, 0);
	r = r ?: ALLOW(ctx, prctl, 0);
	r = r ?: ALLOW(ctx, sched_getaffinity, 0);
	r = r
		    ?: ALLOW(ctx, sched_yield,
			     0); /* its spin locks' back-off (two threads ending at once) */
	r = r ?: ALLOW(ctx, getrlimit, 0);
	r = r ?: ALLOW(ctx, prlimit64, 0);
	r = r ?: ALLOW(ctx, newfstatat, 0);
	r = r ?: ALLOW(ctx, write, 0);
	return r;
}

/* A role without memory of its own: the runtime still maps and unmaps at a thread's end. */
static int allow_sanitizer_memory(scmp_filter_ctx ctx)
{
	return allow_memory(ctx);
}
#else
static int allow_sanitizer_runtime(scmp_filter_ctx ctx)
{
	(void)ctx;
	return 0;
}

static int allow_sanitizer_memory(scmp_filter_ctx ctx)
{
	(void)ctx;
	return 0;
}
#endif

/* What every role needs: locks, signals between our threads, output, counters. */
static int allow_common(scmp_filter_ctx ctx, const struct sandbox_fds *f, long pid)
{
	int r = 0;

	r = r ?: ALLOW(ctx, futex, 0);	    /* pthread mutexes and condition variables */
	r = r ?: ALLOW(ctx, exit, 0);	    /* a thread ends */
	r = r ?: ALLOW(ctx, exit_group, 0); /* the process ends */
	r = r ?: ALLOW(ctx, rt_sigreturn, 0);	/* back from the kick handler (SIGUSR1) */
	r = r ?: ALLOW(ctx, rt_sigprocmask, 0); /* pthread_sigmask, glibc thread exit */
	r = r ?: ALLOW(ctx, getpid, 0); /* pthread_kill: vm_finish kicks and wakes */
	r = r ?: ALLOW(ctx, gettid, 0);
	r = r ?: ALLOW(ctx, tgkill, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)pid));
	r = r ?: ALLOW(ctx, clock_gettime, 0); /* timeline clock when the vDSO cannot */
	r = r ?: ALLOW(ctx, sched_yield, 0);   /* glibc lock back-off */
	r = r ?: ALLOW(ctx, getcpu, 0); /* --numa: sched_getcpu without rseq or vDSO */
	/* Guest console and tables to stdout, messages to stderr. */
	r = r ?: ALLOW(ctx, write, 1, SCMP_A0(SCMP_CMP_EQ, STDOUT_FILENO));
	r = r ?: ALLOW(ctx, write, 1, SCMP_A0(SCMP_CMP_EQ, STDERR_FILENO));
	r = r
		    ?: ALLOW(ctx, newfstatat, 1,
			     SCMP_A0(SCMP_CMP_EQ, STDOUT_FILENO)); /* stdio */
	r = r ?: ALLOW(ctx, newfstatat, 1, SCMP_A0(SCMP_CMP_EQ, STDERR_FILENO));
	/* KVM statistics, sampled at every phase mark (measure/kvmstats.c). */
	for (unsigned i = 0; !r && i < f->nstats; i++)
		r = ALLOW(ctx, pread64, 1,
			  SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f->stats_fds[i]));
	r = r ?: allow_sanitizer_runtime(ctx);
	return r ?: allow_memory(ctx);
}

/*
 * What a helper thread of our own (a uffd handler, a background eager
 * thread) needs beside its work, without allow_common's output and memory:
 * its clock, the locks and signals of how a run ends, and its own exit.
 */
static int allow_worker(scmp_filter_ctx ctx, long pid)
{
	int r = 0;

	r = r ?: ALLOW(ctx, clock_gettime, 0); /* when the vDSO cannot */
	r = r ?: ALLOW(ctx, futex, 0);	       /* a start gate; vm_finish's lock */
	r = r ?: ALLOW(ctx, getpid, 0);	       /* vm_finish kicks vCPUs, wakes main */
	r = r ?: ALLOW(ctx, tgkill, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)pid));
	r = r ?: ALLOW(ctx, rt_sigreturn, 0);	/* a kick signal that lands here */
	r = r ?: ALLOW(ctx, rt_sigprocmask, 0); /* glibc thread exit */
	/* glibc returns a finished thread's stack with MADV_DONTNEED. */
	r = r ?: ALLOW(ctx, madvise, 1, SCMP_A2(SCMP_CMP_EQ, MADV_DONTNEED));
	r = r ?: ALLOW(ctx, exit, 0);
	r = r ?: ALLOW(ctx, exit_group, 0);
	r = r ?: allow_sanitizer_memory(ctx);
	return r ?: allow_sanitizer_runtime(ctx);
}

/*
 * vCPU threads run the exit handlers, the code a hostile guest drives. They
 * may run only their own vCPU and read its registers for crash reports.
 */
static int allow_vcpu(scmp_filter_ctx ctx, const struct sandbox_fds *f)
{
	static const unsigned long state_reads[] = {
		KVM_GET_FPU,   KVM_GET_XSAVE, KVM_GET_XCRS,	KVM_GET_VCPU_EVENTS,
		KVM_GET_LAPIC, KVM_GET_MSRS,  KVM_GET_MP_STATE,
	};
	/* A PC guest's platform, read by vCPU 0 at its pause point: reads only. */
	static const unsigned long pc_reads[] = { KVM_GET_IRQCHIP, KVM_GET_PIT2,
						  KVM_GET_CLOCK };
	scmp_datum_t fd = (scmp_datum_t)f->vcpu_fd;
	int r = 0;

	r = r
		    ?: ALLOW(ctx, ioctl, 2, SCMP_A0(SCMP_CMP_EQ, fd),
			     SCMP_A1(SCMP_CMP_EQ, KVM_RUN));
	r = r
		    ?: ALLOW(ctx, ioctl, 2, SCMP_A0(SCMP_CMP_EQ, fd),
			     SCMP_A1(SCMP_CMP_EQ, KVM_GET_REGS)); /* vcpu_describe */
	r = r
		    ?: ALLOW(ctx, ioctl, 2, SCMP_A0(SCMP_CMP_EQ, fd),
			     SCMP_A1(SCMP_CMP_EQ, KVM_GET_SREGS)); /* vcpu_describe */
	/* --snapshot: its own state, read at its pause point (pause.c); reads only. */
	for (size_t i = 0; !r && i < ARRAY_SIZE(state_reads); i++)
		r = ALLOW(ctx, ioctl, 2, SCMP_A0(SCMP_CMP_EQ, fd),
			  SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)state_reads[i]));
	/* A PC guest's COM1 interrupt: the line up or down, on the VM, nothing else. */
	if (f->irq_vm_fd >= 0)
		r = r
			    ?: ALLOW(ctx, ioctl, 2,
				     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f->irq_vm_fd),
				     SCMP_A1(SCMP_CMP_EQ, KVM_IRQ_LINE));
	for (size_t i = 0; f->irq_vm_fd >= 0 && !r && i < ARRAY_SIZE(pc_reads); i++)
		r = ALLOW(ctx, ioctl, 2, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f->irq_vm_fd),
			  SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)pc_reads[i]));
	return r;
}

/*
 * userfaultfd handler threads (--paging uffd) read fault events from their
 * own uffd and install pages into guest RAM through it. The events are the
 * guest's accesses, so like the vCPU threads these run what a hostile guest
 * drives; they need none of the common part: no output, no memory of their
 * own, no KVM, no other fd. Not UFFDIO_REGISTER or UFFDIO_API: a subverted
 * handler cannot take over other memory of the process.
 */
static int allow_uffd(scmp_filter_ctx ctx, const struct sandbox_fds *f, long pid)
{
	static const unsigned long reqs[] = {
		UFFDIO_COPY,	   /* MISSING: install a page of zeros */
		UFFDIO_CONTINUE,   /* MINOR: map the page-cache page */
		UFFDIO_WAKE,	   /* a fault resolved already (EEXIST); failure */
		UFFDIO_UNREGISTER, /* failure: hand the slice back to the kernel */
	};
	scmp_datum_t fd = (scmp_datum_t)f->uffd_fd;
	int r = 0;

	/* poll's fds are in memory the filter cannot see; the reads are matched. */
	r = r ?: ALLOW(ctx, poll, 0);
	r = r ?: ALLOW(ctx, read, 1, SCMP_A0(SCMP_CMP_EQ, fd)); /* fault events */
	for (size_t i = 0; !r && i < ARRAY_SIZE(reqs); i++)
		r = ALLOW(ctx, ioctl, 2, SCMP_A0(SCMP_CMP_EQ, fd),
			  SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)reqs[i]));
	r = r ?: ALLOW(ctx, clock_nanosleep, 0); /* --uffd-delay-us */
	return r ?: allow_worker(ctx, pid);
}

/*
 * Background eager threads (--eager=background) populate guest RAM while
 * the guest runs: MADV_POPULATE_WRITE, which only populates (it never
 * changes what memory holds, wherever it points), KVM_PRE_FAULT_MEMORY on
 * their own spare vCPU and nothing else of KVM, mincore (what is resident:
 * the frontier order's eyes). They drive no device and read no guest data,
 * yet share the process with code a hostile guest drives: nothing more; no
 * output, no memory of their own, no other fd. (The programs are built at
 * compile time with 32-bit values patched in: an address range of guest RAM
 * is not one of them, and populating is harmless anywhere.)
 */
static int allow_eager(scmp_filter_ctx ctx, const struct sandbox_fds *f, long pid)
{
	int r = 0;

	r = r ?: ALLOW(ctx, madvise, 1, SCMP_A2(SCMP_CMP_EQ, MADV_POPULATE_WRITE, 0));
	r = r
		    ?: ALLOW(ctx, ioctl, 2,
			     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f->prefault_fd, 0),
			     SCMP_A1(SCMP_CMP_EQ, KVM_PRE_FAULT_MEMORY, 0));
	r = r ?: ALLOW(ctx, mincore, 0); /* --eager-order frontier: where the guest is */
	r = r ?: ALLOW(ctx, getcpu, 0);	 /* --numa: where it ran (sched_getcpu) */
	r = r ?: ALLOW(ctx, sched_yield, 0); /* glibc lock back-off */
	return r ?: allow_worker(ctx, pid);
}

/*
 * Filler threads (--restore-mode background and replay) copy the snapshot's
 * memory file into guest RAM ahead of the guest's faults: pread of that file,
 * UFFDIO_COPY through the handlers' uffds (which own the slices), nothing
 * else of the uffds (no REGISTER, no WAKE: a racing fault is the handler's).
 * The data is the snapshot's, written by a guest: no output, no memory of
 * their own (their buffers are mapped and unmapped by the main thread), no
 * other fd.
 */
static int allow_fill(scmp_filter_ctx ctx, const struct sandbox_fds *f, long pid)
{
	int r = 0;

	r = r ?: ALLOW(ctx, pread64, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f->file_fd));
	for (unsigned i = 0; !r && i < f->nfill_uffds; i++)
		r = ALLOW(ctx, ioctl, 2,
			  SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f->fill_uffds[i]),
			  SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)UFFDIO_COPY));
	r = r ?: ALLOW(ctx, sched_yield, 0); /* glibc lock back-off */
	return r ?: allow_worker(ctx, pid);
}

/*
 * The main thread waits for the end, draws progress, and at the end writes
 * the results to files opened before the filter and tears the VM down.
 */
static int allow_main(scmp_filter_ctx ctx, const struct sandbox_fds *f)
{
	int r = 0;

	r = r
		    ?: ALLOW(ctx, rt_sigtimedwait,
			     0);	      /* vm_wait_main: the end, eager, signals */
	r = r ?: ALLOW(ctx, rt_sigaction, 0); /* the second-SIGINT handler */
	r = r ?: ALLOW(ctx, mincore, 0);      /* eager: what is resident afterwards */
	r = r ?: ALLOW(ctx, poll, 0); /* has stdout's reader gone? (its fds: in memory) */
	/*
	 * --numa's audit: move_pages of this process (pid 0) with no target
	 * nodes (nodes == NULL) only asks where pages are; nothing can move.
	 */
	r = r
		    ?: ALLOW(ctx, move_pages, 2, SCMP_A0(SCMP_CMP_EQ, 0),
			     SCMP_A3(SCMP_CMP_EQ, 0));
	r = r ?: ALLOW(ctx, close, 0); /* teardown */
	r = r ?: ALLOW(ctx, lseek, 0); /* stdio; rewinddir for --compare's count */
	r = r
		    ?: ALLOW(ctx, getdents64,
			     0); /* --compare: /proc/self/{fd,task}, opened earlier */
	for (int i = 0; !r && i < f->nout; i++) {
		scmp_datum_t fd = (scmp_datum_t)f->out_fds[i];

		r = r
			    ?: ALLOW(ctx, write, 1,
				     SCMP_A0(SCMP_CMP_EQ, fd)); /* results, trace */
		r = r ?: ALLOW(ctx, newfstatat, 1, SCMP_A0(SCMP_CMP_EQ, fd));
		r = r
			    ?: ALLOW(ctx, fsync, 1,
				     SCMP_A0(SCMP_CMP_EQ, fd)); /* before the rename */
	}
	/*
	 * The results and trace go into place at the end (vmm/run/output.c): an
	 * O_TMPFILE linked to its temporary name, renamed over the target, the
	 * directory synced; a temporary removed on failure or the second
	 * SIGINT. Only relative to the directories opened before: a path the
	 * filter cannot see could still be absolute, and the main thread shares
	 * its memory with the threads a hostile guest drives.
	 */
	for (int i = 0; !r && i < f->ndirs; i++) {
		scmp_datum_t d = (scmp_datum_t)f->dir_fds[i];

		r = r
			    ?: ALLOW(ctx, linkat, 3,
				     /* an int: the register's upper half is not the kernel's */
				     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu,
					     (uint32_t)AT_FDCWD),
				     SCMP_A2(SCMP_CMP_EQ, d),
				     SCMP_A4(SCMP_CMP_EQ, AT_SYMLINK_FOLLOW));
		r = r
			    ?: ALLOW(ctx, renameat, 2, SCMP_A0(SCMP_CMP_EQ, d),
				     SCMP_A2(SCMP_CMP_EQ, d));
		r = r
			    ?: ALLOW(ctx, unlinkat, 2, SCMP_A0(SCMP_CMP_EQ, d),
				     SCMP_A2(SCMP_CMP_EQ, 0));
		r = r ?: ALLOW(ctx, fsync, 1, SCMP_A0(SCMP_CMP_EQ, d));
	}
	return r;
}

/*
 * The main thread of a --snapshot run: main's calls, and the snapshot's
 * writer's on the files and directories opened before the guest ran. The
 * vCPUs' state is read by their own threads: no KVM call here either.
 */
static int allow_saver(scmp_filter_ctx ctx, const struct sandbox_fds *f)
{
	const scmp_datum_t state = (scmp_datum_t)f->snap_state_fd,
			   mem = (scmp_datum_t)f->snap_mem_fd,
			   tmp = (scmp_datum_t)f->snap_tmp_fd,
			   parent = (scmp_datum_t)f->snap_parent_fd,
			   pagemap = (scmp_datum_t)f->snap_pagemap_fd,
			   ram = (scmp_datum_t)f->snap_ram_fd;
	int r = allow_main(ctx, f);

	r = r ?: ALLOW(ctx, write, 1, SCMP_A0(SCMP_CMP_EQ, state));   /* the state file */
	r = r ?: ALLOW(ctx, ftruncate, 1, SCMP_A0(SCMP_CMP_EQ, mem)); /* RAM's size */
	r = r ?: ALLOW(ctx, pwrite64, 1, SCMP_A0(SCMP_CMP_EQ, mem));  /* RAM's data */
	r = r ?: ALLOW(ctx, fsync, 1, SCMP_A0(SCMP_CMP_EQ, state));
	r = r ?: ALLOW(ctx, fsync, 1, SCMP_A0(SCMP_CMP_EQ, mem));
	r = r ?: ALLOW(ctx, fsync, 1, SCMP_A0(SCMP_CMP_EQ, tmp));
	r = r ?: ALLOW(ctx, fsync, 1, SCMP_A0(SCMP_CMP_EQ, parent));
	/* Which pages hold data: anonymous RAM's pagemap, RAM's own file (evicted pages too). */
	r = r ?: ALLOW(ctx, pread64, 1, SCMP_A0(SCMP_CMP_EQ, pagemap));
	r = r ?: ALLOW(ctx, pread64, 1, SCMP_A0(SCMP_CMP_EQ, ram));
	/*
	 * The temporary renamed to the snapshot's name, beside it: renameat2
	 * with RENAME_NOREPLACE, or where the file system lacks it (9p, NFS)
	 * NAME claimed with mkdirat and the temporary renamed over that.
	 */
	r = r
		    ?: ALLOW(ctx, renameat2, 3, SCMP_A0(SCMP_CMP_EQ, parent),
			     SCMP_A2(SCMP_CMP_EQ, parent),
			     SCMP_A4(SCMP_CMP_EQ, RENAME_NOREPLACE));
	r = r ?: ALLOW(ctx, mkdirat, 1, SCMP_A0(SCMP_CMP_EQ, parent));
	r = r
		    ?: ALLOW(ctx, renameat, 2, SCMP_A0(SCMP_CMP_EQ, parent),
			     SCMP_A2(SCMP_CMP_EQ, parent));
	/* A failed or interrupted save: its files, then the empty temporary, go. */
	r = r
		    ?: ALLOW(ctx, unlinkat, 2, SCMP_A0(SCMP_CMP_EQ, tmp),
			     SCMP_A2(SCMP_CMP_EQ, 0));
	return r
		       ?: ALLOW(ctx, unlinkat, 2, SCMP_A0(SCMP_CMP_EQ, parent),
				SCMP_A2(SCMP_CMP_EQ, AT_REMOVEDIR));
}

/*
 * Each role's allowlist, as the table below names it: scripts/sandbox-table
 * reads these functions and this table (every ALLOW and every allow_* call,
 * sanitizer rules aside) to write docs/sandbox-roles.md.
 */
static int role_main(scmp_filter_ctx ctx, const struct sandbox_fds *f, long pid)
{
	return allow_common(ctx, f, pid) ?: allow_main(ctx, f);
}

static int role_vcpu(scmp_filter_ctx ctx, const struct sandbox_fds *f, long pid)
{
	return allow_common(ctx, f, pid) ?: allow_vcpu(ctx, f);
}

static int role_saver(scmp_filter_ctx ctx, const struct sandbox_fds *f, long pid)
{
	return allow_common(ctx, f, pid) ?: allow_saver(ctx, f);
}

typedef int (*role_rules)(scmp_filter_ctx ctx, const struct sandbox_fds *f, long pid);
static const role_rules roles[SANDBOX_ROLES] = {
	[SANDBOX_MAIN] = role_main,  [SANDBOX_VCPU] = role_vcpu,
	[SANDBOX_UFFD] = allow_uffd, [SANDBOX_EAGER] = allow_eager,
	[SANDBOX_FILL] = allow_fill, [SANDBOX_SAVER] = role_saver,
};

int sandbox_rules(enum sandbox_role role, const struct sandbox_fds *f, long pid,
		  void **out)
{
	scmp_filter_ctx ctx;
	int r;

	if ((unsigned)role >= SANDBOX_ROLES)
		return -EINVAL;
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	/*
	 * A binary tree over the syscall numbers, not libseccomp's default chain:
	 * loading the filter, the kernel runs it for every syscall number to
	 * find the ones it always allows (its cache), and each run walks the
	 * chain; on this machine that was most of the ~140 us a vCPU thread
	 * spent in seccomp(2) on its way to KVM_RUN. Every syscall is faster too.
	 */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r) {
		seccomp_release(ctx);
		return r;
	}
	r = roles[role](ctx, f, pid);
	if (r) {
		seccomp_release(ctx);
		return r < 0 ? r : -EINVAL;
	}
	*out = ctx;
	return 0;
}

const char *sandbox_role_name(enum sandbox_role role)
{
	static const char *const names[SANDBOX_ROLES] = {
		[SANDBOX_MAIN] = "main", [SANDBOX_VCPU] = "vcpu",
		[SANDBOX_UFFD] = "uffd", [SANDBOX_EAGER] = "eager",
		[SANDBOX_FILL] = "fill", [SANDBOX_SAVER] = "saver",
	};

	return (unsigned)role < SANDBOX_ROLES ? names[role] : NULL;
}

int sandbox_build(enum sandbox_role role, const struct sandbox_fds *f, void **out)
{
	return sandbox_rules(role, f, getpid(), out);
}
