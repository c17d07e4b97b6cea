"""B1's two questions, asked so that the answer can be "no": which clock moves the memory, and where it ends.

Which clock: :func:`stratified_trend` asks whether the memory gap falls with lambda *within* each learning rate
(Spearman's rho per row, averaged; the null permutes lambda within each row), where ``T_SGD = (1/b) sum eta^2`` is
fixed and only ``T_L2 = lambda sum eta`` moves; across learning rates both clocks grow together.

Where: :func:`fit_boundary` fits ``gap(x) = A / (1 + exp((x - x0) / w))``, ``x = T_L2 - ln(|W0|/|W*|)``, with ``A``,
``x0`` and ``w`` free (least squares over the cells' seed-mean gaps, pp) and gives ``x0`` a profile interval (an
infinite bound where the cells do not pin it down: "not identified"); :func:`lack_of_fit` tests the curve against
the seeds' scatter. Its coverage is simulated in :mod:`initmem.study.verdicts.boundary_coverage`; chapter 10 explains both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...base.numbers import decimal, p_text
from ..statistics.stats import LEVEL, Interval, rank_test, spearman
from .rules import MARGIN_PP

__all__ = [
    "StratifiedTrend",
    "stratified_trend",
    "Boundary",
    "LackOfFit",
    "memory_to_forget",
    "LogisticProfile",
    "fit_boundary",
    "lack_of_fit",
    "x0_alternatives",
    "fit_caveats",
    "logistic",
]

#: How far beyond the cells' x the profile searches for x0 (in x): a profile interval reaching this is unbounded.
SEARCH_MARGIN = 3.0
#: The largest plateau the logistic may take (pp): an accuracy difference cannot exceed it.
PLATEAU_BOUND = 100.0
_X0_STEP = 0.01
#: The widths (in x) the profile minimises over: 0.01 to 10, log-spaced.
_WIDTHS = np.logspace(-2, 1, 241)


def logistic(x: np.ndarray, height: float, midpoint: float, width: float) -> np.ndarray:
    """``height / (1 + exp((x - midpoint) / width))``: ``height`` for x far below ``midpoint``, 0 far above."""
    with np.errstate(over="ignore"):
        return height / (1.0 + np.exp((np.asarray(x, float) - midpoint) / width))


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
        """``"rho −0.72 of the gap against lambda within each lr (5 strata, 25 cells), p = 5e-4 (one-sided, rho < 0)"``."""
        if not math.isfinite(self.rho):
            return f"no rho within {self.stratum} (no stratum with 3 cells)"
        return (
            f"rho {decimal(self.rho, 2)} of the gap against {self.factor} within each {self.stratum} ({self.strata} "
            f"strata, {self.cells} cells), p = {p_text(self.p_less)} (one-sided, rho < 0)"
        )


def stratified_trend(
    table: Any, factor: str, stratum: str, value: str = "selected_gap", resamples: int | None = None
) -> StratifiedTrend:
    """Spearman's rho of ``table[value]`` against the index level ``factor`` within each value of the index level
    ``stratum`` (``table``: a :func:`initmem.study.verdicts.phase.cell_table`, indexed by lr and weight_decay), averaged over
    the strata with at least 3 finite cells; its null draws ``resamples`` (default
    :data:`~initmem.study.statistics.nulls.N_RESAMPLES`) joint permutations of the values within every stratum (fixed seed),
    and p = (hits + 1) / (draws + 1)."""
    from ..statistics.nulls import N_RESAMPLES, NULL_SEED

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
    """The logistic of the gap against x: ``plateau`` (pp, fitted unless it was fixed), ``midpoint`` x0 with its
    profile interval (an infinite bound where the cells do not bound it; method "profile, F"), ``width`` (in x, at
    the best x0), ``identified`` (both bounds finite), ``cells`` fitted and ``sse`` (pp^2) at the best fit."""

    plateau: float
    midpoint: Interval
    width: float
    identified: bool
    cells: int
    sse: float


@dataclass(frozen=True)
class LackOfFit:
    """The lack-of-fit F-test of a :class:`Boundary` against the seeds' scatter within cells: ``f`` = (mean square of
    the cells' departures from the curve, ``df_fit`` = cells - 3) / (pooled within-cell variance of a run's gap,
    ``df_pure`` = runs - cells), and its p-value; a small p says the cells are not one logistic of x within their
    noise (the profile interval then counts the misfit as noise, which its coverage simulation includes)."""

    f: float
    df_fit: int
    df_pure: int
    p_value: float

    def format(self) -> str:
        """``"F(30, 132) = 2.8, p = 4e-5"`` (:mod:`initmem.base.numbers`' format)."""
        from ...base.numbers import decimal, p_text

        return f"F({self.df_fit}, {self.df_pure}) = {decimal(self.f)}, p = {p_text(self.p_value)}"


def memory_to_forget(table: Any, value: str = "selected_gap") -> tuple[float, tuple[float, float]]:
    """B1's premise: the gap of the cell without decay at the smallest learning rate (plain SGD with the least of
    either clock: the memory there is to forget), and that cell ``(lr, weight_decay)``; NaN without a lambda = 0 cell."""
    decays = table.index.get_level_values("weight_decay")
    if 0.0 not in decays:
        return math.nan, (math.nan, math.nan)
    plain = table.xs(0.0, level="weight_decay", drop_level=False).sort_index()
    cell = plain.index[0]
    return float(plain.iloc[0][value]), (float(cell[0]), float(cell[1]))


class LogisticProfile:
    """Least squares of ``plateau / (1 + exp((x - x0) / w))`` through cells at ``x`` (shape ``(cells,)``), on a grid
    of x0 (step 0.01, :data:`SEARCH_MARGIN` beyond the cells on each side) and w (:data:`_WIDTHS`); the plateau, linear
    in the curve, is solved in closed form at every (x0, w) within [0, :data:`PLATEAU_BOUND`] pp. Built once per
    ``x`` and fitted to many gaps (the coverage simulation)."""

    def __init__(self, x: np.ndarray) -> None:
        self.x = np.asarray(x, float)
        self.grid = np.arange(self.x.min() - SEARCH_MARGIN, self.x.max() + SEARCH_MARGIN + _X0_STEP / 2, _X0_STEP)
        with np.errstate(over="ignore"):
            self.shape = 1.0 / (1.0 + np.exp((self.x[None, None, :] - self.grid[:, None, None]) / _WIDTHS[:, None]))
        self.norm = np.einsum("gwc,gwc->gw", self.shape, self.shape)

    def fit(self, y: np.ndarray, plateau: float | None = None) -> Boundary:
        """The fit to the gaps ``y`` (pp, shape ``(cells,)``, finite) with the plateau free, or fixed at ``plateau``
        (the reading B1 used before its coverage was measured; kept for the simulation's comparison), and x0's
        profile interval: every x0 whose best sum of squares stays within ``SSE_min (1 + F_0.95(1, d) / d)``,
        ``d`` = cells - fitted parameters."""
        from scipy import stats

        n, fitted = len(self.x), 3 if plateau is None else 2
        nan = Interval(math.nan, math.nan, math.nan, n, "profile, F")
        if n < 4 or (plateau is not None and not math.isfinite(plateau)):
            return Boundary(math.nan if plateau is None else plateau, nan, math.nan, False, n, math.nan)
        cross = self.shape @ y  # (x0, width)
        height = np.clip(cross / self.norm, 0.0, PLATEAU_BOUND) if plateau is None else np.full_like(cross, plateau)
        sse = float(y @ y) - 2.0 * height * cross + height**2 * self.norm
        profile = sse.min(axis=1)
        best = int(profile.argmin())
        width = int(sse[best].argmin())
        a = float(height[best, width])
        exact = float(((a * self.shape[best, width] - y) ** 2).sum())
        d = n - fitted
        reach = max(profile[best], 0.0) * (1.0 + float(stats.f.ppf(LEVEL, 1, d)) / d) + 1e-9 * float(y @ y)
        inside = np.flatnonzero(profile <= reach)
        low = -math.inf if inside[0] == 0 else float(self.grid[inside[0]])
        high = math.inf if inside[-1] == len(self.grid) - 1 else float(self.grid[inside[-1]])
        midpoint = Interval(float(self.grid[best]), low, high, n, "profile, F")
        return Boundary(a, midpoint, float(_WIDTHS[width]), math.isfinite(low) and math.isfinite(high), n, exact)


def fit_boundary(table: Any, value: str = "selected_gap") -> Boundary:
    """:class:`LogisticProfile`'s fit, plateau free, through the finite cells of ``table`` (``x`` and ``value``
    columns; a :func:`initmem.study.verdicts.phase.cell_table`)."""
    x = table["x"].to_numpy(float)
    y = table[value].to_numpy(float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 4:
        nan = Interval(math.nan, math.nan, math.nan, int(ok.sum()), "profile, F")
        return Boundary(math.nan, nan, math.nan, False, int(ok.sum()), math.nan)
    return LogisticProfile(x[ok]).fit(y[ok])


def lack_of_fit(fit: Boundary, table: Any, value: str = "selected_gap") -> LackOfFit:
    """:class:`LackOfFit` of ``fit`` through the cells of ``table`` (a :func:`initmem.study.verdicts.phase.cell_table`: its
    ``x``, ``value``, ``{value}_sd`` (seeds' standard deviation) and ``{value}_seeds`` columns); NaN where the cells
    have no scatter to compare with or too few cells."""
    from scipy import stats

    rows = table[np.isfinite(table["x"].to_numpy(float)) & np.isfinite(table[value].to_numpy(float))]
    seeds = rows[f"{value}_seeds"].to_numpy(float)
    df_fit, df_pure = len(rows) - 3, int((seeds - 1).sum())
    curve = logistic(rows["x"].to_numpy(float), fit.plateau, fit.midpoint.estimate, fit.width)
    misfit = float((seeds * (rows[value].to_numpy(float) - curve) ** 2).sum())
    pure = float(((seeds - 1) * rows[f"{value}_sd"].to_numpy(float) ** 2).sum())
    if df_fit < 1 or df_pure < 1 or not pure > 0 or not math.isfinite(misfit):
        return LackOfFit(math.nan, df_fit, df_pure, math.nan)
    f = (misfit / df_fit) / (pure / df_pure)
    return LackOfFit(f, df_fit, df_pure, float(stats.f.sf(f, df_fit, df_pure)))


def x0_alternatives(tables: Mapping[str, Any]) -> dict[str, float]:
    """x0 of :func:`fit_boundary` under other defensible choices, to show how much the reading depends on them:
    ``tables`` maps a choice's name to its cell table (``x`` and ``selected_gap`` columns)."""
    return {name: fit_boundary(table).midpoint.estimate for name, table in tables.items()}


def fit_caveats(fit: Boundary, table: Any) -> list[str]:
    """What limits the reading of ``fit`` on the cells of ``table`` (a :func:`initmem.study.verdicts.phase.cell_table`), as
    sentences (empty when nothing does):

    * the cells without decay (lambda = 0, where T_L2 = 0) lose memory as the learning rate grows (a rank test over
      them, and a fall of at least :data:`~initmem.study.verdicts.rules.MARGIN_PP`): there x moves through ``|W*|`` alone while
      the noise clock T_SGD grows along the same row, so a fit across learning rates mixes the two clocks;
    * the logistic does not fit the cells within their noise (:func:`lack_of_fit`, p < 0.05).
    """
    from .rules import ALPHA

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
    misfit = lack_of_fit(fit, table)
    if misfit.p_value < ALPHA:
        caveats.append(
            f"The logistic does not fit the cells within their noise (lack of fit {misfit.format()}): the cells are "
            "not one function of x. The profile interval counts their departures from the curve as noise, and its "
            "coverage is measured in worlds with departures as large; x0's value under other analysis choices is "
            "given beside it."
        )
    return caveats
