"""Where an experiment's results live, and load-or-run: the one call every experiment notebook makes.

Layout of the results of one preset::

    results/<preset>/<experiment>/runs/<hash>.nc    one file per run (the run store of its sweep)
    results/<preset>/<experiment>.nc                the combined sweep Dataset (attrs: spec, preset, ...)

* :func:`notebook_experiment` -- an experiment notebook's parameters -> its sweep -> its results;
* :func:`run_experiment` -- load-or-run a sweep through its run store and save the combined Dataset;
* :func:`read_results` -- the combined Dataset of one experiment, for a notebook that analyses it (nothing is
  trained: a missing file names the command that makes it);
* :func:`load_results` -- every combined Dataset of a preset that exists (for 07 and 99);
* :func:`read_if_present` -- a file a script wrote (the error rates), None where there is none;
* :func:`run_attributes` -- the attributes of each run a combined Dataset holds (its commit, CPU, creation time).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ...base.paths import EXECUTOR_ENV, SCHEDULER_ENV, TRAIN_ENV
from ...base.reads import note
from ...sweeps.driver import sweep
from ...sweeps.spec import SweepSpec
from ...sweeps.store import read_checked, write_run
from ..design import registry
from ..design.layout import results_paths
from ..design.presets import resolve_parameters
from ..design.registry import EXPERIMENT_ATTRS, experiment_spec
from .costs import estimate_runs, price
from .reuse import plan_runs, record_stores

__all__ = [
    "SMALL_TRAINING_S",
    "TrainingRefused",
    "ReplaceRefused",
    "notebook_experiment",
    "run_experiment",
    "read_results",
    "load_results",
    "read_if_present",
]


#: Sweep attributes that change on every call (timings, cache counts) and so do not decide sameness.
_VOLATILE_ATTRS = {"created", "wall_time_s", "n_cached", "n_reused", "n_runs", "executor", "git_commit", "hardware"}


def _same_results(path: Path, ds: xr.Dataset) -> xr.Dataset | None:
    """The stored Dataset at ``path`` if it holds exactly the runs of ``ds`` (same spec, preset and run
    hashes); None otherwise. Keeping an unchanged file unchanged keeps the notebook runner's digest stable."""
    if not path.is_file():
        return None
    try:
        stored = read_checked(path)
    except Exception:  # noqa: BLE001 - unreadable or refused by its checksum: rewrite it
        return None
    keys = {"spec", "preset", "experiment"} | {k for k in ds.attrs if k not in _VOLATILE_ATTRS}
    if any(str(stored.attrs.get(k)) != str(ds.attrs.get(k)) for k in keys):
        return None
    if "run_hash" not in stored or stored["run_hash"].shape != ds["run_hash"].shape:
        return None
    if not np.array_equal(stored["run_hash"].values.astype(str), ds["run_hash"].values.astype(str)):
        return None
    return stored


#: Missing runs estimated to take less than this many single-core seconds are trained without asking.
SMALL_TRAINING_S = 60.0


class TrainingRefused(RuntimeError):
    """An experiment's runs are not in the results folder and training them was not asked for."""


class ReplaceRefused(RuntimeError):
    """The results folder holds another sweep of the experiment (the record, say) and replacing it was not asked for."""


def _check_replacement(name: str, spec: Mapping[str, Any], out: Path, replace: bool | None) -> None:
    """Raise :class:`ReplaceRefused` when ``out`` holds a combined sweep other than ``spec`` (see :func:`run_experiment`)."""
    if replace is True or (replace is None and os.environ.get(TRAIN_ENV) == "1") or not out.is_file():
        return
    try:
        stored_spec = read_checked(out).attrs.get("spec")
    except Exception:  # noqa: BLE001 - an unreadable file, or one refused by its checksum, is rewritten
        return
    if stored_spec == SweepSpec.from_dict(spec).to_json():
        return
    raise ReplaceRefused(
        f"results_dir: {out} holds another sweep of {name} (other parameters; the committed record, if it is the "
        f"repository's results folder); set results_dir to another folder for this one, or replace = True"
    )


