"""Execute the notebooks of ``notebooks/`` with papermill, at a preset, for the book.

The notebooks are jupytext *percent* ``.py`` files. Each may have a cell tagged ``parameters``;
:func:`run_notebooks` fills it from the preset registry (:mod:`initmem.presets`) and from the
user's overrides, executes the notebook in the repository root and writes the executed ``.ipynb``
to ``book/generated/``, which jupyter-book renders without executing anything itself.

Reuse. The executed notebook's metadata stores a digest (``metadata["initmem"]["digest"]``) of

* the notebook's source text,
* the final parameters,
* every file under ``results/<preset>/<name>/`` and ``results/<preset>/<name>.nc`` (path, size, sha256),
* the source of every ``initmem`` module the notebook names (``initmem.theory``,
  ``from initmem import plots``, ...).

A notebook whose executed copy carries the same digest is not executed again (unless ``force``).
So a page re-executes when its code, its parameters or the results it reads change, and only then.

Example::

    from initmem.experiments import run_notebooks
    results = run_notebooks(preset="cpu", only="04", parameters={"batch_sizes": [32, 512]})
    assert all(r.ok for r in results)
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import dataclasses
import hashlib
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import presets as _presets

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
    "run_notebooks",
    "add_arguments",
    "main",
]

log = logging.getLogger("initmem.experiments")

#: Parameters the runner fills in itself when a notebook's parameters cell declares them.
INJECTED = ("preset", "results_dir")


def _find_repo_root() -> Path:
    env = os.environ.get("INITMEM_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parents[2]  # src/initmem/experiments.py -> repository root
    if (here / "notebooks").is_dir() or (here / "pyproject.toml").is_file():
        return here
    return Path.cwd().resolve()


#: The repository root (override with the environment variable ``INITMEM_ROOT``).
REPO_ROOT: Path = _find_repo_root()
NOTEBOOKS_DIR: Path = REPO_ROOT / "notebooks"
DEFAULT_OUT_DIR: Path = REPO_ROOT / "book" / "generated"
DEFAULT_RESULTS_DIR: Path = REPO_ROOT / "results"
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
    (``presets.NOTEBOOK_READS``), so that 06, 07 and 99 re-execute when 01-05 change."""
    files: list[Path] = []
    for source in (name, *_presets.NOTEBOOK_READS.get(name, ())):
        d = results_dir / preset / source
        if d.is_dir():
            files.extend(p for p in d.rglob("*") if p.is_file())
        nc = results_dir / preset / f"{source}.nc"
        if nc.is_file():
            files.append(nc)
    return sorted(set(files))


_MODULE_RE = re.compile(r"\binitmem\.([A-Za-z_]\w*)")
_FROM_RE = re.compile(r"^\s*from\s+initmem\s+import\s+\(?([\w\s,]+)\)?", re.MULTILINE)


