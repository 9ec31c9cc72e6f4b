/* --numa: where guest RAM was placed and where its threads ran, for people and in the results file. */
#include "report.h"

#include <errno.h>
#include <string.h>

#define LIST_BYTES 128

static const char *const audit_when[] = { "none", "after_eager", "at_exit" };

static const char *policy_how(enum numa_policy p)
{
	return p == NUMA_BIND	     ? "mbind MPOL_BIND"
	       : p == NUMA_PREFERRED ? "mbind MPOL_PREFERRED"
				     : "no mbind: where the first touch runs";
}

static uint64_t present(const struct mm_numa_count *c)
{
	return c->sampled - c->absent;
}

static uint64_t on_host(const struct mm_numa_count *c, int host)
{
	return host >= 0 && host < MM_NUMA_MAX_NODES ? c->on[host] : 0;
}

/* "" or " (12 on node 0, 3 on node 2)": the sampled pages on other nodes. */
static const char *elsewhere(const struct mm_numa_count *c, int host, char *buf,
			     size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < MM_NUMA_MAX_NODES && at < len; i++)
		if (i != host && c->on[i])
			at += (size_t)snprintf(buf + at, len - at, "%s%llu on node %d",
					       at ? ", " : " (",
					       (unsigned long long)c->on[i], i);
	if (c->elsewhere && at < len)
		at += (size_t)snprintf(buf + at, len - at, "%s%llu on nodes above %d",
				       at ? ", " : " (", (unsigned long long)c->elsewhere,
				       MM_NUMA_MAX_NODES - 1);
	if (at && at < len)
		snprintf(buf + at, len - at, ")");
	return buf;
}

void numa_report(const struct numa *n, enum numa_audit_when when, FILE *f)
{
	struct numa_facts x;
	struct numa_node_facts nd;
	char cpus[LIST_BYTES], other[256];

	if (numa_facts(n, &x) || x.audited != when)
		return;
	fprintf(f, "numa: %s (%s), %u node%s", numa_policy_name(x.policy),
		policy_how(x.policy), x.nodes, x.nodes == 1 ? "" : "s");
	if (!x.kernel_numa)
		fprintf(f,
			": this kernel has no NUMA (no %s): one node, nothing to bind, nothing to audit\n",
			MM_NUMA_SYSFS);
	else if (x.host_nodes == 1)
		fprintf(f, ": this host has one node, so every page is local\n");
	else
		fprintf(f, " of %u on this host%s\n", x.host_nodes,
			x.left_out
				? " (auto: one node or more per vCPU; add --vcpus for more)"
				: "");
	for (unsigned k = 0; !numa_node_facts(n, k, &nd); k++) {
		const struct mm_numa_count *c = nd.count;
		uint64_t p = present(c), local = on_host(c, nd.host);

		fprintf(f, "  node %u: host node %d, CPUs %s, vCPU%s %u", k, nd.host,
			mm_cpulist_format(nd.cpus, cpus, sizeof(cpus)),
			nd.nvcpus > 1 ? "s" : "", nd.vcpu0);
		if (nd.nvcpus > 1)
			fprintf(f, "-%u", nd.vcpu0 + nd.nvcpus - 1);
		fprintf(f, ", [0x%llx, 0x%llx) %llu MiB", (unsigned long long)nd.gpa,
			(unsigned long long)(nd.gpa + nd.bytes),
			(unsigned long long)(nd.bytes >> 20));
		if (x.audit_err) {
			fprintf(f, "\n");
			continue;
		}
		fprintf(f, ": %llu of %llu pages%s on node %d%s, ",
			(unsigned long long)local, (unsigned long long)p,
			c->absent ? " backed" : "", nd.host,
			elsewhere(c, nd.host, other, sizeof(other)));
		if (p)
			fprintf(f, "%.1f%% local", 100.0 * (double)local / (double)p);
		else
			fprintf(f, "none backed");
		if (c->absent)
			fprintf(f, "; %llu never touched", (unsigned long long)c->absent);
		fprintf(f, "\n");
	}
	if (x.audit_err && x.audit_err != -ENOSYS)
		fprintf(f, "  (placement unknown: move_pages: %s)\n",
			strerror(-x.audit_err));
	else if (!x.audit_err && !numa_node_facts(n, 0, &nd))
		fprintf(f, "  (move_pages %s, %s)\n",
			nd.stride == x.page_bytes ? "asked about every page"
						  : "asked about a sample of pages",
			when == NUMA_AUDIT_AFTER_EAGER
				? "after eager"
				: "at the end of the run: pages the guest touched");
	if (x.balancing > 0 && x.policy != NUMA_BIND)
		fprintf(f,
			"  (automatic NUMA balancing is on, /proc/sys/kernel/numa_balancing = %d: it may move pages later)\n",
			x.balancing);
}

