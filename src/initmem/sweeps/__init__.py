"""Sweeps: a grid of runs -> one :class:`xarray.Dataset`, cached per run, resumable, run in parallel.

This layer owns everything about *many* runs and nothing about what one run computes:

* :mod:`~initmem.sweeps.spec` -- :class:`SweepSpec`, a base config plus a grid and one zip group;
* :mod:`~initmem.sweeps.store` -- the run store, one verified netCDF file per run hash;
* :mod:`~initmem.sweeps.executors` -- serial, processes, Dask and stacked execution under run claims;
* :mod:`~initmem.sweeps.cluster` -- an existing Dask cluster (a running scheduler, or SLURM jobs) for the executors;
* :mod:`~initmem.sweeps.combine` -- the per-run Datasets -> one Dataset with provenance;
* :mod:`~initmem.sweeps.driver` -- :func:`sweep`, the one call that does all of the above;
* :mod:`~initmem.sweeps.measure` -- :func:`measure_init_memory`, the same for your own model and data.

It may import :mod:`initmem.base` and :mod:`initmem.run`, never :mod:`initmem.study`, :mod:`initmem.theory` or
:mod:`initmem.book.build`. The spread and the summary table of a sweep are statistics: :mod:`initmem.study.stats`.
"""

from .combine import combine_runs
from .driver import SweepFailed, sweep
from .executors import EXECUTORS, prepared_data
from .spec import SweepSpec
from .store import CHECKSUM_ATTR, load_run, run_path, write_run

__all__ = [
    "SweepSpec",
    "sweep",
    "SweepFailed",
    "EXECUTORS",
    "CHECKSUM_ATTR",
    "run_path",
    "load_run",
    "write_run",
    "combine_runs",
    "prepared_data",
]
