"""Williams designs: the orders bench/lib.sh prints and their balance."""
import itertools
import unittest

from mvmtools import design
from mvmtools.tests import fixture


class Williams(unittest.TestCase):
    def test_known_orders(self):
        self.assertEqual(design.order(2, ["A", "B"]), list("ABBA"))
        self.assertEqual(" ".join(design.order(6, list("ABC"))), "A B C B C A C A B C B A A C B B A C")
        self.assertEqual(" ".join(design.order(4, list("ABCD"))), "A B D C B C A D C D B A D A C B")
        self.assertEqual(design.order_seq(3, ["A", "B"]), [("A", 1), ("B", 1), ("B", 2), ("A", 2), ("A", 3), ("B", 3)])

    def test_balanced(self):
        for n in range(2, 8):
            rows = design.williams_rows(n)
            self.assertEqual(len(rows), design.cycle_length(n))
            self.assertEqual(len(rows), n if n % 2 == 0 else 2 * n)
            for row in rows:
                self.assertEqual(sorted(row), list(range(n)))
            # every name equally often in every position
            for pos in range(n):
                counts = [sum(1 for r in rows if r[pos] == i) for i in range(n)]
                self.assertEqual(len(set(counts)), 1, (n, pos, counts))
            # every ordered pair adjacent equally often (first-order carry-over)
            pairs = [(r[k], r[k + 1]) for r in rows for k in range(n - 1)]
            counts = [pairs.count(p) for p in itertools.permutations(range(n), 2)]
            self.assertEqual(len(set(counts)), 1, (n, counts))

    def test_rows_text(self):
        self.assertEqual(design.order_rows_text(2, ["A", "B"]), "A B, B A")
        self.assertEqual(design.order_rows_text(6, list("ABC")), "A B C, B C A, C A B, C B A, A C B, B A C")
        self.assertEqual(design.order_rows_text(3, ["A", "B"]), "A B, B A; then again from the first row")


class Fixture(unittest.TestCase):
    """tests/fixtures/williams.tsv: the orders minivmm's experiment_order (the C unit test) gives too."""

    def test_fixture_matches(self):
        cases = 0
        with open(fixture("williams.tsv")) as f:
            for line in f:
                if line.startswith("#") or line.startswith("n\t") or not line.strip():
                    continue
                n, rounds, order = line.rstrip("\n").split("\t")
                self.assertEqual(design.order(int(rounds), list(range(int(n)))), [int(x) for x in order.split()], line)
                cases += 1
        self.assertGreaterEqual(cases, 10)
