/*
 * Runs one command and reports how long it took as its parent sees it: from
 * just before fork to the moment wait4 reaped it (CLOCK_MONOTONIC), so the
 * child's exit, address-space teardown included, is inside.
 *   run-timed [-o FILE] -- COMMAND [ARGS...]
 * Writes "wall_s<TAB>status<TAB>maxrss_kib<TAB>minor_faults" to FILE (default
 * stderr), where status is the exit status, or 128 + the signal that killed
 * it, and minor_faults the page faults the command took (its whole tree). Exits 0 when
 * the command ran (whatever its status), 127 when it could not be started.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC 1e9
#define EXEC_FAILED  127

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / NSEC_PER_SEC;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	struct rusage ru;
	double t0, t1;
	int i = 1, status, code;
	FILE *f;
	pid_t pid;

	if (i + 1 < argc && !strcmp(argv[i], "-o")) {
		out = argv[i + 1];
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: run-timed [-o FILE] -- COMMAND [ARGS...]\n");
		return 2;
	}
	t0 = now_s();
	pid = fork();
	if (pid < 0) {
		perror("run-timed: fork");
		return EXEC_FAILED;
	}
	if (pid == 0) {
		execvp(argv[i], &argv[i]);
		fprintf(stderr, "run-timed: %s: %s\n", argv[i], strerror(errno));
		_exit(EXEC_FAILED);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("run-timed: wait4");
			return EXEC_FAILED;
		}
	}
	t1 = now_s();
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (WIFEXITED(status) && code == EXEC_FAILED)
		return EXEC_FAILED;
	f = out ? fopen(out, "w") : stderr;
	if (!f) {
		fprintf(stderr, "run-timed: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(f, "%.9f\t%d\t%ld\t%ld\n", t1 - t0, code, ru.ru_maxrss, ru.ru_minflt);
	if (out && fclose(f)) {
		fprintf(stderr, "run-timed: %s: %s\n", out, strerror(errno));
		return 1;
	}
	return 0;
}
