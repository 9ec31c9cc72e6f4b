/* One run's Linux guest (--kernel, a PC): its kernel read and checked, its devices' calls, its end. */
#include "run_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The boot timer: /init's first write (the kernel's boot is over). */
void run_on_init_start(void *cookie, unsigned vcpu)
{
	struct run *r = cookie;

	(void)vcpu;
	timeline_mark(r->tl, PHASE_INIT_START);
}

/* COM1's interrupt line (IRQ 4) for a Linux guest. */
void run_on_irq(void *cookie, unsigned line, int level)
{
	struct run *r = cookie;

	vm_irq_line(r->vm, line, level);
}

#define PANIC_TAIL_BYTES 2048
#define PANIC_LINES	 3 /* console lines after the panic's own in the message */

/*
 * QEMU's TCG (7.2, and upstream as of this writing) delivers an external
 * interrupt KVM injects with VMRUN right away, in helper_vmrun, but leaves
 * the vector as the CPU's pending exception: the next exit request of the
 * emulator's main loop (a timer's kick) before any exception or #VMEXIT
 * delivers it again. When the first delivery came from user space and the
 * second lands before the entry code's SWAPGS, the guest's kernel runs with
 * the user's GS base, faults on its per-CPU data, and recurses into its
 * entry stack's guard page. Seen only in the emulated host (docs/guide.md).
 */
#define TWICE_MARK "ENTRY_TRAMPOLINE stack guard page was hit"

/*
 * A Linux guest reset the machine (i8042, triple fault): after a "Kernel
 * panic" line on its console it panicked (exit 4, with the panic's last
 * lines and its oops' first line); otherwise it rebooted itself, the end
 * of its run.
 */
