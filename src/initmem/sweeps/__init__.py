"""Sweeps: a grid of runs -> one :class:`xarray.Dataset`, cached per run, resumable, run in parallel.

This layer owns everything about *many* runs and nothing about what one run computes:

* :mod:`~initmem.sweeps.spec` -- :class:`SweepSpec`, a base config plus a grid and one zip group;
* :mod:`~initmem.sweeps.store` -- the run store, one verified netCDF file per run hash;
* :mod:`~initmem.sweeps.executors` -- serial, processes, Dask and stacked execution under run claims;
* :mod:`~initmem.sweeps.cluster` -- an existing Dask cluster (a running scheduler, or SLURM jobs:
  :mod:`~initmem.sweeps.slurm`); :mod:`~initmem.sweeps.workers` -- the worker processes a sweep starts and ends;
* :mod:`~initmem.sweeps.combine` -- the per-run Datasets -> one Dataset with provenance;
* :mod:`~initmem.sweeps.driver` -- :func:`sweep`, the one call that does all of the above;
* :mod:`~initmem.sweeps.measure` -- :func:`measure_init_memory`, the same for your own model and data.

It may import :mod:`initmem.base` and :mod:`initmem.run`, never :mod:`initmem.study`, :mod:`initmem.theory` or
:mod:`initmem.book.build`. The spread and the summary table of a sweep are statistics: :mod:`initmem.study.statistics.stats`.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start (a tenth of a quick CLI call)
if TYPE_CHECKING:
    from typing import Any

#: Public name -> the module that defines it, imported on first access: the command line imports
#: :mod:`~initmem.sweeps.cluster` to build its parser, and must not pay for xarray and pandas on ``--help``.
LAZY_EXPORTS: dict[str, str] = {
    "SweepSpec": "initmem.sweeps.spec",
    "sweep": "initmem.sweeps.driver",
    "SweepFailed": "initmem.sweeps.driver",
    "EXECUTORS": "initmem.sweeps.executors",
    "CHECKSUM_ATTR": "initmem.sweeps.store",
    "run_path": "initmem.sweeps.store",
    "load_run": "initmem.sweeps.store",
    "write_run": "initmem.sweeps.store",
    "combine_runs": "initmem.sweeps.combine",
    "prepared_data": "initmem.sweeps.executors",
}

__all__ = list(LAZY_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name of :data:`LAZY_EXPORTS` on first access."""
    if name in LAZY_EXPORTS:
        return getattr(importlib.import_module(LAZY_EXPORTS[name]), name)
    raise AttributeError(f"module 'initmem.sweeps' has no attribute {name!r}")
