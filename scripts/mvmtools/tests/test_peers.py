"""bench/peers-report regenerates the committed reports byte for byte."""
import contextlib
import io
import os
import shutil
import tempfile
import unittest

from mvmtools import gnuplot, peers
from mvmtools.tests import REPO

RUNS = ("peers-20261130-150845", "peers-20261130-152222-quick")


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
