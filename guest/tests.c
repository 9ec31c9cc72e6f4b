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

const struct workload test_workloads[] = {
	{ "exit", "exit N", exit_main, NULL },
	{ "touch", "touch ADDR", touch_main, NULL },
	{ "spin", "spin", spin_main, NULL },
	{ "ud2", "ud2", ud2_main, NULL },
	{ "munmap-touch", "munmap-touch", munmap_touch_main, NULL },
	{ "assert", "assert", assert_main, NULL },
	{ NULL, NULL, NULL, NULL },
};
