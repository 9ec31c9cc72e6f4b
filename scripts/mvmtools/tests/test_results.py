"""Reading results files; THE table-row rule."""
import os
import shutil
import tempfile
import unittest

from mvmtools import results
from mvmtools.tests import fixture


def rec(vcpu, size=1, mapping="demand", it=1, wl="sweep", touch=1.0):
    return {"workload": wl, "iteration": it, "size_mib": size, "guest_mapping": mapping, "vcpu": vcpu, "touch_s": touch}


class TableRows(unittest.TestCase):
    def test_all_vcpu_record_wins(self):
        recs = [rec(0, touch=1), rec("all", touch=9), rec(1, touch=2)]
        self.assertEqual([r["touch_s"] for r in results.table_rows(recs)], [9])

    def test_else_vcpu_0(self):
        recs = [rec(1, touch=2), rec(0, touch=1), rec(0, size=2, touch=3)]
        self.assertEqual([r["touch_s"] for r in results.table_rows(recs)], [1, 3])

    def test_per_row(self):
        # One row with an all-vCPU record, one without: each takes its own.
        recs = [rec(0, size=1, touch=1), rec("all", size=1, touch=5), rec(0, size=2, touch=2)]
        self.assertEqual([r["touch_s"] for r in results.table_rows(recs)], [5, 2])

    def test_no_vcpu0_no_row(self):
        self.assertEqual(results.table_rows([rec(1)]), [])

    def test_parallel_fixture(self):
        res = results.load(fixture("results", "parallel.json"))
        rows = res.runs[0].table_rows()
        self.assertTrue(rows)
        self.assertTrue(all(r["vcpu"] == "all" for r in rows))
        keys = [results.row_key(r) for r in rows]
        self.assertEqual(len(keys), len(set(keys)))
        # each all-vCPU record covers both vCPUs' pages
        per0 = {results.row_key(r): r["pages"] for r in res.runs[0].sweep if r["vcpu"] == 0}
        for r in rows:
            self.assertEqual(r["pages"], 2 * per0[results.row_key(r)])


class Load(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def write(self, name, text):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_missing(self):
        with self.assertRaisesRegex(results.ResultsError, "^no such file: .*nope.json$"):
            results.load(os.path.join(self.tmp, "nope.json"))

    def test_not_json(self):
        with self.assertRaisesRegex(results.ResultsError, "is not JSON: .* line 1 column"):
            results.load(self.write("x.json", "{nope"))

    def test_empty(self):
        with self.assertRaisesRegex(results.ResultsError, "is empty"):
            results.load(self.write("e.json", ""))

    def test_not_results(self):
        with self.assertRaisesRegex(results.ResultsError, "not a minivmm results file"):
            results.load(self.write("t.json", '{"traceEvents": []}'))

    def test_directory(self):
        with self.assertRaisesRegex(results.ResultsError, "is a directory"):
            results.load(self.tmp)


class Kinds(unittest.TestCase):
    def test_single(self):
        res = results.load(fixture("results", "flat.json"))
        self.assertEqual(res.kind, "run")
        self.assertEqual(res.modes(), ["run"])
        run = res.runs[0]
        self.assertEqual(run.workload, "flat")
        self.assertTrue(run.ok)
        self.assertIsNotNone(run.phase("first_useful_work"))

    def test_compare(self):
        res = results.load(fixture("results", "compare.json"))
        self.assertEqual(res.kind, "compare")
        self.assertEqual(sorted(res.modes()), ["eager", "lazy"])
        self.assertEqual(len(res.measured("lazy")), 2)
        self.assertEqual(len(res.measured("eager")), 2)
        self.assertTrue(all(not r.warmup for r in res.measured()))
        self.assertTrue(any(r.warmup for r in res.runs))

    def test_repeat(self):
        res = results.load(fixture("results", "repeat.json"))
        self.assertEqual(res.kind, "repeat")
        self.assertEqual(res.modes(), ["run"])
        self.assertEqual(res.first_measured().workload, "sweep")

    def test_hello_and_timeout(self):
        hello = results.load(fixture("results", "hello.json")).runs[0]
        self.assertEqual(hello.workload, "hello")
        self.assertIsNone(hello.phase("first_useful_work"))
        spin = results.load(fixture("results", "spin-timeout.json")).runs[0]
        self.assertFalse(spin.ok)
        self.assertEqual(spin.exit["reason"], "timeout")

    def test_workload_without_args(self):
        self.assertEqual(results.Run({"config": {"guest": "tests/bin/touch.raw", "guest_args": []}}).workload, "touch.raw")
        self.assertEqual(results.Run({"config": {"guest_args": []}, "sweep": [rec(0, wl="flat")]}).workload, "flat")

    def test_rows_cli(self):
        from mvmtools.__main__ import main
        import io
        import contextlib

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(main(["rows", fixture("results", "parallel.json"), "size_mib", "vcpu", "guest_mapping"]), 0)
        lines = out.getvalue().split("\n")
        self.assertEqual(lines[0], "1\tall\tdemand")
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(main(["rows", "/nonexistent.json", "x"]), 1)
        self.assertIn("no such file", err.getvalue())
