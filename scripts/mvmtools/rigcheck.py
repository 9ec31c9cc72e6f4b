"""The rigs' verdicts (tests/rig/check): the cases of tests/rig/cases, judged from
the files tests/rig/run cut out of the console log: minivmm's exit statuses and
messages and KVM's counters, never clocks. Ends with the counter table of the
flat cases.
  tests/rig/check RIG VENDOR CONSOLE.log OUT-DIR [EMULATOR-SECONDS]

Every assertion on minivmm's results JSON is a named function below (they were
jq filters); CHECKS, EXPECTS and OTHER_CHECKS name every verdict, so lab-check
can tell whether an answer's "rig check: NAME" exists (check_names()).
Comparisons keep jq's semantics where a member may be missing: a missing
counter is null, null sorts below every number, and `x // 0` is 0 for null.
"""
import json
import os
import re

from .numtext import jq_text
from .results import table_rows

# --- jq's order and the members the checks read -----------------------------


def _rank(v):
    if v is None:
        return 0
    if v is False:
        return 1
    if v is True:
        return 2
    if isinstance(v, (int, float)):
        return 3
    if isinstance(v, str):
        return 4
    if isinstance(v, list):
        return 5
    return 6


def _cmp(a, b):
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra in (3, 4):
        return -1 if a < b else (1 if a > b else 0)
    return 0 if a == b else (-1 if json.dumps(a, sort_keys=True) < json.dumps(b, sort_keys=True) else 1)


def lt(a, b):
    return _cmp(a, b) < 0


def le(a, b):
    return _cmp(a, b) <= 0


def gt(a, b):
    return _cmp(a, b) > 0


def ge(a, b):
    return _cmp(a, b) >= 0


def alt(v, default):
    """jq's v // default."""
    return default if v is None or v is False else v


def member(obj, key):
    return obj.get(key) if isinstance(obj, dict) else None


def phase_stats(doc, name):
    """The stats of timeline phase NAME: None when it has none, MISSING when the run
    did not reach the phase."""
    for p in doc.get("timeline") or []:
        if isinstance(p, dict) and p.get("phase") == name:
            return p.get("stats")
    return MISSING


class _Missing:
    """A phase the run never reached (jq: an empty stream)."""

    def get(self, key, default=None):
        return default


MISSING = _Missing()


def first(doc):
    """KVM's counters over the first flat pass (workload_start -> first_useful_work)."""
    return phase_stats(doc, "first_useful_work")


def warm(doc):
    """... and over the warm pass (-> workload_end)."""
    return phase_stats(doc, "workload_end")


def pages(doc):
    """4 KiB pages the first iteration touched (its table rows), None if none."""
    p = [r.get("pages") for r in table_rows(doc.get("sweep")) if r.get("iteration") == 1]
    p = [x for x in p if x is not None]
    return sum(p) if p else None


def first_ran(doc):
    """The first pass ran and was measured (a crashed run has no such phase)."""
    return isinstance(first(doc), dict) and gt(pages(doc), 0)


def fget(doc, key):
    s = first(doc)
    return s.get(key) if isinstance(s, dict) else None


def tdp_mapped(doc):
    """Bytes the two-dimensional page table maps at the first pass."""
    return alt(fget(doc, "pages_4k"), 0) * 4096 + alt(fget(doc, "pages_2m"), 0) * 2097152


def demand_records(doc):
    return [r for r in doc.get("sweep") or [] if r.get("guest_mapping") == "demand"]


def strategy(doc):
    return alt(member(doc.get("eager"), "strategy"), "none")


def cfg(doc, key):
    return member(doc.get("config"), key)


def eager(doc, key):
    return member(doc.get("eager"), key)


# --- the checks on one case's JSON: (name, case, what, predicate) --------------
def _platform_is(vendor):
    return lambda d: (member(d.get("platform"), "kvm") == vendor and member(d.get("platform"), "paging") == "tdp"
                      and member(d.get("platform"), "pre_fault_memory") not in (None, False))


def _auto_prefault(d):
    pt = eager(d, "per_thread") or []
    return (eager(d, "requested") == "auto" and eager(d, "strategy") == "prefault"
            and bool(pt) and member(pt[0], "prefault_bytes") == cfg(d, "mem_bytes"))


def _uffd_first_pass(d):
    """The first pass's userfaultfd faults: (faults, KVM's pf_taken) of that phase, or (None, None)."""
    for ph in member(d.get("paging"), "per_phase") or []:
        if isinstance(ph, dict) and ph.get("phase") == "first_useful_work":
            return ph.get("faults"), ph.get("kvm_pf_taken")
    return None, None


def _uffd_demand(d):
    p = d.get("paging") if isinstance(d.get("paging"), dict) else {}
    faults, pf = _uffd_first_pass(d)
    n = pages(d)
    return (first_ran(d) and p.get("mode") == "uffd" and p.get("uffd_mode") == "missing"
            and p.get("resolve_ioctl") == "UFFDIO_COPY" and ge(faults, n) and le(faults, n * 1.1 + 64)
            and ge(pf, faults * 0.9 if isinstance(faults, (int, float)) else None))


def _restored_pages(d):
    """Pages flat's first pass after a restore (its iteration 2) wrote, None if none."""
    p = [r.get("pages") for r in table_rows(d.get("sweep")) if r.get("iteration") == 2]
    p = [x for x in p if x is not None]
    return sum(p) if p else None


def _restored(d, mode):
    r = d.get("restore") if isinstance(d.get("restore"), dict) else {}
    return (r.get("mode") == mode and isinstance(first(d), dict) and gt(_restored_pages(d), 0)
            and member(d.get("exit"), "status") == 0)


