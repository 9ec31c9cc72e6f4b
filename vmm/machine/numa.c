/* --numa: the VM's nodes, its RAM in one range per node, vCPUs and workers pinned there, the placement audited. */
#include "internal.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <stdlib.h>
#include <string.h>

#define LIST_BYTES 256 /* a CPU or node list in a message */

/* In enum order; --help lists every row. */
const struct numa_policy_row numa_policies[] = {
	{ NUMA_BIND,
	  "bind",
	  { "mbind MPOL_BIND: from its node or not at", "all (the default)" } },
	{ NUMA_PREFERRED,
	  "preferred",
	  { "mbind MPOL_PREFERRED: from its node while",
	    "it has free memory, then from others" } },
	{ NUMA_FIRST_TOUCH,
	  "first-touch",
	  { "no mbind: the node of the CPU that first",
	    "touches a page (the pinned threads)" } },
};
_Static_assert(ARRAY_SIZE(numa_policies) == NUMA_POLICY_COUNT,
	       "one row per enum numa_policy, in order");

const char *numa_policy_name(unsigned p)
{
	return p < NUMA_POLICY_COUNT ? numa_policies[p].name : "?";
}

/* A vCPU thread as it ran. */
struct numa_thread {
	int cpu_start, cpu_end;
	cpu_set_t allowed;
	int started;
};

/* One guest node: a host node, its range of guest RAM, its vCPUs. */
struct numa_node {
	int host;
	cpu_set_t cpus; /* the host node's CPUs this process may run on */
	unsigned vcpu0, nvcpus;
	uint64_t mem_free;
	uint64_t stride;
	struct mm_numa_count count;
};

struct numa {
	char requested[64];
	enum numa_policy policy;
	int kernel_numa;
	struct mm_numa_host host;
	unsigned nnodes, left_out;
	struct numa_node node[MM_NUMA_MAX_NODES];
	struct gpa_range range[MM_NUMA_MAX_NODES]; /* guest node k's RAM */
	uint64_t align, page_bytes;
	unsigned nvcpus;
	struct numa_thread *vcpu;
	int bound;
	enum numa_audit_when audited;
	int audit_err;
};

void numa_free(struct numa *n)
{
	if (!n)
		return;
	free(n->vcpu);
	free(n);
}

/*
 * Can the VM use host node nd: memory, CPUs this process may run on,
 * memory it may allocate? NULL (and its usable CPUs in *cpus), or why not.
 */
static const char *unusable(const struct mm_numa_node *nd, const cpu_set_t *proc,
			    const cpu_set_t *mems, cpu_set_t *cpus)
{
	CPU_AND(cpus, &nd->cpus, proc);
	if (!nd->mem_total)
		return "has no memory";
	if (!nd->ncpus)
		return "has no CPUs to run its vCPUs on";
	if (!CPU_COUNT(cpus))
		return "has CPUs outside this process's CPU affinity only (taskset, the cgroup's cpuset)";
	if (!CPU_ISSET(nd->id, mems))
		return "is outside this process's allowed memory nodes (the cgroup's cpuset.mems)";
	return NULL;
}

/* A kernel without NUMA: one node 0 that is the whole machine. */
static void one_node_host(struct numa *n, const cpu_set_t *proc)
{
	char text[4096] = "";
	FILE *f = fopen("/proc/meminfo", "re");

	if (f) {
		text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
		fclose(f);
	}
	n->host = (struct mm_numa_host){ .n = 1, .balancing = -1 };
	n->host.node[0] =
		(struct mm_numa_node){ .id = 0,
				       .cpus = *proc,
				       .ncpus = (unsigned)CPU_COUNT(proc),
				       .mem_total = mm_meminfo_bytes(text, "MemTotal"),
				       .mem_free = mm_meminfo_bytes(text, "MemFree"),
				       .huge_free_2m = -1,
				       .huge_free_1g = -1,
				       .huge_nr_2m = -1,
				       .huge_nr_1g = -1 };
}

