"""Statistics over seeds: the one vocabulary of every table, figure and verdict.

A *seed* is one draw of the initial directions and of the data order (``RunConfig.seed``); runs of one seed at
different sigma_w share both, so every comparison across sigma_w is paired within a seed.

* :func:`seed_spreads` -- each seed's spread, max - min over sigma_w (pp); a seed with a diverged sigma_w drops out;
* :func:`mean_interval` -- the mean over seeds of a per-seed quantity with its two-sided 95 % Student-t interval
  (none with one seed); cross-fitted spreads (:func:`cross_fitted_spreads`) take calibrated critical values
  instead (:class:`initmem.study.statistics.calibration.CrossFitted`);
* :func:`rank_correlation` -- Spearman's rho with tie correction;
* :func:`spread` -- the paper's initialization memory, max - min over sigma_w (every other dimension kept), with
  diverged runs left out (:func:`finite_runs`, :func:`n_diverged`).

:class:`Interval` carries the estimate, its bounds, the number of seeds and the method, and formats itself the same
way everywhere ("5.8 pp [95 % CI 4.1, 7.5; t over 3 seeds]").
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import xarray as xr

from ...base.numbers import ACCURACY_DIFFERENCE, decimal, p_text
from ...run.thresholds import DIVERGENCE_FACTOR

__all__ = [
    "LEVEL",
    "SEED_DIM",
    "Interval",
    "seed_mean",
    "seed_spreads",
    "cross_fitted_spreads",
    "mean_interval",
    "rank_correlation",
    "RankTest",
    "rank_test",
    "spearman",
    "spread",
    "diverged_runs",
    "finite_runs",
    "n_diverged",
]

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
    #: The bounds the interval was clipped to (:meth:`clip`) where clipping moved one, else None.
    clipped: tuple[float, float] | None = None

    @property
    def has_bounds(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def clip(self, limits: tuple[float, float] = ACCURACY_DIFFERENCE) -> Interval:
        """The interval with its bounds clipped to ``limits``, what the quantity can be (default: a difference of
        accuracies, [-100, 100] pp); :attr:`clipped` records them where a bound moved, and :meth:`format` and
        :meth:`brief` say so."""
        low, high = max(self.low, limits[0]), min(self.high, limits[1])
        if not self.has_bounds or (low, high) == (self.low, self.high):
            return self
        return replace(self, low=low, high=high, clipped=limits)

    def format(self, unit: str = " pp", digits: int = 1) -> str:
        """``"5.8 pp [95 % CI 4.1, 7.5; t over 3 seeds]"`` (negative numbers with the minus sign,
        :func:`initmem.base.numbers.decimal`); ``"n/a"`` without an estimate."""
        if not math.isfinite(self.estimate):
            return "n/a"
        text = f"{decimal(self.estimate, digits)}{unit}"
        seeds = f"{self.n} seed{'s' if self.n != 1 else ''}"
        if self.has_bounds:
            level = round(100 * LEVEL)
            bounds = f"{decimal(self.low, digits)}, {decimal(self.high, digits)}"
            return text + f" [{level} % CI {bounds}; {self.method} over {seeds}{self._clipping()}]"
        return text + f" ({seeds}, no interval)"

    def brief(self, digits: int = 1) -> str:
        """``"5.8 [4.1, 7.5]"`` for a table cell whose header names the unit and the estimator, ``"5.8 [−60.0,
        100.0, clipped]"`` where a bound was clipped; ``"n/a"`` without bounds."""
        if not self.has_bounds:
            return "n/a"
        clipped = ", clipped" if self.clipped else ""
        return f"{decimal(self.estimate, digits)} [{decimal(self.low, digits)}, {decimal(self.high, digits)}{clipped}]"

    def _clipping(self) -> str:
        """``"; clipped to what is possible, [−100, 100]"`` where a bound was clipped, else ``""``."""
        if not self.clipped:
            return ""
        return f"; clipped to what is possible, [{decimal(self.clipped[0], 0)}, {decimal(self.clipped[1], 0)}]"

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


