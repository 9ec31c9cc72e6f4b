"""scripts/plot: minivmm results files drawn with gnuplot.

  scripts/plot [--y COUNTER] RESULTS.json [MORE.json...] [OUT-PREFIX] [png|svg]

Writes OUT-PREFIX.png (or .svg); OUT-PREFIX defaults to the first file's name
without .json. Prints the file it wrote.

A single run's file, or a --repeat file: the sweep/flat table's rows, the touch
loop's seconds (what OSv's table shows) against MiB on log-log axes, one line
per file, workload, iteration and guest mapping. A --repeat file draws the
medians with min-max error bars over its measured runs.
  --y COUNTER   one of KVM's counters per table row instead (pf_taken, exits,
                insn_emulation, ... as in the file's sweep[].kvm; a --repeat
                file: its first measured run). Log axes cannot show 0: zeros
                sit at the bottom (0.5), each series' a little apart
  MORE.json     more results files on the same axes, each line labelled by
                what differs between the files (backing, eager, vCPUs, RAM,
                guest arguments; e.g. anon vs thp), else by their names
  OUT-PREFIX    defaults to the first file's name without .json; one ending
                in .png or .svg is the file itself (and says the format)
A --compare file (alone): each mode's timeline as stacked bars, one segment
per phase (the medians of its measured runs), and each run's end and first
useful work as points, so the spread between runs shows. When its runs carry
the touch frontier (flat and perm: "progress"), also OUT-PREFIX-progress.png:
time to responsiveness, one line per mode on one time axis (ms since exec):
the guest's first pass, MiB written so far (all vCPUs), and, where the run
has one ("eager"."progress", background eager), the host's populate frontier
dashed in the same colour. Each mode's line is one representative run: its
median by first useful work (the title says which run).
A table row is the all-vCPU record of a --parallel run, else vCPU 0's.
"""
import os
import re
import shutil
import sys
import tempfile

from . import gnuplot, outfile, results
from .outfile import OutError

# One colour per phase, the same on every plot (phases in timeline order).
PHASE_COLORS = {
    "image_read": "#9400d3", "kvm_open": "#009e73", "vm_created": "#56b4e9", "ram_mapped": "#e69f00",
    "vcpus_created": "#f0e442",
    # A restore's (--restore): its saved state set, guest RAM made to hold the memory file, resumed.
    "state_loaded": "#cc79a7", "memory_ready": "#d55e00", "guest_resumed": "#000000",
    "eager_done": "#0072b2", "guest_loaded": "#e51e10", "guest_entry": "#000000",
    "firmware_ready": "#a0a0a0", "workload_start": "#8b4513", "first_useful_work": "#ff69b4",
    "workload_end": "#2e8b57", "vm_exit": "#4b0082",
}
# A phase shorter than this share of the tallest bar cannot be seen: drawn, not listed.
VISIBLE_SHARE = 0.01
ZOOM_RATIO = 5  # compare_plot: a mode this many times shorter than the tallest is drawn again, on its own scale
ZERO_FLOOR = 0.5  # where a counter's 0 is drawn on a log axis
TERMINALS = {"png": "pngcairo size 1000,650", "svg": "svg size 1000,650"}


class PlotError(Exception):
    """A problem with the input; str() is the message, usage() if it is a usage error."""

    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.status = status


def _plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def _mib(cfg):
    m = cfg.get("mem_bytes")
    return "%g MiB" % (m / 1048576) if isinstance(m, (int, float)) else "? MiB"


def what_ran(res):
    """'flat --max-mib 8 --iterations 2, 64 MiB anon' of a file's (first) run."""
    run = res.first_measured() or res.runs[0]
    cfg = run.config
    args = " ".join(cfg.get("guest_args") or []) or run.workload or "?"
    restore = run.doc.get("restore") or {}
    if restore.get("path"):  # --compare --restore: one snapshot, its restore modes
        return "a restore of %s (%s), %s %s" % (restore["path"], args, _mib(cfg), cfg.get("backing", "?"))
    return "%s, %s %s" % (args, _mib(cfg), cfg.get("backing", "?"))


def runs_text(res, label=None):
    n = len(res.measured(label))
    w = len([r for r in res.runs if r.warmup and (label is None or r.label == label)])
    return _plural(n, "run") + (" (+%d warm-up)" % w if w else "")


