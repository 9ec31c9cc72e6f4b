/* Unit tests: the seccomp allowlists kill a thread's forbidden syscalls (no KVM needed). */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "machine.h"

#define FAKE_VCPU_FD  900
#define FAKE_STATS_FD 901
#define FAKE_UFFD_FD  902
#define FAKE_STOP_FD  903
#define FAKE_SPARE_FD 904
#define FAKE_DIR_FD   905 /* SANDBOX_MAIN: the results' directory */
#define FAKE_FILE_FD  906 /* SANDBOX_FILL: the memory file */
#define FAKE_UFFD2_FD 907 /* SANDBOX_FILL: a second handler's uffd */
#define RAM_BYTES     (2UL << 20)

enum action {
	DO_ALLOWED,
	DO_SOCKET,
	DO_OPEN,
	DO_CHDIR,
	DO_OTHER_VCPU,
	DO_SET_REGS,
	DO_EXEC_MMAP,
	DO_UFFD_ALLOWED,  /* SANDBOX_UFFD: what a handler does */
	DO_UFFD_REGISTER, /* take over more memory */
	DO_UFFD_OTHER_FD, /* a uffd ioctl on another fd */
	DO_UFFD_KVM,	  /* a KVM ioctl on the uffd's fd number */
	DO_UFFD_READ_OTHER,
	DO_UFFD_WRITE,	       /* no output at all */
	DO_UFFD_MMAP,	       /* no memory of its own */
	DO_NUMA_QUERY,	       /* --numa's audit: move_pages asking where a page is */
	DO_NUMA_MOVE,	       /* move_pages with target nodes: would move pages */
	DO_NUMA_MBIND,	       /* a memory policy after setup */
	DO_EAGER_ALLOWED,      /* SANDBOX_EAGER: populate, prefault, mincore */
	DO_EAGER_OTHER_ADVICE, /* MADV_FREE on guest RAM: it would lose the guest's data */
	DO_EAGER_RUN_SPARE,    /* KVM_RUN on the spare vCPU */
	DO_EAGER_OTHER_FD,     /* KVM_PRE_FAULT_MEMORY through another fd */
	DO_EAGER_WRITE,	       /* no output */
	DO_MAIN_RENAME, /* SANDBOX_MAIN: the results into place, in their directory */
	DO_MAIN_RENAME_OTHER, /* ... in another */
	DO_MAIN_UNLINK_CWD,   /* unlink relative to the working directory */
	DO_FILL_ALLOWED, /* SANDBOX_FILL: pread the file, UFFDIO_COPY through each uffd */
	DO_FILL_WAKE,	 /* a uffd ioctl other than UFFDIO_COPY */
	DO_FILL_READ_OTHER, /* pread of another fd */
};

struct job {
	enum sandbox_role role;
	enum action act;
};

