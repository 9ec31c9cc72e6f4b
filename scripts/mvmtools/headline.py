"""bench/peers' headline as measured (not extrapolated), and the roofline it is rated on.

The seed (002, Propolis on bhyve) maps a 16000 MiB guest in about 620 ms from
bhyve's reservoir: memory allocated and zeroed before the VM exists, so eager
mapping costs page-table entries only. bench/peers runs the seed's size for
every backing the machine grants, fresh (`--backing B`: the kernel clears each
page as it maps it) and from a reservoir of each page size (`--reservoir DIR`:
page tables only), and rates each populate against this machine's ceilings
(build/bench/roofline, `--roofline`). This module renders those samples:
section "headline" with cells "SOURCE BACKING SIZEM" (tools t1, t2), the sizes
("headline-size"), what was skipped ("headline-skip"), the reservoirs
("headline-reservoir"), the ceilings ("roofline", "roofline-skip").

Reports of runs before this (cells "BACKING NG", no headline-size) are rendered
by peers.Report's own headline section, unchanged.
"""
from .numtext import awk_value, c_g
from .stats import NUMBER, group_stats

SEED_MIB = 16000  # seed 002: "vm_mmap_memseg for a 16,000MiB (mind the weird number) VM"
SEED_S = 0.620  # "takes a total of about 620ms"
SEED_PAGES_4K = SEED_MIB * 256
RESERVOIR_TARGET = 10.0  # issue 25: from a 2 MiB reservoir, at least 10x faster than the seed
CEILING_TARGET = 90.0  # issue 25: fresh eager at >= 90% of the clearing ceiling
PAGE_KIB = {"anon": 4, "memfd": 4, "thp": 2048, "hugetlb2m": 2048, "hugetlb1g": 1048576}
SOURCE_TEXT = {"fresh": "fresh", "reservoir": "from the reservoir"}


def _g3(x):
    return "0" if x == 0 else ("%.0f" % x if x >= 1000 else c_g(x, 3))


def _spread(values, fmt=_g3):
    """ "median [min-max]" of numbers, "-" if none."""
    rows = group_stats([["x", "%.9g" % v] for v in values], 1)
    if not rows:
        return "-"
    r = rows[0]
    return "%s [%s-%s]" % (fmt(awk_value(r[2])), fmt(awk_value(r[5])), fmt(awk_value(r[6])))


def _median(values):
    rows = group_stats([["x", "%.9g" % v] for v in values], 1)
    return awk_value(rows[0][2]) if rows else None


def _ratio(values):
    """ "median (min-max)" of ratios."""
    rows = group_stats([["x", "%.9g" % v] for v in values], 1)
    if not rows:
        return "-"
    r = rows[0]
    return "%.2f (%.2f-%.2f)" % (awk_value(r[2]), awk_value(r[5]), awk_value(r[6]))


def _pct(values):
    """ "median% (min-max%)" of percentages."""
    rows = group_stats([["x", "%.9g" % v] for v in values], 1)
    if not rows:
        return "-"
    r = rows[0]
    return "%.0f%% (%.0f-%.0f%%)" % (awk_value(r[2]), awk_value(r[5]), awk_value(r[6]))


def verdict(values, target, what="runs"):
    """met when every run reaches TARGET, not met when none does."""
    if not values:
        return "-"
    med = _median(values)
    if min(values) >= target:
        return "met"
    if max(values) < target:
        return "not met"
    return "inconclusive (median %s %s, %s straddle it)" % ("reaches" if med >= target else "misses",
                                                            "%g" % target, what)


def is_new(rep):
    """Samples of a run that measured the headline's size (not the old GiB cells)."""
    return rep.has("headline-size")


