"""Numbers printed as awk, coreutils printf and jq print them."""
import unittest

from mvmtools import numtext


class Text(unittest.TestCase):
    def test_awk(self):
        self.assertEqual(numtext.awk_num(2147483647.0), "2147483647")
        self.assertEqual(numtext.awk_num(2147483648.0), "2.14748365e+09")
        self.assertEqual(numtext.awk_num(0.1 + 0.2), "0.3")
        self.assertEqual(numtext.awk_num(123456789.5), "123456790")
        self.assertEqual(numtext.awk_num(0.5, "%.6g"), "0.5")
        self.assertEqual(numtext.awk_value("12abc"), 12.0)
        self.assertEqual(numtext.awk_value("-"), 0.0)

    def test_long_double_printf(self):
        # From /usr/bin/printf '%.3g': ties decided by the long double nearest the text.
        for text, want in (("0.3265275", "0.327"), ("0.1235", "0.124"), ("9.995", "9.99"), ("1234.5", "1.23e+03"),
                           ("0.000123456", "0.000123"), ("", "0"), ("2", "2")):
            self.assertEqual(numtext.ld_g(text, 3), want, text)

    def test_jq(self):
        self.assertEqual(numtext.jq_num(128.0), "128")
        self.assertEqual(numtext.jq_num(0.6511848699999999), "0.6511848699999999")
        self.assertEqual(numtext.jq_text(None), "null")
        self.assertEqual(numtext.jq_text(True), "true")
