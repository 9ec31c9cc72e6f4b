"""python3 -m mvmtools COMMAND ...: the package's pieces for shell glue.

  stats [KEYS]            stdin "KEY... VALUE" (tabs) -> "KEY... n median q1 q3 min max samples"
  ratios NUM DEN          stdin "CELL TOOL SEQ VALUE" -> "CELL RATIO" per round with both tools
  order ROUNDS NAME...    the run order (ABBA, Williams rows), one name per line
  order-seq ROUNDS NAME...  the same as NAME:SEQ words, SEQ counting each name's runs
  rows FILE [--workload W] FIELD...
                          the table rows of a results file (its single run, or the
                          first measured run of an experiment), FIELDs tab-separated
  sweep-table SAMPLES ROUNDS
                          bench/sweep-vs-host's tables from its samples.tsv
  seed-three GUEST.json LINUX.json|- HOST.tsv timed|counts NOTE
                          bench/seed-three's table: the minivmm guest, the Linux guest
                          (- when it did not run; counts: its clock is not this run's)
                          and the host
  clones SAMPLES CPUS PREFIX [NOTE]
                          bench/clones' report from its samples.tsv (CPUS: the
                          machine's), and its plot PREFIX.svg (NOTE over it)
Every command exits 2 on a usage error and 1 on bad input, with one message.
"""
import os
import sys

from . import clones, design, results, seedthree, stats, sweeptable
from .numtext import jq_text

PROG = "mvmtools"


def _usage(msg=None):
    if msg:
        print("%s: %s" % (PROG, msg), file=sys.stderr)
    print(__doc__.split("\n", 2)[2].rstrip(), file=sys.stderr)
    return 2


def _stdin_rows():
    return [line.rstrip("\n").split("\t") for line in sys.stdin if line.rstrip("\n") != ""]


def _whole(text, what):
    if not text.isdigit():
        raise ValueError("%s must be a whole number, not '%s'" % (what, text))
    return int(text)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.rstrip())
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "stats":
            keys = _whole(args[0], "KEYS") if args else None
            for row in stats.group_stats(_stdin_rows(), keys):
                print("\t".join(row))
        elif cmd == "ratios":
            if len(args) != 2:
                return _usage("ratios takes NUM DEN")
            for row in stats.paired_ratios(_stdin_rows(), args[0], args[1]):
                print("\t".join(row))
        elif cmd in ("order", "order-seq"):
            if len(args) < 2:
                return _usage("%s takes ROUNDS NAME..." % cmd)
            rounds = _whole(args[0], "ROUNDS")
            if cmd == "order":
                for name in design.order(rounds, args[1:]):
                    print(name)
            else:
                print("\n".join("%s:%d" % p for p in design.order_seq(rounds, args[1:])))
        elif cmd == "rows":
            if not args:
                return _usage("rows takes FILE [--workload W] FIELD...")
            path, rest, workload = args[0], args[1:], None
            if rest[:1] == ["--workload"]:
                if len(rest) < 2:
                    return _usage("--workload takes a workload name")
                workload, rest = rest[1], rest[2:]
            if not rest:
                return _usage("rows needs at least one FIELD")
            res = results.load(path)
            run = res.first_measured() if res.is_experiment else res.runs[0]
            if run is None:
                raise results.ResultsError("%s has no measured run" % path)
            for rec in run.table_rows(workload):
                print("\t".join("" if rec.get(f) is None else jq_text(rec.get(f)) for f in rest))
        elif cmd == "sweep-table":
            if len(args) != 2:
                return _usage("sweep-table takes SAMPLES ROUNDS")
            rounds = _whole(args[1], "ROUNDS")
            seed = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "seed-osv-mmap.tsv")
            samples = sweeptable.read_samples(args[0])
            order = " ".join(design.order(rounds, ["host", "guest"]))
            sys.stdout.write(sweeptable.render(samples, sweeptable.read_seed(seed), rounds, order))
        elif cmd == "seed-three":
            if len(args) != 5 or args[3] not in ("timed", "counts"):
                return _usage("seed-three takes GUEST.json LINUX.json|- HOST.tsv timed|counts NOTE")
            linux = None if args[1] == "-" else seedthree.guest_cells(args[1])
            print(seedthree.render(seedthree.guest_cells(args[0]), linux, seedthree.host_cells(args[2]), args[4],
                                   args[3] == "timed"))
        elif cmd == "clones":
            if len(args) not in (3, 4):
                return _usage("clones takes SAMPLES CPUS PREFIX [NOTE]")
            note = args[3] if len(args) == 4 else ""
            print("\n".join(clones.report(args[0], _whole(args[1], "CPUS"), args[2], note)))
        else:
            return _usage("no command '%s'" % cmd)
    except ValueError as e:
        print("%s %s: %s" % (PROG, cmd, e), file=sys.stderr)
        return 2
    except (results.ResultsError, OSError) as e:
        print("%s %s: %s" % (PROG, cmd, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from .cli import run

    run(main)