def run_experiment(
    name: str,
    spec: Mapping[str, Any],
    *,
    preset: str,
    results_dir: str | os.PathLike = "results",
    executor: str = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    attrs: Mapping[str, Any] | None = None,
    train_missing: bool | None = True,
    replace: bool | None = None,
    reuse: Sequence[str | os.PathLike] = (),
) -> xr.Dataset:
    """Load-or-run the sweep ``spec`` of experiment ``name`` and save the combined Dataset.

    Runs are cached in ``<results_dir>/<preset>/<name>/runs/`` (:mod:`initmem.study.design.layout`; a relative
    ``results_dir`` is taken from the repository root): a run already there is read, not trained. The combined
    Dataset gets the attributes ``preset`` and ``experiment`` and is written to ``<results_dir>/<preset>/<name>.nc``,
    unless that file already holds exactly these runs (then the stored file is returned unchanged).

    Args:
        spec: a :class:`initmem.sweeps.spec.SweepSpec` dict (``base``, ``grid``, ``zip``).
        executor, workers, scheduler: passed to :func:`initmem.sweeps.driver.sweep` (``processes`` with 2 workers
            on a 2-core CPU; ``serial`` for the smoke preset; ``dask`` with a running scheduler's address).
        attrs: extra attributes stored with the combined Dataset (values: strings or numbers; anything
            else is stored as JSON), e.g. the horizons of experiment 02.
        train_missing: what to do with runs that are not in the results folder. True: train them. None (what a
            notebook passes unless its reader sets ``train_missing = True``): train them only under
            ``initmem experiments`` (which sets :data:`initmem.base.paths.TRAIN_ENV`) or when they are estimated to take less than
            :data:`SMALL_TRAINING_S` core-seconds (:func:`initmem.study.costs.costs.estimate_seconds`), else raise
            :class:`TrainingRefused`. False: never train.
        replace: whether a combined file of *another* sweep of this experiment (another grid, other settings) may be
            replaced. None: only under ``initmem experiments``, which keeps explorations out of the committed record
            by itself; elsewhere (a notebook run with papermill or by hand, with other parameters, into the
            repository's ``results``) it raises :class:`ReplaceRefused` before anything trains.
        reuse: read-only run stores whose runs are read instead of trained (an exploration reuses the committed
            record's, :func:`initmem.study.costs.reuse.record_stores`); they count as present for ``train_missing``.

    Raises:
        TrainingRefused: runs are missing and training them was not asked for; one line naming how many runs,
            their estimated cost, the folder, and the two ways to ask.
        ReplaceRefused: the combined file holds another sweep and replacing it was not asked for.
    """
    runs_dir, out = results_paths(results_dir, preset, name)
    _check_replacement(name, spec, out, replace)
    _check_training_allowed(name, spec, preset, runs_dir, train_missing, executor, workers, scheduler, reuse)
    ds = sweep(spec, runs_dir, executor=executor, workers=workers, progress=progress, scheduler=scheduler, reuse=reuse)
    ds.attrs.update(preset=preset, experiment=name)
    extra = {
        k: v if isinstance(v, (str, int, float)) and not isinstance(v, bool) else json.dumps(v)
        for k, v in (attrs or {}).items()
    }
    ds.attrs.update(extra)
    stored = _same_results(out, ds)
    if stored is None:
        write_run(ds, out)  # atomic, with a checksum, attributes as netCDF accepts them
        stored = _same_results(out, ds)  # as written: with its checksum, exactly what readers will see
    return stored


def notebook_experiment(name: str, namespace: Mapping[str, Any]) -> tuple[xr.Dataset, dict[str, Any]]:
    """What an experiment notebook does first: its parameters -> its sweep -> its results, in one call.

    ``namespace`` is the notebook's ``globals()``: ``preset``, ``results_dir`` and ``train_missing`` from its
    parameters cell, and every experiment parameter, None for "the preset's value"
    (:func:`initmem.study.design.presets.resolve_parameters`). Builds the sweep with the registry and loads or runs it with
    :func:`run_experiment` (the attributes the registry names for the experiment are stored with it), with the
    executor and scheduler that ``initmem experiments --executor`` sets in the environment
    (:data:`initmem.base.paths.EXECUTOR_ENV`, :data:`~initmem.base.paths.SCHEDULER_ENV`) over the parameters' own.
    An exploration (``results_dir`` other than the record's) reads the runs the committed record holds
    (:func:`initmem.study.costs.reuse.record_stores`) instead of training them; the record reads those its other chapters
    hold.

    Returns:
        ``(ds, parameters)``: the combined Dataset and the complete parameters it was computed with.
    """
    preset = namespace["preset"]
    parameters = resolve_parameters(name, preset, namespace)
    executor = os.environ.get(EXECUTOR_ENV) or parameters["executor"]
    ds = run_experiment(
        name,
        experiment_spec(name, parameters),
        preset=preset,
        results_dir=namespace["results_dir"],
        executor=executor,
        workers=parameters["workers"],
        scheduler=os.environ.get(SCHEDULER_ENV) or None,
        train_missing=namespace.get("train_missing"),
        attrs={key: parameters[key] for key in EXPERIMENT_ATTRS.get(name, ())},
        reuse=record_stores(namespace["results_dir"], preset, own=name),
    )
    return ds, parameters


