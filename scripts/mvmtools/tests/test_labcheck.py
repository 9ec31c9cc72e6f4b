"""lab-check's reading of the lab's markdown."""
import glob
import os
import unittest

from mvmtools import labcheck

EXERCISE = """# 9. An exercise

```lab
./minivmm --mem 64M -o results/lab/x.json -- hello
# a comment
```

Some text. **Q9.1** What? **Q9.2** And? **Q9.1** again.

```lab file=results/lab/g.S same=tests/raw/g.S
mov $1, %al
```

```rig
make rig RIG=tdp ARGS='--mem 64M -o x.json guest/guest.bin -- hello'
```

```sh
not run
```
"""

ANSWERS = """# Answers

### Q9.1
Because.
```check
between "ratio" 2 1 3
```
```
### not a heading: inside a fence
```
rig check: `lazy-warm-pass-no-faults`

### Q9.2 (the second)
<!-- no check: a matter of opinion -->

## Exercise 10
### Q10.1
"""


class Markdown(unittest.TestCase):
    def test_blocks(self):
        self.assertEqual(labcheck.blocks(EXERCISE, "lab"),
                         "./minivmm --mem 64M -o results/lab/x.json -- hello\n# a comment\n"
                         "mkdir -p results/lab\ncat >results/lab/g.S <<'LAB_FILE_EOF'\nmov $1, %al\nLAB_FILE_EOF\n")
        self.assertEqual(labcheck.rig_args(EXERCISE), ["--mem 64M -o x.json guest/guest.bin -- hello"])
        self.assertEqual(labcheck.same_files(EXERCISE), [("results/lab/g.S", "tests/raw/g.S")])

    def test_commands(self):
        self.assertTrue(labcheck.has_commands(labcheck.blocks(EXERCISE, "lab")))
        self.assertFalse(labcheck.has_commands("# only\n\n   \n"))

    def test_questions(self):
        self.assertEqual(labcheck.questions(EXERCISE), ["Q9.1", "Q9.2"])
        self.assertEqual(labcheck.questions("**Q1.10** **Q1.2**"), ["Q1.2", "Q1.10"])

    def test_sections(self):
        s1 = labcheck.section(ANSWERS, "Q9.1")
        self.assertIn("### not a heading: inside a fence", s1)
        self.assertEqual(labcheck.check_blocks(s1), 'between "ratio" 2 1 3')
        self.assertEqual(labcheck.rig_check_names(s1), ["lazy-warm-pass-no-faults"])
        s2 = labcheck.section(ANSWERS, "Q9.2")
        self.assertIn("<!-- no check: ", s2)
        self.assertEqual(labcheck.check_blocks(s2), "")
        self.assertEqual(labcheck.section(ANSWERS, "Q10.1").strip(), "")
        self.assertEqual(labcheck.section(ANSWERS, "Q9.3"), "")

    def test_number_markers(self):
        jq = ".timeline[] | select(.phase == \"firmware_ready\") | .stats.insn_emulation"
        text = ("The boot emulates 38,439 instructions.\n"
                "<!-- lab-number 38,439 in 37700..39200 from \"./minivmm -q -o FILE -- hello\" jq '%s' -->\n"
                "<!-- lab-number 41,799 in 40900..42700 from \"./minivmm -q -o FILE -- hello\" jq '%s' -->\n"
                "a 38439 in a table\n<!-- lab-number 38439 in 37700..39200 from \"x FILE\" jq '.a' -->\n" % (jq, jq))
        m = labcheck.number_markers(text)
        self.assertEqual([(x[0], x[1], x[2], x[3], x[6]) for x in m],
                         [(2, "38,439", 37700.0, 39200.0, True), (3, "41,799", 40900.0, 42700.0, False),
                          (5, "38439", 37700.0, 39200.0, True)])
        self.assertEqual(m[0][4], "./minivmm -q -o FILE -- hello")
        self.assertEqual(m[0][5], jq)
        self.assertEqual(labcheck.stated_value("38,439"), 38439.0)
        # A number inside a longer one, or only in another marker, is not stated.
        self.assertFalse(labcheck.number_markers("138,4390\n<!-- lab-number 38,439 in 1..2 from \"c\" jq '.' -->")[0][6])
        # A number of one kind of paging says which; others are for any.
        self.assertEqual([x[8] for x in m], [None, None, None])
        on = labcheck.number_markers("took 7 here\n<!-- lab-number 7 in 1..9 on shadow sh 'echo 7' -->\n"
                                     "and 3\n<!-- lab-number 3 in 1..9 on tdp from \"c FILE\" jq '.a' -->")
        self.assertEqual([(x[1], x[7], x[8]) for x in on], [("7", "echo 7", "shadow"), ("3", None, "tdp")])

    def test_rig_case_match(self):
        self.assertEqual(labcheck.without_output("--mem 64M -o x.json guest/guest.bin  -- hello"),
                         "--mem 64M guest/guest.bin -- hello")
        self.assertEqual(labcheck.without_output("-o x.json --mem 64M"), "--mem 64M")


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class Numbers(unittest.TestCase):
    def test_a_measured_number_needs_a_marker(self):
        text = "It took 12 ms here.\n\nA ratio of 3.5x.\n<!-- lab-number 3.5 in 1..10 sh 'echo 2' -->\n"
        bad = labcheck.lint_numbers(text)
        self.assertEqual([b[0] for b in bad], [1])
        self.assertIn("'12 ms' is a measured number with no lab-number marker", bad[0][1])

    def test_ranges_definitions_code_and_fences(self):
        text = ("Between 13-19% of RAM.\n<!-- lab-number 13-19 in 1..50 sh 'echo 15' -->\n\n"
                "Buckets 6.25% wide. <!-- not measured: 1/16 -->\n\n"
                "`took 5 s` in code, and\n```\ntook 7 s in output\n```\n"
                "a code span `over\ntwo 9 s lines` too.\n")
        self.assertEqual(labcheck.lint_numbers(text), [])
        m = labcheck.number_markers(text)
        self.assertTrue(m[0][6])  # "13-19" is stated as written
        self.assertTrue(labcheck._in_range("13-19", 1, 50) and not labcheck._in_range("13-19", 14, 50))

    def test_an_answer_may_state_its_checks_bounds(self):
        text = ("### Q9.1\n**50x or more** (and 2 ms, no).\n\n```check\n"
                "between \"ratio\" \"$(ratio $a $b)\" 50 1000000\n```\n### Q9.2\n50x again.\n")
        self.assertEqual([b[0] for b in labcheck.lint_numbers(text)], [2, 8])

    def test_exercise_count(self):
        self.assertEqual(labcheck.lint_numbers("A lab in nine exercises.", 12)[0][1],
                         "'nine exercises': the lab has 12 exercises")
        self.assertEqual(labcheck.lint_numbers("A lab in twelve exercises.", 12), [])

    def test_the_docs_pass(self):
        # Every measured number README.md, the guide and the lab state is checked
        # by lab-check or says why not (what make lab-check then runs).
        n = len(glob.glob(os.path.join(ROOT, "docs/lab/[0-9][0-9]-*.md")))
        bad = []
        for pat in labcheck.NUMBER_DOCS:
            for f in sorted(glob.glob(os.path.join(ROOT, pat))):
                bad += ["%s:%d: %s" % (os.path.relpath(f, ROOT), line, why)
                        for line, why in labcheck.lint_numbers(open(f).read(), n)]
        self.assertEqual(bad, [])


