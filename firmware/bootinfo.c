/* Boot info: read the flattened device tree the VMM built, with libfdt. */
#include "kernel.h"

#include <libfdt.h>

struct boot fw_boot;

_Noreturn static void bad(const char *what, int err)
{
	char msg[160];

	fw_snprintf(msg, sizeof(msg), "boot info: %s (%s)", what,
		    err ? fdt_strerror(err) : "missing");
	hc_abort_frame(__FILE__, __LINE__, msg, 0, 0);
}

static uint32_t prop_u32(const void *fdt, int node, const char *name)
{
	int len;
	const fdt32_t *p = fdt_getprop(fdt, node, name, &len);

	if (!p || len != sizeof(*p))
		bad(name, p ? -FDT_ERR_BADVALUE : len);
	return fdt32_ld(p);
}

/* Whether string property name of node is value; a missing property is not. */
static int prop_is(const void *fdt, int node, const char *name, const char *value)
{
	int len;
	const char *p = fdt_getprop(fdt, node, name, &len);

	return p && len == (int)strlen(value) + 1 && !strcmp(p, value);
}

static void parse_args(const void *fdt, int chosen)
{
	int len, off = 0;
	const char *p = fdt_getprop(fdt, chosen, MVM_FDT_ARGS, &len);

	fw_boot.argc = 0;
	if (!p)
		return;
	if (len > (int)sizeof(fw_boot.argbuf) || p[len - 1] != '\0')
		bad(MVM_FDT_ARGS " too long or not NUL-terminated", -FDT_ERR_BADVALUE);
	memcpy(fw_boot.argbuf, p, (size_t)len);
	while (off < len) {
		if (fw_boot.argc == FW_MAX_ARGS)
			bad("more than FW_MAX_ARGS guest arguments", -FDT_ERR_BADVALUE);
		fw_boot.argv[fw_boot.argc++] = fw_boot.argbuf + off;
		off += (int)strlen(fw_boot.argbuf + off) + 1;
	}
	fw_boot.argv[fw_boot.argc] = NULL;
}

/*
 * /numa, if there: each node's range and vCPU run, checked against the
 * rules of minivmm_abi.h (contiguous ranges from 0 to mem_bytes, vCPU runs
 * in order covering every vCPU, each cpu's numa-node-id its run's node). It
 * is the node after /chosen: looking it up by path would walk the whole
 * tree, some 8000 emulated instructions on PVM, when it is not there.
 */
