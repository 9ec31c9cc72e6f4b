/* Boot info: the flattened device tree handed to the guest (layout in minivmm_abi.h). */
#include "boot.h"

#include <errno.h>
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>

#define TRY(expr)                  \
	do {                       \
		int r_ = (expr);   \
		if (r_ < 0)        \
			return r_; \
	} while (0)

/* The guest arguments twice: exact (a string list) and joined by spaces (bootargs). */
static int chosen_args(void *fdt, int argc, char *const *argv)
{
	size_t total = 0;
	char *list, *joined;

	for (int i = 0; i < argc; i++)
		total += strlen(argv[i]) + 1;
	if (total > MVM_BOOTINFO_MAX)
		return -FDT_ERR_NOSPACE;
	if (argc) {
		TRY(fdt_property_placeholder(fdt, MVM_FDT_ARGS, (int)total,
					     (void **)&list));
		for (int i = 0; i < argc; i++)
			list = stpcpy(list, argv[i]) + 1;
	}
	TRY(fdt_property_placeholder(fdt, MVM_FDT_BOOTARGS, argc ? (int)total : 1,
				     (void **)&joined));
	*joined = '\0';
	for (int i = 0; i < argc; i++) {
		joined = stpcpy(joined, argv[i]);
		*joined++ = i + 1 < argc ? ' ' : '\0';
	}
	return 0;
}

/* --numa: one node@K per guest node, with its range, vCPUs and host node. */
static int numa_nodes(void *fdt, const struct numa *n)
{
	struct numa_facts x;
	struct numa_node_facts nd;
	char name[40];

	if (numa_facts(n, &x))
		return 0;
	TRY(fdt_begin_node(fdt, MVM_FDT_NUMA));
	TRY(fdt_property_u32(fdt, "#address-cells", 2));
	TRY(fdt_property_u32(fdt, "#size-cells", 2));
	TRY(fdt_property_string(fdt, MVM_FDT_NUMA_POLICY, numa_policy_name(x.policy)));
	for (unsigned k = 0; !numa_node_facts(n, k, &nd); k++) {
		fdt64_t reg[2] = { cpu_to_fdt64(nd.gpa), cpu_to_fdt64(nd.bytes) };
		fdt32_t vcpus[2] = { cpu_to_fdt32(nd.vcpu0), cpu_to_fdt32(nd.nvcpus) };

		snprintf(name, sizeof(name), "node@%u", k);
		TRY(fdt_begin_node(fdt, name));
		TRY(fdt_property(fdt, "reg", reg, sizeof(reg)));
		TRY(fdt_property(fdt, MVM_FDT_NUMA_VCPUS, vcpus, sizeof(vcpus)));
		TRY(fdt_property_u32(fdt, MVM_FDT_NUMA_HOST, (uint32_t)nd.host));
		TRY(fdt_end_node(fdt));
	}
	return fdt_end_node(fdt);
}

static int build(void *buf, size_t size, const struct bootinfo *b)
{
	fdt64_t reg[2] = { cpu_to_fdt64(0), cpu_to_fdt64(b->mem_bytes) };
	char name[32];

	TRY(fdt_create(buf, (int)size));
	TRY(fdt_finish_reservemap(buf));
	TRY(fdt_begin_node(buf, ""));
	TRY(fdt_property_string(buf, "compatible", MVM_FDT_COMPATIBLE));
	TRY(fdt_property_u32(buf, "#address-cells", 2));
	TRY(fdt_property_u32(buf, "#size-cells", 2));
	/* The image's version: its firmware checks for its own (include/minivmm_abi.h). */
	TRY(fdt_property_u32(buf, MVM_FDT_ABI_VERSION,
			     b->abi ? b->abi : MVM_ABI_VERSION));

	TRY(fdt_begin_node(buf, MVM_FDT_MEMORY));
	TRY(fdt_property_string(buf, "device_type", "memory"));
	TRY(fdt_property(buf, "reg", reg, sizeof(reg)));
	TRY(fdt_end_node(buf));

	TRY(fdt_begin_node(buf, MVM_FDT_CPUS));
	TRY(fdt_property_u32(buf, "#address-cells", 1));
	TRY(fdt_property_u32(buf, "#size-cells", 0));
	for (unsigned i = 0; i < b->vcpus; i++) {
		snprintf(name, sizeof(name), "cpu@%u", i);
		TRY(fdt_begin_node(buf, name));
		TRY(fdt_property_string(buf, "device_type", "cpu"));
		TRY(fdt_property_u32(buf, "reg", i));
		if (b->numa) {
			struct numa_vcpu_facts f;

			if (numa_vcpu_facts(b->numa, i, &f))
				return -EINVAL;
			TRY(fdt_property_u32(buf, MVM_FDT_NUMA_NODE_ID, f.node));
		}
		TRY(fdt_end_node(buf));
	}
	TRY(fdt_end_node(buf));

	TRY(fdt_begin_node(buf, MVM_FDT_CHOSEN));
	TRY(fdt_property_u32(buf, MVM_FDT_TSC_KHZ, b->tsc_khz));
	if (b->eager_touch)
		TRY(fdt_property_string(buf, MVM_FDT_EAGER, MVM_FDT_EAGER_TOUCH));
	if (b->snapshot)
		TRY(fdt_property_u32(buf, MVM_FDT_SNAPSHOT, 1));
	TRY(fdt_property_string(buf, MVM_FDT_PAGING,
				b->tdp ? MVM_FDT_PAGING_TDP : MVM_FDT_PAGING_SHADOW));
	TRY(chosen_args(buf, b->argc, b->argv));
	TRY(fdt_end_node(buf));
	TRY(numa_nodes(buf, b->numa));

	TRY(fdt_end_node(buf));
	return fdt_finish(buf);
}

/*
 * Built in a heap buffer and copied: fdt_create() clears the whole buffer
 * it is given, and clearing the ~1 MiB boot-info area in place would make
 * the host back 240 guest pages nobody uses.
 */
int bootinfo_build(void *buf, size_t size, const struct bootinfo *b, char *err,
		   size_t errlen)
{
	size_t len = 4096;
	int r = -FDT_ERR_NOSPACE;
	void *tmp = NULL;

	for (; r == -FDT_ERR_NOSPACE && len <= size; len *= 2) {
		void *p = realloc(tmp, len);

		if (!p) {
			free(tmp);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		tmp = p;
		r = build(tmp, len, b);
	}
	if (r >= 0)
		memcpy(buf, tmp, fdt_totalsize(tmp));
	free(tmp);
	if (r >= 0)
		return 0;
	snprintf(err, errlen, "%s", fdt_strerror(r));
	return r == -FDT_ERR_NOSPACE ? -ENOSPC : -EINVAL;
}
