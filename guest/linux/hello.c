/* hello: what the Linux guest's kernel says about the machine, then the status asked for. */
#include "mvm.h"
#include "workloads.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MIB	   (1UL << 20)
#define STATUS_MAX 255

/* hello's arguments: none, or --exit N (0..255). 0 and *status set, or -1 with a message. */
static int parse(int argc, char **argv, int *status)
{
	*status = 0;
	for (int i = 1; i < argc; i++) {
		char *end;
		long v;

		if (strcmp(argv[i], "--exit") || i + 1 == argc) {
			fprintf(stderr,
				"hello: unexpected argument '%s' (usage: hello [--exit N])\n",
				argv[i]);
			return -1;
		}
		errno = 0;
		v = strtol(argv[++i], &end, 10);
		if (errno || end == argv[i] || *end || v < 0 || v > STATUS_MAX) {
			fprintf(stderr, "hello: --exit: '%s' is not a status 0..%d\n",
				argv[i], STATUS_MAX);
			return -1;
		}
		*status = (int)v;
	}
	return 0;
}

static void show_file(const char *label, const char *path)
{
	char buf[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f))
		printf("%s: %s%s", label, buf, strchr(buf, '\n') ? "" : "\n");
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	struct utsname u;
	struct sysinfo si;
	int status;
	FILE *con;

	if (mvm_open() < 0)
		return 1;
	con = mvm_console_file();
	if (con)
		stdout = con;
	if (!strcmp(name, "help")) {
		lx_workload_list(stdout);
		return 0;
	}
	if (parse(argc, argv, &status))
		return MVM_EXIT_USAGE;
	mvm_mark(MVM_MARK_WORKLOAD_START);
	if (uname(&u) == 0)
		printf("hello from Linux %s (%s)\n", u.release, u.machine);
	show_file("kernel command line", "/proc/cmdline");
	if (sysinfo(&si) == 0)
		printf("RAM %lu MiB, %lu MiB free; CPUs online %ld\n",
		       (unsigned long)(si.totalram * si.mem_unit / MIB),
		       (unsigned long)(si.freeram * si.mem_unit / MIB),
		       sysconf(_SC_NPROCESSORS_ONLN));
	printf("arguments:");
	for (int i = 0; i < argc; i++)
		printf(" '%s'", argv[i]);
	printf("\nreporting to minivmm: %s\n", mvm_active() ? "yes" : "no");
	fflush(stdout);
	mvm_mark(MVM_MARK_WORKLOAD_END);
	return status;
}
