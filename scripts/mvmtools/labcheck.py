"""make lab-check: runs every command of the lab (docs/lab/) and checks every
relation the lab asks students to predict, so that an edit to minivmm that
breaks the lab fails CI. Counts and ratios with wide margins, never clocks.
  tests/lab-check [N...]     only exercises N... (default: all)
Without a /dev/kvm it checks nothing and exits 3 after saying why, in
minivmm's words, and the line that runs it in an emulated KVM host
(scripts/need-kvm).
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
                            output; N may be a range A-B, "A to B" in the text)
                            that the program must still give: COMMAND (FILE in
                            it is a results file of its own) is run, FILTER
                            read from FILE, and its value must lie in [LO, HI],
                            as N must; in docs/lab/*.md, docs/guide.md and
                            README.md (say in the text why it moves)
  <!-- lab-number N in LO..HI sh 'COMMAND' -->
  <!-- lab-number N in LO..HI on shadow|tdp|native ... -->
                            either, for a number of one kind of paging (PVM's
                            shadow, or EPT/NPT) or of a KVM on real hardware
                            (native: a time, not an emulated host's): checked
                            where the KVM has it, a SKIP elsewhere
                            (tests/kvm-where says which)
                            the same, its value what COMMAND prints, run where
                            the lab's commands ran, after them, with the check
                            helpers (ratio, counter, pass_s, phase_ms, rl, pop,
                            rank): for a number the lab's own files hold
  every measured number     a time, a rate, a ratio or a share in the prose of
                            those docs needs a lab-number marker stating it (or
                            its range) within 40 lines below it; in an answer,
                            its check's own bounds (between ... LO HI) may be
                            stated instead; a definition, an input, a quote of
                            someone else's figure says so in its paragraph:
                            <!-- not measured: WHY -->. "N exercises" must be the
                            lab's count. (make test's py tier runs this lint too)
  <!-- lab-sample N -->      above a fenced block: it is output of exercise N's
  <!-- lab-sample run "COMMAND" -->
  <!-- lab-sample ... on shadow|tdp|native -->
                            output of that platform only, as a lab-number's
                            commands (or of COMMAND, run from the top directory,
                            OUT in it a scratch directory): its lines must be
                            today's, numbers, paths and the modes' names aside,
                            in order; a line "..." stands for any lines
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
# emulated FILE: true where the run's host was itself emulated (scripts/emu-host:
# one TCG thread runs every vCPU and thread, times are emulation), else false.
emulated() { jq -r '(if .runs then .runs[0] else . end).platform.emulated // false' "$1"; }
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
# phase_ms FILE PHASE: a timeline phase's duration, ms (a single run's file).
phase_ms() { jq -e --arg p "$2" '.timeline[] | select(.phase == $p) | .dur_ms' "$1"; }
# pass_s FILE N: iteration N's touch loop, s, over its table rows (all vCPUs' where there are).
pass_s() { jq -e --argjson n "$2" '[.sweep[] | select(.iteration == $n)] as $r
  | ([$r[] | select(.vcpu == "all")] | if length > 0 then . else [$r[] | select(.vcpu == 0)] end)
  | map(.touch_s) | add' "$1"; }
# rl BACKING OP COLUMN: a column of results/lab/roofline.tsv's row for BACKING OP, 1 thread.
rl() { awk -F'\t' -v b="$1" -v o="$2" -v c="$3" '/^#/ { next } !n { for (i = 1; i <= NF; i++) h[$i] = i; n = 1; next }
  $1 == b && $2 == o && $3 == 1 { print $h[c] }' results/lab/roofline.tsv; }
# pop FILE: the eager threads' populate calls, s, summed.
pop() { jq '[.eager.per_thread[].seconds] | add' "$1"; }
# rank FILE MODE KEY: the median of KEY in MODE's row of a --compare file's ranking.
rank() { jq -e --arg m "$2" --arg k "$3" '.verdict.ranking[] | select(.mode == $m) | .[$k].median' "$1"; }
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


NUMBER = re.compile(r"<!-- lab-number (?P<stated>[0-9][0-9,.]*(?:-[0-9][0-9,.]*)?) in (?P<lo>-?[0-9.]+)\.\.(?P<hi>-?[0-9.]+) "
                    r"(?:on (?P<on>shadow|tdp|native) )?(?:from \"(?P<cmd>[^\"]+)\" jq '(?P<jq>[^']+)'|sh '(?P<sh>[^']+)') -->")
NUMBER_LOOKBACK = 40  # lines above a marker where the number it checks is stated
NUMBER_DOCS = ("docs/lab/[0-9][0-9]-*.md", "docs/lab/answers.md", "docs/lab/cookbook.md", "docs/lab/README.md",
               "docs/guide.md", "README.md")


def _stated_re(stated):
    """A pattern for STATED as the text writes it: "13-19" is also "13 to 19"."""
    parts = [re.escape(x) for x in stated.split("-")]
    return r"(?<![0-9,.])" + r"\s?(?:-|–|to)\s?".join(parts) + r"(?![0-9]|[,.][0-9])"


def number_markers(text):
    """(line number, stated, lo, hi, command, jq filter, stated-in-text, sh, on) of
    every lab-number marker of TEXT; stated-in-text: N appears as written in the
    NUMBER_LOOKBACK lines above it (or on its line, before it). A marker takes its
    value from a run of its own (from "COMMAND" jq 'FILTER') or from a shell
    command run where the lab's commands ran, after them (sh 'COMMAND'); on:
    the paging ("shadow" or "tdp") the number is stated for, or None for any."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        for m in NUMBER.finditer(line):
            above = NUMBER.sub("", "\n".join(lines[max(0, i - NUMBER_LOOKBACK):i] + [line[:m.start()]]))
            seen = re.search(_stated_re(m.group("stated")), above) is not None
            out.append((i + 1, m.group("stated"), float(m.group("lo")), float(m.group("hi")),
                        m.group("cmd"), m.group("jq"), seen, m.group("sh"), m.group("on")))
    return out


