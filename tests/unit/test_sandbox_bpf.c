/*
 * Unit tests: the seccomp programs built at compile time, with a run's values
 * patched in, decide every probed system call exactly as libseccomp's program
 * built at run time for the same values does (both run in a small cBPF
 * interpreter here, no kernel involved); runs with more fds than slots load the
 * run-time build instead.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"

#define PROBE_NR_MAX 460 /* past every x86-64 system call number in use */

/* The kernel's verdict for d: the cBPF subset libseccomp emits; ~0u for anything else. */
static uint32_t bpf_run(const struct sock_filter *p, unsigned len,
			const struct seccomp_data *d)
{
	uint32_t a = 0, words[sizeof(*d) / 4];

	memcpy(words, d, sizeof(words));
	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &p[pc];

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (i->k % 4 || i->k / 4 >= ARRAY_SIZE(words))
				return ~0u;
			a = words[i->k / 4];
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= i->k;
			break;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & i->k) ? i->jt : i->jf;
			break;
		case BPF_RET | BPF_K:
			return i->k;
		default:
			return ~0u;
		}
	}
	return ~0u; /* ran off the end: the kernel refuses such a program */
}

/* libseccomp's program for f, built now; its length, or 0. */
static unsigned built(enum sandbox_role role, const struct sandbox_fds *f,
		      struct sock_filter *prog, unsigned cap)
{
	void *ctx;
	int fd = memfd_create("bpf", MFD_CLOEXEC);
	off_t size = -1;

	if (fd < 0 || sandbox_build(role, f, &ctx))
		return 0;
	if (!seccomp_export_bpf(ctx, fd))
		size = lseek(fd, 0, SEEK_END);
	seccomp_release(ctx);
	if (size <= 0 || size > (off_t)(cap * sizeof(*prog)) ||
	    pread(fd, prog, (size_t)size, 0) != size)
		size = 0;
	close(fd);
	return (unsigned)(size / (off_t)sizeof(*prog));
}

struct values {
	uint64_t v[128];
	unsigned n;
};

static void add(struct values *s, uint64_t v)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return;
	if (s->n < ARRAY_SIZE(s->v))
		s->v[s->n++] = v;
}

/* Every value a rule compares with, its neighbours, the same with the high word set. */
static void probe_values(const struct sandbox_fds *f, struct values *s)
{
	static const uint64_t fixed[] = { 0,
					  1,
					  2,
					  3,
					  KVM_RUN,
					  KVM_GET_REGS,
					  KVM_SET_REGS,
					  UFFDIO_COPY,
					  UFFDIO_REGISTER,
					  PROT_READ | PROT_WRITE,
					  PROT_READ | PROT_EXEC,
					  MADV_DONTNEED,
					  MADV_FREE,
					  SANDBOX_PLACEHOLDER(SLOT_VCPU) };
	uint64_t pid = (uint64_t)getpid();

	s->n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		add(s, fixed[i]);
	add(s, pid);
	add(s, pid + 1);
	add(s, pid | 1ULL << 32);
	add(s, (uint64_t)f->vcpu_fd);
	add(s, (uint64_t)f->vcpu_fd + 1);
	add(s, (uint64_t)f->vcpu_fd | 1ULL << 32);
	add(s, (uint64_t)f->uffd_fd);
	add(s, (uint64_t)f->file_fd);
	add(s, (uint64_t)f->file_fd + 1);
	for (unsigned i = 0; i < f->nfill_uffds; i++)
		add(s, (uint64_t)f->fill_uffds[i]);
	for (unsigned i = 0; i < f->nstats; i++) {
		add(s, (uint64_t)f->stats_fds[i]);
		add(s, (uint64_t)f->stats_fds[i] + 1);
	}
	for (int i = 0; i < f->nout; i++) {
		add(s, (uint64_t)f->out_fds[i]);
		add(s, (uint64_t)f->out_fds[i] | 1ULL << 32);
	}
}