def _check_training_allowed(
    name: str,
    spec: Mapping[str, Any],
    preset: str,
    runs_dir: Path,
    train_missing: bool | None,
    executor: str,
    workers: int | None,
    scheduler: str | None = None,
    reuse: Sequence[str | os.PathLike] = (),
) -> None:
    """Raise :class:`TrainingRefused` when runs of ``spec`` are missing from ``runs_dir`` and ``reuse`` and training
    them was not asked for (see :func:`run_experiment`)."""
    if train_missing is True or (train_missing is None and os.environ.get(TRAIN_ENV) == "1"):
        return
    plan = plan_runs(name, spec, runs_dir, executor, workers, [Path(p) for p in reuse], scheduler)
    if not plan.to_train or (train_missing is None and plan.seconds < SMALL_TRAINING_S):
        return
    raise TrainingRefused(
        f"train_missing: {len(plan.to_train)} of {plan.total} runs of {name} at preset {preset!r} are not in "
        f"{runs_dir} ({price(estimate_runs(plan.to_train), gpu=False)} to train); set train_missing = True in the "
        f"notebook's parameters to train them here, or run: initmem experiments --preset {preset} --only {name[:2]}"
    )


def read_results(results_dir: str | os.PathLike, preset: str, name: str, *, reader: str) -> xr.Dataset:
    """The combined Dataset of experiment ``name`` at ``preset``, for the notebook ``reader`` that analyses it.

    Read with :func:`initmem.sweeps.store.read_checked`: its checksum is verified.

    Raises:
        FileNotFoundError: naming the missing file and the command that makes it (nothing is trained here).
        initmem.sweeps.store.ChecksumError: the file's content does not match its checksum.
    """
    path = results_paths(results_dir, preset, name)[1]
    if not path.is_file():
        here = Path.cwd().resolve()  # a notebook runs in the repository's root: the path as the reader would type it
        shown = path.resolve().relative_to(here) if path.resolve().is_relative_to(here) else path
        raise FileNotFoundError(
            f"{reader} reads the results of {name} at preset {preset!r}, but {shown} does not exist; "
            f"make them first with: initmem experiments --preset {preset} --only {name[:2]}"
        )
    return read_checked(path)


def load_results(
    results_dir: str | os.PathLike, preset: str, names: Iterable[str] | None = None
) -> dict[str, xr.Dataset]:
    """The combined Datasets of ``names`` (None: ``registry.EXPERIMENTS``) that exist for
    ``preset`` (missing ones are left out), each read with
    :func:`initmem.sweeps.store.read_checked` (a file whose content does not match its checksum raises
    :class:`~initmem.sweeps.store.ChecksumError`)."""
    found: dict[str, xr.Dataset] = {}
    for name in registry.EXPERIMENTS if names is None else names:
        path = note(results_paths(results_dir, preset, name)[1])  # looked for: the page changes when it appears
        if path.is_file():
            found[name] = read_checked(path)
    return found


def read_if_present(path: str | os.PathLike) -> xr.Dataset | None:
    """The netCDF file at ``path`` (one a script wrote with :func:`~initmem.sweeps.store.write_run`, as
    ``results/<preset>/error_rates.nc``) fully in memory with its checksum verified, or None when there is none;
    looked for either way (:func:`initmem.base.reads.note`: a page that reads it re-executes when it appears,
    changes or goes).

    Raises:
        ChecksumError: the file has no checksum, or its content does not match it."""
    path = note(path)
    return read_checked(path, require_checksum=True) if path.is_file() else None


def run_attributes(ds: xr.Dataset, runs_dir: str | os.PathLike) -> Iterator[tuple[dict[str, int], dict[str, Any]]]:
    """For each run a combined Dataset holds (its ``run_hash`` -> ``<hash>.nc`` in ``runs_dir``, else in the store it
    was reused from: another experiment's of the same preset folder, or the committed record's, the experiment's own
    first, :func:`initmem.study.costs.reuse.record_stores`; a run in none is left out), its attributes read with h5py (some 70
    times faster than xarray): its position (dimension -> index into ``ds["run_hash"]``) and its attributes
    (``git_commit``, ``cpu_model``, ``created``, ...). ``runs_dir`` is ``<results>/<preset>/<experiment>/runs``."""
    import h5py

    preset_dir = Path(runs_dir).parent.parent
    stores = [  # its own experiment's stores first, as the sweep searched them
        Path(runs_dir),
        *sorted(preset_dir.glob("*/runs")),
        *record_stores(preset_dir.parent, preset_dir.name, own=Path(runs_dir).parent.name),
    ]
    hashes = ds["run_hash"]
    for index in np.ndindex(hashes.shape):
        value = hashes.values[index]
        if not (isinstance(value, str) and value):
            continue
        found = next((store / f"{value}.nc" for store in stores if (store / f"{value}.nc").is_file()), None)
        if found is not None:
            with h5py.File(note(found), "r") as run:
                yield dict(zip(hashes.dims, index)), dict(run.attrs)
