/* Unit tests: the gpa translator, RAM slicing, backends, meminfo, KVM_PRE_FAULT_MEMORY loop. */
#include <errno.h>

#include "check.h"
#include "minivmm_abi.h"
#include "ram.h"

void test_gpa_translator(void)
{
	static uint8_t buf[8192];
	struct guest_ram ram = { .hva = buf,
				 .size = sizeof(buf),
				 .map_bytes = sizeof(buf) };

	CHECK(mm_gpa_to_hva(&ram, 0, 0) == buf);
	CHECK(mm_gpa_to_hva(&ram, 0, 8192) == buf);
	CHECK(mm_gpa_to_hva(&ram, 8191, 1) == buf + 8191);
	CHECK(mm_gpa_to_hva(&ram, 8192, 0) == buf + 8192); /* empty range at the end */
	CHECK(mm_gpa_to_hva(&ram, 8192, 1) == NULL);
	CHECK(mm_gpa_to_hva(&ram, 8191, 2) == NULL);
	CHECK(mm_gpa_to_hva(&ram, 0, 8193) == NULL);
	CHECK(mm_gpa_to_hva(&ram, 8193, 0) == NULL);
	CHECK(mm_gpa_to_hva(&ram, UINT64_MAX, 1) == NULL);
	CHECK(mm_gpa_to_hva(&ram, 1, UINT64_MAX) == NULL); /* wraps */
	CHECK(mm_gpa_to_hva(&ram, UINT64_MAX - 10, 20) == NULL);
}

/* Every byte of [0, total) in exactly one slice, slices in order, aligned. */
static int slices_cover(uint64_t total, uint32_t n, uint64_t align)
{
	uint64_t expect = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t s, e;

		mvm_slice(total, n, i, align, &s, &e);
		if (s != expect || e < s || s % align)
			return 0;
		if (i + 1 < n && e % align)
			return 0;
		expect = e;
	}
	return expect == total;
}

void test_slicing(void)
{
	static const uint64_t totals[] = {
		2 << 20, 6 << 20, 1ULL << 30, 3ULL << 30, (17ULL << 30) + (6 << 20),
		4096 * 7
	};
	static const uint32_t threads[] = { 1, 2, 3, 5, 7, 8, 13, 64, 255 };

	for (size_t t = 0; t < sizeof(totals) / sizeof(totals[0]); t++)
		for (size_t n = 0; n < sizeof(threads) / sizeof(threads[0]); n++) {
			CHECK(slices_cover(totals[t], threads[n], 4096));
			if (totals[t] % (2 << 20) == 0)
				CHECK(slices_cover(totals[t], threads[n], 2 << 20));
		}
	/* More threads than units: some slices are empty, none overlap. */
	CHECK(slices_cover(2ULL << 30, 3, 1ULL << 30));
	CHECK(slices_cover(4 << 20, 7, 2 << 20));
}