def _restore_populate(d):
    """populate with KVM_PRE_FAULT_MEMORY: the first pass after the restore takes no NPT/EPT fault."""
    return (_restored(d, "populate") and member(d.get("platform"), "pre_fault_memory") is True
            and alt(fget(d, "pf_taken"), 0) == 0 and ge(tdp_mapped(d), _restored_pages(d) * 4096))


def _restore_uffd(d):
    """uffd: one handler fault per page the first pass after the restore writes, each a KVM fault."""
    p = d.get("paging") if isinstance(d.get("paging"), dict) else {}
    faults, pf = _uffd_first_pass(d)
    n = _restored_pages(d)
    return (_restored(d, "uffd") and p.get("uffd_mode") == "missing" and p.get("faults") == p.get("pages_touched")
            and ge(faults, n) and le(faults, n * 1.1 + 64 if isinstance(n, (int, float)) else None)
            and ge(pf, faults * 0.9 if isinstance(faults, (int, float)) else None))


def _backing_4k(d):
    return cfg(d, "backing") == "anon" and cfg(d, "backing_page_bytes") == 4096


def _resident_all(d):
    return eager(d, "resident_bytes_after") == cfg(d, "mem_bytes")


def _lazy_warm(d):
    w = warm(d)
    return first_ran(d) and isinstance(w, dict) and le(alt(w.get("pf_taken"), 0), pages(d) / 100)


def _sweep_records(d):
    dem = demand_records(d)
    return len(d.get("sweep") or []) == 12 and len(dem) > 0 and all(r.get("guest_faults") == r.get("pages") for r in dem)


def _prefault_per_vcpu(d):
    pt = eager(d, "per_thread")
    if not isinstance(pt, list) or len(pt) != 2:
        return False
    return all(gt(member(t, "prefault_calls"), 0) for t in pt)


def _firmware_natively(d):
    s = phase_stats(d, "firmware_ready")
    if s is MISSING:
        return False
    return gt(member(s, "pf_taken"), 0) and lt(member(s, "insn_emulation"), 100)


def _io_exits(d):
    total = 0
    for p in d.get("timeline") or []:
        total += alt(member(p.get("stats"), "io_exits"), 0)
    return gt(total, 0)


def _sum_jq(values):
    """jq's add: nulls are skipped, an empty or all-null list is null."""
    vs = [v for v in values if v is not None]
    return sum(vs) if vs else None


def _sweep_thp(d):
    dem = demand_records(d)
    if not dem:
        return False
    pf = _sum_jq([member(r.get("kvm"), "pf_taken") for r in dem])
    pg = _sum_jq([r.get("pages") for r in dem])
    return lt(pf, pg / 10 if pg is not None else None)


def _raw_touch(d):
    s = phase_stats(d, "vm_exit")
    if s is MISSING:
        return False
    pf = member(s, "pf_taken")
    return ge(pf, 4096) and le(pf, 4400) and lt(member(s, "insn_emulation"), 100)


# --- background prefault (--eager=background:prefault): spare vCPUs, counters ---

BG_CASES = ("bg-prefault", "bg-prefault-frontier")
BG_SLACK = 0.02  # of lazy's faults, for the TSC anchor's error on the emulated clocks


def covered(doc):
    """The fraction of the guest's first pass eager populated before the guest got
    there (results: eager.covered_first, a lower bound from both frontiers), or None."""
    return member(member(doc.get("eager"), "covered_first"), "fraction")


def bg_bound(lazy_pf, c):
    """What the first pass may take at most: lazy's faults less the part covered first."""
    return lazy_pf * (1 - c) + BG_SLACK * lazy_pf + 16


def _pct(x):
    return "-" if x is None else "%.1f%%" % (100 * x)


def _bg_auto(d):
    return (eager(d, "requested") == "auto" and eager(d, "strategy") == "prefault" and eager(d, "background") is True
            and eager(d, "spare_vcpus") == [cfg(d, "vcpus")])


def _bg_spare(d):
    pt = eager(d, "per_thread") or []
    return (first_ran(d) and eager(d, "background") is True and eager(d, "strategy") == "prefault" and len(pt) == 1
            and member(pt[0], "prefault_vcpu") == cfg(d, "vcpus") and gt(member(pt[0], "prefault_calls"), 0)
            and member(pt[0], "prefault_bytes") == member(pt[0], "done_bytes") and gt(member(pt[0], "done_bytes"), 0)
            and "eager_done" not in [p.get("phase") for p in d.get("timeline") or []]
            and covered(d) is not None)
# --- --numa: placement (the audit's counts) and pinning (each thread's CPU) ----------
def cpulist(text):
    """The CPUs of a sysfs list ("0-3,8") as a set; None for anything else."""
    if not isinstance(text, str):
        return None
    out = set()
    for part in text.split(","):
        if part == "":
            continue
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return None
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def numa(d, key):
    return member(d.get("numa"), key)


def numa_nodes(d):
    n = numa(d, "nodes")
    return n if isinstance(n, list) else []


def local_fraction(node):
    return member(member(node, "audit"), "local_fraction")


def _all_local(d, when, nodes=2):
    ns = numa_nodes(d)
    return (numa(d, "audited") == when and len(ns) == nodes
            and all(ge(local_fraction(n), 0.99) for n in ns))


def _pinned(d, nodes=2):
    """Every vCPU thread and eager thread ran inside its node's CPUs, with exactly
    those CPUs as its affinity."""
    ns = numa_nodes(d)
    if len(ns) != nodes:
        return False
    cpus = [cpulist(member(n, "cpus")) for n in ns]
    if any(not c for c in cpus):
        return False
    threads = [(t, t.get("node")) for t in numa(d, "vcpu_threads") or [] if isinstance(t, dict)]
    threads += [(t, t.get("node")) for t in eager(d, "per_thread") or [] if isinstance(t, dict)]
    if not threads:
        return False
    for t, k in threads:
        if not isinstance(k, int) or not 0 <= k < nodes or cpulist(t.get("allowed")) != cpus[k]:
            return False
        if t.get("cpu") not in cpus[k] or t.get("cpu_end", t.get("cpu")) not in cpus[k]:
            return False
    return True


