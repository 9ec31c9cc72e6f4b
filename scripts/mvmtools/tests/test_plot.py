"""scripts/plot: its messages, and what it draws."""
import contextlib
import io
import os
import shutil
import tempfile
import unittest

from mvmtools import gnuplot, plot, results
from mvmtools.tests import fixture


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = plot.main(list(args))
    return status, out.getvalue(), err.getvalue()


class Messages(unittest.TestCase):
    def test_help(self):
        status, out, _ = run("--help")
        self.assertEqual(status, 0)
        self.assertIn("--y COUNTER", out)
        self.assertIn("--compare file", out)

    def test_missing_file(self):
        status, _, err = run("/nonexistent/r.json")
        self.assertEqual(status, 1)
        self.assertEqual(err, "plot: no such file: /nonexistent/r.json\n")

    def test_not_json(self):
        tmp = tempfile.mkdtemp()
        try:
            p = os.path.join(tmp, "x.json")
            with open(p, "w") as f:
                f.write("nope")
            self.assertIn("is not JSON", run(p)[2])
        finally:
            shutil.rmtree(tmp)

    def test_bogus_counter_lists_counters(self):
        status, _, err = run("--y", "bogus", fixture("results", "flat.json"))
        self.assertEqual(status, 2)
        self.assertIn("no KVM counter bogus; valid: ", err)
        self.assertIn("pf_taken", err)

    def test_usage(self):
        self.assertEqual(run()[0], 2)
        self.assertEqual(run("--frob", "x.json")[0], 2)
        self.assertEqual(run(fixture("results", "flat.json"), "p", "jpg")[0], 2)
        self.assertIn("alone", run(fixture("results", "compare.json"), fixture("results", "flat.json"))[2])

    def test_swapped_arguments_say_the_line(self):
        status, _, err = run("x.png", fixture("results", "flat.json"))
        self.assertEqual(status, 2)
        self.assertIn("'x.png' comes before the results file: the results files go first, then OUT-PREFIX; "
                      "write: scripts/plot %s x.png" % fixture("results", "flat.json"), err)

    def test_tsv_is_not_results(self):
        tmp = tempfile.mkdtemp()
        try:
            p = os.path.join(tmp, "roof.tsv")
            open(p, "w").close()
            status, _, err = run(p)
            self.assertEqual(status, 2)
            self.assertIn("roof.tsv is a TSV (bench/roofline's is read by minivmm --roofline", err)
            self.assertIn("the plot is OUT-PREFIX.png", run(fixture("results", "flat.json"), "new.tsv")[2])
        finally:
            shutil.rmtree(tmp)

    def test_no_sweep(self):
        self.assertIn("has no sweep records", run(fixture("results", "hello.json"), "/tmp/x")[2])


class Data(unittest.TestCase):
    def test_series_follow_table_rows(self):
        res = results.load(fixture("results", "parallel.json"))
        series = plot.sweep_series(res, "")
        self.assertEqual([k for k, _ in series], [("sweep", 1, "demand"), ("sweep", 1, "map_populate")])
        # Labelled as the tables name them: demand and populate (the guest's MAP_POPULATE).
        self.assertEqual([plot.series_title(k, {"sweep"}) for k, _ in series],
                         ["demand, iteration 1", "populate, iteration 1"])
        all_rows = {(r["size_mib"], r["guest_mapping"]): r["touch_s"] for r in res.runs[0].sweep if r["vcpu"] == "all"}
        for key, pts in series:
            for mib, y, _, _ in pts:
                self.assertEqual(y, all_rows[(mib, key[2])])

    def test_repeat_has_spread(self):
        series = plot.sweep_series(results.load(fixture("results", "repeat.json")), "")
        self.assertTrue(all(lo is not None and lo <= y <= hi for _, pts in series for _, y, lo, hi in pts))

    def test_title_says_what_ran(self):
        res = results.load(fixture("results", "compare.json"))
        self.assertEqual(plot.what_ran(res), "flat --max-mib 2 --iterations 1, 16 MiB anon")
        self.assertEqual(plot.runs_text(res, "lazy"), "2 runs (+1 warm-up)")


