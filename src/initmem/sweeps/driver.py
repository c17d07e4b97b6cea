"""``sweep(spec, cache_dir)``: train every point of a spec that the run store lacks, return the combined Dataset.

The driver validates everything first (the spec, the executor, the cache folder is writable), reads the runs
already in the store (:mod:`initmem.sweeps.store`) or in read-only stores it is given to reuse (the committed record,
for an exploration), trains the rest with an executor
(:mod:`initmem.sweeps.executors`) and combines all of them (:mod:`initmem.sweeps.combine`). The hash of a run
covers every field that changes the numbers, the thread count and memory layout included; stacked runs have
files of their own. A run that raises is logged with its config, the others go on, and :func:`sweep` raises
:class:`SweepFailed` listing the failures at the end: a rerun trains only what is missing.

The combined Dataset has the attributes of :mod:`initmem.sweeps.combine` plus ``created``, ``wall_time_s``
(this call, seconds), ``n_runs``, ``n_cached`` (runs read from the store instead of trained), ``n_reused`` (runs read
from the read-only stores) and ``executor``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from ..base.bars import auto_tqdm
from ..base.claims import remove_stale_claims
from ..base.files import OutputError, check_output_dir, remove_stale_temp_files
from ..run.config import ConfigError, RunConfig
from .combine import combine_runs
from .executors import (
    EXECUTORS,
    RunJob,
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

__all__ = ["SweepFailed", "sweep", "plan_jobs", "check_trainable", "reusable", "train_jobs"]

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
    scheduler: str | None = None,
    reuse: Sequence[str | os.PathLike] = (),
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
        client: a ``distributed.Client`` for ``dask`` (its workers must see ``cache_dir`` at the same path: checked
            before anything trains); None starts a ``LocalCluster(n_workers=workers, threads_per_worker=1,
            processes=True)`` and closes it afterwards (unless ``scheduler`` is given).
        scheduler: ``dask`` only: the address of a running scheduler (``tcp://host:8786``) or its scheduler file;
            a client of it is opened and closed here (:func:`initmem.sweeps.cluster.connect`).
        progress: an overall bar (runs done of total, ETA); ``serial``/``stacked`` also show each run's bar
            (where the config's ``progress`` allows). tqdm hides both off a terminal.
        threads_per_worker: torch threads of each run, overriding the configs' ``num_threads``. Default: a
            config's own ``num_threads``; under ``processes`` a config without one gets
            ``max(1, os.cpu_count() // workers)``. The thread count is part of each run's hash.
        stack_size: ``stacked`` only: at most this many models per stack (GPU memory); None stacks every
            run that differs only in sigma_w/seed/init_head.
        reuse: read-only run stores (the committed record's ``results/<preset>/<experiment>/runs``, say): a run
            missing from ``cache_dir`` whose file is in one of them is read from there, its checksum and hash
            verified, instead of trained; nothing is written there. The combined Dataset counts them in ``n_reused``.

    Returns:
        The combined Dataset (see the module docstring).

    Raises:
        ConfigError: an invalid spec or argument, a run to train that cannot train on this machine
            (:func:`check_trainable`), or no scheduler at ``scheduler`` (before anything runs).
        initmem.base.files.OutputError: ``cache_dir`` cannot be written, or the workers of a cluster cannot see it
            (before anything runs); or it filled up (no space left): the sweep stops at the first run it cannot write,
            the runs written are kept, and a rerun trains only the others.
        SweepFailed: some runs raised (a :class:`RuntimeError` listing their hashes). Every other run is
            cached first, so a rerun trains only the failed ones.
        initmem.sweeps.cluster.ClusterLost: ``dask`` on a cluster whose scheduler went away, or that was left
            without any worker (:class:`~initmem.sweeps.cluster.ClusterWatch`); the message counts the runs
            finished, which are cached: a rerun trains the others.
    """
    t0 = time.perf_counter()
    spec = as_spec(spec)
    if executor not in EXECUTORS:
        raise ConfigError(f"executor: allowed values are {', '.join(EXECUTORS)}; got {executor!r}")
    if threads_per_worker is not None and threads_per_worker < 1:
        raise ConfigError(f"threads_per_worker: must be a positive integer, got {threads_per_worker!r}")
    if stack_size is not None and stack_size < 1:
        raise ConfigError(f"stack_size: must be a positive integer, got {stack_size!r}")
    if scheduler is not None and (executor != "dask" or client is not None):
        raise ConfigError("scheduler: only with executor 'dask' and no client (the scheduler's address, or a client)")
    cache = check_output_dir(cache_dir, "cache_dir")  # before anything trains
    remove_stale_temp_files(cache)
    remove_stale_claims(cache)

    with contextlib.ExitStack() as stack:
        if scheduler is not None:
            from .cluster import closing_client, connect

            client = stack.enter_context(closing_client(connect(scheduler)))
        if client is not None and executor == "dask":
            from .cluster import check_shared_cache

            cache = cache.resolve()  # the workers' working folders are not ours
            check_shared_cache(client, cache)
        jobs = plan_jobs(spec, cache, executor, workers, client, threads_per_worker, stack_size)
        runs, n_cached, n_reused = train_jobs(
            jobs, executor, workers=workers, client=client, progress=progress, stack_size=stack_size, reuse=reuse
        )
    combined = combine_runs(spec, [runs[job.key] for job in jobs])
    combined.attrs.update(
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        wall_time_s=time.perf_counter() - t0,
        n_runs=len(jobs),
        n_cached=n_cached,
        n_reused=n_reused,
        executor=executor,
    )
    return combined


