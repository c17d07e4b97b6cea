"""B1's tests (initmem.study.verdicts.boundary): the stratified trend by hand, the logistic fit and its profile interval on
known curves, the lack-of-fit test by hand, and a world where L2 does nothing, on the committed cells, that must not
earn B1."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from initmem.base.numbers import p_text
from initmem.study.verdicts import boundary, claims, phase, rules

COMMITTED = Path(__file__).resolve().parents[1] / "results" / "cpu" / "10_phase_diagram.nc"


def cells(x: dict[tuple[float, float], float], gaps: dict[tuple[float, float], float]) -> pd.DataFrame:
    """A cell table (lr, weight_decay) -> x, selected_gap."""
    index = pd.MultiIndex.from_tuples(list(gaps), names=["lr", "weight_decay"])
    return pd.DataFrame({"x": [x[k] for k in gaps], "selected_gap": list(gaps.values())}, index=index)


def test_the_stratified_trend_averages_rho_within_strata_against_a_within_stratum_null():
    # lr 0.02: gaps 3, 2, 1 against lambda 0, 1, 2 (rho -1); lr 0.1: 2, 3, 1 (rho -0.5); mean -0.75. Each stratum's
    # 6 permutations give rho in {1, .5, .5, -.5, -.5, -1}; of the 36 pairs, 5 have a mean <= -0.75: p = 5/36.
    gaps = {(0.02, 0.0): 3.0, (0.02, 1.0): 2.0, (0.02, 2.0): 1.0, (0.1, 0.0): 2.0, (0.1, 1.0): 3.0, (0.1, 2.0): 1.0}
    table = cells(dict.fromkeys(gaps, 0.0), gaps)
    trend = boundary.stratified_trend(table, "weight_decay", "lr", resamples=20_000)
    assert trend.rho == pytest.approx(-0.75) and trend.strata == 2 and trend.cells == 6 and trend.draws == 20_000
    assert trend.p_less == pytest.approx(5 / 36, abs=0.01)
    assert trend.p_greater == pytest.approx(35 / 36, abs=0.01)  # only (-1, -1) lies below -0.75
    # a stratum with fewer than 3 finite cells is left out; a constant one counts as rho 0 (no association)
    gaps[(0.1, 2.0)] = math.nan
    assert boundary.stratified_trend(cells(dict.fromkeys(gaps, 0.0), gaps), "weight_decay", "lr").strata == 1
    flat = {k: 1.0 for k in gaps}
    assert boundary.stratified_trend(cells(dict.fromkeys(flat, 0.0), flat), "weight_decay", "lr").rho == 0.0


def _logistic_cells(x0: float, plateau: float = 20.0, width: float = 0.3, noise: float = 0.2, xs=None) -> pd.DataFrame:
    xs = np.linspace(-2.0, 2.0, 25) if xs is None else np.asarray(xs)
    rng = np.random.default_rng(3)
    gaps = plateau / (1.0 + np.exp((xs - x0) / width)) + rng.normal(0.0, noise, len(xs))
    keys = [(0.02 + 0.01 * (i // 5), 0.001 * (i % 5)) for i in range(len(xs))]
    return cells(dict(zip(keys, xs)), dict(zip(keys, gaps)))


@pytest.mark.parametrize("x0", [-0.6, 0.0, 0.4])
def test_the_memory_to_forget_fit_finds_a_known_midpoint_with_a_profile_interval_around_it(x0):
    fit = boundary.fit_boundary(_logistic_cells(x0))
    assert fit.identified and fit.midpoint.method == "profile, F" and fit.cells == 25
    assert fit.midpoint.estimate == pytest.approx(x0, abs=0.05)
    assert fit.midpoint.low < x0 < fit.midpoint.high and fit.midpoint.high - fit.midpoint.low < 0.3
    assert fit.width == pytest.approx(0.3, abs=0.1) and fit.plateau == pytest.approx(20.0, abs=0.5)


def test_a_boundary_the_cells_do_not_reach_is_not_identified():
    """Every cell lies far past the transition (the gaps are all ~0): no x0 below them can be told apart, so the
    profile interval reaches the searched range and the fit says it is not identified."""
    fit = boundary.fit_boundary(_logistic_cells(-6.0, xs=np.linspace(0.0, 2.0, 25)))
    assert not fit.identified and fit.midpoint.low == -math.inf
    assert boundary.fit_boundary(_logistic_cells(0.0).iloc[:3]).midpoint.has_bounds is False


def test_the_memory_to_forget_fit_needs_four_cells():
    """Fewer than four cells are no fit (NaN, not identified: B1 then cannot place its boundary); four noise-free
    cells at x = -1, -0.3, 0.3, 1 find x0 = 0."""
    four = boundary.fit_boundary(_logistic_cells(0.0, noise=0.0, xs=[-1.0, -0.3, 0.3, 1.0]))
    assert four.cells == 4 and four.midpoint.estimate == pytest.approx(0.0, abs=0.02)
    three = boundary.fit_boundary(_logistic_cells(0.0, noise=0.0, xs=[-1.0, -0.3, 0.3]))
    assert three.cells == 3 and math.isnan(three.midpoint.estimate) and not three.identified


def test_the_memory_to_forget_is_the_gap_without_decay_at_the_smallest_lr():
    gaps = {(0.05, 0.0): 9.0, (0.02, 0.0): 21.0, (0.02, 0.01): 4.0}
    assert boundary.memory_to_forget(cells(dict.fromkeys(gaps, 0.0), gaps)) == (21.0, (0.02, 0.0))
    decayed = {(0.02, 0.01): 4.0}
    assert math.isnan(boundary.memory_to_forget(cells(dict.fromkeys(decayed, 0.0), decayed))[0])


@pytest.fixture()
def few_draws(monkeypatch):
    from initmem.study.statistics import nulls

    monkeypatch.setattr(nulls, "N_RESAMPLES", 1_000)


@pytest.mark.skipif(not COMMITTED.is_file(), reason="the committed cpu phase diagram is not in this checkout")
def test_a_world_where_l2_does_nothing_does_not_earn_b1_on_the_committed_cells(few_draws):
    """The committed phase diagram's cells (their lr, lambda, clocks and norms), with the memory replaced by a
    function of the noise clock alone: gap = 25 exp(-T_SGD / 0.15) + N(0, 2.5) per run. On the grid alone the old
    direction test (the gap against x over all cells) passed it every time, since x > 0 only where T_SGD is large;
    B1's test (the gap against lambda within each lr) may pass it only at its level: at most 2 of 20 draws."""
    real = xr.load_dataset(COMMITTED, engine="h5netcdf")
    table = phase.cell_table(real)
    t_sgd = xr.DataArray.from_series(table["T_SGD"])
    top, small = float(real["sigma_w"].max()), float(real["sigma_w"].min())
    passed = 0
    for draw in range(20):
        rng = np.random.default_rng(100 + draw)
        ds = real.copy(deep=True)
        acc = ds["selected_test_acc"]
        noise = xr.DataArray(rng.normal(0.0, 2.5, acc.shape), dims=acc.dims, coords=acc.coords)
        memory = (25.0 * np.exp(-t_sgd / 0.15)).broadcast_like(acc)
        ds["selected_test_acc"] = (60.0 + noise - memory.where(acc["sigma_w"] == top, 0.0)).transpose(*acc.dims)
        assert float(ds["selected_test_acc"].sel(sigma_w=small).std()) > 0
        row = claims.reproduction_table({"10_phase_diagram": ds}, ["B1"]).loc["B1"]
        passed += row["verdict"] in (rules.IN_SIZE, rules.IN_DIRECTION, rules.SIZE_CONTRADICTED)
    assert passed <= 2, passed
    # the cells beside the grid are what lets the data tell the clocks apart: x > 0 at the two smallest lrs too
    small_lr = table.index.get_level_values("lr") <= 0.03
    assert (table.loc[small_lr, "x"] > 0).any() and (table.loc[~small_lr, "x"] > 0).any()


