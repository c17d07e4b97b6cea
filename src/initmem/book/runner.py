"""Execute the notebooks of ``notebooks/`` (jupytext percent ``.py`` files) with papermill, at a preset, for the book.

:func:`run_notebooks` fills each notebook's ``parameters`` cell from the preset registry
(:mod:`initmem.study.design.presets`) and the user's overrides (:mod:`initmem.book.parameters`, validated before the first
notebook runs), executes it in the repository root (:mod:`initmem.book.kernel`) and writes the executed ``.ipynb`` to
``book/generated/`` (the committed record, each notebook at its book preset) or, for a run with overrides or at
another preset, to an exploration's folder (:mod:`initmem.book.exploration`), never to the record. Before the first
notebook it says, per sweep, how many runs are reused, cached and to train, with the cost. A page whose record of
what it used still holds (:mod:`initmem.book.digest`) is reused, not executed again, unless ``force``.

Example::

    results = run_notebooks(preset="cpu", only="04", parameters={"batch_sizes": [64, 256]})
    assert all(r.ok for r in results)
"""

from __future__ import annotations

import codecs
import copy
import dataclasses
import json
import logging
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base.bars import auto_tqdm
from ..base.files import atomic_write
from ..base.paths import default_root
from ..study.costs.costs import estimate_runs, price
from ..study.costs.reuse import RunPlan, notebook_plan
from ..study.design import presets as _presets
from ..study.design.layout import RECORD_OUT_DIR, RECORD_RESULTS_DIR, results_paths
from ..sweeps.store import file_problem
from .digest import (
    FORMAT,
    Hashes,
    cells_digest,
    notebook_digest,
    portable,
    record_uses,
    refresh,
    stored_record,
    take_usage,
    usage_cell,
)
from .exploration import add_banner, collapse_parameter_cells, destinations, exploration_banner, record_differences
from .kernel import failure_details, kernel_environment, quiet_kernel_options
from .parameters import (
    ParameterError,
    final_parameters,
    notebook_parameter_names,
    parameter_defaults,
    validate_experiment,
)
from .progress import RunProgress

__all__ = [
    "REPO_ROOT",
    "NOTEBOOKS_DIR",
    "NOTEBOOKS",
    "DEFAULT_OUT_DIR",
    "DEFAULT_RESULTS_DIR",
    "FAILED_SUBDIR",
    "NotebookResult",
    "RecordError",
    "discover_notebooks",
    "select_notebooks",
    "Page",
    "read_page",
    "run_notebooks",
]

log = logging.getLogger("initmem.book.runner")

