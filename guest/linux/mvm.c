/* minivmm's ABI from Linux user space: ioperm'ed ports and one locked, translated page. */
#include "mvm.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGEMAP_PRESENT_BIT (1ULL << 63)
#define PAGEMAP_PFN_MASK    ((1ULL << 55) - 1)
#define GPA_LIMIT	    (1ULL << 32) /* the hypercall port takes a 32-bit GPA */

static struct {
	int on;
	int pagemap_fd;
	unsigned char *page; /* MVM_LX_PAGE_BYTES, page-aligned, locked */
} mvm = { 0, -1, NULL };

int mvm_pagemap_gpa(int pagemap_fd, const void *va, uint64_t *gpa)
{
	uintptr_t v = (uintptr_t)va;
	uint64_t ent;
	ssize_t n = pread(pagemap_fd, &ent, sizeof(ent),
			  (off_t)(v / MVM_LX_PAGE_BYTES * sizeof(ent)));

	if (n < 0)
		return -errno;
	if (n != sizeof(ent))
		return -EIO;
	if (!(ent & PAGEMAP_PRESENT_BIT) || !(ent & PAGEMAP_PFN_MASK))
		return -ENOENT;
	*gpa = (ent & PAGEMAP_PFN_MASK) * MVM_LX_PAGE_BYTES + v % MVM_LX_PAGE_BYTES;
	return 0;
}

int mvm_active(void)
{
	return mvm.on;
}

int mvm_open(void)
{
	uint64_t gpa;
	int err;

	if (mvm.on)
		return 1;
	if (!getenv(MVM_ENV_GUEST))
		return 0;
	if (ioperm(MVM_HC_PORT, 4, 1) || ioperm(MVM_EXIT_PORT, 1, 1) ||
	    ioperm(MVM_BOOT_TIMER_PORT, 1, 1)) {
		err = -errno;
		fprintf(stderr, "mvm: ioperm for minivmm's ports: %s\n", strerror(errno));
		return err;
	}
	mvm.pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (mvm.pagemap_fd < 0) {
		err = -errno;
		fprintf(stderr, "mvm: /proc/self/pagemap: %s (is /proc mounted?)\n",
			strerror(errno));
		return err;
	}
	mvm.page = mmap(NULL, MVM_LX_PAGE_BYTES, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mvm.page == MAP_FAILED) {
		err = -errno;
		fprintf(stderr, "mvm: mmap of the hypercall page: %s\n", strerror(errno));
		goto close_pagemap;
	}
	if (mlock(mvm.page, MVM_LX_PAGE_BYTES)) {
		err = -errno;
		fprintf(stderr, "mvm: mlock of the hypercall page: %s\n",
			strerror(errno));
		goto unmap;
	}
	memset(mvm.page, 0,
	       MVM_LX_PAGE_BYTES); /* written: a page of its own, not the zero page */
	err = mvm_pagemap_gpa(mvm.pagemap_fd, mvm.page, &gpa);
	if (err) {
		fprintf(stderr, "mvm: the hypercall page's guest-physical address: %s\n",
			strerror(-err));
		goto unmap;
	}
	mvm.on = 1;
	return 1;
unmap:
	munmap(mvm.page, MVM_LX_PAGE_BYTES);
	mvm.page = NULL;
close_pagemap:
	close(mvm.pagemap_fd);
	mvm.pagemap_fd = -1;
	return err;
}

/*
 * The page's GPA now (asked each time: a locked page may still be migrated
 * by compaction), then one 32-bit OUT. A page above 4 GiB cannot be named
 * to the port: said once, and the call is dropped.
 */
static void hypercall(void)
{
	uint64_t gpa;
	int err = mvm_pagemap_gpa(mvm.pagemap_fd, mvm.page, &gpa);

	if (err || gpa + MVM_LX_PAGE_BYTES > GPA_LIMIT) {
		fprintf(stderr, "mvm: the hypercall page %s; the call is lost\n",
			err ? "has no guest-physical address" : "lies above 4 GiB");
		return;
	}
	outl((uint32_t)gpa, MVM_HC_PORT);
}