def test_a_boundary_beyond_the_largest_cell_has_no_upper_bound():
    """Every cell still holds the whole plateau: x0 may lie anywhere above them, so the profile interval reaches the
    top of the searched range and its upper bound is infinite."""
    fit = boundary.fit_boundary(_logistic_cells(6.0, xs=np.linspace(-2.0, 0.0, 25)))
    assert not fit.identified and fit.midpoint.high == math.inf and math.isfinite(fit.midpoint.low)


def test_a_noise_free_logistic_on_the_grids_is_recovered_exactly():
    """x0 = 0.3 lies on the x0 grid (step 0.01 from the smallest cell's x minus 3) and w = 10^-0.5 on the width grid
    (log-spaced from 0.01 to 10, 80 to a decade): the fit returns both and the plateau, with a sum of squares of 0."""
    fit = boundary.fit_boundary(_logistic_cells(0.3, width=10**-0.5, noise=0.0, xs=np.arange(-100, 101, 20) / 100))
    assert fit.midpoint.estimate == pytest.approx(0.3, abs=1e-9) and fit.width == pytest.approx(10**-0.5, rel=1e-12)
    assert fit.plateau == pytest.approx(20.0, rel=1e-9) and fit.sse == pytest.approx(0.0, abs=1e-18)


def test_a_jump_sharper_than_the_narrowest_width_fits_that_width():
    """The narrowest width the profile tries is 0.01 (in x): a drop between cells 0.004 apart is fitted with it."""
    xs = [-1.0, -0.5, -0.002, 0.002, 0.5, 1.0]
    gaps = [20.0, 20.0, 20.0, 0.0, 0.0, 0.0]
    keys = [(0.02, 0.001 * (i + 1)) for i in range(len(xs))]
    assert boundary.fit_boundary(cells(dict(zip(keys, xs)), dict(zip(keys, gaps)))).width == 0.01


