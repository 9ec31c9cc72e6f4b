/* The Linux guest's /init: marks init_start, runs the workload after `--`, ends the VM with its status. */
#include "cmdline.h"
#include "mvm.h"
#include "workloads.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A workload killed by signal S ends as a shell's 128 + S. */
#define SIGNAL_STATUS_BASE 128
#define CMDLINE_BYTES	   4096 /* the kernel's COMMAND_LINE_SIZE on x86 is 2048 */
#define MAX_ARGS	   64	/* MVM_MAX_GUEST_ARGS: what minivmm passes after -- */

/* /proc (pagemap) and /dev (the console: the initramfs has no device nodes). */
static void mount_fs(void)
{
	mkdir("/proc", 0555);
	if (mount("proc", "/proc", "proc", 0, NULL) && errno != EBUSY)
		fprintf(stderr, "init: mount /proc: %s\n", strerror(errno));
	mkdir("/dev", 0755);
	if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) && errno != EBUSY)
		fprintf(stderr, "init: mount /dev: %s\n", strerror(errno));
}

/* fds 0, 1, 2 on /dev/console when the kernel could not open it for us. */
static void open_console(void)
{
	int fd;

	if (fcntl(1, F_GETFD) >= 0)
		return;
	fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return;
	for (int i = 0; i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

/*
 * The workload's arguments: the words after the first "--" of
 * /proc/cmdline, which minivmm appends, split and unquoted as the kernel
 * does (cmdline.c: "two words" is one argument). The kernel's argv for
 * /init is not used when the command line has them: it also holds every
 * word before `--` the kernel did not know (a --cmdline's typo would become
 * the workload's name), and the kernel drops what follows a second "--".
 * NULL when there is no "--" or nothing after it (then /init's own argv).
 */
static char **cmdline_args(void)
{
	static char buf[CMDLINE_BYTES];
	static char *args[MAX_ARGS + 1];
	size_t len;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return NULL;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = 0;
	return lx_cmdline_args(buf, args, MAX_ARGS) > 0 ? args : NULL;
}

static int run(const struct lx_workload *w, char **argv)
{
	int st;
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "init: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execv(w->path, argv);
		fprintf(stderr, "init: %s: %s\n", w->path, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "init: waitpid: %s\n", strerror(errno));
			return 1;
		}
	if (WIFSIGNALED(st)) {
		printf("init: workload %s killed by signal %d (%s)\n", w->name,
		       WTERMSIG(st), strsignal(WTERMSIG(st)));
		return SIGNAL_STATUS_BASE + WTERMSIG(st);
	}
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	static char *dflt[] = { "sweep", NULL };
	char **wargv;
	const struct lx_workload *w;
	FILE *con;
	int status;

	/* Port I/O and reboot(2) are for a guest's PID 1: never on a host by mistake. */
	if (getpid() != 1) {
		fprintf(stderr,
			"init: the Linux guest's /init runs as PID 1 in a minivmm guest only\n");
		return MVM_EXIT_USAGE;
	}
	mvm_boot_timer(); /* first: init_start is when /init began */
	mount_fs();
	open_console();
	wargv = cmdline_args();
	if (!wargv)
		wargv = argc > 1 ? argv + 1 : dflt;
	setenv(MVM_ENV_GUEST, "1", 1);
	if (mvm_open() != 1) {
		fprintf(stderr, "init: cannot report to minivmm; powering off\n");
		reboot(RB_POWER_OFF);
		return 1;
	}
	con = mvm_console_file();
	if (con) {
		setvbuf(con, NULL, _IOLBF, 0);
		stdout = con;
	}
	w = lx_workload_find(wargv[0]);
	if (!w) {
		lx_workload_list(stdout);
		printf("init: unknown workload '%s' (the list above)\n", wargv[0]);
		status = MVM_EXIT_USAGE;
	} else {
		fflush(stdout);
		status = run(w, wargv);
	}
	fflush(stdout);
	mvm_exit(status);
	reboot(RB_POWER_OFF); /* not reached under minivmm */
	return status;
}
