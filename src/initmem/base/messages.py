"""How a value appears in a one-line error message: :func:`shown`, bounded however large the value."""

from __future__ import annotations

import reprlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start (the CLI's error paths use this)
if TYPE_CHECKING:
    from typing import Any

_SHOWN = reprlib.Repr()
_SHOWN.maxlevel = 3
_SHOWN.maxlist = _SHOWN.maxtuple = _SHOWN.maxdict = _SHOWN.maxset = 6
_SHOWN.maxstring = _SHOWN.maxlong = _SHOWN.maxother = 40


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for an error message, in at most ``limit`` characters (``...`` where it is cut), however large
    or deeply nested ``value`` is (:mod:`reprlib`: the whole value is never formatted).

    >>> shown(list(range(100)))
    '[0, 1, 2, 3, 4, 5, ...]'
    """
    try:
        text = _SHOWN.repr(value)
    except ValueError:  # an integer too long for str() (over 4300 digits)
        text = f"<an integer of {value.bit_length()} bits>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