def mean_interval(
    values: Sequence[float] | np.ndarray | xr.DataArray,
    level: float = LEVEL,
    limits: tuple[float, float] | None = None,
    method: str = "t",
) -> Interval:
    """Mean of the finite ``values`` (one per seed) with its two-sided Student-t interval.

    ``limits`` clips the interval to the values the quantity can take (e.g. ``(0, 100)`` for an accuracy in
    percent: a t-interval of 94.4 +- 6.8 % is printed [87.6, 100.0], not [87.6, 101.2]). ``method`` names the
    estimator in :meth:`Interval.format` (e.g. ``"t, cross-fitted"``).
    """
    from scipy import stats

    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, method)
    mean = float(x.mean())
    if n < 2:
        return Interval(mean, math.nan, math.nan, n, method)
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * float(x.std(ddof=1)) / math.sqrt(n)
    low, high = mean - half, mean + half
    if limits is not None:
        low, high = max(low, limits[0]), min(high, limits[1])
    return Interval(mean, low, high, n, method)


def cross_fitted_spreads(da: xr.DataArray, over: str = "sigma_w", seed_dim: str = SEED_DIM) -> xr.DataArray:
    """Each seed's **cross-fitted** spread: on the seed-mean curve of the *other* seeds, find the best and the worst
    ``over`` value (argmax / argmin); the seed's value is its own accuracy there, best minus worst (percentage
    points). Every other dimension is kept.

    The raw spread (max - min of noisy means) picks its best and worst points on the same noise it then measures,
    so it is positive even without any memory (:mod:`initmem.study.statistics.nulls`). Cross-fitting picks them on other seeds:
    without memory the expected value is 0, and with memory it estimates the gap between the points the other seeds
    rank best and worst (a little below the true spread when they rank wrongly). A seed with a missing value along
    ``over`` (a diverged run) gets NaN and is left out of the others' curves. With one complete seed there is nothing
    to cross-fit on: NaN.

    >>> acc = xr.DataArray([[60.0, 62.0, 61.0], [40.0, 43.0, 38.0]], dims=("sigma_w", "seed"),
    ...                    coords={"sigma_w": [0.1, 2.5]})
    >>> cross_fitted_spreads(acc).values.tolist()
    [20.0, 19.0, 23.0]
    """
    if over not in da.dims or seed_dim not in da.dims:
        raise ValueError(f"da: needs the dimensions {over!r} and {seed_dim!r}; has {', '.join(map(str, da.dims))}")
    values = da.transpose(..., over, seed_dim)
    out = xr.apply_ufunc(_cross_fit, values, input_core_dims=[[over, seed_dim]], output_core_dims=[[seed_dim]])
    return out.rename(f"cross_fitted_spread_{da.name}" if da.name else "cross_fitted_spread")


def _cross_fit(acc: np.ndarray) -> np.ndarray:
    """``acc`` (..., n_over, n_seeds) -> (..., n_seeds): each seed's accuracy at the others' best minus worst point."""
    acc = np.asarray(acc, dtype=float)
    complete = np.isfinite(acc).all(axis=-2)  # (..., n_seeds)
    filled = np.where(complete[..., None, :], acc, 0.0)
    total, count = filled.sum(axis=-1), complete.sum(axis=-1)  # (..., n_over), (...)
    out = np.full(acc.shape[:-2] + acc.shape[-1:], np.nan)
    for s in range(acc.shape[-1]):
        others = count - complete[..., s]
        with np.errstate(invalid="ignore", divide="ignore"):
            curve = (total - filled[..., s]) / others[..., None]
        valid = complete[..., s] & (others >= 1)
        safe = np.where(np.isfinite(curve), curve, -np.inf)
        best = np.argmax(safe, axis=-1)
        worst = np.argmin(np.where(np.isfinite(curve), curve, np.inf), axis=-1)
        own = acc[..., s]
        value = (
            np.take_along_axis(own, best[..., None], -1)[..., 0] - np.take_along_axis(own, worst[..., None], -1)[..., 0]
        )
        out[..., s] = np.where(valid, value, np.nan)
    return out


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho of the finite pairs of ``x`` and ``y`` (ties averaged); NaN with fewer than 3 pairs or
    no variation."""
    from scipy import stats

    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return math.nan
    return float(stats.spearmanr(x[ok], y[ok]).statistic)


@dataclass(frozen=True)
class RankTest:
    """Spearman's rho of ``n`` pairs with its permutation p-value (``alternative``: "less" tests rho < 0, "greater"
    rho > 0, "two-sided" either) and a 95 % bootstrap interval ``[low, high]`` (percentile, resampling pairs). NaN
    throughout with fewer than 3 pairs or no variation."""

    rho: float
    p_value: float
    low: float
    high: float
    n: int
    alternative: str = "less"

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the permutation test rejects "no association" at ``alpha`` in the direction of ``alternative``."""
        return math.isfinite(self.p_value) and self.p_value < alpha

    def format(self) -> str:
        """``"rho = −0.21 [95 % CI −0.74, 0.41], p = 0.26 (one-sided, rho < 0; 12 configurations)"``."""
        if not math.isfinite(self.rho):
            return f"rho n/a ({self.n} configurations)"
        side = {"less": "one-sided, rho < 0", "greater": "one-sided, rho > 0"}.get(self.alternative, "two-sided")
        interval = f" [95 % CI {decimal(self.low, 2)}, {decimal(self.high, 2)}]" if math.isfinite(self.low) else ""
        return f"rho = {decimal(self.rho, 2)}{interval}, p = {p_text(self.p_value)} ({side}; {self.n} configurations)"


