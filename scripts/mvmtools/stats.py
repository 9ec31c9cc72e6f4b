"""Statistics of repeated measurements: one quantile, spreads, paired ratios.

The quantile is R's type 7 (numpy's default), the same as minivmm's own
spread_of (vmm/summary.c): q(p) = x[i] + f (x[i+1] - x[i]) with i + f =
p (n - 1) over the sorted samples, 0-based. So the median of an even count is
the mean of the middle two, and the IQR of two samples is half their range.
tests/fixtures/quantiles.tsv holds cases both implementations are checked on.
"""
from collections import namedtuple
import re

from .numtext import awk_num, c_g

Spread = namedtuple("Spread", "n median q1 q3 min max")

# A sample is a number; "-" or an empty field is "not measured" and skipped.
NUMBER = re.compile(r"^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$")


def quantile(sorted_values, p):
    """Quantile p (0..1) of an ascending, non-empty sequence (type 7)."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("quantile of no samples")
    pos = p * (n - 1)
    lo = int(pos)
    if lo + 1 < n:
        return sorted_values[lo] + (pos - lo) * (sorted_values[lo + 1] - sorted_values[lo])
    return sorted_values[n - 1]


def spread(values):
    """Spread of the samples (any order); None when there are none."""
    v = sorted(float(x) for x in values)
    if not v:
        return None
    return Spread(len(v), quantile(v, 0.5), quantile(v, 0.25), quantile(v, 0.75), v[0], v[-1])


def group_stats(rows, keys=None):
    """Grouped spreads, in the order groups first appear.

    rows: sequences of strings, KEY1..KEYk VALUE (k = keys, default: every field
    but the last). Values that are not numbers are skipped. Returns rows of text:
    KEY1..KEYk n median q1 q3 min max samples (the samples as given, joined by
    commas), numbers as awk printed them (bench/stats.awk, which this replaces).
    """
    order, groups = [], {}
    for row in rows:
        if not row:
            continue
        k = keys if keys else len(row) - 1
        if k < 1 or len(row) <= k:
            continue
        key, text = tuple(row[:k]), row[k]
        if not NUMBER.match(text):
            continue
        if key not in groups:
            groups[key] = ([], [])
            order.append(key)
        groups[key][0].append(float(text))
        groups[key][1].append(text)
    out = []
    for key in order:
        values, texts = groups[key]
        s = spread(values)
        out.append(list(key) + [awk_num(x) for x in (s.n, s.median, s.q1, s.q3, s.min, s.max)] + [",".join(texts)])
    return out


def paired_ratios(rows, num, den):
    """Per round, NUM's value over DEN's, for rows CELL TOOL SEQ VALUE.

    One ratio per (cell, seq) in which both tools have a value ("-" or empty is
    none) and DEN's is above 0; a later row of the same (cell, tool, seq)
    replaces an earlier one. Returns rows [cell, ratio text (%.9g)] in the order
    (cell, seq) first appear.
    """
    values, order, seen = {}, [], set()
    for row in rows:
        if len(row) < 4:
            continue
        cell, tool, seq, value = row[:4]
        values[(cell, tool, seq)] = value
        if (cell, seq) not in seen:
            seen.add((cell, seq))
            order.append((cell, seq))
    out = []
    for cell, seq in order:
        a = values.get((cell, num, seq), "")
        b = values.get((cell, den, seq), "")
        if a in ("", "-") or b in ("", "-"):
            continue
        try:
            fa, fb = float(a), float(b)
        except ValueError:
            continue
        if fb > 0:
            out.append([cell, c_g(fa / fb, 9)])
    return out
