/*
 * Build-time generator of the sandbox's seccomp programs (make runs it): each
 * role's rules from sandbox.c, through libseccomp, with a placeholder for each
 * run-time value (internal.h's slots), written out as C with the place of each
 * placeholder for sandbox_load.c to patch, and as libseccomp's pseudo-code for
 * a reader.
 *   sandbox-gen OUT.c OUT.pfc
 * Exits 1 with one message when a placeholder is anywhere but in the constant
 * of a JEQ (patching it would change more than a value), when a slot the rules
 * use is missing from a program (libseccomp merged or dropped a comparison),
 * or when a program is too long for the kernel.
 */
#include "internal.h"

#include <errno.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *const role_enums[SANDBOX_ROLES] = {
	[SANDBOX_MAIN] = "SANDBOX_MAIN", [SANDBOX_VCPU] = "SANDBOX_VCPU",
	[SANDBOX_UFFD] = "SANDBOX_UFFD", [SANDBOX_EAGER] = "SANDBOX_EAGER",
	[SANDBOX_FILL] = "SANDBOX_FILL", [SANDBOX_SAVER] = "SANDBOX_SAVER",
};

static void die(const char *role, const char *what, int e)
{
	fprintf(stderr, "sandbox-gen: %s: %s%s%s\n", role, what, e ? ": " : "",
		e ? strerror(e) : "");
	exit(1);
}

/* The slots a role's rules compare with (sandbox.c): each must be in its program. */
static int slot_used(enum sandbox_role role, unsigned slot)
{
	if (slot == SLOT_PID)
		return 1;
	if (role == SANDBOX_UFFD)
		return slot == SLOT_UFFD;
	if (role == SANDBOX_EAGER)
		return slot == SLOT_SPARE;
	if (role == SANDBOX_FILL)
		return slot == SLOT_FILE ||
		       (slot >= SLOT_FILL_UFFDS &&
			slot < SLOT_FILL_UFFDS + SANDBOX_MAX_FILL_UFFDS);
	if (slot >= SLOT_STATS && slot < SLOT_STATS + SANDBOX_MAX_STATS)
		return 1;
	/* The sanitizers' runtime may write anywhere: their rule subsumes the output fds' writes. */
	if (slot >= SLOT_OUT && slot < SLOT_OUT + SANDBOX_MAX_OUT)
		return (role == SANDBOX_MAIN || role == SANDBOX_SAVER) &&
		       !SANDBOX_SANITIZER_RULES;
	if (slot >= SLOT_DIR && slot < SLOT_DIR + SANDBOX_MAX_DIRS)
		return role == SANDBOX_MAIN || role == SANDBOX_SAVER;
	if (slot >= SLOT_SNAP_STATE && slot <= SLOT_SNAP_RAM)
		return role == SANDBOX_SAVER;
	return role == SANDBOX_VCPU && slot == SLOT_VCPU;
}

/* libseccomp's program for role with every value a placeholder; *len instructions. */
static struct sock_filter *build(enum sandbox_role role, FILE *pfc, unsigned *len)
{
	int stats[SANDBOX_MAX_STATS], out[SANDBOX_MAX_OUT], dirs[SANDBOX_MAX_DIRS],
		uffds[SANDBOX_MAX_FILL_UFFDS];
	struct sandbox_fds f = {
		.vcpu_fd = (int)SANDBOX_PLACEHOLDER(SLOT_VCPU),
		.uffd_fd = (int)SANDBOX_PLACEHOLDER(SLOT_UFFD),
		.prefault_fd = (int)SANDBOX_PLACEHOLDER(SLOT_SPARE),
		.irq_vm_fd = (int)SANDBOX_PLACEHOLDER(SLOT_VM),
		.stop_fd = SANDBOX_NO_FD,
		.stats_fds = stats,
		.nstats = SANDBOX_MAX_STATS,
		.out_fds = out,
		.nout = SANDBOX_MAX_OUT,
		.dir_fds = dirs,
		.ndirs = SANDBOX_MAX_DIRS,
		.file_fd = (int)SANDBOX_PLACEHOLDER(SLOT_FILE),
		.snap_state_fd = (int)SANDBOX_PLACEHOLDER(SLOT_SNAP_STATE),
		.snap_mem_fd = (int)SANDBOX_PLACEHOLDER(SLOT_SNAP_MEM),
		.snap_tmp_fd = (int)SANDBOX_PLACEHOLDER(SLOT_SNAP_TMP),
		.snap_parent_fd = (int)SANDBOX_PLACEHOLDER(SLOT_SNAP_PARENT),
		.snap_pagemap_fd = (int)SANDBOX_PLACEHOLDER(SLOT_SNAP_PAGEMAP),
		.snap_ram_fd = (int)SANDBOX_PLACEHOLDER(SLOT_SNAP_RAM),
		.fill_uffds = uffds,
		.nfill_uffds = SANDBOX_MAX_FILL_UFFDS
	};
	const char *name = sandbox_role_name(role);
	struct sock_filter *prog;
	void *ctx;
	off_t size;
	int fd, e;

