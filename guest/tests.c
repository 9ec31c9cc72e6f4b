/* Workloads that exist to test the VMM: exit codes, faults, runaway loops. */
#include "guest.h"

/* exit N: exit with status N. */
static int exit_main(int argc, const char *const *argv, const struct fw_info *info)
{
	uint64_t n = 0;

	(void)info;
	if (argc != 2 || parse_u64(argv[1], &n) || n > 255)
		usage_exit("exit N (N from 0 to 255)");
	return (int)n;
}

/* touch ADDR: write to an address, typically one that is not mapped. */
static int touch_main(int argc, const char *const *argv, const struct fw_info *info)
{
	uint64_t addr;

	(void)info;
	if (argc != 2 || parse_u64(argv[1], &addr))
		usage_exit("touch ADDR");
	printf("touching %p\n", (void *)addr);
	*(volatile char *)addr = 1;
	return 0;
}

/* spin: never exit (the VMM's --timeout ends it). */
static int spin_main(int argc, const char *const *argv, const struct fw_info *info)
{
	(void)argc;
	(void)argv;
	(void)info;
	printf("spinning\n");
	for (;;)
		__asm__ volatile("" ::: "memory");
	return 0;
}

/* ud2: execute an invalid instruction at CPL3. */
static int ud2_main(int argc, const char *const *argv, const struct fw_info *info)
{
	(void)argc;
	(void)argv;
	(void)info;
	__asm__ volatile("ud2");
	return 0;
}

/* munmap-touch: map, touch, unmap, touch again (must fault). */
static int munmap_touch_main(int argc, const char *const *argv,
			     const struct fw_info *info)
{
	volatile char *p = mmap_anon(8 * 4096, 0);

	(void)argc;
	(void)argv;
	(void)info;
	if (!p)
		FAIL("mmap failed");
	for (int i = 0; i < 8; i++)
		p[i * 4096] = 1;
	if (munmap((void *)p, 8 * 4096))
		FAIL("munmap failed");
	printf("touching unmapped %p\n", (void *)(p + 4096));
	p[4096] = 2;
	return 0;
}

/* assert: a guest-detected failure (the abort path from CPL3). */
static int assert_main(int argc, const char *const *argv, const struct fw_info *info)
{
	(void)argc;
	(void)argv;
	(void)info;
	FAIL("deliberate failure for the test suite");
}

/* flood MIB: print MIB of console output (the VMM keeps at most 16 MiB). */
static int flood_main(int argc, const char *const *argv, const struct fw_info *info)
{
	uint64_t mib;

	(void)info;
	if (argc != 2 || parse_u64(argv[1], &mib))
		usage_exit("flood MIB");
	static char chunk[MVM_CONSOLE_MAX_BYTES];

	/* Whole 4 KiB buffers of 64-byte lines: one exit each, as fast as a guest can. */
	for (uint64_t i = 0; i < mib * 256; i++) {
		for (int l = 0; l < (int)sizeof(chunk) / 64; l++) {
			char line[65]; /* 64 bytes and the NUL, which is not copied */

			fw_snprintf(line, sizeof(line), "%-63s\n", "");
			fw_snprintf(line, sizeof(line) - 1,
				    "flood %010lu:%02d the guest keeps printing", i, l);
			line[strlen(line)] = ' ';
			line[63] = '\n';
			memcpy(chunk + l * 64, line, 64);
		}
		write_out(chunk, sizeof(chunk));
	}
	return 0;
}

/* exit-while-spinning: vCPU 0 exits while every other vCPU spins at CPL3. */
static int exit_spin_main(const struct ctx *c)
{
	static volatile uint32_t spinning;

	if (c->cpu != 0) {
		__atomic_add_fetch(&spinning, 1, __ATOMIC_RELEASE);
		for (;;)
			__asm__ volatile("pause" ::: "memory");
	}
	while (__atomic_load_n(&spinning, __ATOMIC_ACQUIRE) + 1 < c->info->vcpus)
		__asm__ volatile("pause" ::: "memory");
	printf("%u vCPU%s spinning; vCPU 0 exits\n", spinning, spinning == 1 ? "" : "s");
	return 0;
}

/* Asks for a snapshot again and again: the VMM honours the first and bounds the rest. */
static int snapshot_storm_main(int argc, const char *const *argv,
			       const struct fw_info *info)
{
	struct ctx c = { .cpu = 0, .argc = argc, .argv = argv, .info = info };
	uint64_t n = 0, taken = 0, refused = 0;

	if (argc != 2 || parse_u64(argv[1], &n))
		usage_exit("snapshot-storm N");
	for (uint64_t i = 0; i < n; i++) {
		uint32_t r = snapshot_take(&c, NULL, 0, i);

		taken += r == MVM_SNAP_TAKEN || r == MVM_SNAP_RESTORED;
		refused += r == MVM_SNAP_REFUSED;
	}
	printf("snapshot-storm: %lu asked, %lu taken, %lu refused\n", n, taken, refused);
	return 0;
}

const struct workload test_workloads[] = {
	{ "flood", "flood MIB            print MIB MiB of console output", flood_main,
	  NULL, 0 },
	{ "demand",
	  "demand PAGES         touch PAGES demand-mapped pages: one guest fault each",
	  demand_main, NULL, 0 },
	{ "exit-while-spinning",
	  "exit-while-spinning  vCPU 0 exits while the others spin at CPL3", NULL,
	  exit_spin_main, 0 },
	{ "exit", "exit N               exit with status N", exit_main, NULL, 0 },
	{ "touch", "touch ADDR           write to ADDR (an unmapped one: a crash)",
	  touch_main, NULL, 0 },
	{ "spin", "spin                 never exit (--timeout or Ctrl-C ends it)",
	  spin_main, NULL, 0 },
	{ "ud2", "ud2                  an invalid instruction at CPL3: a crash", ud2_main,
	  NULL, 0 },
	{ "munmap-touch", "munmap-touch         touch a page after munmap: a crash",
	  munmap_touch_main, NULL, 0 },
	{ "munmap-remap",
	  "munmap-remap         remap part of a mapping, touch past it: a crash",
	  munmap_remap_main, NULL, 0 },
	{ "demand-paths",
	  "demand-paths         every demand-fault path of the firmware, checked",
	  demand_paths_main, NULL, 0 },
	{ "fault-mix",
	  "fault-mix            interleaved mappings, then the same pages again",
	  fault_mix_main, NULL, 0 },
	{ "smp-unmap",
	  "smp-unmap            (--vcpus 2) touch a mapping the other vCPU unmapped",
	  NULL, smp_unmap_main, 0 },
	{ "smp-orphan",
	  "smp-orphan           (--vcpus 2) free pages faulted into an unmapped mapping",
	  NULL, smp_orphan_main, 0 },
	{ "snapshot-storm",
	  "snapshot-storm N     ask for a snapshot N times (the first is honoured)",
	  snapshot_storm_main, NULL, 1 },
	{ "assert", "assert               a failed assert in the guest: an abort",
	  assert_main, NULL, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};
