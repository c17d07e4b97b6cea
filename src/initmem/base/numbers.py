"""How the book writes a number: one format on every page, in tables, verdicts and prose alike.

* percentage points with one decimal (:func:`decimal`), a negative number with the Unicode minus "−" and never as
  "−0.0" (a value that rounds to zero is written "0.0");
* p-values with two significant digits, and below 0.001 as a power of ten with one digit, ``2e-4`` (:func:`p_text`);
* "±", "≥" and "≤", never "+-", ">=" or "<=", and "1 thread", not "1 threads" (:func:`typeset`, applied to the
  text a page shows);
* intervals clipped to what the quantity can be, a difference of accuracies (a spread) to [−100, 100] pp
  (:data:`ACCURACY_DIFFERENCE`), a difference of two spreads to [−200, 200] pp (:data:`SPREAD_DIFFERENCE`)
  (:meth:`initmem.study.statistics.stats.Interval.clip`), and the clipping said where it happened.
"""

from __future__ import annotations

import math
import re

__all__ = ["MINUS", "ACCURACY_DIFFERENCE", "SPREAD_DIFFERENCE", "decimal", "significant", "p_text", "typeset"]

#: The minus sign of a negative number in the book's text.
MINUS = "\u2212"
#: What a difference of two accuracies (%) can be, in percentage points: a spread, a gap.
ACCURACY_DIFFERENCE = (-100.0, 100.0)
#: What a difference of two spreads can be (pp).
SPREAD_DIFFERENCE = (-200.0, 200.0)


def decimal(value: float, digits: int = 1) -> str:
    """``value`` with ``digits`` decimals, a negative one with :data:`MINUS`, one that rounds to zero without a sign.

    >>> decimal(-4.44), decimal(-0.04), decimal(11.0), decimal(float("nan"))
    ('−4.4', '0.0', '11.0', 'n/a')
    """
    if not math.isfinite(value):
        return "n/a"
    text = f"{value:.{digits}f}"
    if text.startswith("-"):
        text = text[1:] if float(text) == 0 else MINUS + text[1:]
    return text


def significant(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, a negative one with :data:`MINUS`.

    >>> significant(-0.00553), significant(24.7)
    ('−0.00553', '24.7')
    """
    return typeset(f"{value:.{digits}g}") if math.isfinite(value) else "n/a"


def p_text(p: float) -> str:
    """A p-value: two significant digits, below 0.001 one digit and a power of ten.

    >>> p_text(0.0625), p_text(0.003), p_text(0.0002), p_text(1.0)
    ('0.062', '0.003', '2e-4', '1')
    """
    if not math.isfinite(p):
        return "n/a"
    if p >= 0.001:
        return f"{p:.2g}"
    mantissa, exponent = f"{p:.0e}".split("e")
    return f"{mantissa}e-{int(exponent[1:])}"


#: ASCII spellings of symbols and their typeset forms.
_SYMBOLS = (("+-", "±"), (">=", "≥"), ("<=", "≤"))
#: A hyphen that is a minus sign: before a digit, after the start, a space or an opening bracket, "=" or "≈".
_NEGATIVE = re.compile(r"(?:(?<=^)|(?<=[\s(\[=≈,;:]))-(?=\d)")
#: A negative zero, as left by text formatted elsewhere.
_NEGATIVE_ZERO = re.compile(r"(?:(?<=^)|(?<=[\s(\[=≈,;:]))[-−](0\.0+)(?!\d)")
#: A count of one with a plural noun, as older run files wrote their hardware ("2 cores, 1 threads").
_ONE = re.compile(r"(?<![\d.])1 (thread|core|seed|run|cell)s\b")


def typeset(text: str) -> str:
    """``text`` as a page shows it: "±", "≥", "≤" for "+-", ">=", "<="; the minus sign of a negative number
    (:data:`MINUS`) for a hyphen before a digit that follows a space, an opening bracket, "=", ",", ";" or ":" (not
    "ResNet-9", "2e-4" or a date); "0.0" for a negative zero; and a count of one in the singular ("1 thread").

    >>> typeset("26.5 +- 7.95 pp, train acc >= 99.5 %, [-2.1, -0.0], ResNet-9, p = 2e-4, 2 cores, 1 threads")
    '26.5 ± 7.95 pp, train acc ≥ 99.5 %, [−2.1, 0.0], ResNet-9, p = 2e-4, 2 cores, 1 thread'
    """
    for ascii_, symbol in _SYMBOLS:
        text = text.replace(ascii_, symbol)
    text = _ONE.sub(r"1 \1", _NEGATIVE_ZERO.sub(r"\1", text))
    return _NEGATIVE.sub(MINUS, text)
