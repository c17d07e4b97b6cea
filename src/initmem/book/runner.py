"""Execute the notebooks of ``notebooks/`` with papermill, at a preset, for the book.

The notebooks are jupytext *percent* ``.py`` files. Each may have a cell tagged ``parameters``;
:func:`run_notebooks` fills it from the preset registry (:mod:`initmem.study.presets`) and from the
user's overrides, executes the notebook in the repository root and writes the executed ``.ipynb``
to ``book/generated/``, which jupyter-book renders without executing anything itself.

The record and explorations. ``book/generated/`` and ``results/<preset>/`` hold the committed record: each
notebook at the preset the book renders it at (:func:`initmem.study.presets.book_preset`), without overrides. A run
with ``-p`` overrides or at another preset is an *exploration*: it goes to
``results/explore/<preset>-<digest of the overrides>/`` (git-ignored; executed notebooks in its ``notebooks/``),
or to folders the user names, never to the record; its pages open with a banner listing every parameter that
differs from the record, and ``initmem book --from FOLDER`` renders them into a separate ``_build`` folder.
Every experiment's sweep is built and validated (:func:`validate_experiment`) before the first notebook runs.

Reuse. The executed notebook's metadata stores a digest (``metadata["initmem"]["digest"]``) of

* the notebook's source text,
* the final parameters,
* every file under ``results/<preset>/<name>/`` and ``results/<preset>/<name>.nc`` (path, size, sha256),
* the source of every ``initmem`` module the notebook names (``initmem.theory``,
  ``from initmem import plots``, ...).

A notebook whose executed copy carries the same digest is not executed again (unless ``force``).
So a page re-executes when its code, its parameters or the results it reads change, and only then.

Example::

    from initmem.book.runner import run_notebooks
    results = run_notebooks(preset="cpu", only="04", parameters={"batch_sizes": [32, 512]})
    assert all(r.ok for r in results)
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import dataclasses
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base.files import atomic_write
from ..base.paths import EXECUTOR_ENV, SCHEDULER_ENV, TRAIN_ENV, default_root, find_repo_root
from ..study import presets as _presets
from ..study.layout import EXPLORE_DIR, RECORD_OUT_DIR, RECORD_RESULTS_DIR
from .progress import RunProgress, planned_runs

__all__ = [
    "REPO_ROOT",
    "NOTEBOOKS_DIR",
    "NOTEBOOKS",
    "NotebookResult",
    "ParameterError",
    "discover_notebooks",
    "select_notebooks",
    "notebook_parameter_names",
    "parse_parameter_value",
    "notebook_digest",
    "parameter_defaults",
    "validate_experiment",
    "exploration_tag",
    "is_exploration",
    "explore_folder",
    "record_differences",
    "run_notebooks",
    "add_arguments",
    "main",
]

log = logging.getLogger("initmem.book.runner")

#: Parameters the runner fills in itself when a notebook's parameters cell declares them.
INJECTED = ("preset", "results_dir")


#: The repository root found from the working directory when this module was imported (``$INITMEM_ROOT``, else the
#: nearest folder at or above it whose pyproject.toml names the project initmem; see :mod:`initmem.base.paths`).
#: Functions take an explicit ``cwd``/``root`` instead; the command line resolves ``--root`` itself.
#:
#: :meta hide-value:
REPO_ROOT: Path = default_root()
NOTEBOOKS_DIR: Path = REPO_ROOT / "notebooks"
#: Inside an exploration folder: the executed notebooks (its results sit beside, under ``<preset>/<name>/``).
EXPLORE_NOTEBOOKS = "notebooks"
DEFAULT_OUT_DIR: Path = REPO_ROOT / RECORD_OUT_DIR
DEFAULT_RESULTS_DIR: Path = REPO_ROOT / RECORD_RESULTS_DIR
#: Where a failed notebook's partially executed copy goes, inside ``out_dir``.
FAILED_SUBDIR = "_failed"


class ParameterError(ValueError):
    """A parameter is unknown to a notebook, or its value is not JSON-like."""


@dataclasses.dataclass
class NotebookResult:
    """What happened to one notebook."""

    name: str
    status: str  # "executed", "reused" or "failed"
    output: Path | None  # the executed notebook (for a failure: the partially executed copy)
    parameters: dict[str, Any]
    digest: str
    seconds: float = 0.0
    cell_index: int | None = None  # failing cell (0-based index in the notebook), if known
    error: str | None = None  # "ename: evalue" of the failure

    @property
    def ok(self) -> bool:
        return self.status != "failed"

    def summary(self) -> str:
        """One line: name, status, time and output (or the failing cell and error)."""
        return str(self)

    def __str__(self) -> str:
        if self.ok:
            return f"{self.name}: {self.status} ({self.seconds:.1f} s) -> {self.output}"
        where = f" in cell {self.cell_index}" if self.cell_index is not None else ""
        return f"{self.name}: FAILED{where}: {self.error} (see {self.output})"


# --------------------------------------------------------------------------- discovery


def discover_notebooks(notebooks_dir: str | Path | None = None) -> tuple[str, ...]:
    """Names of the jupytext notebooks in ``notebooks_dir`` (``notebooks/*.py``), sorted."""
    d = Path(notebooks_dir) if notebooks_dir is not None else NOTEBOOKS_DIR
    if not d.is_dir():
        return ()
    return tuple(sorted(p.stem for p in d.glob("*.py") if not p.name.startswith(("_", "."))))


#: The notebooks present when this module was imported (call :func:`discover_notebooks` for a fresh list).
NOTEBOOKS: tuple[str, ...] = discover_notebooks()


def select_notebooks(only: str | Iterable[str] | None, available: Sequence[str]) -> list[str]:
    """The notebooks picked by ``only``: names or name prefixes, a list or a comma-separated string.

    ``None`` (or empty) selects all. ``"01,04"`` selects ``01_optimizers`` and ``04_batch_size``;
    ``"T"`` every theory notebook. A selector that matches nothing is an error.
    """
    if only is None:
        return list(available)
    if isinstance(only, str):
        selectors = [s.strip() for s in only.split(",")]
    else:
        selectors = [str(s).strip() for s in only]
    selectors = [s for s in selectors if s]
    if not selectors:
        return list(available)
    chosen: set[str] = set()
    for sel in selectors:
        sel = sel[:-3] if sel.endswith(".py") else sel
        matches = [n for n in available if n == sel or n.startswith(sel)]
        if not matches:
            raise ValueError(
                f"no notebook matches {sel!r}; available notebooks: {', '.join(available) or '(none)'}"
            )
        chosen.update(matches)
    return [n for n in available if n in chosen]


# --------------------------------------------------------------------------- parameters


def _parameters_cell(nb) -> Any | None:
    for cell in nb.cells:
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


def notebook_parameter_names(nb) -> list[str]:
    """Names assigned at top level in the notebook's ``parameters`` cell (empty if it has none)."""
    cell = _parameters_cell(nb)
    if cell is None:
        return []
    source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
    # Drop IPython magics so that ast can parse the cell.
    source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    names: list[str] = []
    for node in ast.parse(source).body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Name) and t.id not in names:
                    names.append(t.id)
    return names


def parse_parameter_value(text: str) -> Any:
    """Turn a command-line string into a parameter value: JSON, else YAML, else the raw string.

    >>> parse_parameter_value("[32, 512]")
    [32, 512]
    >>> parse_parameter_value("1e-3")
    0.001
    >>> parse_parameter_value("sgd")
    'sgd'
    """
    if not isinstance(text, str):
        return _jsonable(text, "value")
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        import yaml

        value = yaml.safe_load(text)
        json.dumps(value, allow_nan=True)  # dates and other YAML-only types fall back to the string
        return value
    except Exception:
        return text


def _jsonable(value: Any, where: str) -> Any:
    """``value`` with tuples turned into lists; ``ParameterError`` for anything not JSON-like."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, where) for v in value]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ParameterError(f"{where}: dict keys must be strings, got {k!r}")
            out[k] = _jsonable(v, where)
        return out
    # numpy scalars and the like
    item = getattr(value, "item", None)
    if callable(item):
        v = item()
        if isinstance(v, (bool, int, float, str)):
            return v
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise ParameterError(
        f"{where}: {type(value).__name__} value {value!r} is not JSON-like "
        "(papermill parameters must be numbers, strings, booleans, None, lists or dicts)"
    )


def _final_parameters(
    name: str,
    declared: Sequence[str],
    preset: str,
    preset_params: Mapping[str, Any],
    user_params: Mapping[str, Any],
    results_dir: Path,
) -> dict[str, Any]:
    allowed = [p for p in declared if p not in INJECTED]
    allowed_txt = ", ".join(allowed) if allowed else "(none: the notebook has no parameters cell)"
    for p in user_params:
        if p in INJECTED:
            raise ParameterError(f"{p!r} is set by the runner; use the {p.replace('_', '-')} option instead")
    for source, params in (("preset " + repr(preset), preset_params), ("the command line", user_params)):
        unknown = [p for p in params if p not in allowed]
        if unknown:
            raise ParameterError(
                f"notebook {name!r} has no parameter {', '.join(map(repr, unknown))} (from {source}); "
                f"its parameters are: {allowed_txt}"
            )
    final: dict[str, Any] = {}
    final.update(preset_params)
    final.update(user_params)
    if "preset" in declared:
        final["preset"] = preset
    if "results_dir" in declared:
        final["results_dir"] = str(results_dir)
    return {k: _jsonable(v, f"notebook {name!r}, parameter {k!r}") for k, v in final.items()}


def parameter_defaults(nb) -> dict[str, Any]:
    """The literal values assigned in the notebook's ``parameters`` cell (names with non-literal values are left out)."""
    cell = _parameters_cell(nb)
    if cell is None:
        return {}
    source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
    source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    values: dict[str, Any] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(ValueError, SyntaxError, TypeError):
                values[node.targets[0].id] = _jsonable(ast.literal_eval(node.value), node.targets[0].id)
    return values


def validate_experiment(name: str, parameters: Mapping[str, Any], overridden: Iterable[str] = ()) -> None:
    """Build experiment ``name``'s sweep from ``parameters`` and validate every run's config, before anything runs.

    Only the experiments of :data:`initmem.study.registry.EXPERIMENT_SPECS` are checked (the others build no sweep).
    Raises :class:`ParameterError` with one line naming the notebook and the parameter, e.g.
    ``notebook '01_optimizers', parameter 'sigma_ws': sigma_w: must be > 0, got -1.0 (sweep point ...)``.
    """
    from ..study.registry import EXPERIMENT_SPECS, experiment_spec
    from ..sweeps.spec import SweepSpec

    if name not in EXPERIMENT_SPECS:
        return
    spec: dict[str, Any] = {}
    try:
        spec = experiment_spec(name, parameters)
        SweepSpec.from_dict(spec)
    except (ValueError, TypeError) as exc:
        message = " ".join(str(exc).split())
        param = _parameter_behind(message, spec, parameters, list(overridden))
        where = f"notebook {name!r}" + (f", parameter {param!r}" if param else "")
        raise ParameterError(f"{where}: {message}") from None


def _parameter_behind(message: str, spec: Mapping[str, Any], parameters: Mapping[str, Any],
                      overridden: Sequence[str]) -> str | None:
    """The notebook parameter that an error about a sweep field (``sigma_w: ...``, ``grid.seed: ...``) came from."""
    field = message.split(":", 1)[0].strip().split(".", 1)[-1]  # "grid.seed" -> "seed"
    axes = {**spec.get("grid", {}), **spec.get("zip", {})}
    if field in axes:
        for name in (*overridden, *parameters):
            value = parameters.get(name)
            if isinstance(value, (list, tuple)) and list(value) == list(axes[field]):
                return name
    return field if field in parameters else None


# --------------------------------------------------------------------------- exploration vs the record


def exploration_tag(preset: str, parameters: Mapping[str, Any] | None) -> str:
    """``<preset>-defaults``, or ``<preset>-<10 hex digits of the overrides' digest>``: an exploration's folder."""
    if not parameters:
        return f"{preset}-defaults"
    blob = json.dumps(_jsonable(dict(parameters), "parameters"), sort_keys=True, separators=(",", ":"))
    return f"{preset}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def is_exploration(name: str, preset: str, parameters: Mapping[str, Any] | None) -> bool:
    """Whether running ``name`` at ``preset`` with these overrides departs from the committed record
    (any override, or a preset other than :func:`initmem.study.presets.book_preset`)."""
    return bool(parameters) or preset != _presets.book_preset(name)


def explore_folder(root: str | Path, preset: str, parameters: Mapping[str, Any] | None) -> Path:
    """``<root>/results/explore/<tag>``: an exploration's results; its executed notebooks are in ``notebooks/``."""
    return Path(root) / EXPLORE_DIR / exploration_tag(preset, parameters)


def _destinations(name: str, preset: str, user_params: Mapping[str, Any], root: Path,
                  out_dir: Path | None, results_dir: Path | None) -> tuple[Path, Path, bool]:
    """(executed-notebook folder, results folder, exploring) for one notebook; never the record when exploring."""
    exploring = is_exploration(name, preset, user_params)
    record_out, record_results = root / RECORD_OUT_DIR, root / RECORD_RESULTS_DIR
    if not exploring:
        return (out_dir or record_out), (results_dir or record_results), False
    explore = explore_folder(root, preset, user_params)
    out = out_dir or explore / EXPLORE_NOTEBOOKS
    results = results_dir or explore
    why = "parameter overrides (-p)" if user_params else f"preset {preset!r} (the book renders it at {_presets.book_preset(name)!r})"
    for chosen, record, option in ((out, record_out, "--out-dir"), (results, record_results, "--results-dir")):
        if chosen.resolve() == record.resolve():
            raise ParameterError(
                f"{option}: {name} with {why} is an exploration and may not write into {record} (the committed "
                f"record); leave {option} out (default: {explore}) or choose another folder"
            )
    return out, results, True


def record_differences(name: str, defaults: Mapping[str, Any], preset: str,
                       final: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``{parameter: (committed value, this run's value)}`` for every parameter that differs from the record
    (the notebook's defaults and its book preset's values); ``preset`` is listed when it differs."""
    book = _presets.book_preset(name)
    record = {**defaults, **_presets.notebook_parameters(book, name), "preset": book}
    here = {**defaults, **final, "preset": preset}
    return {k: (record.get(k), v) for k, v in here.items() if k != "results_dir" and record.get(k) != v}


def exploration_banner(name: str, differences: Mapping[str, tuple[Any, Any]], results_dir: str) -> str:
    """The markdown cell put at the top of an exploration's executed notebook."""
    lines = [
        "```{warning}",
        f"**Exploration, not the committed record.** This page was executed with values that differ from those "
        f"the book renders `{name}` with; its numbers are not the ones of the reproduction ledger. "
        f"Results: `{results_dir}`.",
        "",
        "| parameter | committed | this run |",
        "|---|---|---|",
    ]
    for key, (record, here) in differences.items():
        lines.append(f"| `{key}` | `{json.dumps(record)}` | `{json.dumps(here)}` |")
    lines.append("```")
    return "\n".join(lines)


#: How the rendered book shows the parameter cells of an executed notebook (myst-nb cell tags): the defaults cell
#: (every experiment parameter None, "take the preset's value") is removed, the values papermill injected are
#: collapsed. Readers see the prose first and can still open the values a page was computed with (each experiment
#: chapter also ends with the table of them).
PARAMETER_CELL_TAGS = {"parameters": "remove-cell", "injected-parameters": "hide-input"}


def _collapse_parameter_cells(nb) -> None:
    """Tag the parameter cells of an executed notebook as :data:`PARAMETER_CELL_TAGS` says."""
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") != "code":
            continue
        for role, shown in PARAMETER_CELL_TAGS.items():
            if role in tags and shown not in tags:
                cell.metadata["tags"] = tags = [*tags, shown]


def _add_banner(nb, text: str) -> None:
    """Insert ``text`` as a markdown cell after the notebook's title cell (the first cell, when it is markdown)."""
    import nbformat

    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["tags"] = ["initmem-exploration"]
    at = 1 if nb.cells and nb.cells[0].get("cell_type") == "markdown" else 0
    nb.cells.insert(at, cell)


# --------------------------------------------------------------------------- digest


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _portable(path: Path, root: Path) -> Path:
    """``path`` relative to ``root`` when inside it (notebooks run with cwd=root), so that executed
    notebooks and their digests do not depend on where the repository is checked out."""
    try:
        return path.relative_to(root)
    except ValueError:
        return path


def _result_files(results_dir: Path, preset: str, name: str) -> list[Path]:
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
_FROM_RE = re.compile(r"^[ \t]*from[ \t]+initmem((?:\.\w+)*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w \t,]+))", re.MULTILINE)


def _module_files(dotted: str) -> list[Path]:
    """The source files behind ``initmem.<dotted>``: the module's file, or every file of a package (whose names a
    notebook may use through its re-exports, as ``theory.sgd``); empty if it is neither."""
    pkg = Path(__file__).resolve().parents[1]
    rel = Path(*dotted.split(".")) if dotted else Path()
    if (pkg / rel.with_suffix(".py")).is_file() and dotted:
        return [pkg / rel.with_suffix(".py")]
    if (pkg / rel / "__init__.py").is_file():
        return sorted((pkg / rel).rglob("*.py"))
    return []


@functools.lru_cache(maxsize=None)
def _defining_file(name: str) -> Path | None:
    """The package file that defines function or class ``name`` at its top level (the first in path order), or None."""
    pkg = Path(__file__).resolve().parents[1]
    for path in sorted(pkg.rglob("*.py")):
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
        "results": [[rel(p), p.stat().st_size, _sha256_file(p)] for p in result_files],
        "modules": [[p.relative_to(Path(__file__).resolve().parents[1]).as_posix(), _sha256_file(p)]
                    for p in _initmem_modules(source)],
    }
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def _stored_digest(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        import nbformat

        nb = nbformat.read(path, as_version=4)
        return nb.metadata.get("initmem", {}).get("digest")
    except Exception:  # unreadable or half-written: execute again
        return None


# --------------------------------------------------------------------------- execution


@contextlib.contextmanager
def _kernel_environment(root: Path) -> Iterator[None]:
    """Environment for the kernels: the inline matplotlib backend (glue needs it), ``initmem`` importable, the root,
    and :data:`initmem.base.paths.TRAIN_ENV`: running ``initmem experiments`` asks for the missing runs."""
    saved = {k: os.environ.get(k) for k in ("MPLBACKEND", "PYTHONPATH", "INITMEM_ROOT", TRAIN_ENV)}
    os.environ.pop("MPLBACKEND", None)  # a forced Agg would make glue paste text instead of images
    src = str(root / "src")
    paths = [p for p in (os.environ.get("PYTHONPATH") or "").split(os.pathsep) if p]
    if (root / "src" / "initmem").is_dir() and src not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([src, *paths])
    os.environ["INITMEM_ROOT"] = str(root)
    os.environ[TRAIN_ENV] = "1"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _failure_details(exc: BaseException) -> tuple[int | None, str]:
    cell_index = getattr(exc, "cell_index", None)
    ename = getattr(exc, "ename", None)
    evalue = getattr(exc, "evalue", None)
    if ename is not None:
        return cell_index, f"{ename}: {evalue}"
    return cell_index, f"{type(exc).__name__}: {exc}"


def run_notebooks(
    preset: str = "smoke",
    only: str | Iterable[str] | None = None,
    parameters: Mapping[str, Any] | None = None,
    out_dir: str | Path | None = None,
    results_dir: str | Path | None = None,
    force: bool = False,
    *,
    notebooks_dir: str | Path | None = None,
    cwd: str | Path | None = None,
    kernel_name: str = "python3",
    execution_timeout: float | None = None,
    progress: bool = True,
) -> list[NotebookResult]:
    """Execute the selected notebooks at ``preset`` and write them to ``<out folder>/<name>.ipynb``.

    Parameters
    ----------
    preset
        One of :data:`initmem.study.presets.PRESETS`.
    only
        Names or prefixes (``"01,04"``, ``["T1", "T2"]``); ``None`` runs every notebook.
    parameters
        Overrides applied on top of the preset's parameters, for every selected notebook. Each name must
        be defined in the parameters cell of every selected notebook, and every run of an experiment's sweep
        (:data:`initmem.study.registry.EXPERIMENT_SPECS`) must be a valid config; otherwise a :class:`ParameterError`
        naming the parameter is raised before anything runs. ``preset`` and ``results_dir`` are injected by the
        runner when a notebook declares them.
    out_dir, results_dir
        The committed record, ``book/generated`` and ``results``, for a notebook run at its book preset
        (:func:`initmem.study.presets.book_preset`) without overrides. Any other run is an *exploration*: by default
        it goes to ``results/explore/<preset>-<digest of the overrides>/`` (:func:`explore_folder`; executed
        notebooks in its ``notebooks/``), its executed notebooks open with a banner listing what differs from the
        record, and an explicit folder may not be the record's.
    force
        Execute even when the executed notebook's digest is unchanged.
    notebooks_dir, cwd
        Where the ``.py`` notebooks are (default ``<root>/notebooks``) and the repository root where they run
        (default: :data:`REPO_ROOT`, found from the working directory).

    Returns
    -------
    list of :class:`NotebookResult`, one per selected notebook, in order. A failing notebook does not
    stop the others; check ``all(r.ok for r in results)``.
    """
    import jupytext
    import nbformat
    import papermill
    from tqdm.auto import tqdm

    _presets.check_preset(preset)
    root = Path(cwd).resolve() if cwd is not None else REPO_ROOT
    nb_dir = Path(notebooks_dir) if notebooks_dir is not None else root / "notebooks"
    out_choice = Path(out_dir) if out_dir is not None else None
    results_choice = Path(results_dir).resolve() if results_dir is not None else None
    user_params = {k: parse_parameter_value(v) if isinstance(v, str) else v for k, v in (parameters or {}).items()}

    available = discover_notebooks(nb_dir)
    names = select_notebooks(only, available)
    if not names:
        log.warning("no notebooks in %s", nb_dir)
        return []

    # Read and validate everything before running anything.
    plans = []
    for name in names:
        path = nb_dir / f"{name}.py"
        text = path.read_text(encoding="utf-8")
        nb = jupytext.reads(text, fmt="py:percent")
        declared = notebook_parameter_names(nb)
        out, res, exploring = _destinations(name, preset, user_params, root, out_choice, results_choice)
        res = res.resolve()
        final = _final_parameters(
            name, declared, preset, _presets.notebook_parameters(preset, name), user_params, _portable(res, root)
        )
        defaults = parameter_defaults(nb)
        validate_experiment(name, {**defaults, **final}, overridden=list(user_params))
        if exploring:
            banner = exploration_banner(name, record_differences(name, defaults, preset, final), _relative(res, root))
            _add_banner(nb, banner)
            text += "\n# exploration banner\n" + banner  # the banner is part of what the digest covers
        digest = notebook_digest(text, final, _result_files(res, preset, name), root)
        runs = planned_runs(name, {**defaults, **final}, res, preset)
        plans.append((name, path, nb, final, digest, out, exploring, runs))

    results: list[NotebookResult] = []
    bar = tqdm(plans, desc=f"notebooks ({preset})", unit="nb", disable=not progress)
    for name, path, nb, final, digest, out, exploring, runs in bar:
        bar.set_postfix_str(name)
        out.mkdir(parents=True, exist_ok=True)
        out_path = out / f"{name}.ipynb"
        if not force and _stored_digest(out_path) == digest:
            log.info("%s: unchanged, reusing %s", name, out_path)
            results.append(NotebookResult(name, "reused", out_path, final, digest))
            continue
        log.info("%s: executing with %s%s", name, json.dumps(final, sort_keys=True), " (exploration)" * exploring)
        nb = copy.deepcopy(nb)
        nb.metadata.setdefault("kernelspec", {"name": kernel_name, "display_name": "Python 3", "language": "python"})
        tmp_path = out / f".{name}.running.ipynb"
        t0 = time.perf_counter()
        try:
            with _kernel_environment(root), RunProgress(name, *runs, enabled=progress):
                papermill.execute_notebook(
                    nb,
                    str(tmp_path),
                    parameters=final,
                    kernel_name=kernel_name,
                    cwd=str(root),
                    progress_bar=False,
                    execution_timeout=execution_timeout,
                    **_quiet_kernel_options(),
                )
        except Exception as exc:  # noqa: BLE001 - any failure is reported, the next notebook still runs
            seconds = time.perf_counter() - t0
            cell_index, error = _failure_details(exc)
            failed_path = None
            if tmp_path.exists():
                failed_dir = out / FAILED_SUBDIR
                failed_dir.mkdir(exist_ok=True)
                failed_path = failed_dir / f"{name}.ipynb"
                shutil.move(str(tmp_path), failed_path)
            where = f" in cell {cell_index}" if cell_index is not None else ""
            log.error("%s: failed%s after %.1f s: %s (partial output: %s)", name, where, seconds, error, failed_path)
            results.append(NotebookResult(name, "failed", failed_path, final, digest, seconds, cell_index, error))
            continue
        seconds = time.perf_counter() - t0
        executed = nbformat.read(tmp_path, as_version=4)
        _collapse_parameter_cells(executed)
        executed.metadata["initmem"] = {
            "digest": digest,
            "preset": preset,
            "parameters": final,
            "source": _relative(path, root),
            "exploration": exploring,
        }
        atomic_write(out_path, lambda tmp: nbformat.write(executed, str(tmp)))
        tmp_path.unlink(missing_ok=True)
        stale = out / FAILED_SUBDIR / f"{name}.ipynb"
        if stale.exists():
            stale.unlink()
        log.info("%s: executed in %.1f s -> %s", name, seconds, out_path)
        results.append(NotebookResult(name, "executed", out_path, final, digest, seconds))
    return results


def _quiet_kernel_options() -> dict[str, Any]:
    """papermill options that start the kernel over IPC (local sockets) rather than TCP.

    Over TCP, ipykernel logs "Kernel is running over TCP without encryption ..." on every start (ipykernel
    >= 7, ``IPKernelApp.init_sockets``). IPC needs Unix sockets, which Windows lacks: there TCP stays.
    """
    if os.name == "nt":
        return {}
    return {"kernel_manager_class": "initmem.book.runner.IPCKernelManager"}


def __getattr__(name: str) -> Any:
    """``IPCKernelManager`` is built on first use, so importing this module does not import jupyter_client."""
    if name == "IPCKernelManager":
        from jupyter_client import AsyncKernelManager
        from traitlets import CaselessStrEnum

        class IPCKernelManager(AsyncKernelManager):
            """A kernel manager whose kernels listen on IPC sockets in a private temporary folder (removed with the
            kernel), never in the working directory (jupyter_client's default there is ``./kernel-ipc-<port>``)."""

            transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

            def _ip_default(self) -> str:
                self._socket_dir = tempfile.mkdtemp(prefix="initmem-kernel-")
                return os.path.join(self._socket_dir, "kernel-ipc")

            async def _async_cleanup_resources(self, restart: bool = False) -> None:
                await super()._async_cleanup_resources(restart=restart)
                if not restart and getattr(self, "_socket_dir", None):
                    shutil.rmtree(self._socket_dir, ignore_errors=True)

        IPCKernelManager.__module__ = __name__
        globals()[name] = IPCKernelManager
        return IPCKernelManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``initmem experiments`` options to ``parser``."""
    parser.add_argument(
        "--preset", default="smoke", choices=_presets.PRESETS, help="compute budget (default: smoke)"
    )
    parser.add_argument(
        "--only", default=None, help="comma-separated notebook names or prefixes, e.g. 01,04 or T (default: all)"
    )
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override a notebook parameter; VALUE is JSON or YAML, e.g. -p batch_sizes '[32, 512]'",
    )
    parser.add_argument("--force", action="store_true", help="execute even if nothing changed")
    parser.add_argument(
        "--out-dir", default=None,
        help="where the executed notebooks go (default: book/generated at a notebook's book preset without -p; "
             "otherwise results/explore/<preset>-<digest>/notebooks)",
    )  # fmt: skip
    parser.add_argument(
        "--results-dir", default=None,
        help="results folder (default: results at the book preset without -p; otherwise "
             "results/explore/<preset>-<digest>)",
    )  # fmt: skip
    _add_executor_arguments(parser)
    add_root_argument(parser)
    return parser


def _add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """``--executor`` and the cluster flags of :func:`initmem.sweeps.cluster.add_cluster_arguments`."""
    from ..sweeps.cluster import add_cluster_arguments

    parser.add_argument(
        "--executor", default=None, choices=("serial", "processes", "dask", "slurm"),
        help="how the notebooks' sweeps train (default: each preset's own); dask with --scheduler: a running cluster; "
             "slurm: workers started as SLURM jobs, for all the notebooks. An execution setting: the pages and "
             "their digests do not change with it",
    )  # fmt: skip
    add_cluster_arguments(parser)


@contextlib.contextmanager
def _execution(args: argparse.Namespace) -> Iterator[None]:
    """The kernels' :data:`~initmem.base.paths.EXECUTOR_ENV` and :data:`~initmem.base.paths.SCHEDULER_ENV` for
    ``--executor`` (nothing without it). A ``--scheduler`` is reached once first (a one-line error if nothing answers);
    ``slurm`` starts the SLURM cluster here, for every notebook, and cancels its jobs afterwards."""
    from ..sweeps.cluster import cluster_from_args, open_client

    executor = getattr(args, "executor", None)
    if executor is None:
        yield
        return
    scheduler, slurm = cluster_from_args(args, executor)
    saved = {k: os.environ.get(k) for k in (EXECUTOR_ENV, SCHEDULER_ENV)}
    with open_client(scheduler, slurm) as client:
        os.environ[EXECUTOR_ENV] = "dask" if executor == "slurm" else executor
        if client is not None:
            os.environ[SCHEDULER_ENV] = client.scheduler.address
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--root DIR`` option (default: ``$INITMEM_ROOT``, else the initmem checkout containing the working dir)."""
    parser.add_argument(
        "--root", default=None, metavar="DIR",
        help="the repository (default: $INITMEM_ROOT, else the folder at or above the working directory whose "
             "pyproject.toml names initmem)",
    )  # fmt: skip


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Run ``initmem experiments``; returns the exit status (1 if any notebook failed, 2 for bad arguments)."""
    if args is None or not isinstance(args, argparse.Namespace):
        args = add_arguments(argparse.ArgumentParser(prog="initmem experiments")).parse_args(args)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        root = find_repo_root(getattr(args, "root", None))
        params = {name: parse_parameter_value(value) for name, value in (args.parameter or [])}
        with _execution(args):
            results = run_notebooks(
                preset=args.preset,
                only=args.only,
                parameters=params,
                out_dir=args.out_dir,
                results_dir=args.results_dir,
                force=args.force,
                cwd=root,
            )
    except ValueError as exc:  # ParameterError, RootError, ConfigError (a cluster), unknown preset or selector
        message = " ".join(str(exc).split())
        print(f"initmem experiments: error: {message}", file=sys.stderr)
        return 2
    for r in results:
        print(r)
    explored = sorted({str(r.output.parent) for r in results if r.ok and r.output is not None
                       and r.output.parent.resolve() != (root / RECORD_OUT_DIR).resolve()})  # fmt: skip
    for folder in explored:
        print(f"exploration written to {folder}; render it with: initmem book --from {folder}")
    failed = [r for r in results if not r.ok]
    if failed:
        print(f"{len(failed)} of {len(results)} notebooks failed: {', '.join(r.name for r in failed)}")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
