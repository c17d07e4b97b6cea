"""An experiment within a wall-time budget: :func:`run_timed_experiment`, what a GPU session of minutes runs.

The experiment's sweep is planned to the time left (:func:`initmem.sweeps.budget.timed_sweep`: as many epochs as fit,
the runs group by group, a clean stop at the deadline) and its results land where every preset's do
(:mod:`initmem.study.design.layout`), so the readers (:func:`initmem.study.costs.results.load_results`, the ledger) read them as
any other. ``benchmarks/gpu_oneshot.py`` runs 01 at preset ``gpu`` with it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ...sweeps.budget import Deadline, TimedSweep, timed_sweep
from ...sweeps.store import write_run
from ..design.layout import results_paths

__all__ = ["run_timed_experiment"]


def run_timed_experiment(
    name: str,
    spec: Mapping[str, Any],
    *,
    preset: str,
    deadline: Deadline,
    group_seconds: Callable[[list[Any]], float],
    stacked: bool,
    results_dir: str | os.PathLike = "results",
    on_group: Callable[[TimedSweep], None] | None = None,
    **timing: Any,
) -> TimedSweep:
    """:func:`initmem.study.costs.results.run_experiment` within ``deadline``: experiment ``name``'s sweep ``spec`` at the
    most epochs that fit (:func:`initmem.sweeps.budget.timed_sweep`, which ``timing`` is passed to: ``max_epochs``,
    ``min_epochs``, ``safety``, ``train``), in the layout of every preset.

    The runs go to ``<results_dir>/<preset>/<name>/runs/``; after every group whose zip row (01: an optimizer) is
    then complete, the combined Dataset of the complete rows is written to ``<results_dir>/<preset>/<name>.nc``
    with the attributes ``preset``, ``experiment`` and ``sweep_status`` (``running``, ``complete`` or ``partial``),
    so a sweep stopped at its deadline, or killed, leaves the rows that finished. ``on_group`` is called after it.
    """
    runs_dir, out = results_paths(results_dir, preset, name)
    written: tuple[str | None, str] | None = None  # (rows, status) of the combined file as last written

    def save(timed: TimedSweep) -> None:
        nonlocal written
        rows = timed.complete_spec()
        key = (rows.to_json() if rows is not None else None, timed.status)
        if key != written:
            ds = timed.combined()
            if ds is None:
                out.unlink(missing_ok=True)
            else:
                ds.attrs.update(preset=preset, experiment=name, sweep_status=timed.status)
                write_run(ds, out)
            written = key
        if on_group is not None:
            on_group(timed)

    return timed_sweep(spec, runs_dir, deadline, group_seconds, stacked=stacked, on_group=save, **timing)