static int choose_nodes(struct numa *n, const struct vm_config *cfg,
			const cpu_set_t *proc, const cpu_set_t *mems, char *err,
			size_t errlen)
{
	char list[LIST_BYTES];
	cpu_set_t cpus;

	if (cfg->numa_auto) {
		for (unsigned i = 0; i < n->host.n; i++) {
			const struct mm_numa_node *nd = &n->host.node[i];

			if (unusable(nd, proc, mems, &cpus))
				continue;
			if (n->nnodes == cfg->vcpus) {
				n->left_out++; /* one vCPU at least per node */
				continue;
			}
			n->node[n->nnodes++] = (struct numa_node){
				.host = nd->id, .cpus = cpus, .mem_free = nd->mem_free
			};
		}
		if (!n->nnodes) {
			snprintf(
				err, errlen,
				"--numa: no node of this host has memory and CPUs this process may use");
			return -ENODEV;
		}
		return 0;
	}
	for (int id = 0; id < CPU_SETSIZE; id++) {
		const struct mm_numa_node *nd;
		const char *why;

		if (!CPU_ISSET(id, &cfg->numa_nodes))
			continue;
		if (id >= MM_NUMA_MAX_NODES) {
			snprintf(
				err, errlen,
				"--numa=%s: node %d: minivmm places guest RAM on nodes 0 to %d only",
				cfg->numa_arg, id, MM_NUMA_MAX_NODES - 1);
			return -EINVAL;
		}
		nd = mm_numa_node(&n->host, id);
		if (!nd) {
			CPU_ZERO(&cpus);
			for (unsigned i = 0; i < n->host.n; i++)
				CPU_SET(n->host.node[i].id, &cpus);
			snprintf(
				err, errlen,
				"--numa=%s: node %d is not online on this host (online: %s%s)",
				cfg->numa_arg, id,
				mm_cpulist_format(&cpus, list, sizeof(list)),
				n->kernel_numa ? "" : "; this kernel has no NUMA");
			return -EINVAL;
		}
		why = unusable(nd, proc, mems, &cpus);
		if (why) {
			snprintf(err, errlen, "--numa=%s: node %d %s", cfg->numa_arg, id,
				 why);
			return -EINVAL;
		}
		n->node[n->nnodes++] = (struct numa_node){ .host = nd->id,
							   .cpus = cpus,
							   .mem_free = nd->mem_free };
	}
	if (n->nnodes > cfg->vcpus) {
		snprintf(
			err, errlen,
			"--numa=%s: %u nodes need at least %u vCPUs, one or more on each (--vcpus %u)",
			cfg->numa_arg, n->nnodes, n->nnodes, n->nnodes);
		return -EINVAL;
	}
	return 0;
}

int numa_plan(const struct vm_config *cfg, uint64_t page_bytes, struct numa **out,
	      char *err, size_t errlen)
{
	struct numa *n = calloc(1, sizeof(*n));
	int host_nodes[MM_NUMA_MAX_NODES];
	cpu_set_t proc, mems;
	int r;

	*out = NULL;
	if (!n) {
		snprintf(err, errlen, "out of memory planning --numa");
		return -ENOMEM;
	}
	snprintf(n->requested, sizeof(n->requested), "%s", cfg->numa_arg);
	n->policy = (enum numa_policy)cfg->numa_policy;
	n->page_bytes = page_bytes;
	n->align = page_bytes > MVM_RAM_ALIGN_BYTES ? page_bytes : MVM_RAM_ALIGN_BYTES;
	if (sched_getaffinity(0, sizeof(proc), &proc)) {
		r = -errno;
		snprintf(err, errlen, "--numa: sched_getaffinity: %s", strerror(-r));
		goto fail;
	}
	r = mm_numa_read(MM_NUMA_SYSFS, &n->host, err, errlen);
	n->kernel_numa = r == 0;
	if (r == -ENOENT)
		one_node_host(n, &proc);
	else if (r)
		goto fail;
	if (!n->kernel_numa || mm_numa_mems_allowed(&mems)) {
		CPU_ZERO(&mems); /* cannot tell: every node may be used */
		for (unsigned i = 0; i < n->host.n; i++)
			CPU_SET(n->host.node[i].id, &mems);
	}
	r = choose_nodes(n, cfg, &proc, &mems, err, errlen);
	if (r)
		goto fail;
	if (cfg->mem_bytes / n->align < n->nnodes) {
		snprintf(
			err, errlen,
			"--numa: %u nodes need at least %u x %llu MiB of guest RAM (--mem)",
			n->nnodes, n->nnodes, (unsigned long long)(n->align >> 20));
		r = -EINVAL;
		goto fail;
	}
	n->nvcpus = cfg->vcpus;
	for (unsigned k = 0; k < n->nnodes; k++) {
		uint64_t start, end;

		mvm_slice(cfg->mem_bytes, n->nnodes, k, n->align, &start, &end);
		n->range[k] = (struct gpa_range){ start, end - start };
		host_nodes[k] = n->node[k].host;
		n->node[k].stride = mm_numa_audit_stride(end - start, page_bytes);
	}
	/* vCPUs on nodes by the eager workers' rule: vCPU i's thread populates its share. */
	for (unsigned i = 0; i < n->nvcpus; i++) {
		struct mm_numa_share s;

		mm_numa_share(n->range, n->nnodes, n->nvcpus, i, n->align, &s);
		if (!n->node[s.node].nvcpus++)
			n->node[s.node].vcpu0 = i;
	}
	/* Bind fails where the node runs out; preferred and first-touch spill instead. */
	if (n->policy == NUMA_BIND && n->kernel_numa) {
		r = mm_numa_preflight(&n->host, host_nodes, n->range, n->nnodes,
				      cfg->backing, err, errlen);
		if (r)
			goto fail;
	}
	n->vcpu = calloc(n->nvcpus, sizeof(*n->vcpu));
	if (!n->vcpu) {
		snprintf(err, errlen, "out of memory planning --numa");
		r = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < n->nvcpus; i++)
		n->vcpu[i].cpu_start = n->vcpu[i].cpu_end = -1;
	*out = n;
	return 0;
fail:
	numa_free(n);
	return r;
}

