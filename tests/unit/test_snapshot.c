/* Unit tests: the snapshot's state file (built, parsed, each way it can be wrong) and the memory file's extents. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "experiment.h"

#define RAM (32ULL << 20)

/* A valid state file of n vCPUs with one sweep batch, in b. */
static void build(struct snap_buf *b, unsigned n)
{
	struct snap_header h = { .abi_version = MVM_ABI_VERSION,
				 .ram_bytes = RAM,
				 .page_bytes = 4096,
				 .nvcpus = n };
	struct snap_config c = { .mem_bytes = RAM,
				 .vcpus = n,
				 .guest_argc = 2,
				 .args_bytes = 8,
				 .args = "flat\0-x\0",
				 .result_gpa = 0x1000 };
	static struct vcpu_state v;
	struct snap_records r = { MVM_REC_SWEEP, 1 };
	struct mvm_rec_sweep s = { .workload = MVM_WL_FLAT,
				   .mode = MVM_MODE_DEMAND,
				   .iteration = 1,
				   .size_mib = 1 };

	snprintf(h.backing, sizeof(h.backing), "anon");
	CHECK(snap_buf_init(b) == 0);
	CHECK(snap_buf_section(b, SNAP_SEC_CONFIG, &c, sizeof(c), NULL, 0) == 0);
	for (unsigned i = 0; i < n; i++) {
		v.index = i;
		v.nmsrs = 3;
		CHECK(snap_buf_section(b, SNAP_SEC_VCPU, &v, sizeof(v), NULL, 0) == 0);
	}
	CHECK(snap_buf_section(b, SNAP_SEC_RECORDS, &r, sizeof(r), &s, sizeof(s)) == 0);
	CHECK(snap_buf_section(b, SNAP_SEC_CONSOLE, "hi\n", 3, NULL, 0) == 0);
	snap_buf_finish(b, &h);
}

/* A header field changed as a writer would: the checksum made right again. */
static void resum(struct snap_buf *b)
{
	struct snap_header *h = (struct snap_header *)b->p;

	h->checksum = snap_state_checksum(b->p, b->len);
}

static int parse(const struct snap_buf *b, size_t len, const char *want)
{
	struct snap_view v;
	char err[256] = "";
	uint8_t *copy = malloc(len ? len : 1);
	int e;

	memcpy(copy, b->p, len);
	e = snap_parse(copy, len, &v, err, sizeof(err));
	if (!e)
		snap_view_free(&v);
	if (want && !strstr(err, want)) {
		fprintf(stderr, "    wanted '%s', got '%s'\n", want, err);
		check_failures++;
	}
	free(copy);
	return e;
}

