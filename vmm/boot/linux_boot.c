/* A Linux guest (--kernel, --initrd, --cmdline): its files read and checked, then placed in guest RAM. */
#include "boot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The command line: cmdline, then " -- " and the arguments, each in double
 * quotes when it holds a byte the kernel splits at (MVM_CMDLINE_SPACES) or
 * is empty.
 */
static int build_cmdline(struct linux_boot *lb, const char *cmdline, int argc,
			 char *const *argv, char *err, size_t errlen)
{
	size_t at, cap = sizeof(lb->cmdline);

	at = (size_t)snprintf(lb->cmdline, cap, "%s", cmdline);
	if (argc > 0 && at < cap)
		at += (size_t)snprintf(lb->cmdline + at, cap - at, " --");
	for (int i = 0; i < argc && at < cap; i++) {
		if (strchr(argv[i], '"') || strchr(argv[i], '\n')) {
			snprintf(
				err, errlen,
				"workload argument '%s': the kernel's command line cannot carry a double quote or a newline",
				argv[i]);
			return -EINVAL;
		}
		/* Quoted as /init unquotes (guest/linux/cmdline.c). */
		at += (size_t)snprintf(lb->cmdline + at, cap - at,
				       strpbrk(argv[i], MVM_CMDLINE_SPACES) || !argv[i][0]
					       ? " \"%s\""
					       : " %s",
				       argv[i]);
	}
	if (at >= cap || at > lb->k.cmdline_size) {
		snprintf(
			err, errlen,
			"the kernel command line is %zu bytes (the workload's arguments after \" -- \" included); this kernel takes at most %u (cmdline_size)",
			at, lb->k.cmdline_size);
		return -E2BIG;
	}
	return 0;
}

int linux_boot_read(struct linux_boot *lb, const char *kernel, const char *initrd,
		    const char *cmdline, int argc, char *const *argv, uint64_t mem_bytes,
		    unsigned vcpus, char *err, size_t errlen)
{
	char why[512];
	uint64_t need;
	int e;

	lb->mem_bytes = mem_bytes;
	lb->vcpus = vcpus;
	e = boot_read_file("kernel", kernel, LINUX_MEM_MAX, &lb->kernel, &lb->kernel_len,
			   err, errlen);
	if (e)
		return e;
	e = linux_kernel_check(lb->kernel, lb->kernel_len, &lb->k, why, sizeof(why));
	if (e) {
		snprintf(err, errlen, "--kernel %s: %s", kernel, why);
		return e;
	}
	if (mem_bytes > LINUX_MEM_MAX) {
		snprintf(
			err, errlen,
			"--kernel: --mem %llu MiB is more than a Linux guest gets here, %llu MiB (guest RAM is one piece from address 0, and a PC's APIC registers sit below 4 GiB)",
			(unsigned long long)(mem_bytes >> 20),
			(unsigned long long)(LINUX_MEM_MAX >> 20));
		return -EINVAL;
	}
	if (vcpus > 254) {
		snprintf(err, errlen,
			 "--vcpus %u: a Linux guest's MP table names at most 254 CPUs",
			 vcpus);
		return -EINVAL;
	}
	if (initrd) {
		e = boot_read_file("initrd", initrd, LINUX_MEM_MAX, &lb->initrd,
				   &lb->initrd_len, err, errlen);
		if (e)
			return e;
	}
	need = lb->k.kernel_end +
	       ((lb->initrd_len + (2ULL << 20) - 1) & ~((2ULL << 20) - 1)) +
	       LINUX_MIN_FREE;
	if (mem_bytes < need) {
		snprintf(
			err, errlen,
			"--mem %llu MiB is too small for this kernel (%s: %llu MiB to decompress in%s) and room to boot: use --mem %lluM or more",
			(unsigned long long)(mem_bytes >> 20), lb->k.release,
			(unsigned long long)(lb->k.kernel_end >> 20),
			lb->initrd ? ", the initrd above it," : "",
			(unsigned long long)((need + (2ULL << 20) - 1) >> 21 << 1));
		return -EINVAL;
	}
	if (lb->initrd) {
		e = linux_initrd_place(&lb->k, lb->initrd_len, mem_bytes, &lb->initrd_gpa,
				       why, sizeof(why));
		if (e) {
			snprintf(err, errlen, "--initrd %s: %s", initrd, why);
			return e;
		}
	}
	return build_cmdline(lb, cmdline ? cmdline : LINUX_DEFAULT_CMDLINE, argc, argv,
			     err, errlen);
}