	for (unsigned i = 0; i < SANDBOX_MAX_STATS; i++)
		stats[i] = (int)SANDBOX_PLACEHOLDER(SLOT_STATS + i);
	for (unsigned i = 0; i < SANDBOX_MAX_OUT; i++)
		out[i] = (int)SANDBOX_PLACEHOLDER(SLOT_OUT + i);
	for (unsigned i = 0; i < SANDBOX_MAX_DIRS; i++)
		dirs[i] = (int)SANDBOX_PLACEHOLDER(SLOT_DIR + i);
	for (unsigned i = 0; i < SANDBOX_MAX_FILL_UFFDS; i++)
		uffds[i] = (int)SANDBOX_PLACEHOLDER(SLOT_FILL_UFFDS + i);
	e = sandbox_rules(role, &f, (long)SANDBOX_PLACEHOLDER(SLOT_PID), &ctx);
	if (e)
		die(name, "the rules", -e);
	fd = memfd_create("sandbox-bpf", MFD_CLOEXEC);
	if (fd < 0)
		die(name, "memfd_create", errno);
	e = seccomp_export_bpf(ctx, fd);
	if (e)
		die(name, "seccomp_export_bpf", -e);
	fprintf(pfc, "# role %s\n", name);
	fflush(pfc);
	e = seccomp_export_pfc(ctx, fileno(pfc));
	if (e)
		die(name, "seccomp_export_pfc", -e);
	seccomp_release(ctx);
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(*prog) ||
	    size / (off_t)sizeof(*prog) > BPF_MAXINSNS)
		die(name, "the program is empty, ragged or longer than BPF_MAXINSNS", 0);
	*len = (unsigned)(size / (off_t)sizeof(*prog));
	prog = malloc((size_t)size);
	if (!prog)
		die(name, "out of memory", ENOMEM);
	if (pread(fd, prog, (size_t)size, 0) != size)
		die(name, "reading the program back", errno);
	close(fd);
	return prog;
}

static void emit(FILE *out, enum sandbox_role role, FILE *pfc)
{
	const char *name = sandbox_role_name(role);
	unsigned len, seen[SLOT_COUNT] = { 0 };
	struct sock_filter *p = build(role, pfc, &len);

	fprintf(out, "static const struct sock_filter %s_insns[%u] = {\n", name, len);
	for (unsigned i = 0; i < len; i++)
		fprintf(out, "\t{ 0x%04x, %u, %u, 0x%08x },\n", p[i].code, p[i].jt,
			p[i].jf, p[i].k);
	fprintf(out, "};\n\nstatic const struct sandbox_patch %s_patches[] = {\n", name);
	for (unsigned i = 0; i < len; i++) {
		uint32_t slot = p[i].k - SANDBOX_PLACEHOLDER_BASE;

		if (p[i].k < SANDBOX_PLACEHOLDER_BASE || slot >= SLOT_COUNT)
			continue;
		if (p[i].code != (BPF_JMP | BPF_JEQ | BPF_K))
			die(name, "a placeholder outside a JEQ's constant", 0);
		seen[slot]++;
		fprintf(out, "\t{ %u, %u },\n", i, slot);
	}
	fprintf(out, "};\n\n");
	for (unsigned s = 0; s < SLOT_COUNT; s++)
		if (slot_used(role, s) && !seen[s])
			die(name, "a slot its rules use is not in the program", 0);
	free(p);
}

int main(int argc, char **argv)
{
	FILE *out, *pfc;

	if (argc != 3) {
		fprintf(stderr, "usage: sandbox-gen OUT.c OUT.pfc\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	pfc = fopen(argv[2], "w");
	if (!out || !pfc)
		die("output", argv[out ? 2 : 1], errno);
	fprintf(out,
		"/* Generated by vmm/machine/gen/sandbox_gen.c from sandbox.c's rules (make): do not edit. */\n"
		"#include \"internal.h\"\n\n#include <linux/filter.h>\n\n");
	for (unsigned r = 0; r < SANDBOX_ROLES; r++)
		emit(out, (enum sandbox_role)r, pfc);
	fprintf(out,
		"const struct sandbox_template sandbox_templates[SANDBOX_ROLES] = {\n");
	for (unsigned r = 0; r < SANDBOX_ROLES; r++)
		fprintf(out,
			"\t[%s] = { %s_insns, sizeof(%s_insns) / sizeof(%s_insns[0]), %s_patches,\n"
			"\t\tsizeof(%s_patches) / sizeof(%s_patches[0]) },\n",
			role_enums[r], sandbox_role_name(r), sandbox_role_name(r),
			sandbox_role_name(r), sandbox_role_name(r), sandbox_role_name(r),
			sandbox_role_name(r));
	fprintf(out, "};\n\nconst int sandbox_templates_sanitizer_rules = %d;\n",
		SANDBOX_SANITIZER_RULES);
	if (fclose(out) || fclose(pfc))
		die("output", "writing", errno);
	return 0;
}