def rank_test(x: Sequence[float], y: Sequence[float], alternative: str = "less") -> RankTest:
    """Spearman's rho of the finite pairs of ``x`` and ``y`` with a permutation p-value (``y`` permuted against
    ``x``: exact up to 8 pairs, else :data:`initmem.study.statistics.nulls.N_RESAMPLES` random draws seeded with
    :data:`~initmem.study.statistics.nulls.NULL_SEED`) and a percentile bootstrap interval over pairs
    (``scipy.stats.bootstrap``, 9,999 resamples, the same seed). Few pairs make both wide: the interval of 3 pairs
    spans almost [-1, 1]."""
    from scipy import stats

    from .nulls import N_RESAMPLES, NULL_SEED

    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, n = x[ok], y[ok], int(ok.sum())
    rho = rank_correlation(x, y)
    if not math.isfinite(rho):
        return RankTest(math.nan, math.nan, math.nan, math.nan, n, alternative)

    exact = math.factorial(n) <= 40_320
    permutation = stats.permutation_test(
        (x, y),
        spearman,
        permutation_type="pairings",
        alternative=alternative,
        vectorized=True,
        n_resamples=np.inf if exact else N_RESAMPLES,
        rng=np.random.default_rng(NULL_SEED),
    )
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore")  # a degenerate resample (3 pairs) has no interval: NaN, said in format()
        boot = stats.bootstrap(
            (x, y),
            spearman,
            paired=True,
            vectorized=True,
            method="percentile",
            n_resamples=9_999,
            rng=np.random.default_rng(NULL_SEED),
        )
    low, high = boot.confidence_interval
    return RankTest(rho, float(permutation.pvalue), float(low), float(high), n, alternative)


def spearman(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's rho along ``axis`` (Pearson's r of the average ranks: the tie-corrected rho), vectorised; NaN where
    a resample has no variation."""
    from scipy import stats

    ra, rb = stats.rankdata(a, axis=axis), stats.rankdata(b, axis=axis)
    ra = ra - ra.mean(axis=axis, keepdims=True)
    rb = rb - rb.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ra * rb).sum(axis=axis) / np.sqrt((ra * ra).sum(axis=axis) * (rb * rb).sum(axis=axis))


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
    reference = ds["diverged"] if "diverged" in ds else ds[_any_run_var(ds)]
    run_dims = [d for d in reference.dims if d not in ("epoch", "layer")]
    flag = (
        (reference.transpose(*run_dims).values == 1)
        if "diverged" in ds
        else np.zeros([ds.sizes[d] for d in run_dims], dtype=bool)
    )
    for name in ("train_loss", "val_loss", "test_loss", "weight_norm"):
        if name in ds and "epoch" in ds[name].dims and set(ds[name].dims) - {"epoch"} == set(run_dims):
            values = np.abs(ds[name].transpose(*run_dims, "epoch").values)
            initial = values[..., :1]
            with np.errstate(invalid="ignore"):
                flag = flag | ((values > DIVERGENCE_FACTOR * initial) & (initial > 0)).any(axis=-1)
    coords = {name: c for name, c in reference.coords.items() if set(c.dims) <= set(run_dims)}
    return xr.DataArray(flag, dims=run_dims, coords=coords, name="diverged_runs")


def _any_run_var(ds: xr.Dataset) -> str:
    return next(name for name in ("selected_test_acc", "final_test_acc", *ds.data_vars) if name in ds)


def finite_runs(ds: xr.Dataset, var: str) -> xr.DataArray:
    """``ds[var]`` with the diverged runs (:func:`diverged_runs`) set to NaN, so that they drop out of every
    spread and mean; files written before diverged runs recorded NaN predictors still held epoch-0 values."""
    return ds[var].where(~diverged_runs(ds))


def n_diverged(ds: xr.Dataset) -> int:
    """How many runs of ``ds`` diverged (:func:`diverged_runs`)."""
    return int(diverged_runs(ds).sum())
