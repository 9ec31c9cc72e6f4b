/*
 * Loading the sandbox: the seccomp programs built at compile time from
 * sandbox.c's rules, with this run's fds and pid patched in. Nothing here
 * allocates or calls libseccomp: a vCPU thread goes from its creation to
 * KVM_RUN with two system calls for its filter (Firecracker loads filters
 * compiled ahead of time the same way, seccompiler's BPF).
 */
#include "internal.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int put_fds(uint32_t *values, unsigned first, unsigned slots, const int *fds,
		   unsigned n)
{
	if (n > slots)
		return -E2BIG;
	for (unsigned i = 0; i < slots; i++)
		values[first + i] = i < n ? (uint32_t)fds[i] : SANDBOX_NO_FD;
	return 0;
}

int sandbox_slot_values(enum sandbox_role role, const struct sandbox_fds *f, long pid,
			uint32_t values[SLOT_COUNT])
{
	int saver = role == SANDBOX_SAVER, main_like = role == SANDBOX_MAIN || saver, r;

	values[SLOT_PID] = (uint32_t)pid;
	values[SLOT_VCPU] = role == SANDBOX_VCPU ? (uint32_t)f->vcpu_fd : SANDBOX_NO_FD;
	values[SLOT_UFFD] = role == SANDBOX_UFFD ? (uint32_t)f->uffd_fd : SANDBOX_NO_FD;
	/* Background eager without a spare (populate): the rule matches no fd. */
	values[SLOT_VM] = role == SANDBOX_VCPU && f->irq_vm_fd >= 0
				  ? (uint32_t)f->irq_vm_fd
				  : SANDBOX_NO_FD;
	values[SLOT_SPARE] = role == SANDBOX_EAGER && f->prefault_fd >= 0
				     ? (uint32_t)f->prefault_fd
				     : SANDBOX_NO_FD;
	values[SLOT_FILE] = role == SANDBOX_FILL ? (uint32_t)f->file_fd : SANDBOX_NO_FD;
	values[SLOT_SNAP_STATE] = saver ? (uint32_t)f->snap_state_fd : SANDBOX_NO_FD;
	values[SLOT_SNAP_MEM] = saver ? (uint32_t)f->snap_mem_fd : SANDBOX_NO_FD;
	values[SLOT_SNAP_TMP] = saver ? (uint32_t)f->snap_tmp_fd : SANDBOX_NO_FD;
	values[SLOT_SNAP_PARENT] = saver ? (uint32_t)f->snap_parent_fd : SANDBOX_NO_FD;
	values[SLOT_SNAP_PAGEMAP] = saver && f->snap_pagemap_fd >= 0
					    ? (uint32_t)f->snap_pagemap_fd
					    : SANDBOX_NO_FD;
	values[SLOT_SNAP_RAM] =
		saver && f->snap_ram_fd >= 0 ? (uint32_t)f->snap_ram_fd : SANDBOX_NO_FD;
	r = put_fds(values, SLOT_FILL_UFFDS, SANDBOX_MAX_FILL_UFFDS, f->fill_uffds,
		    role == SANDBOX_FILL ? f->nfill_uffds : 0);
	r = r
		    ?: put_fds(values, SLOT_STATS, SANDBOX_MAX_STATS, f->stats_fds,
			       role == SANDBOX_UFFD || role == SANDBOX_EAGER ||
					       role == SANDBOX_FILL
				       ? 0
				       : f->nstats);
	r = r
		    ?: put_fds(values, SLOT_OUT, SANDBOX_MAX_OUT, f->out_fds,
			       main_like && f->nout > 0 ? (unsigned)f->nout : 0);
	return r
		       ?: put_fds(values, SLOT_DIR, SANDBOX_MAX_DIRS, f->dir_fds,
				  main_like && f->ndirs > 0 ? (unsigned)f->ndirs : 0);
}

int sandbox_program(enum sandbox_role role, const struct sandbox_fds *f,
		    struct sock_filter *prog, unsigned cap)
{
	const struct sandbox_template *t;
	uint32_t values[SLOT_COUNT];
	int r;

	if ((unsigned)role >= SANDBOX_ROLES)
		return -EINVAL;
	/* A fuzz build compiles the machine with other flags than the programs were built with. */
	if (sandbox_templates_sanitizer_rules != SANDBOX_SANITIZER_RULES)
		return -ENOTSUP;
	t = &sandbox_templates[role];
	if (t->len > cap)
		return -ENOSPC;
	r = sandbox_slot_values(role, f, getpid(), values);
	if (r)
		return r;
	memcpy(prog, t->insns, t->len * sizeof(*prog));
	for (unsigned i = 0; i < t->npatches; i++)
		prog[t->patches[i].insn].k = values[t->patches[i].slot];
	return (int)t->len;
}

/* More fds than slots (a run with more vCPUs than SANDBOX_MAX_STATS - 1): built now. */
static int load_built(enum sandbox_role role, const struct sandbox_fds *f)
{
	void *ctx;
	int r = sandbox_build(role, f, &ctx);

	if (r)
		return r;
	r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

static int load(enum sandbox_role role, const struct sandbox_fds *f)
{
	/* Its own size (the generator kept it within BPF_MAXINSNS): a few stack pages, not 32 KiB. */
	unsigned len = (unsigned)role < SANDBOX_ROLES ? sandbox_templates[role].len : 1;
	struct sock_filter prog[len];
	struct sock_fprog fp = { .filter = prog };
	int n = sandbox_program(role, f, prog, len);

	if (n == -E2BIG || n == -ENOTSUP)
		return load_built(role, f);
	if (n < 0)
		return n;
	fp.len = (unsigned short)n;
	/* What seccomp_load does by default: no new privileges, then the filter. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp))
		return -errno;
	return 0;
}

int sandbox_enter(enum sandbox_role role, const struct sandbox_fds *f)
{
	int probe = sandbox_probe_wanted(role), r = load(role, f);

	if (!r && probe)
		sandbox_probe_run();
	return r;
}