class Frontiers(unittest.TestCase):
    def setUp(self):
        self.res = results.load(fixture("results", "compare3.json"))

    def test_modes_in_the_order_given(self):
        self.assertEqual(plot.compare_modes(self.res), ["lazy", "eager", "uffd"])
        self.assertEqual(plot.compare_modes(results.load(fixture("results", "compare.json"))), ["lazy", "eager"])
        self.assertEqual(plot.mode_title(self.res, "eager"), "eager (populate)")
        self.assertEqual(plot.mode_title(self.res, "uffd"), "uffd")

    def test_representative_is_the_median_run(self):
        for m in ("lazy", "eager", "uffd"):
            runs = sorted(self.res.measured(m), key=lambda r: r.summary["first_useful_work_ms"])
            self.assertIs(plot.representative(self.res, m), runs[0])  # two runs: the sooner
        self.assertIsNone(plot.representative(self.res, "background"))

    def test_guest_frontier_reaches_the_pass(self):
        run = plot.representative(self.res, "lazy")
        pts = plot.guest_frontier(run)
        self.assertEqual(pts[-1][1], sum(o["pages"] * 4096 for o in run.doc["touch_order"]))
        self.assertEqual([t for t, _ in pts], sorted(t for t, _ in pts))
        self.assertTrue(plot.has_progress(self.res))
        self.assertFalse(plot.has_progress(results.load(fixture("results", "compare.json"))))

    def test_summed_over_threads(self):
        # Two threads' frontiers: at each time, the sum of each one's latest.
        pts = plot.summed([(0, 1.0, 10), (1, 2.0, 5), (0, 3.0, 20), (1, 3.0, 15)])
        self.assertEqual(pts, [(1.0, 10), (2.0, 15), (3.0, 35)])

    def test_host_frontier_from_eager_progress(self):
        # The shape background eager writes ("eager": {"progress": [{thread, t_ms, bytes}]}), made up here.
        run = results.Run({"eager": {"progress": [{"thread": 0, "t_ms": 1.5, "bytes": 4096},
                                                  {"thread": 1, "t_ms": 2.0, "bytes": 8192}]}})
        self.assertEqual(plot.host_frontier(run), [(1.5, 4096), (2.0, 12288)])
        self.assertEqual(plot.host_frontier(plot.representative(self.res, "eager")), [])