static void parse_numa(const void *fdt, int chosen)
{
	int numa = fdt_next_subnode(fdt, chosen), node, cpus, len;
	uint64_t next_gpa = 0;
	uint32_t next_vcpu = 0, k = 0;
	const char *policy;

	fw_boot.numa_nodes = 0;
	fw_boot.numa_policy[0] = '\0';
	if (numa == -FDT_ERR_NOTFOUND)
		return;
	if (numa < 0)
		bad("/" MVM_FDT_NUMA, numa);
	if (strcmp(fdt_get_name(fdt, numa, NULL), MVM_FDT_NUMA))
		bad("the node after /" MVM_FDT_CHOSEN " is not /" MVM_FDT_NUMA,
		    -FDT_ERR_BADSTRUCTURE);
	policy = fdt_getprop(fdt, numa, MVM_FDT_NUMA_POLICY, &len);
	if (!policy || len < 2 || len > (int)sizeof(fw_boot.numa_policy) ||
	    policy[len - 1] != '\0')
		bad("/" MVM_FDT_NUMA " " MVM_FDT_NUMA_POLICY, -FDT_ERR_BADVALUE);
	memcpy(fw_boot.numa_policy, policy, (size_t)len);
	fdt_for_each_subnode(node, fdt, numa)
	{
		struct fw_numa_node *n = &fw_boot.numa[k];
		const fdt64_t *reg = fdt_getprop(fdt, node, "reg", &len);
		const fdt32_t *v;

		if (k == MVM_NUMA_MAX_NODES)
			bad("/" MVM_FDT_NUMA " has more than MVM_NUMA_MAX_NODES nodes",
			    -FDT_ERR_BADVALUE);
		if (!reg || len != 2 * sizeof(*reg))
			bad("/" MVM_FDT_NUMA " node reg is not <gpa size>",
			    -FDT_ERR_BADVALUE);
		v = fdt_getprop(fdt, node, MVM_FDT_NUMA_VCPUS, &len);
		if (!v || len != 2 * sizeof(*v))
			bad("/" MVM_FDT_NUMA " node " MVM_FDT_NUMA_VCPUS
			    " is not <first count>",
			    -FDT_ERR_BADVALUE);
		n->gpa = fdt64_ld(&reg[0]);
		n->bytes = fdt64_ld(&reg[1]);
		n->vcpu0 = fdt32_ld(&v[0]);
		n->nvcpus = fdt32_ld(&v[1]);
		n->host_node = prop_u32(fdt, node, MVM_FDT_NUMA_HOST);
		if (n->gpa != next_gpa || !n->bytes ||
		    n->bytes > fw_boot.mem_bytes - n->gpa)
			bad("/" MVM_FDT_NUMA " ranges do not follow one another over RAM",
			    -FDT_ERR_BADVALUE);
		if (n->vcpu0 != next_vcpu || !n->nvcpus ||
		    n->nvcpus > fw_boot.vcpus - n->vcpu0)
			bad("/" MVM_FDT_NUMA " vCPU runs do not follow one another",
			    -FDT_ERR_BADVALUE);
		next_gpa = n->gpa + n->bytes;
		next_vcpu = n->vcpu0 + n->nvcpus;
		k++;
	}
	if (!k || next_gpa != fw_boot.mem_bytes || next_vcpu != fw_boot.vcpus)
		bad("/" MVM_FDT_NUMA " does not cover all of RAM and every vCPU",
		    -FDT_ERR_BADVALUE);
	fw_boot.numa_nodes = k;
	cpus = fdt_path_offset(fdt, "/" MVM_FDT_CPUS);
	fdt_for_each_subnode(node, fdt, cpus)
	{
		uint32_t i = prop_u32(fdt, node, "reg"),
			 id = prop_u32(fdt, node, MVM_FDT_NUMA_NODE_ID);

		if (id >= k || i < fw_boot.numa[id].vcpu0 ||
		    i - fw_boot.numa[id].vcpu0 >= fw_boot.numa[id].nvcpus)
			bad("a cpu's " MVM_FDT_NUMA_NODE_ID
			    " is not the node of its vCPU run",
			    -FDT_ERR_BADVALUE);
	}
}

void bootinfo_parse(const void *fdt)
{
	int err = fdt_check_header(fdt), node, len, n = 0;
	const fdt64_t *reg;

	if (err)
		bad("bad FDT header", err);
	if (fdt_totalsize(fdt) > MVM_BOOTINFO_MAX)
		bad("FDT larger than the boot info area", -FDT_ERR_TRUNCATED);
	if (prop_u32(fdt, 0, MVM_FDT_ABI_VERSION) != MVM_ABI_VERSION)
		bad("ABI version differs from the firmware's", -FDT_ERR_BADVERSION);

	node = fdt_path_offset(fdt, "/" MVM_FDT_MEMORY);
	if (node < 0)
		bad("/" MVM_FDT_MEMORY, node);
	reg = fdt_getprop(fdt, node, "reg", &len);
	if (!reg || len != 2 * sizeof(*reg) || fdt64_ld(&reg[0]) != 0)
		bad("/" MVM_FDT_MEMORY " reg is not <0 size> with 2 address cells",
		    -FDT_ERR_BADVALUE);
	fw_boot.mem_bytes = fdt64_ld(&reg[1]);

	node = fdt_path_offset(fdt, "/" MVM_FDT_CPUS);
	if (node < 0)
		bad("/" MVM_FDT_CPUS, node);
	fdt_for_each_subnode(err, fdt, node) n++;
	if (n == 0 || n > FW_MAX_VCPUS)
		bad("/" MVM_FDT_CPUS " has no or too many cpu nodes", -FDT_ERR_BADVALUE);
	fw_boot.vcpus = (uint32_t)n;

	node = fdt_path_offset(fdt, "/" MVM_FDT_CHOSEN);
	if (node < 0)
		bad("/" MVM_FDT_CHOSEN, node);
	fw_boot.tsc_khz = prop_u32(fdt, node, MVM_FDT_TSC_KHZ);
	fw_boot.eager_touch = prop_is(fdt, node, MVM_FDT_EAGER, MVM_FDT_EAGER_TOUCH);
	fw_boot.snapshot = fdt_getprop(fdt, node, MVM_FDT_SNAPSHOT, NULL) != NULL;
	fw_boot.tdp = prop_is(fdt, node, MVM_FDT_PAGING, MVM_FDT_PAGING_TDP);
	parse_args(fdt, node);
	parse_numa(fdt, node);
}
