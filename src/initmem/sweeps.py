"""Sweeps: a grid of runs -> one :class:`xarray.Dataset`, cached per run, resumable, run in parallel.

A :class:`SweepSpec` is a base :class:`~initmem.config.RunConfig` plus the fields to vary::

    base: {model: resnet9, width: 8, epochs: 40, data: synthetic}
    grid:                       # the Cartesian product of these lists, one dimension each
      sigma_w: [0.25, 0.5, 1.0, 2.0]
      seed: [0, 1, 2]
    zip:                        # ONE extra dimension, walked in lock step
      optimizer: [sgd, adam]    # the dimension is named after the first zipped field ...
      lr: [0.02, 0.002]         # ... the others become coordinates along it: lr(optimizer)

Only one ``zip`` group is supported (enough for "optimizer with its own learning rate"); put a second
co-varying set in the grid or run a second sweep. The first zipped field names the dimension, so its
values must all differ. Swept values must be numbers, strings or booleans (they become coordinates);
execution fields (``device``, ``progress``, ``checkpoint_every``) cannot be swept, since they are not
part of a run's hash.

:func:`sweep` trains every point that is not cached yet and returns the combined Dataset:

* one dimension per swept field, in spec order (grid fields, then the zip dimension), followed by
  the per-run dims ``epoch`` and ``layer``; runs with other epochs or layers (depth sweeps) are
  NaN-filled to the union of both;
* every variable of :func:`initmem.training.train` (NaN after a divergence, ``diverged`` = 1), except
  that the per-epoch learning rate ``lr`` is called ``scheduled_lr`` here, because ``lr`` is the
  name of the swept learning-rate coordinate; plus ``run_hash``, the run's cache key (a string);
* attributes: ``spec`` (JSON), ``git_commit``, ``initmem_version``, ``torch_version``, ``hardware``,
  ``device``, ``data_source`` (the distinct values over the runs), ``created``, ``wall_time_s``
  (this call, seconds), ``n_runs``, ``n_cached`` (runs read from the cache instead of trained) and
  ``executor``. Per-run provenance stays in the cached files.

Cache: ``<cache_dir>/<config.hash()>.nc`` (``<hash>.stacked<K>.nc`` for runs trained in a stack of K), one
netCDF per run (h5netcdf) with a checksum of its content, written atomically (a temporary file in the same
folder, fsync, ``os.replace``), so a killed sweep never leaves half a file; re-running trains only what is
missing, and a corrupt or foreign file is moved aside and trained again. The hash covers every field that
changes the numbers, the thread count and memory layout included; stacked runs have files of their own, and
combining runs from different device types is refused. Runs with ``checkpoint_every > 0`` also keep
``<hash>.ckpt`` there and resume from it; it is deleted only after the run file is written. With several
machines the cache must be a shared folder. The cache folder is checked writable before anything trains.

Concurrent sweeps over one cache: a run is trained under a claim file ``<hash>.claim`` beside it
(:class:`initmem.fileio.RunClaim`: host, pid, start time; stale when its process is gone, or on another host
when it has not been refreshed for :data:`initmem.fileio.CLAIM_TIMEOUT_S`). A run claimed by another live
sweep is left for last and then awaited (its file is read), so each run is trained once.

Executors: ``serial`` (in this process), ``processes`` (a spawn-context ``ProcessPoolExecutor``),
``dask`` (a ``distributed.Client``, or a LocalCluster started and closed here) and ``stacked``
(:mod:`initmem.stacked`: runs differing only in sigma_w/seed trained as one vmapped model, for GPUs).
Each worker writes its own run files; the parent reads them back. A run that raises is logged with its
config, the others go on, and :func:`sweep` raises :class:`SweepFailed` (a :class:`RuntimeError`) listing the
failures at the end. Workers of ``processes`` (and of a LocalCluster started here) watch the sweep process and
exit within a second when it is killed; a rerun trains only the runs without a file.

Seeds in :func:`summary_table`: see its docstring.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import json
import logging
import math
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from . import __version__
from .config import EXECUTION_FIELDS, ConfigError, RunConfig, read_mapping_file
from .fileio import RunClaim, check_output_dir, process_alive, remove_stale_temp_files, temp_name
from .metrics import spread as _spread

if TYPE_CHECKING:
    import pandas as pd

    from .data import PreparedData

__all__ = [
    "EXECUTORS",
    "DATA_FIELDS",
    "SweepSpec",
    "sweep",
    "SweepFailed",
    "spread",
    "summary_table",
    "finite_runs",
    "n_diverged",
    "run_path",
    "load_run",
    "write_run",
    "combine_runs",
    "prepared_data",
]

log = logging.getLogger(__name__)

EXECUTORS = ("serial", "processes", "dask", "stacked")
#: The RunConfig fields (and properties) that decide what :func:`initmem.data.prepare_data` returns (with the device).
DATA_FIELDS = ("data", "effective_data_seed", "train_size", "val_size", "test_size", "train_eval_size", "image_size")
#: Run variables renamed in a sweep Dataset because their name is a RunConfig field (a sweep coordinate).
RENAMED_VARIABLES = {"lr": "scheduled_lr"}
_SPEC_KEYS = ("base", "grid", "zip")
_FIELD_TYPES = {f.name: str(f.type) for f in fields(RunConfig)}
_SCALAR_TYPES = (bool, int, float, str)


# ----------------------------------------------------------------------------------------------
# The spec
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepSpec:
    """A base config, a grid and one optional zip group (see the module docstring).

    ``base`` may be a mapping of RunConfig fields or a :class:`RunConfig`. Everything is validated on
    construction, including every point's RunConfig; problems raise :class:`ConfigError` with one line
    naming the key (``grid.sigma_w: ...``) or the field and the sweep point.
    """

    base: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    zip: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    _points: tuple[tuple[dict[str, Any], RunConfig], ...] = field(
        default=(), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        base = self.base.to_dict() if isinstance(self.base, RunConfig) else self.base
        object.__setattr__(self, "base", _check_base(base))
        object.__setattr__(self, "grid", _check_axes("grid", self.grid))
        object.__setattr__(self, "zip", _check_axes("zip", self.zip))
        _check_zip(self.grid, self.zip)
        object.__setattr__(self, "_points", tuple(self._build_points()))

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "SweepSpec":
        """From ``{"base": {...}, "grid": {...}, "zip": {...}}`` (every key optional)."""
        if not isinstance(values, Mapping):
            raise ConfigError(
                f"sweep spec: must be a mapping with keys {', '.join(_SPEC_KEYS)}, got {type(values).__name__}"
            )
        unknown = [key for key in values if key not in _SPEC_KEYS]
        if unknown:
            raise ConfigError(f"{unknown[0]}: unknown sweep spec key; allowed keys are {', '.join(_SPEC_KEYS)}")
        return cls(**{key: values[key] if values[key] is not None else {} for key in values})

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "SweepSpec":
        """Read a YAML or JSON spec file."""
        return cls.from_dict(read_mapping_file(path, "sweep spec"))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` turns back into an equal spec."""
        return {"base": dict(self.base), "grid": {k: list(v) for k, v in self.grid.items()},
                "zip": {k: list(v) for k, v in self.zip.items()}}  # fmt: skip

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=False)

    # --- the points ---------------------------------------------------------------------------
    @property
    def dims(self) -> list[str]:
        """The sweep dimensions: the grid fields, then the first zipped field."""
        return [*self.grid, *list(self.zip)[:1]]

    @property
    def shape(self) -> tuple[int, ...]:
        """Sizes of :attr:`dims`."""
        zipped = [len(next(iter(self.zip.values())))] if self.zip else []
        return (*(len(v) for v in self.grid.values()), *zipped)

    @property
    def n_runs(self) -> int:
        return math.prod(self.shape)

    def configs(self) -> list[tuple[dict[str, Any], RunConfig]]:
        """Every point as ``(coords, config)``, in C order of :attr:`shape` (the last dim fastest).

        ``coords`` maps every swept field (grid and zipped, in spec order) to its value.
        """
        return [(dict(coords), config) for coords, config in self._points]

    def _build_points(self) -> Iterable[tuple[dict[str, Any], RunConfig]]:
        zip_length = len(next(iter(self.zip.values()))) if self.zip else 1
        seen: dict[str, dict[str, Any]] = {}
        for values in itertools.product(*self.grid.values(), range(zip_length)):
            coords = dict(zip(self.grid, values[:-1]))
            coords.update({name: column[values[-1]] for name, column in self.zip.items()})
            try:
                config = RunConfig.from_dict({**self.base, **coords})
            except ConfigError as exc:
                where = f" (sweep point {_format_coords(coords)})" if coords else ""
                raise ConfigError(f"{exc}{where}") from None
            digest = config.hash()
            if digest in seen:
                raise ConfigError(
                    f"sweep points {_format_coords(seen[digest])} and {_format_coords(coords)} are the same run "
                    f"(hash {digest}); remove one of the values"
                )
            seen[digest] = coords
            yield coords, config


