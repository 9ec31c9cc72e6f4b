/*
 * mm/numa: the host's NUMA nodes (sysfs), guest RAM split over them,
 * checked against what each can hold, bound to them (mbind) and audited
 * (move_pages). Uses backing/ and the base.
 */
#ifndef MINIVMM_MM_NUMA_H
#define MINIVMM_MM_NUMA_H

#include "backing.h"

/* ---- numa.c: the host's NUMA nodes, guest RAM placed on them and audited -- */

#define MM_NUMA_SYSFS	      "/sys/devices/system/node"
#define MM_NUMA_MAX_NODES     64    /* host node ids minivmm places RAM on: 0..63 */
#define MM_NUMA_AUDIT_SAMPLES 65536 /* pages asked about per range, at most */

/* One online host node, as sysfs describes it. */
struct mm_numa_node {
	int id;				      /* nodeN */
	cpu_set_t cpus;			      /* its cpulist */
	unsigned ncpus;			      /* CPUs in it */
	uint64_t mem_total, mem_free;	      /* its meminfo's MemTotal and MemFree */
	long long huge_free_2m, huge_free_1g; /* its pools' free_hugepages; -1 unknown */
	long long huge_nr_2m, huge_nr_1g;     /* ... and nr_hugepages */
};

struct mm_numa_host {
	unsigned n; /* online nodes with ids below MM_NUMA_MAX_NODES, in id order */
	struct mm_numa_node node[MM_NUMA_MAX_NODES];
	unsigned skipped; /* online nodes with larger ids (not usable) */
	int balancing;	  /* /proc/sys/kernel/numa_balancing; -1 unknown */
};

/*
 * Read the online nodes under root (MM_NUMA_SYSFS; the unit tests pass a
 * tree of their own): root/online, then each nodeN's cpulist, meminfo and
 * hugepages/hugepages-{2048,1048576}kB/{free,nr}_hugepages. 0, -ENOENT when
 * root/online is missing (a kernel without CONFIG_NUMA), or -EINVAL (a
 * malformed file) / -EIO (a node's file missing or unreadable) / -errno
 * with err set.
 */
int mm_numa_read(const char *root, struct mm_numa_host *h, char *err, size_t errlen);
const struct mm_numa_node *mm_numa_node(const struct mm_numa_host *h,
					int id); /* NULL: not online */

/*
 * A list in sysfs syntax ("0-3,8,10-11", what cpulist and online hold; a
 * trailing newline is allowed) into set: the number of members, or -EINVAL
 * (bad syntax, a descending range, a number >= CPU_SETSIZE). "" is 0.
 * Node lists use the same syntax and type. Pure.
 */
int mm_cpulist_parse(const char *s, cpu_set_t *set);
/* set in the same syntax ("0-3,8"; "" when empty), truncated to len. Returns buf. */
char *mm_cpulist_format(const cpu_set_t *set, char *buf, size_t len);
/* Field key ("MemFree") of a node's meminfo text ("Node 0 MemFree:  12 kB") in bytes; 0 when absent. */
uint64_t mm_node_meminfo_bytes(const char *text, const char *key);

/*
 * Worker i of nworkers over the per-node ranges (contiguous, in order):
 * with at least as many workers as ranges, range k gets workers [k *
 * nworkers / nranges, (k + 1) * nworkers / nranges) (at least one) and
 * each the mvm_slice of it in align units; with fewer, worker i covers the
 * whole ranges [i * nranges / nworkers, (i + 1) * nranges / nworkers).
 * vCPUs are placed on nodes by the same rule. Pure.
 */
struct mm_numa_share {
	uint64_t gpa, bytes;
	unsigned node;	/* the first range it covers: where the worker runs */
	unsigned nodes; /* ranges it covers: 1 unless workers are fewer than ranges */
};
void mm_numa_share(const struct gpa_range *ranges, unsigned nranges, unsigned nworkers,
		   unsigned i, uint64_t align, struct mm_numa_share *s);

/*
 * Can host node nodes[k] hold ranges[k] (each node once) of backing b:
 * MemFree for 4 KiB and THP memory, free pages of its hugetlb pool for the
 * hugetlb backings? 0, or -ENOMEM with the node, the numbers and what to do
 * in err. Pure.
 */
int mm_numa_preflight(const struct mm_numa_host *h, const int *nodes,
		      const struct gpa_range *ranges, unsigned n,
		      const struct mm_backend *b, char *err, size_t errlen);

/*
 * mbind(2) [hva, hva + len) to host node `node`, mode MPOL_BIND (pages
 * come from that node or not at all) or MPOL_PREFERRED (from it while it
 * has them). Before anything touches it: pages already backed stay where
 * they are. 0 or -errno (-ENOSYS: a kernel without NUMA).
 */
int mm_numa_bind(void *hva, uint64_t len, int node, int mode);
/* The nodes this process may allocate on (get_mempolicy MPOL_F_MEMS_ALLOWED: its cpuset). 0 or -errno. */
int mm_numa_mems_allowed(cpu_set_t *nodes);

/* Where the sampled pages of a range are. */
struct mm_numa_count {
	uint64_t sampled;		/* pages asked about */
	uint64_t absent;		/* not backed: never touched, or the zero page */
	uint64_t on[MM_NUMA_MAX_NODES]; /* backed on host node i */
	uint64_t elsewhere;		/* on a node with a larger id */
};
/* One page in every stride bytes: every page of len, or MM_NUMA_AUDIT_SAMPLES spread over it. Pure. */
uint64_t mm_numa_audit_stride(uint64_t len, uint64_t page_bytes);
/*
 * Ask move_pages(2), with no target nodes (so nothing moves), where the
 * page at every stride bytes of [hva, hva + len) is, and add the answers
 * to *c. No allocation (a sandboxed thread may call it). 0 or -errno
 * (-ENOSYS: a kernel without NUMA).
 */
int mm_numa_audit(uint8_t *hva, uint64_t len, uint64_t stride, struct mm_numa_count *c);

#endif /* MINIVMM_MM_NUMA_H */
