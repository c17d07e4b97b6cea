"""What an exploration takes from the committed record: its runs, so that only missing runs train, and its results,
to draw and tabulate beside the exploration's.

A run is named by the hash of everything that changes its numbers (:meth:`initmem.run.config.RunConfig.hash`), so a
record's run file with the hash an exploration needs *is* that run. An exploration (:mod:`initmem.study.design.layout`)
reads such runs read-only from ``<root>/results/<preset>/<experiment>/runs/``, checksum and hash verified
(:func:`initmem.sweeps.store.load_run`), and trains only the others into its own folder; the record reads a run
that another of its chapters holds the same way (chapter 11's first rung is chapter 01's runs).

* :func:`record_stores` -- the committed run stores a sweep at a preset reuses;
* :func:`plan_runs` / :class:`RunPlan` -- before anything trains: how many runs a sweep has, are cached, come from
  the record and will train, and about how long that takes (:func:`initmem.study.costs.costs.estimate_seconds`);
* :func:`record_results` -- the record's combined Dataset of a chapter, to compare an exploration's page with.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from ...base.paths import EXECUTOR_ENV, RootError, find_repo_root, fresh_runs
from ...base.reads import note
from ...run.config import RunConfig
from ...sweeps.driver import check_trainable, plan_jobs, reusable
from ...sweeps.spec import SweepSpec, as_spec
from ...sweeps.store import file_problem, read_checked
from ..design.layout import RECORD_RESULTS_DIR, resolve_results_dir, results_paths
from ..design.presets import book_preset
from ..design.registry import EXPERIMENT_SPECS, experiment_spec
from .costs import amount, estimate_runs, estimate_seconds, price

__all__ = ["record_dir", "record_stores", "RunPlan", "plan_runs", "notebook_plan", "record_results", "duration"]


def record_dir(root: str | os.PathLike | None = None) -> Path | None:
    """The committed record's results folder, ``<root>/results`` (default root:
    :func:`~initmem.base.paths.find_repo_root`); None outside a checkout."""
    try:
        return (Path(root) if root is not None else find_repo_root()) / RECORD_RESULTS_DIR
    except RootError:
        return None


def record_stores(
    results_dir: str | os.PathLike, preset: str, record: str | os.PathLike | None = None, own: str | None = None
) -> list[Path]:
    """The committed run stores (``<record>/<preset>/*/runs``, every experiment's: runs shared between experiments
    count too) that a sweep whose results go to ``results_dir`` may reuse, in the order they are searched. The record
    itself reuses the *other* experiments' stores, those of experiments other than ``own`` (the experiment whose sweep
    this is): a chapter whose runs are another's, as chapter 11's first rung is 01's runs, reads them rather than
    training them again. An exploration searches ``own``'s store first: two experiments may hold a run of the same
    hash trained by different commits or machines (the machine is recorded, not hashed), and an exploration reads its
    own chapter's. Empty when there is no record or fresh runs are asked for (:func:`initmem.base.paths.fresh_runs`,
    ``initmem experiments --fresh``). ``record``: the record's results folder (default: :func:`record_dir`)."""
    record = Path(record) if record is not None else record_dir()
    if record is None or fresh_runs():
        return []
    stores = sorted(p for p in (record / preset).glob("*/runs") if p.is_dir())
    if resolve_results_dir(results_dir).resolve() == record.resolve():
        return [p for p in stores if p.parent.name != own]
    return sorted(stores, key=lambda p: p.parent.name != own)  # stable: the others keep their order


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """The runs of one sweep (an experiment's, or ``initmem sweep``'s), before anything trains."""

    name: str
    runs_dir: Path  #: the sweep's own run store
    cached: list[str]  #: hashes of the runs already in ``runs_dir``
    reused: list[str]  #: hashes of the runs read from the record's stores
    to_train: list[RunConfig]  #: the runs that will train
    #: single-core seconds estimated for ``to_train`` (:func:`initmem.study.costs.costs.estimate_seconds`)
    seconds: float
    from_record: bool = True  #: whether runs could come from the record's stores (else the summary leaves them out)
    #: with ``verify``: each run whose file in ``runs_dir`` is missing or cannot be used, and why (counted in
    #: ``to_train``: the sweep would train it, setting a damaged file aside)
    problems: tuple[tuple[Path, str], ...] = ()

    @property
    def total(self) -> int:
        """How many runs the sweep has."""
        return len(self.cached) + len(self.reused) + len(self.to_train)

    def summary(self) -> str:
        """One line, e.g. ``NN_name: 12 runs: 12 reused from the record, 0 in its own cache, 0 to train``
        (without a record to reuse: ``spec.yaml: 8 runs: 2 in its own cache, 6 to train (about 40 core-s (p10-p90
        24-89), under 1 A100-s)``: :func:`initmem.study.costs.costs.price`)."""
        reused = f"{len(self.reused)} reused from the record, " if self.from_record else ""
        line = f"{self.name}: {self.total} runs: {reused}{len(self.cached)} in its own cache, {len(self.to_train)} to train"
        if self.to_train:
            line += f" ({price(estimate_runs(self.to_train))})"
        return line


def duration(seconds: float) -> str:
    """``seconds`` in words: ``"40 s"``, ``"12 min"``, ``"3.5 h"`` (:func:`initmem.study.costs.costs.amount`)."""
    value, unit = amount(seconds)
    return f"{value:.1f} h" if unit == "h" else f"{value:.0f} {unit}"


def plan_runs(
    name: str,
    spec: SweepSpec | Mapping[str, Any],
    runs_dir: Path,
    executor: str,
    workers: int | None,
    stores: Sequence[Path] = (),
    scheduler: Any = None,
    verify: bool = False,
) -> RunPlan:
    """The :class:`RunPlan` of sweep ``spec`` of experiment ``name`` cached in ``runs_dir``, reusing ``stores``:
    the jobs as :func:`initmem.sweeps.driver.sweep` makes them (same hashes, same file names), each found in its own
    cache, in a store, or to train. ``scheduler``: the running dask scheduler the sweep will use, if any (its address
    or a client of it: its workers' thread counts are their own). ``verify``: read every file of ``runs_dir`` the
    sweep needs, with its checksum and hash (:func:`initmem.sweeps.store.file_problem`), rather than trusting that it
    exists; the missing and unusable ones are the plan's ``problems``. Raises the one-line ConfigError of
    :func:`~initmem.sweeps.driver.check_trainable` for a run to train that cannot train on this machine."""
    jobs = plan_jobs(as_spec(spec), runs_dir, executor, workers, client=scheduler)
    problems = tuple((job.path, why) for job in jobs if verify and (why := file_problem(job.path, job.key)))
    unusable = {path for path, _ in problems}
    cached = [job.key for job in jobs if job.path.is_file() and job.path not in unusable]
    found = set(cached)
    reused = [job.key for job in jobs if job.key not in found and reusable(job, stores) is not None]
    found.update(reused)
    to_train = [job.config for job in jobs if job.key not in found]
    check_trainable(to_train, scheduler)
    seconds = estimate_seconds(to_train)
    return RunPlan(name, runs_dir, cached, reused, to_train, seconds, from_record=bool(stores), problems=problems)


def notebook_plan(
    name: str,
    parameters: Mapping[str, Any],
    results_dir: str | os.PathLike,
    preset: str,
    record: str | os.PathLike | None = None,
    verify: bool = False,
) -> RunPlan | None:
    """The :class:`RunPlan` of notebook ``name`` at its complete ``parameters`` (as the runner injects them) with
    results in ``results_dir``; None for a notebook that builds no sweep. The executor is the one the notebook will use
    (``initmem experiments --executor`` through :data:`~initmem.base.paths.EXECUTOR_ENV`, else its parameter).
    ``verify``: read the run files rather than trust that they exist (:func:`plan_runs`)."""
    if name not in EXPERIMENT_SPECS:
        return None
    executor = os.environ.get(EXECUTOR_ENV) or parameters.get("executor") or "serial"
    return plan_runs(
        name,
        experiment_spec(name, parameters),
        results_paths(results_dir, preset, name)[0],
        executor,
        parameters.get("workers"),
        record_stores(results_dir, preset, record, own=name),
        verify=verify,
    )


def record_results(name: str, preset: str, results_dir: str | os.PathLike) -> xr.Dataset | None:
    """The committed record's combined Dataset of chapter ``name`` (``<root>/results/<book preset>/<name>.nc``, read
    with its checksum verified), for a page whose results are ``results_dir`` at ``preset`` to draw and tabulate
    beside its own; None when the page *is* the record (its results are the record's at the book preset), when it is
    at another preset than the record's (another scale: other data, network and budget, whose numbers are not
    comparable; the exploration's banner says so, :func:`initmem.book.exploration.exploration_banner`) or the record
    has no such file."""
    record = record_dir()
    book = book_preset(name)
    if record is None or preset != book:
        return None
    if resolve_results_dir(results_dir).resolve() == record.resolve():
        return None
    path = note(results_paths(record, book, name)[1])  # looked for: the page changes when it appears
    return read_checked(path) if path.is_file() else None
