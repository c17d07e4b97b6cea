"""Statistics over seeds: the one vocabulary of every table, figure and verdict.

A *seed* is one draw of the initial directions and of the data order (``RunConfig.seed``). Runs of one seed
at different sigma_w share both, so every comparison across sigma_w is paired within a seed:

* :func:`seed_spreads`: each seed's spread, max - min over sigma_w of its accuracy (percentage points). A seed
  with a missing (diverged) sigma_w has no spread: it drops out instead of reporting a spread over fewer points.
* :func:`mean_interval`: the printed estimator is always the **mean over seeds** of such a per-seed quantity
  (a spread, a difference of spreads, a slope), and its interval the two-sided 95 % Student-t interval over the
  seeds, ``mean +- t_{0.975, n-1} s / sqrt(n)`` (``scipy.stats.t``). With one seed there is no interval.
* :func:`rank_correlation`: Spearman's rho with tie correction (``scipy.stats.spearmanr``).
* :func:`spread`: the paper's initialization memory, max - min over sigma_w (every other dimension kept), with
  diverged runs left out (:func:`finite_runs`, :func:`n_diverged`).

:class:`Interval` carries the estimate, its bounds, the number of seeds and the method, and formats itself
the same way everywhere ("5.8 pp [95 % CI 4.1, 7.5; t over 3 seeds]").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import xarray as xr

from ..run.thresholds import DIVERGENCE_FACTOR

__all__ = ["LEVEL", "SEED_DIM", "Interval", "seed_mean", "seed_spreads", "mean_interval", "rank_correlation", "spread",
           "diverged_runs", "finite_runs", "n_diverged"]  # fmt: skip

#: Confidence level of every interval in the book.
LEVEL = 0.95
#: The dimension that indexes seeds in a sweep Dataset.
SEED_DIM = "seed"


@dataclass(frozen=True)
class Interval:
    """An estimate (mean over ``n`` seeds) with its two-sided :data:`LEVEL` interval ``[low, high]``.

    ``low``/``high`` are NaN when ``n < 2``; ``estimate`` is NaN when ``n == 0``.
    """

    estimate: float
    low: float
    high: float
    n: int
    method: str = "t"

    @property
    def has_bounds(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def format(self, unit: str = " pp", digits: int = 1) -> str:
        """``"5.8 pp [95 % CI 4.1, 7.5; t over 3 seeds]"``; ``"n/a"`` without an estimate."""
        if not math.isfinite(self.estimate):
            return "n/a"
        text = f"{self.estimate:.{digits}f}{unit}"
        seeds = f"{self.n} seed{'s' if self.n != 1 else ''}"
        if self.has_bounds:
            level = round(100 * LEVEL)
            return text + f" [{level} % CI {self.low:.{digits}f}, {self.high:.{digits}f}; {self.method} over {seeds}]"
        return text + f" ({seeds}, no interval)"

    def __str__(self) -> str:
        return self.format()


def seed_mean(da: xr.DataArray, seed_dim: str = SEED_DIM) -> xr.DataArray:
    """Mean over seeds (NaN ignored, so a diverged seed drops out); ``da`` itself without a seed dimension."""
    return da.mean(seed_dim, skipna=True) if seed_dim in da.dims else da


def seed_spreads(da: xr.DataArray, over: str = "sigma_w") -> xr.DataArray:
    """Per-seed spread: max - min of ``da`` along ``over`` (every other dimension kept); NaN where any value along
    ``over`` is missing."""
    if over not in da.dims:
        raise ValueError(f"over: {over!r} is not a dimension; available: {', '.join(map(str, da.dims))}")
    complete = da.notnull().all(over)
    return (da.max(over) - da.min(over)).where(complete)


def mean_interval(values: Sequence[float] | np.ndarray | xr.DataArray, level: float = LEVEL) -> Interval:
    """Mean of the finite ``values`` (one per seed) with its two-sided Student-t interval."""
    from scipy import stats

    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    if n < 2:
        return Interval(mean, math.nan, math.nan, n)
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho of the finite pairs of ``x`` and ``y`` (ties averaged); NaN with fewer than 3 pairs or
    no variation."""
    from scipy import stats

    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return math.nan
    return float(stats.spearmanr(x[ok], y[ok]).statistic)


def spread(ds: xr.Dataset | xr.DataArray, over: str = "sigma_w", var: str = "selected_test_acc") -> xr.DataArray:
    """Max - min over ``over`` (NaN ignored) of ``ds[var]`` (or of the DataArray ``ds``), in the variable's
    units (percentage points for accuracies); every other dimension is kept (seeds included). Given a Dataset,
    diverged runs (``diverged == 1``) are left out (:func:`finite_runs`).

    Example: ``spread(ds)`` of a sweep is the paper's initialization memory of each seed (and of each other swept
    field); ``seed_mean(spread(ds))`` the headline number.
    """
    values = finite_runs(ds, var) if isinstance(ds, xr.Dataset) else ds
    if over not in values.dims:
        raise ValueError(f"over: {over!r} is not a dimension; available: {', '.join(map(str, values.dims))}")
    return values.max(over, skipna=True) - values.min(over, skipna=True)


def diverged_runs(ds: xr.Dataset) -> xr.DataArray:
    """Which runs of ``ds`` diverged, by the rule of :mod:`initmem.run.thresholds` (a boolean DataArray over the
    run dims): those the trainer stopped (``diverged == 1``), and those whose recorded losses or kernel norm are
    above :data:`~initmem.run.thresholds.DIVERGENCE_FACTOR` times their epoch-0 value at some epoch, so that files
    written before the trainer applied the rule are judged by it too. NaN entries (epochs a run did not record)
    never count."""
    flag = ds["diverged"] == 1 if "diverged" in ds else xr.zeros_like(ds[_any_run_var(ds)], dtype=bool)
    for name in ("train_loss", "val_loss", "test_loss", "weight_norm"):
        if name in ds and "epoch" in ds[name].dims:
            values = abs(ds[name])
            initial = values.isel(epoch=0, drop=True)
            flag = flag | ((values > DIVERGENCE_FACTOR * initial) & (initial > 0)).any("epoch")
    return flag


def _any_run_var(ds: xr.Dataset) -> str:
    return next(name for name in ("selected_test_acc", "final_test_acc", *ds.data_vars) if name in ds)


def finite_runs(ds: xr.Dataset, var: str) -> xr.DataArray:
    """``ds[var]`` with the diverged runs (:func:`diverged_runs`) set to NaN, so that they drop out of every
    spread and mean; files written before diverged runs recorded NaN predictors still held epoch-0 values."""
    return ds[var].where(~diverged_runs(ds))


def n_diverged(ds: xr.Dataset) -> int:
    """How many runs of ``ds`` diverged (:func:`diverged_runs`)."""
    return int(diverged_runs(ds).sum())
