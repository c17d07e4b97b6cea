"""How often B1's interval for the boundary x0 covers the truth, and how often B1 would say "in size": measured by
simulation through B1's own fit (:class:`initmem.study.verdicts.boundary.LogisticProfile`) in worlds shaped like a phase
diagram's record.

A world (:func:`world_of`) keeps the record's cells (their x), its fitted plateau and width, and three noises
measured on its runs: a run's scatter about its cell's mean, a cell's departure from the logistic (the lack of fit,
beyond what the seeds explain) and a shift shared by every cell of one seed. :func:`simulate` moves the true x0,
draws the cells' seed-mean gaps and fits them with the plateau free (B1's rule) and, for comparison, with the
plateau declared as the least-forgetting cell's gap (the reading used before this simulation, which under-covers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from .boundary import LogisticProfile, fit_boundary, logistic, memory_to_forget
from .rules import BOUNDARY_BAND

__all__ = [
    "METHODS",
    "PREDICTED_X0",
    "TARGET",
    "World",
    "world_of",
    "simulate",
    "power_by_seeds",
    "coverage_frame",
    "coverage_text",
    "power_column",
]

#: The fits compared: B1's (plateau free) and the declared-plateau reading it replaced.
METHODS = ("plateau fitted", "plateau declared")
#: T5's boundary: where B1's power is measured.
PREDICTED_X0 = 0.0
#: The coverage a 95 % interval should reach in simulation (share of records).
TARGET = (0.93, 0.97)


@dataclass(frozen=True)
class World:
    """A simulated phase diagram: the cells' ``x`` (shape ``(cells,)``), the logistic's ``plateau`` (pp) and
    ``width`` (in x), ``seeds`` per cell, the index ``declared_cell`` of the least-forgetting cell, and the noises
    (pp): ``run_sd`` (a run's gap about its cell's mean), ``misfit_sd`` (a cell's departure from the logistic) and
    ``seed_shift_sd`` (a shift shared by all cells of one seed)."""

    x: np.ndarray
    plateau: float
    width: float
    seeds: int
    declared_cell: int
    run_sd: float
    misfit_sd: float
    seed_shift_sd: float

    def draw(self, x0: float, rng: np.random.Generator) -> np.ndarray:
        """The cells' seed-mean gaps (pp, shape ``(cells,)``) of one simulated record with its boundary at ``x0``."""
        cells = len(self.x)
        truth = logistic(self.x, self.plateau, x0, self.width) + rng.normal(0.0, self.misfit_sd, cells)
        runs = rng.normal(0.0, self.run_sd, (cells, self.seeds)) + rng.normal(0.0, self.seed_shift_sd, self.seeds)
        return truth + runs.mean(axis=1)


def world_of(ds: xr.Dataset) -> World:
    """The :class:`World` of a phase diagram's results ``ds`` (chapter 10): its cells and fit
    (:func:`~initmem.study.verdicts.boundary.fit_boundary`), the pooled within-cell standard deviation of a run's selected
    gap, the lack of fit's standard deviation (the fit's residual variance minus the seeds' share, at least 0) and
    the seed shift's (the variance of each seed's mean gap over cells minus the runs' share, at least 0)."""
    from .phase import cell_table, gap

    table = cell_table(ds)
    fit = fit_boundary(table)
    per_seed = gap(ds).transpose("lr", "weight_decay", "seed")
    runs = np.stack([per_seed.sel(lr=lr, weight_decay=wd).values for lr, wd in table.index])  # (cells, seeds)
    cells, seeds = runs.shape
    centred = runs - runs.mean(axis=1, keepdims=True)
    run_var = float((centred**2).sum() / (cells * (seeds - 1)))
    residual_var = fit.sse / (cells - 3)
    shift_var = float(np.var(centred.mean(axis=0), ddof=1)) - run_var / cells
    _, cell = memory_to_forget(table)
    return World(
        x=table["x"].to_numpy(float),
        plateau=fit.plateau,
        width=fit.width,
        seeds=seeds,
        declared_cell=int(table.index.get_loc(cell)),
        run_sd=math.sqrt(run_var),
        misfit_sd=math.sqrt(max(residual_var - run_var / seeds, 0.0)),
        seed_shift_sd=math.sqrt(max(shift_var, 0.0)),
    )


def simulate(world: World, x0s: Sequence[float], reps: int, seed: int = 0) -> xr.Dataset:
    """``reps`` simulated records of ``world`` at each true boundary of ``x0s``, each fitted by both
    :data:`METHODS`. Returns a Dataset over ``(fit, x0)`` (``fit``: one of :data:`METHODS`): ``coverage`` (share whose 95 % profile interval holds
    the true x0), ``in_size`` (share whose interval lies inside :data:`~initmem.study.verdicts.rules.BOUNDARY_BAND`: B1's
    "in size" when its direction holds), ``identified`` (share with both bounds finite) and ``median_width`` (of the
    interval, in x); the world's parameters as attributes."""
    profile = LogisticProfile(world.x)
    rng = np.random.default_rng(seed)
    shape = (len(METHODS), len(x0s), reps)
    covered, inside, identified, widths = (np.zeros(shape) for _ in range(4))
    for j, x0 in enumerate(x0s):
        for r in range(reps):
            y = world.draw(float(x0), rng)
            for i, plateau in enumerate((None, float(y[world.declared_cell]))):
                fit = profile.fit(y, plateau).midpoint
                covered[i, j, r] = fit.low <= x0 <= fit.high
                inside[i, j, r] = BOUNDARY_BAND[0] <= fit.low and fit.high <= BOUNDARY_BAND[1]
                identified[i, j, r] = math.isfinite(fit.low) and math.isfinite(fit.high)
                widths[i, j, r] = fit.high - fit.low
    dims, coords = ("fit", "x0"), {"fit": list(METHODS), "x0": [float(v) for v in x0s]}
    attrs = {k: v for k, v in world.__dict__.items() if k != "x"} | {"cells": len(world.x), "reps": reps, "seed": seed}
    return xr.Dataset(
        {
            "coverage": (dims, covered.mean(-1)),
            "in_size": (dims, inside.mean(-1)),
            "identified": (dims, identified.mean(-1)),
            "median_width": (dims, np.median(widths, axis=-1)),
        },
        coords=coords,
        attrs=attrs,
    )


def power_by_seeds(world: World, seeds: Sequence[int], reps: int, seed: int = 0) -> xr.DataArray:
    """B1's power: the share of ``reps`` records of ``world`` with its boundary at :data:`PREDICTED_X0` whose
    interval (plateau fitted) lies inside the band, at each number of seeds per cell of ``seeds`` (dim ``n_seeds``).
    The lack of fit does not shrink with seeds, so the power may stay low however many are run."""
    import dataclasses

    shares = [
        float(simulate(dataclasses.replace(world, seeds=int(n)), [PREDICTED_X0], reps, seed)["in_size"][0, 0])
        for n in seeds
    ]
    return xr.DataArray(shares, dims="n_seeds", coords={"n_seeds": [int(n) for n in seeds]}, name="power")


def _percent(share: float) -> str:
    return f"{100 * share:.0f} %"


def coverage_frame(ds: xr.Dataset) -> Any:
    """A committed simulation (:func:`simulate` with ``power``, scripts/b1_coverage.py) as the table chapter 10 shows:
    one row per true x0, the coverage of each fit and B1's share "in size", as percentages."""
    import pandas as pd

    from ...base.numbers import decimal

    rows = {
        decimal(float(x0), 2): {
            "covered, plateau fitted (B1)": _percent(float(ds["coverage"].sel(fit=METHODS[0], x0=x0))),
            "covered, plateau declared (replaced)": _percent(float(ds["coverage"].sel(fit=METHODS[1], x0=x0))),
            "B1 in size": _percent(float(ds["in_size"].sel(fit=METHODS[0], x0=x0))),
        }
        for x0 in ds["x0"].values
    }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("true x0")


def coverage_text(ds: xr.Dataset) -> str:
    """The simulation's answer in one sentence, with B1's power at the prediction at each simulated number of seeds."""
    fitted = ds["coverage"].sel(fit=METHODS[0])
    power = ds["power"]
    now = int(ds.attrs["seeds"])
    more = ", ".join(f"{int(n)} seeds {_percent(float(power.sel(n_seeds=n)))}" for n in power["n_seeds"] if n > now)
    held = TARGET[0] <= float(fitted.min()) and float(fitted.max()) <= TARGET[1]
    return (
        f"{'Yes' if held else 'Not everywhere'}: over {int(ds.attrs['reps']):,} simulated records per boundary, B1's "
        f"interval held the true x0 in {_percent(float(fitted.min()))} to {_percent(float(fitted.max()))} of them "
        f"(target {100 * TARGET[0]:.0f} to {_percent(TARGET[1])}). Its power is "
        f'low: with the boundary exactly where T5 puts it, B1 says "in size" in '
        f"{_percent(float(power.sel(n_seeds=now)))} of records at {now} seeds ({more}), since the cells' departures "
        "from one curve do not shrink with more seeds."
    )


def power_column(ds: xr.Dataset) -> dict[str, str]:
    """B1's cells of the ledger's power columns, as :func:`initmem.study.verdicts.row_power.power_columns` gives the other
    rows': ``{"power": "12 % (x0 at 0)", "seeds for 80 %": "more than 20"}`` from a committed simulation."""
    from .row_power import TARGET_POWER

    power = ds["power"]
    now = int(ds.attrs["seeds"])
    reached = [int(n) for n in power["n_seeds"].values if float(power.sel(n_seeds=n)) >= TARGET_POWER]
    return {
        "power": f"{_percent(float(power.sel(n_seeds=now)))} (x0 at {PREDICTED_X0:g})",
        "seeds for 80 %": str(min(reached)) if reached else f"more than {int(power['n_seeds'].max())}",
    }
