"""Executors: train a list of runs into the run store, in this process, in worker processes, on Dask, or stacked.

A unit of work is a :class:`RunJob` (a config and the file it goes to; :class:`initmem.sweeps.measure.OwnModelJob`
for your own model). Each executor calls ``done(job, error_or_None)`` once per job. A run is trained by
:func:`execute` under a claim file ``<hash>.claim`` beside its run file (:class:`initmem.base.files.RunClaim`: host, pid, start time; stale when
its process is gone, or on another host when it has not been refreshed for
:data:`initmem.base.files.CLAIM_TIMEOUT_S`). A run claimed by another live sweep is left for last and then awaited
(its file is read), so concurrent sweeps over one cache train each run once.

* ``serial``: in this process, one after another.
* ``processes``: a spawn-context ``ProcessPoolExecutor``.
* ``dask``: a ``distributed.Client``, or a LocalCluster started and closed here.
* ``stacked``: runs differing only in sigma_w/seed trained as one vmapped model (:mod:`initmem.run.stacked`, for
  GPUs).

Workers of ``processes`` (and of a LocalCluster started here) watch the sweep process and exit within a second
when it is killed. The torch thread count of each run is decided by :func:`resolve_threads` before any hash is
taken, since it changes the numbers.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xarray as xr

from ..base.files import RunClaim, process_alive
from ..run.config import ConfigError, RunConfig
from .store import checkpoint_path, write_run

if TYPE_CHECKING:
    from ..run.data import PreparedData

__all__ = ["EXECUTORS", "DATA_FIELDS", "Done", "RunJob", "prepared_data", "data_key", "execute", "run_serial",
           "run_processes", "run_dask", "run_stacked", "default_workers", "resolve_threads"]  # fmt: skip

log = logging.getLogger(__name__)

EXECUTORS = ("serial", "processes", "dask", "stacked")
#: The RunConfig fields (and properties) that decide what :func:`initmem.run.data.prepare.prepare_data` returns (with the
#: device).
DATA_FIELDS = ("data", "effective_data_seed", "train_size", "val_size", "test_size", "train_eval_size", "image_size")

_DATA_CACHE: dict[tuple, "PreparedData"] = {}


def prepared_data(config: RunConfig) -> "PreparedData":
    """The prepared data of ``config``, loaded once per process for each distinct :data:`DATA_FIELDS`
    and device. Only the latest one is kept (a full CIFAR-10 split is ~0.7 GB on a device)."""
    from ..run.data import prepare_data
    from ..run.loop import resolve_device

    device = resolve_device(config.device)
    key = (*(getattr(config, name) for name in DATA_FIELDS), str(device))
    if key not in _DATA_CACHE:
        _DATA_CACHE.clear()
        _DATA_CACHE[key] = prepare_data(config, device)
    return _DATA_CACHE[key]


def data_key(config: RunConfig) -> tuple:
    return tuple(json.dumps(getattr(config, name)) for name in (*DATA_FIELDS, "device"))


#: Seconds between two looks at a run that another process has claimed.
CLAIM_POLL_S = 1.0
#: Seconds between two looks of a worker's watchdog at its parent.
WATCHDOG_POLL_S = 0.5


@dataclass(frozen=True)
class RunJob:
    """One run to put into the run store: its config and the file it goes to (``<key>.nc``).

    :meth:`train` trains the built-in network of ``config`` (:func:`initmem.run.training.train`, resumable from
    ``<hash>.ckpt`` beside the file when ``config.checkpoint_every > 0``). Jobs are plain picklable values, so the
    ``processes`` and ``dask`` executors send them to their workers; :class:`initmem.sweeps.measure.OwnModelJob`
    trains your own model the same way.
    """

    config: RunConfig
    path: Path

    @property
    def key(self) -> str:
        """The run's name in the store: its file name without the suffixes (``config.hash()`` here)."""
        return self.path.name.split(".", 1)[0]

    def checkpoint(self) -> Path | None:
        """Where the run keeps its resumable checkpoint while it trains (None without ``checkpoint_every``)."""
        return checkpoint_path(self.path.parent, self.config)

    def train(self, progress: bool, checkpoint: Path | None) -> xr.Dataset:
        """Train the run (keeping ``checkpoint`` for :func:`execute` to delete once the file is written)."""
        from ..run.training import train

        return train(self.config, checkpoint_path=checkpoint, data=prepared_data(self.config), progress=progress,
                     keep_checkpoint=True)  # fmt: skip


