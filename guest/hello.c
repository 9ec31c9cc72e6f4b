/* hello: print what the guest learned from the boot info. */
#include "guest.h"

int hello_main(int argc, const char *const *argv, const struct fw_info *info)
{
	printf("hello from the minivmm guest\n");
	printf("memory: %lu MiB (%lu bytes)\n", info->mem_bytes >> 20, info->mem_bytes);
	printf("vcpus: %u\n", info->vcpus);
	printf("tsc: %u kHz\n", info->tsc_khz);
	printf("args: %d", argc);
	for (int i = 0; i < argc; i++)
		printf(" [%s]", argv[i]);
	printf("\n");
	return 0;
}
