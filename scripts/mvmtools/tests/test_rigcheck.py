"""The rigs' verdicts on fabricated case files: all pass, and each breaks alone."""
import copy
import json
import os
import re
import shutil
import tempfile
import unittest

from mvmtools import rigcheck
from mvmtools.tests import REPO

MEM = 128 << 20


def phase(name, **stats):
    return {"phase": name, "source": "vmm", "start_ms": 0, "end_ms": 1, "dur_ms": 1, "stats": stats}


def flat(first, warm=None, strategy=None, backing="anon", resident=None, per_thread=None):
    d = {"config": {"mem_bytes": MEM, "backing": backing, "backing_page_bytes": 4096 if backing == "anon" else 2097152,
                    "guest_args": ["flat", "--max-mib", "16", "--iterations", "2"]},
         "platform": {"kvm": "svm", "paging": "tdp", "pre_fault_memory": True},
         "sweep": [{"workload": "flat", "iteration": 1, "size_mib": 16, "guest_mapping": "direct_map", "vcpu": 0, "pages": 4096}],
         "timeline": [phase("firmware_ready", pf_taken=30, insn_emulation=10, io_exits=3),
                      phase("first_useful_work", **first), phase("workload_end", **(warm or {"pf_taken": 0}))]}
    if strategy:
        d["eager"] = {"requested": strategy, "strategy": strategy, "resident_bytes_after": resident or MEM,
                      "per_thread": per_thread or [{"prefault_bytes": MEM, "prefault_calls": 3}]}
    return d


def demand(n):
    return {"timeline": [phase("workload_end", pf_taken=100 + n, exits=200 + n, insn_emulation=50, mmu_pte_write=0)]}


def sweep_records(thp=False):
    recs = []
    for it in (1, 2):
        for size in (1, 2, 4):
            for m in ("demand", "map_populate"):
                recs.append({"workload": "sweep", "iteration": it, "size_mib": size, "guest_mapping": m, "vcpu": 0,
                             "pages": size * 256, "guest_faults": size * 256 if m == "demand" else 0,
                             "kvm": {"pf_taken": size if thp else size * 256}})
    return {"sweep": recs}


NODE_PAGES = 16384


def numa_doc(local=(NODE_PAGES, NODE_PAGES), policy="bind", audited="after_eager", strategy="prefault", threads=None,
             host_nodes=2, left_out=0):
    """A --numa case's results: one node of 64 MiB per entry of LOCAL (its local pages; the rest on the other
    node), each with CPU k, vCPU k and eager thread k (or THREADS)."""
    nodes = []
    for k, loc in enumerate(local):
        on = {str(k): loc}
        if loc < NODE_PAGES:
            on[str(1 - k)] = NODE_PAGES - loc
        nodes.append({"node": k, "host_node": k, "gpa": k << 26, "bytes": 1 << 26, "cpus": str(k), "vcpu_first": k,
                      "vcpus": 1, "mem_free_bytes": 1 << 29,
                      "audit": {"stride_bytes": 4096, "sampled": NODE_PAGES, "present": NODE_PAGES, "absent": 0,
                                "local": loc, "remote": NODE_PAGES - loc, "local_fraction": loc / NODE_PAGES,
                                "on_nodes": on}})
    n = len(local)
    return {"config": {"mem_bytes": n << 26},
            "numa": {"requested": "auto", "policy": policy, "kernel_numa": True, "mbind": policy != "first-touch",
                     "host_nodes": host_nodes, "nodes_left_out": left_out, "numa_balancing": 0, "audited": audited,
                     "nodes": nodes,
                     "vcpu_threads": [{"vcpu": k, "node": k, "started": True, "cpu": k, "cpu_end": k, "allowed": str(k)}
                                      for k in range(n)]},
            "eager": {"requested": strategy, "strategy": strategy,
                      "per_thread": threads if threads is not None else
                      [{"node": k, "host_node": k, "nodes": 1, "cpu": k, "allowed": str(k)} for k in range(n)]}}