/* Both programs on every probe: each system call with one argument varied; ioctl's first two. */
static unsigned differences(const struct sock_filter *a, unsigned na,
			    const struct sock_filter *b, unsigned nb,
			    const struct values *vals)
{
	static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 };
	unsigned diff = 0;
	struct seccomp_data d;

	for (size_t ar = 0; ar < ARRAY_SIZE(arches); ar++)
		for (int nr = 0; nr <= PROBE_NR_MAX; nr++)
			for (unsigned x32 = 0; x32 < 2; x32++)
				for (unsigned arg = 0; arg < 4; arg++)
					for (unsigned i = 0; i < vals->n; i++)
						for (unsigned j = 0;
						     j < (arg < 3	     ? 1
							  : nr == __NR_ioctl ? vals->n
									     : 0);
						     j++) {
							d = (struct seccomp_data){
								.nr = nr |
								      (int)(x32 ? 0x40000000
										: 0),
								.arch = arches[ar]
							};
							if (arg < 3)
								d.args[arg] = vals->v[i];
							else {
								d.args[0] = vals->v[i];
								d.args[1] = vals->v[j];
							}
							diff += bpf_run(a, na, &d) !=
								bpf_run(b, nb, &d);
						}
	return diff;
}

static void same_decisions(enum sandbox_role role, const struct sandbox_fds *f)
{
	static struct sock_filter pre[BPF_MAXINSNS], now[BPF_MAXINSNS];
	struct values vals;
	int n = sandbox_program(role, f, pre, BPF_MAXINSNS);
	unsigned m = built(role, f, now, BPF_MAXINSNS), left = 0;

	CHECK(n > 0 && m > 0);
	if (n <= 0 || !m)
		return;
	for (int i = 0; i < n; i++) /* every placeholder has its value */
		left += pre[i].k >= SANDBOX_PLACEHOLDER_BASE &&
			pre[i].k < SANDBOX_PLACEHOLDER(SLOT_COUNT);
	CHECK_EQ(left, 0);
	probe_values(f, &vals);
	CHECK_EQ(differences(pre, (unsigned)n, now, m, &vals), 0);
}

/* A child enters the role with more stats fds than slots: the run-time build's verdicts. */
static int child_many_stats(int forbidden)
{
	static struct sock_filter prog[BPF_MAXINSNS];
	int stats[SANDBOX_MAX_STATS + 2];
	struct sandbox_fds f = { .vcpu_fd = 800,
				 .stats_fds = stats,
				 .nstats = ARRAY_SIZE(stats) };
	char buf[8];
	pid_t pid;
	int st = 0;

	for (size_t i = 0; i < ARRAY_SIZE(stats); i++)
		stats[i] = 801 + (int)i;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (sandbox_program(SANDBOX_VCPU, &f, prog, BPF_MAXINSNS) != -E2BIG)
			_exit(3);
		if (sandbox_enter(SANDBOX_VCPU, &f))
			_exit(4);
		/* The last stats fd is past the slots: allowed (EBADF), not killed. */
		if (pread(stats[ARRAY_SIZE(stats) - 1], buf, sizeof(buf), 0) != -1 ||
		    errno != EBADF)
			_exit(5);
		if (forbidden)
			pread(700, buf, sizeof(buf), 0);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return st;
}

void test_sandbox_bpf(void)
{
	int stats1[] = { 7, 9 }, out1[] = { 3, 4, 12, 13 }, uffds1[] = { 11, 16 };
	int stats_full[SANDBOX_MAX_STATS], st;
	struct sandbox_fds one = { .vcpu_fd = 5,
				   .uffd_fd = 11,
				   .stop_fd = 14,
				   .stats_fds = stats1,
				   .nstats = ARRAY_SIZE(stats1),
				   .out_fds = out1,
				   .nout = 1,
				   .file_fd = 15,
				   .fill_uffds = uffds1,
				   .nfill_uffds = ARRAY_SIZE(uffds1) },
			   full = { .vcpu_fd = 600,
				    .uffd_fd = 601,
				    .stats_fds = stats_full,
				    .nstats = ARRAY_SIZE(stats_full),
				    .out_fds = out1,
				    .nout = ARRAY_SIZE(out1) },
			   none = { .vcpu_fd = 20, .uffd_fd = 21 };

	for (size_t i = 0; i < ARRAY_SIZE(stats_full); i++)
		stats_full[i] = 700 + 3 * (int)i;
	for (unsigned r = 0; r < SANDBOX_ROLES; r++) {
		same_decisions((enum sandbox_role)r, &one);
		same_decisions((enum sandbox_role)r, &full);
		same_decisions((enum sandbox_role)r, &none);
	}
	st = child_many_stats(0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = child_many_stats(1);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
}
