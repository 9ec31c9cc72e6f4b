/* NUMA: the host's nodes from sysfs, guest RAM split and bound to them (mbind), and where its pages are (move_pages). */
#include "numa.h"

#include <ctype.h>
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "minivmm_abi.h"

/*
 * The kernel reads maxnode - 1 bits of a node mask (an old off-by-one kept
 * for compatibility): a mask of CPU_SETSIZE (1024) bits, as many as
 * MAX_NUMNODES on Debian's kernels, is passed as CPU_SETSIZE + 1.
 */
#define NODE_MASK_BITS (CPU_SETSIZE + 1)
#define AUDIT_BATCH    512 /* pages per move_pages call: its arrays live on the stack */
#define TEXT_BYTES     8192

int mm_cpulist_parse(const char *s, cpu_set_t *set)
{
	const char *p = s;
	int n = 0;

	CPU_ZERO(set);
	while (*p && *p != '\n') {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			if (!isdigit((unsigned char)p[1]))
				return -EINVAL;
			hi = strtoul(p + 1, &end, 10);
			p = end;
		}
		if (hi < lo || hi >= CPU_SETSIZE)
			return -EINVAL;
		for (unsigned long c = lo; c <= hi; c++) {
			n += !CPU_ISSET(c, set);
			CPU_SET(c, set);
		}
		if (*p == ',') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL; /* "1," or "1,,2" */
		} else if (*p && *p != '\n') {
			return -EINVAL;
		}
	}
	if (*p == '\n' && p[1])
		return -EINVAL; /* something after the newline */
	return n;
}

char *mm_cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t at = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && at < len; c++) {
		int e = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		if (e == c)
			at += (size_t)snprintf(buf + at, len - at, "%s%d", at ? "," : "",
					       c);
		else
			at += (size_t)snprintf(buf + at, len - at, "%s%d-%d",
					       at ? "," : "", c, e);
		c = e;
	}
	return buf;
}

uint64_t mm_node_meminfo_bytes(const char *text, const char *key)
{
	size_t klen = strlen(key);
	unsigned long long kib;

	/* Lines are "Node N KEY:   VALUE kB": the key is the third word. */
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *k = p;

		for (int w = 0; w < 2; w++) {
			while (*k == ' ')
				k++;
			while (*k && *k != ' ' && *k != '\n')
				k++;
		}
		while (*k == ' ')
			k++;
		if (!strncmp(k, key, klen) && k[klen] == ':')
			return sscanf(k + klen + 1, "%llu kB", &kib) == 1
				       ? (uint64_t)kib << 10
				       : 0;
	}
	return 0;
}

/* nodeN/hugepages/hugepages-SIZE/WHAT_hugepages; -1 when absent. */
static long long read_pool(const char *root, int id, const char *size, const char *what)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/node%d/hugepages/hugepages-%s/%s_hugepages",
		 root, id, size, what);
	return mm_read_count(path);
}

static int read_node(const char *root, int id, struct mm_numa_node *nd, char *err,
		     size_t errlen)
{
	char path[512], *text = malloc(TEXT_BYTES);
	int r;

	if (!text) {
		snprintf(err, errlen, "out of memory reading %s", root);
		return -ENOMEM;
	}
	*nd = (struct mm_numa_node){ .id = id };
	snprintf(path, sizeof(path), "%s/node%d/cpulist", root, id);
	r = mm_read_text(path, text, TEXT_BYTES);
	if (!r) {
		r = mm_cpulist_parse(text, &nd->cpus);
		if (r < 0)
			snprintf(err, errlen, "%s: not a CPU list: '%.40s'", path, text);
	} else {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	}
	if (r < 0)
		goto out;
	nd->ncpus = (unsigned)r;
	snprintf(path, sizeof(path), "%s/node%d/meminfo", root, id);
	r = mm_read_text(path, text, TEXT_BYTES);
	if (r) {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		goto out;
	}
	nd->mem_total = mm_node_meminfo_bytes(text, "MemTotal");
	nd->mem_free = mm_node_meminfo_bytes(text, "MemFree");
	nd->huge_free_2m = read_pool(root, id, "2048kB", "free");
	nd->huge_nr_2m = read_pool(root, id, "2048kB", "nr");
	nd->huge_free_1g = read_pool(root, id, "1048576kB", "free");
	nd->huge_nr_1g = read_pool(root, id, "1048576kB", "nr");
	r = 0;
out:
	free(text);
	return r == -ENOENT ? -EIO : r; /* -ENOENT means no NUMA at all */
}

int mm_numa_read(const char *root, struct mm_numa_host *h, char *err, size_t errlen)
{
	char path[512], text[4096];
	cpu_set_t online;
	int r;

	*h = (struct mm_numa_host){ .balancing = (int)mm_read_count(
					    "/proc/sys/kernel/numa_balancing") };
	snprintf(path, sizeof(path), "%s/online", root);
	r = mm_read_text(path, text, sizeof(text));
	if (r == -ENOENT) {
		snprintf(err, errlen, "%s: no such file (a kernel without NUMA)", path);
		return r;
	}
	if (!r && mm_cpulist_parse(text, &online) <= 0)
		r = -EINVAL;
	if (r) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -EINVAL ? "not a node list" : strerror(-r));
		return r;
	}
	for (int id = 0; id < CPU_SETSIZE; id++) {
		if (!CPU_ISSET(id, &online))
			continue;
		if (id >= MM_NUMA_MAX_NODES) {
			h->skipped++;
			continue;
		}
		r = read_node(root, id, &h->node[h->n], err, errlen);
		if (r)
			return r;
		h->n++;
	}
	return 0;
}

