"""How the book writes a list inside a sentence: :func:`in_words`."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["in_words"]


def in_words(items: Iterable[str]) -> str:
    """``items`` as a sentence lists them: ``"a"``, ``"a and b"``, ``"a, b and c"`` (no serial comma); ``""`` for
    none.

    >>> in_words(["seeds 0 to 4", "seed 5 at σ_w 0.1", "seed 6"])
    'seeds 0 to 4, seed 5 at σ_w 0.1 and seed 6'
    >>> in_words([]), in_words(["seed 6"]), in_words(iter(["seed 6", "seed 7"]))
    ('', 'seed 6', 'seed 6 and seed 7')
    """
    listed = list(items)
    if len(listed) < 2:
        return "".join(listed)
    return ", ".join(listed[:-1]) + " and " + listed[-1]
