/* Guest image: read it, check its header against the ABI, place it in guest RAM. */
#include "boot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Read the whole image. Returns 0, or -errno with err set (missing,
 * unreadable, empty, too large, not a regular file). *buf is the caller's to free.
 */
int loader_read(const char *path, uint8_t **buf, uint64_t *len, char *err, size_t errlen)
{
	return boot_read_file("guest image", path, MVM_IMAGE_MAX_BYTES, buf, len, err,
			      errlen);
}

int boot_read_file(const char *what, const char *path, uint64_t max, uint8_t **buf,
		   uint64_t *len, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *b = NULL;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = -EINVAL;

	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(-e));
		return e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s %s: not a regular file", what, path);
		goto fail_close;
	}
	if (st.st_size == 0) {
		snprintf(err, errlen, "%s %s: empty file", what, path);
		goto fail_close;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errlen, "%s %s: %lld bytes, larger than the %llu MiB limit",
			 what, path, (long long)st.st_size,
			 (unsigned long long)(max >> 20));
		e = -EFBIG;
		goto fail_close;
	}
	b = malloc((size_t)st.st_size);
	if (!b) {
		snprintf(err, errlen, "%s %s: out of memory", what, path);
		e = -ENOMEM;
		goto fail_close;
	}
	n = pread(fd, b, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		e = n < 0 ? -errno : -EIO;
		snprintf(err, errlen, "%s %s: short read (%s)", what, path,
			 n < 0 ? strerror(-e) : "file changed size");
		free(b);
		goto fail_close;
	}
	close(fd);
	*buf = b;
	*len = (uint64_t)st.st_size;
	return 0;
fail_close:
	close(fd);
	return e;
}

/*
 * What each version added (include/minivmm_abi.h: from MVM_ABI_OLDEST on,
 * additions only). Index: the version. For the messages about versions.
 */
static const char *const abi_changes[] = {
	[1] = "the first: console, exit, abort, records (sweep, touch), park, zero and mark hypercalls",
	[2] = "records MVM_REC_PROGRESS and MVM_REC_ORDER, the perm workload, guest exit status 2 (MVM_EXIT_USAGE)",
	[3] = "the /numa boot-info node and the cpus' numa-node-id (--numa)",
	[4] = "MVM_ORDER_BLOCKS, perm --blocks",
	[5] = "the snapshot hypercall (MVM_HC_SNAPSHOT) and the boot info's minivmm,snapshot (--snapshot, --restore)",
};
_Static_assert(sizeof(abi_changes) / sizeof(abi_changes[0]) == MVM_ABI_VERSION + 1,
	       "one line per ABI version in abi_changes");

/* "ABI 3 (the /numa node ...), ABI 4 (...)": what versions from+1 .. to added. */
static void changes_since(unsigned from, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned v = from + 1; v <= MVM_ABI_VERSION && at < len; v++)
		at += (size_t)snprintf(buf + at, len - at, "%sABI %u: %s", at ? "; " : "",
				       v, abi_changes[v]);
}

int loader_abi_check(const struct mvm_image_header *hdr, int numa, char *err,
		     size_t errlen)
{
	char added[768];

	if (hdr->abi_version > MVM_ABI_VERSION) {
		snprintf(
			err, errlen,
			"guest built for ABI version %u, newer than this minivmm's (it runs images of ABI %d to %d): update minivmm, or rebuild the image against this minivmm's include/minivmm_abi.h (make guest/guest.bin; your own guest: docs/lab/08-your-guest.md)",
			hdr->abi_version, MVM_ABI_OLDEST, MVM_ABI_VERSION);
		return -ENOEXEC;
	}
	if (hdr->abi_version < MVM_ABI_OLDEST) {
		changes_since(hdr->abi_version, added, sizeof(added));
		snprintf(
			err, errlen,
			"guest built for ABI version %u; this minivmm runs images of ABI %d to %d: rebuild it against this minivmm's include/minivmm_abi.h (make guest/guest.bin; your own guest: docs/lab/08-your-guest.md); since then: %s",
			hdr->abi_version, MVM_ABI_OLDEST, MVM_ABI_VERSION, added);
		return -ENOEXEC;
	}
	if (numa && hdr->abi_version < 3) {
		snprintf(
			err, errlen,
			"--numa: the guest is built for ABI version %u, whose firmware does not read the /numa boot-info node (ABI 3): rebuild it against this minivmm's include/minivmm_abi.h, or leave out --numa",
			hdr->abi_version);
		return -EINVAL;
	}
	return 0;
}

/*
 * Check that buf is a minivmm guest this VMM can run in mem_bytes of RAM
 * with vcpus vCPUs. Returns 0 and fills hdr, or with err set: -ENOEXEC when
 * it is not a minivmm guest for this ABI (it could only crash), -EINVAL when
 * the options do not fit it.
 */
int loader_check(const uint8_t *buf, uint64_t len, uint64_t mem_bytes, unsigned vcpus,
		 struct mvm_image_header *hdr, char *err, size_t errlen)
{
	uint64_t file_end;

