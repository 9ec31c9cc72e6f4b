/* The tests' probe of the sandbox: a thread of a named role makes a call its filter forbids. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * MINIVMM_TEST_SECCOMP_PROBE=ROLE (tests/sandbox-roles.sh): the thread says
 * so while it still may write, and once its filter is on calls socket(2),
 * which no role allows: the kernel kills the process with SIGSYS. Without
 * the variable nothing happens; with it, the run cannot succeed, so it is
 * no way around the filters.
 */
int sandbox_probe_wanted(enum sandbox_role role)
{
	const char *want = getenv("MINIVMM_TEST_SECCOMP_PROBE");
	const char *name = sandbox_role_name(role);
	char msg[160];
	int n;

	if (!want || !name || strcmp(want, name))
		return 0;
	n = snprintf(
		msg, sizeof(msg),
		"minivmm: test probe: a %s thread calls socket(2), which its seccomp filter forbids\n",
		name);
	if (n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0) {
		/* the probe runs all the same */
	}
	return 1;
}

void sandbox_probe_run(void)
{
	syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
}