def stated_value(stated):
    """ "38,439" -> 38439.0; a range "13-19" -> its ends, (13.0, 19.0)"""
    if "-" in stated:
        a, b = stated.split("-", 1)
        return (stated_value(a), stated_value(b))
    return float(stated.replace(",", ""))


def _in_range(stated, lo, hi):
    v = stated_value(stated)
    return all(lo <= x <= hi for x in (v if isinstance(v, tuple) else (v,)))


# --- every number a doc states: checked, or said why not ------------------------------
# A measured number in prose: digits with a unit of time, rate, ratio or share.
MEASURED = re.compile(r"(?<![\w.,/#=:-])(?P<n>[0-9][0-9,]*(?:\.[0-9]+)?(?:\s?(?:-|–|to)\s?[0-9][0-9,]*(?:\.[0-9]+)?)?)"
                      r"(?:\s?\[[0-9.,]+-[0-9.,]+\])?\s?(?:x\b|×|times\b|%|ms\b|s\b|us\b|µs\b|ns\b|GiB/s|MiB/s|min\b)")
NOT_MEASURED = re.compile(r"<!-- not measured: (?P<why>[^-][^>]*) -->")
COUNT_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                          "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


def _prose(line):
    """LINE without what is not prose: HTML comments, inline code, link targets."""
    line = re.sub(r"<!--.*?-->", "", line)
    line = re.sub(r"`[^`]*`", "", line)
    return re.sub(r"\]\([^)]*\)", "]", line)


def check_bounds(text):
    """{line index: the LO and HI of every `between` in its answer's ```check
    blocks} for the lines of each "### Q" section of TEXT (answers.md)."""
    lines = text.split("\n")
    out, start, fence = {}, None, False

    def close(a, b):
        if a is None:
            return
        found = set()
        joined = "\n".join(lines[a:b]).replace("\\\n", " ").split("\n")  # continued lines, as bash reads them
        for line in joined:
            # between WHAT VALUE LO HI: its last two words (VALUE may hold spaces).
            m = re.match(r'^\s*between\s.*\s(\S+)\s+(\S+)\s*$', line)
            if m:
                for x in m.groups():
                    try:
                        found.add(round(float(x), 6))
                    except ValueError:
                        pass
        for k in range(a, b):
            out[k] = found

    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
        if not fence and re.match(r"^#+ ", line):
            close(start, i)
            start = i if line.startswith("### Q") else None
    close(start, len(lines))
    return out


