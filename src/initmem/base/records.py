"""The registries' records as plain data (a JSON file each, read with no code run), and what a process looked up.

A registry keeps its records in a JSON file beside its module (``run/optimizers.json``): ``{"kind": "optimizer",
"records": {name: {field: value, ...}, ...}}``, in the order lists show them; the module keeps the code that uses them.
Every read of a record goes through this module, which notes what was looked up (:func:`noted`), as
:mod:`initmem.base.reads` notes result files: a page's record (:mod:`initmem.book.digest`) depends on the records it
used, each by its value, not on the file that holds them all. What is looked up is named by a *selector*:

* ``name``: one record (:func:`record`; None where there is none, which counts too);
* ``*``: the listing, the names in order (:func:`names`);
* ``*.field``: every record's ``field`` where it is not empty, by name (:func:`each`);
* ``field=value``: the names of the records whose ``field`` is ``value`` (JSON) (:func:`where`).

:func:`value` computes what a selector names from the file as it is now: what the digest hashes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .package_data import read_package_json

__all__ = ["LISTING", "record", "names", "each", "where", "noted", "split", "value", "describe"]

#: The selector of a table's listing.
LISTING = "*"
#: The tables read in this process (path -> content), and the keys noted (``<absolute path>#<selector>``).
_TABLES: dict[Path, dict[str, Any]] = {}
#: The absolute table paths given, resolved (``Path.resolve`` costs a system call per part of the path).
_RESOLVED: dict[str, Path] = {}
_NOTED: set[str] = set()


def _shape(content: Any) -> str | None:
    """None when ``content`` is a table: a ``kind`` and a mapping of names (no ``*``, ``=`` or ``#``) to mappings."""
    if not isinstance(content, dict) or not isinstance(content.get("kind"), str):
        return "it names no kind of record"
    records = content.get("records")
    if not isinstance(records, dict) or not all(isinstance(r, dict) for r in records.values()):
        return "its records are not a mapping of names to records"
    bad = [name for name in records if any(c in name for c in "*=#")]
    return f"record name {bad[0]!r} holds one of * = #" if bad else None


def _read(path: Path) -> dict[str, Any]:
    return read_package_json(path, _shape)


def _table(path: str | os.PathLike, selector: str) -> dict[str, dict[str, Any]]:
    """The records of the table at ``path`` (read once in this process, and its path resolved once), noting
    ``selector``."""
    key = os.fspath(path)
    resolved = _RESOLVED.get(key) or Path(key).resolve()
    if os.path.isabs(key):  # a relative path resolves against the working directory of each call
        _RESOLVED[key] = resolved
    if resolved not in _TABLES:
        _TABLES[resolved] = _read(resolved)
    _NOTED.add(f"{resolved}#{selector}")
    return _TABLES[resolved]["records"]


def record(path: str | os.PathLike, name: str) -> dict[str, Any] | None:
    """The data of record ``name`` of the table at ``path`` (None: there is none); noted."""
    return _table(path, name).get(name)


def names(path: str | os.PathLike) -> tuple[str, ...]:
    """The names of the table's records, in order; the listing is noted."""
    return tuple(_table(path, LISTING))


def each(path: str | os.PathLike, field: str) -> dict[str, Any]:
    """Every record's ``field`` where it is present and not empty, by name, in order; noted as one view."""
    return {name: r[field] for name, r in _table(path, f"{LISTING}.{field}").items() if r.get(field)}


def where(path: str | os.PathLike, field: str, wanted: Any) -> tuple[str, ...]:
    """The names of the records whose ``field`` is ``wanted``, in order; noted as one view."""
    records = _table(path, f"{field}={json.dumps(wanted)}")
    return tuple(name for name, r in records.items() if field in r and r[field] == wanted)


def noted() -> list[str]:
    """Every key noted in this process (``<absolute path>#<selector>``), sorted."""
    return sorted(_NOTED)


def split(key: str) -> tuple[str, str]:
    """A noted key as its path and its selector."""
    path, _, selector = key.rpartition("#")
    return path, selector


def value(path: str | os.PathLike, selector: str) -> Any:
    """What ``selector`` names in the table at ``path`` as the file is now (read again, nothing noted); None where
    the file or the record is absent."""
    if not Path(path).is_file():
        return None
    records = _read(Path(path))["records"]
    if selector == LISTING:
        return list(records)
    if selector.startswith(f"{LISTING}."):
        field = selector.removeprefix(f"{LISTING}.")
        return {name: r[field] for name, r in records.items() if r.get(field)}
    if "=" in selector:
        field, _, wanted = selector.partition("=")
        return [name for name, r in records.items() if field in r and r[field] == json.loads(wanted)]
    return records.get(selector)


def describe(path: str | os.PathLike, selector: str) -> str:
    """A selector in words: ``optimizer record sgd``, ``the optimizer listing``, ``the optimizer records' settings``,
    ``the optimizer records with family "adaptive"`` (the kind read from the file, else its name)."""
    try:
        kind = _read(Path(path))["kind"]
    except ValueError:
        kind = Path(path).stem
    if selector == LISTING:
        return f"the {kind} listing"
    if selector.startswith(f"{LISTING}."):
        return f"the {kind} records' {selector.removeprefix(f'{LISTING}.')}"
    if "=" in selector:
        field, _, wanted = selector.partition("=")
        return f"the {kind} records with {field} {wanted}"
    return f"{kind} record {selector}"