def _format_coords(coords: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in coords.items()) or "base"


def _check_base(base: Any) -> dict[str, Any]:
    if not isinstance(base, Mapping):
        raise ConfigError(f"base: must be a mapping of RunConfig fields, got {type(base).__name__}")
    for key in base:
        if key not in _FIELD_TYPES:
            raise ConfigError(f"base.{key}: unknown field; known fields are {', '.join(sorted(_FIELD_TYPES))}")
    return {key: _normalise(key, value) for key, value in base.items()}


def _check_axes(where: str, axes: Any) -> dict[str, list[Any]]:
    """Validate ``grid`` or ``zip``: known, non-execution fields -> non-empty lists of distinct scalars."""
    if not isinstance(axes, Mapping):
        raise ConfigError(f"{where}: must be a mapping of field -> list of values, got {type(axes).__name__}")
    out: dict[str, list[Any]] = {}
    for name, values in axes.items():
        key = f"{where}.{name}"
        if name not in _FIELD_TYPES:
            raise ConfigError(f"{key}: unknown field; known fields are {', '.join(sorted(_FIELD_TYPES))}")
        if name in EXECUTION_FIELDS:
            raise ConfigError(f"{key}: an execution field (not part of the run hash) cannot be swept; set it in base")
        if not isinstance(values, (list, tuple)):
            raise ConfigError(f"{key}: must be a list of values, got {values!r}")
        if len(values) == 0:
            raise ConfigError(f"{key}: empty list; give at least one value")
        for value in values:
            if not isinstance(value, _SCALAR_TYPES):
                raise ConfigError(
                    f"{key}: swept values must be numbers, strings or booleans (they become coordinates), got {value!r}"
                )
        normalised = [_normalise(name, value) for value in values]
        if where == "grid" or not out:  # a dimension's coordinate must not repeat
            _check_distinct(key, normalised)
        out[name] = normalised
    return out


