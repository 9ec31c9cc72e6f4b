"""Numbers as text, the way the tools this package replaced printed them.

Reports must come out byte for byte as before, so the places that printed
through awk, C printf or jq keep their exact formatting:
  awk_num(x)       awk's print of a number with OFMT (mawk: integral values
                   that fit an int print as integers, the rest with OFMT)
  c_g(x, p)        C printf("%.<p>g", x) of a double
  ld_g(text, p)    coreutils printf '%.<p>g' TEXT, which parses TEXT as a long
                   double (64-bit mantissa) before rounding
  jq_num(x)        jq's text of a JSON number
"""
from decimal import Decimal, localcontext
from fractions import Fraction
import math
import re

MAWK_MAX_INT = 2147483647


def awk_num(x, ofmt="%.9g"):
    """Text of number x as mawk prints it with OFMT (default %.9g)."""
    if isinstance(x, int):
        x = float(x)
    if math.isfinite(x) and x == int(x) and -MAWK_MAX_INT <= x <= MAWK_MAX_INT:
        return "%d" % int(x)
    return c_g(x, int(ofmt[2:-1]))


def c_g(x, prec):
    """printf("%.<prec>g", x) as glibc prints a double."""
    if math.isnan(x):
        return "-nan" if math.copysign(1, x) < 0 else "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return "%.*g" % (prec, x)


_LEADING_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def awk_value(text):
    """awk's numeric value of a field: its leading number, 0 if none."""
    m = _LEADING_NUMBER.match(text)
    return float(m.group(0)) if m else 0.0


def _long_double(text):
    """The x87 long double nearest to decimal TEXT, as an exact Fraction."""
    f = Fraction(text.strip())
    if f == 0:
        return f
    sign = -1 if f < 0 else 1
    f = abs(f)
    e = f.numerator.bit_length() - f.denominator.bit_length()
    # Scale so that the mantissa has exactly 64 bits: 2^63 <= m < 2^64.
    while True:
        scaled = f / (Fraction(2) ** (e - 63)) if e >= 63 else f * (Fraction(2) ** (63 - e))
        if scaled >= 2**64:
            e += 1
        elif scaled < 2**63:
            e -= 1
        else:
            break
    m = round(scaled)  # half to even, as the FPU rounds
    return sign * (Fraction(m) * (Fraction(2) ** (e - 63)))


def ld_g(text, prec):
    """coreutils `printf '%.<prec>g' TEXT` (an empty TEXT prints as 0)."""
    if text.strip() == "":
        return "0"
    try:
        v = _long_double(text)
    except (ValueError, ZeroDivisionError):
        return c_g(awk_value(text), prec)
    if v == 0:
        return "0"
    with localcontext() as ctx:
        ctx.prec = 80
        d = Decimal(v.numerator) / Decimal(v.denominator)
        exp = d.adjusted()
        # %g: the exponent after rounding to prec significant digits decides the style.
        q = d.quantize(Decimal(1).scaleb(exp - prec + 1), rounding="ROUND_HALF_EVEN")
        if q.adjusted() != exp:
            exp = q.adjusted()
            q = d.quantize(Decimal(1).scaleb(exp - prec + 1), rounding="ROUND_HALF_EVEN")
    if -4 <= exp < prec:
        s = "{:f}".format(q)
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        return s
    digits = "{:f}".format(q.scaleb(-exp))
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return "%se%s%02d" % (digits, "-" if exp < 0 else "+", abs(exp))


def jq_num(x):
    """jq's text of a JSON number (integral values without a fraction)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 1e17:
        return str(int(x))
    r = repr(x)
    if "e" in r:
        mant, exp = r.split("e")
        r = "%se%s%s" % (mant, exp[0] if exp[0] in "+-" else "+", exp.lstrip("+-"))
    return r


def jq_text(v):
    """jq's tostring of a JSON value."""
    import json

    if v is None:
        return "null"
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, int, float)):
        return jq_num(v)
    return json.dumps(v, separators=(",", ":"))
