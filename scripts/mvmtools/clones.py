"""bench/clones' report: per mode and N, the clones' tail and the memory they
hold, the issue's two targets as ratios, and a plot of p95 and memory against N.

samples.tsv rows (bench/clones writes them, one per burst):
  mode n round fuw_p50 fuw_p95 fuw_max restore_p50 restore_p95 restore_max
  handler_faults pss anon_pss file_pss file_cache working_set finished
"""
import os
import statistics
import tempfile

from . import gnuplot

FIELDS = ("mode", "n", "round", "fuw_p50", "fuw_p95", "fuw_max", "restore_p50", "restore_p95",
          "restore_max", "faults", "pss", "anon", "file", "cache", "ws", "finished")
MIB = 1 << 20


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != len(FIELDS):
                continue
            row = dict(zip(FIELDS, parts))
            for k in FIELDS[1:]:
                row[k] = float(row[k]) if row[k] not in ("", "null") else None
            rows.append(row)
    return rows


def cells(rows):
    """(mode, n) -> the median of each field over the rounds."""
    out = {}
    for r in rows:
        out.setdefault((r["mode"], int(r["n"])), []).append(r)
    med = {}
    for key, rs in out.items():
        med[key] = {k: statistics.median([r[k] for r in rs if r[k] is not None] or [float("nan")])
                    for k in FIELDS[1:]}
        med[key]["rounds"] = len(rs)
    return med


def table(med, modes):
    lines = ["%-9s %4s %10s %10s %10s %11s %9s %10s %10s %10s %8s" % (
        "mode", "N", "fuw_p50", "fuw_p95", "fuw_max", "restore_p95", "h_faults", "Pss_MiB",
        "anon_MiB", "cache_MiB", "Pss/N*ws")]
    for m in modes:
        for n in sorted(k[1] for k in med if k[0] == m):
            c = med[(m, n)]
            lines.append("%-9s %4d %10.1f %10.1f %10.1f %11.1f %9d %10.1f %10.1f %10.1f %8.2f" % (
                m, n, c["fuw_p50"], c["fuw_p95"], c["fuw_max"], c["restore_p95"], c["faults"],
                c["pss"] / MIB, c["anon"] / MIB, c["cache"] / MIB,
                c["pss"] / (n * c["ws"]) if c["ws"] else float("nan")))
    return lines


def targets(med, cpus):
    lines = []
    ns = sorted({k[1] for k in med})
    top = ns[-1] if ns else 0
    # private-read: the same, the guest reading after the snapshot (flat --read-after-snapshot).
    for mode in ("private", "private-read"):
        c = med.get((mode, top))
        if not c:
            continue
        bound = 1.5 * c["ws"] + c["anon"]
        lines.append("%s at N=%d: summed Pss %.1f MiB against 1.5 x one working set (%.1f MiB) + what "
                     "the clones wrote (their anonymous Pss, %.1f MiB) = %.1f MiB: ratio %.2f (target <= 1; "
                     "the file's part %.1f MiB, its page cache %.1f MiB; Pss over N x the working set %.2f)" % (
                         mode, top, c["pss"] / MIB, c["ws"] / MIB, c["anon"] / MIB, bound / MIB,
                         c["pss"] / bound, c["file"] / MIB, c["cache"] / MIB,
                         c["pss"] / (top * c["ws"]) if c["ws"] else float("nan")))
    one, many = med.get(("uffd", 1)), med.get(("uffd", top))
    if one and many and top > 1:
        share = max(1.0, top / cpus)
        lines.append("shared uffd handler at N=%d: p95 first useful work %.1f ms against CPU sharing alone "
                     "(%d clones on %d CPUs: %.1f x its N=1 p95 %.1f ms = %.1f ms): ratio %.2f (target <= 1.5)" % (
                         top, many["fuw_p95"], top, cpus, share, one["fuw_p95"], share * one["fuw_p95"],
                         many["fuw_p95"] / (share * one["fuw_p95"])))
    own, single = med.get(("uffd-own", top)), med.get(("uffd-1", top))
    if many and own:
        lines.append("at N=%d, the shared handler's p95 over each clone's own handlers': %.2f" % (
            top, many["fuw_p95"] / own["fuw_p95"]))
    if many and single:
        lines.append("at N=%d, the shared handler with one thread (uffd-1) over one thread per clone: p95 %.2f" % (
            top, single["fuw_p95"] / many["fuw_p95"]))
    return lines


def plot(med, modes, prefix, note=""):
    if not gnuplot.available():
        return "plot: " + gnuplot.MISSING
    with tempfile.TemporaryDirectory() as tmp:
        plots_t, plots_m = [], []
        for i, m in enumerate(modes):
            ns = sorted(k[1] for k in med if k[0] == m)
            if not ns:
                continue
            dat = os.path.join(tmp, "%d.dat" % i)
            with open(dat, "w") as f:
                for n in ns:
                    c = med[(m, n)]
                    f.write("%d %.3f %.3f %.3f\n" % (n, c["fuw_p95"], c["pss"] / MIB, n * c["ws"] / MIB))
            colour = gnuplot.quote(gnuplot.color(i))
            plots_t.append("%s using 1:2 with linespoints lw 2 lc rgb %s title %s" % (
                gnuplot.quote(dat), colour, gnuplot.quote(m)))
            plots_m.append("%s using 1:3 with linespoints lw 2 lc rgb %s title %s" % (
                gnuplot.quote(dat), colour, gnuplot.quote(m)))
            if i == 0:
                plots_m.append("%s using 1:4 with lines dt 2 lc rgb \"#555555\" title \"N x one working set\"" %
                               gnuplot.quote(dat))
        script = os.path.join(tmp, "p.gp")
        with open(script, "w") as f:
            f.write("set terminal svg size 1100,480 dynamic\nset output %s\n" % gnuplot.quote(prefix + ".svg"))
            f.write("set multiplot layout 1,2%s\n" % (" title " + gnuplot.quote(note) if note else ""))
            f.write("set logscale x 2\nset key top left\nset grid\n")
            f.write("set xlabel \"clones (N)\"\nset ylabel \"p95 first useful work, ms\"\n")
            f.write("set title \"p95 first useful work per clone\"\nplot %s\n" % ", ".join(plots_t))
            f.write("set ylabel \"MiB\"\nset title \"host memory: the clones' summed Pss\"\nplot %s\n" %
                    ", ".join(plots_m))
            f.write("unset multiplot\n")
        ok, err = gnuplot.run(script)
    return "plot: %s.svg" % prefix if ok else "plot: gnuplot failed: %s" % err


def report(samples, cpus, prefix, note=""):
    """note: a line over the plot (bench/clones: the platform, EMULATED where it is)."""
    rows = read(samples)
    if not rows:
        return ["no bursts finished: nothing to report"]
    modes = []
    for r in rows:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    med = cells(rows)
    lines = ["", "medians over the rounds (ms; memory measured while every clone held its RAM):"]
    lines += table(med, modes)
    lines.append("")
    lines += targets(med, cpus)
    lines.append(plot(med, modes, prefix, note))
    return lines