def _check_distinct(key: str, values: list[Any]) -> None:
    seen: set[str] = set()
    for value in values:
        token = json.dumps(value)
        if token in seen:
            raise ConfigError(f"{key}: duplicate value {value!r}; every value of a dimension must differ")
        seen.add(token)


def _check_zip(grid: Mapping[str, list], zipped: Mapping[str, list]) -> None:
    both = [name for name in zipped if name in grid]
    if both:
        raise ConfigError(f"zip.{both[0]}: already a grid field; a field can be swept only once")
    lengths = {name: len(values) for name, values in zipped.items()}
    if len(set(lengths.values())) > 1:
        listing = ", ".join(f"{name}: {n}" for name, n in lengths.items())
        raise ConfigError(f"zip: the zipped lists must have equal lengths, got {listing}")


def _normalise(name: str, value: Any) -> Any:
    """Integers given for float fields become floats (so ``1`` and ``1.0`` are one run, one hash)."""
    if _FIELD_TYPES[name].startswith("float") and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _as_spec(spec: SweepSpec | Mapping[str, Any] | str | os.PathLike) -> SweepSpec:
    if isinstance(spec, SweepSpec):
        return spec
    if isinstance(spec, Mapping):
        return SweepSpec.from_dict(spec)
    return SweepSpec.from_file(spec)


# ----------------------------------------------------------------------------------------------
# The run cache
# ----------------------------------------------------------------------------------------------
#: The run-file attribute holding :func:`content_digest`, verified by :func:`load_run`.
CHECKSUM_ATTR = "content_sha256"


def run_path(cache_dir: str | os.PathLike, config: RunConfig, stacked: int = 0) -> Path:
    """Where a run's Dataset is cached: ``cache_dir/<config.hash()>.nc``, or ``<hash>.stacked<K>.nc`` for a run
    trained in a stack of K models (``stacked=K``): stacking changes the floating-point path, so a stacked and a
    sequential run of one config never share a file."""
    suffix = f".stacked{stacked}" if stacked > 1 else ""
    return Path(cache_dir) / f"{config.hash()}{suffix}.nc"


def _checkpoint_path(cache_dir: str | os.PathLike, config: RunConfig) -> Path | None:
    return Path(cache_dir) / f"{config.hash()}.ckpt" if config.checkpoint_every else None