void test_backends(void)
{
	char err[256];
	struct guest_ram ram;

	for (int i = 0; i < MM_BACKING_COUNT; i++) {
		CHECK((int)mm_backends[i].id == i);
		CHECK(mm_backend_find(mm_backends[i].name) == &mm_backends[i]);
	}
	CHECK(mm_backend_find("nosuch") == NULL);
	CHECK(mm_ram_create(&ram, mm_backend_find("hugetlb1g"), 3ULL << 20, NULL, err,
			    sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "multiple of 1024 MiB");
	CHECK(mm_ram_create(&ram, mm_backend_find("memfd"), 8 << 20, NULL, err,
			    sizeof(err)) == 0);
	CHECK(ram.fd >= 0 && ram.size == 8 << 20 && ram.hva);
	ram.hva[(8 << 20) - 1] = 1;
	mm_ram_destroy(&ram);
	CHECK(ram.fd == -1 && ram.hva == NULL);
	CHECK(mm_ram_create(&ram, mm_backend_find("thp"), 8 << 20, NULL, err,
			    sizeof(err)) == 0);
	CHECK(((uintptr_t)ram.hva & ((2 << 20) - 1)) == 0); /* aligned for huge pages */
	mm_ram_destroy(&ram);
}

void test_meminfo(void)
{
	CHECK_EQ(mm_meminfo_available("MemTotal:       24000000 kB\n"
				      "MemFree:        20000000 kB\n"
				      "MemAvailable:   22867324 kB\n"),
		 22867324ULL << 10);
	CHECK_EQ(mm_meminfo_available("MemTotal: 1 kB\n"), 0);
	CHECK_EQ(mm_meminfo_available(""), 0);
	CHECK_EQ(mm_meminfo_available("MemAvailable: junk"), 0);
	CHECK_EQ(mm_meminfo_bytes("MemTotal:       24000000 kB\n", "MemTotal"),
		 24000000ULL << 10);
	/* A key matches a whole field name at the start of a line, not a prefix. */
	CHECK_EQ(mm_meminfo_bytes("SwapTotal: 5 kB\nMemTotal: 7 kB\n", "Total"), 0);
	CHECK_EQ(mm_meminfo_bytes("SwapTotal: 5 kB\nMemTotal: 7 kB\n", "MemTotal"),
		 7ULL << 10);
}

/* A scripted KVM_PRE_FAULT_MEMORY: each step advances by `advance` and returns rc/errno. */
struct step {
	uint64_t advance;
	int rc, err;
};
static const struct step *script;
static int nsteps, at;

static int fake_prefault(int fd, struct kvm_pre_fault_memory *r)
{
	const struct step *s;

	(void)fd;
	if (at == nsteps) {
		errno = EFAULT;
		return -1;
	}
	s = &script[at++];
	r->gpa += s->advance;
	r->size -= s->advance;
	errno = s->err;
	return s->rc;
}

static int run_script(const struct step *steps, int n, uint64_t size,
		      struct prefault_stats *st)
{
	script = steps;
	nsteps = n;
	at = 0;
	*st = (struct prefault_stats){ 0 };
	return mm_prefault_range(3, 0x100000, size, fake_prefault, st);
}

void test_prefault_loop(void)
{
	struct prefault_stats st;
	static const struct step whole[] = { { 1 << 20, 0, 0 } };
	static const struct step partial[] = { { 4096, 0, 0 },
					       { 8192, 0, 0 },
					       { (1 << 20) - 12288, 0, 0 } };
	static const struct step interrupted[] = { { 0, -1, EINTR },
						   { 65536, -1, EINTR },
						   { 0, -1, EAGAIN },
						   { (1 << 20) - 65536, 0, 0 } };
	static const struct step outside[] = { { 8192, 0, 0 }, { 0, -1, ENOENT } };
	static const struct step no_progress[] = { { 0, 0, 0 } };
	static const struct step other[] = { { 0, -1, EFAULT } };
	static struct step stuck[PREFAULT_MAX_STUCK + 2];

	CHECK(run_script(whole, 1, 1 << 20, &st) == 0);
	CHECK(st.bytes == 1 << 20 && st.calls == 1 && st.retries == 0);
	CHECK(run_script(partial, 3, 1 << 20, &st) == 0);
	CHECK(st.bytes == 1 << 20 && st.calls == 3);
	CHECK(run_script(interrupted, 4, 1 << 20, &st) == 0);
	CHECK(st.bytes == 1 << 20 && st.calls == 4 && st.retries == 3);
	CHECK(run_script(outside, 2, 1 << 20, &st) == -ENOENT);
	CHECK(st.bytes == 8192);
	CHECK(run_script(no_progress, 1, 1 << 20, &st) == -EIO);
	CHECK(run_script(other, 1, 1 << 20, &st) == -EFAULT);
	for (int i = 0; i < PREFAULT_MAX_STUCK + 2; i++)
		stuck[i] = (struct step){ 0, -1, EAGAIN };
	CHECK(run_script(stuck, PREFAULT_MAX_STUCK + 2, 1 << 20, &st) == -EAGAIN);
	CHECK(st.calls == PREFAULT_MAX_STUCK + 1);
	CHECK(run_script(whole, 1, 0, &st) == 0 && st.calls == 0); /* nothing to do */
}
