"""make lab-check: runs every command of the lab (docs/lab/) and checks every
relation the lab asks students to predict, so that an edit to minivmm that
breaks the lab fails CI. Counts and ratios with wide margins, never clocks.
  tests/lab-check [N...]     only exercises N... (default: all)
Everything it runs and checks comes from the lab's own text:
  ```lab                    docs/lab/NN-*.md: shell commands, run in order from
                            the top directory, one bash (-euo pipefail) per exercise
  ```lab file=PATH [same=F] a file the student writes: written verbatim to PATH
                            (and it must equal the repository's F, if given)
  ```rig                    make rig RIG=... ARGS='...': not booted here; each
                            ARGS (without -o FILE) must be a case of
                            tests/rig/cases, which make test-tdp and test-vmx
                            run and tests/rig/check judges
  **QN.M**                  a question of exercise N: docs/lab/answers.md must
                            answer it under "### QN.M" with at least one
                            ```check block (bash that must succeed on what the
                            commands wrote), a "rig check: NAME" line naming a
                            check of tests/rig/check, or "<!-- no check: why -->"
  <!-- lab-number N in LO..HI from "COMMAND" jq 'FILTER' -->
                            a number the text states (N, as written within the
                            40 lines above the marker: in prose or in sample
                            output) that the program must still give: COMMAND
                            (FILE in it is a results file of its own) is run,
                            FILTER read from FILE, and its value must lie in
                            [LO, HI], as N must; in docs/lab/*.md and
                            docs/guide.md (say in the text why it moves)
It works in build/lab-check/, a scratch top directory (./minivmm, guest/,
scripts/, tests/bin/ and build/bench/ linked to the real ones), so your own results/lab/
is left alone.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time

from . import rigcheck

LAB = "docs/lab"
WORK = "build/lab-check"
ANSWERS = LAB + "/answers.md"
TOOLS = ("jq", "gcc", "objcopy", "gnuplot", "timeout")

# Helpers for the check blocks of docs/lab/answers.md (bash, sourced by each block).
HELPERS = r"""# Helpers for the check blocks of docs/lab/answers.md (sourced by tests/lab-check).
# counter FILE PHASE COUNTER: KVM's counter over one timeline phase (a single run's file).
counter() { jq -e --arg p "$2" --arg c "$3" '.timeline[] | select(.phase == $p) | .stats[$c]' "$1"; }
# paging FILE: shadow or tdp, as the run's platform record says.
paging() { jq -r '(if .runs then .runs[0] else . end).platform.paging' "$1"; }
# per_fault FILE-N FILE-2N N COUNTER: (counter over workload_end of the 2N run
# minus that of the N run) / N: one more guest fault, fixed work cancelled.
per_fault() { awk -v a="$(counter "$1" workload_end "$4")" -v b="$(counter "$2" workload_end "$4")" -v n="$3" 'BEGIN { printf "%.3f", (b - a) / n }'; }
# ratio A B: A / B.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) { print "inf"; exit } printf "%.4g", a / b }'; }
# between WHAT VALUE LOW HIGH: passes when LOW <= VALUE <= HIGH, says so either way.
between() {
	if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v != "inf" && v + 0 >= lo + 0 && v + 0 <= hi + 0) }'; then
		echo "  ok: $1 = $2, in [$3, $4]"
	else
		echo "  NOT: $1 = $2, expected in [$3, $4]" >&2
		return 1
	fi
}
# holds WHAT FILE JQ-FILTER: the filter must be true on FILE.
holds() {
	if jq -e "$3" "$2" >/dev/null; then
		echo "  ok: $1"
	else
		echo "  NOT: $1 (jq '$3' on $2 is $(jq -c "$3" "$2" 2>&1 | head -c 200))" >&2
		return 1
	fi
}
"""


# --- the lab's markdown ---------------------------------------------------------
def fence_info(line):
    """The info string's words of a fence line ("```lab file=x" -> ["lab", "file=x"])."""
    return line[3:].split()