def content_digest(ds: xr.Dataset) -> str:
    """SHA-256 of a Dataset's variables (names, dims, dtypes kinds, values) and attributes, except
    :data:`CHECKSUM_ATTR`; equal before writing and after reading back a netCDF file."""
    digest = hashlib.sha256()
    for name in sorted(map(str, ds.variables)):
        var = ds.variables[name]
        values = np.asarray(var.values)
        digest.update(f"{name}{tuple(var.dims)}{values.shape}".encode())
        if values.dtype.kind in "fiub":
            digest.update(np.ascontiguousarray(values, dtype=np.float64).tobytes())
        else:
            digest.update(json.dumps(values.astype(str).tolist()).encode())
    attrs = {str(k): _plain_value(v) for k, v in ds.attrs.items() if k != CHECKSUM_ATTR}
    digest.update(json.dumps(attrs, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def _plain_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_run(ds: xr.Dataset, path: str | os.PathLike) -> None:
    """Write ``ds`` to ``path`` atomically (a temporary file in the same folder, fsync, rename), with its
    :func:`content_digest` in the attribute :data:`CHECKSUM_ATTR`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    ds = ds.copy(deep=False)
    ds.attrs = _plain_attrs(ds.attrs)
    ds.attrs[CHECKSUM_ATTR] = content_digest(ds)
    try:
        ds.to_netcdf(tmp, engine="h5netcdf")
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _plain_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes netCDF accepts: str subclasses (e.g. ``torch.__version__``) as plain str, bools as
    ints, None as ''; anything else is kept."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, str):
            value = str(value)
        elif isinstance(value, (bool, np.bool_)):
            value = int(value)
        elif value is None:
            value = ""
        out[key] = value
    return out


def load_run(path: str | os.PathLike, config: RunConfig | None = None) -> xr.Dataset | None:
    """A cached run, fully in memory with the file closed; None if there is none.

    A file that cannot be read, whose :data:`CHECKSUM_ATTR` does not match its content (corrupt, truncated or
    written by something else), or that belongs to another config than ``config`` is reported in one warning
    line and moved aside to ``<path>.rejected``, so that the run is trained again and the file can be inspected.
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        ds = xr.load_dataset(path, engine="h5netcdf")
        stored = ds.attrs.get(CHECKSUM_ATTR)
        if stored is None:
            reason = "it has no checksum (not a run file of this version)"
        elif stored != content_digest(ds):
            reason = "its content does not match its checksum (corrupt)"
        elif config is not None and ds.attrs.get("config_hash") != config.hash():
            reason = f"its config_hash {ds.attrs.get('config_hash')!r} is not the run's {config.hash()}"
        else:
            return ds
    except Exception as exc:  # noqa: BLE001 - a corrupt file of any kind is re-trained
        reason = f"it is unreadable ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    _reject(path, reason)
    return None


def _reject(path: Path, reason: str) -> None:
    """Move a cached file that cannot be used aside (``<path>.rejected``), with one warning line."""
    rejected = path.with_name(path.name + ".rejected")
    try:
        os.replace(path, rejected)
        where = f"moved to {rejected.name}"
    except OSError as exc:
        where = f"could not be moved aside ({type(exc).__name__})"
    log.warning("ignoring the cached run %s: %s; %s, it will be trained again", path, reason, where)


# ----------------------------------------------------------------------------------------------
# One run in a worker
# ----------------------------------------------------------------------------------------------
_DATA_CACHE: dict[tuple, "PreparedData"] = {}


def prepared_data(config: RunConfig) -> "PreparedData":
    """The prepared data of ``config``, loaded once per process for each distinct :data:`DATA_FIELDS`
    and device. Only the latest one is kept (a full CIFAR-10 split is ~0.7 GB on a device)."""
    from .data import prepare_data
    from .training import resolve_device

    device = resolve_device(config.device)
    key = (*(getattr(config, name) for name in DATA_FIELDS), str(device))
    if key not in _DATA_CACHE:
        _DATA_CACHE.clear()
        _DATA_CACHE[key] = prepare_data(config, device)
    return _DATA_CACHE[key]


def _data_key(config: RunConfig) -> tuple:
    return tuple(json.dumps(getattr(config, name)) for name in (*DATA_FIELDS, "device"))


#: Seconds between two looks at a run that another process has claimed.
CLAIM_POLL_S = 1.0
#: Seconds between two looks of a worker's watchdog at its parent.
WATCHDOG_POLL_S = 0.5


def _execute(config: RunConfig, cache_dir: str, progress: bool, wait: bool = True) -> str:
    """Train one run and cache it, unless its file exists or another process trains it (its claim).

    Returns ``"cached"`` (the file exists, maybe written meanwhile by another sweep), ``"trained"``, or, with
    ``wait=False``, ``"claimed"`` when a live holder has the run's claim; with ``wait=True`` it waits for that
    holder's file (or takes over a claim gone stale). The checkpoint is deleted only after the file is written.
    """
    from .training import train

    path = run_path(cache_dir, config)
    claim = RunClaim(path)
    if not _claim_or_wait([path], [claim], wait):
        return "cached" if path.exists() else "claimed"
    with claim:
        checkpoint = _checkpoint_path(cache_dir, config)
        ds = train(config, checkpoint_path=checkpoint, data=prepared_data(config), progress=progress,
                   keep_checkpoint=True)  # fmt: skip
        write_run(ds, path)
        if checkpoint is not None:
            checkpoint.unlink(missing_ok=True)
    log.info("trained run %s", config.hash())
    return "trained"


def _claim_or_wait(paths: list[Path], claims: list[RunClaim], wait: bool) -> bool:
    """Hold every claim of the runs ``paths`` (all of them, or none); False once every file exists, or when a
    claim is held elsewhere and ``wait`` is False. A file that appears after its claim is taken counts as done."""
    while True:
        if all(path.exists() for path in paths):
            return False
        taken = [claim for claim in claims if claim.acquire()]
        if len(taken) == len(claims):
            if all(path.exists() for path in paths):  # finished by the holder between the look and the claim
                for claim in taken:
                    claim.release()
                return False
            return True
        for claim in taken:
            claim.release()
        if not wait:
            return False
        time.sleep(CLAIM_POLL_S)


# ----------------------------------------------------------------------------------------------
# Executors: each calls done(config, error_or_None) once per run
# ----------------------------------------------------------------------------------------------
Done = Callable[[RunConfig, BaseException | None], None]


def _run_serial(configs: list[RunConfig], cache_dir: str, progress: bool, done: Done) -> None:
    """Train ``configs`` in turn; runs that another sweep has claimed come last (then this one waits for them)."""
    deferred = []
    for wait, batch in ((False, configs), (True, deferred)):
        for config in batch:
            try:
                outcome = _execute(config, cache_dir, progress and config.progress, wait=wait)
            except Exception as exc:  # noqa: BLE001 - reported, the sweep goes on
                done(config, exc)
                continue
            if outcome == "claimed":
                log.info("run %s is being trained by another process; coming back to it", config.hash())
                deferred.append(config)
            else:
                done(config, None)


def _watch_parent(parent_pid: int) -> None:
    """Start a daemon thread that ends this worker process (``os._exit``) as soon as its parent is gone.

    A worker exits when its own parent changes (it was re-parented: the process that started it was killed) or
    when ``parent_pid`` (the sweep process) no longer exists, so that killing a sweep never leaves workers
    training on. Used as a process-pool initializer and run on the workers of a LocalCluster started here.
    """
    own_parent = os.getppid()

    def watch() -> None:
        while os.getppid() == own_parent and process_alive(parent_pid):
            time.sleep(WATCHDOG_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="initmem-parent-watchdog", daemon=True).start()


def _run_processes(configs: list[RunConfig], cache_dir: str, workers: int, done: Done) -> None:
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_watch_parent,
                               initargs=(os.getpid(),))  # fmt: skip
    try:
        futures = {pool.submit(_execute, config, cache_dir, False): config for config in configs}
        for future in as_completed(futures):
            done(futures[future], future.exception())
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _run_dask(configs: list[RunConfig], cache_dir: str, workers: int, client: Any, done: Done) -> None:
    from distributed import Client, LocalCluster
    from distributed import as_completed as dask_completed

    cluster = None
    if client is None:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        )
        client = Client(cluster)
        client.run(_watch_parent, os.getpid())  # the workers of our own cluster (its nannies live in this process)
    try:
        futures = {client.submit(_execute, config, cache_dir, False, pure=False): config for config in configs}
        for future in dask_completed(list(futures)):
            done(futures[future], future.exception())
    finally:
        if cluster is not None:
            client.close()
            cluster.close()