def _remote_counts(d):
    """One thread pinned to node 0 populated both ranges under first touch: node 0's
    pages all on host node 0, and node 1's too (none local)."""
    ns = numa_nodes(d)
    if len(ns) != 2 or numa(d, "mbind") is not False:
        return False
    a0, a1 = member(ns[0], "audit"), member(ns[1], "audit")
    h0 = str(member(ns[0], "host_node"))
    pt = eager(d, "per_thread") or []
    return (len(pt) == 1 and member(pt[0], "nodes") == 2 and ge(local_fraction(ns[0]), 0.99)
            and member(a1, "local") == 0 and gt(member(a1, "present"), 0)
            and member(member(a1, "on_nodes"), h0) == member(a1, "present")
            and member(a0, "present") == member(a0, "sampled"))


def _remote_bind(d):
    pt = eager(d, "per_thread") or []
    return (numa(d, "mbind") is True and len(pt) == 1 and member(pt[0], "nodes") == 2
            and _all_local(d, "after_eager"))


def _touch_local(d):
    """The guest's touch pass, each vCPU on its own node's range (from the boot info),
    first touch by pinned vCPU threads: local, audited at the end."""
    ns = numa_nodes(d)
    return (_all_local(d, "at_exit") and numa(d, "mbind") is False
            and all(ge(member(member(n, "audit"), "present"), member(member(n, "audit"), "sampled") * 0.99)
                    for n in ns))


def _auto_one_vcpu(d):
    hn = numa(d, "host_nodes")
    return (_all_local(d, "after_eager", nodes=1) and isinstance(hn, int)
            and numa(d, "nodes_left_out") == hn - 1 and _pinned(d, nodes=1))


# --- the Linux guest (make linux-guest; run_linux cases, the tdp rig) -----------------
LINUX_CASES = ("linux-hello", "linux-lazy", "linux-prefault", "linux-smp")
LINUX_PREFAULT_MAX = 0.1  # of lazy's first-pass faults: prefault saves >= 90%


def phase_index(doc, name):
    """Where phase NAME is in the timeline, None when the run did not reach it."""
    for i, p in enumerate(doc.get("timeline") or []):
        if isinstance(p, dict) and p.get("phase") == name:
            return i
    return None


def phase_member(doc, name, key):
    for p in doc.get("timeline") or []:
        if isinstance(p, dict) and p.get("phase") == name:
            return p.get(key)
    return None


def _reached_init(d):
    """The kernel ran /init (the boot-timer write): init_start after guest_entry, with counters."""
    i, e = phase_index(d, "init_start"), phase_index(d, "guest_entry")
    return i is not None and e is not None and e < i and isinstance(phase_stats(d, "init_start"), dict)


def _init_before_work(d):
    i, w = phase_index(d, "init_start"), phase_index(d, "first_useful_work")
    return (_reached_init(d) and w is not None and i < w
            and le(phase_member(d, "init_start", "end_ms"), phase_member(d, "first_useful_work", "end_ms")))


def _linux_flat(d):
    """flat's records arrived from Linux user space: one per size and pass, the first pass faulted."""
    recs = [r for r in d.get("sweep") or [] if r.get("workload") == "flat"]
    return first_ran(d) and len(recs) > 0 and all(gt(r.get("pages"), 0) for r in recs)


