"""bench/peers-report regenerates the committed reports byte for byte."""
import contextlib
import io
import os
import shutil
import tempfile
import unittest

from mvmtools import gnuplot, peers
from mvmtools.tests import REPO

# The last: a --quick run in the emulated KVM host (scripts/emu-host), with
# --eager=prefault beside populate and lazy.
RUNS = ("peers-20261130-150845", "peers-20261130-152222-quick", "peers-20261207-042201-quick-emulated")


@unittest.skipUnless(gnuplot.available(), "gnuplot is not installed")
class Regenerate(unittest.TestCase):
    def test_committed_reports(self):
        for name in RUNS:
            src = os.path.join(REPO, "bench", "results", name)
            tmp = tempfile.mkdtemp()
            try:
                d = os.path.join(tmp, name)
                shutil.copytree(src, d)
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    self.assertEqual(peers.main([d]), 0)
                with open(os.path.join(src, "report.md")) as f:
                    want = f.read()
                self.assertEqual(out.getvalue(), want, name)
                for png in ("eager", "startup", "sweep", "headline"):
                    self.assertTrue(os.path.getsize(os.path.join(d, png + ".png")) > 0)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)

    def test_usage(self):
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(peers.main([]), 2)
            self.assertEqual(peers.main(["/nonexistent"]), 2)


def _run_dir(tmp, emulated, prefault):
    """A bench/peers output of one made-up quick run: eager (minivmm populate,
    prefault where the platform has it, QEMU, plain) and the flat workload's
    first pass (lazy, populate, prefault) in two rounds."""
    rows = []

    def add(section, cell, tool, seq, metric, value):
        rows.append("\t".join([section, cell, tool, str(seq), metric, str(value)]))

    for k in (1, 2):
        add("eager", "4k 1G t1", "minivmm", k, "populate_s", 1.0 + k / 10)
        add("eager", "4k 1G t1", "minivmm", k, "own_s", 1.0 + k / 10)
        add("eager", "4k 1G t1", "minivmm", k, "process_s", 1.5)
        add("eager", "4k 1G t1", "minivmm", k, "kvm_pages_4k", 12)
        add("eager", "4k 1G t1", "minivmm", k, "kvm_pages_2m", 0)
        if prefault:
            add("eager", "4k 1G t1", "prefault", k, "populate_s", 1.0 + k / 10)
            add("eager", "4k 1G t1", "prefault", k, "own_s", 1.5 * (1.0 + k / 10))
            add("eager", "4k 1G t1", "prefault", k, "process_s", 2.0)
            add("eager", "4k 1G t1", "prefault", k, "kvm_pages_4k", 262144)
            add("eager", "4k 1G t1", "prefault", k, "kvm_pages_2m", 0)
        add("eager", "4k 1G t1", "qemu", k, "populate_s", 2.0 * (1.0 + k / 10))
        add("eager", "4k 1G t1", "qemu", k, "process_s", 3.0)
        add("eager", "4k 1G t1", "plain", k, "populate_s", 1.0 + k / 10)
        add("eager", "4k 1G t1", "plain", k, "process_s", 1.2)
        cell = "flat 1..64 MiB, --mem 2G"
        for m, pf, first in (("lazy", 32531, 3.5), ("populate", 32525, 2.5), ("prefault", 0, 0.05)):
            if m == "prefault" and not prefault:
                continue
            add("firstpass", cell, m, k, "eager_s", "-" if m == "lazy" else 9.0)
            add("firstpass", cell, m, k, "first_pass_s", first)
            add("firstpass", cell, m, k, "first_work_s", first + 1)
            add("firstpass", cell, m, k, "pf_taken", pf)
            add("firstpass", cell, m, k, "exits", pf + 20)
            add("firstpass", cell, m, k, "warm_pf_taken", 0)
        for side in ("guest", "host"):
            add("flat", "pass 1 64", side, k, "touch_s", 0.5)
            add("flat", "pass 2 64", side, k, "touch_s", 0.01)
    if not prefault:
        add("prefault-skip", "pvm, shadow paging", "note", 1, "why",
            "KVM_PRE_FAULT_MEMORY is not available on this platform (pvm, shadow paging): no --eager=prefault cells")
    if emulated:
        add("emulated", "host", "note", 1, "why", "EMULATED host (QEMU TCG)")
    d = os.path.join(tmp, "run")
    os.makedirs(d)
    with open(os.path.join(d, "samples.tsv"), "w") as f:
        f.write("section\tcell\ttool\tseq\tmetric\tvalue\n" + "\n".join(rows) + "\n")
    with open(os.path.join(d, "commands.tsv"), "w") as f:
        f.write("section\tcell\ttool\tcommand\n")
    with open(os.path.join(d, "bench.tsv"), "w") as f:
        f.write("bench command\tpeers --quick\nkernel tracing\ttracefs instance (boundaries observed by the kernel)\n")
    return d


