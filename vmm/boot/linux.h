/* The Linux x86 boot protocol: a bzImage, an initrd, the zero page, e820, the MP table. */
#ifndef MINIVMM_BOOT_LINUX_H
#define MINIVMM_BOOT_LINUX_H

/*
 * Documentation/arch/x86/boot.rst: the kernel's protected-mode part is
 * loaded at LINUX_LOAD_GPA and entered in long mode at its 64-bit entry
 * (code32_start + 0x200) with RSI pointing at the zero page (struct
 * boot_params: the setup header copied from the image, the command line's
 * address, the initrd's, the e820 map). Included by boot.h.
 */
#include <stddef.h>
#include <stdint.h>

/* Where things go in guest RAM (below 1 MiB, and the kernel above it). */
#define LINUX_GDT_GPA	    0x0500ULL	  /* null, null, __BOOT_CS 0x10, __BOOT_DS 0x18 */
#define LINUX_ZERO_PAGE_GPA 0x7000ULL	  /* struct boot_params, 4 KiB */
#define LINUX_CMDLINE_GPA   0x20000ULL	  /* the command line, up to cmdline_size */
#define LINUX_CMDLINE_MAX   0x10000ULL	  /* room for it: 64 KiB */
#define LINUX_MPTABLE_GPA   0x9fc00ULL	  /* last KiB of base memory, where Linux looks */
#define LINUX_EBDA_END	    0x100000ULL	  /* [0x9fc00, 1 MiB) is reserved in e820 */
#define LINUX_LOAD_GPA	    0x100000ULL	  /* the protected-mode kernel (code32_start) */
#define LINUX_MIN_FREE	    (32ULL << 20) /* RAM beyond kernel and initrd to boot in */
#define LINUX_MEM_MAX	    (3ULL << 30)  /* RAM is one piece from 0: below the APICs */
#define LINUX_MIN_PROTOCOL  0x020c	  /* 2.12: xloadflags, XLF_KERNEL_64 */
#define LINUX_XLF_KERNEL_64 0x0001
#define LINUX_E820_MAX	    128
#define LINUX_RELEASE_BYTES 64
#define LINUX_COM1_IRQ	    4 /* ISA IRQ of ttyS0 */

/* Setup header fields (offsets into the image and the zero page alike). */
#define BP_E820_ENTRIES	  0x1e8
#define BP_SETUP_SECTS	  0x1f1
#define BP_SYSSIZE	  0x1f4
#define BP_BOOT_FLAG	  0x1fe
#define BP_JUMP		  0x200
#define BP_HEADER	  0x202
#define BP_VERSION	  0x206
#define BP_KERNEL_VERSION 0x20e
#define BP_TYPE_OF_LOADER 0x210
#define BP_LOADFLAGS	  0x211
#define BP_CODE32_START	  0x214
#define BP_RAMDISK_IMAGE  0x218
#define BP_RAMDISK_SIZE	  0x21c
#define BP_HEAP_END_PTR	  0x224
#define BP_CMD_LINE_PTR	  0x228
#define BP_INITRD_MAX	  0x22c
#define BP_KERNEL_ALIGN	  0x230
#define BP_RELOCATABLE	  0x234
#define BP_XLOADFLAGS	  0x236
#define BP_CMDLINE_SIZE	  0x238
#define BP_PREF_ADDRESS	  0x258
#define BP_INIT_SIZE	  0x260
#define BP_E820_TABLE	  0x2d0

struct linux_e820 {
	uint64_t addr, size;
	uint32_t type; /* 1 RAM, 2 reserved */
} __attribute__((packed));

/* What the bzImage's setup header says, checked. */
struct linux_kernel {
	const uint8_t *image; /* the whole file (the caller's) */
	uint64_t len;
	uint16_t version; /* boot protocol, 0x020f = 2.15 */
	uint32_t
		setup_bytes; /* (setup_sects + 1) * 512: where the kernel proper starts */
	uint64_t code_bytes; /* the protected-mode part: len - setup_bytes */
	uint32_t initrd_addr_max, cmdline_size, init_size;
	uint64_t pref_address;
	uint64_t kernel_end;		   /* where decompression's working space ends */
	char release[LINUX_RELEASE_BYTES]; /* "6.12.57+deb12-amd64" */
};

/*
 * Check buf (len bytes) is an x86-64 bzImage this VMM can boot: "HdrS",
 * protocol >= 2.12 with XLF_KERNEL_64, not truncated. 0 and *k, or -ENOEXEC
 * with err naming what is wrong.
 */
int linux_kernel_check(const uint8_t *buf, uint64_t len, struct linux_kernel *k,
		       char *err, size_t errlen);

/*
 * Where an initrd of len bytes goes in mem_bytes of RAM: the highest page
 * below both RAM's end and initrd_addr_max, above the kernel. 0 and *gpa,
 * or -E2BIG with err (it does not fit).
 */
int linux_initrd_place(const struct linux_kernel *k, uint64_t len, uint64_t mem_bytes,
		       uint64_t *gpa, char *err, size_t errlen);

/*
 * The e820 map of mem_bytes of RAM: [0, EBDA) RAM, [EBDA, 1 MiB) reserved,
 * [1 MiB, end) RAM. How many entries were written (at most max).
 */
unsigned linux_e820(uint64_t mem_bytes, struct linux_e820 *e, unsigned max);

/*
 * The zero page (4096 bytes) for kernel k: the setup header copied from the
 * image, type_of_loader 0xff, the command line's and the initrd's address
 * and size, the e820 map of mem_bytes.
 */
void linux_zero_page(uint8_t *zp, const struct linux_kernel *k, uint64_t cmdline_gpa,
		     uint64_t initrd_gpa, uint64_t initrd_len, uint64_t mem_bytes);

/*
 * An Intel MP table (MultiProcessor Specification 1.4) for ncpus CPUs
 * (local APIC ids 0..n-1), one ISA bus, the IOAPIC (id ncpus) with the 16
 * ISA interrupts on its pins 0-15: the floating pointer, then the
 * configuration table, at buf, which will sit at gpa. The bytes written,
 * or 0 when they do not fit in size.
 */
size_t linux_mptable(uint8_t *buf, size_t size, uint64_t gpa, unsigned ncpus);
/* The bytes an MP table for ncpus takes. */
size_t linux_mptable_size(unsigned ncpus);

#endif /* MINIVMM_BOOT_LINUX_H */
