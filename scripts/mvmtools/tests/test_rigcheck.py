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
}
CASES["auto"]["eager"]["requested"] = "auto"


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
ERRORS = {"exit-status": "minivmm: guest exited with status 7 (vCPU 0)",
          "fault": "minivmm: guest page fault at rip 0x1000, fault address 0x40000000000",
          "ud2": "minivmm: guest aborted on vCPU 0: unhandled exception 6 (#UD invalid opcode)",
          "triple": "minivmm: guest crashed on vCPU 0: triple fault (KVM_EXIT_SHUTDOWN) rip=0x100000",
          "hlt": "minivmm: guest stopped on vCPU 0: HLT with interrupts off, rip=0x100004",
          "bad-hypercall-pointer": "minivmm: guest ABI violation: 16 bytes at 0xfffff000 are outside guest RAM",
          "bad-hypercall-number": "minivmm: guest ABI violation: unknown hypercall number 77",
          "raw": "minivmm: guest exited with status 7 (vCPU 0)"}


class Judge(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.out = os.path.join(self.tmp, "out")
        os.makedirs(self.out)
        lines = ["=== L1 6.12 kvm_amd/parameters/npt=Y tdp_mmu=Y"]
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
        self.assertIn("tdp: %d passed, 0 failed" % j.passed, j.lines)
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
