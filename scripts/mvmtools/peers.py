"""The markdown report of one bench/peers run (bench/peers-report DIR).

Every number comes from DIR/samples.tsv (section cell tool seq metric value;
seq 0 is a warm-up, never counted); the commands from DIR/commands.tsv; the
environment from DIR/environment.json (minivmm's own record) and DIR/bench.tsv
(what the bench recorded about itself; older runs kept it in
raw/environment.md). Nothing is typed in here except the seeds' own figures,
quoted as theirs. Plots are drawn next to the report with gnuplot.

The text is the one bench/peers-report printed when it was bash, awk and jq,
byte for byte: the number formatting of each place is kept (numtext).
"""
import json
import os
import re
import shutil
import tempfile

from . import design, environment, gnuplot, headline, sweeptable
from .numtext import awk_num, awk_value, c_g, ld_g
from .stats import NUMBER, group_stats, paired_ratios

EMULATED_LINE = ("EMULATED host (QEMU TCG): counts are KVM's own, times are an emulated machine's; "
                 "do not compare with hardware reports")
EMULATED_TAG = " (EMULATED host: emulated times)"
PREFAULT_MODES = ("lazy", "populate", "prefault")
FIRSTPASS_METRICS = ("eager_s", "setup_s", "first_pass_s", "first_work_s", "pf_taken", "exits", "warm_pf_taken")
PROPOLIS_MIB = "16000"  # seed 002: "vm_mmap_memseg for a 16,000MiB VM takes a total of about 620ms"
PROPOLIS_S = "0.620"
SEED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "seed-osv-mmap.tsv")



def bar_label(cell):
    """A bench cell's name in words: 4k_1G_t1 -> '4 KiB, 1 GiB, 1 thread', thp_13G_t2 ->
    'THP, 13 GiB, 2 threads', hugetlb2m_13G -> 'hugetlb2m, 13 GiB'; others as they are."""
    words = []
    for w in cell.split("_"):
        m = re.match(r"^t([0-9]+)$", w)
        g = re.match(r"^([0-9.]+)G$", w)
        if m:
            words.append("%s thread%s" % (m.group(1), "" if m.group(1) == "1" else "s"))
        elif g:
            words.append("%s GiB" % g.group(1))
        elif w == "4k":
            words.append("4 KiB")
        elif w == "thp":
            words.append("THP")
        else:
            words.append(w)
    return ", ".join(words)

class ReportError(Exception):
    pass


def _div(a, b):
    if b == 0:
        return float("nan") if a == 0 else float("inf") if a > 0 else float("-inf")
    return a / b


class Table:
    """Rows of text fields (a stats or ratios file of the old script), looked up as awk did."""

    def __init__(self, rows):
        self.rows = rows

    def first(self, cell, tool=None):
        for r in self.rows:
            if r[0] == cell and (tool is None or r[1] == tool):
                return r
        return None

    def get(self, cell, tool, field):
        """Field number FIELD (1-based) of the row of (cell, tool), "" if none."""
        r = self.first(cell, tool)
        return r[field - 1] if r and len(r) >= field else ""

    def cells(self):
        seen = []
        for r in self.rows:
            if r[0] not in seen:
                seen.append(r[0])
        return seen

    def tools(self, cell):
        return [r[1] for r in self.rows if r[0] == cell]

    def fmt_stats(self, cell, tool, scale):
        """ "median [q1-q3] (min-max)" scaled, 3 significant digits; "-" if absent."""
        r = self.first(cell, tool)
        if not r:
            return "-"

        def f(x):
            x = awk_value(x) * scale
            return "0" if x == 0 else ("%.0f" % x if x >= 1000 else c_g(x, 3))

        return "%s [%s-%s] (%s-%s)" % (f(r[3]), f(r[4]), f(r[5]), f(r[6]), f(r[7]))

    def fmt_ratio(self, cell):
        """ "median (min-max of pairs)" of a ratios table."""
        r = self.first(cell)
        if not r:
            return "-"
        return "%.2f (%.2f-%.2f)" % (awk_value(r[2]), awk_value(r[5]), awk_value(r[6]))

    def verdict(self, cell, target):
        """met when every pair reaches TARGET, not met when none does."""
        r = self.first(cell)
        if not r:
            return "-"
        t = awk_value(target)
        if awk_value(r[5]) >= t:
            return "met"
        if awk_value(r[6]) < t:
            return "not met"
        return "inconclusive (median %s %s, pairs straddle it)" % ("reaches" if awk_value(r[2]) >= t else "misses", target)


def _read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f]


def _bench_facts(d):
    """The bench's facts about itself and, if they came as a finished markdown
    table (raw/environment.md of older runs), that table."""
    tsv = os.path.join(d, "bench.tsv")
    if os.path.exists(tsv):
        facts = [tuple((r + [""])[:2]) for r in _read_tsv(tsv) if r and r[0]]
        return facts, None
    md = os.path.join(d, "raw", "environment.md")
    if os.path.exists(md):
        with open(md) as f:
            text = f.read()
        facts = []
        for line in text.splitlines():
            cols = line.split("|")
            if len(cols) >= 4 and cols[-2].strip() == "bench":
                facts.append((cols[1].strip(), cols[2].strip()))
        return facts, text
    raise ReportError("%s has neither bench.tsv nor raw/environment.md (the bench's own facts)" % d)


def _emulated(d, samples):
    """The run was in an emulated KVM host (scripts/emu-host): the bench's note
    (section "emulated"), minivmm's record (.platform.emulated) or the bench's
    fact (MINIVMM_EMULATED=1) says so."""
    if any(r and r[0] == "emulated" for r in samples):
        return True
    try:
        with open(os.path.join(d, "environment.json")) as f:
            doc = json.load(f)
        if isinstance(doc, dict) and (doc.get("platform") or {}).get("emulated") is True:
            return True
    except (OSError, ValueError):
        pass
    tsv = os.path.join(d, "bench.tsv")
    return os.path.exists(tsv) and any(r and r[0] == "emulated host" for r in _read_tsv(tsv))


