"""Dask clusters beyond this machine: a running scheduler by its address, or workers started as SLURM jobs.

* :func:`connect` -- a ``distributed.Client`` of a running scheduler: its address (``tcp://host:8786``) or the JSON
  file that ``dask scheduler --scheduler-file FILE`` writes. Workers started as SLURM jobs: :mod:`initmem.sweeps.slurm`.
* :func:`check_shared_cache` -- every worker must see the run cache: a file written here must be readable there.
* :func:`open_client` -- the command line's client of the chosen cluster, closed on leaving, also when interrupted (the
  SLURM jobs cancelled, or named in a warning when ``scancel`` fails); :func:`cluster_from_args` reads its flags
  (:func:`initmem.sweeps.cluster_flags.add_cluster_arguments`, shared by ``initmem sweep`` and ``experiments``).
* :class:`ClusterWatch` -- while a sweep waits for its runs, a scheduler that went away, or a cluster without any
  worker for :data:`WORKERS_GONE_S` seconds, is a :class:`ClusterLost` error of one line, not a wait without end.

A problem found before training (no scheduler at the address, or something else there; a scheduler file that is not
one; dask-jobqueue or ``sbatch`` missing; a job script SLURM refuses; a cache the workers cannot see) is a
:class:`~initmem.run.config.ConfigError` or :class:`~initmem.base.files.OutputError` of one line naming the option. The
book's Reproduce page (Dask, SLURM, stopping a sweep) shows them in use.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..base.files import OutputError, open_new, temp_name
from ..run.config import ConfigError
from ..run.mapping_files import read_mapping_file
from .cluster_flags import SLURM_FLAGS
from .slurm import SlurmResources, cancelling, slurm_cluster
from .workers import quiet

__all__ = [
    "CONNECT_TIMEOUT_S",
    "EXECUTOR_MODULES",
    "WORKERS_GONE_S",
    "ClusterLost",
    "ClusterWatch",
    "connect",
    "closing_client",
    "wait_for_workers",
    "check_shared_cache",
    "open_client",
    "cluster_from_args",
]

log = logging.getLogger(__name__)

#: Seconds to reach a scheduler before giving up.
CONNECT_TIMEOUT_S = 20.0
#: The modules an executor of a cluster needs (initmem's optional dependencies ``[dask]``).
EXECUTOR_MODULES = {"dask": ("distributed",), "slurm": ("distributed", "dask_jobqueue")}
#: Seconds between two warnings while no worker has joined the cluster yet (SLURM jobs wait in the queue).
WORKER_REPORT_S = 30.0
#: Seconds that a cluster may have no worker at all, while a sweep waits for its runs, before the sweep gives up: every
#: worker left (SLURM jobs that reached their time limit or were cancelled, stopped workers) and none came back.
WORKERS_GONE_S = 120.0
#: Seconds between two looks of a :class:`ClusterWatch` at the cluster's workers.
WATCH_POLL_S = 2.0


class ClusterLost(RuntimeError):
    """The cluster of a sweep is gone: its scheduler went away, or it has had no worker for :data:`WORKERS_GONE_S`.
    The runs finished so far are in the cache; a rerun trains the others."""


def connect(address: str, option: str = "scheduler") -> Any:
    """A ``distributed.Client`` of the running scheduler at ``address`` (``tcp://host:port``, ``host:port``, or a
    scheduler file written by ``dask scheduler --scheduler-file``).

    A Dask scheduler must answer at the address within :data:`CONNECT_TIMEOUT_S`, handshake included: something else
    listening there (a dashboard's HTTP server, any other program) is refused then, rather than waited on.

    Raises:
        ConfigError: ``"<option>: ..."`` when distributed is missing, the scheduler file is missing or is not one, or
            no Dask scheduler answers at ``address``.
    """
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError(
            f"{option}: a Dask cluster needs distributed: pip install 'distributed>=2023.1' (or the [dask] extra of "
            "the book's wheel or a clone)"
        ) from None
    where = address
    if address.endswith(".json") or Path(address).is_file():
        if not Path(address).exists():
            raise ConfigError(
                f"{option}: no scheduler file {address} (dask scheduler --scheduler-file {address} writes it)"
            )
        address = _address_in(Path(address), option)
        where = f"{address} (from {where})"
    why = _not_a_scheduler(address, CONNECT_TIMEOUT_S)
    if why is None:
        try:
            return Client(address, timeout=CONNECT_TIMEOUT_S)
        except (OSError, ValueError, TypeError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    raise ConfigError(f"{option}: cannot reach a Dask scheduler at {where} ({why})")


def _address_in(path: Path, option: str) -> str:
    """The scheduler address in the scheduler file ``path`` (JSON written by ``dask scheduler --scheduler-file``)."""
    values = read_mapping_file(path, option)
    address = values.get("address")
    if not isinstance(address, str) or not address:
        raise ConfigError(
            f"{option}: {path} has no scheduler address (the file that dask scheduler --scheduler-file writes holds "
            f'"address": "tcp://HOST:PORT")'
        )
    return address


def _not_a_scheduler(address: str, timeout: float) -> str | None:
    """None when a Dask scheduler answers at ``address`` within ``timeout`` seconds, else why not, in a few words.

    distributed's own connection bounds the TCP connect, not the handshake after it: a server that accepts and never
    speaks would hold a ``Client`` for minutes. Here the whole exchange (connect, handshake, the ``identity`` call)
    is bounded, in an event loop of its own thread (the caller may be inside one: a notebook's kernel)."""
    import asyncio
    import threading

    from distributed.comm import connect as comm_connect
    from distributed.security import Security

    async def identity() -> Any:
        comm = await comm_connect(address, timeout=timeout, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    answer: list[Any] = []

    def ask() -> None:
        try:
            answer.append(asyncio.run(asyncio.wait_for(identity(), timeout)))
        except TimeoutError:
            answer.append(TimeoutError(f"nothing answered as a Dask scheduler within {timeout:g} s"))
        except Exception as exc:  # noqa: BLE001 - anything but a scheduler's answer: the reason is reported
            answer.append(exc)

    thread = threading.Thread(target=ask, name="initmem-scheduler-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5.0)  # the probe ends by its own timeout; the margin is for a stuck event loop
    if not answer:
        return f"nothing answered as a Dask scheduler within {timeout:g} s"
    reply = answer[0]
    if isinstance(reply, BaseException):
        text = str(reply).splitlines()[0] if str(reply) else ""
        if isinstance(reply, (MemoryError, ValueError, TypeError, KeyError, IndexError)):
            return f"something else than a Dask scheduler listens there ({type(reply).__name__} in its answer)"
        return text or type(reply).__name__
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        return f"something else than a Dask scheduler answers there (a {str(kind)[:40]})"
    return None


@contextlib.contextmanager
def closing_client(client: Any) -> Iterator[Any]:
    """Yield ``client``; close it on leaving. While it is open, distributed's own records of a lost scheduler (its
    "Failed to reconnect to scheduler" error, and the traceback of a reconnect cancelled by the close) are dropped: the
    sweep says it in one line (:class:`ClusterLost`). A client whose scheduler went away is closed without waiting."""
    reconnect = logging.getLogger("distributed.client")
    if not any(isinstance(f, _LostSchedulerRecords) for f in reconnect.filters):
        reconnect.addFilter(_LostSchedulerRecords())
    try:
        yield client
    finally:
        if client.status in ("running", "newly-created"):
            client.close()
        else:
            with quiet("distributed"):
                client.close(timeout=1)


class _LostSchedulerRecords(logging.Filter):
    """Drops distributed's records of a scheduler that went away: its error when the reconnect gives up, and the
    error with a traceback it logs (later, from its event loop's thread) when a client closed while it tried to
    reconnect cancels that attempt. :class:`ClusterLost` reports the loss in one line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        import asyncio

        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
            return False
        return not str(record.msg).startswith("Failed to reconnect to scheduler")


class ClusterWatch:
    """What a sweep checks, every :data:`WATCH_POLL_S` at most, while it waits for its runs on ``client``'s cluster.

    :meth:`check` raises :class:`ClusterLost` once the client has lost its scheduler (distributed then cancels every
    future of the client: nothing more will finish), or once the cluster has had no worker at all for ``gone_s``
    seconds (:data:`WORKERS_GONE_S`): the SLURM jobs that were its workers reached their time limit or were
    cancelled, or its workers were stopped, and none came back. ``clock`` (seconds, ``time.monotonic``) is
    injectable, so that the bound is tested without waiting for it.
    """

    def __init__(
        self,
        client: Any,
        clock: Callable[[], float] = time.monotonic,
        gone_s: float | None = None,
        poll_s: float | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.gone_s = WORKERS_GONE_S if gone_s is None else gone_s
        self.poll_s = WATCH_POLL_S if poll_s is None else poll_s
        scheduler = getattr(client, "scheduler", None)
        self.address = getattr(scheduler, "address", None) or "its address"
        self._looked: float | None = None
        self._empty_since: float | None = None
        self._warned = False

    def check(self) -> None:
        """Raise :class:`ClusterLost` when the scheduler is gone or the cluster has been without workers too long."""
        if self.client.status != "running":
            raise ClusterLost(f"the scheduler at {self.address} went away")
        now = self.clock()
        if self._looked is not None and now - self._looked < self.poll_s:
            return
        self._looked = now
        try:
            workers = len(self.client.scheduler_info().get("workers") or {})
        except (OSError, RuntimeError):  # the scheduler went away while it was asked
            raise ClusterLost(f"the scheduler at {self.address} went away") from None
        if self.client.status != "running":
            raise ClusterLost(f"the scheduler at {self.address} went away")
        if workers:
            self._empty_since, self._warned = None, False
            return
        if self._empty_since is None:  # said at the next look (a lost scheduler's client also counts no worker)
            self._empty_since = now
        elif now - self._empty_since >= self.gone_s:
            raise ClusterLost(
                f"the Dask cluster at {self.address} has had no worker for {now - self._empty_since:.0f} s: its "
                f"workers are gone (SLURM jobs that reached their time limit or were cancelled, or stopped workers)"
            )
        elif not self._warned:
            self._warned = True
            log.warning(
                "the Dask cluster at %s has had no worker for %.0f s; giving up on it after %.0f s",
                self.address,
                now - self._empty_since,
                self.gone_s,
            )


def wait_for_workers(client: Any) -> None:
    """Return once the cluster has a worker, with a warning every :data:`WORKER_REPORT_S` seconds until then."""
    waited = 0.0
    while not client.scheduler_info().get("workers"):
        try:
            client.wait_for_workers(1, timeout=WORKER_REPORT_S)
        except TimeoutError:
            waited += WORKER_REPORT_S
            log.warning(
                "waiting for the first Dask worker of %s (%.0f s so far; SLURM jobs may be queued)",
                client.scheduler.address,
                waited,
            )


def _read_probe(path: str) -> str | None:
    """On a worker: the content of the probe file ``path``, or None if it cannot be read there."""
    try:
        return Path(path).read_text()
    except OSError:
        return None


def check_shared_cache(client: Any, folder: Path, option: str = "cache_dir") -> None:
    """Prove that every worker of ``client`` sees ``folder`` (an absolute path): a probe file written here with a
    random token must be read back there. Waits for a first worker (:func:`wait_for_workers`).

    Raises:
        OutputError: ``"<option>: ... is not shared with the Dask workers ..."``, naming some that cannot see it.
        ConfigError: the workers cannot run initmem's code (it is not installed where they run).
    """
    import secrets

    wait_for_workers(client)
    token = secrets.token_hex(16)
    probe = temp_name(folder / "shared-check")
    with open_new(probe) as handle:
        handle.write(token.encode())
    try:
        seen = client.run(_read_probe, str(probe))
    except Exception as exc:  # noqa: BLE001 - the workers could not run our function at all
        raise ConfigError(
            f"scheduler: the Dask workers cannot run initmem ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); install it where they run"
        ) from None
    finally:
        probe.unlink(missing_ok=True)
    blind = sorted(worker for worker, value in seen.items() if value != token)
    if blind:
        raise OutputError(
            f"{option}: {folder} is not shared with the Dask workers {', '.join(blind[:3])}"
            f"{' ...' if len(blind) > 3 else ''} (they cannot read a file written there); put the cache "
            f"on a file system that this process and every worker mount at the same path"
        )


@contextlib.contextmanager
def open_client(
    scheduler: str | None = None, slurm: SlurmResources | None = None, option: str = "--scheduler"
) -> Iterator[Any]:
    """A client of the running scheduler ``scheduler``, or of a :func:`~initmem.sweeps.slurm.slurm_cluster` of ``slurm`` started here;
    closed on leaving (the SLURM jobs are cancelled), also when interrupted. Yields None when neither is given."""
    if scheduler is None and slurm is None:
        yield None
        return
    with contextlib.ExitStack() as stack:
        if slurm is not None:
            cluster = stack.enter_context(cancelling(slurm_cluster(slurm)))
            from distributed import Client

            client = stack.enter_context(closing_client(Client(cluster)))
        else:
            client = stack.enter_context(closing_client(connect(scheduler, option)))
        yield client


def cluster_from_args(args: argparse.Namespace, executor: str | None) -> tuple[str | None, SlurmResources | None]:
    """``(scheduler, slurm resources)`` from the flags of :func:`~initmem.sweeps.cluster_flags.add_cluster_arguments` under ``executor``.

    Raises:
        ConfigError: ``--scheduler`` without ``--executor dask``, or a SLURM flag without ``--executor slurm``.
        ModuleNotFoundError: the executor's modules (:data:`EXECUTOR_MODULES`) are not installed, found here before
            anything is written (the command line names the optional dependencies to install).
    """
    for module in EXECUTOR_MODULES.get(executor, ()):
        importlib.import_module(module)
    if args.scheduler is not None and executor != "dask":
        raise ConfigError("--scheduler: only with --executor dask (a running scheduler); --executor slurm starts one")
    given = {name: getattr(args, flag[2:]) for flag, name, _, _ in SLURM_FLAGS if getattr(args, flag[2:]) is not None}
    if executor != "slurm":
        if given:
            flag = next(f for f, name, _, _ in SLURM_FLAGS if name in given)
            raise ConfigError(f"{flag}: only with --executor slurm")
        return args.scheduler, None
    return None, SlurmResources(**given)
