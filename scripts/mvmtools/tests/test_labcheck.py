"""lab-check's reading of the lab's markdown."""
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

    def test_rig_case_match(self):
        self.assertEqual(labcheck.without_output("--mem 64M -o x.json guest/guest.bin  -- hello"),
                         "--mem 64M guest/guest.bin -- hello")
        self.assertEqual(labcheck.without_output("-o x.json --mem 64M"), "--mem 64M")