def counters_of(res):
    """The KVM counter names the file's table rows carry (sweep[].kvm)."""
    run = res.first_measured() if res.is_experiment else res.runs[0]
    names = set()
    for rec in (run.table_rows() if run else []):
        names.update((rec.get("kvm") or {}).keys())
    return sorted(names)


# --- the sweep plot ---------------------------------------------------------------
# The tables' names for the guest's mappings (sweep[].guest_mapping).
MAPPING_NAMES = {"demand": "demand", "map_populate": "populate", "direct_map": "direct map"}


def sweep_series(res, counter):
    """[((workload, iteration, mapping), [(MiB, y, lo, hi)...])] of one file."""
    groups, order = {}, []

    def add(rec, y, lo, hi):
        key = (rec.get("workload"), rec.get("iteration"), rec.get("guest_mapping"))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((rec.get("size_mib"), y, lo, hi))

    if res.is_experiment and not counter:
        agg = res.aggregate("run") or {}
        for rec in agg.get("sweep") or []:
            t = rec.get("touch_s") or {}
            if t.get("n"):
                add(rec, t.get("median"), t.get("min"), t.get("max"))
    else:
        run = res.first_measured() if res.is_experiment else res.runs[0]
        for rec in (run.table_rows() if run else []):
            if counter:
                y = (rec.get("kvm") or {}).get(counter)
            else:
                y = rec.get("touch_s")
            add(rec, y, None, None)
    return [(key, sorted(groups[key], key=lambda p: p[0])) for key in order]


def series_title(key, workloads):
    """'demand, iteration 1' (the workload first when the plot has several)."""
    workload, iteration, mapping = key
    t = "%s, iteration %s" % (MAPPING_NAMES.get(mapping, mapping), iteration)
    return "%s %s" % (workload, t) if len(workloads) > 1 else t


def file_labels(files):
    """A short label per file, from what differs between them (backing, eager,
    vCPUs, RAM, guest arguments), else their names: never two the same."""
    def facts(res):
        run = res.first_measured() or res.runs[0]
        cfg = run.config
        eager = cfg.get("eager", "?")
        return [("", cfg.get("backing", "?")), ("", "lazy" if eager == "none" else "eager " + eager),
                ("", _plural(cfg.get("vcpus", 1), "vCPU")), ("", _mib(cfg)),
                ("", " ".join(cfg.get("guest_args") or []))]
    all_facts = [facts(r) for r in files]
    differ = [k for k in range(len(all_facts[0])) if len(set(f[k][1] for f in all_facts)) > 1]
    labels = [", ".join(f[k][0] + str(f[k][1]) for k in differ) for f in all_facts]
    if len(set(labels)) < len(labels):
        labels = [os.path.basename(r.path) + (" (" + l + ")" if l else "") for r, l in zip(files, labels)]
    if len(set(labels)) < len(labels):
        labels = [r.path for r in files]
    return labels


def _shade(hex_colour, k):
    """The colour lightened toward white by step k (0: as it is)."""
    c = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
    f = min(0.6, 0.22 * k)
    return "#%02x%02x%02x" % tuple(int(v + (255 - v) * f) for v in c)


