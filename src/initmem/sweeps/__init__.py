"""Sweeps: a grid of runs -> one :class:`xarray.Dataset`, cached per run, resumable, run in parallel.

This layer owns everything about *many* runs and nothing about what one run computes:

* :mod:`~initmem.sweeps.spec` -- :class:`~initmem.sweeps.spec.SweepSpec`, a base config plus a grid and one zip group;
* :mod:`~initmem.sweeps.store` -- the run store, one verified netCDF file per run hash;
* :mod:`~initmem.sweeps.executors` -- serial, processes, Dask and stacked execution under run claims;
* :mod:`~initmem.sweeps.cluster` -- an existing Dask cluster (a running scheduler, or SLURM jobs:
  :mod:`~initmem.sweeps.slurm`); :mod:`~initmem.sweeps.workers` -- the worker processes a sweep starts and ends;
* :mod:`~initmem.sweeps.combine` -- the per-run Datasets -> one Dataset with provenance;
* :mod:`~initmem.sweeps.driver` -- :func:`~initmem.sweeps.driver.sweep`, the one call that does all of the above;
* :mod:`~initmem.sweeps.measure` -- :func:`~initmem.sweeps.measure.measure_init_memory`, the same for your own model and data.

It may import :mod:`initmem.base` and :mod:`initmem.run`, never :mod:`initmem.study`, :mod:`initmem.theory` or
:mod:`initmem.book.build` (a sweep's spread is in :mod:`initmem.study.statistics.stats`). It re-exports nothing.
"""