class Runs:
    """Per run (cell, tool, seq > 0) of one section: metric -> text."""

    def __init__(self, samples, section):
        self.order, self.v = [], {}
        for r in samples:
            if len(r) >= 6 and r[0] == section and awk_value(r[3]) > 0:
                k = (r[1], r[2])
                if k not in self.v:
                    self.v[k] = {}
                    self.order.append(k)
                self.v[k].setdefault(r[3], {})[r[4]] = r[5]

    def nums(self, cell, tool, metric, f=None):
        """The metric's numbers over the runs of (cell, tool), in seq order; f(run) derives one."""
        out = []
        for seq, m in self.v.get((cell, tool), {}).items():
            if f:
                x = f(m)
                if x is not None:
                    out.append(x)
            elif NUMBER.match(m.get(metric, "")):
                out.append(float(m[metric]))
        return out

    def texts(self, cell, tool, metric):
        seen = []
        for m in self.v.get((cell, tool), {}).values():
            t = m.get(metric)
            if t is not None and t not in seen:
                seen.append(t)
        return seen


def _num(m, k):
    t = m.get(k, "")
    return float(t) if NUMBER.match(t) else None


def _cell(cell):
    """("fresh", "anon", 16000) from "fresh anon 16000M"."""
    w = cell.split()
    return w[0], w[1], int(w[2].rstrip("M"))


def _threads(tool):
    t = tool[1:] if tool.startswith("t") else tool
    return "%s thread%s" % (t, "" if t == "1" else "s")


def _seed_s(mib):
    """The seed's time for MIB at its rate; never scaled up past its own 16000 MiB
    (a larger run, 16384 MiB for 1 GiB pages, is held to 620 ms: conservative)."""
    return SEED_S * min(mib, SEED_MIB) / SEED_MIB


def _seed_ratios(runs, cell, tool, mib):
    return runs.nums(cell, tool, None, lambda m: _seed_s(mib) / _num(m, "eager_s") if _num(m, "eager_s") else None)


def _rate_gib(m, source):
    """GiB/s of one run: what eager made resident (fresh) or covered (a lease: mincore
    cannot tell a pool's pages apart), over minivmm's own eager seconds."""
    s, g = _num(m, "eager_s"), _num(m, "populated_gib" if source == "fresh" else "done_gib")
    if g is None:  # runs from before done_gib was recorded
        g = _num(m, "populated_gib")
    return g / s if s and g is not None else None


def _ns_per_page(m, mib):
    s = _num(m, "eager_s")
    return s / (mib * 256) * 1e9 if s else None


def _facts(rep):
    f = {}
    for r in rep.samples:
        if len(r) >= 6 and r[0] == "headline-size":
            f[r[4]] = int(awk_value(r[5]))
    return f


def roofline_section(rep):
    """The ceilings this run measured, as build/bench/roofline wrote them."""
    runs = Runs(rep.samples, "roofline")
    cmd = next((r[3] for r in rep.commands if len(r) >= 4 and r[0] == "roofline"), "")
    out = ["## The roofline: this machine's populate ceilings, measured in this run", "",
           "Measured once, before the sections below, by `%s`: **clear**," % cmd,
           "MADV_POPULATE_WRITE of a fresh mapping made as each backing makes it (the kernel",
           "allocates, clears and maps each page); **map**, the same on a fresh shared mapping of",
           "a file allocated and zeroed already (page tables only: what a reservoir lease costs);",
           "**memset**, zeroing resident memory (the CPU's bandwidth). The ceiling is the best of",
           "the runs. Clearing's rate does not depend on the size past a few GiB; mapping 2 MiB",
           "pages takes microseconds per GiB, so map is measured at the headline's size. Every",
           "minivmm eager populate below is rated against the matching ceiling by minivmm itself",
           "(`--roofline`: each run's results keep it, `eager.roofline`): clear for fresh memory,",
           "map for a lease.", "",
           "| backing | op | threads | MiB | ceiling (GiB/s) | median of the runs (GiB/s) | ns per page |",
           "|---|---|---|---|---|---|---|"]
    for cell, tool in runs.order:
        m = next(iter(runs.v[(cell, tool)].values()))
        b, op = (cell.split() + ["", ""])[:2]
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            b, op, tool[1:] if tool.startswith("t") else tool, m.get("mib", "-"), m.get("gib_per_s", "-"),
            m.get("median_gib_per_s", "-"), m.get("ns_per_page", "-")))
    skipped = [r[5] for r in rep.samples if len(r) >= 6 and r[0] == "roofline-skip"]
    if skipped:
        out += ["", "Not measured: %s." % "; ".join(skipped)]
    out.append("")
    return out


