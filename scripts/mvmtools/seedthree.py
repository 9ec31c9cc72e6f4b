"""The seed's three columns (bench/seed-three): OSv's mmap table for the minivmm
guest, the Linux guest and the Linux host from one run, the two guests with
KVM's pf_taken per record. A Linux guest that could not be timed (not run on
this platform, or measured on the rig's emulated clock) shows its counts alone,
or nothing, and the note says why.
"""
from .numtext import jq_text
from .results import load

MODES = ("demand", "populate")


def guest_cells(path, workload="sweep"):
    """{(iteration, size_mib, mode): (touch_s, pf_taken)} of a results file's table rows."""
    res = load(path)
    run = res.first_measured() if res.is_experiment else res.runs[0]
    out = {}
    for r in run.table_rows(workload) if run is not None else []:
        mode = "populate" if r.get("guest_mapping") == "map_populate" else r.get("guest_mapping")
        kvm = r.get("kvm") if isinstance(r.get("kvm"), dict) else {}
        out[(r.get("iteration"), r.get("size_mib"), mode)] = (r.get("touch_s"), kvm.get("pf_taken"))
    return out


def host_cells(path):
    """{(iteration, size_mib, mode): touch_s} of sweep-host's --tsv file."""
    out = {}
    with open(path) as f:
        for line in f.read().split("\n")[1:]:
            w = line.split("\t")
            if len(w) >= 5:
                out[(int(w[0]), int(w[1]), w[2])] = float(w[4])
    return out


def _s(v):
    return "-" if v is None else "%.6f" % v


def _n(v):
    return "-" if v is None else jq_text(v)


def render(guest, linux, host, linux_note, linux_timed):
    """The table, one block per iteration. LINUX is None when the Linux guest did
    not run (LINUX_NOTE says why); LINUX_TIMED False prints its counts alone."""
    keys = sorted(set((i, s) for i, s, _ in list(guest) + list(host) + list(linux or {})))
    lines = ["OSv's mmap benchmark (the seed's table): touch seconds, demand and populate, and KVM's pf_taken per "
             "record for the guests", "Linux guest: %s" % linux_note, ""]
    fmt = "%5s | %9s %9s %7s %8s | %9s %9s %7s %8s | %9s %9s"
    for it in sorted(set(i for i, _ in keys)):
        lines.append("Iteration %d" % it)
        lines.append(fmt % ("MiB", "guest", "", "pf", "", "linux", "", "pf", "", "host", ""))
        lines.append(fmt % ("", "demand", "populate", "demand", "populate", "demand", "populate", "demand",
                            "populate", "demand", "populate"))
        for i, size in keys:
            if i != it:
                continue
            g = [guest.get((it, size, m), (None, None)) for m in MODES]
            x = [(linux or {}).get((it, size, m), (None, None)) for m in MODES]
            h = [host.get((it, size, m)) for m in MODES]
            lt = [_s(c[0]) if linux_timed else "-" for c in x]
            lines.append(fmt % (size, _s(g[0][0]), _s(g[1][0]), _n(g[0][1]), _n(g[1][1]), lt[0], lt[1],
                                _n(x[0][1]), _n(x[1][1]), _s(h[0]), _s(h[1])))
        lines.append("")
    return "\n".join(lines)