def plan_jobs(
    spec: SweepSpec,
    cache: Path,
    executor: str,
    workers: int | None = None,
    client: Any = None,
    threads_per_worker: int | None = None,
    stack_size: int | None = None,
) -> list[RunJob]:
    """The jobs of ``spec`` as :func:`sweep` runs them: each config with the thread count it will run with
    (:func:`~initmem.sweeps.executors.resolve_threads`) and its file in ``cache`` (stacked runs: ``<hash>.stacked<K>
    .nc``). Computed before anything trains, so a caller can count what is cached, what can be reused and what is to
    train."""
    configs = resolve_threads([c for _, c in spec.configs()], executor, workers, client, threads_per_worker)
    stacked = _stack_sizes(configs, executor, stack_size)
    return [RunJob(c, run_path(cache, c, stacked.get(c.hash(), 0))) for c in configs]


def check_trainable(configs: Iterable[RunConfig], client: Any = None) -> None:
    """Raise :class:`ConfigError` for the first of ``configs`` (runs to train) that cannot train on this machine, in
    :func:`initmem.run.loop.run_device`'s one line naming the field and its allowed values (``compile`` off CUDA,
    ``device: cuda`` without a GPU): before anything trains, rather than once per run. Under a ``client`` nothing is
    checked (a cluster's workers have devices of their own)."""
    if client is not None:
        return
    from ..run.loop import run_device  # torch: only where runs are to train

    for config in {(c.device, c.compile): c for c in configs}.values():
        run_device(config)


def reusable(job: RunJob, reuse: Sequence[str | os.PathLike]) -> Path | None:
    """The first file in the read-only run stores ``reuse`` with the name of ``job``'s file, or None."""
    for folder in reuse:
        candidate = Path(folder) / job.path.name
        if candidate.is_file():
            return candidate
    return None


def _stack_sizes(configs: list[RunConfig], executor: str, stack_size: int | None) -> dict[str, int]:
    """{hash: K} for runs that the ``stacked`` executor trains in a stack of K > 1 models (from the whole
    sweep's grouping, so a run's file name does not depend on what is cached)."""
    if executor != "stacked":
        return {}
    from ..run.stacked import stack_groups

    return {c.hash(): len(g) for g in stack_groups(configs, stack_size) if len(g) > 1 for c in g}


