"""Run orders that cancel drift: ABBA for two names, Williams designs for more.

A Williams design is a balanced Latin square: over a whole cycle of rows (n rows
for an even n, 2n for an odd n) every name runs equally often in every position
and right after every other name, so whatever drifts with time or with what ran
just before (these machines' memory, backed lazily by their host, is faster
right after a big free) cancels out of the medians. With two names the rows are
A B, B A: ABBA. bench/lib.sh's bench_order and bench_order_seq print these.
"""


def williams_rows(n):
    """The rows of the design for n names, as lists of indices 0..n-1."""
    if n < 1:
        return []
    # First row 0, 1, n-1, 2, n-2, ...; row r adds r (mod n).
    first = []
    for k in range(n):
        if k == 0:
            first.append(0)
        elif k % 2:
            first.append((k + 1) // 2)
        else:
            first.append(n - k // 2)
    rows = [[(f + r) % n for f in first] for r in range(n)]
    if n % 2:
        rows += [list(reversed(row)) for row in rows[:n]]
    return rows


def cycle_length(n):
    """Rounds in one whole cycle of the design."""
    return len(williams_rows(n))


def order(rounds, names):
    """The names in run order, round after round (a round is one row)."""
    rows = williams_rows(len(names))
    out = []
    for r in range(rounds):
        out.extend(names[i] for i in rows[r % len(rows)])
    return out


def order_seq(rounds, names):
    """order() as (name, seq) pairs, seq counting each name's runs from 1."""
    count = {}
    out = []
    for name in order(rounds, names):
        count[name] = count.get(name, 0) + 1
        out.append((name, count[name]))
    return out


def order_rows_text(rounds, names):
    """The order as a sentence: rows joined by ", ", names by " "; at most one
    whole cycle, then "; then again from the first row" if more rounds ran."""
    n = len(names)
    cycle = cycle_length(n)
    shown = order(min(rounds, cycle), names)
    text = ""
    for i, name in enumerate(shown):
        text += ("" if i == 0 else (" " if i % n else ", ")) + name
    if rounds > cycle:
        text += "; then again from the first row"
    return text
