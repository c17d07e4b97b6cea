"""Dask clusters beyond this machine: a running scheduler by its address, or workers started as SLURM jobs.

* :func:`connect` -- a ``distributed.Client`` of a running scheduler: its address (``tcp://host:8786``) or the JSON
  file that ``dask scheduler --scheduler-file FILE`` writes.
* :class:`SlurmResources` and :func:`slurm_cluster` -- dask-jobqueue's ``SLURMCluster``, started here (its scheduler
  runs in this process) with ``jobs`` batch jobs as workers. A resource left None comes from dask's own config
  (``jobqueue.slurm`` in ``~/.config/dask/jobqueue.yaml``, or a folder named by ``$DASK_CONFIG``), as with
  dask-jobqueue itself; the job script is checked by ``sbatch --test-only`` before any job is submitted.
* :func:`check_shared_cache` -- every worker must see the run cache: a file written here must be readable there.
* :func:`open_client` -- what the command line uses: a client of the chosen cluster, closed (and the SLURM jobs
  cancelled) on leaving, also when interrupted; :func:`add_cluster_arguments` and :func:`cluster_from_args` are its
  flags (``initmem sweep`` and ``initmem experiments`` share them).

Every problem found before training (no scheduler at the address, dask-jobqueue or ``sbatch`` missing, a job
script SLURM refuses, a cache the workers cannot see) is a :class:`~initmem.run.config.ConfigError` or an
:class:`~initmem.base.files.OutputError` of one line naming the option.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.files import OutputError, open_new, temp_name
from ..run.config import ConfigError

__all__ = [
    "CONNECT_TIMEOUT_S",
    "SlurmResources",
    "connect",
    "slurm_cluster",
    "job_options",
    "wait_for_workers",
    "check_shared_cache",
    "open_client",
    "add_cluster_arguments",
    "cluster_from_args",
]

log = logging.getLogger(__name__)

#: Seconds to reach a scheduler before giving up.
CONNECT_TIMEOUT_S = 20.0
#: Seconds between two warnings while no worker has joined the cluster yet (SLURM jobs wait in the queue).
WORKER_REPORT_S = 30.0


def connect(address: str, option: str = "scheduler") -> Any:
    """A ``distributed.Client`` of the running scheduler at ``address`` (``tcp://host:port``, ``host:port``, or a
    scheduler file written by ``dask scheduler --scheduler-file``).

    Raises:
        ConfigError: ``"<option>: ..."`` when distributed is missing or nothing answers at ``address``.
    """
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError(f"{option}: a Dask cluster needs distributed: pip install 'initmem[dask]'") from None
    target = (
        {"scheduler_file": address} if address.endswith(".json") or Path(address).is_file() else {"address": address}
    )
    if "scheduler_file" in target and not Path(address).is_file():
        raise ConfigError(
            f"{option}: no scheduler file {address} (dask scheduler --scheduler-file {address} writes it)"
        )
    try:
        return Client(**target, timeout=CONNECT_TIMEOUT_S)
    except (OSError, ValueError, TypeError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{option}: cannot reach a Dask scheduler at {address} ({why})") from None


@dataclass(frozen=True)
class SlurmResources:
    """What each SLURM job of :func:`slurm_cluster` asks for; None takes dask-jobqueue's ``jobqueue.slurm`` config.

    ``cores`` is dask-jobqueue's: the Dask threads of one job, so the runs one job trains at a time (also its
    ``--cpus-per-task`` unless ``job-cpu`` is configured); ``memory`` per job (``"16GB"``); ``gpus`` per job
    (``#SBATCH --gres=gpu:N``); ``walltime`` (``HH:MM:SS``); ``partition`` (dask-jobqueue's ``queue``); ``account``;
    ``jobs``: how many jobs to start.
    """

    cores: int | None = None
    memory: str | None = None
    gpus: int | None = None
    walltime: str | None = None
    partition: str | None = None
    account: str | None = None
    jobs: int = 1

    def __post_init__(self) -> None:
        for name in ("cores", "gpus", "jobs"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ConfigError(f"{name}: must be a positive integer, got {value!r}")


def slurm_cluster(resources: SlurmResources) -> Any:
    """A started dask-jobqueue ``SLURMCluster`` asking for ``resources.jobs`` jobs (see :class:`SlurmResources`).

    Raises:
        ConfigError: dask-jobqueue or ``sbatch`` is missing, cores or memory are set nowhere, or SLURM refuses the
            job script (``sbatch --test-only``: an unknown partition or account, too much memory, ...).
    """
    import shutil  # here, as secrets, subprocess and tempfile: the command line's --help imports this module

    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise ConfigError("executor: 'slurm' needs dask-jobqueue: pip install 'initmem[dask]'") from None
    if shutil.which("sbatch") is None:
        raise ConfigError("executor: 'slurm' needs sbatch on PATH (run it where SLURM jobs are submitted)")
    try:
        cluster = SLURMCluster(**job_options(resources))
    except ValueError as exc:
        if "cores and memory" in str(exc):
            raise ConfigError(
                "cores, memory: set both (--cores N --memory 16GB), or jobqueue.slurm.cores and "
                "jobqueue.slurm.memory in dask's jobqueue.yaml"
            ) from None
        raise ConfigError(f"executor: SLURMCluster refused its settings ({' '.join(str(exc).split())})") from None
    try:
        _test_job_script(cluster.job_script())
    except ConfigError:
        cluster.close()
        raise
    log.info(
        "SLURM: scheduler at %s, asking for %d jobs:\n%s",
        cluster.scheduler_address,
        resources.jobs,
        cluster.job_script(),
    )
    cluster.scale(jobs=resources.jobs)
    return cluster


def job_options(resources: SlurmResources) -> dict[str, Any]:
    """dask-jobqueue's keyword arguments for ``resources`` (None leaves a setting to its ``jobqueue.slurm`` config);
    GPUs are added to the configured ``job-extra-directives`` as ``--gres=gpu:N``."""
    import dask

    extra = list(dask.config.get("jobqueue.slurm.job-extra-directives", []) or [])
    if resources.gpus:
        extra.append(f"--gres=gpu:{resources.gpus}")
    return {
        "cores": resources.cores,
        "memory": resources.memory,
        "walltime": resources.walltime,
        "queue": resources.partition,
        "account": resources.account,
        "job_extra_directives": extra,
    }


def _test_job_script(script: str) -> None:
    """Have SLURM validate ``script`` without submitting it (``sbatch --test-only``); ConfigError with its reason."""
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as handle:
        handle.write(script)
    try:
        result = subprocess.run(["sbatch", "--test-only", handle.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(handle.name)
    if result.returncode != 0:
        why = " ".join((result.stderr or result.stdout).split()) or f"exit status {result.returncode}"
        raise ConfigError(
            f"executor: SLURM refuses the worker job script ({why}); see --cores, --memory, --gpus, "
            f"--walltime, --partition, --account or dask's jobqueue.slurm config"
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
    """A client of the running scheduler ``scheduler``, or of a :func:`slurm_cluster` of ``slurm`` started here;
    closed on leaving (the SLURM jobs are cancelled), also when interrupted. Yields None when neither is given."""
    if scheduler is None and slurm is None:
        yield None
        return
    with contextlib.ExitStack() as stack:
        if slurm is not None:
            cluster = stack.enter_context(contextlib.closing(slurm_cluster(slurm)))
            from distributed import Client

            client = stack.enter_context(Client(cluster))
        else:
            client = stack.enter_context(connect(scheduler, option))
        yield client


#: The SLURM flags of :func:`add_cluster_arguments`, as (flag, SlurmResources field, type, help).
_SLURM_FLAGS = (
    ("--jobs", "jobs", int, "SLURM jobs to start, each one Dask worker (default 1)"),
    ("--cores", "cores", int, "Dask threads per job, i.e. runs one job trains at a time (jobqueue.slurm.cores)"),
    ("--memory", "memory", str, "memory per job, e.g. 16GB (jobqueue.slurm.memory)"),
    ("--gpus", "gpus", int, "GPUs per job: #SBATCH --gres=gpu:N"),
    ("--walltime", "walltime", str, "time limit per job, HH:MM:SS (jobqueue.slurm.walltime)"),
    ("--partition", "partition", str, "SLURM partition (jobqueue.slurm.queue)"),
    ("--account", "account", str, "SLURM account (jobqueue.slurm.account)"),
)


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """``--scheduler`` and the SLURM flags (``--executor`` itself is the command's own)."""
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="with --executor dask: a running Dask scheduler, tcp://HOST:PORT or the file written by "
        "dask scheduler --scheduler-file FILE; the cache must be on a file system its workers "
        "share",
    )
    group = parser.add_argument_group(
        "SLURM (with --executor slurm: workers are SLURM jobs of dask-jobqueue's SLURMCluster; a resource not given "
        "here comes from dask's jobqueue.slurm config, e.g. ~/.config/dask/jobqueue.yaml)"
    )
    for flag, _, kind, text in _SLURM_FLAGS:
        group.add_argument(flag, type=kind, default=None, metavar="N" if kind is int else "VALUE", help=text)


def cluster_from_args(args: argparse.Namespace, executor: str | None) -> tuple[str | None, SlurmResources | None]:
    """``(scheduler, slurm resources)`` from the flags of :func:`add_cluster_arguments` under ``executor``.

    Raises:
        ConfigError: ``--scheduler`` without ``--executor dask``, or a SLURM flag without ``--executor slurm``.
    """
    if args.scheduler is not None and executor != "dask":
        raise ConfigError("--scheduler: only with --executor dask (a running scheduler); --executor slurm starts one")
    given = {name: getattr(args, flag[2:]) for flag, name, _, _ in _SLURM_FLAGS if getattr(args, flag[2:]) is not None}
    if executor != "slurm":
        if given:
            flag = next(f for f, name, _, _ in _SLURM_FLAGS if name in given)
            raise ConfigError(f"{flag}: only with --executor slurm")
        return args.scheduler, None
    return None, SlurmResources(**given)