def sweep_plot(files, counter, out, term, tmp):
    series = []  # (title, group, iteration, pts)
    for res in files:
        if res.kind == "compare":
            raise PlotError("%s is a --compare file: it is plotted alone, as phase bars (no --y, no other files)"
                            % res.path, 2)
        if counter:
            valid = counters_of(res)
            if counter not in valid:
                raise PlotError("--y %s: %s's table rows have no KVM counter %s; valid: %s" % (
                    counter, res.path, counter, ", ".join(valid) if valid else "none (no sweep records with counters)"), 2)
        s = sweep_series(res, counter)
        if not s or any(y is None for _, pts in s for _, y, _, _ in pts):
            raise PlotError("%s has no sweep records%s" % (res.path, " with KVM counter %s" % counter if counter else ""))
    labels = file_labels(files) if len(files) > 1 else [""]
    workloads = set()
    per_file = [sweep_series(res, counter) for res in files]
    for s in per_file:
        workloads.update(k[0] for k, _ in s)
    groups = []  # (file index, workload, mapping): one colour each
    for fi, s in enumerate(per_file):
        for key, pts in s:
            g = (fi, key[0], key[2])
            if g not in groups:
                groups.append(g)
            title = series_title(key, workloads)
            series.append(((labels[fi] + ": " if labels[fi] else "") + title, groups.index(g), key[1], pts))
    data = os.path.join(tmp, "sweep.dat")
    plots, titles, seen = [], [], []
    floor = ZERO_FLOOR if counter else 1e-6
    xs = [mib for _, _, _, pts in series for mib, _, _, _ in pts]
    with open(data, "w") as f:
        for i, (title, g, iteration, pts) in enumerate(series):
            # A series that would sit exactly on another (the same values, or zeros at the
            # floor) is drawn a little to the right, by its index, and the legend says so.
            nudge = 1.0 + 0.04 * i
            same = next((t for t, p in seen if _coincide(p, pts)), None)
            seen.append((title, pts))
            zeros = all(y == 0 for _, y, _, _ in pts)
            f.write("# %s\n" % title)
            for mib, y, lo, hi in pts:
                x = mib * nudge if (y == 0 or same) else mib
                yy = y if y > 0 else floor
                f.write("%s\t%r\t%r\t%r\n" % (x, yy, lo if lo is not None else yy, hi if hi is not None else yy))
            f.write("\n\n")
            shown = title + (" (0 at every size)" if zeros else " (= %s, drawn right)" % same if same else "")
            style = "yerrorlines" if any(lo is not None for _, _, lo, _ in pts) else "linespoints"
            # A colour per file and mapping; its later iterations lighter and dashed.
            first = iteration in (1, None)
            k = (iteration or 1) - 1
            titles.append(shown)
            plots.append("%s index %d using 1:2%s with %s lw %s dt %s pt %d lc rgb %s title %s" % (
                gnuplot.quote(data), i, ":3:4" if style == "yerrorlines" else "", style,
                "2" if first else "1.5", "1" if first else "(6,4)", 1 + (g * 3 + k) % 13,
                gnuplot.quote(_shade(gnuplot.color(g), k)), gnuplot.quote(shown)))
    first = files[0]
    run = first.first_measured() or first.runs[0]
    p = run.platform
    what = "mmap sweep" if run.workload == "sweep" else run.workload
    title = "%s on %s (%s paging)" % (what, p.get("kvm", "?"), p.get("paging", "?"))
    if len(files) == 1:
        title += ": %s, %s" % (what_ran(first), runs_text(first))
        if first.is_experiment and not counter:
            title += ": medians, min-max error bars"
        elif first.is_experiment:
            title += ": its first measured run"
    else:
        each = ["%s, %s" % (what_ran(r), runs_text(r)) for r in files]
        title += ", %d files: %s" % (len(files), each[0] + " each" if len(set(each)) == 1 else "; ".join(
            "%s: %s" % (l, e) for l, e in zip(labels, each)))
    ylabel = ("%s (KVM's counter over each table row; 0 drawn at %g)" % (counter, ZERO_FLOOR) if counter
              else "seconds (the touch loop, as OSv times it)")
    # The key sits below the axes (gnuplot makes room for it, one column when its
    # titles are long): the canvas grows with its rows, so the axes keep their size.
    rows = len(titles) if max(len(t) for t in titles) > 45 else (len(titles) + 1) // 2
    lines = _wrap(title).count("\n") + 1
    term = term.replace(",650", ",%d" % (560 + 19 * rows + 16 * lines))
    # The x axis spans the data (log axes would round out to the next power of ten).
    lo, hi = min(xs), max(xs) * (1.0 + 0.04 * len(series))
    gp = ["set terminal %s noenhanced" % term, "set output %s" % gnuplot.quote(out),
          "set title %s" % gnuplot.quote(_wrap(title)), "set logscale xy", 'set xlabel "MiB"',
          "set xrange [%r:%r]" % (lo / 1.15, hi * 1.15),
          "set ylabel %s" % gnuplot.quote(ylabel),
          "set key outside below center horizontal Left reverse height 1.5", "set grid", "set datafile separator \"\\t\"", "plot " + ", ".join(plots)]
    return gp