static void count_json(const struct mm_numa_count *c, int host, uint64_t stride,
		       struct json *j)
{
	uint64_t p = present(c), local = on_host(c, host);
	char key[16];

	json_begin_object(j, "audit");
	json_u64(j, "stride_bytes", stride);
	json_u64(j, "sampled", c->sampled);
	json_u64(j, "present", p);
	json_u64(j, "absent", c->absent);
	json_u64(j, "local", local);
	json_u64(j, "remote", p - local);
	if (p)
		json_double(j, "local_fraction", (double)local / (double)p);
	else
		json_null(j, "local_fraction");
	json_begin_object(j, "on_nodes");
	for (int i = 0; i < MM_NUMA_MAX_NODES; i++)
		if (c->on[i]) {
			snprintf(key, sizeof(key), "%d", i);
			json_u64(j, key, c->on[i]);
		}
	if (c->elsewhere)
		json_u64(j, "other", c->elsewhere);
	json_end_object(j);
	json_end_object(j);
}

void numa_write_json(const struct numa *n, struct json *j)
{
	struct numa_facts x;
	struct numa_node_facts nd;
	struct numa_vcpu_facts v;
	char list[LIST_BYTES];

	if (numa_facts(n, &x))
		return;
	json_begin_object(j, "numa");
	json_string(j, "requested", x.requested);
	json_string(j, "policy", numa_policy_name(x.policy));
	json_bool(j, "kernel_numa", x.kernel_numa);
	json_bool(j, "mbind", x.bound);
	json_u64(j, "host_nodes", x.host_nodes);
	json_u64(j, "nodes_left_out", x.left_out);
	if (x.balancing >= 0)
		json_i64(j, "numa_balancing", x.balancing);
	else
		json_null(j, "numa_balancing");
	json_string(j, "audited", audit_when[x.audited]);
	if (x.audit_err)
		json_string(j, "audit_error", strerror(-x.audit_err));
	json_begin_array(j, "nodes");
	for (unsigned k = 0; !numa_node_facts(n, k, &nd); k++) {
		json_begin_object(j, NULL);
		json_u64(j, "node", k);
		json_i64(j, "host_node", nd.host);
		json_u64(j, "gpa", nd.gpa);
		json_u64(j, "bytes", nd.bytes);
		json_string(j, "cpus", mm_cpulist_format(nd.cpus, list, sizeof(list)));
		json_u64(j, "vcpu_first", nd.vcpu0);
		json_u64(j, "vcpus", nd.nvcpus);
		json_u64(j, "mem_free_bytes", nd.mem_free);
		if (x.audited != NUMA_AUDIT_NONE && !x.audit_err)
			count_json(nd.count, nd.host, nd.stride, j);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_array(j, "vcpu_threads");
	for (unsigned i = 0; !numa_vcpu_facts(n, i, &v); i++) {
		json_begin_object(j, NULL);
		json_u64(j, "vcpu", i);
		json_u64(j, "node", v.node);
		json_bool(j, "started", v.started);
		if (v.started) {
			json_i64(j, "cpu", v.cpu_start);
			json_i64(j, "cpu_end", v.cpu_end);
			json_string(j, "allowed",
				    mm_cpulist_format(v.allowed, list, sizeof(list)));
		}
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}
