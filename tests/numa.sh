# Tier "numa": --numa on /dev/kvm (sourced by tests/run). This machine has one
# NUMA node, so everything is local by definition: these check that --numa
# runs end to end (mbind, pinned threads, the audit, the boot info the guest
# reads, the sandbox) and says so, and its refusals. Two nodes: the tdp rig.
SYS=/sys/devices/system/node
if [ ! -e $SYS/online ]; then
	skip numa "no $SYS/online: this kernel has no NUMA"
	return 0 2>/dev/null || exit 0
fi
online=$(cat $SYS/online)
cpus0=$(cat $SYS/node0/cpulist)
if [ "$online" != 0 ]; then
	skip numa "this machine has NUMA nodes $online: the tier expects one (the rigs test two)"
	return 0 2>/dev/null || exit 0
fi

# Eager on the vCPU threads: one node, all of RAM on it, said so, every page audited.
expect numa-one-node 0 '' 'numa: bind \(mbind MPOL_BIND\), 1 node: this host has one node, so every page is local' -- \
	$MINIVMM --numa --vcpus 2 --eager=populate --mem 64M -o "$OUT/numa-one.json" $GUEST -- hello
grep -Eq '^  node 0: host node 0, CPUs [0-9,-]+, vCPUs 0-1, \[0x0, 0x4000000\) 64 MiB: 16384 of 16384 pages on node 0, 100\.0% local$' "$OUT/numa-one-node.out" &&
	pass numa-one-node-line || fail numa-one-node-line "$(grep -E '^(numa|  node)' "$OUT/numa-one-node.out")"
grep -q 'thread 1: .*, on node 0 (host node 0, CPU [0-9]*)' "$OUT/numa-one-node.out" &&
	pass numa-one-node-eager-thread || fail numa-one-node-eager-thread "$(grep 'thread' "$OUT/numa-one-node.out")"
