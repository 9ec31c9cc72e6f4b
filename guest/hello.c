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
	/* --numa: what the boot info's /numa told the guest. */
	for (uint32_t k = 0; k < info->numa_nodes; k++) {
		const struct fw_numa_node *n = &info->numa[k];

		printf("numa: node %u: [0x%lx, 0x%lx) %lu MiB, vCPUs %u-%u, host node %u, %s\n",
		       k, n->gpa, n->gpa + n->bytes, n->bytes >> 20, n->vcpu0,
		       n->vcpu0 + n->nvcpus - 1, n->host_node, info->numa_policy);
	}
	return 0;
}