def execute(job: RunJob, progress: bool, wait: bool = True) -> str:
    """Train one run and write its file, unless the file exists or another process trains it (its claim).

    Returns ``"cached"`` (the file exists, maybe written meanwhile by another sweep), ``"trained"``, or, with
    ``wait=False``, ``"claimed"`` when a live holder has the run's claim; with ``wait=True`` it waits for that
    holder's file (or takes over a claim gone stale). The checkpoint is deleted only after the file is written.
    """
    claim = RunClaim(job.path)
    if not _claim_or_wait([job.path], [claim], wait):
        return "cached" if job.path.exists() else "claimed"
    with claim:
        checkpoint = job.checkpoint()
        write_run(job.train(progress, checkpoint), job.path)
        if checkpoint is not None:
            checkpoint.unlink(missing_ok=True)
    log.info("trained run %s", job.key)
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


Done = Callable[[RunJob, BaseException | None], None]


def run_serial(jobs: list[RunJob], progress: bool, done: Done) -> None:
    """Train ``jobs`` in turn; runs that another sweep has claimed come last (then this one waits for them)."""
    deferred = []
    for wait, batch in ((False, jobs), (True, deferred)):
        for job in batch:
            try:
                outcome = execute(job, progress and job.config.progress, wait=wait)
            except Exception as exc:  # noqa: BLE001 - reported, the sweep goes on
                done(job, exc)
                continue
            if outcome == "claimed":
                log.info("run %s is being trained by another process; coming back to it", job.key)
                deferred.append(job)
            else:
                done(job, None)


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


def run_processes(jobs: list[RunJob], workers: int, done: Done) -> None:
    """Train ``jobs`` in a spawn-context process pool of ``workers`` (each worker watches this process)."""
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_watch_parent,
                               initargs=(os.getpid(),))  # fmt: skip
    try:
        futures = {pool.submit(execute, job, False): job for job in jobs}
        for future in as_completed(futures):
            done(futures[future], future.exception())
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def run_dask(jobs: list[RunJob], workers: int, client: Any, done: Done) -> None:
    """Train ``jobs`` on ``client`` (a ``distributed.Client``), or on a LocalCluster of ``workers`` started here."""
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
        futures = {client.submit(execute, job, False, pure=False): job for job in jobs}
        for future in dask_completed(list(futures)):
            done(futures[future], future.exception())
    finally:
        if cluster is not None:
            client.close()
            cluster.close()


def run_stacked(groups: list[list[RunJob]], progress: bool, done: Done) -> None:
    """Train each group of :func:`initmem.run.stacked.stack_groups` as one stack (a group of one: sequentially)."""
    deferred = []
    for wait, batch in ((False, groups), (True, deferred)):
        for group in batch:
            if len(group) == 1:
                run_serial(group, progress, done)
            elif _train_stack(group, progress, done, wait) == "claimed":
                deferred.append(group)


def _train_stack(group: list[RunJob], progress: bool, done: Done, wait: bool) -> str:
    """Train one stack of K > 1 runs under the claims of all its members (see :func:`execute`)."""
    from ..run.stacked import group_hash, train_stacked

    configs = [job.config for job in group]
    paths = [job.path for job in group]
    claims = [RunClaim(path) for path in paths]
    checkpoint = paths[0].parent / f"stacked-{group_hash(configs)}.ckpt" if configs[0].checkpoint_every else None
    if not _claim_or_wait(paths, claims, wait):
        if not all(path.exists() for path in paths):
            return "claimed"
        outcome, error = "cached", None
    else:
        outcome, error = "trained", None
        try:
            datasets = train_stacked(
                configs, data=prepared_data(configs[0]), progress=progress and configs[0].progress,
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
    for job in group:
        done(job, error)
    return outcome


def default_workers(n_pending: int, workers: int | None) -> int:
    if workers is not None:
        if workers < 1:
            raise ConfigError(f"workers: must be a positive integer, got {workers!r}")
        return workers
    return max(1, min(n_pending, os.cpu_count() or 1))


def _with_threads(config: RunConfig, threads: int | None) -> RunConfig:
    """``threads`` (if given) as the run's torch thread count (part of its hash)."""
    return config.replace(num_threads=threads) if threads else config


def resolve_threads(
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
        threads = max(1, (os.cpu_count() or 1) // default_workers(len(configs), workers))
        return [c if c.num_threads else _with_threads(c, threads) for c in configs]
    return configs