def lint_numbers(text, exercises=None):
    """[(line, what)] of the numbers TEXT states that nothing checks: a measured
    number (a time, a rate, a ratio, a share) in prose needs a lab-number marker
    stating it within NUMBER_LOOKBACK lines below it, or a <!-- not measured: WHY -->
    in its paragraph (a definition, an input, a bound the program sets); "N
    exercises" must be the lab's count (EXERCISES). Fenced blocks are output or
    commands: not prose."""
    lines = text.split("\n")
    markers = number_markers(text)
    bounds = check_bounds(text)
    out, fence, para = [], False, []
    # Paragraphs (runs of non-blank prose lines) that say why their numbers are not measured.
    excused, start = set(), None
    for i, line in enumerate(lines + [""]):
        if line.lstrip().startswith("```"):
            fence = not fence
        if not fence and line.strip() and not line.lstrip().startswith("```"):
            start = i if start is None else start
            continue
        if start is not None and any(NOT_MEASURED.search(x) for x in lines[start:i]):
            excused.update(range(start, i))
        start = None
    fence, code = False, False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):  # also a list item's indented block
            fence = not fence
            continue
        if fence:
            continue
        # An inline code span may run on to the next line: carry it over.
        text = ("`" if code else "") + line
        code = text.count("`") % 2 == 1
        prose = _prose(text + ("`" if code else ""))
        for m in MEASURED.finditer(prose):
            n = m.group("n")
            stated = re.sub(r"\s?(?:–|to)\s?|\s-\s?|-\s", "-", n).replace(" ", "")
            if i in excused:
                continue
            if any(k[1] == stated and i + 1 <= k[0] <= i + 1 + NUMBER_LOOKBACK for k in markers):
                continue
            v = stated_value(stated)
            # A range a marker below checks: its LO..HI, stated.
            ends = v if isinstance(v, tuple) else (v,)
            if any(all(x in (k[2], k[3]) for x in ends) and i + 1 <= k[0] <= i + 1 + NUMBER_LOOKBACK
                   for k in markers):
                continue
            # An answer that states its check's own bounds (between ... LO HI): a % as the ratio too.
            pct = m.group(0).strip().endswith("%")
            if all(x in bounds.get(i, ()) or (pct and round(x / 100, 6) in bounds.get(i, ()))
                   for x in (v if isinstance(v, tuple) else (v,))):
                continue
            out.append((i + 1, "'%s' is a measured number with no lab-number marker below it (lab-check checks "
                               "nothing there): add <!-- lab-number %s in LO..HI sh 'COMMAND' --> (or from \"COMMAND\" "
                               "jq 'FILTER'), or say why it is not measured: <!-- not measured: WHY -->"
                        % (m.group(0).strip(), stated)))
        if exercises is not None:
            for m in re.finditer(r"\b([a-z]+|[0-9]+) exercises\b", prose):
                w = m.group(1)
                n = int(w) if w.isdigit() else COUNT_WORDS.get(w)
                if n is not None and n != exercises:
                    out.append((i + 1, "'%s': the lab has %d exercises" % (m.group(0), exercises)))
    return out


# --- sample output: the shape of what today's build prints -----------------------------
# <!-- lab-sample N --> above a fenced block: the block is output of exercise N's
# commands; <!-- lab-sample run "COMMAND" --> (the README): of COMMAND, run from the
# top directory. Its lines must be today's, numbers aside, in order, from its first
# line to its last: a line of "..." stands for any lines (what varies run to run).
SAMPLE = re.compile(r"<!-- lab-sample (?:(?P<n>[0-9]+)|run \"(?P<cmd>[^\"]+)\")(?: on (?P<on>shadow|tdp|native))? -->")
MODE_WORDS = ("background", "replay", "lazy", "eager", "uffd")


