/* Unit tests of --numa's pure logic: lists, node meminfo, the split, the preflight, sysfs reading, the options. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "experiment.h"

void test_numa_lists(void)
{
	cpu_set_t s;
	char buf[64];

	CHECK_EQ(mm_cpulist_parse("0-3,8,10-11\n", &s), 7);
	CHECK(CPU_ISSET(0, &s) && CPU_ISSET(3, &s) && !CPU_ISSET(4, &s) &&
	      CPU_ISSET(8, &s) && CPU_ISSET(11, &s) && !CPU_ISSET(12, &s));
	CHECK(!strcmp(mm_cpulist_format(&s, buf, sizeof(buf)), "0-3,8,10-11"));
	CHECK_EQ(mm_cpulist_parse("", &s), 0);
	CHECK_EQ(mm_cpulist_parse("\n", &s), 0); /* a memory-only node's cpulist */
	CHECK(!strcmp(mm_cpulist_format(&s, buf, sizeof(buf)), ""));
	CHECK_EQ(mm_cpulist_parse("5", &s), 1);
	CHECK(!strcmp(mm_cpulist_format(&s, buf, sizeof(buf)), "5"));
	CHECK_EQ(mm_cpulist_parse("1,1,0-1", &s), 2); /* repeats count once */
	CHECK(!strcmp(mm_cpulist_format(&s, buf, sizeof(buf)), "0-1"));
	CHECK_EQ(mm_cpulist_parse("0-1023", &s), 1024);
	CHECK(mm_cpulist_parse("1024", &s) == -EINVAL);
	CHECK(mm_cpulist_parse("3-1", &s) == -EINVAL);
	CHECK(mm_cpulist_parse("1,", &s) == -EINVAL);
	CHECK(mm_cpulist_parse(",1", &s) == -EINVAL);
	CHECK(mm_cpulist_parse("1,,2", &s) == -EINVAL);
	CHECK(mm_cpulist_parse("1-", &s) == -EINVAL);
	CHECK(mm_cpulist_parse("a", &s) == -EINVAL);
	CHECK(mm_cpulist_parse("1 2", &s) == -EINVAL);
	CHECK(mm_cpulist_parse("1\n2", &s) == -EINVAL);
	CHECK(mm_cpulist_parse("-1", &s) == -EINVAL);
	/* Truncated output stays a string. */
	mm_cpulist_parse("0,2,4,6,8,10,12", &s);
	CHECK(strlen(mm_cpulist_format(&s, buf, 6)) < 6);
}

void test_numa_meminfo(void)
{
	const char *t = "Node 0 MemTotal:       12936952 kB\n"
			"Node 0 MemFree:         6538712 kB\n"
			"Node 0 MemUsed:         6398240 kB\n"
			"Node 12 HugePages_Free:     3\n";

	CHECK_EQ(mm_node_meminfo_bytes(t, "MemTotal"), 12936952ULL << 10);
	CHECK_EQ(mm_node_meminfo_bytes(t, "MemFree"), 6538712ULL << 10);
	CHECK_EQ(mm_node_meminfo_bytes(t, "Mem"), 0);	 /* whole keys only */
	CHECK_EQ(mm_node_meminfo_bytes(t, "Active"), 0); /* absent */
	CHECK_EQ(mm_node_meminfo_bytes("", "MemFree"), 0);
}

/* Every byte of every range covered once, in order, each share inside its ranges. */
static int shares_cover(const struct gpa_range *r, unsigned nr, unsigned nw,
			uint64_t align)
{
	uint64_t expect = 0;
	unsigned prev_node = 0;

	for (unsigned i = 0; i < nw; i++) {
		struct mm_numa_share s;
		uint64_t end_of_nodes;

		mm_numa_share(r, nr, nw, i, align, &s);
		if (s.gpa != expect || s.node < prev_node || s.node + s.nodes > nr ||
		    !s.nodes)
			return 0;
		end_of_nodes =
			r[s.node + s.nodes - 1].gpa + r[s.node + s.nodes - 1].bytes;
		if (s.gpa < r[s.node].gpa || s.gpa + s.bytes > end_of_nodes)
			return 0;
		if (nw >= nr && (s.nodes != 1 || (s.gpa - r[s.node].gpa) % align))
			return 0;
		if (nw < nr &&
		    (s.gpa != r[s.node].gpa || s.gpa + s.bytes != end_of_nodes))
			return 0; /* whole ranges */
		expect = s.gpa + s.bytes;
		prev_node = s.node;
	}
	return expect == r[nr - 1].gpa + r[nr - 1].bytes;
}

