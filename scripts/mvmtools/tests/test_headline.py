"""bench/peers' headline as measured: fresh and reservoir rows, verdicts, extrapolation only when said."""
import contextlib
import io
import os
import shutil
import tempfile
import unittest

from mvmtools import gnuplot, headline, peers


def samples(measured=16000, asked=16000, res2m_s=0.006, fresh_pct=(95, 97), skip=None):
    """A run's samples.tsv as bench/peers writes it: two rounds of 1 and 2 threads."""
    rows = [("headline-size", "size", "bench", 1, "asked_mib", asked),
            ("headline-size", "size", "bench", 1, "measured_mib", measured),
            ("headline-size", "size", "bench", 1, "mem_available_mib", 20000),
            ("headline-size", "size", "bench", 1, "margin_mib", max(1024, measured // 10)),
            ("roofline", "anon clear", "t1", 1, "gib_per_s", 2.0),
            ("roofline", "hugetlb2m map", "t1", 1, "gib_per_s", 3000.0)]
    gib = measured / 1024
    cells = [("fresh anon %dM" % measured, gib / 1.9, "clear"),
             ("reservoir hugetlb2m %dM" % measured, res2m_s, "map"),
             ("reservoir memfd %dM" % measured, 4.096 * measured / 16000, "map")]
    for cell, s, op in cells:
        for seq, t in ((0, "t1"), (1, "t1"), (1, "t2"), (2, "t2"), (2, "t1")):
            k = seq + (0 if t == "t1" else 1)
            for metric, v in (("eager_s", s * (1 + 0.01 * k)), ("populated_gib", gib), ("done_gib", gib),
                              ("populate_s", s), ("mapped_to_entry_s", s + 0.01), ("process_s", s + 0.1),
                              ("pct_of_ceiling", fresh_pct[k % 2] if op == "clear" else 50), ("ceiling_gib_s", 2),
                              ("ceiling_op", op)):
                rows.append(("headline", cell, t, seq, metric, v))
            if cell.startswith("reservoir"):
                rows += [("headline", cell, t, seq, "scrub_s", 2.0), ("headline", cell, t, seq, "scrub_gib", gib),
                         ("headline", cell, t, seq, "scrub_wait_s", 2.1), ("headline", cell, t, seq, "lease_wait_s", 0.0001)]
    for cell, _, _ in cells[1:]:
        rows.append(("headline-reservoir", cell, "create", 1, "create_s", 9.5))
    if skip:
        rows.append(("headline-skip", skip, "note", 1, "why", "the kernel granted 3 of the 16 1048576 KiB pages"))
    return "section\tcell\ttool\tseq\tmetric\tvalue\n" + "".join("\t".join(str(x) for x in r) + "\n" for r in rows)


@unittest.skipUnless(gnuplot.available(), "gnuplot is not installed")
class Headline(unittest.TestCase):
    def render(self, text):
        d = tempfile.mkdtemp()
        try:
            with open(os.path.join(d, "samples.tsv"), "w") as f:
                f.write(text)
            with open(os.path.join(d, "bench.tsv"), "w") as f:
                f.write("bench command\tpeers --only headline\nbench start (UTC)\t2026-12-01T00:00:00Z\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(peers.main([d]), 0)
            self.assertTrue(os.path.getsize(os.path.join(d, "headline.png")) > 0)
            return out.getvalue()
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def top(self, report):
        return report[report.index("## Headline"):report.index("## The roofline")]

    def test_measured_at_the_seeds_size(self):
        r = self.render(samples(skip="reservoir hugetlb1g"))
        self.assertIn("## 4. The seed's headline: 16000 MiB eager, fresh and from the reservoir", r)
        self.assertNotRegex(r, r"(?i)(?<!not )extrapolated")
        self.assertIn("Measured at 16000 MiB, the seed's size, not extrapolated", r)
        top = self.top(r)
        # 0.620 s / 0.006 s: about 100x, every run above the 10x target.
        self.assertRegex(top, r"\| eager from the reservoir, hugetlb2m \| 16000 MiB, 1 thread \| 0\.006\d* s \| "
                              r"Propolis 0\.620 s \(seed\) \| 10[0-3]\.\d\d \(\d+\.\d\d-\d+\.\d\d\) \(seed time / minivmm\) \| >= 10 \| met \|")
        self.assertRegex(top, r"eager fresh, anon, vs the clear ceiling \| 16000 MiB, 2 threads \| [0-9.]+ GiB/s \| "
                              r"roofline clear 2 GiB/s \| 9[5-7]% \(95-97%\) of the ceiling \| >= 90% \| met \|")
        # 4 KiB tmpfs: 4.096 s over 16000 MiB of 4 KiB pages is 1000 ns per page (the seed's 151).
        self.assertRegex(top, r"memfd \(4 KiB tmpfs\), per page \| 16000 MiB, 1 thread \| 10\d\d ns per page .*"
                              r"Propolis 151 ns per page .*\| 0\.1[45] \(0\.1\d-0\.1\d\) \(seed per page / minivmm\) \| reported \|")
        self.assertIn("Not measured: reservoir hugetlb1g: the kernel granted 3 of the 16 1048576 KiB pages.", r)
        self.assertRegex(r, r"Scrub rate \(median\): hugetlb2m 7\.81 GiB/s; memfd 7\.81 GiB/s\.")
        self.assertIn("| hugetlb2m | map | 1 |", r)  # the roofline's table

    def test_verdicts_follow_the_runs(self):
        top = self.top(self.render(samples(res2m_s=0.2, fresh_pct=(80, 85))))
        self.assertRegex(top, r"eager from the reservoir, hugetlb2m \| 16000 MiB, 2 threads .*\| >= 10 \| not met \|")
        self.assertRegex(top, r"anon, vs the clear ceiling \| 16000 MiB, 1 thread .*\| >= 90% \| not met \|")
        top = self.top(self.render(samples(fresh_pct=(85, 95))))
        self.assertRegex(top, r"anon, vs the clear ceiling \| 16000 MiB, 1 thread .*\| >= 90% \| inconclusive "
                              r"\(median (reaches|misses) 90, runs straddle it\) \|")

    def test_extrapolated_only_when_memory_was_short(self):
        r = self.render(samples(measured=8000, asked=16000, res2m_s=0.003))
        self.assertIn("- **Extrapolated**: MemAvailable (20000 MiB) could not hold 16000 MiB", r)
        self.assertIn("| 16000 MiB at that rate (s), extrapolated |", r)
        # The seed's 0.620 s against minivmm's 8000 MiB time doubled: the ratio is the same.
        self.assertRegex(self.top(r), r"\| eager from the reservoir, hugetlb2m \| 8000 MiB, 1 thread \| 0\.003\d* s "
                                      r"\(16000 MiB extrapolated: 0\.006\d* s\) \| Propolis 0\.620 s \(seed\) \| 10[0-3]\.")

    def test_a_smaller_size_asked_is_not_extrapolated(self):
        r = self.render(samples(measured=1024, asked=1024, res2m_s=0.0004))
        self.assertNotRegex(r, r"(?i)(?<!not )extrapolated")
        # The seed at its own rate for 1024 MiB: 0.620 * 1024 / 16000 = 0.0397 s.
        self.assertIn("Propolis 0.0397 s (seed's 0.620 s for 16000 MiB, at its rate)", self.top(r))

    def test_seed_time_never_scaled_up(self):
        self.assertAlmostEqual(headline._seed_s(16384), 0.620)
        self.assertAlmostEqual(headline._seed_s(8000), 0.310)

    def test_verdict(self):
        self.assertEqual(headline.verdict([10, 11], 10), "met")
        self.assertEqual(headline.verdict([9, 9.9], 10), "not met")
        self.assertEqual(headline.verdict([9, 12, 13], 10), "inconclusive (median reaches 10, runs straddle it)")
        self.assertEqual(headline.verdict([], 10), "-")


if __name__ == "__main__":
    unittest.main()
