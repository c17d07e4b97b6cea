"""The worker processes a sweep starts, which end with it.

A worker of the ``processes`` executor, or of a Dask LocalCluster started by the sweep, runs :func:`worker_setup`
first: a watchdog thread (:func:`watch_parent`) ends it within :data:`WATCHDOG_POLL_S` of the sweep process being
killed, so a killed sweep never leaves workers training on. :func:`process_worker_init` also ignores SIGINT, so that
Ctrl-C reaches the sweep alone, which then stops its workers. :func:`kill_workers_of` stops a LocalCluster's workers
and no other process; :func:`quiet` silences a logger (distributed's) while a cluster is stopped on purpose.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..base.files import process_alive

__all__ = ["WATCHDOG_POLL_S", "watch_parent", "worker_setup", "process_worker_init", "kill_workers_of", "quiet"]

#: Seconds between two looks of a worker's watchdog at its parent.
WATCHDOG_POLL_S = 0.5


def watch_parent(parent_pid: int) -> None:
    """Start a daemon thread that ends this worker process (``os._exit``) as soon as its parent is gone.

    A worker exits when its own parent changes (it was re-parented: the process that started it was killed) or
    when ``parent_pid`` (the sweep process) no longer exists, so that killing a sweep never leaves workers
    training on. Run on the workers of a LocalCluster started here, and by :func:`process_worker_init`.
    """
    own_parent = os.getppid()

    def watch() -> None:
        while os.getppid() == own_parent and process_alive(parent_pid):
            time.sleep(WATCHDOG_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="initmem-parent-watchdog", daemon=True).start()


def worker_setup(parent_pid: int) -> None:
    """What every worker process started here runs first: it watches the sweep (:func:`watch_parent`), and its
    progress bars lock with a thread lock rather than tqdm's default multiprocessing one, whose semaphore a worker
    stopped mid-run would leave behind (and the resource tracker warn about at exit)."""
    from tqdm.std import tqdm

    tqdm.set_lock(threading.RLock())
    watch_parent(parent_pid)


def process_worker_init(parent_pid: int) -> None:
    """Initializer of a ``processes`` worker: :func:`worker_setup`, and SIGINT ignored, so that Ctrl-C reaches the
    sweep alone, which then stops its workers (no traceback from each of them)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker_setup(parent_pid)


def kill_workers_of(cluster: Any) -> None:
    """Kill the worker processes of ``cluster`` (a LocalCluster whose nannies live in this process), and no other
    child of this process: each nanny knows its worker's pid, which is one of this process's multiprocessing
    children."""
    ours = {nanny.pid for nanny in cluster.workers.values()} - {None}
    for child in multiprocessing.active_children():
        if child.pid in ours:
            child.kill()


@contextlib.contextmanager
def quiet(name: str) -> Iterator[None]:
    """Logger ``name`` and its children silent (but for CRITICAL) for a while: a LocalCluster closed mid-run warns
    for each worker it has to kill, which is what an interrupted sweep asks for."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)