def sample_blocks(text):
    """[(line, exercise or None, command or None, [lines], on)] of every lab-sample
    marker of TEXT and the fenced block that follows it; on: the platform the
    output is of (shadow, tdp, native: as a lab-number's), or None for any."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        m = SAMPLE.search(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        k = j + 1
        while k < len(lines) and not lines[k].startswith("```"):
            k += 1
        out.append((i + 1, m.group("n"), m.group("cmd"), lines[j + 1:k], m.group("on")))
    return out


# What one line of output says either way, as the run went (a verdict, a side of
# the break-even): the same shape.
EITHER_WAY = ((r"\S+ got there sooner, by # T$|inconclusive \(.*\)$", "VERDICT"),
              (r"\b(above|below) the break-even\b", "SIDE the break-even"),
              (r"eager paid off here$|eager cost more than it saved here$", "OUTCOME"))


def shape(line):
    """A line as its shape: numbers, paths under the lab's directory and runs of
    spaces made alike, the modes' names too (their order in a ranking moves), and
    what a line says either way (EITHER_WAY)."""
    line = re.sub(r"\S*(results|reservoir)/\S*", "PATH", line)
    line = re.sub(r"[0-9][0-9.,]*", "#", line)
    line = re.sub(r"# (ms|s|us|µs)\b", "# T", line)  # a duration in the units it needs (fmt_duration)
    line = re.sub(r"# (?:h|min)(?: # (?:min|T))*\b", "# T", line)  # and past a minute ("2 min 18 s")
    for pat, rep in EITHER_WAY:
        line = re.sub(pat, rep, line)
    for w in MODE_WORDS:
        line = re.sub(r"\b%s\b" % w, "MODE", line)
    return re.sub(r"\s+", " ", line).strip()


def _match_from(sample, log, i):
    """Does SAMPLE (shapes, "..." for any lines) match LOG (shapes) from line i?
    The index past the last line matched, or -1."""
    if not sample:
        return i
    if sample[0] == "...":
        for k in range(i, len(log) + 1):
            end = _match_from(sample[1:], log, k)
            if end >= 0:
                return end
        return -1
    if i < len(log) and log[i] == sample[0]:
        return _match_from(sample[1:], log, i + 1)
    return -1


def sample_matches(sample_lines, log_lines):
    """None when the sample's shape is found in the log, else why not."""
    sample = [shape(x) if x.strip() != "..." else "..." for x in sample_lines if x.strip()]
    log = [shape(x) for x in log_lines if x.strip()]
    if not sample:
        return "an empty sample"
    for i in range(len(log)):
        if log[i] == sample[0] and _match_from(sample, log, i) >= 0:
            return None
    # Say where it parts: the longest prefix found.
    best, at = 0, None
    for i in range(len(log)):
        n = 0
        while i + n < len(log) and n < len(sample) and sample[n] != "..." and log[i + n] == sample[n]:
            n += 1
        if n > best:
            best, at = n, i
    if at is None:
        return "its first line's shape is not in today's output: %s" % sample_lines[0].strip()
    nxt = at + best
    return "today's output parts from it after %d lines: the sample has '%s', today '%s'" % (
        best, [x for x in sample_lines if x.strip()][best].strip() if best < len(sample) else "(end)",
        [x for x in log_lines if x.strip()][nxt].strip() if nxt < len(log) else "(end)")


def has_commands(script):
    return any(not re.match(r"^\s*(#.*)?$", line) for line in script.split("\n") if line != "")