def blocks(text, kind):
    """The fenced blocks of TEXT whose info string starts with KIND, as one shell
    script: plain blocks verbatim, `KIND file=PATH` blocks as a here-document
    writing PATH, in the order they appear."""
    out, inb, take, path = [], False, False, ""
    for line in text.split("\n"):
        if line.startswith("```") and not inb:
            words = fence_info(line)
            inb, take, path = True, False, ""
            if words and words[0] == kind:
                take = True
                for w in words[1:]:
                    if w.startswith("file="):
                        path = w[5:]
                if path:
                    d = path.rsplit("/", 1)[0] if "/" in path else path
                    if d != path:
                        out.append("mkdir -p " + d)
                    out.append("cat >" + path + " <<'LAB_FILE_EOF'")
            continue
        if line.startswith("```") and inb:
            if take and path:
                out.append("LAB_FILE_EOF")
            inb = False
            continue
        if inb and take:
            out.append(line)
    return "".join(x + "\n" for x in out)


def same_files(text):
    """(PATH, F) of every ```lab file=PATH ... same=F block."""
    out = []
    for line in text.split("\n"):
        m = re.match(r"^```lab .*file=([^ ]*).* same=([^ ]*).*", line)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def section(text, qid):
    """The text of the answers under "### QID" up to the next heading (headings
    inside fenced blocks do not count)."""
    q = "### " + qid
    out, fence, on = [], False, False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        if not fence and re.match(r"^#+ ", line):
            on = line == q or line.startswith(q + " ")
            if on:
                continue
        if on:
            out.append(line)
    return "\n".join(out)


def check_blocks(body):
    """The lines of an answer's ```check blocks."""
    out, on = [], False
    for line in body.split("\n"):
        if line.startswith("```check"):
            on = True
            continue
        if line.startswith("```"):
            on = False
        if on:
            out.append(line)
    return "\n".join(out)


def rig_check_names(body):
    """The NAME of every "rig check: NAME" (or `NAME`) line of an answer."""
    out = []
    for line in body.split("\n"):
        m = re.match(r".*rig check: `?([a-z0-9-]*)", line)
        if m and m.group(1):
            out.append(m.group(1))
    return out


def questions(text):
    """The QN.M an exercise asks (**QN.M**), sorted by number."""
    qs = set(m.group(1) for m in re.finditer(r"\*\*(Q[0-9]+\.[0-9]+)\*\*", text))
    return sorted(qs, key=lambda q: tuple(int(x) for x in q[1:].split(".")))


def rig_args(text):
    """The ARGS='...' of every ```rig block's command."""
    out = []
    for line in blocks(text, "rig").split("\n"):
        m = re.match(r".*ARGS='([^']*)'.*", line)
        if m:
            out.append(m.group(1))
    return out


def without_output(args):
    """A command line without its first -o FILE, spaces squeezed."""
    a = re.sub(r"(^| )-o [^ ]+", "", args, count=1).lstrip(" ")
    return re.sub(" +", " ", a)


NUMBER = re.compile(r"<!-- lab-number (?P<stated>[0-9][0-9,.]*) in (?P<lo>-?[0-9.]+)\.\.(?P<hi>-?[0-9.]+) "
                    r"from \"(?P<cmd>[^\"]+)\" jq '(?P<jq>[^']+)' -->")
NUMBER_LOOKBACK = 40  # lines above a marker where the number it checks is stated
NUMBER_DOCS = ("docs/lab/[0-9][0-9]-*.md", "docs/lab/answers.md", "docs/lab/cookbook.md", "docs/guide.md")


