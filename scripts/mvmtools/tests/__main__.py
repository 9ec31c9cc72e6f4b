"""Run every test module here; one PASS or FAIL line per test (tests/run's format).
  python3 -m mvmtools.tests [--prefix NAME] [--summary]
--summary prints one line for the whole suite instead (another interpreter)."""
import os
import sys
import time
import unittest


class Lines(unittest.TextTestResult):
    prefix = "py"

    def _name(self, test):
        return "%s/%s" % (self.prefix, test.id().replace("mvmtools.tests.", ""))

    def addSuccess(self, test):
        super().addSuccess(test)
        if not self.summary:
            print("PASS " + self._name(test), flush=True)

    def _bad(self, test, err):
        text = self._exc_info_to_string(err, test).strip().split("\n")
        if not self.summary:
            print("FAIL %s: %s" % (self._name(test), "\n  ".join(text[-6:])), flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._bad(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._bad(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if not self.summary:
            print("SKIP %s: %s" % (self._name(test), reason), flush=True)


def main(argv):
    prefix, summary = "py", False
    while argv:
        if argv[0] == "--prefix" and len(argv) > 1:
            prefix, argv = argv[1], argv[2:]
        elif argv[0] == "--summary":
            summary, argv = True, argv[1:]
        else:
            print(__doc__, file=sys.stderr)
            return 2
    Lines.prefix, Lines.summary = prefix, summary
    here = os.path.dirname(os.path.abspath(__file__))
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=os.path.dirname(os.path.dirname(here)))
    t0 = time.time()
    with open(os.devnull, "w") as quiet:
        res = unittest.TextTestRunner(stream=quiet, resultclass=Lines, verbosity=0).run(suite)
    bad = len(res.failures) + len(res.errors)
    if summary:
        status = "PASS" if bad == 0 and res.testsRun else "FAIL"
        print("%s %s (%d tests, %d failed, %s, %.1f s)" % (status, prefix, res.testsRun, bad, sys.version.split()[0],
                                                          time.time() - t0))
    return 0 if bad == 0 and res.testsRun else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
