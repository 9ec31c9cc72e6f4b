"""scripts/merge: the CSV round-trips, environments group, failed runs are marked."""
import contextlib
import copy
import csv
import io
import json
import os
import shutil
import tempfile
import unittest

from mvmtools import gnuplot, merge
from mvmtools.tests import fixture

FILES = ("flat.json", "compare.json", "repeat.json", "parallel.json", "hello.json", "spin-timeout.json")


def other_environment(doc):
    """The same results as if run on another machine: host, kernel, KVM flavour."""
    d = copy.deepcopy(doc)
    d["environment"].update(hostname="epyc-7", kernel_release="6.12.0-test")
    d["environment"]["kvm_modules"] = {"kvm": {"tdp_mmu": "Y", "nx_huge_pages": "N"}, "kvm_amd": {"npt": "Y"}}
    for run in d.get("runs", [d]):
        run["platform"].update(kvm="svm", paging="tdp")
    return d


class Merge(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.inp = os.path.join(self.tmp, "in")
        os.makedirs(os.path.join(self.inp, "vm"))
        os.makedirs(os.path.join(self.inp, "epyc"))
        for f in FILES:
            shutil.copy(fixture("results", f), os.path.join(self.inp, "vm", f))
        for f in ("flat.json", "compare.json"):
            with open(fixture("results", f)) as src:
                doc = other_environment(json.load(src))
            with open(os.path.join(self.inp, "epyc", f), "w") as dst:
                json.dump(doc, dst)
        self.prefix = os.path.join(self.tmp, "out", "m")
        os.makedirs(os.path.dirname(self.prefix))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_merge(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = merge.main(list(args))
        return status, out.getvalue(), err.getvalue()

    def rows(self):
        with open(self.prefix + ".csv", newline="") as f:
            return list(csv.DictReader(f))

    def test_csv_round_trips(self):
        status, _, err = self.run_merge(self.inp, "--out", self.prefix)
        self.assertEqual(status, 0, err)
        with open(self.prefix + ".csv", newline="") as f:
            raw = list(csv.reader(f))
        self.assertEqual(raw[0], merge.COLUMNS)
        self.assertTrue(all(len(r) == len(merge.COLUMNS) for r in raw), [len(r) for r in raw])
        rows = self.rows()
        # one row per mode of each file: five one-mode files and compare's two here; flat and compare there
        self.assertEqual(len(rows), 5 + 2 + 1 + 2)
        for r in rows:
            self.assertTrue(r["file"].endswith(".json"), r)
            self.assertIn(r["status"], ("ok", "failed"))
        # a CPU model with a comma survives the quoting
        doc = json.load(open(os.path.join(self.inp, "vm", "flat.json")))
        doc["environment"]["cpu_model"] = 'AMD EPYC 7763, "Milan"'
        json.dump(doc, open(os.path.join(self.inp, "vm", "flat.json"), "w"))
        self.run_merge(self.inp, "--out", self.prefix)
        self.assertIn('AMD EPYC 7763, "Milan"', [r["cpu"] for r in self.rows()])

    def test_no_first_pass_has_empty_cells(self):
        self.run_merge(self.inp, "--out", self.prefix)
        hello = [r for r in self.rows() if r["workload"] == "hello"][0]
        self.assertEqual(hello["status"], "ok")
        self.assertEqual(hello["first_pass_ms"], "")
        self.assertEqual(hello["first_pass_pf_taken"], "")
        self.assertNotEqual(hello["total_ms"], "")
        self.assertTrue(hello["file"].endswith("hello.json"))

    def test_failed_run_is_marked(self):
        status, out, _ = self.run_merge(self.inp, "--out", self.prefix)
        spin = [r for r in self.rows() if r["workload"] == "spin"][0]
        self.assertEqual((spin["status"], spin["exit_status"], spin["exit_reason"]), ("failed", "5", "timeout"))
        for m in merge.METRICS + ["first_pass_pf_taken"]:
            self.assertEqual(spin[m], "", m)
        self.assertIn("failed (no measurements", out)
        self.assertRegex(out, r"spin-timeout\.json \(spin, run\): exit 5 timeout: guest still running")
        ok = [r for r in self.rows() if r["workload"] == "flat" and r["mode"] == "run"]
        self.assertTrue(all(r["status"] == "ok" and r["exit_reason"] == "guest-exit" for r in ok))

    def test_two_environments_two_groups(self):
        self.run_merge(self.inp, "--out", self.prefix)
        keys = set(tuple(r[c] for c in merge.COLUMNS[:7]) for r in self.rows())
        self.assertEqual(len(keys), 2)
        txt = open(self.prefix + ".txt").read()
        self.assertIn("E1: epyc-7 | 6.12.0-test", txt)
        self.assertIn("svm, tdp paging (kvm.tdp_mmu=Y kvm.nx_huge_pages=N kvm_amd.npt=Y)", txt)
        self.assertRegex(txt, r"E2: [^|]+ \| [^|]+ \| [^|]+ \| pvm, shadow paging")
        self.assertIn("mode: run = a single run or a --repeat experiment", txt)
        epyc = [r for r in self.rows() if r["host"] == "epyc-7"]
        self.assertEqual(sorted(r["mode"] for r in epyc), ["eager", "lazy", "run"])

    @unittest.skipUnless(gnuplot.available(), "gnuplot is not installed")
    def test_plot_per_metric(self):
        status, out, _ = self.run_merge(self.inp, "--out", self.prefix)
        self.assertEqual(status, 0)
        for m in merge.METRICS:
            p = "%s-%s.png" % (self.prefix, m)
            self.assertTrue(os.path.exists(p), p)
            with open(p, "rb") as f:
                self.assertEqual(f.read(4), b"\x89PNG")
            self.assertIn("plot: " + p, out)

    def test_default_prefix_beside_the_inputs(self):
        # scripts/merge DIR writes DIR/merged.*, not into the current directory.
        status, out, err = self.run_merge(self.inp)
        self.assertEqual(status, 0, err)
        csv_path = os.path.join(self.inp, "merged.csv")
        self.assertIn("csv: " + csv_path, out)
        self.assertTrue(os.path.exists(os.path.join(self.inp, "merged.csv")))
        self.assertEqual(merge.default_prefix([os.path.join(self.inp, "vm", "flat.json"),
                                               os.path.join(self.inp, "epyc")]),
                         os.path.join(self.inp, "merged"))
        self.assertEqual(merge.default_prefix(["a.json", "b.json"]), "merged")
        self.assertEqual(merge.default_prefix(["res/x/a.json", "res/y"]), os.path.join("res", "merged"))

    def test_through_links(self):
        # --out through a dangling link: the files the links name are written, the links stay.
        real = os.path.join(self.tmp, "real")
        os.makedirs(real)
        for ext in (".csv", ".txt", "-total_ms.png"):
            os.symlink(os.path.join(real, "m" + ext), self.prefix + ext)
        status, _, err = self.run_merge(self.inp, "--out", self.prefix)
        self.assertEqual(status, 0, err)
        for ext in (".csv", ".txt") + (("-total_ms.png",) if gnuplot.available() else ()):
            self.assertTrue(os.path.islink(self.prefix + ext), ext)
            self.assertGreater(os.path.getsize(os.path.join(real, "m" + ext)), 0, ext)
        self.assertFalse([f for f in os.listdir(real) if f.endswith(".tmp")])

    def test_journals(self):
        j = os.path.join(self.inp, "vm", "cell.json.partial")
        with open(fixture("results", "flat.json")) as f:
            doc = json.load(f)
        doc["exit"] = {"status": 130, "reason": "interrupted", "message": "interrupted"}
        with open(j, "w") as f:
            f.write(json.dumps({"event": "start"}) + "\n" + json.dumps(doc) + "\n")
        # a journal whose finished file exists is not read; an unreadable one is skipped
        with open(os.path.join(self.inp, "vm", "flat.json.partial"), "w") as f:
            f.write("{broken\n")
        with open(os.path.join(self.inp, "vm", "bad.partial"), "w") as f:
            f.write('{"a": 1}\n{broken\n')
        status, _, err = self.run_merge(self.inp, "--out", self.prefix)
        self.assertEqual(status, 0)
        journal = [r for r in self.rows() if r["file"].endswith("cell.json.partial")]
        self.assertEqual(len(journal), 1)
        self.assertEqual((journal[0]["status"], journal[0]["exit_reason"]), ("failed", "interrupted"))
        self.assertIn("bad.partial: line 2 is not JSON", err)
        self.assertIn("flat.json.partial: its finished file", err)

    def test_bad_input(self):
        self.assertEqual(self.run_merge()[0], 2)
        status, _, err = self.run_merge(os.path.join(self.tmp, "nope"))
        self.assertEqual(status, 1)
        self.assertIn("no such file or directory", err)
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        self.assertEqual(self.run_merge(empty)[0], 1)
        status, out, _ = self.run_merge("--help")
        self.assertEqual(status, 0)
        self.assertIn("mode ", out)
