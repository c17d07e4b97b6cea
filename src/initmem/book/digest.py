"""What an executed page used, and its digest: what decides whether a page is executed again.

An executed notebook records (``metadata["initmem"]["uses"]``, :func:`record_uses`), each with the sha256 of its
content: its ``source`` text; the ``modules`` of initmem its kernel imported (:func:`usage_cell`, :func:`take_usage`;
hashed without their docstrings, :func:`module_digest`, so a page must never show a docstring);
the result files it ``reads`` (:mod:`initmem.base.reads`; absent: None; a listing: the names matched); and the
``records`` of registries it looked up (:mod:`initmem.base.records`: one optimizer's or claim's record, a listing or
a view), by the canonical JSON of their values, so a page depends on the records it used, not on every record.
Beside it, ``cells`` is the sha256 of what the page shows (:func:`cells_digest`), so a hand edit is found.

Paths are relative to the repository root. The page's digest (:func:`notebook_digest`) is the sha256 over its
parameters and that record; before executing a page the runner takes the record again (:func:`refresh`), and the
same digest with matching cells means the page is reused. :func:`changes` says in words what differs
(``initmem book --check``).
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..base import records as _records
from ..base.docstrings import docstring_statements
from ..base.reads import is_listing

__all__ = [
    "FORMAT",
    "USAGE_TAG",
    "sha256_file",
    "module_digest",
    "portable",
    "usage_cell",
    "take_usage",
    "Hashes",
    "record_uses",
    "refresh",
    "notebook_digest",
    "cells_digest",
    "changes",
    "stored_record",
]

#: The version of the record: a page executed before pages recorded what they used (or under another format) is
#: executed again. 4: modules hashed without their docstrings.
FORMAT = 4
#: The tag of the cell the runner appends to ask the kernel what it used (removed from the executed notebook).
USAGE_TAG = "initmem-uses"
#: The prefix of the line that cell prints.
_USAGE_PREFIX = "initmem-uses: "
#: The package's folder (``src/initmem``): a module outside the root is named relative to its parent.
_PACKAGE = Path(__file__).resolve().parents[1]

#: What the last cell runs in the kernel: the files of the initmem modules imported, the paths the loaders noted and
#: the records looked up, printed as one JSON line. It imports nothing of initmem (it would record itself).
_USAGE_CODE = f"""\
import json as _json, sys as _sys
print({_USAGE_PREFIX!r} + _json.dumps({{
    "modules": sorted({{getattr(m, "__file__", None) or "" for n, m in list(_sys.modules.items())
                        if n == "initmem" or n.startswith("initmem.")}} - {{""}}),
    "reads": _sys.modules["initmem.base.reads"].noted() if "initmem.base.reads" in _sys.modules else [],
    "records": _sys.modules["initmem.base.records"].noted() if "initmem.base.records" in _sys.modules else [],
}}))"""


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def module_digest(path: Path) -> str:
    """The sha256 of a Python module's bytes with the text of every docstring (module, class, function) left out, so
    an edit of a docstring alone changes nothing; of all its bytes where it does not parse."""
    data = path.read_bytes()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return hashlib.sha256(data).hexdigest()
    line_starts = [0]  # the byte offset of each line (ast's columns count UTF-8 bytes)
    for line in data.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    spans = [
        (line_starts[doc.lineno - 1] + doc.col_offset, line_starts[doc.end_lineno - 1] + doc.end_col_offset)
        for doc in docstring_statements(tree)
    ]
    h, at = hashlib.sha256(), 0
    for start, end in sorted(spans):
        h.update(data[at:start])
        at = end
    h.update(data[at:])
    return h.hexdigest()


def portable(path: Path, root: Path) -> Path:
    """``path`` relative to ``root`` when inside it (notebooks run with cwd=root), so that executed
    notebooks and their digests do not depend on where the repository is checked out."""
    try:
        return path.relative_to(root)
    except ValueError:
        return path


def usage_cell() -> Any:
    """The code cell the runner appends to a notebook before executing it: it prints what the kernel used
    (:func:`take_usage` reads it and removes the cell)."""
    import nbformat

    cell = nbformat.v4.new_code_cell(_USAGE_CODE)
    cell.metadata["tags"] = [USAGE_TAG, "remove-cell"]
    cell["id"] = USAGE_TAG  # not a random one: the cell is removed again anyway
    return cell


def take_usage(nb: Any) -> dict[str, list[str]]:
    """Remove the :func:`usage_cell` from the executed notebook ``nb`` and return what it printed:
    ``{"modules": [absolute file, ...], "reads": [absolute path or pattern, ...], "records": [key, ...]}`` (a key:
    ``<absolute path>#<selector>``, :mod:`initmem.base.records`).

    Raises:
        ValueError: ``nb`` has no such cell, or it printed nothing to read (the kernel died before it ran).
    """
    cells = [c for c in nb.cells if USAGE_TAG in c.get("metadata", {}).get("tags", [])]
    if not cells:
        raise ValueError("the executed notebook has no cell that says what it used")
    nb.cells = [c for c in nb.cells if c not in cells]
    text = "".join(o.get("text", "") for o in cells[-1].get("outputs", []) if o.get("output_type") == "stream")
    for line in text.splitlines():
        if line.startswith(_USAGE_PREFIX):
            used = json.loads(line.removeprefix(_USAGE_PREFIX))
            return {key: list(used[key]) for key in ("modules", "reads", "records")}
    raise ValueError(f"the cell that says what the page used printed nothing to read: {text[-500:]!r}")


def _key(path: str | Path, root: Path, package_parent: Path | None = None) -> str:
    """A path as the record names it: relative to ``root`` (posix), else to ``package_parent``, else absolute."""
    path = Path(path)
    for base in (root, package_parent):
        if base is not None and path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return path.as_posix()


class Hashes:
    """The sha256 of the files a record names, under ``root``, each read once (one check hashes a file that many
    pages used once)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self._cache: dict[str, str | None] = {}

    def path(self, key: str, module: bool = False) -> Path:
        """The file a key names: under the root, or (a module named from outside the root) beside this package."""
        path = self.root / key
        if module and not path.exists() and key.startswith(f"{_PACKAGE.name}/"):
            return _PACKAGE.parent / key
        return path

    def of(self, key: str, module: bool = False) -> str | None:
        """The sha256 of the file ``key`` names (None: there is none; a ``module``'s by :func:`module_digest`); for a
        pattern (:func:`~initmem.base.reads.listed`), of the names of the files it matches."""
        if key not in self._cache:
            if is_listing(key):
                pattern = Path(key)
                base = Path(pattern.anchor) if pattern.is_absolute() else self.root
                matched = base.glob(pattern.relative_to(base).as_posix() if pattern.is_absolute() else key)
                names = "\n".join(sorted(_key(p, self.root) for p in matched))
                self._cache[key] = hashlib.sha256(names.encode()).hexdigest()
            else:
                path = self.path(key, module)
                digest = module_digest if module and path.suffix == ".py" else sha256_file
                self._cache[key] = digest(path) if path.is_file() else None
        return self._cache[key]

    def record(self, key: str) -> str | None:
        """The sha256 of the canonical JSON of what a record key (``<path>#<selector>``) names now (None: nothing)."""
        if f"#{key}" not in self._cache:
            path, selector = _records.split(key)
            now = _records.value(self.path(path, module=True), selector)
            text = json.dumps(now, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            self._cache[f"#{key}"] = None if now is None else hashlib.sha256(text.encode()).hexdigest()
        return self._cache[f"#{key}"]


def record_uses(text: str, used: Mapping[str, Iterable[str]], root: Path, hashes: Hashes | None = None) -> dict:
    """The record of what a page used: its ``text``'s sha256, and each module file, read path and record key of
    ``used`` (:func:`take_usage`, absolute paths) by its portable name with the sha256 of its content now; reads
    outside the repository (a temporary cache) are left out."""
    hashes = hashes or Hashes(root)
    modules = {_key(Path(p).resolve(), hashes.root, _PACKAGE.parent) for p in used["modules"]}
    # a read outside the repository (a page's own temporary run cache) is transient and would name a machine path
    reads = {_key(p, hashes.root) for p in used["reads"] if Path(p).resolve().is_relative_to(hashes.root.resolve())}
    records = {
        _key(path, hashes.root, _PACKAGE.parent) + f"#{selector}"
        for path, selector in map(_records.split, used["records"])
    }
    return {
        "source": hashlib.sha256(text.encode()).hexdigest(),
        "modules": {key: hashes.of(key, module=True) for key in sorted(modules)},
        "reads": {key: hashes.of(key) for key in sorted(reads)},
        "records": {key: hashes.record(key) for key in sorted(records)},
    }


def refresh(stored: Mapping[str, Any] | None, text: str, hashes: Hashes) -> dict | None:
    """The record of an executed page (``stored``: its ``metadata["initmem"]``) taken again now: the same modules and
    reads, hashed as they are, and the notebook's ``text``; None when it has no record of this :data:`FORMAT`."""
    if stored is None or stored.get("format") != FORMAT or not isinstance(stored.get("uses"), Mapping):
        return None
    uses = stored["uses"]
    return {
        "source": hashlib.sha256(text.encode()).hexdigest(),
        "modules": {key: hashes.of(key, module=True) for key in sorted(uses.get("modules", {}))},
        "reads": {key: hashes.of(key) for key in sorted(uses.get("reads", {}))},
        "records": {key: hashes.record(key) for key in sorted(uses.get("records", {}))},
    }


def notebook_digest(parameters: Mapping[str, Any], uses: Mapping[str, Any]) -> str:
    """sha256 over the record's format, the page's final parameters and what it used (:func:`record_uses`)."""
    payload = {"format": FORMAT, "parameters": parameters, "uses": uses}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def cells_digest(nb: Any) -> str:
    """The sha256 of what an executed notebook ``nb`` shows: each cell's type, source and outputs (canonical JSON;
    cell metadata, such as execution times, left out)."""
    cells = [[c.get("cell_type"), c.get("source"), c.get("outputs", [])] for c in nb.cells]
    return hashlib.sha256(json.dumps(cells, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def changes(
    stored: Mapping[str, Any] | None,
    parameters: Mapping[str, Any],
    uses: Mapping[str, Any] | None,
    source: str,
    hashes: Hashes,
) -> list[str]:
    """What differs, in words, between a page's stored record (:func:`stored_record`, None: no executed page) and
    now (its final ``parameters`` and its record taken again, :func:`refresh`: None when there is no record to take);
    empty when the page is current.
    ``source`` is the notebook's path, for the words; ``hashes`` finds the tables of the records it names, whose
    kind the words give (``optimizer record sgd changed``, ``the optimizer listing changed``)."""
    if stored is None:
        return ["not executed"]
    if uses is None:
        return ["it records no modules and reads (executed before pages recorded what they used)"]
    found = []
    if stored.get("cells") is None:
        found.append("it records no digest of its cells (executed before pages recorded what they show)")
    elif stored["cells"] != stored["cells_now"]:
        found.append("its cells no longer match their digest (an output or a source was edited after it executed)")
    old_uses = stored["uses"]
    if old_uses.get("source") != uses["source"]:
        found.append(f"its notebook {source} changed")
    old_parameters = stored.get("parameters", {})
    for name in sorted(set(old_parameters) | set(parameters)):
        if name not in parameters:
            found.append(f"parameter {name} is no longer set")
        elif name not in old_parameters:
            found.append(f"parameter {name} is set: {json.dumps(parameters[name])}")
        elif old_parameters[name] != parameters[name]:
            found.append(f"parameter {name}: {json.dumps(old_parameters[name])} -> {json.dumps(parameters[name])}")
    for kind, words in (("modules", "module"), ("reads", "result")):
        for key, now in uses[kind].items():
            before = old_uses[kind].get(key)
            if before == now:
                continue
            if is_listing(key):
                found.append(f"the files matching {key} changed")
            elif now is None:
                found.append(f"{words} {key} is gone")
            elif before is None:
                found.append(f"{words} {key} appeared")
            else:
                found.append(f"{words} {key} changed")
    for key, now in uses["records"].items():
        before = old_uses.get("records", {}).get(key)
        if before != now:
            path, selector = _records.split(key)
            what = _records.describe(hashes.path(path, module=True), selector)
            found.append(f"{what} {'is gone' if now is None else 'appeared' if before is None else 'changed'}")
    if not found and stored.get("digest") != notebook_digest(parameters, uses):
        found.append("its digest does not match its record")
    return found


def stored_record(path: Path) -> dict | None:
    """The record an executed notebook was stored with (``metadata["initmem"]``), with ``cells_now``: the
    :func:`cells_digest` of its cells as they are now (its ``cells``: as they were executed); None if there is no
    readable one."""
    if not path.is_file():
        return None
    import nbformat

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # unreadable or half-written: execute again
        return None
    record = dict(nb.metadata.get("initmem", {}))
    return {**record, "cells_now": cells_digest(nb)} if record else None