def train_jobs(
    jobs: list[RunJob],
    executor: str,
    *,
    workers: int | None = None,
    client: Any = None,
    progress: bool = True,
    stack_size: int | None = None,
    reuse: Sequence[str | os.PathLike] = (),
) -> tuple[dict[str, xr.Dataset], int, int]:
    """Read the jobs whose run files exist, reuse what the read-only stores ``reuse`` hold, train the others with
    ``executor``, read those back.

    The part of :func:`sweep` that :func:`initmem.sweeps.measure.measure_init_memory` shares: ``jobs`` are
    :class:`~initmem.sweeps.executors.RunJob` values (their files are checked with :func:`load_run` against their key;
    a corrupt or foreign file is set aside and trained again; one in ``reuse`` is left where it is).

    Returns:
        ``({job.key: Dataset}, n_cached, n_reused)``: every job's run, how many were read from their own files and how
        many from ``reuse``, instead of trained.

    Raises:
        ConfigError: a job to train cannot train on this machine (:func:`check_trainable`): nothing trains, and the
            files found stay where they are.
        SweepFailed: some jobs raised (or left no readable file); every other run is written first.
    """
    runs: dict[str, xr.Dataset] = {}
    for job in jobs:
        ds = load_run(job.path, expected_hash=job.key)
        if ds is not None:
            runs[job.key] = ds
    n_cached = len(runs)
    for job in jobs:
        found = reusable(job, reuse) if job.key not in runs else None
        ds = load_run(found, expected_hash=job.key, read_only=True) if found is not None else None
        if ds is not None:
            runs[job.key] = ds
    n_reused = len(runs) - n_cached
    pending = [job for job in jobs if job.key not in runs]
    check_trainable([job.config for job in pending], client)
    pending.sort(key=lambda job: data_key(job.config))  # runs sharing their data run back to back
    log.info(
        "sweep: %d runs, %d cached, %d reused, %d to train with %s",
        len(jobs),
        n_cached,
        n_reused,
        len(pending),
        executor,
    )
    failures = _train_pending(pending, jobs, executor, workers, client, progress, stack_size, n_cached + n_reused)
    for job in jobs:
        if job.key not in runs and job.key not in failures:
            ds = load_run(job.path, expected_hash=job.key)
            if ds is None:
                failures[job.key] = f"no readable run file {job.path} after training"
            else:
                runs[job.key] = ds
    if failures:
        raise SweepFailed(failures, len(jobs), jobs[0].path.parent)
    return runs, n_cached, n_reused


#: The errors of a write into a full disk (or quota).
_FULL = (errno.ENOSPC, errno.EDQUOT)


def _train_pending(
    pending: list[RunJob],
    jobs: list[RunJob],
    executor: str,
    workers: int | None,
    client: Any,
    progress: bool,
    stack_size: int | None,
    n_cached: int,
) -> dict[str, str]:
    """Run ``pending`` (of all ``jobs``) with ``executor``; returns {key: one-line error} of the runs that raised.
    Under ``stacked``, every group with a pending member is trained whole.

    Raises:
        OutputError: a run could not be written for want of space (``ENOSPC``, ``EDQUOT``): the sweep stops there,
            rather than train runs it cannot keep; the runs written are kept, the half-written file was removed.
        ClusterLost: the cluster of ``dask`` went away (see :func:`~initmem.sweeps.executors.run_dask`); the message
            adds how many of the runs are finished and kept.
    """
    from .cluster import ClusterLost

    tqdm = auto_tqdm()
    failures: dict[str, str] = {}
    finished = [n_cached]
    if not pending:
        return failures
    bar = tqdm(
        total=len(jobs),
        initial=n_cached,
        desc="sweep",
        unit="run",
        disable=None if progress else True,
        dynamic_ncols=True,
        smoothing=0,
    )
    pending_keys = {job.key for job in pending}

    def done(job: RunJob, error: BaseException | None) -> None:
        if isinstance(error, OSError) and error.errno in _FULL:
            raise OutputError(
                f"cache_dir: no space left in {job.path.parent} (writing run {job.key}: {error.strerror}); the runs "
                f"finished are kept there, a rerun trains only the others: free some space first"
            ) from None
        if error is not None:
            failures[job.key] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            log.error("run %s failed (%s: %s); config: %s", job.key, type(error).__name__, error, job.config.to_json())
        if job.key in pending_keys:
            bar.update(1)
            finished[0] += error is None

    try:
        if executor == "serial":
            run_serial(pending, progress, done)
        elif executor == "stacked":
            from ..run.stacked import stack_groups

            by_hash = {job.config.hash(): job for job in jobs}
            groups = [[by_hash[c.hash()] for c in g] for g in stack_groups([j.config for j in jobs], stack_size)]
            run_stacked([g for g in groups if pending_keys.intersection(j.key for j in g)], progress, done)
        else:
            n_workers = min(default_workers(len(jobs), workers), len(pending))
            if executor == "processes":
                run_processes(pending, n_workers, done)
            else:
                run_dask(pending, n_workers, client, done)
    except ClusterLost as exc:
        raise ClusterLost(
            f"{exc}; {finished[0]} of {len(jobs)} runs finished (kept in {jobs[0].path.parent}), rerun to resume"
        ) from None
    finally:
        bar.close()
    return failures
