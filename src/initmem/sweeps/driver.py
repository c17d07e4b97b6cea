"""``sweep(spec, cache_dir)``: train every point of a spec that the run store lacks, return the combined Dataset.

The driver validates everything first (the spec, the executor, the cache folder is writable), reads the runs
already in the store (:mod:`initmem.sweeps.store`), trains the rest with an executor
(:mod:`initmem.sweeps.executors`) and combines all of them (:mod:`initmem.sweeps.combine`). The hash of a run
covers every field that changes the numbers, the thread count and memory layout included; stacked runs have
files of their own. A run that raises is logged with its config, the others go on, and :func:`sweep` raises
:class:`SweepFailed` listing the failures at the end: a rerun trains only what is missing.

The combined Dataset has the attributes of :mod:`initmem.sweeps.combine` plus ``created``, ``wall_time_s``
(this call, seconds), ``n_runs``, ``n_cached`` (runs read from the store instead of trained) and ``executor``.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import xarray as xr

from ..base.files import check_output_dir, remove_stale_temp_files
from ..run.config import ConfigError, RunConfig
from .combine import combine_runs
from .executors import (
    EXECUTORS,
    data_key,
    default_workers,
    resolve_threads,
    run_dask,
    run_processes,
    run_serial,
    run_stacked,
)
from .spec import SweepSpec, as_spec
from .store import load_run, run_path

__all__ = ["SweepFailed", "sweep"]

log = logging.getLogger(__name__)


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
        initmem.base.files.OutputError: ``cache_dir`` cannot be written (before anything runs).
        SweepFailed: some runs raised (a :class:`RuntimeError` listing their hashes). Every other run is
            cached first, so a rerun trains only the failed ones.
    """
    t0 = time.perf_counter()
    spec = as_spec(spec)
    if executor not in EXECUTORS:
        raise ConfigError(f"executor: allowed values are {', '.join(EXECUTORS)}; got {executor!r}")
    if threads_per_worker is not None and threads_per_worker < 1:
        raise ConfigError(f"threads_per_worker: must be a positive integer, got {threads_per_worker!r}")
    if stack_size is not None and stack_size < 1:
        raise ConfigError(f"stack_size: must be a positive integer, got {stack_size!r}")
    cache = check_output_dir(cache_dir, "cache_dir")  # before anything trains
    remove_stale_temp_files(cache)

    configs = resolve_threads([c for _, c in spec.configs()], executor, workers, client, threads_per_worker)
    stacked = _stack_sizes(configs, executor, stack_size)
    paths = {c.hash(): run_path(cache, c, stacked.get(c.hash(), 0)) for c in configs}
    runs: dict[str, xr.Dataset] = {}
    for config in configs:
        ds = load_run(paths[config.hash()], config)
        if ds is not None:
            runs[config.hash()] = ds
    n_cached = len(runs)
    pending = [config for config in configs if config.hash() not in runs]
    pending.sort(key=data_key)  # runs sharing their data run back to back (one prepare_data each)
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
    from ..run.stacked import stack_groups

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
            run_serial(pending, folder, progress, done)
        elif executor == "stacked":
            from ..run.stacked import stack_groups

            groups = [g for g in stack_groups(configs, stack_size) if pending_set.intersection(g)]
            run_stacked(groups, folder, progress, done)
        else:
            n_workers = min(default_workers(len(configs), workers), len(pending))
            if executor == "processes":
                run_processes(pending, folder, n_workers, done)
            else:
                run_dask(pending, folder, n_workers, client, done)
    finally:
        bar.close()
    return failures