# --- running it -------------------------------------------------------------------
class LabCheck:
    def __init__(self, root, timeout):
        self.root, self.timeout = root, timeout
        self.passed = self.failed = self.skipped = 0
        self.w = os.path.join(root, WORK)
        # Where the lab runs: a number stated for one kind of paging is checked there only.
        where = subprocess.run([os.path.join(root, "tests/kvm-where")], stdout=subprocess.PIPE).stdout.decode()
        self.paging = "shadow" if "shadow" in where else "tdp"
        self.emulated = where.startswith("emulated")

    def ok(self, name):
        print("PASS lab/" + name, flush=True)
        self.passed += 1

    def elsewhere(self, on):
        """Why a number or sample of platform ON (shadow, tdp, native or None)
        is not checked here, or None when it is."""
        if on == "native" and self.emulated:
            return "of a KVM on real hardware; this host is emulated (its times are emulation)"
        if on in ("shadow", "tdp") and on != self.paging:
            return "of %s paging; this KVM has %s paging" % (on, self.paging)
        return None

    def skip(self, name, why):
        print("SKIP lab/%s: %s" % (name, why), flush=True)
        self.skipped += 1

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

    def number(self, k, cmd, jq, sh=None):
        """Run a lab-number marker's command with FILE its own results file and
        read the filter's value from it (or run its sh command where the lab's
        commands ran, the check helpers at hand, and read what it prints): a
        float, or None."""
        res = "numbers/%d.json" % k
        script = "numbers/%d.sh" % k
        if sh:
            with open(os.path.join(self.w, script), "w") as s:
                s.write(". ./helpers.sh\n" + sh + "\n")
            if not self.bash(script, "numbers/%d.log" % k):
                return None
            try:
                return float(self.tail("numbers/%d.log" % k, 1).split()[0])
            except (IndexError, ValueError):
                return None
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
        p = subprocess.run(["bash", "-c", 'run() { shift; echo "$*"; }; run_numa() { run "$@"; }; run_linux() { run "$@"; }; . tests/rig/cases'],
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
        # Without a /dev/kvm every exercise fails on it: say why once, in minivmm's
        # words, and the line that runs the same check in an emulated KVM host.
        if subprocess.run([os.path.join(self.root, "scripts", "need-kvm"), "lab-check", "--",
                           "tests/lab-check"] + want, cwd=self.root).returncode != 0:
            return 3

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
            for line, stated, lo, hi, cmd, jq, seen, sh, on in number_markers(open(path).read()):
                k += 1
                name = "number-%s:%d" % (rel, line)
                why = self.elsewhere(on)
                if why:
                    self.skip(name, why)
                    continue
                value = self.number(k, cmd, jq, sh)
                cmd = cmd or sh
                if not seen:
                    self.no(name, "the marker checks %s, which the %d lines above it do not state"
                            % (stated, NUMBER_LOOKBACK))
                elif not _in_range(stated, lo, hi):
                    self.no(name, "it states %s, outside its own range %g..%g" % (stated, lo, hi))
                elif value is None:
                    self.no(name, "%s: no number from jq '%s' (see %s/numbers/%d.log)" % (cmd, jq, WORK, k))
                elif not lo <= value <= hi:
                    self.no(name, "it states %s (range %g..%g), the program gives %g now (%s): "
                            "update the text, its range and why it moves" % (stated, lo, hi, value, cmd))
                else:
                    self.ok("%s %s (now %g, in %g..%g)" % (name, stated, value, lo, hi))
        # 5. every measured number a doc states has a marker (or says why it is not measured)
        nex = len(glob.glob(os.path.join(self.root, LAB, "[0-9][0-9]-*.md")))
        for path in docs:
            rel = os.path.relpath(path, self.root)
            if want and path not in chosen:
                continue
            text = open(path).read()
            bad = lint_numbers(text, nex)
            for line, what in bad:
                self.no("numbers-%s:%d" % (rel, line), what)
            if not bad:
                self.ok("numbers-%s (%d markers)" % (rel, len(number_markers(text))))
        # 6. sample output has today's shape
        for path in docs:
            rel = os.path.relpath(path, self.root)
            for k, (line, n, cmd, sample, on) in enumerate(sample_blocks(open(path).read()), 1):
                name = "sample-%s:%d" % (rel, line)
                why = self.elsewhere(on)
                if why:
                    self.skip(name, why)
                    continue
                if n is not None:
                    if want and n not in want:
                        continue
                    log = os.path.join(self.w, "exercise-%s.log" % n)
                    if not os.path.exists(log):
                        self.no(name, "exercise %s did not run: no log to compare with" % n)
                        continue
                    with open(log, "rb") as f:
                        out = f.read().decode("utf-8", "replace").split("\n")
                else:
                    if want:
                        continue
                    run = cmd.replace("OUT", os.path.join(WORK, "results", "sample-%d" % k))
                    p = subprocess.run(["timeout", "-k", "5", str(self.timeout), "bash", "-c", run], cwd=self.root,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                    out = p.stdout.decode("utf-8", "replace").split("\n")
                    if p.returncode != 0:
                        self.no(name, "%s: exit %d: %s" % (run, p.returncode, "\n".join(out[-5:])))
                        continue
                why = sample_matches(sample, out)
                if why:
                    self.no(name, "the sample is not what today's build prints (%s): paste today's output there"
                            % why)
                else:
                    self.ok("%s (%d lines)" % (name, len([x for x in sample if x.strip()])))
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
    if status in (2, 3):  # nothing was checked: a bad exercise number, no KVM
        return status
    print("lab-check: %d passed, %d failed, %d skipped in %d s (paging: %s; work in %s)"
          % (lc.passed, lc.failed, lc.skipped, int(time.time() - start), lc.paging, WORK))
    return status
