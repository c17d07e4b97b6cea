"""The digest of a notebook's execution: what decides whether a page is executed again.

The executed notebook's metadata stores a digest (``metadata["initmem"]["digest"]``, :func:`notebook_digest`) of

* the notebook's source text,
* the final parameters,
* every result file the notebook reads (:func:`result_files`: path, size, sha256),
* the source of every ``initmem`` module the notebook names (``initmem.theory``, ``from initmem.study import
  plots``, ...).

A notebook whose executed copy carries the same digest (:func:`stored_digest`) is not executed again, so a page
re-executes when its code, its parameters or the results it reads change, and only then.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..study import presets as _presets

__all__ = ["sha256_file", "portable", "result_files", "notebook_digest", "stored_digest"]

#: The package's folder (``src/initmem``): the modules a digest covers are named relative to it.
_PACKAGE = Path(__file__).resolve().parents[1]


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def portable(path: Path, root: Path) -> Path:
    """``path`` relative to ``root`` when inside it (notebooks run with cwd=root), so that executed
    notebooks and their digests do not depend on where the repository is checked out."""
    try:
        return path.relative_to(root)
    except ValueError:
        return path


def result_files(results_dir: Path, preset: str, name: str) -> list[Path]:
    """The result files a notebook depends on: its own and those of the notebooks it reads
    (``presets.NOTEBOOK_READS``), so that 06, 07 and 99 re-execute when 01-05 change. Only netCDF files count:
    a sweep's temporary files, claim files and rejected files never change what a notebook reads."""
    files: list[Path] = []
    for source in (name, *_presets.NOTEBOOK_READS.get(name, ())):
        d = results_dir / preset / source
        if d.is_dir():
            files.extend(p for p in d.rglob("*.nc") if p.is_file())
        nc = results_dir / preset / f"{source}.nc"
        if nc.is_file():
            files.append(nc)
    return sorted(set(files))


_MODULE_RE = re.compile(r"\binitmem((?:\.[A-Za-z_]\w*)+)")
_FROM_RE = re.compile(
    r"^[ \t]*from[ \t]+initmem((?:\.\w+)*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w \t,]+))", re.MULTILINE
)


def _module_files(dotted: str) -> list[Path]:
    """The source files behind ``initmem.<dotted>``: the module's file, or every file of a package (whose names a
    notebook may use through its re-exports, as ``theory.sgd``); empty if it is neither."""
    rel = Path(*dotted.split(".")) if dotted else Path()
    if (_PACKAGE / rel.with_suffix(".py")).is_file() and dotted:
        return [_PACKAGE / rel.with_suffix(".py")]
    if (_PACKAGE / rel / "__init__.py").is_file():
        return sorted((_PACKAGE / rel).rglob("*.py"))
    return []


@functools.cache
def _defining_file(name: str) -> Path | None:
    """The package file that defines function or class ``name`` at its top level (the first in path order), or None."""
    for path in sorted(_PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return path
    return None


def _initmem_modules(source: str) -> list[Path]:
    """The files of the ``initmem`` modules that ``source`` uses: ``initmem.study.plots`` (the longest part that is a
    module), ``from initmem.study import plots, stats`` (those modules; a package's whole folder when a name is not
    a module), and the modules that define the facade's names (``from initmem import measure_init_memory``)."""
    files: set[Path] = set()
    for path in _MODULE_RE.findall(_FROM_RE.sub("", source)):
        parts = path.strip(".").split(".")
        for k in range(len(parts), 0, -1):
            found = _module_files(".".join(parts[:k]))
            if found:
                files.update(found)
                break
    for package, parenthesised, plain in _FROM_RE.findall(source):
        package, group = package.strip("."), parenthesised or plain
        for name in (n.strip().split(" as ")[0].strip() for n in group.split(",")):
            if not name:
                continue
            if not package and _defining_file(name) is not None:
                files.add(_defining_file(name))
            else:
                files.update(_module_files(f"{package}.{name}".strip(".")) or _module_files(package))
    return sorted(files)


def notebook_digest(source: str, parameters: Mapping[str, Any], result_files: Iterable[Path], root: Path) -> str:
    """sha256 over the notebook source, its final parameters, the result files and the initmem modules it uses."""

    def rel(p: Path) -> str:
        try:
            return str(p.resolve().relative_to(root.resolve()))
        except ValueError:
            return str(p)

    payload = {
        "source": source,
        "parameters": parameters,
        "results": [[rel(p), p.stat().st_size, sha256_file(p)] for p in result_files],
        "modules": [[p.relative_to(_PACKAGE).as_posix(), sha256_file(p)] for p in _initmem_modules(source)],
    }
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def stored_digest(path: Path) -> str | None:
    """The digest an executed notebook was stored with (``metadata["initmem"]["digest"]``); None if there is none."""
    if not path.is_file():
        return None
    try:
        import nbformat

        nb = nbformat.read(path, as_version=4)
        return nb.metadata.get("initmem", {}).get("digest")
    except Exception:  # unreadable or half-written: execute again
        return None
