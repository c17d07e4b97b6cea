"""Executors: train a list of runs into the run store, in this process, in worker processes, on Dask, or stacked.

A unit of work is a :class:`RunJob` (a config and the file it goes to; :class:`initmem.sweeps.measure.OwnModelJob`
for your own model); each executor calls ``done(job, error_or_None)`` once per job. :func:`execute` trains a run under
a claim file ``<hash>.claim`` beside its run file (:class:`initmem.base.claims.RunClaim`); a run claimed by another
live sweep is left for last, then awaited (its file is read) with a warning naming the run, its holder and the wait,
so concurrent sweeps over one cache train each run once. :func:`run_serial`: in this process; :func:`run_processes`:
a spawn-context ``ProcessPoolExecutor``; :func:`run_dask`: a ``distributed.Client`` (:mod:`initmem.sweeps.cluster`)
or a LocalCluster started and closed here, each file read back carrying the checksum its worker reported;
:func:`run_stacked`: runs differing only in sigma_w/seed as one vmapped model (:mod:`initmem.run.stacked`, for GPUs).
Workers of ``processes`` and of a LocalCluster started here exit within a second when the sweep process is killed; on
SIGINT or SIGTERM they are stopped, and their claims removed, before the interruption goes on. :func:`resolve_threads`
decides each run's torch thread count before any hash is taken (it changes the numbers). The book's Reproduce page
(sweeps, stacked runs, Dask, stopping a sweep) describes them in use.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import xarray as xr

from ..base.claims import RunClaim, remove_stale_claims
from ..run.config import ConfigError, RunConfig
from .store import CHECKSUM_ATTR, checkpoint_path, write_run
from .workers import kill_workers_of, process_worker_init, quiet, worker_setup

if TYPE_CHECKING:
    from ..run.data.prepare import PreparedData

__all__ = [
    "EXECUTORS",
    "DATA_FIELDS",
    "Done",
    "Outcome",
    "RunJob",
    "prepared_data",
    "data_key",
    "execute",
    "run_serial",
    "run_processes",
    "run_dask",
    "run_stacked",
    "default_workers",
    "resolve_threads",
]

log = logging.getLogger(__name__)

EXECUTORS = ("serial", "processes", "dask", "stacked")
#: The RunConfig fields (and properties) that decide what :func:`initmem.run.data.prepare.prepare_data` returns (with the
#: device).
DATA_FIELDS = ("data", "effective_data_seed", "train_size", "val_size", "test_size", "train_eval_size", "image_size")

_DATA_CACHE: dict[tuple, PreparedData] = {}


def prepared_data(config: RunConfig) -> PreparedData:
    """The prepared data of ``config``, loaded once per process for each distinct :data:`DATA_FIELDS`
    and device. Only the latest one is kept (a full CIFAR-10 split is ~0.7 GB on a device)."""
    from ..run.data.prepare import prepare_data
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
#: Seconds between two warnings of a sweep that waits for a run claimed elsewhere.
CLAIM_REPORT_S = 30.0
#: Seconds that the workers of an interrupted ``processes`` sweep are given to exit once told to.
STOP_WORKERS_S = 10.0
#: Seconds between two looks at the futures of a Dask sweep on a cluster (as distributed's own as_completed).
WATCH_SLEEP_S = 0.1


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

        return train(
            self.config,
            checkpoint_path=checkpoint,
            data=prepared_data(self.config),
            progress=progress,
            keep_checkpoint=True,
        )


class Outcome(NamedTuple):
    """What :func:`execute` did with one job: ``status`` (``"trained"``, ``"cached"`` or ``"claimed"``), the
    :data:`~initmem.sweeps.store.CHECKSUM_ATTR` of the file it wrote (None unless trained) and the host it ran on."""

    status: str
    checksum: str | None = None
    host: str = ""


def execute(job: RunJob, progress: bool, wait: bool = True) -> Outcome:
    """Train one run and write its file, unless the file exists or another process trains it (its claim).

    The status is ``"cached"`` (the file exists, maybe written meanwhile by another sweep), ``"trained"``, or, with
    ``wait=False``, ``"claimed"`` when a live holder has the run's claim; with ``wait=True`` it waits for that
    holder's file (or takes over a claim gone stale). The checkpoint is deleted only after the file is written.
    """
    host = socket.gethostname()
    claim = RunClaim(job.path)
    if not _claim_or_wait([job.path], [claim], wait):
        return Outcome("cached" if job.path.exists() else "claimed", None, host)
    with claim:
        checkpoint = job.checkpoint()
        checksum = write_run(job.train(progress, checkpoint), job.path)
        if checkpoint is not None:
            checkpoint.unlink(missing_ok=True)
    log.info("trained run %s", job.key)
    return Outcome("trained", checksum, host)


def _claim_or_wait(paths: list[Path], claims: list[RunClaim], wait: bool) -> bool:
    """Hold every claim of the runs ``paths`` (all of them, or none); False once every file exists, or when a
    claim is held elsewhere and ``wait`` is False. A file that appears after its claim is taken counts as done.
    While it waits, a warning every :data:`CLAIM_REPORT_S` seconds names the run, its holder and the time waited."""
    waiting_since, reported = time.monotonic(), -CLAIM_REPORT_S
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
        waited = time.monotonic() - waiting_since
        if waited - reported >= CLAIM_REPORT_S:
            reported = waited
            held = next((c for c in claims if c not in taken and c.path.exists()), None)
            if held is not None:
                log.warning(
                    "waiting for run %s, claimed by another sweep (%s), for %.0f s so far; its claim is "
                    "taken over once its heartbeat stops for %g s",
                    held.path.stem,
                    held.describe(),
                    waited,
                    held.timeout_s,
                )
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
            if outcome.status == "claimed":
                log.info("run %s is being trained by another process; coming back to it", job.key)
                deferred.append(job)
            else:
                done(job, None)


def run_processes(jobs: list[RunJob], workers: int, done: Done) -> None:
    """Train ``jobs`` in a spawn-context process pool of ``workers`` (each worker watches this process).

    Runs that another sweep has claimed are awaited last. When this process is interrupted (KeyboardInterrupt, or
    any other exception), the workers are terminated, the claims they left are removed and the exception goes on:
    the runs finished so far are in the store.
    """
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=process_worker_init, initargs=(os.getpid(),)
    )
    try:
        _first_unclaimed(jobs, done, lambda job, wait: pool.submit(execute, job, False, wait), as_completed)
    except BaseException:
        _stop_pool(pool, {job.path.parent for job in jobs})
        raise
    pool.shutdown(wait=True)


def _first_unclaimed(
    jobs: list[RunJob],
    done: Done,
    submit: Callable[[RunJob, bool], Any],
    completed: Callable[[list], Any],
    check: Callable[[RunJob, Outcome], None] | None = None,
) -> None:
    """Submit ``jobs`` (``submit(job, wait)`` returns a future), report each to ``done`` as it completes, then
    submit again, waiting this time, those that another sweep had claimed. ``check(job, outcome)`` may raise to
    fail a job whose outcome does not hold (see :func:`run_dask`)."""
    batch, wait = jobs, False
    while batch:
        futures = {submit(job, wait): job for job in batch}
        batch = []
        for future in completed(list(futures)):
            job, error = futures[future], future.exception()
            if error is None:
                outcome = future.result()
                if outcome.status == "claimed":
                    log.info("run %s is being trained by another sweep; coming back to it", job.key)
                    batch.append(job)
                    continue
                try:
                    if check is not None:
                        check(job, outcome)
                except Exception as exc:  # noqa: BLE001 - reported, the sweep goes on
                    error = exc
            done(job, error)
        wait = True


def _stop_pool(pool: ProcessPoolExecutor, folders: set[Path]) -> None:
    """Cancel what is queued, terminate the running workers, wait for them (:data:`STOP_WORKERS_S`) and remove the
    claims they leave in ``folders``."""
    processes = list((pool._processes or {}).values())  # the pool has no public way to stop running calls
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + STOP_WORKERS_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    pool.shutdown(wait=True, cancel_futures=True)  # its workers gone, the pool closes its queues at once
    for folder in folders:
        remove_stale_claims(folder)
    log.info("stopped %d worker processes", len(processes))


def run_dask(jobs: list[RunJob], workers: int, client: Any, done: Done) -> None:
    """Train ``jobs`` on ``client`` (a ``distributed.Client``), or on a LocalCluster of ``workers`` started here.

    Each worker reports the checksum of the file it wrote; the file must be here with that checksum
    (:func:`_landed`), else the run fails with a line saying the cache is not shared. A run whose worker is lost is
    rescheduled by Dask or, once Dask gives up on it, fails alone: a rerun trains it. Runs that another sweep has
    claimed are awaited last. When interrupted, what is queued is cancelled; a LocalCluster started here is closed,
    which stops its workers. On a ``client`` given, a :class:`~initmem.sweeps.cluster.ClusterWatch` looks at the
    cluster while the runs are awaited: a scheduler that went away, or no worker left for
    :data:`~initmem.sweeps.cluster.WORKERS_GONE_S`, raises :class:`~initmem.sweeps.cluster.ClusterLost`.
    """
    from distributed import Client, LocalCluster
    from distributed import as_completed as dask_completed

    from .cluster import ClusterLost, ClusterWatch

    completed: Callable[[list], Any] = dask_completed
    if client is not None:
        watch = ClusterWatch(client)
        completed = lambda futures: _watched(futures, watch)  # noqa: E731
    cluster = None
    if client is None:
        cluster = LocalCluster(  # this machine only: scheduler, workers and its HTTP server on 127.0.0.1, any free port
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
        client.run(worker_setup, os.getpid())  # the workers of our own cluster (its nannies live in this process)
    submitted: list[Any] = []

    def submit(job: RunJob, wait: bool) -> Any:
        submitted.append(client.submit(execute, job, False, wait, pure=False))
        return submitted[-1]

    interrupted = False
    try:
        _first_unclaimed(jobs, done, submit, completed, _landed)
    except BaseException as exc:
        interrupted = True
        if not (isinstance(exc, ClusterLost) and client.status != "running"):  # no scheduler left to tell
            client.cancel(submitted)
        raise
    finally:
        if cluster is not None:
            with quiet("distributed") if interrupted else contextlib.nullcontext():
                if interrupted:  # a run in flight cannot be stopped, only ended: end our workers before closing,
                    kill_workers_of(cluster)  # or the close waits for their runs (minutes on a loaded machine)
                client.close()
                cluster.close()
            if interrupted:
                for folder in {job.path.parent for job in jobs}:
                    remove_stale_claims(folder)


def _watched(futures: list, watch: Any) -> Iterator[Any]:
    """The ``futures`` of a Dask client as they complete (``distributed.as_completed``), with ``watch`` (a
    :class:`~initmem.sweeps.cluster.ClusterWatch`) checking the cluster while none is ready, and before each batch: a
    future cancelled because the client lost its scheduler is never yielded, the watch raises first."""
    from distributed import as_completed as dask_completed

    ready = dask_completed(futures)
    while not ready.is_empty():
        batch = ready.next_batch(block=False)
        watch.check()
        if batch:
            yield from batch
        else:
            time.sleep(WATCH_SLEEP_S)


def _landed(job: RunJob, outcome: Outcome) -> None:
    """Check that the file a worker wrote is the one this process sees (its checksum), else raise naming why."""
    if outcome.status != "trained":
        return
    where = f"the worker on host {outcome.host} wrote {job.path}"
    if not job.path.exists():
        raise RuntimeError(
            f"{where}, which this process cannot see: the cache is not on a file system that the "
            f"workers and this process share"
        )
    try:
        with xr.open_dataset(job.path, engine="h5netcdf") as ds:
            seen = ds.attrs.get(CHECKSUM_ATTR)
    except Exception as exc:  # noqa: BLE001 - any unreadable file fails the run, which is trained again
        raise RuntimeError(f"{where}, but it cannot be read here ({type(exc).__name__})") from None
    if seen != outcome.checksum:
        raise RuntimeError(
            f"{where} with checksum {outcome.checksum}, but the file here has {seen}: the cache is "
            f"not on a file system that the workers and this process share"
        )


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
                configs,
                data=prepared_data(configs[0]),
                progress=progress and configs[0].progress,
                checkpoint_path=checkpoint,
                keep_checkpoint=True,
            )
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