def _initmem_modules(source: str) -> list[Path]:
    """The files of the ``initmem`` modules that ``source`` names explicitly."""
    pkg = Path(__file__).resolve().parent
    names = set(_MODULE_RE.findall(source))
    for group in _FROM_RE.findall(source):
        names.update(n.strip().split(" as ")[0].strip() for n in group.split(","))
    return sorted(pkg / f"{n}.py" for n in names if (pkg / f"{n}.py").is_file())


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
        "modules": [[p.name, _sha256_file(p)] for p in _initmem_modules(source)],
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
    """Environment for the kernels: the inline matplotlib backend (glue needs it) and ``initmem`` importable."""
    saved = {k: os.environ.get(k) for k in ("MPLBACKEND", "PYTHONPATH", "INITMEM_ROOT")}
    os.environ.pop("MPLBACKEND", None)  # a forced Agg would make glue paste text instead of images
    src = str(root / "src")
    paths = [p for p in (os.environ.get("PYTHONPATH") or "").split(os.pathsep) if p]
    if (root / "src" / "initmem").is_dir() and src not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([src, *paths])
    os.environ["INITMEM_ROOT"] = str(root)
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
    """Execute the selected notebooks at ``preset`` and write them to ``out_dir/<name>.ipynb``.

    Parameters
    ----------
    preset
        One of :data:`initmem.presets.PRESETS`.
    only
        Names or prefixes (``"01,04"``, ``["T1", "T2"]``); ``None`` runs every notebook.
    parameters
        Overrides applied on top of the preset's parameters, for every selected notebook. Each name must
        be defined in the parameters cell of every selected notebook; otherwise a :class:`ParameterError`
        is raised before anything runs. ``preset`` and ``results_dir`` are injected by the runner when a
        notebook declares them.
    out_dir, results_dir
        Default to ``book/generated`` and ``results`` in the repository.
    force
        Execute even when the executed notebook's digest is unchanged.
    notebooks_dir, cwd
        Where the ``.py`` notebooks are (default ``notebooks/``) and where they run (default: the
        repository root).

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
    nb_dir = Path(notebooks_dir) if notebooks_dir is not None else NOTEBOOKS_DIR
    out_dir = Path(out_dir) if out_dir is not None else DEFAULT_OUT_DIR
    results_dir = (Path(results_dir) if results_dir is not None else DEFAULT_RESULTS_DIR).resolve()
    root = Path(cwd).resolve() if cwd is not None else REPO_ROOT
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
        final = _final_parameters(
            name, declared, preset, _presets.notebook_parameters(preset, name), user_params, _portable(results_dir, root)
        )
        digest = notebook_digest(text, final, _result_files(results_dir, preset, name), root)
        plans.append((name, path, nb, final, digest))

    out_dir.mkdir(parents=True, exist_ok=True)
    results: list[NotebookResult] = []
    bar = tqdm(plans, desc=f"notebooks ({preset})", unit="nb", disable=not progress)
    for name, path, nb, final, digest in bar:
        bar.set_postfix_str(name)
        out_path = out_dir / f"{name}.ipynb"
        if not force and _stored_digest(out_path) == digest:
            log.info("%s: unchanged, reusing %s", name, out_path)
            results.append(NotebookResult(name, "reused", out_path, final, digest))
            continue
        log.info("%s: executing with %s", name, json.dumps(final, sort_keys=True))
        nb = copy.deepcopy(nb)
        nb.metadata.setdefault("kernelspec", {"name": kernel_name, "display_name": "Python 3", "language": "python"})
        tmp_path = out_dir / f".{name}.running.ipynb"
        t0 = time.perf_counter()
        try:
            with _kernel_environment(root):
                papermill.execute_notebook(
                    nb,
                    str(tmp_path),
                    parameters=final,
                    kernel_name=kernel_name,
                    cwd=str(root),
                    progress_bar=False,
                    execution_timeout=execution_timeout,
                )
        except Exception as exc:  # noqa: BLE001 - any failure is reported, the next notebook still runs
            seconds = time.perf_counter() - t0
            cell_index, error = _failure_details(exc)
            failed_path = None
            if tmp_path.exists():
                failed_dir = out_dir / FAILED_SUBDIR
                failed_dir.mkdir(exist_ok=True)
                failed_path = failed_dir / f"{name}.ipynb"
                shutil.move(str(tmp_path), failed_path)
            where = f" in cell {cell_index}" if cell_index is not None else ""
            log.error("%s: failed%s after %.1f s: %s (partial output: %s)", name, where, seconds, error, failed_path)
            results.append(NotebookResult(name, "failed", failed_path, final, digest, seconds, cell_index, error))
            continue
        seconds = time.perf_counter() - t0
        executed = nbformat.read(tmp_path, as_version=4)
        executed.metadata["initmem"] = {
            "digest": digest,
            "preset": preset,
            "parameters": final,
            "source": _relative(path, root),
        }
        nbformat.write(executed, tmp_path)
        os.replace(tmp_path, out_path)
        stale = out_dir / FAILED_SUBDIR / f"{name}.ipynb"
        if stale.exists():
            stale.unlink()
        log.info("%s: executed in %.1f s -> %s", name, seconds, out_path)
        results.append(NotebookResult(name, "executed", out_path, final, digest, seconds))
    return results


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
    parser.add_argument("--out-dir", default=None, help="where the executed notebooks go (default: book/generated)")
    parser.add_argument("--results-dir", default=None, help="results folder (default: results)")
    return parser


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Run ``initmem experiments``; returns the exit status (1 if any notebook failed, 2 for bad arguments)."""
    if args is None or not isinstance(args, argparse.Namespace):
        args = add_arguments(argparse.ArgumentParser(prog="initmem experiments")).parse_args(args)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    params = {name: parse_parameter_value(value) for name, value in (args.parameter or [])}
    try:
        results = run_notebooks(
            preset=args.preset,
            only=args.only,
            parameters=params,
            out_dir=args.out_dir,
            results_dir=args.results_dir,
            force=args.force,
        )
    except ValueError as exc:  # ParameterError, unknown preset or selector
        log.error("%s", exc)
        return 2
    for r in results:
        print(r)
    failed = [r for r in results if not r.ok]
    if failed:
        print(f"{len(failed)} of {len(results)} notebooks failed: {', '.join(r.name for r in failed)}")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
