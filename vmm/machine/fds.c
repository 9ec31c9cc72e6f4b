/* The file descriptors a VM's vCPUs hold, against RLIMIT_NOFILE: checked, and the soft limit raised, before any vCPU exists. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>

/* Without /proc: each fd below the soft limit looked at, up to this many. */
#define FD_PROBE_MAX 65536

uint64_t vm_fds_needed(unsigned vcpus, unsigned spares, int stats_fd, uint64_t open_now)
{
	uint64_t per_vcpu = VM_FDS_PER_VCPU - (stats_fd ? 0 : 1);

	return open_now + per_vcpu * vcpus + VM_FDS_PER_SPARE * (uint64_t)spares +
	       VM_FDS_RESERVE;
}

int vm_fds_fit(unsigned vcpus, unsigned spares, int stats_fd, uint64_t open_now,
	       uint64_t soft, uint64_t hard, char *err, size_t errlen)
{
	uint64_t need = vm_fds_needed(vcpus, spares, stats_fd, open_now);
	char spare[96] = "";

	if (need <= soft)
		return 0;
	if (need <= hard)
		return 1;
	if (spares)
		snprintf(spare, sizeof(spare),
			 ", 1 per spare vCPU of --eager=background:prefault (%u)",
			 spares);
	snprintf(
		err, errlen,
		"--vcpus %u: needs %llu open files (%u per vCPU%s, %llu open now, %d for the rest of the run) and RLIMIT_NOFILE allows %llu (hard limit %llu): raise it with ulimit -n %llu (past the hard limit needs root, or LimitNOFILE= for a service), or use fewer vCPUs",
		vcpus, (unsigned long long)need, VM_FDS_PER_VCPU - (stats_fd ? 0 : 1),
		spare, (unsigned long long)open_now, VM_FDS_RESERVE,
		(unsigned long long)soft, (unsigned long long)hard,
		(unsigned long long)need);
	return -EMFILE;
}

/* The fds open now (the one reading /proc/self/fd left out). */
static uint64_t open_fds(uint64_t soft)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t n = 0;

	if (d) {
		while ((e = readdir(d)))
			n += e->d_name[0] != '.';
		closedir(d);
		return n ? n - 1 : 0;
	}
	for (uint64_t fd = 0; fd < soft && fd < FD_PROBE_MAX; fd++)
		n += fcntl((int)fd, F_GETFD) >= 0;
	return n;
}

int vm_fds_reserve(const struct vm *vm, const struct vm_config *cfg, char *err,
		   size_t errlen)
{
	struct rlimit l;
	int r;

	if (getrlimit(RLIMIT_NOFILE, &l)) {
		r = -errno;
		snprintf(err, errlen, "getrlimit(RLIMIT_NOFILE): %s", strerror(-r));
		return r;
	}
	r = vm_fds_fit(cfg->vcpus, eager_spare_vcpus_at_most(cfg, vm), vm->plat.stats_fd,
		       open_fds(l.rlim_cur), l.rlim_cur, l.rlim_max, err, errlen);
	if (r <= 0)
		return r;
	/* The hard limit is the user's to give: taking all of it costs nothing until used. */
	l.rlim_cur = l.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &l)) {
		r = -errno;
		snprintf(err, errlen,
			 "setrlimit(RLIMIT_NOFILE) to the hard limit %llu: %s",
			 (unsigned long long)l.rlim_max, strerror(-r));
		return r;
	}
	return 0;
}
