"""Dask workers started as SLURM jobs, and cancelled with the sweep.

* :class:`SlurmResources` and :func:`slurm_cluster` -- dask-jobqueue's ``SLURMCluster``, started here (its scheduler
  runs in this process) with ``jobs`` batch jobs as workers. A resource left None comes from dask's own config
  (``jobqueue.slurm`` in ``~/.config/dask/jobqueue.yaml``, or a folder named by ``$DASK_CONFIG``), as with
  dask-jobqueue itself; the job script is checked by ``sbatch --test-only`` before any job is submitted.
* :func:`cancelling` -- the cluster's jobs cancelled on leaving, with ``scancel`` bounded by
  :data:`SCANCEL_TIMEOUT_S`; jobs it cannot cancel (a controller that is down) are named in one warning.

:func:`initmem.sweeps.cluster.open_client` uses both.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..run.config import ConfigError

__all__ = ["SCANCEL_TIMEOUT_S", "SlurmResources", "slurm_cluster", "job_options", "cancelling"]

log = logging.getLogger(__name__)

#: Seconds that ``scancel`` is given to cancel the SLURM jobs of a sweep (it waits for a controller that is down).
SCANCEL_TIMEOUT_S = 60.0


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
        raise ConfigError(
            "executor: 'slurm' needs dask-jobqueue: pip install 'dask-jobqueue>=0.8' (or the [dask] extra of the "
            "book's wheel or a clone)"
        ) from None
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


@contextlib.contextmanager
def cancelling(cluster: Any) -> Iterator[Any]:
    """Yield ``cluster`` (a dask-jobqueue cluster); on leaving, cancel its jobs, then close it.

    dask-jobqueue cancels each job as it closes, but ignores a failing ``scancel`` (a controller that is down): the
    jobs would then run on, or be requeued when the controller returns, and nothing would say so. Here ``scancel``
    runs first, for every job at once (bounded by :data:`SCANCEL_TIMEOUT_S`), and when it fails a warning names the
    jobs to cancel by hand; dask-jobqueue is then left nothing to cancel."""
    try:
        yield cluster
    finally:
        try:
            _cancel_jobs_of(cluster)
        finally:
            cluster.close()


def _cancel_jobs_of(cluster: Any) -> None:
    """``scancel`` the jobs of ``cluster``, or name them in a warning when that fails; either way dask-jobqueue is
    left none to cancel (its job ids cleared). Holds no job once it returns: the cluster's close asserts that every
    job it still knows has closed."""
    jobs = [job for job in dict(getattr(cluster, "workers", {}) or {}).values() if getattr(job, "job_id", None)]
    ids = sorted((str(job.job_id) for job in jobs), key=lambda i: (len(i), i))
    why = _scancel(ids) if ids else None
    if why is not None:
        log.warning(
            "could not cancel SLURM jobs %s: %s; cancel them with: scancel %s", ", ".join(ids), why, " ".join(ids)
        )
    for job in jobs:
        job.job_id = None  # cancelled here, or named above: not again by dask-jobqueue, which would wait as long


#: What ``scancel`` says of a job that has already ended (its time limit, say): nothing left to cancel.
_ENDED = ("already completing or completed", "invalid job id specified")


def _scancel(ids: list[str]) -> str | None:
    """Cancel the SLURM jobs ``ids``; None when done (or they had ended), else why not (``scancel``'s words)."""
    import subprocess

    command = ["scancel", *ids]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=SCANCEL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"{' '.join(command)} did not answer within {SCANCEL_TIMEOUT_S:g} s"
    except OSError as exc:
        return f"{command[0]}: {exc.strerror or type(exc).__name__}"
    lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    problems = [line for line in lines if not any(ended in line.lower() for ended in _ENDED)]
    problems = list(dict.fromkeys(re.sub(r" on job id \S+", "", line) for line in problems))  # once, not once a job
    if not problems and (result.returncode == 0 or lines):
        return None
    return "; ".join(problems)[:300] or f"{' '.join(command)} exited with status {result.returncode}"