/* The data area's GPA (the page's own: it is one page, asked again in hypercall()). */
static uint64_t data_gpa(void)
{
	uint64_t gpa = 0;

	if (mvm_pagemap_gpa(mvm.pagemap_fd, mvm.page + MVM_HC_ARGS_MAX, &gpa))
		return 0;
	return gpa;
}

void mvm_boot_timer(void)
{
	/* /init calls this before mvm_open: the port is all it needs. */
	if (mvm.on || ioperm(MVM_BOOT_TIMER_PORT, 1, 1) == 0)
		outb(MVM_BOOT_TIMER_MAGIC, MVM_BOOT_TIMER_PORT);
}

void mvm_mark(uint32_t mark)
{
	struct mvm_hc_mark *a = (struct mvm_hc_mark *)mvm.page;
	int cpu;

	if (!mvm.on)
		return;
	cpu = sched_getcpu();
	*a = (struct mvm_hc_mark){ .hdr = { MVM_HC_MARK, sizeof(*a) },
				   .mark = mark,
				   .vcpu = cpu < 0 ? 0 : (uint32_t)cpu,
				   .tsc = mvm_rdtsc() };
	hypercall();
}

uint32_t mvm_records_max(size_t rec_bytes)
{
	return rec_bytes ? (uint32_t)(MVM_LX_DATA_BYTES / rec_bytes) : 0;
}

int mvm_records(uint32_t kind, const void *recs, uint32_t count, size_t rec_bytes)
{
	struct mvm_hc_records *a = (struct mvm_hc_records *)mvm.page;

	if (!mvm.on)
		return 0;
	if (count > mvm_records_max(rec_bytes) || count > MVM_RECORDS_MAX)
		return -EINVAL;
	if (count)
		memcpy(mvm.page + MVM_HC_ARGS_MAX, recs, count * rec_bytes);
	*a = (struct mvm_hc_records){ .hdr = { MVM_HC_RECORDS, sizeof(*a) },
				      .kind = kind,
				      .count = count,
				      .recs_gpa = data_gpa() };
	hypercall();
	return 0;
}

void mvm_console(const char *buf, size_t len)
{
	struct mvm_hc_console *a = (struct mvm_hc_console *)mvm.page;

	if (!mvm.on)
		return;
	while (len) {
		size_t n = len < MVM_LX_DATA_BYTES ? len : MVM_LX_DATA_BYTES;

		memcpy(mvm.page + MVM_HC_ARGS_MAX, buf, n);
		*a = (struct mvm_hc_console){ .hdr = { MVM_HC_CONSOLE, sizeof(*a) },
					      .buf_gpa = data_gpa(),
					      .len = n };
		hypercall();
		buf += n;
		len -= n;
	}
}

uint32_t mvm_snapshot(uint64_t checksum, uint64_t pass)
{
	volatile struct mvm_hc_snapshot *a = (volatile struct mvm_hc_snapshot *)mvm.page;
	int cpu;

	if (!mvm.on)
		return MVM_SNAP_NONE;
	cpu = sched_getcpu();
	a->hdr.nr = MVM_HC_SNAPSHOT;
	a->hdr.size = sizeof(struct mvm_hc_snapshot);
	a->vcpu = cpu < 0 ? 0 : (uint32_t)cpu;
	a->result = MVM_SNAP_NONE;
	a->checksum = checksum;
	a->pass = pass;
	hypercall();
	/* Written by minivmm before the OUT returned; after a restore, the saved page's. */
	return a->result;
}

void mvm_exit(int status)
{
	struct mvm_hc_exit *a = (struct mvm_hc_exit *)mvm.page;

	if (mvm.on) {
		*a = (struct mvm_hc_exit){ .hdr = { MVM_HC_EXIT, sizeof(*a) },
					   .status = status };
		hypercall();
	}
	/* The hypercall page could not be named: the exit port carries the low byte. */
	if (mvm.on || (getenv(MVM_ENV_GUEST) && ioperm(MVM_EXIT_PORT, 1, 1) == 0))
		outb((unsigned char)status, MVM_EXIT_PORT);
}

static ssize_t console_cookie_write(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	mvm_console(buf, len);
	return (ssize_t)len;
}

FILE *mvm_console_file(void)
{
	static const cookie_io_functions_t io = { .write = console_cookie_write };

	return mvm.on ? fopencookie(NULL, "w", io) : NULL;
}