/* Copy len bytes to guest-physical gpa through the checked translator: 0, or -EFAULT with err. */
static int put(struct guest_ram *ram, uint64_t gpa, const void *src, uint64_t len,
	       const char *what, char *err, size_t errlen)
{
	void *dst = mm_gpa_to_hva(ram, gpa, len);

	if (!len)
		return 0;
	if (!dst) {
		snprintf(
			err, errlen,
			"the %s (%llu bytes at 0x%llx) does not fit in %llu MiB of guest RAM",
			what, (unsigned long long)len, (unsigned long long)gpa,
			(unsigned long long)(ram->size >> 20));
		return -EFAULT;
	}
	memcpy(dst, src, len);
	return 0;
}

int linux_boot_place(const struct linux_boot *lb, struct guest_ram *ram, char *err,
		     size_t errlen)
{
	size_t mp = linux_mptable_size(lb->vcpus), cl = strlen(lb->cmdline) + 1;
	/* __BOOT_CS (0x10): 64-bit code; __BOOT_DS (0x18): data. */
	const uint64_t gdt[4] = { 0, 0, 0x00af9b000000ffffULL, 0x00cf93000000ffffULL };
	uint8_t *zp = mm_gpa_to_hva(ram, LINUX_ZERO_PAGE_GPA, MVM_PAGE_BYTES);
	uint8_t *mpt = mm_gpa_to_hva(ram, LINUX_MPTABLE_GPA, mp);
	int e = put(ram, LINUX_LOAD_GPA, lb->kernel + lb->k.setup_bytes, lb->k.code_bytes,
		    "kernel", err, errlen);

	e = e
		    ?: put(ram, lb->initrd_gpa, lb->initrd, lb->initrd_len, "initrd", err,
			   errlen);
	e = e
		    ?: put(ram, LINUX_CMDLINE_GPA, lb->cmdline, cl, "command line", err,
			   errlen);
	e = e ?: put(ram, LINUX_GDT_GPA, gdt, sizeof(gdt), "GDT", err, errlen);
	if (!e && (!zp || !mpt)) {
		snprintf(
			err, errlen,
			"the zero page and the MP table (below 1 MiB) do not fit in %llu MiB of guest RAM",
			(unsigned long long)(ram->size >> 20));
		e = -EFAULT;
	}
	if (e)
		return e;
	linux_zero_page(zp, &lb->k, LINUX_CMDLINE_GPA, lb->initrd_gpa, lb->initrd_len,
			lb->mem_bytes);
	linux_mptable(mpt, mp, LINUX_MPTABLE_GPA, lb->vcpus);
	loader_entry_tables(ram);
	return 0;
}

void linux_boot_entry(const struct linux_boot *lb, struct vm_pc_entry *e)
{
	(void)lb;
	*e = (struct vm_pc_entry){ .rip = LINUX_LOAD_GPA + 0x200,
				   .rsi = LINUX_ZERO_PAGE_GPA,
				   .gdt_base = LINUX_GDT_GPA,
				   .gdt_limit = 4 * 8 - 1 };
}

void linux_boot_free(struct linux_boot *lb)
{
	if (!lb)
		return;
	free(lb->kernel);
	free(lb->initrd);
	lb->kernel = lb->initrd = NULL;
}
