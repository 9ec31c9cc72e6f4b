/* Boot protocols: how a guest of each kind is read, checked and placed in guest RAM. */
#ifndef MINIVMM_BOOT_H
#define MINIVMM_BOOT_H

/*
 * A boot protocol reads a guest's files, checks them against the options
 * before any KVM call, and places the guest in guest RAM once the machine
 * has mapped it: the minivmm image (image.c, bootinfo.c: the ABI of
 * include/minivmm_abi.h) and, beside it, the Linux x86 boot protocol (a
 * bzImage, an initrd, the zero page). It sits above the machine (it reads
 * the VM's NUMA plan for the boot info) and below the application, which
 * chooses the protocol and calls it (vmm/run/run.c). Prints nothing.
 */
#include <stddef.h>
#include <stdint.h>

#include "machine.h"
#include "linux.h"

/*
 * Read a whole file the guest is made of (what: "guest image", "kernel",
 * "initrd", for the messages), at most max bytes. 0, or -errno with err
 * set (missing, unreadable, empty, too large, not a regular file); *buf is
 * the caller's to free.
 */
int boot_read_file(const char *what, const char *path, uint64_t max, uint8_t **buf,
		   uint64_t *len, char *err, size_t errlen);

/* ---- image.c: the minivmm image (include/minivmm_abi.h): read, check, place ---- */
/* Read the whole image. 0, or -errno with err set; *buf is the caller's to free. */
int loader_read(const char *path, uint8_t **buf, uint64_t *len, char *err, size_t errlen);
/*
 * Check buf is a guest this VMM can run in mem_bytes with vcpus vCPUs: 0
 * and *hdr, or -ENOEXEC (not a minivmm guest for this ABI) or -EINVAL (the
 * options do not fit it) with err set.
 */
/*
 * The image's ABI version against this minivmm's (include/minivmm_abi.h):
 * 0 when it runs, with numa set when --numa is asked for; else err says
 * what to do: -ENOEXEC (a version outside MVM_ABI_OLDEST..MVM_ABI_VERSION),
 * -EINVAL (a feature its version lacks).
 */
int loader_abi_check(const struct mvm_image_header *hdr, int numa, char *err,
		     size_t errlen);
int loader_check(const uint8_t *buf, uint64_t len, uint64_t mem_bytes, unsigned vcpus,
		 struct mvm_image_header *hdr, char *err, size_t errlen);
/*
 * A --raw image: a flat 64-bit binary loaded at MVM_LOAD_GPA and entered at
 * its first byte, with no header. Fills *hdr as if it had one. 0, or -EINVAL
 * (too big for mem_bytes, too many vCPUs) with err set.
 */
int loader_raw(uint64_t len, uint64_t mem_bytes, unsigned vcpus,
	       struct mvm_image_header *hdr, char *err, size_t errlen);
void loader_entry_tables(struct guest_ram *ram);

/* ---- bootinfo.c: the minivmm image's boot info, the FDT at MVM_BOOTINFO_GPA ---- */
struct bootinfo {
	uint64_t mem_bytes;
	unsigned vcpus;
	uint32_t tsc_khz;
	int eager_touch;
	int snapshot; /* --snapshot: minivmm,snapshot (ABI 5) */
	int tdp;      /* KVM builds the second level with EPT/NPT */
	uint32_t
		abi; /* the image's ABI version: minivmm,abi-version (the run's contract) */
	const struct numa
		*numa; /* --numa: /numa and the cpus' numa-node-id; NULL: none */
	int argc;
	char **argv;
};
/* 0, or -ENOSPC/-EINVAL with err set. */
int bootinfo_build(void *buf, size_t size, const struct bootinfo *b, char *err,
		   size_t errlen);

/* ---- linux_boot.c: --kernel, --initrd, --cmdline: a Linux guest, read and placed ---- */
/* Booted fast: no PCI scan, no console chatter, reset at once on a panic (exit 4). */
#define LINUX_CMDLINE_1	      "console=ttyS0 reboot=k panic=-1 acpi=off pci=off"
#define LINUX_CMDLINE_2	      "i8042.noaux i8042.nomux nomodule tsc=reliable quiet"
#define LINUX_DEFAULT_CMDLINE LINUX_CMDLINE_1 " " LINUX_CMDLINE_2

struct linux_boot {
	struct linux_kernel k;
	uint8_t *kernel, *initrd; /* the files, read whole */
	uint64_t kernel_len, initrd_len, initrd_gpa;
	char cmdline[LINUX_CMDLINE_MAX]; /* as the kernel gets it, " -- ARGS" included */
	unsigned vcpus;
	uint64_t mem_bytes;
};

/*
 * Read and check the kernel and the initrd (NULL: none) for mem_bytes of
 * RAM and vcpus vCPUs; the command line is cmdline (NULL: the default)
 * with " -- " and the workload's arguments appended. 0, or with err set:
 * -ENOEXEC (not a kernel this VMM can boot), another -errno (a missing
 * file, options that do not fit it: a usage error).
 */
int linux_boot_read(struct linux_boot *lb, const char *kernel, const char *initrd,
		    const char *cmdline, int argc, char *const *argv, uint64_t mem_bytes,
		    unsigned vcpus, char *err, size_t errlen);
/*
 * Place it in guest RAM, every piece through the checked translator: the
 * kernel at LINUX_LOAD_GPA, the initrd, the command line, the zero page,
 * the MP table, the GDT and the entry page tables. 0, or -EFAULT with err
 * naming the piece that does not fit (RAM may hold the pieces before it).
 * The vCPUs' entry state to go with it: linux_boot_entry.
 */
int linux_boot_place(const struct linux_boot *lb, struct guest_ram *ram, char *err,
		     size_t errlen) __attribute__((warn_unused_result));
/* Boot CPU's entry: the 64-bit entry point, RSI the zero page, GDT and CR3 as placed. */
void linux_boot_entry(const struct linux_boot *lb, struct vm_pc_entry *e);
void linux_boot_free(struct linux_boot *lb);

#endif /* MINIVMM_BOOT_H */