def _run_stacked(groups: list[list[RunConfig]], cache_dir: str, progress: bool, done: Done) -> None:
    """Train each group of :func:`initmem.stacked.stack_groups` as one stack (a group of one: sequentially)."""
    deferred = []
    for wait, batch in ((False, groups), (True, deferred)):
        for group in batch:
            if len(group) == 1:
                _run_serial(group, cache_dir, progress, done)
            elif _train_stack(group, cache_dir, progress, done, wait) == "claimed":
                deferred.append(group)


def _train_stack(group: list[RunConfig], cache_dir: str, progress: bool, done: Done, wait: bool) -> str:
    """Train one stack of K > 1 runs under the claims of all its members (see :func:`_execute`)."""
    from .stacked import group_hash, train_stacked

    paths = [run_path(cache_dir, config, stacked=len(group)) for config in group]
    claims = [RunClaim(path) for path in paths]
    checkpoint = Path(cache_dir) / f"stacked-{group_hash(group)}.ckpt" if group[0].checkpoint_every else None
    if not _claim_or_wait(paths, claims, wait):
        if not all(path.exists() for path in paths):
            return "claimed"
        outcome, error = "cached", None
    else:
        outcome, error = "trained", None
        try:
            datasets = train_stacked(
                group, data=prepared_data(group[0]), progress=progress and group[0].progress,
                checkpoint_path=checkpoint, keep_checkpoint=True,
            )  # fmt: skip
            for path, ds in zip(paths, datasets):
                write_run(ds, path)
            if checkpoint is not None:
                checkpoint.unlink(missing_ok=True)
        except Exception as exc:  # noqa: BLE001 - reported, the sweep goes on
            error = exc
        finally:
            for claim in claims:
                claim.release()
    for config in group:
        done(config, error)
    return outcome


def _default_workers(n_pending: int, workers: int | None) -> int:
    if workers is not None:
        if workers < 1:
            raise ConfigError(f"workers: must be a positive integer, got {workers!r}")
        return workers
    return max(1, min(n_pending, os.cpu_count() or 1))


def _with_threads(config: RunConfig, threads: int | None) -> RunConfig:
    """``threads`` (if given) as the run's torch thread count (part of its hash)."""
    return config.replace(num_threads=threads) if threads else config


