"""mvmtools.outfile: the tools' files go through symlinks, whole or not at all."""
import os
import shutil
import tempfile
import unittest

from mvmtools import outfile


class Outfile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.tmp, "sub"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def p(self, *parts):
        return os.path.join(self.tmp, *parts)

    def test_dangling_link_written_through(self):
        os.symlink("sub/real.txt", self.p("link.txt"))
        outfile.write_text(self.p("link.txt"), "new\n")
        self.assertTrue(os.path.islink(self.p("link.txt")))
        with open(self.p("sub", "real.txt")) as f:
            self.assertEqual(f.read(), "new\n")

    def test_chain_keeps_mode_and_links(self):
        with open(self.p("sub", "real.txt"), "w") as f:
            f.write("old\n")
        os.chmod(self.p("sub", "real.txt"), 0o640)
        os.symlink("real.txt", self.p("sub", "l1"))
        os.symlink("sub/l1", self.p("l2"))
        outfile.write_text(self.p("l2"), "new\n")
        self.assertTrue(os.path.islink(self.p("l2")) and os.path.islink(self.p("sub", "l1")))
        self.assertEqual(os.stat(self.p("sub", "real.txt")).st_mode & 0o777, 0o640)
        self.assertEqual(open(self.p("sub", "real.txt")).read(), "new\n")

    def test_failure_leaves_previous_file(self):
        with open(self.p("r.txt"), "w") as f:
            f.write("old\n")
        with self.assertRaises(RuntimeError):
            with outfile.replacing(self.p("r.txt")) as f:
                f.write("half")
                raise RuntimeError("killed")
        self.assertEqual(open(self.p("r.txt")).read(), "old\n")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["r.txt", "sub"])  # no temporary left

    def test_missing_directory_says_mkdir(self):
        os.symlink("gone/x.txt", self.p("l"))
        with self.assertRaises(outfile.OutError) as c:
            outfile.write_text(self.p("l"), "x", "--out")
        self.assertIn("no directory %s (make it first: mkdir -p %s)" % (self.p("gone"), self.p("gone")), str(c.exception))
        self.assertIn("(a link to %s)" % self.p("gone", "x.txt"), str(c.exception))

    def test_device_written_in_place(self):
        outfile.write_text(os.devnull, "x")
        self.assertTrue(os.path.exists(os.devnull) and not os.path.isfile(os.devnull))

    def test_loop(self):
        os.symlink("b", self.p("a"))
        os.symlink("a", self.p("b"))
        with self.assertRaises(outfile.OutError):
            outfile.write_text(self.p("a"), "x")