def checks(vendor):
    """Every check of a case's JSON: (name, case, what it asserts, predicate)."""
    return [
        ("platform-json", "platform", "platform is %s, tdp paging, KVM_PRE_FAULT_MEMORY" % vendor, _platform_is(vendor)),
        ("auto-chooses-prefault", "auto", "--eager=auto resolved to prefault over all of RAM", _auto_prefault),
        ("lazy-4k-backing", "lazy", "anon backing, 4 KiB pages", _backing_4k),
        ("lazy-first-pass-faults-every-page", "lazy", "first pass pf_taken >= pages",
         lambda d: first_ran(d) and ge(fget(d, "pf_taken"), pages(d))),
        ("lazy-warm-pass-no-faults", "lazy", "warm pass pf_taken <= pages / 100", _lazy_warm),
        ("uffd-demand-every-page", "uffd",
         "uffd missing + UFFDIO_COPY: first pass faults pages..1.1 x pages, KVM's pf_taken >= 0.9 x faults",
         _uffd_demand),
        ("restore-populate-prefault-no-faults", "restore-populate",
         "--restore-mode populate with KVM_PRE_FAULT_MEMORY: the first pass after the restore takes pf_taken 0",
         _restore_populate),
        ("restore-uffd-one-fault-per-page", "restore-uffd",
         "--restore-mode uffd: first pass faults pages..1.1 x pages, each one a KVM fault (pf_taken >= 0.9 x faults)",
         _restore_uffd),
        ("populate-resident", "populate", "eager made all of RAM resident", _resident_all),
        ("populate-still-faults", "populate", "first pass pf_taken >= pages",
         lambda d: first_ran(d) and ge(fget(d, "pf_taken"), pages(d))),
        ("prefault-first-pass-no-faults", "prefault", "prefault ran and the first pass took no faults",
         lambda d: first_ran(d) and alt(fget(d, "pf_taken"), 0) == 0 and strategy(d) == "prefault"),
        ("prefault-maps-all-memory", "prefault", "EPT/NPT maps all of RAM at the first pass",
         lambda d: first_ran(d) and ge(tdp_mapped(d), cfg(d, "mem_bytes"))),
        ("prefault-resident", "prefault", "eager made all of RAM resident", _resident_all),
        ("thp-faults-in-2m-units", "thp", "2 MiB mappings, pf_taken < pages / 100",
         lambda d: first_ran(d) and gt(fget(d, "pages_2m"), 0) and lt(alt(fget(d, "pf_taken"), 0), pages(d) / 100)),
        ("thp-prefault-no-faults", "thp-prefault", "first pass pf_taken 0",
         lambda d: first_ran(d) and alt(fget(d, "pf_taken"), 0) == 0),
        ("thp-prefault-maps-2m", "thp-prefault", "2 MiB mappings over all of RAM",
         lambda d: first_ran(d) and gt(fget(d, "pages_2m"), 0) and ge(tdp_mapped(d), cfg(d, "mem_bytes"))),
        ("sweep-records", "sweep", "12 records; every demand record: guest_faults == pages", _sweep_records),
        ("smp-prefault-per-vcpu", "smp", "two eager threads, each with KVM_PRE_FAULT_MEMORY calls", _prefault_per_vcpu),
        # The lab's EPT/NPT answers (docs/lab/answers.md names these checks).
        ("firmware-runs-natively", "platform", "firmware_ready: pf_taken > 0, insn_emulation < 100", _firmware_natively),
        ("hypercalls-are-io-exits", "platform", "io_exits over the timeline > 0", _io_exits),
        ("sweep-thp-2m-npt-faults", "sweep-thp", "demand records' pf_taken < pages / 10", _sweep_thp),
        ("raw-touch-npt-faults", "raw-touch", "vm_exit: 4096 <= pf_taken <= 4400, insn_emulation < 100", _raw_touch),
        # Background prefault: KVM_PRE_FAULT_MEMORY on a spare vCPU while vCPU 0 runs.
        ("bg-auto-chooses-prefault", "bg-auto", "--eager=background resolved to prefault, one spare vCPU", _bg_auto),
        ("bg-prefault-spare-vcpu", "bg-prefault",
         "one thread prefaulting all it populated through spare vCPU 1, no eager_done phase, coverage known",
         _bg_spare),
        ("bg-prefault-frontier-spare-vcpu", "bg-prefault-frontier",
         "one thread prefaulting all it populated through spare vCPU 1, no eager_done phase, coverage known",
         lambda d: _bg_spare(d) and eager(d, "order") == "frontier"),
        ("numa-auto-one-vcpu-local", "numa-auto-one-vcpu",
         "one node (the others left out: one vCPU), >= 99% local, threads pinned", _auto_one_vcpu),
        ("numa-bind-local", "numa-bind", "2 nodes, each >= 99% of its pages on its node after eager",
         lambda d: _all_local(d, "after_eager") and numa(d, "mbind") is True),
        ("numa-bind-pinned", "numa-bind", "every vCPU and eager thread on its node's CPUs, affinity = the node's cpulist",
         _pinned),
        ("numa-first-touch-local", "numa-first-touch", "no mbind, pinned threads: 2 nodes >= 99% local",
         lambda d: _all_local(d, "after_eager") and numa(d, "mbind") is False and _pinned(d)),
        ("numa-remote-first-touch", "numa-remote",
         "one thread on node 0: node 1's pages all on host node 0, node 0's local", _remote_counts),
        ("numa-remote-bind-local", "numa-remote-bind", "one thread on node 0, mbind: both nodes >= 99% local",
         _remote_bind),
        ("numa-touch-local", "numa-touch", "the guest's touch pass on each vCPU's node: >= 99% local at exit",
         _touch_local),
        # The Linux guest: Debian's kernel to /init, flat's records from user space.
        ("linux-reaches-init", "linux-hello", "init_start (the boot-timer write) after guest_entry, with counters",
         _reached_init),
        ("linux-init-before-first-useful-work", "linux-lazy", "init_start before first_useful_work",
         _init_before_work),
        ("linux-flat-records", "linux-lazy", "flat's records from Linux user space, the first pass measured",
         _linux_flat),
        ("linux-lazy-first-pass-faults", "linux-lazy", "first pass pf_taken > 0",
         lambda d: first_ran(d) and gt(fget(d, "pf_taken"), 0)),
        ("linux-smp-reaches-init", "linux-smp", "init_start with --vcpus 2", lambda d: _reached_init(d) and cfg(d, "vcpus") == 2),
    ]


# Cases that need two NUMA nodes (run_numa in tests/rig/cases): skipped on a rig with one.
NUMA_CASES = ("numa-bind", "numa-first-touch", "numa-remote", "numa-remote-bind", "numa-touch", "numa-too-big",
              "numa-too-few-vcpus")


# Exit statuses and what minivmm said: (case, status, stderr regular expression).
EXPECTS = [(c, 0, "") for c in ("platform", "auto", "lazy", "uffd", "populate", "prefault", "thp", "thp-prefault", "sweep",
                                 "smp", "demand-1k", "demand-2k", "sweep-thp", "raw-touch", "numa-auto-one-vcpu",
                                 "numa-bind", "numa-first-touch", "numa-remote", "numa-remote-bind",
                                 "numa-touch", "bg-auto", "bg-prefault", "bg-prefault-frontier",
                                 "snap", "restore-populate", "restore-uffd")] + [
    ("exit-status", 1, "guest exited with status 7"),
    ("fault", 4, "page fault.*fault address 0x40000000000"),
    ("ud2", 4, r"guest aborted on vCPU 0: unhandled exception 6 \(#UD invalid opcode\)"),
    ("triple", 4, "guest crashed on vCPU 0: triple fault.*KVM_EXIT_SHUTDOWN.*rip=0x"),
    ("hlt", 4, "guest stopped on vCPU 0:.*HLT.*rip=0x"),
    ("bad-hypercall-pointer", 4, "guest ABI violation.*0xfffff000 are outside guest RAM"),
    ("bad-hypercall-number", 4, "guest ABI violation.*unknown hypercall number 77"),
    ("raw", 1, "guest exited with status 7"),
    ("numa-too-big", 3, r"--numa: node 1 cannot hold its 1024 MiB of guest RAM: it has [0-9]+ MiB free"),
    ("numa-too-few-vcpus", 2, r"--numa=0,1: 2 nodes need at least 2 vCPUs"),
    # hello --exit 7 in the Linux guest: /init's MVM_HC_EXIT carries the workload's status.
    ("linux-hello", 1, "guest exited with status 7"),
] + [(c, 0, "") for c in ("linux-lazy", "linux-prefault", "linux-smp")]