jq_true numa-one-node-json "$OUT/numa-one.json" \
	".numa as \$n | \$n.policy == \"bind\" and \$n.mbind and \$n.kernel_numa and \$n.host_nodes == 1
	 and \$n.audited == \"after_eager\" and (\$n.nodes | length == 1) and \$n.nodes[0].cpus == \"$cpus0\"
	 and \$n.nodes[0].audit.sampled == 16384 and \$n.nodes[0].audit.local == 16384
	 and \$n.nodes[0].audit.local_fraction == 1 and \$n.nodes[0].audit.stride_bytes == 4096
	 and ([\$n.vcpu_threads[] | .started and .allowed == \"$cpus0\" and .node == 0] | all)
	 and ([.eager.per_thread[] | .node == 0 and .host_node == 0 and .allowed == \"$cpus0\" and .cpu >= 0] | all)
	 and .minivmm.abi == 5"
# The guest read /numa from the boot info.
grep -q '^numa: node 0: \[0x0, 0x4000000) 64 MiB, vCPUs 0-1, host node 0, bind$' "$OUT/numa-one-node.out" &&
	pass numa-guest-told || fail numa-guest-told "$(grep '^numa' "$OUT/numa-one-node.out")"

# Dedicated eager threads, pinned; prefault is refused here as without --numa (no TDP).
expect numa-eager-threads 0 '' 'thread 2: .*, on node 0 \(host node 0' -- \
	$MINIVMM --numa --eager=populate --eager-threads 3 --mem 64M -o "$OUT/numa-threads.json" $GUEST -- hello
jq_true numa-eager-threads-json "$OUT/numa-threads.json" \
	"(.eager.per_thread | length == 3) and ([.eager.per_thread[] | .node == 0 and .allowed == \"$cpus0\"] | all)
	 and .config.mem_bytes as \$m | ([.eager.per_thread[].bytes] | add == \$m) and .numa.nodes[0].audit.local_fraction == 1"

# Lazy, first touch: the audit runs at the end and counts what the guest touched.
expect numa-lazy 0 '' 'numa: first-touch .*1 node' -- \
	$MINIVMM --numa --numa-policy first-touch --mem 64M -o "$OUT/numa-lazy.json" $GUEST -- hello
jq_true numa-lazy-at-exit "$OUT/numa-lazy.json" \
	'.numa.audited == "at_exit" and .numa.mbind == false and .numa.nodes[0].audit.present > 0
	 and .numa.nodes[0].audit.absent > 0 and .numa.nodes[0].audit.local == .numa.nodes[0].audit.present'
grep -q 'never touched' "$OUT/numa-lazy.out" && grep -q 'at the end of the run' "$OUT/numa-lazy.out" &&
	pass numa-lazy-line || fail numa-lazy-line "$(grep -E '^(numa|  )' "$OUT/numa-lazy.out")"

# --eager=touch: the guest touches each vCPU's slice of its node's range (the boot info's).
expect numa-touch 0 '' '' -- \
	$MINIVMM --numa --numa-policy preferred --vcpus 2 --eager=touch --mem 64M -o "$OUT/numa-touch.json" $GUEST -- hello
jq_true numa-touch-slices "$OUT/numa-touch.json" \
	'.eager.per_thread as $t | $t[0].gpa == 0 and $t[0].end_gpa == 33554432 and $t[1].gpa == 33554432
	 and $t[1].end_gpa == 67108864 and .numa.audited == "at_exit" and .numa.policy == "preferred"
	 and .numa.nodes[0].audit.present >= 16383'

# Refusals: a node that is not there (exit 2), a node too small for its range
# (the preflight: exit 3, before anything is mapped), options that do not fit.
expect numa-no-such-node 2 'numa=1: node 1 is not online on this host \(online: 0\)' '' -- \
	$MINIVMM --numa=1 --mem 64M $GUEST -- hello
# (Not a .json name: a run that ends in setup has a null summary.setup_ms, which
# the schema tier refuses; a known problem of every setup failure, not --numa's.)
expect numa-preflight 3 '--numa: node 0 cannot hold its 1048576 MiB of guest RAM: it has [0-9]+ MiB free \(MemFree in /sys/devices/system/node/node0/meminfo\)' '' -- \
	$MINIVMM --numa --mem 1T -o "$OUT/numa-preflight.results" $GUEST -- hello
jq_true numa-preflight-json "$OUT/numa-preflight.results" \
	'.exit.reason == "host-error" and (.exit.message | test("node 0 cannot hold")) and .numa == null'
free2m=$(cat $SYS/node0/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
if [ "$free2m" -lt 32 ]; then
	expect numa-preflight-hugetlb 3 'node 0 cannot hold its 64 MiB of guest RAM: its hugetlb2m pool has [0-9]+ free pages of 2 MiB, 32 needed' '' -- \
		$MINIVMM --numa --backing hugetlb2m --mem 64M $GUEST -- hello
else
	skip numa-preflight-hugetlb "node 0 has $free2m free 2 MiB pages already"
fi
# hugetlb on the node's own pool: reserve 32 pages of node 0 (root), run, put the pool back.
pool=$SYS/node0/hugepages/hugepages-2048kB
if [ "$(id -u)" = 0 ] && [ -w $pool/nr_hugepages ]; then
	old=$(cat $pool/nr_hugepages)
	echo $((old + 32)) >$pool/nr_hugepages 2>/dev/null
	if [ "$(cat $pool/free_hugepages)" -ge 32 ]; then
		expect numa-hugetlb 0 '' '32 of 32 pages on node 0, 100\.0% local' -- \
			$MINIVMM --numa --backing hugetlb2m --eager=populate --mem 64M --vcpus 2 -o "$OUT/numa-hugetlb.json" $GUEST -- hello
		jq_true numa-hugetlb-stride "$OUT/numa-hugetlb.json" \
			'.numa.nodes[0].audit.stride_bytes == 2097152 and .numa.nodes[0].audit.sampled == 32 and .numa.nodes[0].audit.local == 32'
	else
		skip numa-hugetlb "node 0 gave fewer than 32 huge pages of 2 MiB"
	fi
	echo "$old" >$pool/nr_hugepages
else
	skip numa-hugetlb "needs root and $pool"
fi
expect numa-policy-alone 2 '--numa-policy is about --numa' '' -- $MINIVMM --numa-policy bind $GUEST -- hello
expect numa-mem-path 2 '--numa places fresh memory' '' -- $MINIVMM --numa --mem-path /dev/shm $GUEST -- hello
expect numa-bad-list 2 "--numa=zero: not auto, off or a list" '' -- $MINIVMM --numa=zero $GUEST -- hello