#: The repository root found from the working directory when this module was imported (``$INITMEM_ROOT``, else the
#: nearest folder at or above it whose pyproject.toml names the project initmem; see :mod:`initmem.base.paths`).
#: Functions take an explicit ``cwd``/``root`` instead; the command line resolves ``--root`` itself.
#:
#: :meta hide-value:
REPO_ROOT: Path = default_root()
NOTEBOOKS_DIR: Path = REPO_ROOT / "notebooks"
DEFAULT_OUT_DIR: Path = REPO_ROOT / RECORD_OUT_DIR
DEFAULT_RESULTS_DIR: Path = REPO_ROOT / RECORD_RESULTS_DIR
#: Where a failed notebook's partially executed copy goes, inside ``out_dir``.
FAILED_SUBDIR = "_failed"


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
    exploring: bool = False  # an exploration, not the committed record

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

    ``None`` (or empty) selects all. ``"01,04"`` selects the notebooks whose names begin with ``01`` and ``04``;
    ``"T"`` every theory notebook. A selector that matches nothing is a :class:`ParameterError`.
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
            raise ParameterError(
                f"--only: no notebook matches {sel!r}; available notebooks: {', '.join(available) or '(none)'}"
            )
        chosen.update(matches)
    return [n for n in available if n in chosen]


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
    announce: Callable[[str], None] | None = None,
    keep_record: bool = False,
) -> list[NotebookResult]:
    """Execute the selected notebooks at ``preset`` and write them to ``<out folder>/<name>.ipynb``.

    Parameters
    ----------
    preset
        One of :data:`initmem.study.design.layout.PRESETS`.
    only
        Names or prefixes (``"01,04"``, ``["T1", "T2"]``); ``None`` runs every notebook.
    parameters
        Overrides applied on top of the preset's parameters, for every selected notebook, as values (a string stays a
        string: the command line parses ``-p`` text, :func:`initmem.cli.experiments.parse_parameter_value`). Each name must
        be defined in the parameters cell of every selected notebook, and every run of an experiment's sweep
        (:data:`initmem.study.design.registry.EXPERIMENT_SPECS`) must be a valid config; otherwise a :class:`ParameterError`
        naming the parameter is raised before anything runs. ``preset`` and ``results_dir`` are injected by the
        runner when a notebook declares them.
    out_dir, results_dir
        The committed record, ``book/generated`` and ``results``, for a notebook run at its book preset
        (:func:`initmem.study.design.presets.book_preset`) without overrides. Any other run is an *exploration*: by default
        it goes to ``results/explore/<preset>-<digest of the overrides>/`` (:func:`explore_folder`; executed
        notebooks in its ``notebooks/``), its executed notebooks open with a banner listing what differs from the
        record, and an explicit folder may not be the record's.
    force
        Execute even when the executed notebook's digest is unchanged.
    notebooks_dir, cwd
        Where the ``.py`` notebooks are (default ``<root>/notebooks``) and the repository root where they run
        (default: :data:`REPO_ROOT`, found from the working directory).
    announce
        Called, before anything executes, with one line per notebook to execute that builds a sweep: its runs, how
        many are reused from the record, how many are in its own cache, how many will train and about how long that
        takes (:meth:`initmem.study.costs.reuse.RunPlan.summary`); default: logged at INFO.
    keep_record
        What the book asks (:func:`initmem.book.build.build_book`): the pages of the record to execute neither train
        nor set aside nor rewrite any committed file. Before anything executes, every run file their sweeps need is
        read with its checksum and hash, and every combined result they read opens with its checksum verified; a
        missing or damaged one, or a run to train, is a :class:`RecordError`.

    Returns
    -------
    list of :class:`NotebookResult`, one per selected notebook, in order. A failing notebook does not
    stop the others; check ``all(r.ok for r in results)``.
    """
    tqdm = auto_tqdm()
    _presets.check_preset(preset)
    root = Path(cwd).resolve() if cwd is not None else REPO_ROOT
    nb_dir = Path(notebooks_dir) if notebooks_dir is not None else root / "notebooks"
    names = select_notebooks(only, discover_notebooks(nb_dir))
    if not names:
        log.warning("no notebooks in %s", nb_dir)
        return []
    user_params = dict(parameters or {})
    choices = (Path(out_dir) if out_dir is not None else None, Path(results_dir).resolve() if results_dir else None)
    # Read and validate everything, and say what will train, before running anything.
    hashes = Hashes(root)
    plans = [_prepare(name, nb_dir, preset, user_params, root, *choices, force, keep_record, hashes) for name in names]
    if keep_record:
        _check_record(plans, preset, root)
    announce = announce or log.info
    for plan in plans:
        if plan.runs is not None and not plan.unchanged:
            announce(plan.runs.summary())

    results: list[NotebookResult] = []
    bar = tqdm(plans, desc=f"notebooks ({preset})", unit="nb", disable=not progress)
    for plan in bar:
        bar.set_postfix_str(plan.name)
        if plan.unchanged:
            log.info("%s: unchanged, reusing %s", plan.name, plan.out_path)
            results.append(
                NotebookResult(plan.name, "reused", plan.out_path, plan.final, plan.digest, exploring=plan.exploring)
            )
            continue
        results.append(_execute(plan, preset, root, kernel_name, execution_timeout, progress))
    return results


@dataclasses.dataclass
class Page:
    """One notebook as it would execute (:func:`read_page`): nothing executed, nothing validated."""

    name: str
    path: Path  # the .py notebook
    text: str  # its text, the exploration banner included: what the page's record hashes as its source
    nb: Any  # its cells, the banner included
    final: dict[str, Any]  # the parameters papermill passes
    defaults: dict[str, Any]  # the values of its parameters cell
    out_path: Path  # the executed notebook
    results_dir: Path  # absolute
    exploring: bool


