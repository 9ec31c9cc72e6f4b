/* Boot info: the flattened device tree handed to the guest (layout in minivmm_abi.h). */
#include "vmm.h"

#include <libfdt.h>
#include <string.h>

#define TRY(expr)                  \
	do {                       \
		int r_ = (expr);   \
		if (r_ < 0)        \
			return r_; \
	} while (0)

/* The guest arguments twice: exact (a string list) and joined by spaces (bootargs). */
static int chosen_args(void *fdt, int argc, char **argv)
{
	size_t total = 0;
	char *list, *joined;

	for (int i = 0; i < argc; i++)
		total += strlen(argv[i]) + 1;
	if (total > MVM_BOOTINFO_MAX)
		return -FDT_ERR_NOSPACE;
	if (argc) {
		TRY(fdt_property_placeholder(fdt, "minivmm,args", (int)total,
					     (void **)&list));
		for (int i = 0; i < argc; i++)
			list = stpcpy(list, argv[i]) + 1;
	}
	TRY(fdt_property_placeholder(fdt, "bootargs", argc ? (int)total : 1,
				     (void **)&joined));
	*joined = '\0';
	for (int i = 0; i < argc; i++) {
		joined = stpcpy(joined, argv[i]);
		*joined++ = i + 1 < argc ? ' ' : '\0';
	}
	return 0;
}

int bootinfo_build(void *buf, size_t size, uint64_t mem_bytes, unsigned vcpus,
		   uint32_t tsc_khz, int eager_touch, int argc, char **argv)
{
	fdt64_t reg[2] = { cpu_to_fdt64(0), cpu_to_fdt64(mem_bytes) };
	char name[32];

	TRY(fdt_create(buf, (int)size));
	TRY(fdt_finish_reservemap(buf));
	TRY(fdt_begin_node(buf, ""));
	TRY(fdt_property_string(buf, "compatible", "minivmm"));
	TRY(fdt_property_u32(buf, "#address-cells", 2));
	TRY(fdt_property_u32(buf, "#size-cells", 2));
	TRY(fdt_property_u32(buf, "minivmm,abi-version", MVM_ABI_VERSION));

	TRY(fdt_begin_node(buf, "memory@0"));
	TRY(fdt_property_string(buf, "device_type", "memory"));
	TRY(fdt_property(buf, "reg", reg, sizeof(reg)));
	TRY(fdt_end_node(buf));

	TRY(fdt_begin_node(buf, "cpus"));
	TRY(fdt_property_u32(buf, "#address-cells", 1));
	TRY(fdt_property_u32(buf, "#size-cells", 0));
	for (unsigned i = 0; i < vcpus; i++) {
		snprintf(name, sizeof(name), "cpu@%u", i);
		TRY(fdt_begin_node(buf, name));
		TRY(fdt_property_string(buf, "device_type", "cpu"));
		TRY(fdt_property_u32(buf, "reg", i));
		TRY(fdt_end_node(buf));
	}
	TRY(fdt_end_node(buf));

	TRY(fdt_begin_node(buf, "chosen"));
	TRY(fdt_property_u32(buf, "minivmm,tsc-khz", tsc_khz));
	if (eager_touch)
		TRY(fdt_property_string(buf, "minivmm,eager", "touch"));
	TRY(chosen_args(buf, argc, argv));
	TRY(fdt_end_node(buf));

	TRY(fdt_end_node(buf));
	return fdt_finish(buf);
}