void test_snapshot_format(void)
{
	struct snap_buf b;
	struct snap_view v;
	char err[256];

	build(&b, 2);
	CHECK(snap_parse(b.p, b.len, &v, err, sizeof(err)) == 0);
	CHECK_EQ(v.hdr->nvcpus, 2);
	CHECK(v.vcpu[1] && v.vcpu[1]->index == 1 && v.vcpu[1]->nmsrs == 3);
	CHECK_EQ(v.nbatches, 1);
	CHECK(v.batches[0].kind == MVM_REC_SWEEP && v.batches[0].count == 1);
	CHECK(v.console_len == 3 && !memcmp(v.console, "hi\n", 3));
	CHECK(!strcmp(v.cfg->args, "flat"));
	snap_view_free(&v);
	/* Each way it can be wrong: one message each. */
	CHECK(parse(&b, 10, "truncated: 10 bytes") == -EINVAL);
	CHECK(parse(&b, b.len - 8, "truncated or padded") == -EINVAL);
	b.p[b.len - 100] ^= 1;
	CHECK(parse(&b, b.len, "checksum does not match") == -EINVAL);
	b.p[b.len - 100] ^= 1;
	b.p[0] = 'X';
	CHECK(parse(&b, b.len, "magic") == -EINVAL);
	b.p[0] = 'M';
	((struct snap_header *)b.p)->format_version = 9;
	CHECK(parse(&b, b.len, "format version 9") == -EINVAL);
	((struct snap_header *)b.p)->format_version = 1;
	CHECK(parse(&b, b.len, "version 1, whose checksum left its header out") ==
	      -EINVAL);
	((struct snap_header *)b.p)->format_version = SNAP_FORMAT_VERSION;
	/* The checksum covers the header: a field changed alone is corruption. */
	snprintf(((struct snap_header *)b.p)->backing, 16, "memfd");
	CHECK(parse(&b, b.len, "checksum does not match") == -EINVAL);
	snprintf(((struct snap_header *)b.p)->backing, 16, "anon");
	((struct snap_header *)b.p)->page_bytes = 8192;
	CHECK(parse(&b, b.len, "checksum does not match") == -EINVAL);
	((struct snap_header *)b.p)->page_bytes = 4096;
	CHECK(parse(&b, b.len, NULL) == 0);
	((struct snap_header *)b.p)->abi_version = 4;
	resum(&b);
	CHECK(parse(&b, b.len, "ABI 4") == -EINVAL);
	((struct snap_header *)b.p)->abi_version = MVM_ABI_VERSION + 1;
	resum(&b);
	CHECK(parse(&b, b.len, "ABI") == -EINVAL);
	((struct snap_header *)b.p)->abi_version = MVM_ABI_VERSION;
	((struct snap_header *)b.p)->vcpu_state_bytes = 12;
	resum(&b);
	CHECK(parse(&b, b.len, "vCPU state is 12 bytes") == -EINVAL);
	((struct snap_header *)b.p)->vcpu_state_bytes = sizeof(struct vcpu_state);
	resum(&b);
	CHECK(parse(&b, b.len, NULL) == 0);
	snap_buf_free(&b);
	/* The header says 2 vCPUs, one is saved; the checksum is right. */
	{
		struct snap_header h = { .abi_version = MVM_ABI_VERSION,
					 .ram_bytes = RAM,
					 .page_bytes = 4096,
					 .nvcpus = 2 };
		struct snap_config c = { .mem_bytes = RAM, .vcpus = 2 };
		static struct vcpu_state one;

		snprintf(h.backing, sizeof(h.backing), "anon");
		CHECK(snap_buf_init(&b) == 0);
		CHECK(snap_buf_section(&b, SNAP_SEC_CONFIG, &c, sizeof(c), NULL, 0) == 0);
		CHECK(snap_buf_section(&b, SNAP_SEC_VCPU, &one, sizeof(one), NULL, 0) ==
		      0);
		snap_buf_finish(&b, &h);
		CHECK(parse(&b, b.len, "fewer saved") == -EINVAL);
		snap_buf_free(&b);
	}
	/* A saved batch passes the checks a guest's call does: each refusal, checksum right. */
	{
		static const struct {
			size_t at; /* the field's offset in struct mvm_rec_sweep */
			uint32_t value;
			const char *want;
		} bad[] = {
			{ offsetof(struct mvm_rec_sweep, workload), 9,
			  "unknown workload 9" },
			{ offsetof(struct mvm_rec_sweep, mode), 2,
			  "mode 2 for workload 2" },
			{ offsetof(struct mvm_rec_sweep, iteration), 0, "iteration 0" },
			{ offsetof(struct mvm_rec_sweep, vcpu), 2,
			  "vCPU 2, the guest has 2" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			uint8_t *rec;

			build(&b, 2);
			/* The sweep record: the last record batch's, before the console section. */
			rec = b.p + b.len - 16 - 8 - sizeof(struct mvm_rec_sweep);
			CHECK(((struct mvm_rec_sweep *)rec)->workload == MVM_WL_FLAT);
			memcpy(rec + bad[i].at, &bad[i].value, sizeof(bad[i].value));
			resum(&b);
			CHECK(parse(&b, b.len,
				    "record batch 0 holds records a guest's call would have been refused for") ==
			      -EINVAL);
			CHECK(parse(&b, b.len, bad[i].want) == -EINVAL);
			snap_buf_free(&b);
		}
	}
}

/*
 * A Linux guest's state file: the config, one vCPU and its platform's five
 * sections, the first `sections` of them (SNAP_SEC_LINUX first), one of
 * them twice if `twice`, the PIT's `pit_bytes` long.
 */
static void build_pc(struct snap_buf *b, int sections, int twice, size_t pit_bytes)
{
	struct snap_header h = { .abi_version = MVM_ABI_VERSION,
				 .ram_bytes = RAM,
				 .page_bytes = 4096,
				 .nvcpus = 1 };
	struct snap_config c = { .mem_bytes = RAM, .vcpus = 1 };
	static struct vcpu_state v;
	static struct snap_linux lx = { .kernel_bytes = 12, .kernel = "vmlinuz" };
	static struct kvm_irqchip chips[VM_PC_CHIPS];
	static uint8_t pit[2 * sizeof(struct kvm_pit_state2)];
	static struct kvm_clock_data clock = { .clock = 123456789 };
	static struct snap_pc_devices pc = { .com1.regs = { [1] = 2 } };
	const struct {
		uint32_t type;
		const void *p;
		size_t bytes;
	} sec[] = {
		{ SNAP_SEC_LINUX, &lx, sizeof(lx) },
		{ SNAP_SEC_IRQCHIP, chips, sizeof(chips) },
		{ SNAP_SEC_PIT, pit, pit_bytes },
		{ SNAP_SEC_CLOCK, &clock, sizeof(clock) },
		{ SNAP_SEC_PC_DEVICES, &pc, sizeof(pc) },
	};

	snprintf(h.backing, sizeof(h.backing), "anon");
	CHECK(snap_buf_init(b) == 0);
	CHECK(snap_buf_section(b, SNAP_SEC_CONFIG, &c, sizeof(c), NULL, 0) == 0);
	CHECK(snap_buf_section(b, SNAP_SEC_VCPU, &v, sizeof(v), NULL, 0) == 0);
	for (int i = 0; i < sections; i++)
		CHECK(snap_buf_section(b, sec[i].type, sec[i].p, sec[i].bytes, NULL, 0) ==
		      0);
	if (twice)
		CHECK(snap_buf_section(b, SNAP_SEC_CLOCK, &clock, sizeof(clock), NULL,
				       0) == 0);
	snap_buf_finish(b, &h);
}

void test_snapshot_linux_sections(void)
{
	struct snap_buf b;
	struct snap_view v;
	char err[256];

	build_pc(&b, 5, 0, sizeof(struct kvm_pit_state2));
	CHECK(snap_parse(b.p, b.len, &v, err, sizeof(err)) == 0);
	CHECK(v.lx && !strcmp(v.lx->kernel, "vmlinuz") && v.lx->kernel_bytes == 12);
	CHECK(v.chips && v.pit && v.pcdev && v.pcdev->com1.regs[1] == 2);
	CHECK(v.clock && v.clock->clock == 123456789);
	snap_view_free(&v);
	snap_buf_free(&b);
	/* The minivmm guest's: none of them. */
	build_pc(&b, 0, 0, sizeof(struct kvm_pit_state2));
	CHECK(snap_parse(b.p, b.len, &v, err, sizeof(err)) == 0);
	CHECK(!v.lx && !v.chips && !v.pit && !v.clock && !v.pcdev);
	snap_view_free(&v);
	snap_buf_free(&b);
	/* All five or none; each once, of its size; the paths terminated. */
	build_pc(&b, 4, 0, sizeof(struct kvm_pit_state2));
	CHECK(parse(&b, b.len, "with 4 of its 5 platform sections") == -EINVAL);
	snap_buf_free(&b);
	build_pc(&b, 5, 1, sizeof(struct kvm_pit_state2));
	CHECK(parse(&b, b.len, "a second or misshapen kvmclock section") == -EINVAL);
	snap_buf_free(&b);
	build_pc(&b, 5, 0, sizeof(struct kvm_pit_state2) + 8);
	CHECK(parse(&b, b.len, "a second or misshapen PIT section") == -EINVAL);
	snap_buf_free(&b);
	build_pc(&b, 5, 0, sizeof(struct kvm_pit_state2));
	{
		/* The config, the vCPU, then the Linux section: its kernel path, unterminated. */
		size_t at = sizeof(struct snap_header) + 2 * sizeof(struct snap_section) +
			    sizeof(struct snap_config) + sizeof(struct vcpu_state) +
			    sizeof(struct snap_section);
		struct snap_linux *lx = (struct snap_linux *)(b.p + at);
		struct snap_header h = *(struct snap_header *)b.p;

		memset(lx->kernel, 'k', sizeof(lx->kernel));
		snap_buf_finish(&b, &h);
		CHECK(parse(&b, b.len, "paths or command line are misshapen") == -EINVAL);
	}
	snap_buf_free(&b);
}

void test_snapshot_memfile(void)
{
	char path[] = "/tmp/minivmm-memfile-XXXXXX", err[256];
	struct guest_ram ram = { .fd = -1 }; /* anonymous: pagemap decides */
	struct mm_memfile_stats st;
	struct gpa_range *x = NULL;
	size_t n = 0;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	unlink(path);
	ram.size = 8ULL << 20;
	ram.hva = mmap(NULL, ram.size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ram.hva != MAP_FAILED);
	ram.hva[0x3000] = 1;		     /* page 3: data */
	ram.hva[0x4000 + 4095] = 2;	     /* page 4: data, next to it */
	memset(ram.hva + 0x100000, 0, 4096); /* touched, all zero: a hole */
	ram.hva[0x700000] = 3;		     /* another extent */
	CHECK(mm_memfile_write(&ram, fd, -1, NULL, NULL, &st, err, sizeof(err)) == 0);
	CHECK_EQ(st.data_bytes, 3 * 4096);
	CHECK_EQ(st.extents, 2);
	CHECK(st.resident_bytes >= 4 * 4096);
	CHECK(mm_memfile_extents(fd, ram.size, &x, &n, err, sizeof(err)) == 0);
	/* The file system may round extents out (SEEK_DATA is allowed to), never in. */
	CHECK(n >= 1 && x[0].gpa <= 0x3000 && x[n - 1].gpa + x[n - 1].bytes >= 0x701000);
	memset(ram.hva, 0, ram.size);
	CHECK(mm_memfile_read(&ram, fd, x, n, err, sizeof(err)) == 0);
	CHECK(ram.hva[0x3000] == 1 && ram.hva[0x4fff] == 2 && ram.hva[0x700000] == 3);
	free(x);
	munmap(ram.hva, ram.size);
	close(fd);
}

/*
 * Guest RAM in a file on disk (--mem-path with --mem-any-fs), its pages
 * written back and evicted from the page cache before the save: mincore
 * calls them absent, yet they are the guest's. Saved and restored byte for
 * byte (issue 38), with guest-physical 0 at an offset of the file.
 */
void test_snapshot_memfile_evicted(void)
{
	const uint64_t size = 8ULL << 20, off = 2ULL << 20;
	const uint64_t pages[] = { 0, 3, 4, 0x100,
				   0x7ff }; /* 0x100: written, then zeroed */
	char path[] = "/var/tmp/minivmm-evict-XXXXXX",
	     out[] = "/var/tmp/minivmm-mem-XXXXXX";
	char err[256] = "";
	static struct mm_file file;
	struct guest_ram ram = { .size = size, .file = &file },
			 back = { .size = size, .fd = -1 };
	struct mm_memfile_stats st;
	struct gpa_range *x = NULL;
	unsigned char vec[1];
	size_t n = 0;
	int resident = 1, fd = mkstemp(path), ofd = mkstemp(out);

	CHECK(fd >= 0 && ofd >= 0);
	if (fd < 0 || ofd < 0)
		return;
	unlink(path);
	unlink(out);
	/* Before the offset: bytes that are not guest RAM's. */
	CHECK(ftruncate(fd, (off_t)(off + size)) == 0);
	CHECK(pwrite(fd, "not RAM", 7, (off_t)(off - 4096)) == 7);
	file.offset = off;
	ram.fd = fd;
	ram.hva = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	CHECK(ram.hva != MAP_FAILED);
	if (ram.hva == MAP_FAILED)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(pages); i++)
		for (uint64_t b = 0; b < 4096; b += 512)
			ram.hva[pages[i] * 4096 + b] = (uint8_t)(i * 16 + b / 512 + 1);
	memset(ram.hva + 0x100 * 4096, 0, 4096);
	/* Written back, unmapped from the page tables, dropped from the page cache. */
	CHECK(msync(ram.hva, size, MS_SYNC) == 0);
	for (int tries = 0; tries < 20 && resident; tries++) {
		CHECK(madvise(ram.hva, size, MADV_DONTNEED) == 0);
		fdatasync(fd);
		CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
		resident = 0;
		for (size_t i = 0; i < ARRAY_SIZE(pages); i++)
			if (mincore(ram.hva + pages[i] * 4096, 4096, vec) == 0 &&
			    (vec[0] & 1))
				resident = 1;
		if (resident)
			usleep(50000);
	}
	CHECK(!resident); /* the case under test: the pages are not in memory */
	CHECK(mm_memfile_write(&ram, ofd, -1, NULL, NULL, &st, err, sizeof(err)) == 0);
	CHECK_EQ(st.data_bytes, 4 * 4096);
	CHECK_EQ(st.extents, 3);
	CHECK(mm_memfile_extents(ofd, size, &x, &n, err, sizeof(err)) == 0);
	back.hva = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	CHECK(back.hva != MAP_FAILED);
	CHECK(mm_memfile_read(&back, ofd, x, n, err, sizeof(err)) == 0);
	CHECK(!memcmp(back.hva, ram.hva, size));
	CHECK(back.hva[3 * 4096] == 1 * 16 + 1 &&
	      back.hva[0x7ff * 4096 + 3584] == 4 * 16 + 8);
	free(x);
	munmap(back.hva, size);
	munmap(ram.hva, size);
	close(fd);
	close(ofd);
}
