"""A read-only mapping whose values are made when read, so that a page depends only on the records it read.

Used where a registry's entry reads other records (a rule that prints its claim's band, a preset listing every
optimizer): the page that reads the entry notes those records then, and a page that never reads it does not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

V = TypeVar("V")


class MadeWhenRead(Mapping[str, V]):
    """``entries`` by key, each a value or a function of no argument that makes it (called on every read)."""

    def __init__(self, entries: Mapping[str, V | Callable[[], V]]) -> None:
        self._entries = dict(entries)

    def __getitem__(self, key: str) -> V:
        entry = self._entries[key]
        return entry() if callable(entry) else entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
