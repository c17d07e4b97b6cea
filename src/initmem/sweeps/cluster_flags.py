"""The command-line flags of a cluster: ``--scheduler`` and the SLURM resources (argparse only).

Kept apart from :mod:`initmem.sweeps.cluster` so that ``initmem sweep --help`` and ``initmem experiments --help``
import argparse and nothing else of the cluster; :func:`initmem.sweeps.cluster.cluster_from_args` reads the flags back.
"""

from __future__ import annotations

import argparse

__all__ = ["SLURM_FLAGS", "add_cluster_arguments"]

#: The SLURM flags of :func:`add_cluster_arguments`, as (flag, ``SlurmResources`` field, type, help).
SLURM_FLAGS = (
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
    for flag, _, kind, text in SLURM_FLAGS:
        group.add_argument(flag, type=kind, default=None, metavar="N" if kind is int else "VALUE", help=text)