def _resolve_threads(
    configs: list[RunConfig], executor: str, workers: int | None, client: Any, threads_per_worker: int | None
) -> list[RunConfig]:
    """The configs with the torch thread count each will run with, decided before any hash is taken.

    The thread count changes the numbers, so it is part of a run's hash and must not depend on how many runs
    happen to be cached. ``threads_per_worker`` wins when given; otherwise a config's own ``num_threads``; a
    config without one gets, under ``processes`` (or ``dask`` without a client), ``cpu_count // workers`` with
    ``workers`` defaulting to ``min(runs in the sweep, cpu_count)``, and otherwise keeps torch's default (None).
    """
    if threads_per_worker is not None:
        return [_with_threads(c, threads_per_worker) for c in configs]
    if executor == "processes" or (executor == "dask" and client is None):
        threads = max(1, (os.cpu_count() or 1) // _default_workers(len(configs), workers))
        return [c if c.num_threads else _with_threads(c, threads) for c in configs]
    return configs


# ----------------------------------------------------------------------------------------------
# sweep()
# ----------------------------------------------------------------------------------------------
class SweepFailed(RuntimeError):
    """Some runs of a sweep raised; the others are cached. ``failures`` maps each failed run's hash to its
    one-line error; the message is one line (the count, the cache, then each failure)."""

    def __init__(self, failures: Mapping[str, str], n_runs: int, cache: Path) -> None:
        self.failures = dict(failures)
        self.n_runs = n_runs
        listing = "; ".join(f"{digest}: {error}" for digest, error in self.failures.items())
        super().__init__(f"{len(self.failures)} of {n_runs} runs failed (the others are cached in {cache}): {listing}")


def sweep(
    spec: SweepSpec | Mapping[str, Any] | str | os.PathLike,
    cache_dir: str | os.PathLike,
    executor: str = "serial",
    workers: int | None = None,
    client: Any = None,
    progress: bool = True,
    threads_per_worker: int | None = None,
    stack_size: int | None = None,
) -> xr.Dataset:
    """Train every point of ``spec`` that ``cache_dir`` lacks, then return the combined Dataset.

    Args:
        spec: a :class:`SweepSpec`, its dict, or a YAML/JSON file.
        cache_dir: folder of the per-run files ``<hash>.nc`` (created if missing).
        executor: ``serial``, ``processes``, ``dask`` or ``stacked`` (see the module docstring). The parallel
            executors start fresh (spawned) Python processes that import torch (seconds each): worth it for
            runs of minutes, not for toy runs. Called from a script, they need ``if __name__ == "__main__":``.
            ``stacked`` runs are cached as ``<hash>.stacked<K>.nc``: they are other numbers than sequential ones.
        workers: parallel workers (processes, or a LocalCluster's worker processes); default
            ``min(runs in the sweep, os.cpu_count())``. Ignored by ``serial``/``stacked`` and with ``client``.
        client: a ``distributed.Client`` for ``dask`` (its workers must see ``cache_dir``); None starts a
            ``LocalCluster(n_workers=workers, threads_per_worker=1, processes=True)`` and closes it afterwards.
        progress: an overall bar (runs done of total, ETA); ``serial``/``stacked`` also show each run's bar
            (where the config's ``progress`` allows). tqdm hides both off a terminal.
        threads_per_worker: torch threads of each run, overriding the configs' ``num_threads``. Default: a
            config's own ``num_threads``; under ``processes`` a config without one gets
            ``max(1, os.cpu_count() // workers)``. The thread count is part of each run's hash.
        stack_size: ``stacked`` only: at most this many models per stack (GPU memory); None stacks every
            run that differs only in sigma_w/seed/init_head.

    Returns:
        The combined Dataset (see the module docstring).

    Raises:
        ConfigError: an invalid spec or argument (before anything runs).
        initmem.fileio.OutputError: ``cache_dir`` cannot be written (before anything runs).
        SweepFailed: some runs raised (a :class:`RuntimeError` listing their hashes). Every other run is
            cached first, so a rerun trains only the failed ones.
    """
    t0 = time.perf_counter()
    spec = _as_spec(spec)
    if executor not in EXECUTORS:
        raise ConfigError(f"executor: allowed values are {', '.join(EXECUTORS)}; got {executor!r}")
    if threads_per_worker is not None and threads_per_worker < 1:
        raise ConfigError(f"threads_per_worker: must be a positive integer, got {threads_per_worker!r}")
    if stack_size is not None and stack_size < 1:
        raise ConfigError(f"stack_size: must be a positive integer, got {stack_size!r}")
    cache = check_output_dir(cache_dir, "cache_dir")  # before anything trains
    remove_stale_temp_files(cache)

    configs = _resolve_threads([c for _, c in spec.configs()], executor, workers, client, threads_per_worker)
    stacked = _stack_sizes(configs, executor, stack_size)
    paths = {c.hash(): run_path(cache, c, stacked.get(c.hash(), 0)) for c in configs}
    runs: dict[str, xr.Dataset] = {}
    for config in configs:
        ds = load_run(paths[config.hash()], config)
        if ds is not None:
            runs[config.hash()] = ds
    n_cached = len(runs)
    pending = [config for config in configs if config.hash() not in runs]
    pending.sort(key=_data_key)  # runs sharing their data run back to back (one prepare_data each)
    log.info("sweep: %d runs, %d cached, %d to train with %s", len(configs), n_cached, len(pending), executor)

    failures = _train_pending(pending, configs, cache, executor, workers, client, progress, stack_size, n_cached)
    for config in configs:
        digest = config.hash()
        if digest not in runs and digest not in failures:
            ds = load_run(paths[digest], config)
            if ds is None:
                failures[digest] = f"no readable run file {paths[digest]} after training"
            else:
                runs[digest] = ds
    if failures:
        raise SweepFailed(failures, len(configs), cache)

    combined = combine_runs(spec, [runs[config.hash()] for config in configs])
    combined.attrs.update(
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        wall_time_s=time.perf_counter() - t0,
        n_runs=len(configs),
        n_cached=n_cached,
        executor=executor,
    )
    return combined


def _stack_sizes(configs: list[RunConfig], executor: str, stack_size: int | None) -> dict[str, int]:
    """{hash: K} for runs that the ``stacked`` executor trains in a stack of K > 1 models (from the whole
    sweep's grouping, so a run's file name does not depend on what is cached)."""
    if executor != "stacked":
        return {}
    from .stacked import stack_groups

    return {c.hash(): len(g) for g in stack_groups(configs, stack_size) if len(g) > 1 for c in g}


def _train_pending(
    pending: list[RunConfig], configs: list[RunConfig], cache: Path, executor: str, workers: int | None,
    client: Any, progress: bool, stack_size: int | None, n_cached: int,
) -> dict[str, str]:  # fmt: skip
    """Run ``pending`` (of the sweep's ``configs``) with ``executor``; returns {hash: one-line error} of the
    runs that raised. Under ``stacked``, every group with a pending member is trained whole."""
    from tqdm.auto import tqdm

    failures: dict[str, str] = {}
    if not pending:
        return failures
    bar = tqdm(total=len(configs), initial=n_cached, desc="sweep", unit="run", disable=None if progress else True,
               dynamic_ncols=True, smoothing=0)  # fmt: skip

    def done(config: RunConfig, error: BaseException | None) -> None:
        if error is not None:
            failures[config.hash()] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            log.error("run %s failed (%s: %s); config: %s",
                      config.hash(), type(error).__name__, error, config.to_json())  # fmt: skip
        if config in pending_set:
            bar.update(1)

    pending_set = set(pending)
    folder = str(cache)
    try:
        if executor == "serial":
            _run_serial(pending, folder, progress, done)
        elif executor == "stacked":
            from .stacked import stack_groups

            groups = [g for g in stack_groups(configs, stack_size) if pending_set.intersection(g)]
            _run_stacked(groups, folder, progress, done)
        else:
            n_workers = min(_default_workers(len(configs), workers), len(pending))
            if executor == "processes":
                _run_processes(pending, folder, n_workers, done)
            else:
                _run_dask(pending, folder, n_workers, client, done)
    finally:
        bar.close()
    return failures


# ----------------------------------------------------------------------------------------------
# Combining the runs
# ----------------------------------------------------------------------------------------------
def combine_runs(spec: SweepSpec, runs: Sequence[xr.Dataset]) -> xr.Dataset:
    """One Dataset from the per-run Datasets of ``spec.configs()`` (same order).

    Sweep dims (:attr:`SweepSpec.dims`) come first, then ``epoch`` (the sorted union over the runs) and
    ``layer`` (the union, each run's order kept); whatever a run lacks is NaN. Variables are float64,
    except ``run_hash``. Zipped fields other than the first are coordinates along the zip dimension.
    """
    points = spec.configs()
    if len(runs) != len(points):
        raise ValueError(f"runs: expected {len(points)} datasets (one per sweep point), got {len(runs)}")
    dims, shape = spec.dims, spec.shape
    epochs = np.array(sorted({int(e) for ds in runs for e in ds["epoch"].values}))
    layers = _merge_ordered([list(map(str, ds["layer"].values)) for ds in runs if "layer" in ds.coords])
    run_dims = {"epoch": epochs, "layer": np.array(layers, dtype=str)}

    names: dict[str, tuple[str, ...]] = {}
    var_attrs: dict[str, dict] = {}
    for ds in runs:
        for name, var in ds.data_vars.items():
            names.setdefault(name, var.dims)
            var_attrs.setdefault(name, dict(var.attrs))
    arrays = {name: np.full(shape + tuple(len(run_dims[d]) for d in vdims), np.nan) for name, vdims in names.items()}
    hashes = np.empty(shape, dtype=object)
    for flat, ds in enumerate(runs):
        index = np.unravel_index(flat, shape) if shape else ()
        aligned = ds.reindex({d: run_dims[d] for d in ds.dims if d in run_dims})
        for name, vdims in names.items():
            if name in aligned:
                arrays[name][index] = aligned[name].transpose(*vdims).values
        hashes[index] = ds.attrs.get("config_hash", points[flat][1].hash())

    coords: dict[str, Any] = {dim: _coordinate(spec, dim) for dim in dims}
    if spec.zip:
        zip_dim = dims[-1]
        coords.update({name: (zip_dim, _coordinate(spec, name)) for name in list(spec.zip)[1:]})
    coords.update(run_dims)
    rename = {name: RENAMED_VARIABLES.get(name, name) for name in names}
    for name, new in rename.items():
        if new in coords:
            rename[name] = f"{new}_run"
            log.warning("run variable %r is also a sweep coordinate; it is called %r in the sweep", new, rename[name])
    variables = {rename[name]: ((*dims, *vdims), arrays[name], var_attrs[name]) for name, vdims in names.items()}
    variables["run_hash"] = (tuple(dims), hashes.astype(str), {"description": "cache key: <cache_dir>/<run_hash>.nc"})
    combined = xr.Dataset(variables, coords=coords)
    combined.attrs.update(_provenance(spec, runs))
    return combined


def _coordinate(spec: SweepSpec, name: str) -> np.ndarray:
    values = spec.grid.get(name, spec.zip.get(name))
    return np.array(values, dtype=str) if all(isinstance(v, str) for v in values) else np.array(values)


def _merge_ordered(lists: Sequence[Sequence[str]]) -> list[str]:
    """The union of ``lists``, each new name placed right after its predecessor in its own list."""
    merged: list[str] = []
    seen: set[str] = set()
    for names in lists:
        previous = None
        for name in names:
            if name not in seen:
                merged.insert(merged.index(previous) + 1 if previous is not None else 0, name)
                seen.add(name)
            previous = name
    return merged


def _distinct(runs: Sequence[xr.Dataset], attr: str) -> str:
    """The distinct values of a run attribute: the value itself if there is one, else a JSON list."""
    values = list(dict.fromkeys(str(ds.attrs.get(attr, "")) for ds in runs))
    return values[0] if len(values) == 1 else json.dumps(values)


#: Run attributes recording a floating-point path that neither the hash nor the file name covers; one sweep may
#: not mix them (stacked runs have files of their own, see :func:`run_path`).
NUMERICS_ATTRS = ("device_type",)


def _numerics(ds: xr.Dataset) -> dict[str, str]:
    return {"device_type": str(ds.attrs.get("device", "")).split(":")[0]}


def _provenance(spec: SweepSpec, runs: Sequence[xr.Dataset]) -> dict[str, Any]:
    from .records import git_commit

    for name in NUMERICS_ATTRS:
        values = sorted({_numerics(ds)[name] for ds in runs})
        if len(values) > 1:
            raise ValueError(
                f"runs: one sweep may not mix runs with different {name} ({', '.join(values)}): they follow "
                "different floating-point paths; combine them in separate sweeps"
            )

    return {
        "spec": spec.to_json(),
        "initmem_version": __version__,
        "git_commit": git_commit(),
        "torch_version": _distinct(runs, "torch_version"),
        "python_version": sys.version.split()[0],
        "hardware": _distinct(runs, "hardware"),
        "device": _distinct(runs, "device"),
        "data_source": _distinct(runs, "data_source"),
    }


# ----------------------------------------------------------------------------------------------
# Analysis
# ----------------------------------------------------------------------------------------------
def spread(ds: xr.Dataset | xr.DataArray, over: str = "sigma_w", var: str = "selected_test_acc") -> xr.DataArray:
    """Max - min over ``over`` (NaN ignored) of ``ds[var]`` (or of the DataArray ``ds``), in the variable's
    units (percentage points for accuracies); every other dimension is kept (seeds included). Given a Dataset,
    diverged runs (``diverged == 1``) are left out (:func:`finite_runs`)."""
    values = finite_runs(ds, var) if isinstance(ds, xr.Dataset) else ds
    return _spread(values, over)


def finite_runs(ds: xr.Dataset, var: str) -> xr.DataArray:
    """``ds[var]`` with the diverged runs (``ds.diverged == 1``) set to NaN, so that they drop out of every
    spread and mean; files written before diverged runs recorded NaN predictors still held epoch-0 values."""
    values = ds[var]
    if "diverged" not in ds:
        return values
    return values.where(ds["diverged"] != 1)


def n_diverged(ds: xr.Dataset) -> int:
    """How many runs of ``ds`` diverged (0 when it has no ``diverged`` variable)."""
    return int((ds["diverged"] == 1).sum()) if "diverged" in ds else 0


def summary_table(
    ds: xr.Dataset,
    over: str = "sigma_w",
    by: str | Sequence[str] | None = None,
    seed_dim: str = "seed",
    variables: Sequence[str] = ("selected_test_acc", "final_test_acc"),
) -> "pd.DataFrame":
    """The spread over ``over`` per combination of the ``by`` dims, as a pandas DataFrame (one row each).

    Seeds (see :mod:`initmem.stats`): for each row and variable ``v`` (``selected`` = selected_test_acc,
    ``final`` = final_test_acc),

    * ``{v}_spread_pp``: the mean over seeds of the **per-seed** spread (each seed's max - min over ``over``; a
      seed's runs at different sigma_w share their directions and data order, so this is a paired comparison; a
      seed with a diverged run drops out) -- the headline number;
    * ``{v}_ci95_low`` / ``_high``: the 95 % Student-t interval of that mean over seeds (NaN with one seed);
    * ``{v}_n_seeds``: seeds with a spread;
    * ``{v}_spread_of_mean_pp``: max - min over ``over`` of the seed-mean accuracy (no interval; at most the mean
      of per-seed spreads, since seed noise inflates the latter);
    * ``{v}_best_{over}`` / ``{v}_worst_{over}``: where that seed-mean is highest / lowest.
    * ``n_diverged``: runs of the row that diverged. They are left out of every column above (their selected and
      final accuracies are NaN; :func:`finite_runs`).

    Args:
        ds: a sweep Dataset with dimension ``over``.
        by: dims indexing the rows; default every dim except ``over``, ``seed_dim``, ``epoch``, ``layer``.
            Any other dim of size > 1 raises ValueError (select a value first). Coordinates along a ``by`` dim
            (the other zipped fields, e.g. ``lr`` along ``optimizer``) become columns too.
    """
    import pandas as pd

    if over not in ds.dims:
        raise ValueError(f"over: {over!r} is not a dimension; available: {', '.join(map(str, ds.dims))}")
    ignored = {over, seed_dim, "epoch", "layer"}
    if by is None:
        by = [d for d in ds[variables[0]].dims if d not in ignored]
    else:
        by = [by] if isinstance(by, str) else list(by)
    for dim in ds[variables[0]].dims:
        if dim not in ignored and dim not in by and ds.sizes[dim] > 1:
            raise ValueError(f"by: dimension {dim!r} (size {ds.sizes[dim]}) is neither over, {seed_dim!r} nor in by; "
                             f"select one value (ds.sel({dim}=...)) or add it to by")  # fmt: skip
    rows = []
    combos = itertools.product(*(ds[d].values for d in by)) if by else [()]
    for combo in combos:
        selection = ds.sel(dict(zip(by, combo))) if by else ds
        row: dict[str, Any] = dict(zip(by, combo))
        for dim in by:  # zipped fields along a row dim, e.g. lr(optimizer)
            along = [name for name, c in ds.coords.items() if c.dims == (dim,) and name != dim]
            row.update({name: selection[name].item() for name in along})
        row["n_diverged"] = n_diverged(selection)
        for var in variables:
            values = finite_runs(selection, var).squeeze(drop=True)
            row.update(_spread_stats(values, over, seed_dim, var.removesuffix("_test_acc")))
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.set_index(by) if by else table


def _spread_stats(values: xr.DataArray, over: str, seed_dim: str, prefix: str) -> dict[str, Any]:
    """The summary_table columns of one variable (``values`` has dims ``over`` and maybe ``seed_dim``)."""
    from .stats import mean_interval, seed_mean, seed_spreads

    per_seed = values if seed_dim in values.dims else values.expand_dims(seed_dim)
    interval = mean_interval(seed_spreads(per_seed, over).values)
    curve = seed_mean(per_seed, seed_dim)
    finite = bool(np.isfinite(curve.values).any())
    sigmas = curve[over].values
    return {
        f"{prefix}_spread_pp": interval.estimate,
        f"{prefix}_ci95_low": interval.low,
        f"{prefix}_ci95_high": interval.high,
        f"{prefix}_n_seeds": interval.n,
        f"{prefix}_spread_of_mean_pp": float(np.nanmax(curve) - np.nanmin(curve)) if finite else math.nan,
        f"{prefix}_best_{over}": sigmas[np.nanargmax(curve.values)].item() if finite else math.nan,
        f"{prefix}_worst_{over}": sigmas[np.nanargmin(curve.values)].item() if finite else math.nan,
    }