class Samples(unittest.TestCase):
    def test_shape(self):
        self.assertEqual(labcheck.shape("  took 9 s (estimated 6 s)"), "took # T (estimated # T)")
        self.assertEqual(labcheck.shape("in 13.8 ms"), labcheck.shape("in 1.234 s"))
        self.assertEqual(labcheck.shape("took 2 min 18 s (estimated 44 s)"), labcheck.shape("took 9 s (estimated 6 s)"))
        self.assertEqual(labcheck.shape("took 1 h 2 min"), labcheck.shape("took 7 s"))
        self.assertEqual(labcheck.shape("1. lazy 326.9 [326.2-331.8]"), labcheck.shape("1. eager 12 [1-3]"))
        self.assertEqual(labcheck.shape("... lazy got there sooner, by 1005.5 ms"),
                         labcheck.shape("... inconclusive (the spreads overlap; medians differ by 3 ms)"))

    def test_matches(self):
        log = ["noise", "== recap ==", "a 1", "b 2", "x", "y", "c 3", "tail"]
        self.assertIsNone(labcheck.sample_matches(["== recap ==", "a 7", "b 8", "...", "c 9"], log))
        why = labcheck.sample_matches(["== recap ==", "a 7", "c 9"], log)
        self.assertIn("the sample has 'c 9', today 'b 2'", why)
        self.assertIn("first line", labcheck.sample_matches(["nothing like it"], log))

    def test_blocks(self):
        text = "x\n<!-- lab-sample 12 -->\n```\nl1\nl2\n```\n<!-- lab-sample run \"a --out OUT\" -->\n\n```\nr\n```\n"
        self.assertEqual(labcheck.sample_blocks(text), [(2, "12", None, ["l1", "l2"], None), (7, None, "a --out OUT", ["r"], None)])