void test_numa_split(void)
{
	static const uint64_t mems[] = { 64ULL << 20, 128ULL << 20, 1ULL << 30,
					 (3ULL << 30) + (6 << 20) };
	static const unsigned nodes[] = { 1, 2, 3, 4, 7 };
	static const unsigned workers[] = { 1, 2, 3, 4, 5, 8, 13 };
	struct gpa_range r[8];
	struct mm_numa_share s;

	for (size_t m = 0; m < sizeof(mems) / sizeof(mems[0]); m++)
		for (size_t n = 0; n < sizeof(nodes) / sizeof(nodes[0]); n++) {
			for (unsigned k = 0; k < nodes[n]; k++) {
				uint64_t a, b;

				mvm_slice(mems[m], nodes[n], k, 2 << 20, &a, &b);
				r[k] = (struct gpa_range){ a, b - a };
			}
			for (size_t w = 0; w < sizeof(workers) / sizeof(workers[0]); w++)
				CHECK(shares_cover(r, nodes[n], workers[w], 2 << 20));
		}
	/* 128 MiB on 2 nodes: 1 worker covers both from node 0; 3 workers: 1 + 2. */
	r[0] = (struct gpa_range){ 0, 64 << 20 };
	r[1] = (struct gpa_range){ 64 << 20, 64 << 20 };
	mm_numa_share(r, 2, 1, 0, 2 << 20, &s);
	CHECK(s.gpa == 0 && s.bytes == 128 << 20 && s.node == 0 && s.nodes == 2);
	mm_numa_share(r, 2, 3, 0, 2 << 20, &s);
	CHECK(s.node == 0 && s.bytes == 64 << 20);
	mm_numa_share(r, 2, 3, 1, 2 << 20, &s);
	CHECK(s.node == 1 && s.gpa == 64 << 20 && s.bytes == 32 << 20);
	mm_numa_share(r, 2, 3, 2, 2 << 20, &s);
	CHECK(s.node == 1 && s.gpa == 96 << 20 && s.bytes == 32 << 20);
	/* The audit asks about every page of a small range, a spread sample of a big one. */
	CHECK_EQ(mm_numa_audit_stride(64 << 20, 4096), 4096);
	CHECK_EQ(mm_numa_audit_stride(256 << 20, 4096), 4096);
	CHECK_EQ(mm_numa_audit_stride((256 << 20) + 4096, 4096), 8192);
	CHECK_EQ(mm_numa_audit_stride(16ULL << 30, 4096), 64 * 4096);
	CHECK_EQ(mm_numa_audit_stride(16ULL << 30, 2 << 20), 2 << 20);
}

