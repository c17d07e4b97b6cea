"""Seeds in the figures: each seed a small point beside the seed mean, or the mean's 95 % interval.

With at most :data:`~initmem.study.presentation.plots.style.SEED_POINTS_MAX` seeds every seed is drawn as a small point beside the
seed mean (:func:`seed_marks`, :func:`mean_and_seeds`); with more, the mean with its 95 % interval: the ledger's
calibrated interval for cross-fitted spreads (:mod:`initmem.study.statistics.calibration`; :func:`seed_spread` marks them), else
Student's t (:mod:`initmem.study.statistics.stats`). :func:`estimator_handles` gives the legend entries that say which.
:func:`seed_spread` is each seed's cross-fitted spread, the values whose mean the spread figures draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ...statistics.calibration import CrossFitted
from ...statistics.stats import Interval, cross_fitted_spreads, finite_runs, mean_interval, seed_mean, seed_spreads
from .style import DODGE, MUTED, SEED_MARKERSIZE, SEED_POINTS_MAX

__all__ = [
    "seed_count",
    "seed_marks",
    "mean_and_seeds",
    "dodge_factor",
    "estimator_handles",
    "reduce_other",
    "seed_spread",
    "interval_for",
    "iter_hue",
    "check_dims",
    "CALIBRATED",
]

#: The legend's name of the interval drawn over cross-fitted spreads (pass it to :func:`estimator_handles`).
CALIBRATED = "calibrated interval"


def seed_count(ds: xr.Dataset | xr.DataArray) -> int:
    """How many seeds ``ds`` holds (1 without a seed dimension)."""
    return int(ds.sizes.get("seed", 1))


def _mean_ci(da: xr.DataArray, seed_dim: str = "seed") -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    """Seed mean and the distances from it down and up to the bounds of its 95 % interval (NaN with < 2 finite
    seeds): calibrated for cross-fitted spreads (``da.attrs["n_sigma"]``, set by :func:`seed_spread`), else
    Student's t (:mod:`initmem.study.statistics.stats`)."""
    if seed_dim not in da.dims:
        return da, xr.full_like(da, np.nan, dtype=float), xr.full_like(da, np.nan, dtype=float)
    make = interval_for(da)

    def distances(x: np.ndarray) -> np.ndarray:
        interval = make(x)
        return np.array([interval.estimate - interval.low, interval.high - interval.estimate])

    out = xr.apply_ufunc(distances, da, input_core_dims=[[seed_dim]], output_core_dims=[["bound"]], vectorize=True)
    return seed_mean(da, seed_dim), out.isel(bound=0), out.isel(bound=1)


def interval_for(da: xr.DataArray) -> Callable[[np.ndarray], Interval]:
    """The 95 % interval of the mean of ``da``'s per-seed values: the ledger's calibrated one for cross-fitted spreads
    (``da.attrs["n_sigma"]``, set by :func:`seed_spread`), else Student's t (:mod:`initmem.study.statistics.stats`)."""
    n_sigma = da.attrs.get("n_sigma")
    return CrossFitted(int(n_sigma)).interval if n_sigma else mean_interval


def seed_marks(ax, x: np.ndarray, da: xr.DataArray, color: Any) -> None:
    """The seeds of ``da`` (dims: one matching ``x``, and ``seed``) at ``x``: each a small point with at most
    :data:`~initmem.study.presentation.plots.style.SEED_POINTS_MAX` seeds, else the 95 % interval of their mean as error bars
    (:func:`_mean_ci`); nothing with one seed.
    ``x`` may also give a position per seed (shape: points x seeds)."""
    n = seed_count(da)
    if n < 2:
        return
    along = [d for d in da.dims if d != "seed"]
    values = da.transpose(*along, "seed").values
    x = np.asarray(x, float)
    if n > SEED_POINTS_MAX:
        mean, below, above = _mean_ci(da)
        centre = x if x.ndim == 1 else x.mean(-1)
        yerr = np.vstack([below.values, above.values])
        ax.errorbar(centre, mean.values, yerr=yerr, fmt="none", ecolor=color, alpha=0.8, label="_interval")
        return
    positions = np.broadcast_to(x[:, None] if x.ndim == 1 else x, values.shape)
    ax.plot(
        positions.ravel(),
        values.ravel(),
        ls="none",
        marker="o",
        ms=SEED_MARKERSIZE,
        mew=0,
        color=color,
        alpha=0.55,
        label="_seed",
    )