	if (len < sizeof(*hdr) || memcmp(buf, MVM_IMAGE_MAGIC, sizeof(MVM_IMAGE_MAGIC))) {
		snprintf(
			err, errlen,
			"not a minivmm guest: no \"%s\" header at the start of the image (a flat 64-bit binary without one runs with --raw)",
			MVM_IMAGE_MAGIC);
		return -ENOEXEC;
	}
	memcpy(hdr, buf, sizeof(*hdr));
	if (loader_abi_check(hdr, 0, err, errlen))
		return -ENOEXEC;
	if (hdr->load_gpa != MVM_LOAD_GPA) {
		snprintf(err, errlen,
			 "guest built for load address 0x%llx; minivmm loads at 0x%llx",
			 (unsigned long long)hdr->load_gpa, MVM_LOAD_GPA);
		return -ENOEXEC;
	}
	file_end = MVM_LOAD_GPA + len;
	if (hdr->end_gpa < file_end ||
	    hdr->end_gpa > MVM_LOAD_GPA + 2 * MVM_IMAGE_MAX_BYTES ||
	    hdr->entry_gpa < MVM_LOAD_GPA + sizeof(*hdr) || hdr->entry_gpa >= file_end) {
		snprintf(
			err, errlen,
			"guest header is inconsistent (entry 0x%llx, end 0x%llx, file ends at 0x%llx)",
			(unsigned long long)hdr->entry_gpa,
			(unsigned long long)hdr->end_gpa, (unsigned long long)file_end);
		return -ENOEXEC;
	}
	if (hdr->max_vcpus == 0) {
		snprintf(err, errlen, "guest header says it supports 0 vCPUs");
		return -ENOEXEC;
	}
	if (vcpus > hdr->max_vcpus) {
		snprintf(err, errlen, "--vcpus %u: this guest supports at most %u", vcpus,
			 hdr->max_vcpus);
		return -EINVAL;
	}
	/* The image, its bss, and a little working memory must fit. */
	if (hdr->end_gpa + MVM_MIN_MEM_BYTES / 2 > mem_bytes) {
		snprintf(
			err, errlen,
			"--mem %llu MiB is too small for this guest: use --mem %lluM or more",
			(unsigned long long)(mem_bytes >> 20),
			(unsigned long long)(((hdr->end_gpa + MVM_MIN_MEM_BYTES / 2 +
					       MVM_RAM_ALIGN_BYTES - 1) &
					      ~(MVM_RAM_ALIGN_BYTES - 1)) >>
					     20));
		return -EINVAL;
	}
	return 0;
}

int loader_raw(uint64_t len, uint64_t mem_bytes, unsigned vcpus,
	       struct mvm_image_header *hdr, char *err, size_t errlen)
{
	*hdr = (struct mvm_image_header){ .abi_version = MVM_ABI_VERSION,
					  .max_vcpus = MVM_RAW_MAX_VCPUS,
					  .load_gpa = MVM_LOAD_GPA,
					  .entry_gpa = MVM_LOAD_GPA,
					  .end_gpa = MVM_LOAD_GPA + len };
	memcpy(hdr->magic, MVM_IMAGE_MAGIC, sizeof(MVM_IMAGE_MAGIC));
	if (vcpus > MVM_RAW_MAX_VCPUS) {
		snprintf(err, errlen,
			 "--vcpus %u: a --raw guest gets at most %d (one stack each)",
			 vcpus, MVM_RAW_MAX_VCPUS);
		return -EINVAL;
	}
	if (hdr->end_gpa > mem_bytes || hdr->end_gpa > MVM_ENTRY_MAP_BYTES) {
		snprintf(
			err, errlen,
			"--raw: %llu bytes loaded at 0x%llx do not fit in --mem %llu MiB and the first GiB the entry page tables map",
			(unsigned long long)len, MVM_LOAD_GPA,
			(unsigned long long)(mem_bytes >> 20));
		return -EINVAL;
	}
	return 0;
}

/*
 * Identity-map the first GiB with 2 MiB pages: enough to reach the firmware.
 * Beyond RAM these map nothing (accesses become MMIO exits), as on hardware.
 */
void loader_entry_tables(struct guest_ram *ram)
{
	uint64_t *pml4 = mm_gpa_to_hva(ram, MVM_ENTRY_PT_GPA, 4096);
	uint64_t *pdpt = mm_gpa_to_hva(ram, MVM_ENTRY_PT_GPA + 4096, 4096);
	uint64_t *pd = mm_gpa_to_hva(ram, MVM_ENTRY_PT_GPA + 8192, 4096);

	pml4[0] = (MVM_ENTRY_PT_GPA + 4096) | 0x3; /* present, writable */
	pdpt[0] = (MVM_ENTRY_PT_GPA + 8192) | 0x3;
	for (uint64_t i = 0; i < MVM_ENTRY_MAP_BYTES / MVM_RAM_ALIGN_BYTES; i++)
		pd[i] = i * MVM_RAM_ALIGN_BYTES | 0x83; /* present, writable, 2 MiB */
}