int numa_bind_ram(struct numa *n, const struct guest_ram *ram, char *err, size_t errlen)
{
	int mode = n->policy == NUMA_BIND ? MPOL_BIND : MPOL_PREFERRED;

	if (n->policy == NUMA_FIRST_TOUCH || !n->kernel_numa)
		return 0;
	for (unsigned k = 0; k < n->nnodes; k++) {
		void *hva = mm_gpa_to_hva(ram, n->range[k].gpa, n->range[k].bytes);
		int r = hva ? mm_numa_bind(hva, n->range[k].bytes, n->node[k].host, mode)
			    : -EFAULT;

		if (r) {
			snprintf(
				err, errlen,
				"--numa: mbind(%s, node %d) of guest RAM [0x%llx, +%llu MiB): %s",
				mode == MPOL_BIND ? "MPOL_BIND" : "MPOL_PREFERRED",
				n->node[k].host, (unsigned long long)n->range[k].gpa,
				(unsigned long long)(n->range[k].bytes >> 20),
				strerror(-r));
			return r;
		}
	}
	n->bound = 1;
	return 0;
}

void numa_share(const struct numa *n, unsigned nworkers, unsigned i,
		struct mm_numa_share *s)
{
	mm_numa_share(n->range, n->nnodes, nworkers, i, n->align, s);
}

unsigned numa_vcpu_node(const struct numa *n, unsigned vcpu)
{
	for (unsigned k = 0; k < n->nnodes; k++)
		if (vcpu >= n->node[k].vcpu0 &&
		    vcpu - n->node[k].vcpu0 < n->node[k].nvcpus)
			return k;
	return 0;
}

void numa_node_vcpus(const struct numa *n, unsigned k, unsigned *vcpu0, unsigned *nvcpus)
{
	*vcpu0 = n->node[k].vcpu0;
	*nvcpus = n->node[k].nvcpus;
}

int numa_thread_attr(const struct numa *n, unsigned k, pthread_attr_t *attr)
{
	int r = pthread_attr_init(attr);

	if (r)
		return -r;
	r = pthread_attr_setaffinity_np(attr, sizeof(cpu_set_t), &n->node[k].cpus);
	if (r)
		pthread_attr_destroy(attr);
	return -r;
}

void numa_note_vcpu(struct numa *n, unsigned i, int start)
{
	struct numa_thread *t;

	if (!n || i >= n->nvcpus)
		return;
	t = &n->vcpu[i];
	if (start) {
		t->started = 1;
		t->cpu_start = sched_getcpu();
		if (sched_getaffinity(0, sizeof(t->allowed), &t->allowed))
			CPU_ZERO(&t->allowed);
	} else {
		t->cpu_end = sched_getcpu(); /* rseq or the vDSO: no system call */
	}
}

void numa_audit(struct numa *n, const struct guest_ram *ram, enum numa_audit_when when)
{
	if (!n || n->audited || !ram->size)
		return;
	n->audited = when;
	if (!n->kernel_numa) {
		n->audit_err = -ENOSYS;
		return;
	}
	for (unsigned k = 0; k < n->nnodes && !n->audit_err; k++) {
		uint8_t *hva = mm_gpa_to_hva(ram, n->range[k].gpa, n->range[k].bytes);

		n->audit_err = hva ? mm_numa_audit(hva, n->range[k].bytes,
						   n->node[k].stride, &n->node[k].count)
				   : -EFAULT;
	}
}

const struct numa *vm_numa(const struct vm *vm)
{
	return vm->numa;
}

int numa_facts(const struct numa *n, struct numa_facts *f)
{
	if (!n)
		return -ENOENT;
	*f = (struct numa_facts){ .requested = n->requested,
				  .policy = n->policy,
				  .nodes = n->nnodes,
				  .host_nodes = n->host.n,
				  .left_out = n->left_out,
				  .kernel_numa = n->kernel_numa,
				  .balancing = n->host.balancing,
				  .bound = n->bound,
				  .audited = n->audited,
				  .audit_err = n->audit_err,
				  .page_bytes = n->page_bytes };
	return 0;
}

int numa_node_facts(const struct numa *n, unsigned k, struct numa_node_facts *f)
{
	if (!n || k >= n->nnodes)
		return -ENOENT;
	*f = (struct numa_node_facts){ .host = n->node[k].host,
				       .gpa = n->range[k].gpa,
				       .bytes = n->range[k].bytes,
				       .cpus = &n->node[k].cpus,
				       .vcpu0 = n->node[k].vcpu0,
				       .nvcpus = n->node[k].nvcpus,
				       .mem_free = n->node[k].mem_free,
				       .stride = n->node[k].stride,
				       .count = &n->node[k].count };
	return 0;
}

int numa_vcpu_facts(const struct numa *n, unsigned i, struct numa_vcpu_facts *f)
{
	if (!n || i >= n->nvcpus)
		return -ENOENT;
	*f = (struct numa_vcpu_facts){ .node = numa_vcpu_node(n, i),
				       .cpu_start = n->vcpu[i].cpu_start,
				       .cpu_end = n->vcpu[i].cpu_end,
				       .allowed = &n->vcpu[i].allowed,
				       .started = n->vcpu[i].started };
	return 0;
}