def eager_pct(rep, cell):
    """The eager section's minivmm populate as a percentage of its ceiling: "-" if not rated."""
    runs = Runs(rep.samples, "eager")
    pct = runs.nums(cell, "minivmm", "pct_of_ceiling")
    if not pct:
        ops = runs.texts(cell, "minivmm", "ceiling_op")
        return ops[0] if ops else "-"
    ceil = runs.nums(cell, "minivmm", "ceiling_gib_s")
    ops = runs.texts(cell, "minivmm", "ceiling_op")
    return "%s%% of %s %s GiB/s" % (_spread(pct, lambda x: "%.0f" % x), "/".join(ops),
                                     _g3(_median(ceil)) if ceil else "-")


def section(rep):
    """Section 4 and the headline table's rows (rep.hl)."""
    runs = Runs(rep.samples, "headline")
    f = _facts(rep)
    asked, measured = f.get("asked_mib", SEED_MIB), f.get("measured_mib", SEED_MIB)
    extrapolated = measured < asked
    r = rep.rounds("headline")
    out = ["## 4. The seed's headline: %d MiB eager, fresh and from the reservoir" % measured, "",
           "Propolis (seed 002) reports `vm_mmap_memseg` for a %d MiB VM at about %.3f s, with memory" % (SEED_MIB, SEED_S),
           "from bhyve's reservoir: allocated and zeroed before the VM exists, so eager mapping",
           "costs the page-table entries only (%.1f GiB/s; %.0f ns per 4 KiB page)." % (
               SEED_MIB / 1024 / SEED_S, SEED_S / SEED_PAGES_4K * 1e9),
           "- **fresh**: `--eager=populate --backing B`: the kernel allocates and clears each page",
           "  as minivmm's threads map it (MADV_POPULATE_WRITE), one thread per vCPU.",
           "- **from the reservoir**: `--reservoir DIR --eager=populate`: a lease of a pool that",
           "  `scripts/reservoir create` allocated and zeroed before (hugetlbfs for 2 MiB and 1 GiB",
           "  pages, tmpfs for 4 KiB), one reservoir per page size, destroyed after its runs. After",
           "  each lease the keeper scrubs the range in the background; the bench waits for it",
           "  before the next run, so that no scrub runs beside a measured populate (2 CPUs), and",
           "  reports the wait separately.",
           "- Threads in ABBA order after an uncounted warm-up per row, %s rounds. **rate**: what" % r,
           "  eager made resident (`.eager.populated_bytes`, mincore) over minivmm's own",
           "  `.eager.seconds`; on a lease mincore cannot tell the pool's pages apart, so the bytes",
           "  it covered. **%% of ceiling**: minivmm's own rating (`--roofline`, %s)." % (
               "clear for fresh, map for a lease" if rep.has("roofline") else "not measured in this run"),
           "- **eager (s)**: minivmm's own clock around its threads' populate (`.eager.seconds`), the",
           "  figure rated and compared; **kernel-observed populate**: the first MADV_POPULATE_WRITE",
           "  call's entry to the last one's return (tracefs); **eager phase**: that phase of",
           "  minivmm's timeline, with what it does around the populate (mincore of all of RAM",
           "  before and after, to count what eager made resident); **RAM mapped to guest entry**:",
           "  the timeline from guest RAM mapped to the guest's first instruction.",
           "- **seed / minivmm**: the seed's time over minivmm's, per run, for the same size",
           "  (the seed's at its rate for a size other than its %d MiB, never scaled up: the" % SEED_MIB,
           "  1 GiB rows, whose size is a whole number of GiB, are held to its %.3f s)." % SEED_S]
    if extrapolated:
        out.append("- **Extrapolated**: MemAvailable (%d MiB) could not hold %d MiB plus a margin of %d MiB;" % (
            f.get("mem_available_mib", 0), asked, f.get("margin_mib", 0)))
        out.append("  %d MiB, the largest that fits, was measured and its %d MiB times are extrapolated at" % (measured, asked))
        out.append("  the measured rate.")
    else:
        out.append("- Measured at %d MiB%s, not extrapolated (MemAvailable %d MiB at the start)." % (
            measured, " (asked)" if measured != SEED_MIB else ", the seed's size", f.get("mem_available_mib", 0)))
    sizes = sorted({_cell(c)[2] for c, _ in runs.order} - {measured})
    if sizes:
        out.append("- A 1 GiB backing needs a whole number of GiB: %s MiB, the smallest multiple of 1 GiB" %
                   ", ".join(str(z) for z in sizes))
        out.append("  at or above %d MiB." % measured)
    out += ["", "| source | backing | MiB | threads | eager (s), median [min-max] | GiB/s | %% of ceiling | kernel-observed populate (s) | eager phase (s) | RAM mapped to guest entry (s) | whole process (s) | %s | seed / minivmm, median (min-max) | target | verdict |" % (
        "%d MiB at that rate (s), extrapolated" % asked if extrapolated else "seed (s)"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    plot = [["cell", "1-thread", "lo", "hi", "2-threads", "lo", "hi"]]
    per_page = []
    for cell, tool in runs.order:
        src, b, mib = _cell(cell)
        rates = runs.nums(cell, tool, None, lambda m: _rate_gib(m, src))
        pct = runs.nums(cell, tool, "pct_of_ceiling")
        ops = runs.texts(cell, tool, "ceiling_op")
        ceil = runs.nums(cell, tool, "ceiling_gib_s")
        eager = runs.nums(cell, tool, "eager_s")
        ratios = _seed_ratios(runs, cell, tool, mib)
        if pct:
            pct_text = "%s%% of %s %s GiB/s" % (_spread(pct, lambda x: "%.0f" % x), "/".join(ops), _g3(_median(ceil)))
        else:
            pct_text = ops[0] if ops else "-"
        med = _median(eager)
        if extrapolated:
            at = _g3(med * asked / mib) if med else "-"
        else:
            at = "%.4g" % _seed_s(mib)
        if src == "fresh":
            target, vd = ">= %g%% of the clear ceiling" % CEILING_TARGET, verdict(pct, CEILING_TARGET)
        elif b == "hugetlb2m":
            target, vd = ">= %gx the seed" % RESERVOIR_TARGET, verdict(ratios, RESERVOIR_TARGET)
        elif PAGE_KIB.get(b) == 4:
            target, vd = "per page: below", "-"
        else:
            target, vd = "-", "-"
        out.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            src, b, mib, tool[1:], _spread(eager), _g3(_median(rates)) if rates else "-", pct_text,
            _spread(runs.nums(cell, tool, "populate_s")), _spread(runs.nums(cell, tool, "eager_phase_s")),
            _spread(runs.nums(cell, tool, "mapped_to_entry_s")),
            _spread(runs.nums(cell, tool, "process_s")), at, _ratio(ratios), target, vd))
        if PAGE_KIB.get(b) == 4:
            per_page.append((cell, tool, src, b, mib))
        # The headline table: every row against the seed; fresh rows against their ceiling.
        label = "eager %s, %s" % (SOURCE_TEXT.get(src, src), b)
        where = "%d MiB, %s" % (mib, _threads(tool))
        mine = "%s s" % _g3(med) if med else "-"
        if extrapolated and med:
            mine += " (%d MiB extrapolated: %s s)" % (asked, _g3(med * asked / mib))
            seed = "Propolis %.3f s (seed)" % SEED_S
        elif mib == SEED_MIB or mib > SEED_MIB:
            seed = "Propolis %.3f s (seed)" % SEED_S
        else:
            seed = "Propolis %s s (seed's %.3f s for %d MiB, at its rate)" % ("%.3g" % _seed_s(mib), SEED_S, SEED_MIB)
        if PAGE_KIB.get(b) == 4 and src == "reservoir":
            pp = runs.nums(cell, tool, None, lambda m: _ns_per_page(m, mib))
            rep.hl("%s (4 KiB tmpfs), per page | %s | %s ns per page (%s) |" % (label, where, _g3(_median(pp)), mine),
                   "Propolis %.0f ns per page (seed: %.3f s over %d MiB of 4 KiB pages) |" % (
                       SEED_S / SEED_PAGES_4K * 1e9, SEED_S, SEED_MIB),
                   "%s (seed per page / minivmm) | reported | -" % _ratio([SEED_S / SEED_PAGES_4K * 1e9 / x for x in pp]))
        else:
            tg = ">= %g | %s" % (RESERVOIR_TARGET, verdict(ratios, RESERVOIR_TARGET)) if (
                src == "reservoir" and b == "hugetlb2m") else "- | -"
            rep.hl("%s | %s | %s |" % (label, where, mine), "%s |" % seed,
                   "%s (seed time / minivmm) | %s" % (_ratio(ratios), tg))
        if src == "fresh" and pct:
            rep.hl("eager fresh, %s, vs the clear ceiling | %s | %s GiB/s |" % (b, where, _g3(_median(rates)) if rates else "-"),
                   "roofline clear %s GiB/s |" % _g3(_median(ceil)),
                   "%s of the ceiling | >= %g%% | %s" % (_pct(pct), CEILING_TARGET, verdict(pct, CEILING_TARGET)))
        # Plot rows: one bar group per cell, a bar per thread count.
        if rates:
            lo, hi = min(rates), max(rates)
            key = "%s_%s_%dM" % (src, b, mib)
            if plot[-1][0] != key:
                plot.append([key])
            plot[-1] += [c_g(_median(rates), 6), c_g(lo, 6), c_g(hi, 6)]
    out.append("")
    skipped = [(r[1], r[5]) for r in rep.samples if len(r) >= 6 and r[0] == "headline-skip"]
    for c, why in skipped:
        out.append("Not measured: %s: %s." % (c, why))
    pools = {}
    for rr in rep.samples:
        if len(rr) >= 6 and rr[0] == "headline-pool":
            pools.setdefault(rr[1], {})[rr[4]] = rr[5]
    if pools:
        out.append("hugetlb pools for the fresh rows: %s." % "; ".join(
            "%s: asked %s pages, granted %s" % (b, p.get("asked_pages", ""), p.get("granted_pages", "")) for b, p in pools.items()))
    if skipped or pools:
        out.append("")
    if per_page:
        pp_seed = SEED_S / SEED_PAGES_4K * 1e9
        out += ["### 4 KiB pages: the cost per page beside the seed's", "",
                "The seed's %.3f s over %d MiB is %.0f ns per 4 KiB page (its reservoir, page tables" % (SEED_S, SEED_MIB, pp_seed),
                "only). minivmm's per page is its eager seconds over the guest's 4 KiB pages.", "",
                "| source | backing | MiB | threads | ns per page, median [min-max] | seed (ns per page) | seed / minivmm, median (min-max) |",
                "|---|---|---|---|---|---|---|"]
        for cell, tool, src, b, mib in per_page:
            pp = runs.nums(cell, tool, None, lambda m: _ns_per_page(m, mib))
            out.append("| %s | %s | %d | %s | %s | %.0f | %s |" % (src, b, mib, tool[1:], _spread(pp), pp_seed,
                                                                 _ratio([pp_seed / x for x in pp])))
        out.append("")
    out += scrub_table(rep, runs)
    if len(plot) > 1:
        width = max(len(x) for x in plot)
        plot = [x + ["0"] * (width - len(x)) for x in plot]
        out.append(rep.plot_bars("headline", "eager populate, fresh and from the reservoir: GiB/s (median, min-max; log scale)",
                                 "GiB/s", plot, "%.2f" % (SEED_MIB / 1024 / SEED_S),
                                 "Propolis (seed 002): %d MiB in %.3f s" % (SEED_MIB, SEED_S), log=True))
    out += ["", "<details><summary>commands</summary>", ""] + rep.commands_of("headline")
    out += rep.commands_of("headline-reservoir")[2:] + ["", "</details>", ""]
    out += rep.every_sample("headline", "eager_s", "populated_gib", "done_gib", "pct_of_ceiling", "ceiling_op",
                            "populate_s", "eager_phase_s", "mapped_to_entry_s", "process_s", "scrub_s", "scrub_wait_s", "lease_wait_s")
    out.append("")
    return out


