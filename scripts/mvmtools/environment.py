"""The environment record of a results file: what to group and compare runs by.

PAGING_PARAMS is the one list of KVM module parameters that decide how guest
memory is paged (bench/lib.sh and scripts/merge used to keep two lists, one of
them naming kvm_intel's C variable enable_unrestricted_guest instead of its
parameter). Names as /sys/module/MODULE/parameters/NAME shows them and the
kernel's admin-guide (kernel-parameters.txt) documents them:
  kvm:        tdp_mmu (two-dimensional paging MMU), nx_huge_pages (iTLB multihit
              mitigation: splits executable huge pages), eager_page_split
  kvm_intel:  ept, eptad (EPT accessed/dirty bits), unrestricted_guest
  kvm_amd:    npt
"""
from .numtext import jq_num, jq_text

PAGING_PARAMS = {
    "kvm": ("tdp_mmu", "nx_huge_pages", "eager_page_split"),
    "kvm_intel": ("ept", "eptad", "unrestricted_guest"),
    "kvm_amd": ("npt",),
}


def paging_params(env):
    """["module.param=value", ...] of PAGING_PARAMS present in the record, in its order."""
    out = []
    for module, params in (env.get("kvm_modules") or {}).items():
        wanted = PAGING_PARAMS.get(module, ())
        for name, value in (params or {}).items():
            if name in wanted:
                out.append("%s.%s=%s" % (module, name, value))
    return out


def group_key(env, platform):
    """The environment a run came from, as a tuple: host, kernel, CPU, KVM flavour,
    paging, its paging parameters, THP. Runs with equal keys are comparable."""
    return (
        str(env.get("hostname", "")),
        str(env.get("kernel_release", "")),
        str(env.get("cpu_model", "")),
        str(platform.get("kvm", "")),
        str(platform.get("paging", "")),
        " ".join(paging_params(env)),
        str(env.get("thp_enabled", "")),
    )


def group_label(key):
    """One line naming a group_key for people."""
    host, kernel, cpu, kvm, paging, params, thp = key
    return "%s | %s | %s | %s, %s paging%s | THP %s" % (
        host, kernel, cpu, kvm or "?", paging or "?", " (%s)" % params if params else "", thp or "?")


def _md(v):
    return jq_text(v).replace("|", "\\|")


def _scalar_paths(v, prefix=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _scalar_paths(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _scalar_paths(x, prefix + (str(i),))
    else:
        yield prefix, v


def markdown(doc, facts, source_name="no results file"):
    """The environment header of a bench report (was bench_env_md in bench/lib.sh).

    doc: a parsed minivmm results file (its .environment and .platform) or None;
    facts: (field, value) pairs the bench adds about itself. Returns the text,
    ending in a newline: the key fields, the bench's facts, then the whole record.
    """
    lines = ["| what | value | source |", "|---|---|---|"]
    env = doc.get("environment") if isinstance(doc, dict) else None
    if isinstance(env, dict):
        p = doc.get("platform") or {}
        e = env

        def s(k):
            return jq_text(e.get(k))

        def row(k, v):
            lines.append("| %s | %s | minivmm results |" % (k, str(v).replace("|", "\\|")))

        mods = ", ".join(sorted((e.get("kvm_modules") or {}).keys()))
        row("kernel release", s("kernel_release"))
        row("CPU", "%s (%s family %s model %s stepping %s), %s online" % (
            s("cpu_model"), s("cpu_vendor"), s("cpu_family"), s("cpu_model_number"), s("cpu_stepping"), s("online_cpus")))
        row("KVM", "%s, %s paging, KVM_PRE_FAULT_MEMORY %s; modules %s%s" % (
            jq_text(p.get("kvm")), jq_text(p.get("paging")), "yes" if p.get("pre_fault_memory") else "no", mods,
            "; EMULATED host (QEMU TCG): times are emulation" if p.get("emulated") is True else ""))
        row("paging-relevant KVM parameters", ", ".join(paging_params(e)))
        row("THP enabled / defrag", "%s / %s" % (s("thp_enabled"), s("thp_defrag")))
        row("hugetlb pools", ", ".join("%s: %s" % (jq_text(h.get("size")), jq_text(h.get("nr_hugepages")))
                                       for h in e.get("hugetlb_pools") or []))
        gib = 1073741824

        def tenth(b):
            # jq: . / 1073741824 * 10 | round / 10
            x = float(b or 0) / gib * 10
            r = float(int(x + 0.5)) if x >= 0 else -float(int(-x + 0.5))
            return jq_num(r / 10)

        row("MemAvailable / MemTotal", "%s / %s GiB" % (tenth(e.get("mem_available_bytes")), tenth(e.get("mem_total_bytes"))))
        row("minivmm", "%s, source %s, guest ABI %s" % (s("minivmm_version"), s("source_revision"), s("guest_abi")))
        row("minivmm command line (this record)", " ".join(e.get("command_line") or []))
        row("minivmm start time", s("start_time"))
    else:
        lines.append("| environment record | missing: %s has no .environment | bench |" % source_name)
    for k, v in facts:
        lines.append("| %s | %s | bench |" % (k, v.replace("|", "\\|")))
    if isinstance(env, dict):
        lines += ["", "<details><summary>minivmm's whole environment record</summary>", "",
                  "| field | value |", "|---|---|"]
        for path, v in _scalar_paths(env):
            lines.append("| %s | %s |" % (".".join(path), _md(v)))
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"
