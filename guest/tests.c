/* Workloads that exist to test the VMM: exit codes, faults, runaway loops. */
#include "guest.h"

/* exit N: exit with status N. */
static int exit_main(int argc, const char *const *argv, const struct fw_info *info)
{
	uint64_t n = 0;

	(void)info;
	if (argc != 2 || parse_u64(argv[1], &n) || n > 255)
		FAIL("usage: exit N (0-255)");
	return (int)n;
}

/* touch ADDR: write to an address, typically one that is not mapped. */
static int touch_main(int argc, const char *const *argv, const struct fw_info *info)
{
	uint64_t addr;

	(void)info;
	if (argc != 2 || parse_u64(argv[1], &addr))
		FAIL("usage: touch ADDR");
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
		FAIL("usage: flood MIB");
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
	printf("%u vCPUs spinning; vCPU 0 exits\n", spinning);
	return 0;
}

const struct workload test_workloads[] = {
	{ "flood", "flood MIB", flood_main, NULL },
	{ "demand", "demand PAGES", demand_main, NULL },
	{ "exit-while-spinning", "exit-while-spinning", NULL, exit_spin_main },
	{ "exit", "exit N", exit_main, NULL },
	{ "touch", "touch ADDR", touch_main, NULL },
	{ "spin", "spin", spin_main, NULL },
	{ "ud2", "ud2", ud2_main, NULL },
	{ "munmap-touch", "munmap-touch", munmap_touch_main, NULL },
	{ "munmap-remap", "munmap-remap", munmap_remap_main, NULL },
	{ "demand-paths", "demand-paths", demand_paths_main, NULL },
	{ "fault-mix", "fault-mix", fault_mix_main, NULL },
	{ "smp-unmap", "smp-unmap   (--vcpus 2)", NULL, smp_unmap_main },
	{ "smp-orphan", "smp-orphan   (--vcpus 2)", NULL, smp_orphan_main },
	{ "assert", "assert", assert_main, NULL },
	{ NULL, NULL, NULL, NULL },
};