const struct mm_numa_node *mm_numa_node(const struct mm_numa_host *h, int id)
{
	for (unsigned i = 0; i < h->n; i++)
		if (h->node[i].id == id)
			return &h->node[i];
	return NULL;
}

void mm_numa_share(const struct gpa_range *ranges, unsigned nranges, unsigned nworkers,
		   unsigned i, uint64_t align, struct mm_numa_share *s)
{
	if (nworkers < nranges) {
		unsigned first = (unsigned)((uint64_t)i * nranges / nworkers);
		unsigned last = (unsigned)((uint64_t)(i + 1) * nranges / nworkers);

		*s = (struct mm_numa_share){ .gpa = ranges[first].gpa,
					     .node = first,
					     .nodes = last - first };
		for (unsigned k = first; k < last; k++)
			s->bytes += ranges[k].bytes;
		return;
	}
	for (unsigned k = 0; k < nranges; k++) {
		unsigned lo = (unsigned)((uint64_t)k * nworkers / nranges);
		unsigned hi = (unsigned)((uint64_t)(k + 1) * nworkers / nranges);
		uint64_t start, end;

		if (i < lo || i >= hi)
			continue;
		mvm_slice(ranges[k].bytes, hi - lo, i - lo, align, &start, &end);
		*s = (struct mm_numa_share){ .gpa = ranges[k].gpa + start,
					     .bytes = end - start,
					     .node = k,
					     .nodes = 1 };
		return;
	}
	*s = (struct mm_numa_share){ 0 }; /* i >= nworkers */
}

int mm_numa_preflight(const struct mm_numa_host *h, const int *nodes,
		      const struct gpa_range *ranges, unsigned n,
		      const struct mm_backend *b, char *err, size_t errlen)
{
	for (unsigned k = 0; k < n; k++) {
		const struct mm_numa_node *nd = mm_numa_node(h, nodes[k]);
		uint64_t need = ranges[k].bytes;

		if (!nd)
			continue; /* the caller chose online nodes */
		if (b->hugetlb_sysfs) {
			int big = b->page_bytes >= (1ULL << 30);
			long long have = big ? nd->huge_free_1g : nd->huge_free_2m;
			long long nr = big ? nd->huge_nr_1g : nd->huge_nr_2m;
			unsigned long long pages =
				(need + b->page_bytes - 1) / b->page_bytes;
			const char *pool = strrchr(b->hugetlb_sysfs, '/') + 1;

			/* A pool sysfs does not show per node: the global check decides. */
			if (have < 0 || (unsigned long long)have >= pages)
				continue;
			snprintf(
				err, errlen,
				"--numa: node %d cannot hold its %llu MiB of guest RAM: its %s pool has %lld free pages of %llu MiB, %llu needed (%s/node%d/hugepages/%s/free_hugepages); grow it with: echo %lld > %s/node%d/hugepages/%s/nr_hugepages",
				nd->id, (unsigned long long)(need >> 20), b->name, have,
				(unsigned long long)(b->page_bytes >> 20), pages,
				MM_NUMA_SYSFS, nd->id, pool,
				(nr > 0 ? nr : 0) + (long long)pages - have,
				MM_NUMA_SYSFS, nd->id, pool);
			return -ENOMEM;
		}
		if (nd->mem_free >= need)
			continue;
		snprintf(
			err, errlen,
			"--numa: node %d cannot hold its %llu MiB of guest RAM: it has %llu MiB free (MemFree in %s/node%d/meminfo); use less --mem, more nodes, or --numa-policy preferred (which lets pages spill to other nodes)",
			nd->id, (unsigned long long)(need >> 20),
			(unsigned long long)(nd->mem_free >> 20), MM_NUMA_SYSFS, nd->id);
		return -ENOMEM;
	}
	return 0;
}

int mm_numa_bind(void *hva, uint64_t len, int node, int mode)
{
	cpu_set_t mask;

	if (node < 0 || node >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&mask);
	CPU_SET(node, &mask);
	/* cpu_set_t is a bit mask of CPU_SETSIZE bits: a node mask of that many. */
	return syscall(SYS_mbind, hva, len, mode, &mask, NODE_MASK_BITS, 0) ? -errno : 0;
}

int mm_numa_mems_allowed(cpu_set_t *nodes)
{
	CPU_ZERO(nodes);
	return syscall(SYS_get_mempolicy, NULL, nodes, NODE_MASK_BITS, NULL,
		       MPOL_F_MEMS_ALLOWED)
		       ? -errno
		       : 0;
}

uint64_t mm_numa_audit_stride(uint64_t len, uint64_t page_bytes)
{
	uint64_t pages = len / page_bytes, step;

	if (pages <= MM_NUMA_AUDIT_SAMPLES)
		return page_bytes;
	step = (pages + MM_NUMA_AUDIT_SAMPLES - 1) / MM_NUMA_AUDIT_SAMPLES;
	return step * page_bytes;
}

int mm_numa_audit(uint8_t *hva, uint64_t len, uint64_t stride, struct mm_numa_count *c)
{
	void *pages[AUDIT_BATCH];
	int status[AUDIT_BATCH];
	uint64_t off = 0;

	if (!stride)
		return -EINVAL;
	while (off < len) {
		unsigned long n = 0;

		for (; n < AUDIT_BATCH && off < len; off += stride)
			pages[n++] = hva + off;
		/* nodes == NULL: only ask where each page is; nothing moves. */
		if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) < 0)
			return -errno;
		c->sampled += n;
		for (unsigned long i = 0; i < n; i++) {
			if (status[i] < 0)
				c->absent++; /* -ENOENT: not present; -EFAULT: the zero page */
			else if (status[i] < MM_NUMA_MAX_NODES)
				c->on[status[i]]++;
			else
				c->elsewhere++;
		}
	}
	return 0;
}