def scrub_table(rep, runs):
    """The keeper's scrub after each lease, and what the next lessee would wait."""
    created = {}
    for r in rep.samples:
        if len(r) >= 6 and r[0] == "headline-reservoir" and r[4] == "create_s":
            created[r[1]] = float(r[5]) if NUMBER.match(r[5]) else None
    cells = [c for c, _ in runs.order if c.startswith("reservoir ")]
    cells = [c for i, c in enumerate(cells) if c not in cells[:i]]
    if not cells:
        return []
    out = ["### The reservoir's scrub after each lease", "",
           "When a lease ends, its keeper punches the range out of the pool file and allocates it",
           "again (hugetlbfs zeroes each page as it allocates; a 4 KiB tmpfs pool is faulted in",
           "again to clear it), so the next lessee sees nothing the guest wrote. Its own timing",
           "(`DIR/scrub.log`), every lease of the runs above (warm-up excluded); **wait**: from",
           "minivmm's exit to the range being free (the keeper's exit), what a next lease would",
           "wait for; **lease wait**: minivmm's own wait at lease time (`.ram.lease.waited_s`; the",
           "bench lets each scrub finish first, so about 0). **created**: `scripts/reservoir",
           "create`, allocating and zeroing all of it before any VM.", "",
           "| reservoir | MiB | created (s) | scrubs | scrub (s), median [min-max] | scrub GiB/s, median [min-max] | wait after exit (s) | lease wait (s) |",
           "|---|---|---|---|---|---|---|---|"]
    lines = []
    for c in cells:
        src, b, mib = _cell(c)
        s, g, w, lw = [], [], [], []
        for tool in [t for cc, t in runs.order if cc == c]:
            s += runs.nums(c, tool, "scrub_s")
            g += runs.nums(c, tool, None, lambda m: _num(m, "scrub_gib") / _num(m, "scrub_s")
                           if _num(m, "scrub_s") and _num(m, "scrub_gib") is not None else None)
            w += runs.nums(c, tool, "scrub_wait_s")
            lw += runs.nums(c, tool, "lease_wait_s")
        cr = created.get(c)
        out.append("| %s | %d | %s | %d | %s | %s | %s | %s |" % (
            b, mib, "%.3g" % cr if cr is not None else "-", len(s), _spread(s), _spread(g), _spread(w), _spread(lw)))
        if g:
            lines.append("%s %s GiB/s" % (b, _g3(_median(g))))
    out += ["", "Scrub rate (median): %s." % "; ".join(lines) if lines else "Scrub rate: none measured.", ""]
    return out