void test_numa_preflight(void)
{
	struct mm_numa_host h = { .n = 2 };
	struct gpa_range r[2] = { { 0, 768 << 20 }, { 768 << 20, 768 << 20 } };
	int nodes[2] = { 0, 1 };
	char err[512] = "";

	h.node[0] = (struct mm_numa_node){ .id = 0,
					   .mem_total = 2ULL << 30,
					   .mem_free = 1ULL << 30,
					   .huge_free_2m = 400,
					   .huge_free_1g = -1 };
	h.node[1] = (struct mm_numa_node){ .id = 1,
					   .mem_total = 2ULL << 30,
					   .mem_free = 512 << 20,
					   .huge_free_2m = 383,
					   .huge_nr_2m = 400,
					   .huge_free_1g = 0 };
	CHECK(mm_numa_preflight(&h, nodes, r, 2, &mm_backends[MM_ANON], err,
				sizeof(err)) == -ENOMEM);
	CHECK_STR_CONTAINS(
		err, "node 1 cannot hold its 768 MiB of guest RAM: it has 512 MiB free");
	CHECK_STR_CONTAINS(err, "/sys/devices/system/node/node1/meminfo");
	/* THP comes from the same free memory. */
	CHECK(mm_numa_preflight(&h, nodes, r, 2, &mm_backends[MM_THP], err,
				sizeof(err)) == -ENOMEM);
	/* Exactly what is free fits. */
	h.node[1].mem_free = 768 << 20;
	CHECK(mm_numa_preflight(&h, nodes, r, 2, &mm_backends[MM_ANON], err,
				sizeof(err)) == 0);
	/* Only node 1's range on node 1 (the order follows nodes[]). */
	nodes[0] = 1;
	h.node[1].mem_free = 512 << 20;
	CHECK(mm_numa_preflight(&h, nodes, r, 1, &mm_backends[MM_ANON], err,
				sizeof(err)) == -ENOMEM);
	nodes[0] = 0;
	/* hugetlb: the node's pool; 768 MiB is 384 pages of 2 MiB, node 1 has 383. */
	CHECK(mm_numa_preflight(&h, nodes, r, 2, &mm_backends[MM_HUGETLB2M], err,
				sizeof(err)) == -ENOMEM);
	CHECK_STR_CONTAINS(err, "node 1 cannot hold its 768 MiB");
	CHECK_STR_CONTAINS(err, "383 free pages of 2 MiB, 384 needed");
	CHECK_STR_CONTAINS(
		err,
		"echo 401 > /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages");
	h.node[1].huge_free_2m = 384;
	CHECK(mm_numa_preflight(&h, nodes, r, 2, &mm_backends[MM_HUGETLB2M], err,
				sizeof(err)) == 0);
	/* A pool whose per-node count is unknown (-1) is left to the global check; 0 is not. */
	r[0].bytes = r[1].bytes = 1ULL << 30;
	r[1].gpa = 1ULL << 30;
	CHECK(mm_numa_preflight(&h, nodes, r, 2, &mm_backends[MM_HUGETLB1G], err,
				sizeof(err)) == -ENOMEM);
	CHECK_STR_CONTAINS(err, "node 1 cannot hold its 1024 MiB");
	h.node[1].huge_free_1g = -1;
	CHECK(mm_numa_preflight(&h, nodes, r, 2, &mm_backends[MM_HUGETLB1G], err,
				sizeof(err)) == 0);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

void test_numa_sysfs(void)
{
	char root[] = "/tmp/minivmm-numa-XXXXXX", path[512], err[512];
	struct mm_numa_host h;
	const struct mm_numa_node *n;

	CHECK(mkdtemp(root) != NULL);
	/* No "online": a kernel without NUMA. */
	CHECK(mm_numa_read(root, &h, err, sizeof(err)) == -ENOENT);
	put(root, "online", "0,2\n");
	snprintf(path, sizeof(path), "%s/node0", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/node2", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/node2/hugepages", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/node2/hugepages/hugepages-2048kB", root);
	mkdir(path, 0700);
	put(root, "node0/cpulist", "0-1\n");
	put(root, "node0/meminfo", "Node 0 MemTotal: 2048 kB\nNode 0 MemFree: 1024 kB\n");
	put(root, "node2/cpulist", "\n");
	put(root, "node2/meminfo", "Node 2 MemTotal: 4096 kB\nNode 2 MemFree: 4000 kB\n");
	put(root, "node2/hugepages/hugepages-2048kB/free_hugepages", "7\n");
	put(root, "node2/hugepages/hugepages-2048kB/nr_hugepages", "9\n");
	CHECK(mm_numa_read(root, &h, err, sizeof(err)) == 0);
	CHECK_EQ(h.n, 2);
	n = mm_numa_node(&h, 0);
	CHECK(n && n->ncpus == 2 && n->mem_total == 2048 << 10 &&
	      n->mem_free == 1024 << 10 && n->huge_free_2m == -1);
	n = mm_numa_node(&h, 2);
	CHECK(n && n->ncpus == 0 && n->mem_free == 4000 << 10 && n->huge_free_2m == 7 &&
	      n->huge_nr_2m == 9 && n->huge_free_1g == -1);
	CHECK(mm_numa_node(&h, 1) == NULL);
	/* A malformed cpulist is an error that names the file. */
	put(root, "node2/cpulist", "x\n");
	CHECK(mm_numa_read(root, &h, err, sizeof(err)) == -EINVAL);
	CHECK_STR_CONTAINS(err, "node2/cpulist");
	/* An online node whose directory is missing. */
	put(root, "online", "0-3\n");
	put(root, "node2/cpulist", "2\n");
	CHECK(mm_numa_read(root, &h, err, sizeof(err)) == -EIO); /* not "no NUMA" */
	CHECK_STR_CONTAINS(err, "node1/cpulist: No such file");
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	CHECK(system(path) == 0);
}

void test_numa_audit(void)
{
	const size_t len = 64 * 4096;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct mm_numa_count c = { 0 };
	uint64_t on = 0;
	int r;

	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < len / 2; i += 4096)
		p[i] = 1;
	r = mm_numa_audit(p, len, 4096, &c);
	if (r == -ENOSYS) {
		munmap(p, len);
		return; /* a kernel without NUMA: nothing to count */
	}
	CHECK(r == 0);
	for (int i = 0; i < MM_NUMA_MAX_NODES; i++)
		on += c.on[i];
	CHECK_EQ(c.sampled, 64);
	CHECK_EQ(c.absent, 32); /* never touched */
	CHECK_EQ(on + c.elsewhere, 32);
	/* Every 4th page: 16 asked about. */
	c = (struct mm_numa_count){ 0 };
	CHECK(mm_numa_audit(p, len, 4 * 4096, &c) == 0 && c.sampled == 16 &&
	      c.absent == 8);
	CHECK(mm_numa_audit(p, len, 0, &c) == -EINVAL);
	munmap(p, len);
}

static int parse(struct config *cfg, const char *const *args)
{
	char *argv[32];
	int argc = 0;

	for (; args[argc]; argc++)
		argv[argc] = (char *)args[argc];
	argv[argc] = NULL;
	return options_parse(argc, argv, cfg);
}

void test_numa_options(void)
{
	struct config c;

	CHECK(parse(&c, (const char *const[]){ "minivmm", "g.bin", NULL }) == 0);
	CHECK(!c.vm.numa);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa", "g.bin", NULL }) ==
	      0);
	CHECK(c.vm.numa && c.vm.numa_auto && !strcmp(c.vm.numa_arg, "auto") &&
	      c.vm.numa_policy == NUMA_BIND);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa=auto", "g.bin",
					       NULL }) == 0);
	CHECK(c.vm.numa && c.vm.numa_auto);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa=off", "g.bin",
					       NULL }) == 0);
	CHECK(!c.vm.numa);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa=0,2-3", "--numa-policy",
					       "first-touch", "g.bin", NULL }) == 0);
	CHECK(c.vm.numa && !c.vm.numa_auto && CPU_COUNT(&c.vm.numa_nodes) == 3 &&
	      CPU_ISSET(2, &c.vm.numa_nodes) && c.vm.numa_policy == NUMA_FIRST_TOUCH);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa", "--numa-policy",
					       "preferred", "g.bin", NULL }) == 0);
	CHECK(c.vm.numa_policy == NUMA_PREFERRED);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa=x", "g.bin", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa=", "g.bin", NULL }) ==
	      -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa=1-0", "g.bin",
					       NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa", "--numa-policy",
					       "interleave", "g.bin", NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa-policy", "bind",
					       "g.bin", NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa", "--mem-path",
					       "/dev/shm", "g.bin", NULL }) == -EINVAL);
	CHECK(parse(&c, (const char *const[]){ "minivmm", "--numa", "--reservoir", "/r",
					       "g.bin", NULL }) == -EINVAL);
}