# Verdicts that are neither an exit status nor a check of one case's JSON.
OTHER_CHECKS = ["kvm-modules", "kvm-tdp-on", "raw-prints", "platform-line", "auto-says-prefault",
                "demand-one-npt-fault-per-fault", "numa-nodes", "numa-guest-sees-nodes", "numa-line",
                "bg-auto-says-prefault", "bg-prefault-faults-below-lazy", "bg-prefault-frontier-faults-below-lazy",
                "linux-prefault-saves-90pct", "linux-smp-sees-2-cpus"]

# The order of the verdicts after the exit statuses and the console lines.
JSON_ORDER = ["platform-json", "auto-chooses-prefault", "auto-says-prefault", "lazy-4k-backing",
              "lazy-first-pass-faults-every-page", "lazy-warm-pass-no-faults", "uffd-demand-every-page",
              "restore-populate-prefault-no-faults", "restore-uffd-one-fault-per-page",
              "populate-resident",
              "populate-still-faults", "prefault-first-pass-no-faults", "prefault-maps-all-memory", "prefault-resident",
              "thp-faults-in-2m-units", "thp-prefault-no-faults", "thp-prefault-maps-2m", "sweep-records",
              "smp-prefault-per-vcpu", "firmware-runs-natively", "hypercalls-are-io-exits",
              "demand-one-npt-fault-per-fault", "sweep-thp-2m-npt-faults", "raw-touch-npt-faults",
              "numa-auto-one-vcpu-local", "numa-bind-local", "numa-bind-pinned", "numa-line", "numa-guest-sees-nodes",
              "numa-first-touch-local", "numa-remote-first-touch", "numa-remote-bind-local", "numa-touch-local",
              "bg-auto-chooses-prefault", "bg-auto-says-prefault", "bg-prefault-spare-vcpu",
              "bg-prefault-faults-below-lazy", "bg-prefault-frontier-spare-vcpu",
              "bg-prefault-frontier-faults-below-lazy", "linux-reaches-init", "linux-init-before-first-useful-work",
              "linux-flat-records", "linux-lazy-first-pass-faults", "linux-prefault-saves-90pct",
              "linux-smp-reaches-init", "linux-smp-sees-2-cpus"]

FLAT_CASES = ("lazy", "uffd", "populate", "prefault", "thp", "thp-prefault")
PER_FAULT_COUNTERS = ("pf_taken", "exits", "insn_emulation", "mmu_pte_write")


def check_names():
    """Every verdict this module can give (the names lab answers may cite)."""
    return sorted(set([c for c, _, _ in EXPECTS] + [n for n, _, _, _ in checks("vendor")] + OTHER_CHECKS))


def _read(path, limit=None):
    try:
        with open(path, "rb") as f:
            data = f.read() if limit is None else f.read(limit)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def _head_lines(path, n):
    t = _read(path)
    return "" if t is None else "\n".join(t.split("\n")[:n]).rstrip("\n")


def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _any_line(path, pattern):
    t = _read(path)
    return t is not None and any(re.search(pattern, line) for line in t.split("\n"))


