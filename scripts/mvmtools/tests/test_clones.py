"""bench/clones' report: medians per mode and N, the targets' ratios."""
import os
import tempfile
import unittest

from mvmtools import clones

MIB = 1 << 20


def row(mode, n, rnd, fuw_p95, pss, anon, file_, ws=100 * MIB, faults=0):
    vals = (mode, n, rnd, fuw_p95 / 2, fuw_p95, fuw_p95 * 1.1, 10, 20, 30, faults, pss, anon, file_, ws, ws, n)
    return "\t".join(str(v) for v in vals) + "\n"


class Report(unittest.TestCase):
    def samples(self, text):
        fd, path = tempfile.mkstemp()
        os.write(fd, text.encode())
        os.close(fd)
        self.addCleanup(os.unlink, path)
        return path

    def test_medians_and_targets(self):
        path = self.samples(
            row("private", 1, 1, 100, 120 * MIB, 20 * MIB, 100 * MIB) +
            row("private", 16, 1, 900, 500 * MIB, 380 * MIB, 120 * MIB) +
            row("private", 16, 2, 1100, 520 * MIB, 400 * MIB, 120 * MIB) +
            row("uffd", 1, 1, 200, 100 * MIB, 100 * MIB, 0, faults=100) +
            row("uffd", 16, 1, 2000, 1600 * MIB, 1600 * MIB, 0, faults=1600) +
            row("uffd-own", 16, 1, 1600, 1600 * MIB, 1600 * MIB, 0) +
            row("private-read", 16, 1, 600, 130 * MIB, 10 * MIB, 120 * MIB) + "garbage line\n")
        med = clones.cells(clones.read(path))
        self.assertEqual(med[("private", 16)]["fuw_p95"], 1000)
        self.assertEqual(med[("private", 16)]["rounds"], 2)
        lines = clones.targets(med, 2)
        # private: 510 MiB against 1.5 * 100 + 390 = 540 MiB
        self.assertIn("ratio 0.94 (target <= 1;", lines[0])
        # private-read: 130 MiB against 1.5 * 100 + 10 = 160 MiB; 130 / (16 * 100) of N x ws
        self.assertTrue(lines[1].startswith("private-read at N=16: summed Pss 130.0 MiB"), lines[1])
        self.assertIn("ratio 0.81 (target <= 1;", lines[1])
        self.assertIn("Pss over N x the working set 0.08)", lines[1])
        # shared uffd: 2000 ms against 16/2 * 200 = 1600 ms
        self.assertIn("= 1600.0 ms): ratio 1.25 (target <= 1.5)", lines[2])
        self.assertIn("own handlers': 1.25", lines[3])
        self.assertEqual(len(clones.table(med, ["private", "uffd", "uffd-own"])), 1 + 2 + 2 + 1)

    def test_empty(self):
        self.assertEqual(clones.report(self.samples(""), 2, "/nonexistent/x"),
                         ["no bursts finished: nothing to report"])


if __name__ == "__main__":
    unittest.main()
