/* Unit tests: the seccomp allowlists kill a thread's forbidden syscalls (no KVM needed). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "machine.h"

#define FAKE_VCPU_FD  900
#define FAKE_STATS_FD 901

enum action {
	DO_ALLOWED,
	DO_SOCKET,
	DO_OPEN,
	DO_CHDIR,
	DO_OTHER_VCPU,
	DO_SET_REGS,
	DO_EXEC_MMAP
};

struct job {
	enum sandbox_role role;
	enum action act;
};

/* In a child's thread: enter the sandbox, then do one thing. */
static void *sandboxed(void *arg)
{
	const struct job *j = arg;
	int stats[] = { FAKE_STATS_FD };
	struct sandbox_fds f = { .vcpu_fd = FAKE_VCPU_FD,
				 .stats_fds = stats,
				 .nstats = 1 };
	char buf[8];

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
}