class PrefaultAndEmulated(unittest.TestCase):
    def render(self, emulated, prefault):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        rep = peers.Report(_run_dir(tmp, emulated, prefault))
        try:
            return rep.render()
        finally:
            rep.close()

    def line(self, text, start):
        return next((x for x in text.split("\n") if x.startswith(start)), None)

    def test_emulated_line_on_top(self):
        text = self.render(True, True)
        self.assertEqual(text.split("\n")[2], peers.EMULATED_LINE)
        self.assertNotIn(peers.EMULATED_LINE, self.render(False, True))

    def test_emulated_qemu_ratios_labelled_and_not_judged(self):
        row = self.line(self.render(True, True), "| eager populate (EMULATED host: emulated times) | 4k 1G t1 |")
        self.assertIsNotNone(row)
        # QEMU's time over minivmm's, per round: 2.0 both rounds; the target is not judged.
        self.assertIn("| 2.00 (2.00-2.00) | >= 0.9 | not judged (EMULATED host) |", row)
        plain = self.line(self.render(False, True), "| eager populate | 4k 1G t1 | 1.15 s | QEMU prealloc")
        self.assertTrue(plain.endswith("| 2.00 (2.00-2.00) | >= 0.9 | met |"), plain)

    def test_prefault_beside_populate(self):
        text = self.render(True, True)
        row = self.line(text, "| 4k 1G t1 | 1.15 [1.12-1.18] (1.1-1.2) | 1.73 [")
        self.assertIsNotNone(row, text)
        # prefault/populate per round: 1.5 in both; KVM's gauges beside the times.
        self.assertIn("| 1.50 (1.50-1.50) |", row)
        self.assertIn("262144 [262144-262144] (262144-262144), 0 [0-0] (0-0) |", row)
        self.assertIn("| eager, --eager=prefault vs --eager=populate (EMULATED host: emulated times) | 4k 1G t1 | "
                      "prefault 1.73 s, KVM pages_4k 262144, pages_2m 0 | populate 1.15 s, KVM pages_4k 12, pages_2m 0 | "
                      "1.50 (1.50-1.50) (time ratio prefault/populate) | - | - |", text)

    def test_first_pass_counts_beside_times(self):
        text = self.render(True, True)
        for mode, pf in (("lazy", "32531"), ("--eager=populate", "32525"), ("--eager=prefault", "0")):
            row = self.line(text, "| %s | " % mode)
            self.assertIsNotNone(row, mode)
            self.assertIn("| %s [%s-%s] (%s-%s) |" % ((pf,) * 5), row)
        self.assertIn("| first pass, --eager=prefault vs --eager=populate (EMULATED host: emulated times) | "
                      "flat 1..64 MiB, --mem 2G | prefault: pass 1 KVM pf_taken 0, 0.05 s | "
                      "populate: pass 1 KVM pf_taken 32525, 2.5 s | 0.02 (0.02-0.02) (pass 1 time ratio prefault/populate) | - | - |",
                      text)

    def test_no_prefault_names_the_platform(self):
        text = self.render(False, False)
        line = ("KVM_PRE_FAULT_MEMORY is not available on this platform (pvm, shadow paging): "
                "no --eager=prefault cells.")
        # Once in the eager section, once in the first pass: instead of the cells.
        self.assertEqual(text.count(line), 2)
        self.assertNotIn("| --eager=prefault |", text)
        self.assertNotIn("beside --eager=populate (same cells", text)
        self.assertIn("| --eager=populate | ", text)
