"""The quantile against the fixture the C unit test reads, grouped stats, ratios."""
import unittest

from mvmtools import stats
from mvmtools.tests import fixture


def read_fixture():
    cases = []
    with open(fixture("quantiles.tsv")) as f:
        for line in f:
            if line.startswith("#") or line.startswith("name\t") or not line.strip():
                continue
            name, samples, n, *expected = line.rstrip("\n").split("\t")
            cases.append((name, [float(x) for x in samples.split(",")], int(n), [float(x) for x in expected]))
    return cases


def close(a, b):
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


class Quantile(unittest.TestCase):
    def test_fixture_matches(self):
        cases = read_fixture()
        self.assertGreaterEqual(len(cases), 10)
        for name, samples, n, (lo, q1, med, q3, hi) in cases:
            s = stats.spread(samples)
            self.assertEqual(s.n, n, name)
            for got, want, what in ((s.min, lo, "min"), (s.q1, q1, "q1"), (s.median, med, "median"),
                                    (s.q3, q3, "q3"), (s.max, hi, "max")):
                self.assertTrue(close(got, want), "%s %s: %r != %r" % (name, what, got, want))

    def test_type7_by_hand(self):
        # numpy.percentile([1, 2, 3, 10], [25, 50, 75]) = 1.75, 2.5, 4.75
        v = sorted([1, 3, 2, 10])
        self.assertEqual([stats.quantile(v, p) for p in (0.25, 0.5, 0.75)], [1.75, 2.5, 4.75])
        self.assertEqual(stats.quantile([7], 0.5), 7)
        self.assertEqual(stats.quantile([1, 2], 1.0), 2)

    def test_empty(self):
        self.assertIsNone(stats.spread([]))
        with self.assertRaises(ValueError):
            stats.quantile([], 0.5)


class GroupStats(unittest.TestCase):
    def test_as_bench_stats_printed(self):
        rows = [r.split("\t") for r in ("a\tx\t1", "a\tx\t3", "a\tx\t2", "a\tx\t10")]
        self.assertEqual(stats.group_stats(rows, 2), [["a", "x", "4", "2.5", "1.75", "4.75", "1", "10", "1,3,2,10"]])

    def test_non_numbers_skipped_samples_verbatim(self):
        self.assertEqual(stats.group_stats([["k", "-"], ["k", "5e-3"]], 1),
                         [["k", "1", "0.005", "0.005", "0.005", "0.005", "0.005", "5e-3"]])

    def test_default_keys_and_order(self):
        out = stats.group_stats([["b", "1"], ["a", "2"], ["b", "3"]])
        self.assertEqual([r[0] for r in out], ["b", "a"])
        self.assertEqual(out[0][1:4], ["2", "2", "1.5"])

    def test_nine_digits(self):
        out = stats.group_stats([["k", "0.123456789123"], ["k", "25276510208"]], 1)
        self.assertEqual(out[0][5:7], ["0.123456789", "2.52765102e+10"])


class Ratios(unittest.TestCase):
    def test_per_round(self):
        rows = [r.split("\t") for r in ("c\tq\t1\t4", "c\tm\t1\t2", "c\tm\t2\t4", "c\tq\t2\t2", "d\tq\t1\t3",
                                        "d\tm\t1\t1", "d\tq\t2\t9")]
        self.assertEqual(stats.paired_ratios(rows, "q", "m"), [["c", "2"], ["c", "0.5"], ["d", "3"]])

    def test_missing_and_zero(self):
        rows = [["c", "q", "1", "-"], ["c", "m", "1", "2"], ["c", "q", "2", "1"], ["c", "m", "2", "0"]]
        self.assertEqual(stats.paired_ratios(rows, "q", "m"), [])
