"""scripts/merge: minivmm results files (from one host or many) in one CSV, a table
grouped by the environment each came from, and a plot per metric.

  scripts/merge DIR-OR-FILE... [--out PREFIX]

Reads every results file (*.json) under the directories and the files named,
and JSON-lines journals of runs still being written (*.partial, one object a
line; a journal whose finished file exists is left out). Writes:
  PREFIX.csv          one row per mode of each file (csv module: quoted as needed,
                      every row the same columns; csv.DictReader reads it back)
  PREFIX.txt          the same, one block per environment record: host, kernel,
                      CPU, KVM flavour and paging with its paging parameters, THP
  PREFIX-METRIC.png   per metric (setup_ms, eager_ms, first_pass_ms,
                      first_useful_work_ms, total_ms) with a value: a bar per
                      configuration and environment, min-max error bars
PREFIX defaults to "merged" beside the inputs: DIR/merged for one directory (the
deepest directory all the inputs share for several), as the paths were given.

Columns:
  mode      which runs a row summarises: "run" = a single run, or every measured
            run of a --repeat experiment (one configuration, no lazy/eager split);
            "lazy", "eager", "uffd", ... = the modes of a --compare experiment
  eager     the eager strategy that ran (none for a lazy run)
  runs      measured runs behind the row (warm-ups left out); times are their
            medians, in ms since exec
  status    ok, or failed: the run exited with a status other than 0, or a
            workload that marks its first pass (flat, sweep) never reached it.
            A failed row has no measurements (empty cells) and is listed apart
            in PREFIX.txt with its exit reason; it is never drawn
  exit_status, exit_reason   how the run ended (minivmm's exit record; for an
            experiment, that of its first failed run, else of its last run)
  first_pass_pf_taken        KVM's page faults in the first pass (pf_taken over
            the first_useful_work phase)
Cells a run did not measure (no eager, no first pass: hello, demand, raw
guests) are empty.
"""
import csv
import json
import os
import shutil
import sys
import tempfile

from . import environment, gnuplot, outfile, results
from .numtext import jq_text

COLUMNS = ["host", "kernel", "cpu", "kvm", "paging", "kvm_params", "thp", "workload", "backing", "mem_mib", "vcpus",
           "eager", "mode", "runs", "status", "exit_status", "exit_reason", "setup_ms", "eager_ms", "first_pass_ms",
           "first_useful_work_ms", "total_ms", "first_pass_pf_taken", "file"]
METRICS = ["setup_ms", "eager_ms", "first_pass_ms", "first_useful_work_ms", "total_ms"]
# What each metric's axis measures: three are durations, two are times since exec.
METRIC_AXES = {"setup_ms": "ms from exec to the guest's entry", "eager_ms": "ms of eager population",
               "first_pass_ms": "ms of the first pass (workload_start to first_useful_work)",
               "first_useful_work_ms": "ms since exec", "total_ms": "ms since exec (to vm_exit)"}
LOG_SPREAD = 20  # largest value over the smallest past which a plot's y axis is logarithmic
# Workloads that mark their first pass over memory (first_useful_work).
FIRST_PASS_WORKLOADS = ("flat", "sweep")


class Skip(Exception):
    """A file merge leaves out; str() says why."""


# --- reading ------------------------------------------------------------------------
def find_inputs(paths):
    """The results files and journals under PATHS, sorted; OSError for a missing path."""
    found = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, files in os.walk(p):
                found += [os.path.join(d, f) for f in files if f.endswith(".json") or f.endswith(".partial")]
        elif os.path.exists(p):
            found.append(p)
        else:
            raise OSError("no such file or directory: %s" % p)
    return sorted(set(found))


def read_journal(path):
    """The last results record of a JSON-lines journal (FILE.partial)."""
    last = None
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise Skip("cannot read it: %s" % e) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise Skip("line %d is not JSON" % n) from None
        if isinstance(obj, dict) and obj.get("schema") == results.SCHEMA:
            last = obj
    if last is None:
        raise Skip("no minivmm results record among its lines")
    return results.Results(last, path)


def read_any(path):
    """The Results of PATH (a results file or a journal), or Skip."""
    if path.endswith(".partial"):
        if os.path.exists(path[: -len(".partial")]):
            raise Skip("its finished file %s is read instead" % path[: -len(".partial")])
        return read_journal(path)
    try:
        return results.load(path)
    except results.ResultsError as e:
        raise Skip(str(e)) from None  # it names the file


