"""bench/seed-three's table: three columns from one run, counts alone where the clock is not this run's."""
import json
import os
import shutil
import tempfile
import unittest

from mvmtools import seedthree


def results_file(path, recs):
    with open(path, "w") as f:
        json.dump({"schema": "minivmm-results", "sweep": recs}, f)


def rec(size, mapping, touch, pf):
    return {"workload": "sweep", "iteration": 1, "size_mib": size, "guest_mapping": mapping, "vcpu": 0,
            "touch_s": touch, "pages": size * 256, "kvm": {"pf_taken": pf}}


class SeedThree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.g = os.path.join(self.tmp, "g.json")
        self.x = os.path.join(self.tmp, "x.json")
        self.h = os.path.join(self.tmp, "h.tsv")
        results_file(self.g, [rec(1, "demand", 0.002, 258), rec(1, "map_populate", 0.0001, 3)])
        results_file(self.x, [rec(1, "demand", 0.9, 300), rec(1, "map_populate", 0.5, 7)])
        with open(self.h, "w") as f:
            f.write("iteration\tsize_mib\tmode\tmap_s\ttouch_s\tunmap_s\n1\t1\tdemand\t0\t0.0004\t0\n"
                    "1\t1\tpopulate\t0\t0.00005\t0\n")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def row(self, text):
        return [x for x in text.split("\n") if x.startswith("    1 |")][0].split()

    def test_timed(self):
        t = seedthree.render(seedthree.guest_cells(self.g), seedthree.guest_cells(self.x),
                             seedthree.host_cells(self.h), "measured in this run", True)
        self.assertEqual(self.row(t), ["1", "|", "0.002000", "0.000100", "258", "3", "|", "0.900000", "0.500000", "300", "7",
                                       "|", "0.000400", "0.000050"])
        self.assertIn("Linux guest: measured in this run", t)

    def test_counts_only(self):
        t = seedthree.render(seedthree.guest_cells(self.g), seedthree.guest_cells(self.x),
                             seedthree.host_cells(self.h), "from the rig", False)
        self.assertEqual(self.row(t)[7:11], ["-", "-", "300", "7"])

    def test_not_run(self):
        t = seedthree.render(seedthree.guest_cells(self.g), None, seedthree.host_cells(self.h),
                             "not run here: minivmm exited 3", True)
        self.assertEqual(self.row(t)[7:11], ["-", "-", "-", "-"])
        self.assertIn("not run here: minivmm exited 3", t)