@unittest.skipUnless(gnuplot.available(), "gnuplot is not installed")
class Drawn(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def script(self, fn, *args):
        return "\n".join(fn(*args, os.path.join(self.tmp, "o.png"), plot.TERMINALS["png"], self.tmp))

    def test_compare_legend_lists_visible_phases(self):
        gp = self.script(plot.compare_plot, results.load(fixture("results", "compare.json")))
        self.assertIn('title "firmware_ready"', gp)
        # A few microseconds: drawn, and listed as too thin to see (every segment drawn has a name).
        self.assertIn('title "kvm_open (too thin to see)"', gp)
        self.assertIn("invert", gp)
        self.assertIn("each run: end (vm_exit)", gp)
        self.assertIn("lazy 2 runs (+1 warm-up), eager 2 runs", gp)

    def test_compare_one_scale_when_alike(self):
        gp = self.script(plot.compare_plot, results.load(fixture("results", "compare3.json")))
        self.assertNotIn("multiplot", gp)

    def test_compare_zooms_the_short_modes(self):
        # A restore's uffd many times slower than the others flattened them: they
        # are drawn again on their own scale, in a panel of their own.
        res = results.load(fixture("results", "compare3.json"))
        for p in res.doc["aggregate"]["uffd"]["phases"]:
            if (p.get("dur_ms") or {}).get("n"):
                p["dur_ms"]["median"] *= 50
        gp = self.script(plot.compare_plot, res)
        self.assertIn("set multiplot layout 1,2", gp)
        plots = [line for line in gp.split("\n") if line.startswith("plot ")]
        self.assertEqual(len(plots), 2)
        self.assertIn("stack-all.dat", plots[0])
        self.assertIn("stack-short.dat", plots[1])
        with open(os.path.join(self.tmp, "stack-short.dat")) as f:
            self.assertEqual([line.split("\t")[0] for line in f], ["lazy", "eager"])
        self.assertIn("under 1/%d of the tallest" % plot.ZOOM_RATIO, gp)
        # gnuplot draws it (both panels) without a complaint.
        script = os.path.join(self.tmp, "o.gp")
        with open(script, "w") as f:
            f.write(gp + "\n")
        ok, err = gnuplot.run(script)
        self.assertTrue(ok, err)
        self.assertGreater(os.path.getsize(os.path.join(self.tmp, "o.png")), 0)

    def test_distinct_colours(self):
        files = [results.load(fixture("results", f)) for f in ("flat.json", "parallel.json")]
        gp = self.script(plot.sweep_plot, files, "pf_taken")
        colours = [c for c in gp.split("lc rgb ")[1:]]
        colours = [c.split()[0] for c in colours]
        self.assertEqual(len(colours), len(set(colours)))
        self.assertIn("(0 at every size)", gp)  # flat's warm pass takes no faults

    def test_file_names(self):
        out = os.path.join(self.tmp, "sweep")
        status, printed, err = run(fixture("results", "parallel.json"), out)
        self.assertEqual(status, 0, err)
        self.assertEqual(printed.strip(), out + ".png")
        status, printed, err = run(fixture("results", "compare.json"), os.path.join(self.tmp, "compare"), "svg")
        self.assertEqual(status, 0, err)
        self.assertEqual(printed.strip(), os.path.join(self.tmp, "compare.svg"))
        with open(out + ".png", "rb") as f:
            self.assertEqual(f.read(4), b"\x89PNG")

    def test_two_files_two_labels(self):
        # Two files of the same configuration: told apart by their names, never the same label.
        res = [results.load(fixture("results", "flat.json")), results.load(fixture("results", "flat.json"))]
        res[1].path = "/elsewhere/other.json"
        labels = plot.file_labels(res)
        self.assertEqual(len(set(labels)), 2)
        labels = plot.file_labels([results.load(fixture("results", f)) for f in ("flat.json", "parallel.json")])
        self.assertEqual(len(set(labels)), 2)
        gp = self.script(plot.sweep_plot, res, "pf_taken")
        titles = [t.split(' title "')[1].split('"')[0] for t in gp.split("plot ", 1)[1].split(", \"")]
        self.assertEqual(len(titles), len(set(titles)))

    def test_sweep_axes_fit_the_data(self):
        # The x axis ends near the largest size, not at the next power of ten; the key is outside.
        gp = self.script(plot.sweep_plot, [results.load(fixture("results", "parallel.json"))], "")
        xr = [l for l in gp.split("\n") if l.startswith("set xrange")][0]
        lo, hi = (float(v) for v in xr[len("set xrange ["):-1].split(":"))
        top = max(r["size_mib"] for r in results.load(fixture("results", "parallel.json")).runs[0].sweep)
        self.assertTrue(top < hi < 1.5 * top, xr)
        self.assertIn("set key outside below", gp)

    def test_progress_key_and_dashes(self):
        gp = self.script(plot.progress_plot, results.load(fixture("results", "compare3.json")))
        self.assertIn("set key outside below", gp)  # never over a line
        self.assertNotIn("opaque", gp)
        self.assertNotIn("dashed", gp)  # no mode here has a host frontier: none is said to be
        # A background run's host frontier: long dashes over a few dozen points.
        res = results.load(fixture("results", "compare3.json"))
        run = plot.representative(res, "eager")
        run.doc.setdefault("eager", {})["progress"] = [{"thread": 0, "t_ms": float(i), "bytes": i << 20}
                                                       for i in range(500)]
        gp = "\n".join(plot.progress_plot(res, os.path.join(self.tmp, "p.png"), plot.TERMINALS["png"], self.tmp))
        self.assertIn("with lines lw 2.5 dt (10,8)", gp)
        self.assertIn("dashed: the host's populate frontier", gp)
        self.assertEqual(len(plot.thinned(list(range(1000)), plot.HOST_POINTS)), plot.HOST_POINTS)

    def test_png_prefix_is_the_file(self):
        # "scripts/plot c.json x.png" writes x.png, not x.png.png; x.svg says svg.
        out = os.path.join(self.tmp, "x.png")
        status, printed, err = run(fixture("results", "flat.json"), out)
        self.assertEqual((status, printed.strip()), (0, out), err)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["x.png"])
        status, printed, _ = run(fixture("results", "flat.json"), os.path.join(self.tmp, "y.svg"))
        self.assertEqual(printed.strip(), os.path.join(self.tmp, "y.svg"))
        self.assertEqual(run(fixture("results", "flat.json"), out, "svg")[0], 2)

    def test_through_a_dangling_link(self):
        os.makedirs(os.path.join(self.tmp, "real"))
        os.symlink("real/c3.png", os.path.join(self.tmp, "c3.png"))
        status, _, err = run(fixture("results", "compare3.json"), os.path.join(self.tmp, "c3"))
        self.assertEqual(status, 0, err)
        self.assertTrue(os.path.islink(os.path.join(self.tmp, "c3.png")))
        with open(os.path.join(self.tmp, "real", "c3.png"), "rb") as f:
            self.assertEqual(f.read(4), b"\x89PNG")
        self.assertEqual(sorted(os.listdir(os.path.join(self.tmp, "real"))), ["c3.png"])  # no temporary left

    def test_progress_plot(self):
        # A --compare file with the touch frontier: the bars and the frontiers, both printed.
        out = os.path.join(self.tmp, "c3")
        status, printed, err = run(fixture("results", "compare3.json"), out)
        self.assertEqual(status, 0, err)
        self.assertEqual(printed.split(), [out + ".png", out + "-progress.png"])
        gp = self.script(plot.progress_plot, results.load(fixture("results", "compare3.json")))
        for m in ("lazy: guest touch frontier", "eager (populate): guest touch frontier", "uffd: guest"):
            self.assertIn(m, gp)
        self.assertIn("run at its median", gp)
        self.assertIn("lazy run %d (" % plot.representative(results.load(fixture("results", "compare3.json")), "lazy").index, gp)
        gp = self.script(plot.compare_plot, results.load(fixture("results", "compare3.json")))
        self.assertIn("lazy vs eager (populate) vs uffd", gp)