void run_guest_reset(struct run *r, unsigned vcpu, const char *why, int crashed)
{
	char tail[PANIC_TAIL_BYTES + 1], report[VM_REPORT_BYTES], *panic, *last;
	size_t n;
	int lines = 0;

	console_flush(r->console, vcpu);
	n = console_tail(r->console, tail, PANIC_TAIL_BYTES);
	tail[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (tail[i] == '\r')
			tail[i] = ' ';
	if (console_report(r->console, report, sizeof(report)))
		vm_set_report(r->vm, report);
	panic = strstr(tail, "Kernel panic");
	if (panic) {
		/* The panic's own line, then the last lines after it (the trace's end). */
		char *eol = strchr(panic, '\n'), *rest = tail + n;
		int twice = vm_platform(r->vm)->emulated && strstr(report, TWICE_MARK);

		if (eol) {
			char *end = eol++;

			for (*end = '\0'; end > panic && end[-1] == ' ';)
				*--end = '\0';
			for (last = tail + n; last > eol; last--)
				if (last[-1] == '\n' && ++lines > PANIC_LINES)
					break;
			rest = last;
		}
		for (char *c = rest; *c; c++)
			if (*c == '\n')
				*c = '|';
		for (char *c = rest + strlen(rest);
		     c > rest && (c[-1] == '|' || c[-1] == ' ');)
			*--c = '\0';
		vm_finish(
			r->vm, END_GUEST_PANIC, 0,
			"guest kernel panicked (vCPU %u, then %s): %s%s%s%s%s%s", vcpu,
			why, panic, *report ? "; its first report: " : "", report,
			twice ? " (in the emulated host: QEMU's TCG delivered an injected interrupt twice; one emulated CPU, scripts/emu-host --smp 1, avoids it: docs/guide.md)"
			      : "",
			*rest ? " ... " : "", rest);
	} else if (crashed) {
		vm_finish(r->vm, END_GUEST_CRASH, 0,
			  "guest crashed on vCPU %u: %s, with no panic on its console%s",
			  vcpu, why,
			  timeline_time(r->tl, PHASE_INIT_START) > 0
				  ? ""
				  : " (before /init started)");
	} else {
		vm_finish(
			r->vm, END_GUEST_RESET, 0,
			"guest reset the machine (vCPU %u: %s) without reporting an exit status",
			vcpu, why);
	}
}

void run_on_reset(void *cookie, unsigned vcpu, const char *why)
{
	run_guest_reset(cookie, vcpu, why, 0);
}

/*
 * A Linux guest on PVM: its kernel code is emulated, about 1.2 M
 * instructions/s here, and Debian's kernel does not get past its
 * decompressor (a BMI2 instruction the emulator cannot decode). Refused (exit 3) with the
 * rig line that runs the same command on an emulated AMD KVM, unless
 * --kernel-anyway.
 */
int run_linux_refused(struct run *r, const struct platform *plat)
{
	const char *words[r->cfg->argc > 1 ? r->cfg->argc : 1];
	char line[1024];
	int n = 0;

	if (strcmp(plat->kvm, "pvm") || r->cfg->vm.kernel_anyway)
		return 0;
	for (int i = 1; i < r->cfg->argc; i++)
		words[n++] = r->cfg->argv[i];
	setup_fail(
		r, END_PLATFORM,
		"--kernel: this /dev/kvm is PVM, where guest kernel code is emulated (about 1.2 M instructions/s) and Debian's 6.12 kernel stops in its decompressor (an emulation failure on a BMI2 instruction KVM's emulator cannot decode). Run the same line on an emulated AMD KVM with nested paging: make rig RIG=tdp ARGS='%s'; or add --kernel-anyway to try it here",
		suggest_cmdline(line, sizeof(line), words, n));
	return 1;
}

/* A Linux guest: the kernel and initrd read and checked, the VM made a PC. */
int run_read_linux(struct run *r)
{
	const struct vm_config *cfg = &r->cfg->vm;
	struct vm_pc_entry entry;
	char err[768];
	int e;

	r->lx = calloc(1, sizeof(*r->lx));
	if (!r->lx)
		return setup_fail(r, END_HOST_ERROR, "out of memory");
	e = linux_boot_read(r->lx, cfg->kernel_path, cfg->initrd_path, cfg->cmdline,
			    cfg->guest_argc, cfg->guest_argv, cfg->mem_bytes, cfg->vcpus,
			    err, sizeof(err));
	if (e)
		return setup_fail(r, e == -ENOEXEC ? END_NOT_A_GUEST : END_USAGE, "%s",
				  err);
	linux_boot_entry(r->lx, &entry);
	vm_set_pc(r->vm, &entry);
	if (!r->cfg->quiet)
		printf("linux guest: %s, boot protocol %u.%02u; command line: %s\n",
		       r->lx->k.release, r->lx->k.version >> 8, r->lx->k.version & 0xff,
		       r->lx->cmdline);
	return 0;
}

#define FNV64_BASIS 0xcbf29ce484222325ULL
#define FNV64_PRIME 0x100000001b3ULL

/* FNV-1a 64 over 8-byte words (then the tail's bytes): a kernel's 12 MiB in 1.5 M steps. */
static uint64_t digest(const uint8_t *p, uint64_t len)
{
	uint64_t h = FNV64_BASIS, w;
	uint64_t i = 0;

	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		h = (h ^ w) * FNV64_PRIME;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * FNV64_PRIME;
	return h;
}

/* What the guest booted, as read now (paths cut to their fields: run_linux_identity checks them). */
static void identity(const struct run *r, struct snap_linux *id)
{
	const struct vm_config *cfg = &r->cfg->vm;
	const struct linux_boot *lb = r->lx;

	memset(id, 0, sizeof(*id));
	id->kernel_bytes = lb->kernel_len;
	id->initrd_bytes = lb->initrd_len;
	id->kernel_digest = digest(lb->kernel, lb->kernel_len);
	id->initrd_digest = lb->initrd ? digest(lb->initrd, lb->initrd_len) : 0;
	id->cmdline_digest = digest((const uint8_t *)lb->cmdline, strlen(lb->cmdline));
	snprintf(id->kernel, sizeof(id->kernel), "%s", cfg->kernel_path);
	snprintf(id->initrd, sizeof(id->initrd), "%s",
		 cfg->initrd_path ? cfg->initrd_path : "");
	snprintf(id->cmdline, sizeof(id->cmdline), "%s",
		 cfg->cmdline ? cfg->cmdline : "");
}

int run_linux_identity(struct run *r, struct snap_linux *id)
{
	const struct vm_config *cfg = &r->cfg->vm;

	if (strlen(cfg->kernel_path) >= sizeof(id->kernel) ||
	    (cfg->initrd_path && strlen(cfg->initrd_path) >= sizeof(id->initrd)) ||
	    (cfg->cmdline && strlen(cfg->cmdline) >= sizeof(id->cmdline)))
		return setup_fail(
			r, END_USAGE,
			"--snapshot of a Linux guest keeps its kernel's and initrd's paths (under %d bytes each) and --cmdline (under %d bytes): one is longer",
			SNAP_PATH_BYTES, SNAP_CMDLINE_BYTES);
	identity(r, id);
	return 0;
}

/*
 * --restore of a Linux guest: the kernel and initrd read now must be those
 * that built the RAM it restores, on the same command line; anything else
 * would run code the memory does not hold. 0, or -1 (setup_fail, exit 2).
 */
int run_linux_check_restore(struct run *r)
{
	const struct snap_linux *saved = r->cfg->restore->v.lx;
	const struct vm_config *cfg = &r->cfg->vm;
	struct snap_linux now;
	const char *what = NULL;

	identity(r, &now);
	if (now.kernel_bytes != saved->kernel_bytes ||
	    now.kernel_digest != saved->kernel_digest)
		what = "kernel";
	else if (now.initrd_bytes != saved->initrd_bytes ||
		 now.initrd_digest != saved->initrd_digest)
		what = "initrd";
	else if (now.cmdline_digest != saved->cmdline_digest)
		what = "command line";
	if (!what)
		return 0;
	return setup_fail(
		r, END_USAGE,
		"--restore %s: the snapshot's Linux guest booted kernel %s (%llu bytes) with initrd %s (%llu bytes)%s%s; this %s is not the one it booted (kernel %s, %llu bytes; initrd %s, %llu bytes): restore it with the kernel, initrd and --cmdline it was saved with",
		r->cfg->restore->dir, saved->kernel,
		(unsigned long long)saved->kernel_bytes,
		saved->initrd[0] ? saved->initrd : "(none)",
		(unsigned long long)saved->initrd_bytes,
		saved->cmdline[0] ? " and --cmdline " : "", saved->cmdline, what,
		cfg->kernel_path, (unsigned long long)now.kernel_bytes,
		cfg->initrd_path ? cfg->initrd_path : "(none)",
		(unsigned long long)now.initrd_bytes);
}