def _coincide(a, b):
    """Two series that would hide one another on a log plot: the same sizes, and
    every value within 1% (zeros equal)."""
    if [p[0] for p in a] != [p[0] for p in b]:
        return False
    for (_, ya, _, _), (_, yb, _, _) in zip(a, b):
        if ya == yb:
            continue
        if ya <= 0 or yb <= 0 or abs(ya - yb) > 0.01 * max(ya, yb):
            return False
    return bool(a)


def _wrap(text, width=110):
    """A long title in lines of at most WIDTH characters (gnuplot breaks at \\n)."""
    lines, cur = [], ""
    for word in text.split(" "):
        if cur and len(cur) + 1 + len(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = word if not cur else cur + " " + word
    lines.append(cur)
    return "\n".join(lines)


# --- the compare plot -----------------------------------------------------------------
def compare_modes(res):
    """The modes of a --compare file with aggregates, in the order it ran them."""
    listed = res.doc.get("experiment", {}).get("modes") or ["lazy", "eager"]
    return [m for m in listed if res.aggregate(m)]


def mode_title(res, m):
    """'eager (populate)': a mode and the strategy its eager resolved to, if it had one."""
    run = res.first_measured(m)
    strategy = run.get("eager", "strategy") if run else None
    return "%s (%s)" % (m, strategy) if strategy and strategy != "none" else m


def compare_plot(res, out, term, tmp):
    modes = compare_modes(res)
    if not modes:
        raise PlotError("%s is a --compare file without aggregates (no measured run)" % res.path)
    med = {}
    phases = []
    for m in reversed(modes):  # eager's timeline first: it has every phase lazy has, and eager_done
        for p in res.aggregate(m).get("phases") or []:
            name = p.get("phase")
            if name not in phases:
                phases.append(name)
            d = p.get("dur_ms") or {}
            med[(m, name)] = d.get("median", 0) if d.get("n") else 0
    known = list(PHASE_COLORS)
    phases.sort(key=lambda n: known.index(n) if n in known else len(known))
    totals = {m: sum(med.get((m, p), 0) for p in phases) for m in modes}
    tallest = max(totals.values()) or 1
    # A mode many times slower than the others (a restore's uffd beside copy)
    # flattens them on one linear axis: they get a panel of their own scale.
    short = [m for m in modes if totals[m] * ZOOM_RATIO <= tallest]
    title = "%s: %s; %s; bars: median duration of each phase, points: each run" % (
        " vs ".join(mode_title(res, m) for m in modes), what_ran(res),
        ", ".join("%s %s" % (m, runs_text(res, m)) for m in modes))
    gp = ["set terminal %s noenhanced" % term, "set output %s" % gnuplot.quote(out),
          "set style data histograms", "set style histogram rowstacked",
          "set style fill solid 0.85 border -1", "set boxwidth 0.5", 'set ylabel "ms since exec"',
          "set datafile separator \"\\t\"", "set datafile missing \"NaN\""]
    if short and len(short) < len(modes):
        gp[0] = "set terminal %s noenhanced" % re.sub(r"size \d+,\d+", "size 1250,780", term)
        # Both panels the same height; the one key under them, across the canvas.
        gp += ["set multiplot layout 1,2 margins 0.08,0.98,0.40,0.84 spacing 0.08 title %s"
               % gnuplot.quote(_wrap(title, 110)),
               'set key at screen 0.5,0.31 center top vertical maxrows 5 Left reverse invert '
               'title "phase (the stack, top first)"']
        gp += _stack_panel(res, modes, phases, med, tallest, tmp, "all", "every mode, one scale")
        gp += ["unset key"]
        gp += _stack_panel(res, short, phases, med, max(totals[m] for m in short) or 1, tmp, "short",
                           "the modes under 1/%d of the tallest, on their own scale" % ZOOM_RATIO)
        gp.append("unset multiplot")
    else:
        gp += ["set title %s" % gnuplot.quote(_wrap(title, 70)),
               'set key outside right invert title "phase (the stack, top first)"']
        gp += _stack_panel(res, modes, phases, med, tallest, tmp, "all", None)
    return gp


def _stack_panel(res, modes, phases, med, tallest, tmp, name, subtitle):
    """One panel of compare_plot: the modes' stacked phases and each run's points."""
    stack = os.path.join(tmp, "stack-%s.dat" % name)
    with open(stack, "w") as f:
        for m in modes:
            f.write(m + "\t" + "\t".join(repr(float(med.get((m, p), 0))) for p in phases) + "\n")
    # Each measured run's end and first useful work, spread across its bar.
    pts = os.path.join(tmp, "runs-%s.dat" % name)
    with open(pts, "w") as f:
        for i, m in enumerate(modes):
            runs = res.measured(m)
            for k, r in enumerate(runs):
                x = i + (0.3 * (k / (len(runs) - 1) - 0.5) if len(runs) > 1 else 0)
                s = r.summary
                fuw = s.get("first_useful_work_ms")
                f.write("%r\t%s\t%s\n" % (x, repr(s["total_ms"]) if s.get("total_ms") is not None else "NaN",
                                          repr(fuw) if fuw is not None else "NaN"))
    plots = []
    # Every phase drawn is in the key (one too thin to see says so); the key reads
    # top to bottom as the stack does (invert).
    for j, p in enumerate(phases):
        tallest_here = max(med.get((m, p), 0) for m in modes)
        if tallest_here <= 0:
            continue
        thin = tallest_here < VISIBLE_SHARE * tallest
        plots.append("%s using %d:xtic(1) title %s lc rgb %s" % (
            gnuplot.quote(stack), j + 2, gnuplot.quote(p + (" (too thin to see)" if thin else "")),
            gnuplot.quote(PHASE_COLORS.get(p, gnuplot.color(j)))))
    plots.append("%s using 1:2 with points pt 7 ps 1.2 lc rgb \"#000000\" title \"each run: end (vm_exit)\"" % gnuplot.quote(pts))
    plots.append("%s using 1:3 with points pt 9 ps 1.4 lc rgb \"#cc0000\" title \"each run: first useful work\"" % gnuplot.quote(pts))
    return (["set title %s" % gnuplot.quote(subtitle)] if subtitle else []) + [
        "set yrange [0:*]", "set xrange [-0.6:%g]" % (len(modes) - 0.4), "plot " + ", ".join(plots)]


# --- time to responsiveness: the frontiers -----------------------------------------------
def representative(res, mode):
    """The measured run of MODE at the median of first useful work (of an even
    number, the sooner of the middle two), or None if none marked it."""
    runs = [r for r in res.measured(mode) if r.summary.get("first_useful_work_ms") is not None]
    if not runs:
        return None
    runs.sort(key=lambda r: r.summary["first_useful_work_ms"])
    return runs[(len(runs) - 1) // 2]


def summed(points):
    """[(t_ms, bytes)] of several threads' (thread, t_ms, bytes) frontiers, each
    never decreasing: at every point in time, the sum of each thread's latest."""
    latest, out = {}, []
    for thread, t, b in sorted(points, key=lambda p: (p[1], p[0])):
        latest[thread] = max(b, latest.get(thread, 0))
        total = sum(latest.values())
        if out and out[-1][0] == t:
            out[-1] = (t, total)
        else:
            out.append((t, total))
    return out


def guest_frontier(run):
    """The guest's first pass, all vCPUs: [(t_ms, bytes)]; [] without progress points."""
    pts = [(p.get("vcpu"), p.get("t_ms"), p.get("bytes")) for p in run.doc.get("progress") or []
           if p.get("iteration") == 1 and p.get("t_ms") is not None and p.get("bytes") is not None]
    return summed(pts)


def host_frontier(run):
    """The host's populate frontier (background eager's "eager"."progress"): [(t_ms, bytes)]."""
    pts = [(p.get("thread"), p.get("t_ms"), p.get("bytes")) for p in run.get("eager", "progress", default=[])
           if isinstance(p, dict) and p.get("t_ms") is not None and p.get("bytes") is not None]
    return summed(pts)


HOST_POINTS = 40  # the host frontier's points drawn: enough for its shape, dashes that show


def thinned(points, n):
    """At most about n of points, evenly spread, the first and the last kept."""
    if len(points) <= n:
        return points
    step = (len(points) - 1) / (n - 1)
    return [points[round(i * step)] for i in range(n)]


def has_progress(res):
    return any(guest_frontier(r) for r in res.measured())


def progress_plot(res, out, term, tmp):
    """One line per mode: the guest's touch frontier (and the host's populate
    frontier, dashed, where there is one) of its representative run."""
    data = os.path.join(tmp, "progress.dat")
    plots, which, idx = [], [], 0
    with open(data, "w") as f:
        for i, m in enumerate(compare_modes(res)):
            run = representative(res, m)
            if run is None:
                continue
            colour = gnuplot.quote(gnuplot.color(i))
            fuw = run.summary.get("first_useful_work_ms")
            which.append("%s run %s (%s ms)" % (m, run.index, "%.1f" % fuw if fuw is not None else "?"))
            # The host's frontier as long dashes over a few dozen points: drawn as steps
            # of hundreds of tiny segments, a dash pattern restarts on each and reads solid.
            for kind, pts, style in (("guest touch frontier", guest_frontier(run), "with steps lw 2"),
                                     ("host populate frontier", thinned(host_frontier(run), HOST_POINTS),
                                      "with lines lw 2.5 dt (10,8)")):
                if not pts:
                    continue
                f.write("# %s: %s\n" % (m, kind))
                for t, b in pts:
                    f.write("%r\t%r\n" % (t, b / 1048576))
                f.write("\n\n")
                plots.append("%s index %d using 1:2 %s lc rgb %s title %s" % (
                    gnuplot.quote(data), idx, style, colour, gnuplot.quote("%s: %s" % (mode_title(res, m), kind))))
                idx += 1
    if not plots:
        raise PlotError("%s has no touch frontier (progress) in its runs: flat and perm record one" % res.path)
    dashed = any("host populate frontier" in p for p in plots)
    title = ("time to responsiveness: %s; each mode's run at its median first useful work: %s; "
             "solid: the guest's first pass (MiB written, all vCPUs)%s"
             % (what_ran(res), ", ".join(which), ", dashed: the host's populate frontier" if dashed else ""))
    # The key below the axes, never over a line; the canvas grows with it.
    term = term.replace(",650", ",%d" % (560 + 19 * len(plots)))
    return ["set terminal %s noenhanced" % term, "set output %s" % gnuplot.quote(out),
            "set title %s" % gnuplot.quote(_wrap(title, 100)), 'set xlabel "ms since exec"',
            'set ylabel "MiB"', "set key outside below center horizontal Left reverse height 1.5", "set grid",
            "set yrange [0:*]", "set datafile separator \"\\t\"", "plot " + ", ".join(plots)]


# --- the command line -------------------------------------------------------------
def _cmdline(words):
    return " ".join(w if w and all(c.isalnum() or c in "_./=:,+@%-" for c in w) else "'%s'" % w.replace("'", "'\\''")
                    for w in words)


def _not_results(path):
    """Why PATH, given where a results file goes, is not one (or None)."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".tsv", ".csv", ".txt"):
        what = {".tsv": "a TSV (bench/roofline's is read by minivmm --roofline, bench/peers' by bench/peers-report)",
                ".csv": "a CSV (scripts/merge writes one beside its plots)",
                ".txt": "text (minivmm's tables; -o writes the same as JSON)"}[ext]
        return ("%s is %s, not a minivmm results file: scripts/plot draws the JSON that minivmm -o FILE.json "
                "writes" % (path, what))
    return None


def parse(argv):
    counter, rest, opts = "", [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            return None
        if a == "--y":
            if i + 1 >= len(argv):
                raise PlotError("--y takes a counter name such as pf_taken", 2)
            counter = argv[i + 1]
            opts += [a, counter]
            i += 2
            continue
        if a.startswith("--y="):
            counter = a[4:]
            opts.append(a)
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            raise PlotError("unknown option '%s'" % a, 2)
        rest.append(a)
        i += 1
    inputs = []
    while rest and rest[0].endswith(".json"):
        inputs.append(rest.pop(0))
    for a in rest:
        why = _not_results(a)
        if why and (not inputs or os.path.exists(a)):
            raise PlotError(why, 2)
        if why:
            raise PlotError("OUT-PREFIX %s: the plot is OUT-PREFIX.png (or .svg); name it without %s"
                            % (a, os.path.splitext(a)[1]), 2)
    if not inputs and any(a.endswith(".json") for a in rest):
        # "scripts/plot x.png c.json": the output first. Say the line in the right order.
        files = [a for a in rest if a.endswith(".json")]
        others = [a for a in rest if not a.endswith(".json")]
        raise PlotError("'%s' comes before the results file%s: the results files go first, then OUT-PREFIX; "
                        "write: scripts/plot %s" % (rest[0], "s" if len(files) > 1 else "",
                                                   _cmdline(opts + files + others)), 2)
    if not inputs or len(rest) > 2:
        raise PlotError("usage", 2)
    prefix = rest[0] if rest else inputs[0][: -len(".json")]
    fmt = rest[1] if len(rest) > 1 else None
    # "x.png" as OUT-PREFIX is the file itself (not x.png.png), and says the format.
    base, ext = os.path.splitext(prefix)
    if ext[1:].lower() in TERMINALS:
        if fmt and fmt != ext[1:].lower():
            raise PlotError("OUT-PREFIX %s says %s, the format argument %s: give one of them" % (prefix, ext[1:], fmt), 2)
        prefix, fmt = base, ext[1:].lower()
    fmt = fmt or "png"
    if fmt not in TERMINALS:
        raise PlotError("format must be png or svg, not '%s'" % fmt, 2)
    if counter and not all(c.isalnum() or c == "_" for c in counter):
        raise PlotError("--y takes a counter name such as pf_taken, not '%s'" % counter, 2)
    return counter, inputs, prefix, fmt


USAGE = "usage: scripts/plot [--y COUNTER] RESULTS.json [MORE.json...] [OUT-PREFIX] [png|svg]   (--help: more)"


def main(argv):
    jobs, written, temps = [], [], []
    try:
        parsed = parse(argv)
        if parsed is None:
            print(__doc__.strip())
            return 0
        counter, inputs, prefix, fmt = parsed
        files = []
        for path in inputs:
            try:
                files.append(results.load(path))
            except results.ResultsError as e:
                raise PlotError(str(e)) from None
        if not gnuplot.available():
            raise PlotError(gnuplot.MISSING)
        out = "%s.%s" % (prefix, fmt)
        tmp = tempfile.mkdtemp(prefix="plot.")
        try:
            if files[0].kind == "compare":
                if len(files) > 1 or counter:
                    raise PlotError("a --compare file is plotted alone, as phase bars (no --y, no other files)", 2)
                jobs.append((out, lambda o: compare_plot(files[0], o, TERMINALS[fmt], tmp)))
                if has_progress(files[0]):
                    jobs.append(("%s-progress.%s" % (prefix, fmt),
                                 lambda o: progress_plot(files[0], o, TERMINALS[fmt], tmp)))
            else:
                jobs.append((out, lambda o: sweep_plot(files, counter, o, TERMINALS[fmt], tmp)))
            for k, (path, draw) in enumerate(jobs):
                # gnuplot draws into a temporary beside the file PATH names; it replaces that file once whole.
                try:
                    part = outfile.temporary(path)
                except OutError as e:
                    raise PlotError(str(e)) from None
                temps.append(part)
                gp = draw(part)
                script = os.path.join(tmp, "plot%d.gp" % k)
                with open(script, "w") as f:
                    f.write("\n".join(gp) + "\n")
                ok, err = gnuplot.run(script)
                if not ok or os.path.getsize(part) == 0:
                    raise PlotError("gnuplot wrote nothing to %s%s" % (path, ": " + err if err else ""))
            for (path, _), part in zip(jobs, temps):
                outfile.commit(part, path)
                written.append(path)
        finally:
            for part in temps:
                outfile.discard(part)
            shutil.rmtree(tmp, ignore_errors=True)
    except PlotError as e:
        if str(e) == "usage":
            print(USAGE, file=sys.stderr)
        else:
            print("plot: %s" % e, file=sys.stderr)
            if e.status == 2 and "usage" not in str(e) and "valid:" not in str(e) and "write:" not in str(e):
                print(USAGE, file=sys.stderr)
        return e.status
    for path in written:
        print(path)
    return 0