/* SANDBOX_EAGER's stand-in for guest RAM, mapped before the filter. */
static uint8_t *eager_map(void)
{
	void *m = mmap(NULL, RAM_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return m == MAP_FAILED ? NULL : (uint8_t *)m;
}

/* In a child's thread: enter the sandbox, then do one thing. */
static void *sandboxed(void *arg)
{
	const struct job *j = arg;
	int stats[] = { FAKE_STATS_FD }, dirs[] = { FAKE_DIR_FD },
	    uffds[] = { FAKE_UFFD_FD, FAKE_UFFD2_FD };
	struct sandbox_fds f = { .vcpu_fd = FAKE_VCPU_FD,
				 .uffd_fd = FAKE_UFFD_FD,
				 .stop_fd = FAKE_STOP_FD,
				 .stats_fds = stats,
				 .nstats = 1,
				 .dir_fds = dirs,
				 .ndirs = 1,
				 .file_fd = FAKE_FILE_FD,
				 .fill_uffds = uffds,
				 .nfill_uffds = 2 };
	struct uffdio_copy copy = { 0 };
	struct pollfd pfd[2] = { { .fd = FAKE_UFFD_FD, .events = POLLIN },
				 { .fd = FAKE_STOP_FD, .events = POLLIN } };
	struct timespec ts;
	struct kvm_pre_fault_memory pre = { 0 };
	unsigned char vec[RAM_BYTES / 4096];
	uint8_t *ram = j->role == SANDBOX_EAGER ? eager_map() : NULL;
	char buf[8];
	void *page = buf;
	int node = 0, status = 0;
	unsigned long mask = 1;

	if (j->role == SANDBOX_EAGER) {
		if (!ram)
			_exit(2);
		f.prefault_fd = FAKE_SPARE_FD;
	}
	if (sandbox_enter(j->role, &f))
		_exit(3);
	switch (j->act) {
	case DO_ALLOWED:
		/* Allowed calls on closed fds fail with EBADF: the filter let them through. */
		if (j->role == SANDBOX_VCPU &&
		    (ioctl(FAKE_VCPU_FD, KVM_RUN, 0) != -1 || errno != EBADF))
			_exit(4);
		if (pread(FAKE_STATS_FD, buf, sizeof(buf), 0) != -1 || errno != EBADF)
			_exit(5);
		if (write(STDOUT_FILENO, "", 0) != 0)
			_exit(6);
		free(malloc(1 << 20)); /* malloc's mmap and munmap */
		break;
	case DO_SOCKET:
		socket(AF_INET, SOCK_STREAM, 0);
		break;
	case DO_OPEN:
		open("/etc/hostname", O_RDONLY);
		break;
	case DO_CHDIR:
		if (chdir("/"))
			_exit(7);
		break;
	case DO_OTHER_VCPU:
		ioctl(FAKE_VCPU_FD + 7, KVM_RUN, 0);
		break;
	case DO_SET_REGS:
		ioctl(FAKE_VCPU_FD, KVM_SET_REGS, buf);
		break;
	case DO_EXEC_MMAP:
		mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		     0);
		break;
	case DO_UFFD_ALLOWED:
		/* On closed fds: EBADF (poll: POLLNVAL) means the filter let them through. */
		if (poll(pfd, 2, 0) != 2 || !(pfd[0].revents & POLLNVAL))
			_exit(8);
		if (read(FAKE_UFFD_FD, buf, sizeof(buf)) != -1 || errno != EBADF)
			_exit(9);
		if (ioctl(FAKE_UFFD_FD, UFFDIO_COPY, &copy) != -1 || errno != EBADF)
			_exit(10);
		if (ioctl(FAKE_UFFD_FD, UFFDIO_WAKE, &copy) != -1 || errno != EBADF)
			_exit(11);
		if (clock_gettime(CLOCK_MONOTONIC, &ts))
			_exit(12);
		ts.tv_nsec += 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			_exit(13);
		break;
	case DO_UFFD_REGISTER:
		ioctl(FAKE_UFFD_FD, UFFDIO_REGISTER, buf);
		break;
	case DO_UFFD_OTHER_FD:
		ioctl(FAKE_UFFD_FD + 10, UFFDIO_COPY, &copy);
		break;
	case DO_UFFD_KVM:
		ioctl(FAKE_UFFD_FD, KVM_RUN, 0);
		break;
	case DO_UFFD_READ_OTHER:
		if (read(FAKE_STATS_FD, buf, sizeof(buf)) < 0)
			_exit(14);
		break;
	case DO_UFFD_WRITE:
		if (write(STDERR_FILENO, "", 0) < 0)
			_exit(15);
		break;
	case DO_UFFD_MMAP:
		mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		break;
	case DO_NUMA_QUERY:
		/* A kernel without NUMA says ENOSYS: the filter let it through either way. */
		if (syscall(SYS_move_pages, 0, 1, &page, NULL, &status, 0) &&
		    errno != ENOSYS)
			_exit(16);
		if (sched_getcpu() < 0)
			_exit(17);
		break;
	case DO_NUMA_MOVE:
		syscall(SYS_move_pages, 0, 1, &page, &node, &status, 0);
		break;
	case DO_NUMA_MBIND:
		syscall(SYS_mbind, buf, 4096, 0, &mask, 2, 0);
		break;
	case DO_EAGER_ALLOWED:
		if (madvise(ram, RAM_BYTES, MADV_POPULATE_WRITE) && errno != EINVAL)
			_exit(21); /* EINVAL: a kernel without it; the filter let it through */
		if (ioctl(FAKE_SPARE_FD, KVM_PRE_FAULT_MEMORY, &pre) != -1 ||
		    errno != EBADF)
			_exit(22);
		if (mincore(ram, RAM_BYTES, vec))
			_exit(23);
		if (clock_gettime(CLOCK_MONOTONIC, &ts))
			_exit(24);
		break;
	case DO_EAGER_OTHER_ADVICE:
		madvise(ram, RAM_BYTES, MADV_FREE);
		break;
	case DO_EAGER_RUN_SPARE:
		ioctl(FAKE_SPARE_FD, KVM_RUN, 0);
		break;
	case DO_EAGER_OTHER_FD:
		ioctl(FAKE_VCPU_FD, KVM_PRE_FAULT_MEMORY, &pre);
		break;
	case DO_EAGER_WRITE:
		if (write(STDOUT_FILENO, "", 0) < 0)
			_exit(25);
		break;
	case DO_MAIN_RENAME:
		/* On a closed fd: EBADF means the filter let them through. */
		if (renameat(FAKE_DIR_FD, "a", FAKE_DIR_FD, "b") != -1 || errno != EBADF)
			_exit(26);
		if (linkat(AT_FDCWD, "/proc/self/fd/0", FAKE_DIR_FD, "a",
			   AT_SYMLINK_FOLLOW) != -1 ||
		    errno != EBADF)
			_exit(27);
		if (unlinkat(FAKE_DIR_FD, "a", 0) != -1 || errno != EBADF)
			_exit(28);
		if (fsync(FAKE_DIR_FD) != -1 || errno != EBADF)
			_exit(29);
		break;
	case DO_MAIN_RENAME_OTHER:
		renameat(FAKE_DIR_FD + 1, "a", FAKE_DIR_FD, "b");
		break;
	case DO_MAIN_UNLINK_CWD:
		unlinkat(AT_FDCWD, "a", 0);
		break;
	case DO_FILL_ALLOWED:
		/* On closed fds: EBADF means the filter let them through. */
		if (pread(FAKE_FILE_FD, buf, sizeof(buf), 0) != -1 || errno != EBADF)
			_exit(30);
		if (ioctl(FAKE_UFFD_FD, UFFDIO_COPY, &copy) != -1 || errno != EBADF)
			_exit(31);
		if (ioctl(FAKE_UFFD2_FD, UFFDIO_COPY, &copy) != -1 || errno != EBADF)
			_exit(32);
		if (clock_gettime(CLOCK_MONOTONIC, &ts))
			_exit(33);
		break;
	case DO_FILL_WAKE:
		ioctl(FAKE_UFFD_FD, UFFDIO_WAKE, &copy);
		break;
	case DO_FILL_READ_OTHER:
		pread(FAKE_STATS_FD, buf, sizeof(buf), 0);
		break;
	}
	return NULL;
}