def number_markers(text):
    """(line number, stated, lo, hi, command, jq filter, stated-in-text) of every
    lab-number marker of TEXT; stated-in-text: N appears as written in the
    NUMBER_LOOKBACK lines above it (or on its line, before it)."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        for m in NUMBER.finditer(line):
            above = NUMBER.sub("", "\n".join(lines[max(0, i - NUMBER_LOOKBACK):i] + [line[:m.start()]]))
            seen = re.search(r"(?<![0-9,.])" + re.escape(m.group("stated")) + r"(?![0-9]|[,.][0-9])", above) is not None
            out.append((i + 1, m.group("stated"), float(m.group("lo")), float(m.group("hi")),
                        m.group("cmd"), m.group("jq"), seen))
    return out


def stated_value(stated):
    """ "38,439" -> 38439.0"""
    return float(stated.replace(",", ""))


def has_commands(script):
    return any(not re.match(r"^\s*(#.*)?$", line) for line in script.split("\n") if line != "")


# --- running it -------------------------------------------------------------------
class LabCheck:
    def __init__(self, root, timeout):
        self.root, self.timeout = root, timeout
        self.passed = self.failed = 0
        self.w = os.path.join(root, WORK)

    def ok(self, name):
        print("PASS lab/" + name, flush=True)
        self.passed += 1

    def no(self, name, why):
        print("FAIL lab/%s: %s" % (name, why), flush=True)
        self.failed += 1

    def bash(self, script, log):
        """Run bash -euo pipefail SCRIPT in the scratch directory with a hard timeout;
        its output goes to LOG. Returns True when it succeeded."""
        with open(os.path.join(self.w, log), "wb") as f:
            p = subprocess.run(["timeout", "-k", "5", str(self.timeout), "bash", "-euo", "pipefail", script],
                               cwd=self.w, stdout=f, stderr=subprocess.STDOUT)
        return p.returncode == 0

    def number(self, k, cmd, jq):
        """Run a lab-number marker's command with FILE its own results file and
        read the filter's value from it: a float, or None."""
        res = "numbers/%d.json" % k
        script = "numbers/%d.sh" % k
        with open(os.path.join(self.w, script), "w") as s:
            s.write(re.sub(r"\bFILE\b", res, cmd) + "\n")
        if not self.bash(script, "numbers/%d.log" % k):
            return None
        p = subprocess.run(["jq", "-e", jq, os.path.join(self.w, res)], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        try:
            return float(p.stdout.decode().split()[0])
        except (IndexError, ValueError):
            return None

    def tail(self, log, n):
        with open(os.path.join(self.w, log), "rb") as f:
            lines = f.read().decode("utf-8", "replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return "\n".join(lines[-n:])

    def scratch(self):
        subprocess.run(["make", "-s", "all", "tests/bin/hello.raw", "build/bench/roofline"], cwd=self.root,
                       stdout=subprocess.DEVNULL, check=True)
        shutil.rmtree(self.w, ignore_errors=True)
        for d in ("guest", "tests/bin", "results", "build"):
            os.makedirs(os.path.join(self.w, d), exist_ok=True)
        os.symlink(os.path.join(self.root, "minivmm"), os.path.join(self.w, "minivmm"))
        os.symlink(os.path.join(self.root, "build/bench"), os.path.join(self.w, "build/bench"))
        os.symlink(os.path.join(self.root, "guest/guest.bin"), os.path.join(self.w, "guest/guest.bin"))
        os.symlink(os.path.join(self.root, "scripts"), os.path.join(self.w, "scripts"))
        for b in sorted(glob.glob(os.path.join(self.root, "tests/bin/*.bin")) + glob.glob(os.path.join(self.root, "tests/bin/*.raw"))):
            os.symlink(b, os.path.join(self.w, "tests/bin", os.path.basename(b)))

    def rig_cases(self):
        """Each case of tests/rig/cases as the command line it runs (the shell file evaluated)."""
        p = subprocess.run(["bash", "-c", 'run() { shift; echo "$*"; }; run_numa() { run "$@"; }; . tests/rig/cases'],
                           cwd=self.root,
                           env=dict(os.environ, G="guest/guest.bin", F=""), stdout=subprocess.PIPE, check=True)
        return set(re.sub(" +", " ", line) for line in p.stdout.decode().split("\n"))

    def run(self, want):
        exercises = []
        for f in sorted(glob.glob(os.path.join(self.root, LAB, "[0-9][0-9]-*.md"))):
            n = str(int(os.path.basename(f)[:2]))
            if not want or n in want:
                exercises.append((n, os.path.relpath(f, self.root)))
        if not exercises:
            print("lab-check: no exercise matches '%s' in %s" % (" ".join(want), LAB), file=sys.stderr)
            return 2
        texts = {f: open(os.path.join(self.root, f)).read() for _, f in exercises}
        self.scratch()

        # 1. every exercise's commands
        for n, f in exercises:
            script = "exercise-%s.sh" % n
            text = blocks(texts[f], "lab")
            with open(os.path.join(self.w, script), "w") as s:
                s.write(text)
            if not has_commands(text):
                self.no("exercise-%s" % n, "%s has no ```lab commands" % f)
                continue
            t0 = time.time()
            if self.bash(script, "exercise-%s.log" % n):
                self.ok("exercise-%s-runs (%s: %.1f s)" % (n, os.path.basename(f), time.time() - t0))
            else:
                self.no("exercise-%s-runs" % n, "a command of %s failed; the end of %s/exercise-%s.log:\n%s"
                        % (f, WORK, n, self.tail("exercise-%s.log" % n, 15)))
            # Files the student writes that the repository also keeps (the rigs run them).
            for path, same in same_files(texts[f]):
                if _same(os.path.join(self.w, path), os.path.join(self.root, same)):
                    self.ok("exercise-%s-file-%s-is-%s" % (n, os.path.basename(path), same))
                else:
                    self.no("exercise-%s-file-%s" % (n, os.path.basename(path)),
                            "%s's %s differs from %s (the rigs run %s: keep them equal)" % (f, path, same, same))
        # The cookbook's recipes, on what the exercises wrote.
        if not want:
            text = blocks(open(os.path.join(self.root, LAB, "cookbook.md")).read(), "lab")
            with open(os.path.join(self.w, "cookbook.sh"), "w") as s:
                s.write(text)
            if self.bash("cookbook.sh", "cookbook.log"):
                self.ok("cookbook-runs (%d lines)" % sum(1 for line in text.split("\n") if line != ""))
            else:
                self.no("cookbook-runs", "a recipe of %s/cookbook.md failed; the end of %s/cookbook.log:\n%s"
                        % (LAB, WORK, self.tail("cookbook.log", 15)))

        # 2. rig commands are rig cases
        cases = self.rig_cases()
        for n, f in exercises:
            for i, args in enumerate(rig_args(texts[f]), 1):
                if without_output(args) in cases:
                    self.ok("exercise-%s-rig-%d-is-a-rig-case" % (n, i))
                else:
                    self.no("exercise-%s-rig-%d" % (n, i),
                            "%s: make rig ARGS='%s' is not a case of tests/rig/cases (add it there, with its check in "
                            "tests/rig/check, so make test-tdp and test-vmx judge it)" % (f, args))

        # 3. every question answered, every answer checked
        answers = open(os.path.join(self.root, ANSWERS)).read()
        with open(os.path.join(self.w, "helpers.sh"), "w") as h:
            h.write(HELPERS)
        names = set(rigcheck.check_names())
        for n, f in exercises:
            qs = questions(texts[f])
            if not qs:
                self.no("exercise-%s-questions" % n, "%s asks no **QN.M** question" % f)
            for q in qs:
                if q.split(".")[0] != "Q" + n:
                    self.no(q, "%s asks %s, but its questions are Q%s.M" % (f, q, n))
                body = section(answers, q)
                if body.strip("\n") == "":
                    self.no(q, "no '### %s' answer in %s" % (q, ANSWERS))
                    continue
                checked = False
                chk = check_blocks(body)
                if chk.strip("\n"):
                    checked = True
                    with open(os.path.join(self.w, q + ".sh"), "w") as s:
                        s.write(". ./helpers.sh\n" + chk.rstrip("\n") + "\n")
                    if self.bash(q + ".sh", q + ".log"):
                        with open(os.path.join(self.w, q + ".log"), "rb") as lf:
                            relations = sum(1 for line in lf.read().decode("utf-8", "replace").split("\n")
                                            if line.startswith("  ok:"))
                        self.ok("%s %d relations" % (q, relations))
                    else:
                        self.no(q, self.tail(q + ".log", 8))
                for r in rig_check_names(body):
                    checked = True
                    if r in names:
                        self.ok("%s-rig-%s" % (q, r))
                    else:
                        self.no(q, "answers.md names rig check '%s', which tests/rig/check does not have" % r)
                if "<!-- no check: " in body:
                    checked = True
                if not checked:
                    self.no(q, "its answer has no ```check block, rig check or <!-- no check: why -->")
        # 4. every number the text states with a lab-number marker, from a run now
        docs = sorted(set(f for pat in NUMBER_DOCS for f in glob.glob(os.path.join(self.root, pat))))
        chosen = set(os.path.join(self.root, f) for _, f in exercises)
        os.makedirs(os.path.join(self.w, "numbers"), exist_ok=True)
        k = 0
        for path in docs:
            rel = os.path.relpath(path, self.root)
            if want and path not in chosen:
                continue
            for line, stated, lo, hi, cmd, jq, seen in number_markers(open(path).read()):
                k += 1
                name = "number-%s:%d" % (rel, line)
                value = self.number(k, cmd, jq)
                if not seen:
                    self.no(name, "the marker checks %s, which the %d lines above it do not state"
                            % (stated, NUMBER_LOOKBACK))
                elif not lo <= stated_value(stated) <= hi:
                    self.no(name, "it states %s, outside its own range %g..%g" % (stated, lo, hi))
                elif value is None:
                    self.no(name, "%s: no number from jq '%s' (see %s/numbers/%d.log)" % (cmd, jq, WORK, k))
                elif not lo <= value <= hi:
                    self.no(name, "it states %s (range %g..%g), the program gives %g now (%s): "
                            "update the text, its range and why it moves" % (stated, lo, hi, value, cmd))
                else:
                    self.ok("%s %s (now %g, in %g..%g)" % (name, stated, value, lo, hi))
        # Answers to questions nobody asks are stale.
        for m in re.finditer(r"^### (Q([0-9]+)\.[0-9]+)", answers, re.M):
            q, qn = m.group(1), m.group(2)
            for n, f in exercises:
                if n == qn and "**%s**" % q not in texts[f]:
                    self.no(q, "answers.md answers %s, which %s does not ask" % (q, f))
        return 0 if self.failed == 0 else 1


def _same(a, b):
    try:
        with open(a, "rb") as x, open(b, "rb") as y:
            return x.read() == y.read()
    except OSError:
        return False


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    for a in argv:
        if not a.isdigit():
            print("lab-check: '%s' is not an exercise number (usage: tests/lab-check [N...])" % a, file=sys.stderr)
            return 2
    for t in TOOLS:
        if shutil.which(t) is None:
            print("lab-check: %s is missing (scripts/install-deps --tests installs it)" % t, file=sys.stderr)
            return 1
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    timeout = os.environ.get("CASE_TIMEOUT", "300")
    start = time.time()
    lc = LabCheck(root, timeout)
    status = lc.run([str(int(a)) for a in argv])
    if status == 2:
        return 2
    print("lab-check: %d passed, %d failed in %d s (work in %s)" % (lc.passed, lc.failed, int(time.time() - start), WORK))
    return status