def test_the_stratified_trend_at_its_extreme_has_p_greater_one_exactly():
    """rho = -1 in every stratum is the least a permutation can give: every null draw is at least it, so
    p_greater = (1 + draws) / (1 + draws) = 1 exactly, and p_less = (1 + hits) / (1 + draws) for the hits at -1."""
    gaps = {(lr, wd): 3.0 - wd for lr in (0.02, 0.1) for wd in (0.0, 1.0, 2.0)}
    trend = boundary.stratified_trend(cells(dict.fromkeys(gaps, 0.0), gaps), "weight_decay", "lr", resamples=999)
    assert trend.rho == -1.0 and trend.p_greater == 1.0
    assert trend.p_less == pytest.approx(1 / 36, abs=0.015) and (trend.p_less * 1000) % 1 == pytest.approx(0)


@pytest.mark.parametrize(("ratio", "flagged"), [(2.5, True), (1.0, False)])
def test_the_lack_of_fit_f_is_the_cells_misfit_against_the_seeds_scatter(ratio, flagged):
    """With 4 seeds in each of 12 cells, F = (4 SSE / (12 - 3)) / sd^2 on (9, 36) degrees of freedom: at 2.5 its p is
    0.025 and the caveat is printed with it; at 1.0 it is not."""
    from scipy import stats

    table = _logistic_cells(0.0, noise=2.0, xs=np.linspace(-2.0, 2.0, 12))
    table.index = pd.MultiIndex.from_tuples([(0.02, 0.001 * (i + 1)) for i in range(12)], names=table.index.names)
    fit = boundary.fit_boundary(table)
    table["selected_gap_seeds"] = 4
    table["selected_gap_sd"] = math.sqrt(4 * fit.sse / 9 / ratio)
    misfit = boundary.lack_of_fit(fit, table)
    assert (misfit.f, misfit.df_fit, misfit.df_pure) == (pytest.approx(ratio), 9, 36)
    assert misfit.p_value == pytest.approx(stats.f.sf(ratio, 9, 36))
    table["selected_gap_low"] = table["selected_gap_high"] = table["selected_gap"]
    caveats = boundary.fit_caveats(fit, table)
    assert (len(caveats) == 1) is flagged
    if flagged:
        assert f"lack of fit F(9, 36) = 2.5, p = {p_text(misfit.p_value)}" in caveats[0]
