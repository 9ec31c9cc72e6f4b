/* Where /dev/kvm is missing: the line that runs this same minivmm command in an emulated KVM host. */
#include "cli.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

/* Up to this much guest RAM the emulated host's own default RAM holds it ... */
#define EMU_HOST_DEFAULT_GUEST_MIB 1024
/* ... beyond, guest RAM and this for the emulated host's kernel and tools (as scripts/run-experiment asks). */
#define EMU_HOST_SPARE_MIB 2048

/*
 * scripts/emu-host in the directory of the minivmm that runs, as the user
 * would type it: beside argv0 as typed ("./minivmm": scripts/emu-host), or,
 * for a minivmm found on PATH, beside /proc/self/exe. NULL when it has none.
 */
static const char *script_beside(const char *argv0, char *buf, size_t len)
{
	const char *slash = strrchr(argv0, '/');
	char exe[PATH_MAX];
	ssize_t n;
	int k;

	if (slash && slash == argv0 + 1 && argv0[0] == '.') {
		k = snprintf(buf, len, "scripts/emu-host");
	} else if (slash) {
		k = snprintf(buf, len, "%.*s/scripts/emu-host", (int)(slash - argv0),
			     argv0);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return NULL;
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0'; /* an absolute path: it has one */
		k = snprintf(buf, len, "%s/scripts/emu-host", exe);
	}
	return k > 0 && (size_t)k < len && access(buf, X_OK) == 0 ? buf : NULL;
}

const char *emu_host_hint(const struct config *cfg, char *buf, size_t len)
{
	const char *argv0 = cfg->argc > 0 ? cfg->argv[0] : "minivmm";
	unsigned long long mib = cfg->vm.mem_bytes >> 20;
	char script[PATH_MAX], line[KVM_ERR_BYTES];
	const char *s = script_beside(argv0, script, sizeof(script));

	mib = mib > EMU_HOST_DEFAULT_GUEST_MIB ? mib + EMU_HOST_SPARE_MIB : 0;
	if (!suggest_emu_host(line, sizeof(line), s, (unsigned)mib,
			      (const char *const *)cfg->argv, cfg->argc) &&
	    snprintf(line, sizeof(line), "%s -- %s with this command's arguments",
		     s ? s : "scripts/emu-host",
		     s ? argv0 : "./minivmm") >= (int)sizeof(line))
		snprintf(line, sizeof(line), "scripts/emu-host -- this command");
	if (snprintf(buf, len, ". Run the same line in an emulated KVM host%s: %s",
		     s ? "" : ", from a minivmm checkout", line) >= (int)len)
		snprintf(buf, len, ". Run it in an emulated KVM host: scripts/emu-host");
	return buf;
}