def mean_and_seeds(
    ax, x: np.ndarray, da: xr.DataArray, color: Any, label: str | None = None, dodge: float = 1.0
) -> None:
    """The seed mean of ``da`` as a line with markers at ``x``, and its seeds (:func:`seed_marks`) at
    ``x * dodge`` (a log axis: neighbouring lines' seeds side by side)."""
    ax.plot(x, seed_mean(da).values, marker="o", color=color, label=label)
    seed_marks(ax, np.asarray(x, float) * dodge, da, color)


def dodge_factor(i: int, n: int) -> float:
    """The factor by which line ``i`` of ``n`` draws its seeds beside the others on a log axis."""
    return DODGE ** (i - (n - 1) / 2)


def estimator_handles(n_seeds: int, one: str = "one seed", interval: str = "t-interval") -> list:
    """Legend entries saying what the lines and marks are (see :func:`seed_marks`): the mean over the
    ``n_seeds`` seeds, and ``one`` seed's point or the mean's 95 % ``interval`` (:data:`CALIBRATED` for cross-fitted
    spreads); none with one seed."""
    from matplotlib.lines import Line2D

    if n_seeds < 2:
        return []
    mean = Line2D([], [], color=MUTED, marker="o", label=f"mean over {n_seeds} seeds")
    if n_seeds > SEED_POINTS_MAX:
        return [mean, Line2D([], [], color=MUTED, marker="|", ms=9, ls="none", label=f"its 95 % {interval}")]
    point = Line2D([], [], color=MUTED, marker="o", ms=SEED_MARKERSIZE, mew=0, ls="none", alpha=0.55, label=one)
    return [mean, point]


def reduce_other(da: xr.DataArray, keep: Sequence[str]) -> xr.DataArray:
    """Select the first value of every dimension not in ``keep`` (with a size > 1 that would be ambiguous)."""
    for dim in list(da.dims):
        if dim not in keep:
            da = da.isel({dim: 0})
    return da


def seed_spread(ds: xr.Dataset, var: str, keep: Sequence[str]) -> xr.DataArray:
    """Each seed's cross-fitted spread over sigma_w of ``var`` (pp; :func:`initmem.study.statistics.stats.cross_fitted_spreads`;
    diverged runs left out), dims ``keep`` and ``seed``: the per-seed values whose mean is the headline spread
    (:func:`initmem.study.statistics.summary.summary_table`). With a single seed, its raw spread (max - min), as the table."""
    values = finite_runs(ds, var)
    if "seed" not in values.dims or values.sizes["seed"] < 2:
        per_seed = seed_spreads(values if "seed" in values.dims else values.expand_dims("seed"), "sigma_w")
    else:
        per_seed = cross_fitted_spreads(values)
        per_seed.attrs["n_sigma"] = values.sizes["sigma_w"]  # its interval is the calibrated one (_mean_ci)
    return reduce_other(per_seed, (*keep, "seed"))


def iter_hue(da: xr.DataArray, hue: str | None):
    """``(value, da.sel(hue=value))`` for each value of dimension ``hue``; ``(None, da)`` once without it."""
    if hue is None or hue not in da.dims:
        yield None, da
        return
    for value in da[hue].values:
        yield (value.item() if hasattr(value, "item") else value), da.sel({hue: value})


def check_dims(ds: xr.Dataset | xr.DataArray, *dims: str) -> None:
    """``ValueError`` naming the dimensions of ``dims`` that ``ds`` lacks (a figure asked of the wrong sweep)."""
    missing = [d for d in dims if d not in ds.dims]
    if missing:
        raise ValueError(f"expected dimension(s) {', '.join(missing)}; the data has {', '.join(map(str, ds.dims))}")