def read_page(
    name: str,
    nb_dir: Path,
    preset: str,
    user_params: Mapping[str, Any],
    root: Path,
    out_choice: Path | None = None,
    results_choice: Path | None = None,
) -> Page:
    """Read notebook ``name`` of ``nb_dir`` as it would execute at ``preset`` with ``user_params`` in ``root``: its
    final parameters, its place, and (an exploration) the banner added."""
    import jupytext

    path = nb_dir / f"{name}.py"
    text = path.read_text(encoding="utf-8")
    nb = jupytext.reads(text, fmt="py:percent")
    out, res, exploring = destinations(name, preset, user_params, root, out_choice, results_choice)
    res = res.resolve()
    final = final_parameters(
        name,
        notebook_parameter_names(nb),
        preset,
        _presets.notebook_parameters(preset, name),
        user_params,
        portable(res, root),
    )
    defaults = parameter_defaults(nb)
    if exploring:
        banner = exploration_banner(
            name, record_differences(name, defaults, preset, final), _relative(res, root), user_params, preset
        )
        add_banner(nb, banner)
        text += "\n# exploration banner\n" + banner  # the banner is part of what the record hashes
    return Page(name, path, text, nb, final, defaults, out / f"{name}.ipynb", res, exploring)


@dataclasses.dataclass
class _Plan(Page):
    """One notebook, read and validated, ready to execute."""

    digest: str  # its executed copy's record taken again now ("": there is none to take)
    runs: RunPlan | None  # its sweep's runs (None: it builds no sweep)
    unchanged: bool  # nothing its executed copy used has changed: nothing to execute


def _prepare(
    name: str,
    nb_dir: Path,
    preset: str,
    user_params: Mapping[str, Any],
    root: Path,
    out_choice: Path | None,
    results_choice: Path | None,
    force: bool,
    verify: bool,
    hashes: Hashes,
) -> _Plan:
    """Read notebook ``name``, check its parameters and its sweep, add the exploration banner, and take its executed
    copy's record again (:func:`initmem.book.digest.refresh`): the same digest, and it is reused."""
    page = read_page(name, nb_dir, preset, user_params, root, out_choice, results_choice)
    validate_experiment(name, {**page.defaults, **page.final}, overridden=list(user_params))
    stored = stored_record(page.out_path)
    uses = refresh(stored, page.text, hashes)
    digest = notebook_digest(page.final, uses) if uses is not None else ""
    unchanged = (
        not force and bool(digest) and digest == stored.get("digest") and stored["cells_now"] == stored.get("cells")
    )
    verify = verify and not page.exploring and not unchanged
    runs = notebook_plan(
        name, {**page.defaults, **page.final}, page.results_dir, preset, root / RECORD_RESULTS_DIR, verify=verify
    )
    fields = {field.name: getattr(page, field.name) for field in dataclasses.fields(page)}
    return _Plan(**fields, digest=digest, runs=runs, unchanged=unchanged)


class RecordError(RuntimeError):
    """A page of the record would train, or reads a committed file that is missing or damaged (see ``keep_record``
    of :func:`run_notebooks`); the message is one line naming the first such file and the command that recomputes it,
    with its cost. Nothing was executed or changed."""


def _check_record(plans: Sequence[_Plan], preset: str, root: Path) -> None:
    """Raise :class:`RecordError` for the first committed file that the record's pages to execute need and cannot use:
    a run of their sweeps (:attr:`RunPlan.problems`) or a combined result they read (their own and
    :data:`~initmem.study.design.presets.NOTEBOOK_READS`), in page order."""
    record = root / RECORD_RESULTS_DIR
    sweeps = {plan.name: plan.runs for plan in plans if plan.runs is not None}
    problems: dict[Path, tuple[str, str]] = {}  # file -> (why, the experiment that recomputes it)
    for plan in plans:
        if plan.exploring or plan.unchanged:
            continue
        for path, why in plan.runs.problems if plan.runs is not None else ():
            problems.setdefault(path, (why, plan.name))
        for source in (plan.name, *_presets.NOTEBOOK_READS.get(plan.name, ())):
            path = results_paths(record, preset, source)[1]
            if path.is_file() or (source == plan.name and plan.runs is not None):
                why = file_problem(path)
                if why is not None:
                    problems.setdefault(path, (why, source))
    if not problems:
        return
    path, (why, source) = next(iter(problems.items()))
    others = f" (and {len(problems) - 1} more files of the record)" if len(problems) > 1 else ""
    runs = sweeps.get(source)
    if runs is None:
        cost = "its first line says what it trains"
    elif runs.to_train:
        cost = f"{len(runs.to_train)} of {runs.total} runs to train, {price(estimate_runs(runs.to_train))}"
    else:
        cost = f"its {runs.total} runs are intact: nothing to train"
    shown = _relative(path, root)
    raise RecordError(
        f"{shown}: {why}{others}; the book never trains nor rewrites the record: restore it with git checkout -- "
        f"{shown}, or recompute it with: initmem experiments --preset {preset} --only {source[:2]} ({cost}); "
        f"nothing was executed or changed"
    )