class Judge:
    def __init__(self, rig, vendor, log, outdir):
        self.rig, self.vendor, self.log, self.d = rig, vendor, log, outdir
        self.passed = self.failed = self.skipped = 0
        self.lines = []
        self.console = (_read(log) or "").split("\n")
        self.skips = {}
        for line in self.console:
            m = re.match(r"=== SKIP ([^ ]+) (.*)", line)
            if m:
                self.skips[m.group(1)] = m.group(2)

    def ok(self, name):
        self.lines.append("PASS %s/%s" % (self.rig, name))
        self.passed += 1

    def no(self, name, why):
        self.lines.append("FAIL %s/%s: %s" % (self.rig, name, why))
        self.failed += 1

    def skip(self, name, case):
        """True (and a SKIP line) when the rig skipped CASE (run_numa on one node)."""
        if case not in self.skips:
            return False
        self.lines.append("SKIP %s/%s: %s" % (self.rig, name, self.skips[case]))
        self.skipped += 1
        return True

    def status(self, case):
        for line in self.console:
            m = re.match(r"=== STATUS %s ([0-9]*)" % re.escape(case), line)
            if m:
                return m.group(1)
        return ""

    def path(self, case, ext):
        return os.path.join(self.d, case + ext)

    def expect(self, case, want, err_re):
        if self.skip(case, case):
            return
        got = self.status(case)
        err = (_read(self.path(case, ".err"), 400) or "").rstrip("\n")
        if got != str(want):
            self.no(case, "exit %s, expected %d: %s" % (got or "missing", want, err))
        elif err_re and not _any_line(self.path(case, ".err"), err_re):
            self.no(case, "stderr does not match /%s/: %s" % (err_re, err))
        else:
            self.ok(case)

    def check(self, name, case, what, pred):
        if self.skip(name, case):
            return
        doc = _load(self.path(case, ".json"))
        try:
            good = doc is not None and bool(pred(doc))
        except (TypeError, KeyError, AttributeError, ZeroDivisionError, IndexError):
            good = False
        if good:
            self.ok(name)
        else:
            self.no(name, "%s.json: not %s%s" % (case, what, "" if doc is not None else " (no readable JSON)"))

    def auto_says_prefault(self):
        out = self.path("auto", ".out")
        if _any_line(out, "^" + re.escape("eager: prefault (MADV_POPULATE_WRITE + KVM_PRE_FAULT_MEMORY) [auto]")):
            self.ok("auto-says-prefault")
        else:
            self.no("auto-says-prefault", "\n".join(ln for ln in (_read(out) or "").split("\n") if "eager" in ln))

    def bg_says_prefault(self):
        out = self.path("bg-auto", ".out")
        line = "eager: background prefault (MADV_POPULATE_WRITE + KVM_PRE_FAULT_MEMORY) [auto], order front, 1 thread"
        if _any_line(out, "^" + re.escape(line)):
            self.ok("bg-auto-says-prefault")
        else:
            self.no("bg-auto-says-prefault", "\n".join(ln for ln in (_read(out) or "").split("\n") if "eager" in ln))

    def bg_below_lazy(self, case):
        """The first pass with background prefault faults at most lazy's faults less the
        fraction eager covered first (a lower bound from both frontiers), with a slack."""
        name = case + "-faults-below-lazy"
        lazy, bg = _load(self.path("lazy", ".json")), _load(self.path(case, ".json"))
        try:
            lp, bp, c = fget(lazy, "pf_taken"), fget(bg, "pf_taken"), covered(bg)
            good = first_ran(lazy) and first_ran(bg) and c is not None and bp <= bg_bound(lp, c)
        except (TypeError, AttributeError):
            good, lp, bp, c = False, None, None, None
        if good:
            self.ok(name)
        else:
            self.no(name, "%s.json: first-pass pf_taken %s, lazy's %s, covered first %s: want pf_taken <= lazy x (1 - "
                    "covered) + %g x lazy + 16" % (case, bp, lp, c, BG_SLACK))
    def linux_prefault(self):
        """--eager=prefault against lazy on the Linux guest's first flat pass: pf_taken falls by >= 90%."""
        name = "linux-prefault-saves-90pct"
        if self.skip(name, "linux-prefault"):
            return
        lazy, pre = _load(self.path("linux-lazy", ".json")), _load(self.path("linux-prefault", ".json"))
        try:
            lp, pp = fget(lazy, "pf_taken"), fget(pre, "pf_taken")
            good = (first_ran(lazy) and first_ran(pre) and strategy(pre) == "prefault" and lp > 0
                    and alt(pp, 0) <= LINUX_PREFAULT_MAX * lp)
        except (TypeError, AttributeError):
            good, lp, pp = False, None, None
        if good:
            self.ok(name)
        else:
            self.no(name, "first flat pass pf_taken: lazy %s, prefault %s (want prefault <= %g x lazy)"
                    % (lp, pp, LINUX_PREFAULT_MAX))

    def linux_smp_cpus(self):
        name = "linux-smp-sees-2-cpus"
        if self.skip(name, "linux-smp"):
            return
        out = self.path("linux-smp", ".out")
        if _any_line(out, r"CPUs online 2$"):
            self.ok(name)
        else:
            self.no(name, "linux-smp.out has no 'CPUs online 2': %s" % _head_lines(out, 12))

    def linux_cases_run(self):
        """The Linux cases of the console log in its order: the four, and repeats
        of them (RIG_CASES lines named linux-hello-2 and so on), each once."""
        seen = []
        for line in self.console:
            m = re.match(r"=== CASE (linux-[^ :]+):", line)
            if m and m.group(1) not in seen:
                seen.append(m.group(1))
        return seen or list(LINUX_CASES)

    def linux_table(self):
        """The Linux boots: to /init (emulated wall time) and KVM's counters, the first flat pass."""
        docs = [(c, _load(self.path(c, ".json"))) for c in self.linux_cases_run()]
        docs = [(c, d) for c, d in docs if d is not None and phase_index(d, "init_start") is not None]
        if not docs:
            return
        self.lines += ["", "%s: the Linux guest (Debian's kernel under minivmm under the emulated KVM; times are "
                       "emulation times, ms): boot = guest_entry -> init_start" % self.rig]
        fmt = "%-17s %9s %9s %8s %8s %8s %9s %10s %9s"
        self.lines.append(fmt % ("case", "to_init", "boot", "exits", "io_exits", "pf_taken", "insn_emul",
                                 "first_pf", "first_ms"))
        for c, d in docs:
            s = phase_stats(d, "init_start")
            ge_ms, in_ms = phase_member(d, "guest_entry", "end_ms"), phase_member(d, "init_start", "end_ms")

            def g(k):
                return jq_text(alt(member(s, k) if isinstance(s, dict) else None, 0))

            boot = "-" if ge_ms is None or in_ms is None else "%.0f" % (in_ms - ge_ms)
            fp = fget(d, "pf_taken")
            fms = phase_member(d, "first_useful_work", "dur_ms")
            self.lines.append(fmt % (c, "-" if in_ms is None else "%.0f" % in_ms, boot, g("exits"), g("io_exits"),
                                     g("pf_taken"), g("insn_emulation"), "-" if fp is None else jq_text(fp),
                                     "-" if fms is None else "%.0f" % fms))
        for c, d in docs:
            s = phase_stats(d, "init_start")
            if isinstance(s, dict):
                why = ", ".join("%s %s" % (k, jq_text(v)) for k, v in sorted(s.items()) if k.endswith("exits"))
                self.lines.append("%s: exits during boot (exec -> init_start): %s" % (c, why or "-"))
            dev = d.get("devices") if isinstance(d.get("devices"), dict) else {}
            seen = [(k, dev.get(k)) for k in ("console_bytes", "com1_irqs", "cmos_reads", "boot_timer_writes")
                    if isinstance(dev.get(k), (int, float))]
            pio = member(dev.get("unclaimed_pio"), "count")
            if seen or pio is not None:
                self.lines.append("%s: devices over the run: %s" % (c, ", ".join(
                    ["%s %s" % (k, jq_text(v)) for k, v in seen] + ([] if pio is None else ["unclaimed_pio %s" % jq_text(pio)]))))

    def numa_nodes_seen(self):
        """The kernel sees as many NUMA nodes as the emulator has (init's === NUMA line)."""
        line = next((x for x in self.console if x.startswith("=== NUMA ")), "")
        m = re.match(r"=== NUMA expected=([0-9]+) seen=([0-9]+)", line)
        if m and m.group(1) == m.group(2):
            self.ok("numa-nodes")
        else:
            self.no("numa-nodes", line or "no === NUMA line in %s" % self.log)

    def numa_guest_sees_nodes(self):
        """hello printed the /numa nodes of the boot info, as the results describe them."""
        name = "numa-guest-sees-nodes"
        if self.skip(name, "numa-bind"):
            return
        d = _load(self.path("numa-bind", ".json"))
        out = _read(self.path("numa-bind", ".out")) or ""
        want = []
        for k, n in enumerate(numa_nodes(d) if d else []):
            try:
                want.append("numa: node %d: [0x%x, 0x%x) %d MiB, vCPUs %d-%d, host node %d, %s"
                            % (k, n["gpa"], n["gpa"] + n["bytes"], n["bytes"] >> 20, n["vcpu_first"],
                               n["vcpu_first"] + n["vcpus"] - 1, n["host_node"], numa(d, "policy")))
            except (KeyError, TypeError):
                want = []
                break
        lines = out.split("\n")
        if len(want) == 2 and all(w in lines for w in want):
            self.ok(name)
        else:
            self.no(name, "numa-bind.out lacks %s; it has: %s"
                    % (want or "(no nodes in numa-bind.json)", [x for x in lines if x.startswith("numa")]))

    def numa_line(self):
        """The report's line after eager's: the placement per node, in percent."""
        name = "numa-line"
        if self.skip(name, "numa-bind"):
            return
        out = self.path("numa-bind", ".out")
        pat = r"^  node [01]: host node [01], CPUs [01], vCPU [01], .*: [0-9]+ of [0-9]+ pages on node [01], (99|100)\.[0-9]% local$"
        t = _read(out) or ""
        if sum(1 for x in t.split("\n") if re.match(pat, x)) == 2 and _any_line(out, r"^numa: bind .*, 2 nodes of 2"):
            self.ok(name)
        else:
            self.no(name, "\n".join(x for x in t.split("\n") if x.startswith("numa") or x.startswith("  node")))

    def per_fault(self):
        """One more guest fault: (demand 2048 - demand 1024) / 1024 over workload_end."""
        a, b = _load(self.path("demand-1k", ".json")), _load(self.path("demand-2k", ".json"))
        name = "demand-one-npt-fault-per-fault"
        pf = None
        try:
            x, y = warm(a), warm(b)
            pf = {c: (y[c] - x[c]) / 1024 for c in PER_FAULT_COUNTERS}
            good = (0.9 <= pf["pf_taken"] <= 1.1 and pf["exits"] <= 1.1 and pf["insn_emulation"] <= 0.1
                    and pf["mmu_pte_write"] <= 0.1)
        except (TypeError, KeyError, AttributeError):
            good = False
        if good:
            self.ok(name)
        else:
            shown = json.dumps(pf, separators=(",", ":")) if pf else "counters missing from demand-1k/2k.json"
            self.no(name, "per guest fault: %s (expected pf_taken 0.9-1.1, one exit: the EPT/NPT violation, no emulation)"
                    % shown)

    def run(self, took="?"):
        l1 = "\n".join(line for line in self.console if line.startswith("=== L1 "))
        insmod = [line for line in self.console if line.startswith("=== FAIL insmod")]
        if insmod:
            self.no("kvm-modules", "\n".join(insmod))
        else:
            self.ok("kvm-modules")
        if re.search(r"parameters/.*=Y", l1, re.S):
            self.ok("kvm-tdp-on")
        else:
            self.no("kvm-tdp-on", l1 or "no L1 line in %s" % self.log)
        for case, want, err_re in EXPECTS:
            self.expect(case, want, err_re)
        self.numa_nodes_seen()
        if _any_line(self.path("raw", ".out"), r"^hello from a raw guest$"):
            self.ok("raw-prints")
        else:
            self.no("raw-prints", _head_lines(self.path("raw", ".out"), 3))
        if _any_line(self.path("platform", ".out"), "^platform: %s, tdp paging, KVM_PRE_FAULT_MEMORY" % re.escape(self.vendor)):
            self.ok("platform-line")
        else:
            self.no("platform-line", _head_lines(self.path("platform", ".out"), 1))
        cs = {name: (case, what, pred) for name, case, what, pred in checks(self.vendor)}
        for name in JSON_ORDER:
            if name == "auto-says-prefault":
                self.auto_says_prefault()
            elif name == "demand-one-npt-fault-per-fault":
                self.per_fault()
            elif name == "bg-auto-says-prefault":
                self.bg_says_prefault()
            elif name.endswith("-faults-below-lazy"):
                self.bg_below_lazy(name[:-len("-faults-below-lazy")])
            elif name == "numa-guest-sees-nodes":
                self.numa_guest_sees_nodes()
            elif name == "numa-line":
                self.numa_line()
            elif name == "linux-prefault-saves-90pct":
                self.linux_prefault()
            elif name == "linux-smp-sees-2-cpus":
                self.linux_smp_cpus()
            else:
                self.check(name, *cs[name])
        self.table(l1, took)
        self.numa_table()
        self.linux_table()
        self.lines.append("")
        self.lines.append("%s: %d passed, %d failed, %d skipped" % (self.rig, self.passed, self.failed, self.skipped))
        return self.failed == 0 and self.passed > 0

    def bg_table(self, lazy):
        """The background cases against lazy: faults of the first pass, what was covered first."""
        lp = fget(lazy, "pf_taken") if lazy is not None else None
        rows = [(c, _load(self.path(c, ".json"))) for c in BG_CASES]
        rows = [(c, d) for c, d in rows if d is not None]
        if not rows:
            return
        self.lines += ["", "%s: background prefault against lazy, first flat pass (covered: the part of the guest's first "
                       "pass populated before the guest got there, a lower bound; bound: lazy x (1 - covered))" % self.rig]
        fmt = "%-21s %-9s %6s %9s %8s %8s %8s %7s"
        self.lines.append(fmt % ("case", "order", "pages", "pf_taken", "lazy_pf", "covered", "bound", "saved"))
        for c, d in rows:
            bp, cov, pg = fget(d, "pf_taken"), covered(d), pages(d)
            bound = "-" if lp is None or cov is None else jq_text(round(lp * (1 - cov)))
            saved = None if not lp or bp is None else 1 - bp / lp
            self.lines.append(fmt % (c, jq_text(eager(d, "order")), "" if pg is None else jq_text(pg),
                                     jq_text(alt(bp, 0)), jq_text(alt(lp, 0)), _pct(cov), bound, _pct(saved)))

    def table(self, l1, took):
        lazy = _load(self.path("lazy", ".json"))
        what = ""
        if lazy is not None:
            try:
                what = "%s, %s MiB guest" % (" ".join(cfg(lazy, "guest_args")), jq_text(cfg(lazy, "mem_bytes") / 1048576))
            except TypeError:
                what = ""
        self.lines += ["", "%s: KVM's counters of the first flat pass (%s; pages = 4 KiB pages touched)" % (self.rig, what)]
        fmt = "%-13s %-9s %-8s %6s %9s %8s %9s %9s"
        self.lines.append(fmt % ("case", "strategy", "backing", "pages", "pf_taken", "warm_pf", "pages_4k", "pages_2m"))
        for c in FLAT_CASES:
            p = self.path(c, ".json")
            if not os.path.exists(p) or os.path.getsize(p) == 0:
                continue
            d = _load(p)
            if d is None:
                continue
            f, w = first(d), warm(d)

            def g(s, k):
                return jq_text(alt(member(s, k) if isinstance(s, dict) else None, 0))

            pg = pages(d)
            self.lines.append(fmt % (c, strategy(d), jq_text(cfg(d, "backing")), "" if pg is None else jq_text(pg),
                                     g(f, "pf_taken"), g(w, "pf_taken"), g(f, "pages_4k"), g(f, "pages_2m")))
        self.bg_table(lazy)
        l1_first = l1[len("=== L1 "):] if l1.startswith("=== L1 ") else l1
        self.lines.append("(%s: %s; emulator ran %s s; clocks inside are emulation times: see %s/*.out)"
                          % (self.rig, l1_first, took, self.d))

    def numa_table(self):
        docs = []
        for c in ("numa-auto-one-vcpu",) + NUMA_CASES:
            d = _load(self.path(c, ".json"))
            if d is not None and numa_nodes(d):
                docs.append((c, d))
        if not docs:
            return
        numa_line = next((x[len("=== NUMA "):] for x in self.console if x.startswith("=== NUMA ")), "")
        self.lines += ["", "%s: --numa placement after eager (or at exit), counted with move_pages (%s)"
                       % (self.rig, numa_line)]
        self.lines += _numa_table_lines(docs)


