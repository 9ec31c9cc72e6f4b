"""Reading minivmm results files (what `minivmm -o FILE` writes).

A file is one run (its members at the top level), or an experiment (--repeat,
--compare): every run under "runs" (with label and warmup) and, per mode, the
aggregate of its measured runs. docs/results.schema.json is the contract; the C
code writes it, this module only reads it.

THE table-row rule lives here (as in vmm/report.c report_table_rec): a row of
the sweep/flat table, one (workload, iteration, size, guest mapping), is the
all-vCPU record (vcpu == "all", written by --parallel) if there is one, else
vCPU 0's. Every tool that reads sweep records takes them through table_rows().
"""
import json
import os

SCHEMA = "minivmm-results"


class ResultsError(Exception):
    """A file that cannot be read as a results file; str() is the one-line reason."""


def read_json(path):
    """The parsed JSON of PATH, or ResultsError saying why not."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise ResultsError("no such file: %s" % path) from None
    except IsADirectoryError:
        raise ResultsError("%s is a directory, not a results file" % path) from None
    except OSError as e:
        raise ResultsError("cannot read %s: %s" % (path, e.strerror or e)) from None
    if not raw.strip():
        raise ResultsError("%s is empty (a run that never wrote its results?)" % path)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ResultsError("%s is not JSON: not UTF-8 at byte %d" % (path, e.start)) from None
    except json.JSONDecodeError as e:
        raise ResultsError("%s is not JSON: %s at line %d column %d" % (path, e.msg, e.lineno, e.colno)) from None


def load(path):
    """The Results of PATH; ResultsError names the problem."""
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ResultsError('%s is JSON but not a minivmm results file (no "schema": "%s")' % (path, SCHEMA))
    return Results(doc, path)


def row_key(rec):
    """What identifies one row of the table: workload, iteration, size, mapping."""
    return (rec.get("workload"), rec.get("iteration"), rec.get("size_mib"), rec.get("guest_mapping"))


def table_rows(records):
    """The records a table shows, one per row_key, in the order rows first appear:
    the all-vCPU record if the row has one, else vCPU 0's (rows with neither are
    left out)."""
    order, chosen = [], {}
    for rec in records or []:
        key = row_key(rec)
        vcpu = rec.get("vcpu")
        if vcpu != "all" and vcpu != 0:
            continue
        if key not in chosen:
            order.append(key)
            chosen[key] = rec
        elif vcpu == "all" and chosen[key].get("vcpu") != "all":
            chosen[key] = rec
    return [chosen[k] for k in order]


class Run:
    """One run's record: a single-run file, or one element of an experiment's runs."""

    def __init__(self, doc, label="run", warmup=False, index=1):
        self.doc = doc
        self.label = doc.get("label", label)
        self.warmup = bool(doc.get("warmup", warmup))
        self.index = doc.get("index", index)

    def get(self, *path, default=None):
        """A nested member (each part a key or list index), default when absent or null."""
        v = self.doc
        for p in path:
            if isinstance(v, dict) and p in v:
                v = v[p]
            elif isinstance(v, list) and isinstance(p, int) and -len(v) <= p < len(v):
                v = v[p]
            else:
                return default
        return default if v is None else v

    @property
    def config(self):
        return self.doc.get("config") or {}

    @property
    def platform(self):
        return self.doc.get("platform") or {}

    @property
    def summary(self):
        return self.doc.get("summary") or {}

    @property
    def exit(self):
        return self.doc.get("exit") or {}

    @property
    def timeline(self):
        return self.doc.get("timeline") or []

    @property
    def sweep(self):
        return self.doc.get("sweep") or []

    def phase(self, name):
        """The timeline entry of phase NAME, or None if the run did not reach it."""
        for p in self.timeline:
            if p.get("phase") == name:
                return p
        return None

    def table_rows(self, workload=None):
        rows = table_rows(self.sweep)
        return [r for r in rows if workload is None or r.get("workload") == workload]

    @property
    def workload(self):
        """What ran: the first guest argument, else the sweep records' workload,
        else the guest image's file name (a --raw or hand-written guest)."""
        args = self.config.get("guest_args") or []
        if args:
            return args[0]
        for rec in self.sweep:
            if rec.get("workload"):
                return rec["workload"]
        guest = self.config.get("guest") or ""
        return os.path.basename(guest) if guest else ""

    @property
    def exit_status(self):
        return self.exit.get("status")

    @property
    def ok(self):
        """The run ended as a measurement should: exit status 0."""
        return self.exit_status == 0


class Results:
    """A whole results file."""

    def __init__(self, doc, path="-"):
        self.doc = doc
        self.path = path
        exp = doc.get("experiment") if isinstance(doc.get("experiment"), dict) else None
        self.kind = exp.get("kind", "repeat") if exp else ("repeat" if "runs" in doc else "run")
        if "runs" in doc and isinstance(doc["runs"], list):
            self.runs = [Run(r, index=i + 1) for i, r in enumerate(doc["runs"]) if isinstance(r, dict)]
        else:
            self.runs = [Run(doc)]

    @property
    def is_experiment(self):
        return self.kind != "run"

    @property
    def environment(self):
        return self.doc.get("environment") or {}

    def measured(self, label=None):
        """The runs the statistics count (warm-ups left out), of one mode if given."""
        return [r for r in self.runs if not r.warmup and (label is None or r.label == label)]

    def first_measured(self, label=None):
        m = self.measured(label)
        return m[0] if m else None

    def modes(self):
        """The modes of the file: its aggregates' names, or ["run"] for a single run."""
        if not self.is_experiment:
            return ["run"]
        agg = self.doc.get("aggregate") or {}
        return list(agg.keys())

    def aggregate(self, mode):
        agg = self.doc.get("aggregate") or {}
        return agg.get(mode)
