"""B1's two questions, asked so that the answer can be "no": which clock moves the memory, and where it ends.

**Which clock.** Across the phase diagram's cells the L2 clock ``T_L2 = lambda sum eta`` and the noise clock
``T_SGD = (1/b) sum eta^2`` grow together with the learning rate, so a memory that falls with ``x = T_L2 -
ln(|W0|/|W*|)`` across all cells may be the noise clock at work. At a fixed learning rate ``T_SGD`` is fixed (it does
not depend on lambda) while ``T_L2`` grows with lambda: :func:`stratified_trend` asks whether the gap falls with
lambda *within* each learning rate (Spearman's rho in each row, averaged; the null permutes lambda within each row).
The same test with the roles swapped (the gap against lr within each lambda) is reported beside it: it mixes both
clocks.

**Where.** :func:`fit_boundary` fits ``gap(x) = A / (1 + exp((x - x0) / w))`` with the plateau ``A`` *declared*, not
fitted: the gap of the least-forgetting cell (plain SGD, lambda = 0, at the smallest learning rate), whose value the
fit cannot move. Then only ``x0`` and ``w`` are fitted, by least squares over the cells' seed-mean gaps, and ``x0``
gets a profile interval: every ``x0`` whose best sum of squares (over ``w``) stays within the F-test's reach of the
minimum, ``SSE(x0) <= SSE_min (1 + F_{0.95}(1, n - 2) / (n - 2))``. Where that set reaches the end of the searched
range the cells do not pin ``x0`` down on that side, and the interval says so (an infinite bound): the boundary is
then **not identified**, which is an answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .rules import MARGIN_PP
from .stats import LEVEL, Interval, rank_test, spearman

__all__ = [
    "StratifiedTrend",
    "stratified_trend",
    "Boundary",
    "declared_plateau",
    "fit_boundary",
    "x0_alternatives",
    "fit_caveats",
]

#: How far beyond the cells' x the profile searches for x0 (in x): a profile interval reaching this is unbounded.
SEARCH_MARGIN = 3.0
_X0_STEP = 0.01
#: The widths (in x) the profile minimises over: 0.01 to 10, log-spaced.
_WIDTHS = np.logspace(-2, 1, 241)


@dataclass(frozen=True)
class StratifiedTrend:
    """The mean over strata of Spearman's rho of the gap against ``factor`` within each stratum (cells sharing
    ``stratum``), with one-sided permutation p-values for rho < 0 (``p_less``) and rho > 0 (``p_greater``), the
    factor's labels permuted within every stratum at once (``draws`` joint permutations); ``strata`` (with at least
    3 cells) and ``cells`` used."""

    rho: float
    p_less: float
    p_greater: float
    factor: str
    stratum: str
    strata: int
    cells: int
    draws: int = 0

    def format(self) -> str:
        """``"rho -0.72 within lr (5 rows, 25 cells), p = 0.0005 (one-sided, rho < 0)"``."""
        if not math.isfinite(self.rho):
            return f"no rho within {self.stratum} (no stratum with 3 cells)"
        return (
            f"rho {self.rho:.2f} of the gap against {self.factor} within each {self.stratum} ({self.strata} "
            f"strata, {self.cells} cells), p = {self.p_less:.2g} (one-sided, rho < 0)"
        )


def stratified_trend(
    table: Any, factor: str, stratum: str, value: str = "selected_gap", resamples: int | None = None
) -> StratifiedTrend:
    """Spearman's rho of ``table[value]`` against the index level ``factor`` within each value of the index level
    ``stratum`` (``table``: a :func:`initmem.study.phase.cell_table`, indexed by lr and weight_decay), averaged over
    the strata with at least 3 finite cells; its null draws ``resamples`` (default
    :data:`~initmem.study.nulls.N_RESAMPLES`) joint permutations of the values within every stratum (fixed seed),
    and p = (hits + 1) / (draws + 1)."""
    from .nulls import N_RESAMPLES, NULL_SEED

    draws = resamples or N_RESAMPLES
    rng = np.random.default_rng(NULL_SEED)
    observed, null, cells = [], np.zeros(draws), 0
    for _, rows in table.groupby(level=stratum):
        rows = rows[np.isfinite(rows[value].to_numpy(float))]
        if len(rows) < 3:
            continue
        x = rows.index.get_level_values(factor).to_numpy(float)
        y = rows[value].to_numpy(float)
        observed.append(float(np.nan_to_num(spearman(x, y))))  # no variation: no association
        shuffled = np.take_along_axis(np.broadcast_to(y, (draws, len(y))), rng.random((draws, len(y))).argsort(1), 1)
        null += np.nan_to_num(spearman(np.broadcast_to(x, shuffled.shape), shuffled, axis=-1))
        cells += len(rows)
    if not observed:
        return StratifiedTrend(math.nan, math.nan, math.nan, factor, stratum, 0, 0, draws)
    rho, null = float(np.mean(observed)), null / len(observed)
    tol = 1e-12
    return StratifiedTrend(
        rho,
        float((1 + np.sum(null <= rho + tol)) / (1 + draws)),
        float((1 + np.sum(null >= rho - tol)) / (1 + draws)),
        factor,
        stratum,
        len(observed),
        cells,
        draws,
    )


@dataclass(frozen=True)
class Boundary:
    """The declared-plateau logistic of the gap against x: ``plateau`` (pp, declared), ``midpoint`` x0 with its
    profile interval (an infinite bound where the cells do not bound it; method "profile, F"), ``width`` (in x, at
    the best x0), ``identified`` (both bounds finite), ``cells`` fitted and ``sse`` (pp^2) at the best fit."""

    plateau: float
    midpoint: Interval
    width: float
    identified: bool
    cells: int
    sse: float


def declared_plateau(table: Any, value: str = "selected_gap") -> tuple[float, tuple[float, float]]:
    """The plateau B1 declares: the gap of the cell without decay at the smallest learning rate (plain SGD with the
    least of either clock), and that cell ``(lr, weight_decay)``; NaN when the diagram has no lambda = 0 cell."""
    decays = table.index.get_level_values("weight_decay")
    if 0.0 not in decays:
        return math.nan, (math.nan, math.nan)
    plain = table.xs(0.0, level="weight_decay", drop_level=False).sort_index()
    cell = plain.index[0]
    return float(plain.iloc[0][value]), (float(cell[0]), float(cell[1]))


def fit_boundary(table: Any, plateau: float, value: str = "selected_gap") -> Boundary:
    """Fit ``plateau / (1 + exp((x - x0) / w))`` to the cells of ``table`` (``x`` and ``value`` columns; a
    :func:`initmem.study.phase.cell_table`) by least squares over a grid of x0 (step 0.01, :data:`SEARCH_MARGIN`
    beyond the cells' x on each side) and w (:data:`_WIDTHS`), and profile x0 (module docstring)."""
    from scipy import stats

    x = table["x"].to_numpy(float)
    y = table[value].to_numpy(float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    nan = Interval(math.nan, math.nan, math.nan, n, "profile, F")
    if n < 4 or not math.isfinite(plateau):
        return Boundary(plateau, nan, math.nan, False, n, math.nan)
    grid = np.arange(x.min() - SEARCH_MARGIN, x.max() + SEARCH_MARGIN + _X0_STEP / 2, _X0_STEP)
    with np.errstate(over="ignore"):
        curve = plateau / (1.0 + np.exp((x[None, None, :] - grid[:, None, None]) / _WIDTHS[None, :, None]))
    sse = ((curve - y) ** 2).sum(-1)  # (x0, width)
    profile = sse.min(axis=1)
    best = int(profile.argmin())
    reach = profile[best] * (1.0 + float(stats.f.ppf(LEVEL, 1, n - 2)) / (n - 2))
    inside = np.flatnonzero(profile <= reach)
    low = -math.inf if inside[0] == 0 else float(grid[inside[0]])
    high = math.inf if inside[-1] == len(grid) - 1 else float(grid[inside[-1]])
    midpoint = Interval(float(grid[best]), low, high, n, "profile, F")
    width = float(_WIDTHS[int(sse[best].argmin())])
    return Boundary(plateau, midpoint, width, math.isfinite(low) and math.isfinite(high), n, float(profile[best]))


def x0_alternatives(tables: Mapping[str, Any], plateau: float) -> dict[str, float]:
    """x0 of :func:`fit_boundary` under other defensible choices, to show how much the reading depends on them:
    ``tables`` maps a choice's name to its cell table (``x`` and ``selected_gap`` columns), each fitted with the
    same declared ``plateau``."""
    return {name: fit_boundary(table, plateau).midpoint.estimate for name, table in tables.items()}


def fit_caveats(fit: Boundary, table: Any) -> list[str]:
    """What limits the reading of ``fit`` on the cells of ``table`` (a :func:`initmem.study.phase.cell_table`), as
    sentences (empty when nothing does):

    * the cells without decay (lambda = 0, where T_L2 = 0) lose memory as the learning rate grows (a rank test over
      them, and a fall of at least :data:`~initmem.study.rules.MARGIN_PP`): there x moves through ``|W*|`` alone while
      the noise clock T_SGD grows along the same row, so a fit across learning rates mixes the two clocks;
    * the logistic does not fit the cells within their noise: the residual standard deviation of the fit is more than
      twice the cells' typical standard error (the median half-width of their 95 % t-intervals over 1.96), so the
      cells are not one function of x and x0 summarises them loosely.
    """
    caveats = []
    decays = table.index.get_level_values("weight_decay")
    plain = table.xs(0.0, level="weight_decay").sort_index() if 0.0 in decays else None  # by learning rate
    if plain is not None and len(plain) >= 3:
        trend = rank_test(plain.index.to_numpy(), plain["selected_gap"].to_numpy(), alternative="less")
        first, last = plain.iloc[0], plain.iloc[-1]
        if trend.significant() and first["selected_gap"] - last["selected_gap"] >= MARGIN_PP:
            caveats.append(
                f"Without decay (lambda = 0, T_L2 = 0) the gap falls from {first['selected_gap']:.1f} pp at lr "
                f"{plain.index[0]:g} to {last['selected_gap']:.1f} pp at lr {plain.index[-1]:g} (rank test over "
                f"these {trend.n} cells, p = {trend.p_value:.2g}). There x moves through |W*| alone, which grows "
                f"with the learning rate, while the noise clock T_SGD rises from {first['T_SGD']:.2g} to "
                f"{last['T_SGD']:.2g} along the same row: across learning rates the two clocks move together, which "
                "is why B1's direction test compares cells within one learning rate, and why x0, fitted across all "
                "cells, mixes them."
            )
    if fit.cells > 2 and math.isfinite(fit.sse):
        residual = math.sqrt(fit.sse / (fit.cells - 2))
        half = (table["selected_gap_high"] - table["selected_gap_low"]) / 2
        typical = float(np.nanmedian(half.to_numpy(float))) / 1.96
        if math.isfinite(typical) and residual > 2 * typical:
            caveats.append(
                f"The logistic does not fit the cells within their noise: its residual standard deviation is "
                f"{residual:.1f} pp, against a typical standard error of a cell's gap of {typical:.1f} pp. The cells "
                "are not one function of x, and x0 summarises them loosely (its value under other analysis choices "
                "is given beside it)."
            )
    return caveats
