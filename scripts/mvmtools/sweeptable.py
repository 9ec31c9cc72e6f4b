"""The guest-vs-host tables of OSv's mmap benchmark (bench/sweep-vs-host).

Input: samples, one per (side, round, iteration, size, mode) with the map,
touch and unmap seconds as text (side "guest" or "host", mode "demand" or
"populate"), and the seed's figures (bench/seed-osv-mmap.tsv). Per iteration:
the touch loop's medians beside the seed's, guest/host ratios per ABBA pair,
their spreads, and the map and unmap medians.
"""
from collections import namedtuple

from .numtext import awk_value, c_g
from .stats import group_stats, paired_ratios

Sample = namedtuple("Sample", "side round iteration size mode map_s touch_s unmap_s")
QUANTITIES = ("map", "touch", "unmap")


def read_samples(path):
    """bench/sweep-vs-host's samples.tsv: side round iteration size mode map_s touch_s unmap_s."""
    out = []
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) >= 8:
                out.append(Sample(*fields[:8]))
    return out


def read_seed(path):
    """{(system, iteration, size, mode): seconds text} of the seed's table."""
    seed = {}
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if line.startswith("#") or fields[0] == "system" or len(fields) < 5:
                continue
            seed[(fields[0], fields[1], fields[2], "demand")] = fields[3]
            seed[(fields[0], fields[1], fields[2], "populate")] = fields[4]
    return seed


def _sig(x):
    if x is None or x == "":
        return "-"
    v = awk_value(x)
    return "0" if v == 0 else c_g(v, 3)


def _rfmt(x):
    if x is None or x == "":
        return "-"
    v = x if isinstance(x, float) else awk_value(x)
    return "%.0f" % v if v >= 10 else c_g(v, 2)


def _ratio(a, b):
    if a is None or b is None or a == "" or b == "" or awk_value(b) <= 0:
        return "-"
    return _rfmt(awk_value(a) / awk_value(b))


def render(samples, seed, rounds, order_text):
    """The tables as text (what tables.txt holds), from the samples."""
    rows = []
    for q in QUANTITIES:
        for s in samples:
            rows.append([s.side, s.iteration, s.size, s.mode, q, getattr(s, q + "_s")])
    st = {}
    its, sizes = [], []
    for r in group_stats(rows, 5):
        key = tuple(r[:5])
        st[key] = r[5:]  # n median q1 q3 min max samples
        if r[0] == "guest" and r[4] == "touch":
            if r[1] not in its:
                its.append(r[1])
            if r[2] not in sizes:
                sizes.append(r[2])
    ratio_rows = paired_ratios([[" ".join((s.iteration, s.size, s.mode)), s.side, s.round, s.touch_s] for s in samples],
                               "guest", "host")
    rt = {}
    for r in group_stats(ratio_rows, 1):
        it, size, mode = r[0].split(" ")
        rt[(it, size, mode)] = r[1:]

    def med(side, it, s, md, q):
        v = st.get((side, it, s, md, q))
        return v[1] if v else ""

    def field(side, it, s, md, q, i):
        v = st.get((side, it, s, md, q))
        return v[i] if v else ""

    def rfield(it, s, md, i):
        v = rt.get((it, s, md))
        return v[i] if v else ""

    sz = sorted(sizes, key=awk_value)
    out = []
    for n in range(1, len(its) + 1):
        it = str(n)
        out.append("")
        out.append("Iteration %d: the touch loop alone, as OSv times it (seconds; guest and host: medians of %s runs, order %s)"
                   % (n, rounds, order_text))
        out.append("")
        line = "%5s %19s %19s %19s %19s %17s %17s %17s" % ("", "minivmm guest", "Linux host (here)", "seed: OSv guest",
                                                           "seed: Linux host", "guest/host", "guest/seed OSv", "host/seed Linux")
        out.append(line)
        line = "%5s" % "MiB" + "".join(" %9s %9s" % ("demand", "populate") for _ in range(4))
        line += "".join(" %8s %8s" % ("demand", "populate") for _ in range(3))
        out.append(line)
        for s in sz:
            g = {md: med("guest", it, s, md, "touch") for md in ("demand", "populate")}
            h = {md: med("host", it, s, md, "touch") for md in ("demand", "populate")}
            so = {md: seed.get(("osv-guest", it, s, md), "") for md in ("demand", "populate")}
            sl = {md: seed.get(("linux-host", it, s, md), "") for md in ("demand", "populate")}
            line = "%5d" % int(awk_value(s))
            line += " %9s %9s" % (_sig(g["demand"]), _sig(g["populate"]))
            line += " %9s %9s" % (_sig(h["demand"]), _sig(h["populate"]))
            line += " %9s %9s" % (so["demand"] or "-", so["populate"] or "-")
            line += " %9s %9s" % (sl["demand"] or "-", sl["populate"] or "-")
            line += " %8s %8s" % (_rfmt(rfield(it, s, "demand", 1)), _rfmt(rfield(it, s, "populate", 1)))
            line += " %8s %8s" % (_ratio(g["demand"], so["demand"]), _ratio(g["populate"], so["populate"]))
            line += " %8s %8s" % (_ratio(h["demand"], sl["demand"]), _ratio(h["populate"], sl["populate"]))
            out.append(line)
        out.append("")
        out.append("Iteration %d: spread of the touch loop (seconds): IQR and min-max over the runs; guest/host of each ABBA pair" % n)
        out.append("")
        out.append("%5s %-8s %21s %21s %21s %21s %15s" % ("MiB", "mapping", "guest IQR", "guest min-max", "host IQR",
                                                          "host min-max", "guest/host"))
        for s in sz:
            for md in ("demand", "populate"):
                def gs(side, i):
                    return _sig(field(side, it, s, md, "touch", i))
                lo = rfield(it, s, md, 4)
                out.append("%5d %-8s %21s %21s %21s %21s %15s" % (
                    int(awk_value(s)), md, gs("guest", 2) + "-" + gs("guest", 3), gs("guest", 4) + "-" + gs("guest", 5),
                    gs("host", 2) + "-" + gs("host", 3), gs("host", 4) + "-" + gs("host", 5),
                    "-" if lo == "" else _rfmt(lo) + "-" + _rfmt(rfield(it, s, md, 5))))
        out.append("")
        out.append("Iteration %d: map and unmap, outside the timed loop (seconds, medians)" % n)
        out.append("")
        out.append("%5s %39s %39s" % ("", "minivmm guest", "Linux host (here)"))
        out.append("%5s %9s %9s %9s %9s %9s %9s %9s %9s" % ("", "demand", "", "populate", "", "demand", "", "populate", ""))
        out.append("%5s %9s %9s %9s %9s %9s %9s %9s %9s" % ("MiB", "map", "unmap", "map", "unmap", "map", "unmap", "map", "unmap"))
        for s in sz:
            line = "%5d" % int(awk_value(s))
            for side in ("guest", "host"):
                for md in ("demand", "populate"):
                    for q in ("map", "unmap"):
                        line += " %9s" % _sig(med(side, it, s, md, q))
            out.append(line)
    out.append("")
    out.append("guest/host: median of the ratios of the runs paired in ABBA order. seed: OSv commit d4bcf559 on a 2-core")
    out.append('Sandy Bridge i7, 3 decimals (0.000 = below 0.0005 s), so ratios to it are "-" where it reads 0.000.')
    out.append("The guest, OSv and the host reference all write one byte, 0xfe, per 4 KiB page.")
    return "\n".join(out) + "\n"