def _numa_table_lines(docs):
    """The placement audit of the numa cases: per node, where its sampled pages were."""
    fmt = "%-19s %-11s %-8s %4s %4s %8s %8s %8s %7s"
    out = [fmt % ("case", "policy", "threads", "node", "host", "sampled", "local", "remote", "local%")]
    for case, d in docs:
        pt = eager(d, "per_thread")
        threads = "touch" if strategy(d) == "touch" else (str(len(pt)) if isinstance(pt, list) else "-")
        for k, n in enumerate(numa_nodes(d)):
            a = member(n, "audit")
            if not isinstance(a, dict):
                continue
            lf = a.get("local_fraction")
            out.append(fmt % (case, jq_text(numa(d, "policy")), threads, k, jq_text(member(n, "host_node")),
                              jq_text(a.get("sampled")), jq_text(a.get("local")), jq_text(a.get("remote")),
                              "-" if lf is None else "%.1f" % (100 * lf)))
    return out


def main(argv):
    import sys

    if argv[:1] == ["--names"]:
        print("\n".join(check_names()))
        return 0
    if len(argv) < 4 or argv[0] in ("-h", "--help"):
        print("usage: tests/rig/check RIG VENDOR CONSOLE.log OUT-DIR [EMULATOR-SECONDS]\n"
              "       tests/rig/check --names      (every verdict's name)", file=sys.stderr)
        return 2
    j = Judge(argv[0], argv[1], argv[2], argv[3])
    good = j.run(argv[4] if len(argv) > 4 else "?")
    print("\n".join(j.lines))
    return 0 if good else 1