# --- one row per mode ------------------------------------------------------------------
def _num(v):
    """A CSV cell of a number ("" for none)."""
    if v is None or isinstance(v, bool):
        return ""
    if isinstance(v, float) and v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return jq_text(v)


def _median(v):
    if isinstance(v, dict):
        return v.get("median") if v.get("n", 0) else None
    return v


def _spread(v):
    """(median, min, max) of a spread or a single value."""
    if isinstance(v, dict):
        if not v.get("n"):
            return None
        return v.get("median"), v.get("min"), v.get("max")
    return None if v is None else (v, v, v)


def run_failure(run):
    """Why a run does not count as a measurement, or None."""
    if run.exit_status != 0:
        ex = run.exit
        if not ex:
            return "no exit record (the run did not finish)"
        return ex.get("message") or ex.get("reason") or "exit status %s" % ex.get("status")
    if run.workload in FIRST_PASS_WORKLOADS and run.phase("first_useful_work") is None:
        return "%s never reached its first pass" % run.workload
    return None


def rows_of(res):
    """The rows of one file: (row dict, spreads {metric: (median, min, max)}, failure or None)."""
    env = res.environment
    out = []
    for mode in res.modes():
        if res.is_experiment:
            measured = res.measured(mode)
            if not measured:
                continue
            agg = res.aggregate(mode) or {}
            run = measured[-1]
            failures = [(r, run_failure(r)) for r in measured if run_failure(r)]
            ended = failures[0][0] if failures else run
            why = failures[0][1] if failures else None
            summary = agg.get("summary") or {}
            pf = None
            for p in agg.get("phases") or []:
                if p.get("phase") == "first_useful_work":
                    pf = _median((p.get("counters") or {}).get("pf_taken"))
            nruns = agg.get("runs", len(measured))
        else:
            run = ended = res.runs[0]
            why = run_failure(run)
            summary = run.summary
            ph = run.phase("first_useful_work")
            pf = (ph.get("stats") or {}).get("pf_taken") if ph else None
            nruns = 1
        key = environment.group_key(env, run.platform)
        cfg = run.config
        mem = cfg.get("mem_bytes")
        row = dict(zip(COLUMNS[:7], key))
        row.update({
            "workload": run.workload,
            "backing": cfg.get("backing", ""),
            "mem_mib": _num(mem / 1048576) if isinstance(mem, (int, float)) else "",
            "vcpus": _num(cfg.get("vcpus")),
            "eager": (run.get("eager", "strategy") or "none"),
            "mode": mode,
            "runs": _num(nruns),
            "status": "failed" if why else "ok",
            "exit_status": _num(ended.exit.get("status")),
            "exit_reason": ended.exit.get("reason", "") or ("unfinished" if why else ""),
            "file": res.path,
        })
        spreads = {}
        for m in METRICS:
            s = None if why else _spread(summary.get(m))
            row[m] = "" if s is None else _num(s[0])
            if s is not None and s[0] is not None:
                spreads[m] = s
        row["first_pass_pf_taken"] = "" if why else _num(pf)
        out.append((row, spreads, why))
    return out


def _sort_key(item):
    row = item[0]

    def n(x):
        try:
            return float(x)
        except ValueError:
            return float("inf")

    return (tuple(row[c] for c in COLUMNS[:7]), row["workload"], row["backing"], n(row["mem_mib"]), n(row["vcpus"]),
            row["eager"], row["mode"], row["file"])