NUMA_OUT = ("numa: bind (mbind MPOL_BIND), 2 nodes of 2 on this host\n"
            "  node 0: host node 0, CPUs 0, vCPU 0, [0x0, 0x4000000) 64 MiB: 16384 of 16384 pages on node 0, 100.0% local\n"
            "  node 1: host node 1, CPUs 1, vCPU 1, [0x4000000, 0x8000000) 64 MiB: 16384 of 16384 pages on node 1, "
            "100.0% local\n"
            "numa: node 0: [0x0, 0x4000000) 64 MiB, vCPUs 0-0, host node 0, bind\n"
            "numa: node 1: [0x4000000, 0x8000000) 64 MiB, vCPUs 1-1, host node 1, bind\n")
ONE_THREAD = [{"node": 0, "host_node": 0, "nodes": 2, "cpu": 0, "allowed": "0"}]

CASES = {
    "platform": flat({"pf_taken": 0}), "auto": flat({"pf_taken": 0}, strategy="prefault"),
    "lazy": flat({"pf_taken": 4096, "pages_4k": 4096}), "populate": flat({"pf_taken": 4100}, strategy="populate"),
    "prefault": flat({"pf_taken": 0, "pages_4k": MEM // 4096}, strategy="prefault"),
    "thp": flat({"pf_taken": 16, "pages_2m": 8}, backing="thp"),
    "thp-prefault": flat({"pf_taken": 0, "pages_2m": MEM >> 21}, strategy="prefault", backing="thp"),
    "sweep": sweep_records(), "sweep-thp": sweep_records(thp=True),
    "smp": flat({"pf_taken": 0}, strategy="prefault", per_thread=[{"prefault_calls": 2}, {"prefault_calls": 1}]),
    "demand-1k": demand(1024), "demand-2k": demand(2048),
    "raw-touch": {"timeline": [phase("vm_exit", pf_taken=4200, insn_emulation=12)]},
    "numa-auto-one-vcpu": numa_doc(local=(NODE_PAGES,), left_out=1),
    "numa-bind": numa_doc(),
    "numa-first-touch": numa_doc(policy="first-touch", strategy="populate"),
    "numa-remote": numa_doc(local=(NODE_PAGES, 0), policy="first-touch", strategy="populate", threads=ONE_THREAD),
    "numa-remote-bind": numa_doc(strategy="populate", threads=ONE_THREAD),
    "numa-touch": numa_doc(policy="first-touch", strategy="touch", audited="at_exit",
                           threads=[{"vcpu": 0, "gpa": 0}, {"vcpu": 1, "gpa": 1 << 26}]),
}
CASES["auto"]["eager"]["requested"] = "auto"
CASES["uffd"] = flat({"pf_taken": 4100})
CASES["uffd"]["paging"] = {"mode": "uffd", "uffd_mode": "missing", "resolve_ioctl": "UFFDIO_COPY",
                           "per_phase": [{"phase": "first_useful_work", "faults": 4096, "kvm_pf_taken": 4100}]}



def restored(mode, first):
    """A --restore run of a flat snapshot taken after pass 1: pass 2 is the first after the restore."""
    d = flat(first)
    d["sweep"][0]["iteration"] = 2
    d["restore"] = {"path": "/tmp/rig-snap", "mode": mode, "pass": 1}
    d["exit"] = {"status": 0, "reason": "guest-exit"}
    return d


CASES["restore-populate"] = restored("populate", {"pf_taken": 0, "pages_4k": 32768})
CASES["restore-uffd"] = restored("uffd", {"pf_taken": 4100})
CASES["restore-uffd"]["paging"] = {"mode": "uffd", "uffd_mode": "missing", "faults": 4110, "pages_touched": 4110,
                                   "per_phase": [{"phase": "first_useful_work", "faults": 4100, "kvm_pf_taken": 4100}]}


def background(pf, covered, order="front"):
    """A --eager=background:prefault run: one thread, spare vCPU 1, covered first as given."""
    d = flat({"pf_taken": pf}, strategy="prefault", per_thread=[
        {"prefault_vcpu": 1, "prefault_calls": 20, "prefault_bytes": 40 << 20, "bytes": MEM, "done_bytes": 40 << 20}])
    d["config"]["vcpus"] = 1
    d["eager"].update(background=True, order=order, spare_vcpus=[1],
                      covered_first={"bytes": 0, "of_bytes": 4096 * 4096, "fraction": covered, "bound": "segment"})
    return d


CASES["bg-auto"] = background(0, None)
CASES["bg-auto"]["eager"]["requested"] = "auto"
CASES["bg-prefault"] = background(3000, 0.2)  # lazy's 4096 x 0.8 = 3277, + 2% + 16
CASES["bg-prefault-frontier"] = background(1500, 0.5, order="frontier")


def linux(first=None, strategy=None, vcpus=1):
    """A Linux guest's run: the boot phases, init_start, and (with FIRST) flat's two passes."""
    tl = [phase("guest_entry"), phase("init_start", exits=2600, io_exits=2500, pf_taken=40)]
    tl[1].update(start_ms=1, end_ms=3600)
    d = {"config": {"mem_bytes": 256 << 20, "vcpus": vcpus, "backing": "anon", "backing_page_bytes": 4096},
         "timeline": tl}
    if first is not None:
        d["sweep"] = [{"workload": "flat", "iteration": 1, "size_mib": 16, "guest_mapping": "demand", "vcpu": 0,
                       "pages": 4096}]
        tl += [phase("workload_start"), phase("first_useful_work", **first), phase("workload_end", pf_taken=0)]
        for p in tl[2:]:
            p.update(start_ms=3600, end_ms=5000)
    if strategy:
        d["eager"] = {"requested": strategy, "strategy": strategy}
    return d


LINUX = {"linux-hello": linux(), "linux-lazy": linux({"pf_taken": 4200}),
         "linux-prefault": linux({"pf_taken": 12}, strategy="prefault"), "linux-smp": linux(vcpus=2)}
CASES.update(LINUX)
ERRORS = {"exit-status": "minivmm: guest exited with status 7 (vCPU 0)",
          "fault": "minivmm: guest page fault at rip 0x1000, fault address 0x40000000000",
          "ud2": "minivmm: guest aborted on vCPU 0: unhandled exception 6 (#UD invalid opcode)",
          "triple": "minivmm: guest crashed on vCPU 0: triple fault (KVM_EXIT_SHUTDOWN) rip=0x100000",
          "hlt": "minivmm: guest stopped on vCPU 0: HLT with interrupts off, rip=0x100004",
          "bad-hypercall-pointer": "minivmm: guest ABI violation: 16 bytes at 0xfffff000 are outside guest RAM",
          "bad-hypercall-number": "minivmm: guest ABI violation: unknown hypercall number 77",
          "raw": "minivmm: guest exited with status 7 (vCPU 0)",
          "numa-too-big": "minivmm: guest RAM: --numa: node 1 cannot hold its 1024 MiB of guest RAM: it has 700 MiB "
                          "free (MemFree in /sys/devices/system/node/node1/meminfo)",
          "numa-too-few-vcpus": "minivmm: guest RAM: --numa=0,1: 2 nodes need at least 2 vCPUs, one or more on each",
          "linux-hello": "minivmm: guest exited with status 7 (vCPU 0)"}


class Judge(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.out = os.path.join(self.tmp, "out")
        os.makedirs(self.out)
        lines = ["=== L1 6.12 kvm_amd/parameters/npt=Y tdp_mmu=Y",
                 "=== NUMA expected=2 seen=2 balancing=0; node0: cpus 0, 717 MiB; node1: cpus 1, 753 MiB;"]
        for case, status, _ in rigcheck.EXPECTS:
            lines.append("=== STATUS %s %d (emulated)" % (case, status))
            self.write(case + ".err", ERRORS.get(case, "") + "\n")
        for case, doc in CASES.items():
            self.write(case + ".json", json.dumps(doc))
        self.write("raw.out", "hello from a raw guest\n")
        self.write("platform.out", "platform: svm, tdp paging, KVM_PRE_FAULT_MEMORY yes\n")
        self.write("auto.out", "eager: prefault (MADV_POPULATE_WRITE + KVM_PRE_FAULT_MEMORY) [auto], 1 thread\n")
        self.write("bg-auto.out", "eager: background prefault (MADV_POPULATE_WRITE + KVM_PRE_FAULT_MEMORY) [auto], "
                   "order front, 1 thread of its own: 0.06 GiB in 10.0 ms (6.00 GiB/s) beside the guest\n")
        self.write("numa-bind.out", NUMA_OUT)
        self.write("linux-smp.out", "hello from Linux 6.12.118+deb12-amd64 (x86_64)\nRAM 240 MiB, 200 MiB free; CPUs online 2\n")
        self.log = os.path.join(self.tmp, "console.log")
        with open(self.log, "w") as f:
            f.write("\n".join(lines) + "\n")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, text):
        with open(os.path.join(self.out, name), "w") as f:
            f.write(text)

    def judge(self):
        j = rigcheck.Judge("tdp", "svm", self.log, self.out)
        good = j.run("9")
        failed = [line.split(":")[0][len("FAIL tdp/"):] for line in j.lines if line.startswith("FAIL")]
        return good, j, failed

    def test_all_pass(self):
        good, j, failed = self.judge()
        self.assertEqual(failed, [])
        self.assertTrue(good)
        self.assertEqual(j.passed, len(rigcheck.check_names()))
        self.assertIn("tdp: %d passed, 0 failed, 0 skipped" % j.passed, j.lines)
        table = [line for line in j.lines if line.startswith("lazy ")]
        self.assertEqual(table, ["lazy          none      anon       4096      4096        0      4096         0"])

    def mutate(self, case, fn):
        doc = copy.deepcopy(CASES[case])
        fn(doc)
        self.write(case + ".json", json.dumps(doc))
        failed = self.judge()[2]
        self.write(case + ".json", json.dumps(CASES[case]))
        return failed

    def test_each_check_can_fail(self):
        def first(d):
            return [p for p in d["timeline"] if p["phase"] == "first_useful_work"][0]["stats"]

        self.assertEqual(self.mutate("prefault", lambda d: first(d).update(pf_taken=3)), ["prefault-first-pass-no-faults"])
        self.assertEqual(self.mutate("prefault", lambda d: d.update(eager=None)),
                         ["prefault-first-pass-no-faults", "prefault-resident"])
        # Lazy's faults are also what background prefault is held to.
        self.assertEqual(self.mutate("lazy", lambda d: first(d).update(pf_taken=10)),
                         ["lazy-first-pass-faults-every-page", "bg-prefault-faults-below-lazy",
                          "bg-prefault-frontier-faults-below-lazy"])
        self.assertEqual(self.mutate("smp", lambda d: d["eager"]["per_thread"][1].update(prefault_calls=0)),
                         ["smp-prefault-per-vcpu"])
        self.assertEqual(self.mutate("sweep", lambda d: d["sweep"].pop()), ["sweep-records"])
        self.assertEqual(self.mutate("uffd", lambda d: d["paging"]["per_phase"][0].update(faults=100)),
                         ["uffd-demand-every-page"])
        self.assertEqual(self.mutate("uffd", lambda d: d["paging"]["per_phase"][0].update(kvm_pf_taken=10)),
                         ["uffd-demand-every-page"])
        self.assertEqual(self.mutate("uffd", lambda d: d["paging"].update(resolve_ioctl="UFFDIO_ZEROPAGE")),
                         ["uffd-demand-every-page"])
        # A restore: populate's first pass after it takes a fault; uffd's pages fault twice, or not at all.
        self.assertEqual(self.mutate("restore-populate", lambda d: first(d).update(pf_taken=1)),
                         ["restore-populate-prefault-no-faults"])
        self.assertEqual(self.mutate("restore-populate", lambda d: d["platform"].update(pre_fault_memory=False)),
                         ["restore-populate-prefault-no-faults"])
        self.assertEqual(self.mutate("restore-uffd", lambda d: d["paging"].update(pages_touched=4000)),
                         ["restore-uffd-one-fault-per-page"])
        self.assertEqual(self.mutate("restore-uffd", lambda d: d["paging"]["per_phase"][0].update(faults=10)),
                         ["restore-uffd-one-fault-per-page"])
        self.assertEqual(self.mutate("restore-uffd", lambda d: d["restore"].update(mode="copy")),
                         ["restore-uffd-one-fault-per-page"])
        self.assertEqual(self.mutate("raw-touch", lambda d: d["timeline"][0]["stats"].update(pf_taken=5000)),
                         ["raw-touch-npt-faults"])
        self.assertEqual(self.mutate("demand-2k", lambda d: d["timeline"][0]["stats"].update(insn_emulation=500)),
                         ["demand-one-npt-fault-per-fault"])
        # Background prefault: more faults than lazy's less what was covered first; no coverage; a vCPU's own fd.
        self.assertEqual(self.mutate("bg-prefault", lambda d: first(d).update(pf_taken=3400)),
                         ["bg-prefault-faults-below-lazy"])
        self.assertEqual(self.mutate("bg-prefault-frontier", lambda d: d["eager"].update(covered_first=None)),
                         ["bg-prefault-frontier-spare-vcpu", "bg-prefault-frontier-faults-below-lazy"])
        self.assertEqual(self.mutate("bg-prefault", lambda d: d["eager"]["per_thread"][0].update(prefault_vcpu=0)),
                         ["bg-prefault-spare-vcpu"])
        self.assertEqual(self.mutate("bg-auto", lambda d: d["eager"].update(spare_vcpus=[])),
                         ["bg-auto-chooses-prefault"])

    def test_numa_checks_can_fail(self):
        def frac(k, v):
            return lambda d: d["numa"]["nodes"][k]["audit"].update(local_fraction=v)

        self.assertEqual(self.mutate("numa-bind", frac(1, 0.98)), ["numa-bind-local"])
        self.assertEqual(self.mutate("numa-bind", lambda d: d["numa"]["vcpu_threads"][1].update(cpu_end=0)),
                         ["numa-bind-pinned"])
        self.assertEqual(self.mutate("numa-bind", lambda d: d["eager"]["per_thread"][0].update(allowed="0-1")),
                         ["numa-bind-pinned"])
        self.assertEqual(self.mutate("numa-bind", lambda d: d["numa"]["nodes"][1].update(host_node=2)),
                         ["numa-guest-sees-nodes"])
        self.assertEqual(self.mutate("numa-first-touch", lambda d: d["numa"].update(mbind=True)),
                         ["numa-first-touch-local"])
        self.assertEqual(self.mutate("numa-remote", lambda d: d["numa"]["nodes"][1]["audit"]["on_nodes"].update({"0": 9})),
                         ["numa-remote-first-touch"])
        self.assertEqual(self.mutate("numa-remote-bind", lambda d: d["eager"]["per_thread"][0].update(nodes=1)),
                         ["numa-remote-bind-local"])
        self.assertEqual(self.mutate("numa-touch", lambda d: d["numa"].update(audited="after_eager")),
                         ["numa-touch-local"])
        self.assertEqual(self.mutate("numa-auto-one-vcpu", lambda d: d["numa"].update(nodes_left_out=0)),
                         ["numa-auto-one-vcpu-local"])
        self.write("numa-bind.out", NUMA_OUT.replace("100.0% local\n", "98.5% local\n", 1))
        self.assertEqual(self.judge()[2], ["numa-line"])

    def skip_cases(self, cases, why, edit=lambda x: x):
        """The console log as a rig that skipped CASES says it (run_numa, run_linux), their files gone."""
        with open(self.log) as f:
            log = [edit(x) for x in f.read().split("\n") if not any(x.startswith("=== STATUS %s " % c) for c in cases)]
        log += ["=== SKIP %s (%s)" % (c, why) for c in cases]
        with open(self.log, "w") as f:
            f.write("\n".join(log) + "\n")
        for c in cases:
            for ext in (".json", ".out", ".err"):
                p = os.path.join(self.out, c + ext)
                if os.path.exists(p):
                    os.remove(p)

    def test_numa_skipped_on_one_node(self):
        """A one-node rig (vmx): the two-node cases say SKIP, and the node count must match."""
        self.skip_cases(rigcheck.NUMA_CASES, "the kernel sees 1 NUMA node",
                        lambda x: x.replace("expected=2 seen=2", "expected=1 seen=1"))
        good, j, failed = self.judge()
        self.assertEqual(failed, [])
        self.assertTrue(good)
        skipped = [x for x in j.lines if x.startswith("SKIP tdp/")]
        self.assertEqual(len(skipped), j.skipped)
        self.assertIn("SKIP tdp/numa-bind-pinned: (the kernel sees 1 NUMA node)", skipped)
        self.assertEqual(j.passed + j.skipped, len(rigcheck.check_names()))
        with open(self.log) as f:
            log = f.read().replace("expected=1 seen=1", "expected=2 seen=1")
        with open(self.log, "w") as f:
            f.write(log)
        self.assertEqual(self.judge()[2], ["numa-nodes"])

    def test_linux_checks_can_fail(self):
        def stats(name):
            return lambda d: [p for p in d["timeline"] if p["phase"] == name][0]["stats"]

        self.assertEqual(self.mutate("linux-prefault", lambda d: stats("first_useful_work")(d).update(pf_taken=500)),
                         ["linux-prefault-saves-90pct"])
        self.assertEqual(self.mutate("linux-lazy", lambda d: stats("first_useful_work")(d).update(pf_taken=0)),
                         ["linux-lazy-first-pass-faults", "linux-prefault-saves-90pct"])
        # /init never ran: no init_start phase.
        self.assertEqual(self.mutate("linux-hello", lambda d: d["timeline"].pop(1)), ["linux-reaches-init"])
        # init_start after the workload's first pass (its end later on the clock).
        self.assertEqual(self.mutate("linux-lazy", lambda d: d["timeline"][1].update(end_ms=9000)),
                         ["linux-init-before-first-useful-work"])
        self.assertEqual(self.mutate("linux-smp", lambda d: d["config"].update(vcpus=1)), ["linux-smp-reaches-init"])
        self.write("linux-smp.out", "CPUs online 1\n")
        self.assertEqual(self.judge()[2], ["linux-smp-sees-2-cpus"])

    def test_linux_skipped_without_linux(self):
        """A rig with linux=0 (vmx): the Linux cases say SKIP."""
        self.skip_cases(rigcheck.LINUX_CASES, "this rig does not boot the Linux guest: linux=0")
        good, j, failed = self.judge()
        self.assertEqual(failed, [])
        self.assertTrue(good)
        self.assertIn("SKIP tdp/linux-prefault-saves-90pct: (this rig does not boot the Linux guest: linux=0)", j.lines)

    def test_linux_table_lists_repeats(self):
        """RIG_CASES with a case repeated (linux-hello-2): the boots' table has a row for each, in the log's order."""
        with open(self.log, "a") as f:
            f.write("=== CASE linux-hello: minivmm ...\n=== CASE linux-hello-2: minivmm ...\n")
        self.write("linux-hello-2.json", json.dumps(LINUX["linux-hello"]))
        j = self.judge()[1]
        rows = [line.split()[0] for line in j.lines if re.match(r"linux-hello(-2)? +[0-9]", line)]
        self.assertEqual(rows, ["linux-hello", "linux-hello-2"])

    def test_cpulist(self):
        self.assertEqual(rigcheck.cpulist("0-2,5"), {0, 1, 2, 5})
        self.assertEqual(rigcheck.cpulist(""), set())
        self.assertIsNone(rigcheck.cpulist("a"))
        self.assertIsNone(rigcheck.cpulist(None))

    def test_missing_phase_and_file(self):
        self.assertEqual(self.mutate("thp", lambda d: d.update(timeline=[])),
                         ["thp-faults-in-2m-units"])
        os.remove(os.path.join(self.out, "auto.json"))
        self.assertEqual(self.judge()[2], ["auto-chooses-prefault"])

    def test_jq_null_order(self):
        # As jq: a counter that is missing is null, and null < 100.
        self.assertTrue(rigcheck.lt(None, 100))
        self.assertFalse(rigcheck.gt(None, 0))
        self.assertTrue(rigcheck.ge(5, None))

    def test_exit_status_and_message(self):
        self.write("hlt.err", "minivmm: something else\n")
        self.assertEqual(self.judge()[2], ["hlt"])
        with open(self.log) as f:
            log = f.read().replace("=== STATUS fault 4", "=== STATUS fault 0")
        with open(self.log, "w") as f:
            f.write(log)
        self.assertEqual(self.judge()[2], ["fault", "hlt"])

    def test_answers_name_real_checks(self):
        with open(os.path.join(REPO, "docs", "lab", "answers.md")) as f:
            named = set(re.findall(r"rig check: `?([a-z0-9-]+)", f.read()))
        self.assertTrue(named)
        self.assertEqual(named - set(rigcheck.check_names()), set())
