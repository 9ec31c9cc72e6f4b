/* The Linux x86 boot protocol: check a bzImage's setup header, place the initrd, build the zero page and e820. */
#include "boot.h"

#include <errno.h>
#include <string.h>

static uint16_t get16(const uint8_t *p, size_t off)
{
	uint16_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static void put16(uint8_t *p, size_t off, uint16_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

static void put32(uint8_t *p, size_t off, uint32_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

/* The release: the first word of the string kernel_version points to, if any. */
static void kernel_release(const uint8_t *buf, uint64_t len, struct linux_kernel *k)
{
	uint16_t at = get16(buf, BP_KERNEL_VERSION);
	size_t i = 0;

	strcpy(k->release, "unknown");
	if (!at || (uint64_t)at + BP_JUMP >= k->setup_bytes ||
	    (uint64_t)at + BP_JUMP >= len)
		return;
	for (const uint8_t *s = buf + BP_JUMP + at;
	     i + 1 < sizeof(k->release) && s + i < buf + k->setup_bytes && s[i] > ' ' &&
	     s[i] < 0x7f;
	     i++)
		k->release[i] = (char)s[i];
	if (i)
		k->release[i] = '\0';
}

int linux_kernel_check(const uint8_t *buf, uint64_t len, struct linux_kernel *k,
		       char *err, size_t errlen)
{
	unsigned sects;
	uint64_t need, base, span;

	memset(k, 0, sizeof(*k));
	if (len < BP_INIT_SIZE + 4 || memcmp(buf + BP_HEADER, "HdrS", 4)) {
		snprintf(
			err, errlen,
			"not a Linux bzImage: no \"HdrS\" boot-protocol header at offset 0x%x (--kernel takes an x86-64 bzImage such as /boot/vmlinuz-*)",
			BP_HEADER);
		return -ENOEXEC;
	}
	k->image = buf;
	k->len = len;
	k->version = get16(buf, BP_VERSION);
	if (k->version < LINUX_MIN_PROTOCOL) {
		snprintf(
			err, errlen,
			"bzImage boot protocol %u.%02u is too old: minivmm needs 2.12 or later (a 64-bit entry point; Linux 3.8 and later)",
			k->version >> 8, k->version & 0xff);
		return -ENOEXEC;
	}
	if (!(get16(buf, BP_XLOADFLAGS) & LINUX_XLF_KERNEL_64)) {
		snprintf(
			err, errlen,
			"bzImage has no 64-bit entry point (XLF_KERNEL_64 is clear in xloadflags 0x%x): minivmm boots x86-64 kernels only",
			get16(buf, BP_XLOADFLAGS));
		return -ENOEXEC;
	}
	sects = buf[BP_SETUP_SECTS] ? buf[BP_SETUP_SECTS] : 4;
	k->setup_bytes = (sects + 1) * 512;
	need = k->setup_bytes + (uint64_t)get32(buf, BP_SYSSIZE) * 16;
	if (len < need || len <= k->setup_bytes) {
		snprintf(
			err, errlen,
			"bzImage is truncated: %llu bytes, its header says %llu (%u setup sectors and a %llu-byte kernel)",
			(unsigned long long)len, (unsigned long long)need, sects,
			(unsigned long long)get32(buf, BP_SYSSIZE) * 16);
		return -ENOEXEC;
	}
	k->code_bytes = len - k->setup_bytes;
	k->initrd_addr_max = get32(buf, BP_INITRD_MAX);
	k->cmdline_size = get32(buf, BP_CMDLINE_SIZE);
	k->pref_address = get64(buf, BP_PREF_ADDRESS);
	k->init_size = get32(buf, BP_INIT_SIZE);
	/*
	 * Decompression works in [max(load, pref_address), + init_size), the
	 * code copied to load lies below its end too: all of it below
	 * LINUX_MEM_MAX. The header is the file's: the sum is checked (a
	 * pref_address near 2^64 would wrap to a small end).
	 */
	base = k->pref_address > LINUX_LOAD_GPA ? k->pref_address : LINUX_LOAD_GPA;
	span = k->init_size > k->code_bytes ? k->init_size : k->code_bytes;
	if (__builtin_add_overflow(base, span, &k->kernel_end) ||
	    k->kernel_end > LINUX_MEM_MAX) {
		snprintf(
			err, errlen,
			"bzImage's header is inconsistent (pref_address 0x%llx, init_size 0x%x, %llu bytes of code): it does not fit below %llu MiB",
			(unsigned long long)k->pref_address, k->init_size,
			(unsigned long long)k->code_bytes,
			(unsigned long long)(LINUX_MEM_MAX >> 20));
		k->kernel_end = 0;
		return -ENOEXEC;
	}
	kernel_release(buf, len, k);
	return 0;
}

int linux_initrd_place(const struct linux_kernel *k, uint64_t len, uint64_t mem_bytes,
		       uint64_t *gpa, char *err, size_t errlen)
{
	uint64_t top = mem_bytes, at;

	if ((uint64_t)k->initrd_addr_max + 1 < top)
		top = (uint64_t)k->initrd_addr_max + 1;
	at = len <= top ? (top - len) & ~(MVM_PAGE_BYTES - 1) : 0;
	if (len > top || at < k->kernel_end) {
		snprintf(
			err, errlen,
			"the initrd (%llu MiB) does not fit: it must lie above the kernel's %llu MiB and below %s (%llu MiB); use a smaller initrd%s",
			(unsigned long long)(len >> 20),
			(unsigned long long)(k->kernel_end >> 20),
			top == mem_bytes ? "the end of guest RAM"
					 : "the kernel's initrd_addr_max",
			(unsigned long long)(top >> 20),
			top == mem_bytes ? " or a larger --mem" : "");
		return -E2BIG;
	}
	*gpa = at;
	return 0;
}

unsigned linux_e820(uint64_t mem_bytes, struct linux_e820 *e, unsigned max)
{
	const struct linux_e820 map[] = {
		{ 0, LINUX_MPTABLE_GPA, 1 },
		{ LINUX_MPTABLE_GPA, LINUX_EBDA_END - LINUX_MPTABLE_GPA, 2 },
		{ LINUX_EBDA_END, mem_bytes - LINUX_EBDA_END, 1 },
	};
	unsigned n = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(map) && n < max; i++)
		if (map[i].addr < mem_bytes)
			e[n++] = map[i];
	return n;
}

#define LOADED_HIGH   0x01
#define CAN_USE_HEAP  0x80
#define HEAP_END      0xfe00 /* the setup heap's end: unused by the 64-bit entry */
#define LOADER_OTHERS 0xff   /* type_of_loader: "undefined", as kvmtool and Firecracker */

void linux_zero_page(uint8_t *zp, const struct linux_kernel *k, uint64_t cmdline_gpa,
		     uint64_t initrd_gpa, uint64_t initrd_len, uint64_t mem_bytes)
{
	size_t hdr_end =
		BP_HEADER + k->image[BP_JUMP + 1]; /* the jump says where it ends */
	struct linux_e820 e[LINUX_E820_MAX];
	unsigned n;

	memset(zp, 0, MVM_PAGE_BYTES);
	if (hdr_end > k->setup_bytes)
		hdr_end = k->setup_bytes;
	if (hdr_end > MVM_PAGE_BYTES)
		hdr_end = MVM_PAGE_BYTES;
	memcpy(zp + BP_SETUP_SECTS, k->image + BP_SETUP_SECTS, hdr_end - BP_SETUP_SECTS);
	zp[BP_TYPE_OF_LOADER] = LOADER_OTHERS;
	zp[BP_LOADFLAGS] |= LOADED_HIGH | CAN_USE_HEAP;
	put16(zp, BP_HEAP_END_PTR, HEAP_END);
	put32(zp, BP_CODE32_START, (uint32_t)LINUX_LOAD_GPA);
	put32(zp, BP_CMD_LINE_PTR, (uint32_t)cmdline_gpa);
	put32(zp, BP_RAMDISK_IMAGE, (uint32_t)initrd_gpa);
	put32(zp, BP_RAMDISK_SIZE, (uint32_t)initrd_len);
	n = linux_e820(mem_bytes, e, LINUX_E820_MAX);
	memcpy(zp + BP_E820_TABLE, e, n * sizeof(e[0]));
	zp[BP_E820_ENTRIES] = (uint8_t)n;
}