# --- writing ------------------------------------------------------------------------------
def write_csv(path, items):
    with outfile.replacing(path, newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for row, _, _ in items:
            w.writerow(row)


def _cell(v):
    if v == "":
        return "-"
    try:
        return "%.1f" % float(v)
    except ValueError:
        return v


TXT_HEAD = "%-13s %-9s %6s %5s %-9s %-5s %4s %-6s %10s %10s %12s %16s %10s %13s"


def write_txt(path, groups, items):
    lines = []
    for gi, key in enumerate(groups, 1):
        lines += ["", "E%d: %s" % (gi, environment.group_label(key))]
        lines.append(TXT_HEAD % ("workload", "backing", "MiB", "vCPUs", "eager", "mode", "runs", "status", "setup_ms",
                                 "eager_ms", "first_pass", "first_useful_ms", "total_ms", "pass_pf_taken"))
        for row, _, _ in items:
            if tuple(row[c] for c in COLUMNS[:7]) != key:
                continue
            lines.append(TXT_HEAD % (row["workload"], row["backing"], row["mem_mib"], row["vcpus"], row["eager"],
                                     row["mode"], row["runs"], row["status"], _cell(row["setup_ms"]),
                                     _cell(row["eager_ms"]), _cell(row["first_pass_ms"]),
                                     _cell(row["first_useful_work_ms"]), _cell(row["total_ms"]),
                                     row["first_pass_pf_taken"] or "-"))
    failed = [(row, why) for row, _, why in items if why]
    if failed:
        lines += ["", "failed (no measurements; left out of the plots):"]
        for row, why in failed:
            lines.append("  %s (%s, %s): exit %s %s: %s" % (row["file"], row["workload"], row["mode"],
                                                            row["exit_status"] or "-", row["exit_reason"] or "-", why))
    lines += ["",
              "Times: ms since exec, medians over each row's measured runs (warm-ups left out); - = not measured.",
              "mode: run = a single run or a --repeat experiment (one configuration); lazy, eager, uffd, ... =",
              "the modes of a --compare experiment. eager: the strategy that ran. status failed: exit status not 0,",
              "or flat/sweep never reached its first pass. pass_pf_taken: KVM's page faults in the first pass."]
    text = "\n".join(lines) + "\n"
    outfile.write_text(path, text)
    return text


def config_label(row):
    """A configuration on the plots' x axis: workload, backing, RAM, vCPUs, eager, mode, runs."""
    return "%s %s %sM %sv eager:%s %s x%s" % (row["workload"], row["backing"], row["mem_mib"], row["vcpus"],
                                              row["eager"], row["mode"], row["runs"])


def plot(prefix, metric, groups, items, tmp):
    """PREFIX-METRIC.png: bars per configuration, one per environment, min-max error bars.
    Returns the file written, or None (no values, or gnuplot failed: says why on stderr)."""
    configs, cell = [], {}
    for row, spreads, why in items:
        if why or metric not in spreads:
            continue
        g = tuple(row[k] for k in COLUMNS[:7])
        c = base = config_label(row)
        n = 1
        while (c, g) in cell:  # the same configuration again (another file): its own bar
            n += 1
            c = "%s #%d" % (base, n)
        if c not in configs:
            configs.append(c)
        cell[(c, g)] = spreads[metric]
    if not configs:
        return None
    used = [g for g in groups if any((c, g) in cell for c in configs)]
    data = os.path.join(tmp, metric + ".tsv")
    with open(data, "w") as f:
        for c in configs:
            vals = []
            for g in used:
                s = cell.get((c, g))
                vals += ["NaN", "NaN", "NaN"] if s is None else ["%.17g" % x for x in s]
            f.write(c.replace("\t", " ") + "\t" + "\t".join(vals) + "\n")
    vals = [v for s3 in cell.values() for v in s3 if v is not None and v > 0]
    spread = max(vals) / min(vals) if vals else 1
    out = "%s-%s.png" % (prefix, metric)
    part = outfile.temporary(out)  # gnuplot draws here; it replaces the file out names once whole
    # The environments' full records are in PREFIX.txt under the same E numbers.
    titles = ["E%d %s, %s, %s %s" % (groups.index(g) + 1, g[0], g[1], g[3], g[4]) for g in used]
    width = max(1000, 520 + 70 * len(configs) * max(1, len(used)))
    # Vertical x labels: a bottom margin (in character heights) that fits the longest.
    bmargin = 2 + int(0.45 * max(len(c) for c in configs))
    gp = ["set terminal pngcairo size %d,%d noenhanced" % (min(width, 2400), 480 + 8 * max(len(c) for c in configs)),
          "set bmargin %d" % bmargin,
          "set output %s" % gnuplot.quote(part),
          "set title %s" % gnuplot.quote("%s: median per configuration, error bars min-max over its runs"
                                         % metric),
          "set style data histograms", "set style histogram errorbars gap 2 lw 1",
          "set style fill solid 0.85 border -1",
          # The environments beside the axes, under the title (above it they read as a heading).
          "set key outside right top vertical Left reverse title \"environment (merged.txt)\"",
          "set xtics rotate by 90 right", "set grid ytics",
          # Values two orders of magnitude apart: on a linear axis the small bars vanish.
          "set logscale y; set yrange [%r:%r]" % (min(vals) / 1.6, max(vals) * 1.6) if spread > LOG_SPREAD
          else "set yrange [0:*]",
          "set offsets 0, 0, graph 0.05, 0",
          "set ylabel %s" % gnuplot.quote(METRIC_AXES[metric] + (" (log scale)" if spread > LOG_SPREAD else "")),
          "set datafile separator \"\\t\"", "set datafile missing \"NaN\"", "set lmargin 12"]
    plots = ["%s using %d:%d:%d:xtic(1) title %s lc rgb %s" % (gnuplot.quote(data), 2 + 3 * i, 3 + 3 * i, 4 + 3 * i,
                                                              gnuplot.quote(titles[i]), gnuplot.quote(gnuplot.color(i)))
             for i in range(len(used))]
    gp.append("plot " + ", ".join(plots))
    script = os.path.join(tmp, metric + ".gp")
    with open(script, "w") as f:
        f.write("\n".join(gp) + "\n")
    ok, err = gnuplot.run(script)
    if not ok or os.path.getsize(part) == 0:
        outfile.discard(part)
        print("merge: gnuplot failed on %s: %s" % (metric, err or "wrote nothing"), file=sys.stderr)
        return None
    outfile.commit(part, out)
    return out


def default_prefix(paths):
    """PREFIX when none is given: "merged" beside the inputs (in the one directory
    named, or the deepest directory every input is in), never the current one
    unless the inputs are there."""
    dirs = [os.path.normpath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths]
    try:
        common = os.path.commonpath(dirs)
    except ValueError:  # absolute and relative paths mixed
        common = os.path.commonpath([os.path.abspath(d) for d in dirs])
    return os.path.join(common, "merged") if common not in ("", ".") else "merged"


def main(argv):
    prefix, inputs = None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a == "--out" or a.startswith("--out="):
            if a == "--out":
                if i + 1 >= len(argv):
                    print("merge: --out takes a PREFIX", file=sys.stderr)
                    return 2
                prefix = argv[i + 1]
                i += 2
            else:
                prefix = a[len("--out="):]
                i += 1
            continue
        if a.startswith("-") and a != "-":
            print("merge: unknown option '%s' (usage: scripts/merge DIR-OR-FILE... [--out PREFIX])" % a, file=sys.stderr)
            return 2
        inputs.append(a)
        i += 1
    if not inputs:
        print("usage: scripts/merge DIR-OR-FILE... [--out PREFIX]   (--help says what it writes)", file=sys.stderr)
        return 2
    try:
        files = find_inputs(inputs)
    except OSError as e:
        print("merge: %s" % e, file=sys.stderr)
        return 1
    if not files:
        print("merge: no .json or .partial files in %s" % " ".join(inputs), file=sys.stderr)
        return 1
    items = []
    for f in files:
        try:
            res = read_any(f)
        except Skip as e:
            why = str(e)
            print("merge: skipping a file: %s" % (why if why.startswith(f) else "%s: %s" % (f, why)), file=sys.stderr)
            continue
        items += rows_of(res)
    if not items:
        print("merge: no minivmm results among the files", file=sys.stderr)
        return 1
    items.sort(key=_sort_key)
    groups = []
    for row, _, _ in items:
        key = tuple(row[c] for c in COLUMNS[:7])
        if key not in groups:
            groups.append(key)
    if prefix is None:
        prefix = default_prefix(inputs)
    d = os.path.dirname(outfile.target(prefix + ".csv"))
    if d and not os.path.isdir(d):
        print("merge: --out %s: no directory %s (make it first: mkdir -p %s)" % (prefix, d, d), file=sys.stderr)
        return 1
    try:
        write_csv(prefix + ".csv", items)
        sys.stdout.write(write_txt(prefix + ".txt", groups, items))
    except OSError as e:
        print("merge: %s" % e, file=sys.stderr)
        return 1
    if gnuplot.available():
        tmp = tempfile.mkdtemp(prefix="merge.")
        try:
            for m in METRICS:
                out = plot(prefix, m, groups, items, tmp)
                if out:
                    print("plot: %s" % out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("merge: no plots: " + gnuplot.MISSING, file=sys.stderr)
    print("txt: %s.txt" % prefix)
    print("csv: %s.csv" % prefix)
    return 0