def _execute(
    plan: _Plan, preset: str, root: Path, kernel_name: str, execution_timeout: float | None, progress: bool
) -> NotebookResult:
    """Execute one prepared notebook with papermill; write it atomically, or keep its partial copy in ``_failed/``."""
    import nbformat
    import papermill

    name, out = plan.name, plan.out_path.parent
    out.mkdir(parents=True, exist_ok=True)
    log.info("%s: executing with %s%s", name, json.dumps(plan.final, sort_keys=True), " (exploration)" * plan.exploring)
    nb = copy.deepcopy(plan.nb)
    nb.cells.append(usage_cell())  # the last cell says what the kernel used, and is removed again
    nb.metadata.setdefault("kernelspec", {"name": kernel_name, "display_name": "Python 3", "language": "python"})
    tmp_path = out / f".{name}.running.ipynb"
    training = [config.hash() for config in plan.runs.to_train] if plan.runs is not None else []
    runs_dir = plan.runs.runs_dir if plan.runs is not None else out
    t0 = time.perf_counter()
    try:
        with kernel_environment(root), RunProgress(name, runs_dir, training, enabled=progress):
            papermill.execute_notebook(
                nb,
                str(tmp_path),
                parameters=plan.final,
                kernel_name=kernel_name,
                cwd=str(root),
                progress_bar=False,
                execution_timeout=execution_timeout,
                **quiet_kernel_options(),
            )
    except Exception as exc:  # noqa: BLE001 - any failure is reported, the next notebook still runs
        seconds = time.perf_counter() - t0
        cell_index, error = failure_details(exc)
        failed_path = None
        if tmp_path.exists():
            failed_dir = out / FAILED_SUBDIR
            failed_dir.mkdir(exist_ok=True)
            failed_path = failed_dir / f"{name}.ipynb"
            shutil.move(str(tmp_path), failed_path)
        where = f" in cell {cell_index}" if cell_index is not None else ""
        log.error("%s: failed%s after %.1f s: %s (partial output: %s)", name, where, seconds, error, failed_path)
        return NotebookResult(
            name, "failed", failed_path, plan.final, plan.digest, seconds, cell_index, error, plan.exploring
        )
    seconds = time.perf_counter() - t0
    executed = nbformat.read(tmp_path, as_version=4)
    uses = record_uses(plan.text, take_usage(executed), root)  # hashed now, after it ran
    digest = notebook_digest(plan.final, uses)
    collapse_parameter_cells(executed)
    # papermill records where it wrote (the temporary file, an absolute path on the builder's machine): the record
    # names the page's own place in the repository instead
    executed.metadata.get("papermill", {}).update(
        input_path=_relative(plan.path, root), output_path=_relative(plan.out_path, root)
    )
    executed.metadata["initmem"] = {
        "digest": digest,
        "format": FORMAT,
        "preset": preset,
        "parameters": plan.final,
        "source": _relative(plan.path, root),
        "exploration": plan.exploring,
        "uses": uses,
        "cells": cells_digest(executed),
    }
    atomic_write(plan.out_path, lambda handle: nbformat.write(executed, codecs.getwriter("utf-8")(handle)))
    tmp_path.unlink(missing_ok=True)
    stale = out / FAILED_SUBDIR / f"{name}.ipynb"
    if stale.exists():
        stale.unlink()
    log.info("%s: executed in %.1f s -> %s", name, seconds, plan.out_path)
    return NotebookResult(name, "executed", plan.out_path, plan.final, digest, seconds, exploring=plan.exploring)


def _relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when inside it, else as it is (for the pages and the log)."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