/* Run the job in a child process; return its wait status. */
static int in_child(enum sandbox_role role, enum action act)
{
	struct job j = { role, act };
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, sandboxed, &j))
			_exit(2);
		pthread_join(t, NULL);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return st;
}

static int killed_by_sigsys(int st)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS;
}

void test_sandbox(void)
{
	int st;

	fflush(NULL);
	st = in_child(SANDBOX_VCPU, DO_ALLOWED);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = in_child(SANDBOX_MAIN, DO_ALLOWED);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_SOCKET)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_CHDIR)));
#ifndef MINIVMM_SANITIZE /* the sanitizer runtime needs open(2) to report */
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_OPEN)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_MAIN, DO_OPEN)));
#endif
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_OTHER_VCPU)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_SET_REGS)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_EXEC_MMAP)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_MAIN, DO_CHDIR)));
	/* The main thread may make no KVM ioctl at all. */
	CHECK(killed_by_sigsys(in_child(SANDBOX_MAIN, DO_SET_REGS)));
	/* It puts the results into place in their directory, and nowhere else. */
	st = in_child(SANDBOX_MAIN, DO_MAIN_RENAME);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(killed_by_sigsys(in_child(SANDBOX_MAIN, DO_MAIN_RENAME_OTHER)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_MAIN, DO_MAIN_UNLINK_CWD)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_MAIN_RENAME)));
	/* --numa: the main thread may ask where pages are, never move or bind them. */
	st = in_child(SANDBOX_MAIN, DO_NUMA_QUERY);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(killed_by_sigsys(in_child(SANDBOX_MAIN, DO_NUMA_MOVE)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_MAIN, DO_NUMA_MBIND)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_NUMA_QUERY)));
	/* userfaultfd handlers: their uffd's page ioctls, poll, the clock, and nothing else. */
	st = in_child(SANDBOX_UFFD, DO_UFFD_ALLOWED);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(killed_by_sigsys(in_child(SANDBOX_UFFD, DO_UFFD_REGISTER)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_UFFD, DO_UFFD_OTHER_FD)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_UFFD, DO_UFFD_KVM)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_UFFD, DO_SOCKET)));
#ifndef MINIVMM_SANITIZE /* the sanitizer runtime reads, writes, maps and opens */
	CHECK(killed_by_sigsys(in_child(SANDBOX_UFFD, DO_UFFD_READ_OTHER)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_UFFD, DO_UFFD_WRITE)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_UFFD, DO_UFFD_MMAP)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_UFFD, DO_OPEN)));
#endif
	/* Background eager threads: populate guest RAM, prefault through their spare, and no more. */
	st = in_child(SANDBOX_EAGER, DO_EAGER_ALLOWED);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(killed_by_sigsys(in_child(SANDBOX_EAGER, DO_EAGER_RUN_SPARE)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_EAGER, DO_EAGER_OTHER_FD)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_EAGER, DO_SOCKET)));
#ifndef MINIVMM_SANITIZE /* the sanitizer runtime reads, writes, maps, opens, madvises */
	CHECK(killed_by_sigsys(in_child(SANDBOX_EAGER, DO_EAGER_OTHER_ADVICE)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_EAGER, DO_EAGER_WRITE)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_EAGER, DO_UFFD_MMAP)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_EAGER, DO_OPEN)));
#endif
	/* Filler threads: the memory file's reads and UFFDIO_COPY through the uffds named, no more. */
	st = in_child(SANDBOX_FILL, DO_FILL_ALLOWED);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_FILL_WAKE)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_UFFD_REGISTER)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_UFFD_OTHER_FD)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_UFFD_KVM)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_SOCKET)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_VCPU, DO_FILL_ALLOWED)));
#ifndef MINIVMM_SANITIZE /* the sanitizer runtime reads, writes, maps and opens */
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_FILL_READ_OTHER)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_UFFD_WRITE)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_UFFD_MMAP)));
	CHECK(killed_by_sigsys(in_child(SANDBOX_FILL, DO_OPEN)));
#endif
}