class Report:
    def __init__(self, d):
        self.dir = d
        self.samples = _read_tsv(os.path.join(d, "samples.tsv"))[1:]
        cpath = os.path.join(d, "commands.tsv")
        self.commands = _read_tsv(cpath)[1:] if os.path.exists(cpath) else []
        self.tmp = tempfile.mkdtemp(prefix="peers-report.")
        self.headline = []
        self.emulated = _emulated(d, self.samples)
        # Appended to the names of time ratios against QEMU in an emulated host.
        self.emu_tag = EMULATED_TAG if self.emulated else ""

    # --- numbers from samples.tsv -------------------------------------------
    def _counted(self, section, metric):
        return [r for r in self.samples if len(r) >= 6 and r[0] == section and r[4] == metric and awk_value(r[3]) > 0]

    def stats(self, section, metric):
        return Table(group_stats([[r[1], r[2], r[5]] for r in self._counted(section, metric)], 2))

    def ratios(self, section, metric, num, den):
        pairs = paired_ratios([[r[1], r[2], r[3], r[5]] for r in self._counted(section, metric)], num, den)
        return Table(group_stats(pairs, 1))

    def has(self, section):
        return any(r and r[0] == section for r in self.samples)

    def rounds(self, section):
        m = 0.0
        for r in self.samples:
            if len(r) >= 4 and r[0] == section and awk_value(r[3]) > m:
                m = awk_value(r[3])
        return awk_num(m)

    def hl(self, *parts):
        """A row of the headline table; in an emulated host a time's verdict
        against a hardware target is not judged (the ratio stays, labelled)."""
        row = " ".join(parts)
        if self.emulated:
            head, _, vd = row.rpartition(" | ")
            if vd.strip() != "-":
                row = "%s | not judged (EMULATED host)" % head
        self.headline.append("| %s |" % row)

    def notes(self, section):
        """The bench's notes of SECTION (cell note 1 why TEXT), one line each."""
        return [r[5] for r in self.samples if len(r) >= 6 and r[0] == section and r[4] == "why"]

    def commands_of(self, section):
        out = ["| cell | tool | command |", "|---|---|---|"]
        for r in self.commands:
            if len(r) >= 4 and r[0] == section:
                out.append("| %s | %s | `%s` |" % (r[1], r[2], r[3].replace("|", "\\|")))
        return out

    def every_sample(self, section, *metrics):
        # The summary lists the metrics separated by spaces, as the report always has.
        out = ["<details><summary>every sample (%s; seq 0 = warm-up, not counted)</summary>" % " ".join(metrics), ""]
        out.append("| cell | tool | seq |" + "".join(" %s |" % m for m in metrics))
        out.append("|---|---|---|" + "---|" * len(metrics))
        order, v = [], {}
        for r in self.samples:
            if len(r) >= 6 and r[0] == section:
                k = (r[1], r[2], r[3])
                if k not in v:
                    v[k] = {}
                    order.append(k)
                v[k][r[4]] = r[5]
        for k in order:
            out.append("| %s | %s | %s |" % k + "".join(" %s |" % v[k].get(m, "-") for m in metrics))
        out += ["", "</details>"]
        return out

    # --- plots --------------------------------------------------------------------
    def _write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def plot_bars(self, name, title, ylabel, rows, ref="", reftitle="", log=False):
        """Bars with min-max error bars: ROWS[0] names the series (label v lo hi ...);
        log: a logarithmic y axis (rates that span orders of magnitude). The cells'
        names become words on the axis (4k_1G_t1: 4 KiB, 1 GiB, 1 thread)."""
        rows = [rows[0]] + [[bar_label(r[0])] + r[1:] for r in rows[1:]]
        # An emulated host's times say so on the plot too, not only in the text.
        title += self.emu_tag
        data = self._write(name + ".dat", "".join("\t".join(r) + "\n" for r in rows))
        n = (len(rows[0]) - 1) // 3
        gp = ["set terminal pngcairo size 1100,640 noenhanced",
              "set output '%s'" % os.path.join(self.dir, name + ".png"),
              "set title '%s'" % title, "set ylabel '%s'" % ylabel, "set datafile separator '\t'",
              "set style data histograms", "set style histogram errorbars gap 2 lw 1",
              # The key under the axis labels, never over a bar.
              "set style fill solid 0.8 border -1", "set key outside below center horizontal", "set grid ytics",
              "set logscale y" if log else "set yrange [0:*]", "set xtics rotate by -30", "set rmargin 14"]
        plots = ["'%s' using %d:%d:%d:xtic(1) title columnhead(%d)" % (data, 2 + 3 * i, 3 + 3 * i, 4 + 3 * i, 2 + 3 * i)
                 for i in range(n)]
        line = "plot " + ", ".join(plots)
        if ref:
            line += ", %s with lines lw 2 dt 2 title '%s'" % (ref, reftitle)
        gp.append(line)
        ok, err = gnuplot.run(self._write(name + ".gp", "\n".join(gp) + "\n"))
        return "![%s](%s.png)" % (title, name) if ok else "(plot %s failed: %s)" % (name, err)

    # --- the sections ------------------------------------------------------------------
    def eager(self):
        out = []
        e_pop = self.stats("eager", "populate_s")
        e_proc = self.stats("eager", "process_s")
        e_thp = self.stats("eager", "thp_faults")
        r_pop = {p: self.ratios("eager", "populate_s", p, "minivmm") for p in ("qemu", "plain")}
        r_proc = {p: self.ratios("eager", "process_s", p, "minivmm") for p in ("qemu", "plain")}
        r = self.rounds("eager")
        pf = any(len(x) >= 3 and x[0] == "eager" and x[2] == "prefault" for x in self.samples)
        tools = ["minivmm", "prefault", "qemu", "plain"] if pf else ["minivmm", "qemu", "plain"]
        out += ["## 1. Eager populate: minivmm vs QEMU's prealloc vs a plain process", ""]
        if pf:
            out += ["Same size, threads and page size for all; per cell minivmm (`--eager=populate` and",
                    "`--eager=prefault`), QEMU and the plain process ran in %s rounds," % r]
        else:
            out += ["Same size, threads and page size for all three; per cell the three ran in %s rounds," % r]
        out += ["rows of a Williams design (`bench_order`: each tool equally often in each position",
                "and after each other): %s. One warm-up run of" % design.order_rows_text(int(r), tools),
                "minivmm (not counted) comes before the first thread count of each size and page size.",
                "- **minivmm**: `--eager=populate` with one vCPU thread per populating thread, guest",
                "  `build/bench/exit-guest.bin` (vCPU 0 exits at its fourth instruction, others park).",
                "- **QEMU**: `memory-backend-ram,prealloc=on,prealloc-threads=N`, `-M microvm`, the",
                "  64 KiB `-bios` that ends QEMU at its second instruction.",
                "- **plain**: `build/bench/populate-ref`: MADV_POPULATE_WRITE of one fresh anonymous",
                "  mapping by N threads released together.",
                "- **4k**: THP `never` for the runs (QEMU advises MADV_HUGEPAGE on guest RAM and has",
                "  no option against it; minivmm's `anon` and the plain process ask for 4 KiB pages",
                "  anyway); **thp**: THP `madvise` and all three advise MADV_HUGEPAGE (minivmm",
                "  `--backing thp`). The THP-fault counts below are the evidence of the page size.",
                "- **populate phase**: as the kernel saw it, from the first MADV_POPULATE_WRITE call's",
                "  entry to the last one's return over all the process's threads (tracefs:",
                "  `syscalls:sys_enter/exit_madvise`, behavior 23); all three populate that way",
                "  (QEMU 7.2 too). **whole process**: fork to reap (`build/bench/run-timed`),",
                "  start-up and teardown of the populated memory included.",
                "- speed ratio = peer's time / minivmm's time (above 1: minivmm faster).", ""]
        if self.emulated:
            out += ["Times and their ratios below are an EMULATED host's: QEMU and minivmm both ran on",
                    "the emulated machine's KVM, side by side; do not compare them with hardware reports.", ""]
        if not self.traced():
            out += ["No kernel tracing in this run (%s): the populate phase is each" % self.fact("kernel tracing"),
                    "tool's own clock (minivmm's `.eager.seconds`, populate-ref's output; none for QEMU).", ""]
        out += ["### Populate phase (s)", ""]
        # Runs rated against the roofline (--roofline) get minivmm's percentage of its ceiling.
        rated = any(len(x) >= 6 and x[0] == "eager" and x[4] == "ceiling_op" for x in self.samples)
        if rated:
            out += ["minivmm's rate is also given as a percentage of this machine's clear ceiling for its",
                    "backing and thread count (the roofline above), as minivmm rated it (`--roofline`,",
                    "its own clock): median [min-max] of the runs.", ""]
        out += ["| cell | minivmm | QEMU prealloc | plain process | minivmm GiB/s | QEMU GiB/s | plain GiB/s | QEMU/minivmm%s | plain/minivmm |" % self.emu_tag +
                (" minivmm vs its ceiling |" if rated else ""),
                "|---|---|---|---|---|---|---|---|---|" + ("---|" if rated else "")]
        for c in e_pop.cells():
            g = gib_of(c)

            def rate(tool):
                m = e_pop.get(c, tool, 4)
                return "%.2f" % _div(awk_value(g), awk_value(m)) if _numeric_gt0(m) else "-"

            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                c, e_pop.fmt_stats(c, "minivmm", 1), e_pop.fmt_stats(c, "qemu", 1), e_pop.fmt_stats(c, "plain", 1),
                rate("minivmm"), rate("qemu"), rate("plain"), r_pop["qemu"].fmt_ratio(c), r_pop["plain"].fmt_ratio(c)) +
                (" %s |" % headline.eager_pct(self, c) if rated else ""))
            for peer in ("qemu", "plain"):
                self.hl("eager populate%s | %s | %s s |" % (self.emu_tag if peer == "qemu" else "", c,
                                                          ld_g(e_pop.get(c, "minivmm", 4), 3)),
                        "%s %s s |" % ("QEMU prealloc" if peer == "qemu" else "plain process", ld_g(e_pop.get(c, peer, 4), 3)),
                        "%s | >= 0.9 | %s" % (r_pop[peer].fmt_ratio(c), r_pop[peer].verdict(c, "0.9")))
        out += ["", "### Whole process, fork to reap (s)", "",
                "| cell | minivmm | QEMU prealloc | plain process | QEMU/minivmm%s | plain/minivmm |" % self.emu_tag,
                "|---|---|---|---|---|---|"]
        for c in e_proc.cells():
            out.append("| %s | %s | %s | %s | %s | %s |" % (
                c, e_proc.fmt_stats(c, "minivmm", 1), e_proc.fmt_stats(c, "qemu", 1), e_proc.fmt_stats(c, "plain", 1),
                r_proc["qemu"].fmt_ratio(c), r_proc["plain"].fmt_ratio(c)))
        out += ["", "### Page size actually used: THP faults per run (`thp_fault_alloc` in /proc/vmstat, machine-wide)", "",
                "| cell | expected with THP | minivmm | QEMU prealloc | plain process |", "|---|---|---|---|---|"]
        for c in e_thp.cells():
            exp = str(int(gib_of(c) or 0) * 512) if c.startswith("thp") else "0"
            out.append("| %s | %s | %s | %s | %s |" % (c, exp, e_thp.fmt_stats(c, "minivmm", 1),
                                                       e_thp.fmt_stats(c, "qemu", 1), e_thp.fmt_stats(c, "plain", 1)))
        out.append("")
        # --eager=prefault's bar beside --eager=populate's where it ran (same cells, same rounds).
        bars = ([("minivmm", "minivmm_populate"), ("prefault", "minivmm_prefault")] if pf else
                [("minivmm", "minivmm")]) + [
            ("qemu", "QEMU"), ("plain", "plain")]
        rows = [["cell"] + [w for _, head in bars for w in (head, "lo", "hi")]]
        for c in e_pop.cells():
            g = awk_value(gib_of_awk(c))
            line = [c]
            for t, _ in bars:
                rr = e_pop.first(c, t)
                if rr:
                    vals = (_div(g, awk_value(rr[3])), _div(g, awk_value(rr[7])), _div(g, awk_value(rr[6])))
                else:
                    vals = (0.0, 0.0, 0.0)
                line += [awk_num(v, "%.6g") for v in vals]
            rows.append([x.replace(" ", "_") for x in line])
        out.append(self.plot_bars("eager", "eager populate: GiB/s (median, min-max)", "GiB/s", rows))
        out += ["", "<details><summary>commands</summary>", ""] + self.commands_of("eager") + ["", "</details>", ""]
        out += self.eager_prefault()
        counted = any(len(x) >= 6 and x[0] == "eager" and x[4] == "kvm_pages_4k" for x in self.samples)
        out += self.every_sample("eager", "populate_s", "own_s", "process_s", "thp_faults", "max_rss_kib",
                                 *(("pct_of_ceiling",) if rated else ()),
                                 *(("kvm_pages_4k", "kvm_pages_2m") if counted else ()))
        out += ["", "own_s: the tool's own clock (minivmm's `.eager.seconds`, populate-ref's output; QEMU has none).", ""]
        return out

    def fact(self, name):
        """The bench's fact NAME (bench.tsv), "" if it has none."""
        tsv = os.path.join(self.dir, "bench.tsv")
        if not os.path.exists(tsv):
            return ""
        return next(((r + [""])[1] for r in _read_tsv(tsv) if r and r[0] == name), "")

    def traced(self):
        """Kernel tracing worked in this run (runs before the fact was kept: it did)."""
        f = self.fact("kernel tracing")
        return f == "" or f.startswith("tracefs instance")

    def eager_prefault(self):
        """minivmm's --eager=prefault beside its --eager=populate, same cells and
        rounds; or the bench's line saying the platform has no KVM_PRE_FAULT_MEMORY."""
        skip = self.notes("prefault-skip")
        if not any(len(x) >= 3 and x[0] == "eager" and x[2] == "prefault" for x in self.samples):
            return ["### minivmm --eager=prefault", ""] + [n + "." for n in skip] + [""] if skip else []
        own = self.stats("eager", "own_s")
        r_own = self.ratios("eager", "own_s", "prefault", "minivmm")
        p4 = self.stats("eager", "kvm_pages_4k")
        p2 = self.stats("eager", "kvm_pages_2m")
        out = ["### minivmm --eager=prefault beside --eager=populate (same cells, same rounds)", "",
               "`--eager=prefault` populates host memory as `--eager=populate` does, then has KVM build",
               "the second-level (EPT/NPT) entries (`KVM_PRE_FAULT_MEMORY`), which populate leaves to",
               "the guest's first touches. Times: minivmm's own clock over its whole eager phase",
               "(`.eager.seconds`; prefault's kernel-observed MADV_POPULATE_WRITE span, in the samples,",
               "holds its KVM_PRE_FAULT_MEMORY calls too: it alternates them 2 MiB chunk by chunk).",
               "Counts: KVM's gauges `pages_4k` and `pages_2m` when the run ended, the second-level",
               "entries KVM held (KVM's own count, exact in any host).", "",
               "| cell | --eager=populate (s) | --eager=prefault (s) | prefault/populate (time ratio per round) | populate: KVM pages_4k, pages_2m | prefault: KVM pages_4k, pages_2m |",
               "|---|---|---|---|---|---|"]
        for c in own.cells():
            if "prefault" not in own.tools(c):
                continue

            def pages(tool):
                return "%s, %s" % (p4.fmt_stats(c, tool, 1), p2.fmt_stats(c, tool, 1))

            out.append("| %s | %s | %s | %s | %s | %s |" % (c, own.fmt_stats(c, "minivmm", 1), own.fmt_stats(c, "prefault", 1),
                                                          r_own.fmt_ratio(c), pages("minivmm"), pages("prefault")))
            def said(tool):
                return "%s %s s, KVM pages_4k %s, pages_2m %s" % (
                    "prefault" if tool == "prefault" else "populate", _med(own.get(c, tool, 4)),
                    _med(p4.get(c, tool, 4), 9), _med(p2.get(c, tool, 4), 9))

            self.hl("eager, --eager=prefault vs --eager=populate%s | %s | %s |" % (self.emu_tag, c, said("prefault")),
                    "%s |" % said("minivmm"),
                    "%s (time ratio prefault/populate) | - | -" % r_own.fmt_ratio(c))
        out.append("")
        return out

    def startup(self):
        out = []
        s_first = self.stats("startup", "first_exit_s")
        s_proc = self.stats("startup", "process_s")
        s_rss = self.stats("startup", "max_rss_kib")
        s_flt = self.stats("startup", "minor_faults")
        peers = ("qemu-microvm", "qemu-pc", "kvm-floor")
        r_first = {p: self.ratios("startup", "first_exit_s", p, "minivmm") for p in peers}
        r_sproc = {p: self.ratios("startup", "process_s", p, "minivmm") for p in peers}
        c = "1G lazy"
        r = self.rounds("startup")
        tools = ["minivmm", "qemu-microvm", "qemu-pc", "kvm-floor"]
        out += ["## 2. Start-up: exec to the first guest instruction, and the whole process", "",
                "1 GiB of lazy RAM, one vCPU, a guest that exits at once: minivmm with",
                "`build/bench/exit-guest.bin` (exit hypercall, fourth instruction); QEMU `-M microvm`",
                "(its minimal machine) and `-M pc`, `-nodefaults`, with the 64 KiB `-bios` (isa-debug-exit,",
                "second instruction); `kvm-floor --loops 1`: the smallest program making the same KVM",
                "calls (the floor). %s rounds after one warm-up of minivmm and one of QEMU `-M microvm`," % r,
                "rows of a Williams design (`bench_order`): %s." % design.order_rows_text(int(r), tools),
                "**exec to first guest instruction**: the kernel's `sched_process_exec` of the program to",
                "its first `kvm_pio` event (the guest's first port write), both from one tracefs",
                "instance on one clock. **whole process**: fork to reap. Page faults and RSS (from",
                "`wait4`'s rusage) do not depend on the machine's load: they are the steadier evidence.", ""]
        if self.emulated:
            out += ["Times and their ratios below are an EMULATED host's (QEMU and minivmm on the emulated",
                    "machine's KVM); page faults and RSS are the same counts as anywhere.", ""]
        out += ["| tool | exec to first guest instruction (ms) | whole process (ms) | max RSS (MiB) | page faults (minor) | speed ratio, first instruction (tool/minivmm)%s | speed ratio, whole process%s |" % (self.emu_tag, self.emu_tag),
                "|---|---|---|---|---|---|---|"]
        for t in tools:
            rf = rp = "-"
            if t != "minivmm":
                rf, rp = r_first[t].fmt_ratio(c), r_sproc[t].fmt_ratio(c)
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                t, s_first.fmt_stats(c, t, 1000), s_proc.fmt_stats(c, t, 1000), s_rss.fmt_stats(c, t, 0.0009765625),
                s_flt.fmt_stats(c, t, 1), rf, rp))

        def ms(tool):
            x = s_first.get(c, tool, 4)
            if x == "":
                return "-"
            v = awk_value(x) * 1000
            return "%s ms" % ("%.0f" % v if v >= 1000 else c_g(v, 3))

        for peer in ("qemu-microvm", "qemu-pc"):
            self.hl("exec to first guest instruction%s | 1 GiB lazy | %s | QEMU %s %s |" % (self.emu_tag, ms("minivmm"), peer, ms(peer)),
                    "%s | >= 15 | %s" % (r_first[peer].fmt_ratio(c), r_first[peer].verdict(c, "15")))
        # Within 1.3x of the floor: kvm-floor's time over minivmm's at least 1 / 1.3.
        self.hl("exec to first guest instruction | 1 GiB lazy | %s | the KVM calls alone (kvm-floor) %s |" % (ms("minivmm"), ms("kvm-floor")),
                "%s (1 = at the floor) | >= 0.77 (within 1.3x) | %s" % (
                    r_first["kvm-floor"].fmt_ratio(c), r_first["kvm-floor"].verdict(c, "0.77")))
        out.append("")
        rows = [["tool", "exec->first-instruction", "lo", "hi", "whole-process", "lo", "hi"]]
        for t in tools:
            line = [t]
            for tab in (s_first, s_proc):
                rr = tab.first(c, t)
                if rr:
                    line += [c_g(awk_value(rr[i]) * 1000, 6) for i in (3, 6, 7)]
            rows.append(line)
        out.append(self.plot_bars("startup", "start-up, 1 GiB lazy: ms (median, min-max)", "ms", rows))
        out.append("")
        s_ph = self.stats("startup-phases", "dur_s")
        s_loop = self.stats("kvm-loop", "s")
        out += ["", "### Where minivmm's time goes (its own timeline, `-o` JSON; ms, medians)", "",
                "| phase | duration | [IQR] (min-max) |", "|---|---|---|"]
        for rr in s_ph.rows:
            v = [awk_value(x) * 1000 for x in rr[3:8]]
            out.append("| %s | %.3f | [%.3f-%.3f] (%.3f-%.3f) |" % (rr[0], v[0], v[1], v[2], v[3], v[4]))
        out += ["", "Its `exec` is when `main()` began: the dynamic loader's time before it is in the",
                "kernel-observed figure above, not here.", "",
                "### The floor: KVM's own calls in a loop, one process (`kvm-floor`; ms)", "",
                "| step | median | [IQR] (min-max) | samples |", "|---|---|---|---|"]
        for rr in s_loop.rows:
            v = [awk_value(x) * 1000 for x in rr[3:8]]
            out.append("| %s | %.3f | [%.3f-%.3f] (%.3f-%.3f) | %d |" % (rr[0], v[0], v[1], v[2], v[3], v[4], int(awk_value(rr[2]))))
        out += ["", "<details><summary>commands</summary>", ""]
        out += self.commands_of("startup") + self.commands_of("kvm-loop")[2:]
        out += ["", "</details>", ""]
        out += self.every_sample("startup", "first_exit_s", "process_s", "max_rss_kib", "minor_faults")
        out.append("")
        return out

    def sweep(self):
        out = []
        guest_cmd = next((r[3] for r in self.commands if len(r) >= 4 and r[0] == "guest"), "")
        out += ["## 3. Guest vs host: the seed's table and the warm pass", "",
                "OSv's benchmark (`tests/misc-mmap-anon-perf.cc`): per size, mmap (untimed), the loop",
                "writing one byte every 4096 bytes (timed), munmap (untimed); demand, then",
                "MAP_POPULATE. minivmm's guest (`-- sweep`, its records' `touch_s`) and a Linux process",
                "(`build/bench/sweep-host --no-thp`, 4 KiB pages like minivmm's `anon` backing) ran",
                "alternated; the seed's OSv-guest and Linux-host figures (`bench/seed-osv-mmap.tsv`) stand",
                "beside them. Printed by `%s`:" % guest_cmd, "", "```"]
        out += self.sweep_tables().rstrip("\n").split("\n")
        out += ["```", ""]
        sw = []
        for rr in self.stats("sweep", "touch_s").rows:
            it, size, mode = rr[0].split(" ")[:3]
            sw.append([it + " " + mode, rr[1], size] + rr[2:])
        sw = Table(sw)
        sw_r = self.ratios("sweep", "touch_s", "guest", "host")
        m = 0.0
        for rr in sw.rows:
            m = max(m, awk_value(rr[2]))
        maxs = awk_num(m, "%.6g")
        for it in ("1", "2"):
            for md in ("demand", "populate"):
                rr = sw_r.first("%s %s %s" % (it, maxs, md))
                if not rr:
                    continue
                ratio = "%s (%s-%s)" % (c_g(awk_value(rr[2]), 3), c_g(awk_value(rr[5]), 3), c_g(awk_value(rr[6]), 3))

                def med(tool):
                    for x in sw.rows:
                        if x[0] == it + " " + md and x[1] == tool and awk_value(x[2]) == awk_value(maxs):
                            return "%s s" % c_g(awk_value(x[4]), 3)
                    return ""

                self.hl("guest vs host, OSv's touch loop | iteration %s, %s MiB, %s | %s |" % (it, maxs, md, med("guest")),
                        "Linux process %s |" % med("host"), "%s (guest/host: time ratio, 1 = parity) | - | -" % ratio)
        seed = {}
        with open(SEED) as f:
            for line in f:
                fl = line.rstrip("\n").split("\t")
                if len(fl) >= 4 and fl[0] in ("osv-guest", "linux-host"):
                    seed[(fl[0], fl[1], fl[2])] = fl[3]
        v, sizes = {}, []
        for rr in sw.rows:
            if rr[1] in ("guest", "host"):
                it, mode = rr[0].split(" ")[:2]
                if mode == "demand":
                    v[(rr[1], it, rr[2])] = rr[4]
                if rr[2] not in sizes:
                    sizes.append(rr[2])
        data = ["\t".join(["MiB"] + ["%s, iteration %s" % (w, it) for it in ("1", "2")
                                      for w in ("minivmm guest", "Linux process here", "seed: OSv guest",
                                                "seed: Linux host")])]
        for z in sorted(sizes, key=awk_value):
            cols = [z]
            for it in ("1", "2"):
                cols += [v.get(("guest", it, z), ""), v.get(("host", it, z), ""), seed.get(("osv-guest", it, z), ""),
                         seed.get(("linux-host", it, z), "")]
            data.append("\t".join(x if x != "" else "-" for x in cols))
        dat = self._write("sweep.dat", "\n".join(data) + "\n")
        mibs = [awk_value(z) for z in sizes if awk_value(z) > 0]
        # A colour per source; its second iteration dashed with other points. The x axis
        # spans the sizes (a log axis would run on to the next power of ten); the key below.
        colours = [gnuplot.color(k) for k in range(4)]
        series = ["'%s' using 1:(column(%d) > 0 ? column(%d) : 1/0) with linespoints lw %s dt %s pt %d lc rgb '%s' "
                  "title columnhead(%d)" % (dat, 2 + 4 * it + k, 2 + 4 * it + k, "2" if it == 0 else "1.5",
                                            "1" if it == 0 else "(6,4)", 1 + k + 4 * it, colours[k], 2 + 4 * it + k)
                  for it in range(2) for k in range(4)]
        gp = ["set terminal pngcairo size 1000,700 noenhanced",
              "set output '%s'" % os.path.join(self.dir, "sweep.png"),
              'set title "OSv\'s touch loop, demand: seconds per size (medians; seed: its figures, 0.000 not drawn)%s"'
              % self.emu_tag,
              "set logscale xy", 'set xlabel "MiB"', 'set ylabel "seconds"',
              "set xrange [%r:%r]" % (min(mibs) / 1.15, max(mibs) * 1.15) if mibs else "set autoscale x",
              "set key outside below center horizontal Left reverse height 1.5", "set grid",
              "set datafile separator '\t'", 'set datafile missing "-"', "plot " + ", ".join(series)]
        ok, err = gnuplot.run(self._write("sweep.gp", "\n".join(gp) + "\n"))
        out.append("![OSv's touch loop, guest vs host vs seed](sweep.png)" if ok else "(plot sweep failed: %s)" % err)
        out.append("")
        return out

    def sweep_tables(self):
        """bench/sweep-vs-host's tables, recomputed from the sweep section's samples."""
        vals, order = {}, []
        for r in self.samples:
            if len(r) >= 6 and r[0] == "sweep":
                k = (r[2], r[3], r[1])
                if k not in vals:
                    vals[k] = {}
                    order.append(k)
                vals[k][r[4]] = r[5]
        samples = []
        for tool, seq, cell in order:
            it, size, mode = cell.split(" ")[:3]
            m = vals[(tool, seq, cell)]
            samples.append(sweeptable.Sample(tool, seq, it, size, mode, m.get("map_s", "-"), m.get("touch_s", "-"),
                                             m.get("unmap_s", "-")))
        rounds = int(awk_value(self.rounds("sweep")))
        text = sweeptable.render(samples, sweeptable.read_seed(SEED), rounds,
                                 " ".join(design.order(rounds, ["host", "guest"])))
        return text[text.index("Iteration"):] if "Iteration" in text else text

    def flat(self):
        out = []
        fl = self.stats("flat", "touch_s")
        fl_r = self.ratios("flat", "touch_s", "guest", "host")
        # Per round: the warm pass's seconds over every size, per GiB touched.
        t, mib, order = {}, {}, []
        for r in self._counted("flat", "touch_s"):
            c = r[1].split(" ")
            if len(c) >= 3 and c[1] == "2":
                k = (r[2], r[3])
                if k not in t:
                    t[k], mib[k] = 0.0, 0.0
                    order.append(k)
                t[k] += awk_value(r[5])
                mib[k] += awk_value(c[2])
        total = [["warm pass", k[0], k[1], awk_num(_div(t[k], mib[k] / 1024), "%.6g")] for k in order]
        # The old `sort -k3,3n` split fields at blanks, so its key (the tool's name)
        # read as 0 for every line: the order was that of the whole lines.
        total.sort(key=lambda x: "\t".join(x).encode())
        fl_tot = Table(group_stats([[x[0], x[1], x[3]] for x in total], 2))
        fl_tot_r = Table(group_stats(paired_ratios(total, "guest", "host"), 1))
        modes = [m for m in PREFAULT_MODES if self.has_firstpass(m)]
        if modes:
            # The guest with --eager=populate and --eager=prefault ran in the same rounds.
            sides = ["guest"] + [m for m in modes if m != "lazy"] + ["host"]
            order_head, order_text = "", ("Rounds: rows of a Williams design over %s, after a host warm-up: %s." % (
                ", ".join(sides), design.order_rows_text(int(awk_value(self.rounds("firstpass"))), sides)))
        else:
            order_head, order_text = " Order", "%s ... after a host warm-up." % " ".join(design.order(2, ["guest", "host"]))
        out += ["### Warm pass: the guest's `flat` workload vs a host process touching the same pages", "",
                "`flat` touches direct-mapped guest memory (no guest page faults) size after size,",
                "twice; pass 2 is warm: every page is present in the guest, the shadow page tables and",
                "the host. The host process does the same in one mapping (`sweep-host --flat`).%s" % order_head,
                order_text, "",
                "| pass 2, all sizes | guest | host | guest/host (time ratio per round) |", "|---|---|---|---|",
                "| ms per GiB | %s | %s | %s |" % (fl_tot.fmt_stats("warm pass", "guest", 1000),
                                                  fl_tot.fmt_stats("warm pass", "host", 1000), fl_tot_r.fmt_ratio("warm pass")),
                "", "| pass, MiB | guest (ms) | host (ms) | guest/host |", "|---|---|---|---|"]
        for c in fl.cells():
            w = c.split()
            out.append("| %s, %s MiB | %s | %s | %s |" % (w[1] if len(w) > 1 else "", w[2] if len(w) > 2 else "",
                                                         fl.fmt_stats(c, "guest", 1000), fl.fmt_stats(c, "host", 1000),
                                                         fl_r.fmt_ratio(c)))

        def per_gib(tool):
            x = fl_tot.get("warm pass", tool, 4)
            return "%s ms/GiB" % c_g(awk_value(x) * 1000, 3) if x != "" else ""

        self.hl("warm pass (flat pass 2), ms per GiB | all sizes | %s |" % per_gib("guest"),
                "Linux process %s |" % per_gib("host"),
                "%s (guest/host: time ratio, 1 = parity) | - | -" % fl_tot_r.fmt_ratio("warm pass"))
        out += self.first_pass()
        out += ["", "<details><summary>commands</summary>", ""]
        out += self.commands_of("guest") + self.commands_of("flat")[2:]
        out += ["", "</details>", ""]
        out += self.every_sample("flat", "touch_s") + [""]
        if modes:
            out += self.every_sample("firstpass", *FIRSTPASS_METRICS) + [""]
        out += self.every_sample("sweep", "map_s", "touch_s", "unmap_s") + [""]
        return out

    def has_firstpass(self, mode):
        return any(len(r) >= 3 and r[0] == "firstpass" and r[2] == mode for r in self.samples)

    def first_pass(self):
        """The flat workload's first pass: lazy vs --eager=populate vs --eager=prefault,
        KVM's counts beside the times; or the bench's line naming a platform
        without KVM_PRE_FAULT_MEMORY."""
        modes = [m for m in PREFAULT_MODES if self.has_firstpass(m)]
        if not modes:
            return []
        st = {m: self.stats("firstpass", m) for m in FIRSTPASS_METRICS}
        cell = st["first_pass_s"].cells()[0] if st["first_pass_s"].cells() else ""
        r_pass = {m: self.ratios("firstpass", "first_pass_s", m, "lazy") for m in modes}
        r_work = {m: self.ratios("firstpass", "first_work_s", m, "lazy") for m in modes}
        out = ["", "### First pass: lazy vs --eager=populate vs --eager=prefault (the same `flat` runs)", "",
               "The guest side above ran lazy; in the same rounds the same guest ran with",
               "`--eager=populate` (host memory populated before the guest runs) and, where KVM has",
               "`KVM_PRE_FAULT_MEMORY`, `--eager=prefault` (populate, then KVM builds the EPT/NPT",
               "entries too). Pass 1 meets every page for the first time. KVM's counts over pass 1",
               "(the timeline's `first_useful_work` phase: `pf_taken`, `exits`) and over the rest",
               "(pass 2, warm: `warm pf_taken`) are KVM's own statistics; eager is before the guest",
               "runs and covers all of `--mem`; exec to the end of pass 1 is minivmm's",
               "`first_useful_work_ms`: what eager costs or saves in all. Cell: %s." % cell, ""]
        out += [n + "." for n in self.notes("prefault-skip")]
        if self.emulated:
            out += ["Counts are KVM's own; times are an EMULATED host's."]
        out += ["", "| mode | eager (s) | pass 1 (s) | pass 1 KVM pf_taken | pass 1 KVM exits | pass 2 KVM pf_taken | exec to end of pass 1 (s) | pass 1 time / lazy | exec to end of pass 1 / lazy |",
                "|---|---|---|---|---|---|---|---|---|"]
        for m in modes:
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                m if m == "lazy" else "--eager=" + m, st["eager_s"].fmt_stats(cell, m, 1),
                st["first_pass_s"].fmt_stats(cell, m, 1), st["pf_taken"].fmt_stats(cell, m, 1),
                st["exits"].fmt_stats(cell, m, 1), st["warm_pf_taken"].fmt_stats(cell, m, 1),
                st["first_work_s"].fmt_stats(cell, m, 1),
                "-" if m == "lazy" else r_pass[m].fmt_ratio(cell), "-" if m == "lazy" else r_work[m].fmt_ratio(cell)))

        def mode_text(m):
            return "%s: pass 1 KVM pf_taken %s, %s s" % (m, _med(st["pf_taken"].get(cell, m, 4), 9),
                                                          _med(st["first_pass_s"].get(cell, m, 4)))

        pairs = [(m, "lazy") for m in modes if m != "lazy"]
        if "populate" in modes and "prefault" in modes:
            pairs.append(("prefault", "populate"))
        for m, base in pairs:
            rr = self.ratios("firstpass", "first_pass_s", m, base)
            self.hl("first pass, --eager=%s vs %s%s | %s | %s |" % (m, base if base == "lazy" else "--eager=" + base,
                                                                   self.emu_tag, cell, mode_text(m)),
                    "%s |" % mode_text(base), "%s (pass 1 time ratio %s/%s) | - | -" % (rr.fmt_ratio(cell), m, base))
        return out

    def headline_section(self):
        out = []
        h_eager = self.stats("headline", "eager_s")
        h_setup = self.stats("headline", "mapped_to_entry_s")
        h_gib = self.stats("headline", "populated_gib")
        h_pop = self.stats("headline", "populate_s")
        h_proc = self.stats("headline", "process_s")
        pm, ps = awk_value(PROPOLIS_MIB), awk_value(PROPOLIS_S)
        out += ["## 4. The seeds' headline: eager population of a large guest", "",
                "Propolis (seed 002) reports `vm_mmap_memseg` for a %s MiB VM at about %s s with" % (PROPOLIS_MIB, PROPOLIS_S),
                "wired (pre-reserved) memory: %.1f GiB/s, page-table set-up of memory" % (pm / 1024 / ps),
                "reserved before. minivmm's `--eager=populate` here allocates and clears the pages as it",
                "maps them (MADV_POPULATE_WRITE), so it is closest to Propolis with hugetlb pools, whose",
                "pages are reserved before the run (cleared at fault time all the same). Each backing",
                "at the size the machine allows (hugetlb: as many pages as the kernel granted), threads",
                "in ABBA order after a warm-up; where the eager section ran minivmm at this size, its",
                "anon (4k) and thp runs are these rows. The rate is what eager made resident itself",
                "(`.eager.populated_bytes`, from mincore before and after) over minivmm's own",
                "`.eager.seconds`; the kernel-observed MADV_POPULATE_WRITE span and RAM mapped to guest",
                "entry (minivmm's timeline: vCPU creation, eager, loading the image) stand beside it.", "",
                "| backing, size | threads | eager (s) | populated (GiB) | kernel-observed populate (s) | RAM mapped to guest entry (s) | whole process (s) | GiB/s (median) | %s MiB at that rate (s) | vs Propolis' %s s |" % (PROPOLIS_MIB, PROPOLIS_S),
                "|---|---|---|---|---|---|---|---|---|---|"]
        pools, porder = {}, []
        for r in self.samples:
            if len(r) >= 6 and r[0] == "headline-pool":
                if r[1] not in pools:
                    pools[r[1]] = {}
                    porder.append(r[1])
                pools[r[1]][r[4]] = r[5]
        pool_note = "; ".join("%s: asked %s pages, granted %s" % (b, pools[b].get("asked_pages", ""), pools[b].get("granted_pages", ""))
                              for b in porder)
        rows = [["cell", "1-thread", "lo", "hi", "2-threads", "lo", "hi"]]
        for c in h_eager.cells():
            line = [c]
            for t in h_eager.tools(c):
                m = h_eager.get(c, t, 4)
                g = h_gib.get(c, t, 4)
                rate = "%.2f" % _div(awk_value(g), awk_value(m))
                at = "%.2f" % _div(pm / 1024, awk_value(rate))
                th = t[1:] if t.startswith("t") else t
                out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1fx the time |" % (
                    c, th, h_eager.fmt_stats(c, t, 1), h_gib.fmt_stats(c, t, 1), h_pop.fmt_stats(c, t, 1),
                    h_setup.fmt_stats(c, t, 1), h_proc.fmt_stats(c, t, 1), rate, at, _div(awk_value(at), ps)))
                self.hl("eager %s (%s), %s thread(s) | %s MiB at the measured rate | %s s |" % (
                    c.rsplit(" ", 1)[0], c.rsplit(" ", 1)[-1], th, PROPOLIS_MIB, at),
                        "Propolis %s s (seed) | %.2f (speed ratio, seed time / minivmm) | - | -" % (PROPOLIS_S, _div(ps, awk_value(at))))
                rr = h_eager.first(c, t)
                gv = awk_value(g)
                line += [c_g(_div(gv, awk_value(rr[3])), 6), c_g(_div(gv, awk_value(rr[7])), 6), c_g(_div(gv, awk_value(rr[6])), 6)]
            text = re.sub(r"^([a-z0-9]*)\t([0-9]*G)", r"\1_\2", " ".join(line).replace(" ", "\t"), count=1)
            rows.append(text.split("\t"))
        out.append("")
        if pool_note:
            out.append("hugetlb pools: %s." % pool_note)
        out.append("")
        out.append(self.plot_bars("headline", "eager populate by backing: GiB/s (median, min-max)", "GiB/s", rows,
                                  "%.2f" % (pm / 1024 / ps), "Propolis (seed 002): %s MiB in %s s" % (PROPOLIS_MIB, PROPOLIS_S)))
        out += ["", "<details><summary>commands</summary>", ""] + self.commands_of("headline") + ["", "</details>", ""]
        out += self.every_sample("headline", "eager_s", "populated_gib", "populate_s", "mapped_to_entry_s", "process_s")
        out.append("")
        return out

    def render(self):
        facts, env_md = _bench_facts(self.dir)
        fact = dict(facts)
        if env_md is None:
            doc = None
            epath = os.path.join(self.dir, "environment.json")
            try:
                with open(epath) as f:
                    doc = json.load(f)
            except (OSError, ValueError):
                doc = None
            env_md = environment.markdown(doc, facts, epath)
        out = ["# minivmm beside its peers, measured side by side", ""]
        if self.emulated:
            out += [EMULATED_LINE, ""]
        out += ["`bench/%s`, started %s. Every number below was measured in this run" % (fact.get("bench command", ""),
                                                                                    fact.get("bench start (UTC)", "")),
               "and computed from `samples.tsv` by `bench/peers-report`; the commands are quoted",
               "exactly. Medians with [IQR] and (min-max); ratios are taken between the runs of one",
               "round (one row of the order, run back to back) and summarised the same way. Targets are shown, not",
               "tested: eager populate at least 0.9x as fast as QEMU's prealloc and as a plain",
               "process, and exec to the first guest instruction at least 15x faster than QEMU and",
               "within 1.3x of the bare KVM calls (kvm-floor)."]
        if self.has("roofline") or (self.has("headline") and headline.is_new(self)):
            out += ["Eager from a 2 MiB reservoir: the seed's %d MiB at least %gx faster than its %.3f s;" % (
                        headline.SEED_MIB, headline.RESERVOIR_TARGET, headline.SEED_S),
                    "fresh eager populate at >= %g%% of this machine's clearing ceiling (the roofline)." % headline.CEILING_TARGET]
        out += ["", "## Environment", "", env_md.rstrip("\n"), ""]
        body = headline.roofline_section(self) if self.has("roofline") else []
        if self.has("eager"):
            body += self.eager()
        if self.has("startup"):
            body += self.startup()
        if self.has("sweep"):
            body += self.sweep()
        if self.has("flat"):
            body += self.flat()
        if self.has("headline"):
            body += headline.section(self) if headline.is_new(self) else self.headline_section()
        out += ["## Headline", ""]
        if self.emulated:
            out += ["Ratios of times here are an EMULATED host's, both sides measured there; targets are",
                    "for hardware and not judged (counts, where shown, are KVM's own).", ""]
        out += ["| comparison | cell | minivmm | peer | speed ratio, median (min-max) of pairs | target | verdict |",
                "|---|---|---|---|---|---|---|"] + self.headline + [""] + body
        if self.has("timing"):
            out += ["## How long each section took", "", "| section | seconds |", "|---|---|"]
            total = 0.0
            for r in self.samples:
                if len(r) >= 6 and r[0] == "timing":
                    out.append("| %s | %s |" % (r[1], r[5]))
                    total += awk_value(r[5])
            out += ["| all | %d |" % int(total), ""]
        out += ["## How these numbers are taken", "",
                "- **Order.** This machine's memory is lazily backed by its own host, which also takes",
                "  freed pages back: a run right after another big one can find memory already backed",
                "  and be several times faster. Every comparison therefore runs its tools in the rows",
                "  of a Williams design (`bench_order`: %s for two, i.e. ABBA;" % design.order_rows_text(2, ["A", "B"]),
                "  %s for three), so each tool runs equally often in each" % design.order_rows_text(6, ["A", "B", "C"]),
                "  position and after each other; it starts with an uncounted warm-up, and reports medians,",
                "  the IQR and min-max; ratios are computed between the runs of one round (one row, run",
                "  back to back), then summarised.",
                "- **Quartiles** interpolate between order statistics (R's type 7): with 2 samples the",
                "  median is their mean and the IQR half their range. More rounds (`--rounds`) narrow it.",
                "- **Boundaries** come from the kernel where the tools do not expose the same one",
                "  (tracefs events in a private instance); process times are fork to reap.",
                "- **Raw data**: `samples.tsv` (every sample), `commands.tsv`, and `raw/` (each run's",
                "  output, trace and minivmm JSON; not committed)."]
        return "\n".join(out) + "\n"

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def gib_of(cell):
    """The N of the last " NG..." word of a cell ("4k 1G t1" -> "1"), "" if none."""
    m = re.match(r".* ([0-9][0-9]*)G.*", cell)
    return m.group(1) if m else ""


def gib_of_awk(cell):
    """The plot's reading of a cell's size: up to the first G, after the last space."""
    g = cell.split("G", 1)[0]
    return g.rsplit(" ", 1)[-1]


def _med(text, prec=3):
    """A median's text to PREC significant digits, "-" when there is none."""
    return "-" if text.strip() in ("", "-") else c_g(awk_value(text), prec)


def _numeric_gt0(text):
    """awk's m > 0 for a value passed with -v: numeric only if it looks like a number."""
    return bool(NUMBER.match(text.strip())) and float(text) > 0


def main(argv):
    import sys

    if len(argv) != 1 or argv[0] in ("-h", "--help") or not os.path.isfile(os.path.join(argv[0], "samples.tsv")):
        print("usage: bench/peers-report DIR > DIR/report.md   (DIR: a bench/peers output with samples.tsv)",
              file=sys.stderr)
        return 2
    if not gnuplot.available():
        print("peers-report: " + gnuplot.MISSING, file=sys.stderr)
        return 1
    rep = Report(argv[0])
    try:
        text = rep.render()
    except (ReportError, OSError) as e:
        print("peers-report: %s" % e, file=sys.stderr)
        return 1
    finally:
        rep.close()
    sys.stdout.write(text)
    return 0
