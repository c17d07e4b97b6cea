"""The power of the sized ledger rows (initmem.study.verdicts.row_power): the noise measured by hand, the power at its
extremes, the search for the seeds that reach 80 %, and the columns the ledger prints."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr

from initmem.study.verdicts import row_power
from initmem.study.verdicts.error_rates import Design


def _cells(values: list[list[float]]) -> xr.DataArray:
    return xr.DataArray(np.array(values), dims=("sigma_w", "seed"))


def test_cell_noise_is_the_residual_of_a_two_way_additive_fit_pooled_over_cells():
    # sigma_w and seed effects are exactly additive in the first cell: no residual at all
    additive = _cells([[60.0, 62.0, 61.0], [40.0, 42.0, 41.0]])
    assert row_power.cell_noise([additive]) == (0.0, 2)
    # one interaction of +-1 in a 2 x 2 cell: residuals +-0.5 in every cell, ss 1 over 1 degree of freedom
    twisted = _cells([[61.0, 60.0], [40.0, 41.0]])
    assert row_power.cell_noise([twisted]) == (pytest.approx(1.0), 1)
    sd, df = row_power.cell_noise([additive, twisted])
    assert (sd, df) == (pytest.approx(math.sqrt(1.0 / 3)), 3)


def test_a_seed_with_a_missing_run_is_left_out_of_the_noise():
    cells = _cells([[61.0, 60.0, np.nan], [40.0, 41.0, 50.0]])
    assert row_power.cell_noise([cells]) == (pytest.approx(1.0), 1)


def test_power_at_the_papers_number_is_certain_without_noise_and_small_in_much_noise():
    design = Design("C1", "", "01_optimizers", 4, 5, paper=26.5)
    assert row_power.power_at_paper(design, 0.05, reps=20) == 1.0
    assert row_power.power_at_paper(design, 20.0, reps=40) < 0.3


def test_a_single_spread_over_two_sigma_w_and_five_seeds_can_never_pass_its_null():
    """Its permutation null has 2^5 = 32 equally likely sign patterns: the smallest p is 2/32 > 0.05."""
    design = Design("C1", "", "01_optimizers", 2, 5, paper=26.5)
    assert row_power.power_at_paper(design, 0.05, reps=10) == 0.0


def test_the_table_searches_more_seeds_only_until_the_target_is_reached(monkeypatch):
    """A fake power rising with the seeds (0.1 per seed): 5 seeds 0.5, 10 seeds 1.0; 20 is never simulated."""
    asked = []

    def fake(design, noise_sd, reps, seed=0):
        asked.append(design.n_seeds)
        return min(1.0, design.n_seeds / 10)

    monkeypatch.setattr(row_power, "power_at_paper", fake)
    row = row_power.RowDesign("C1", Design("C1", "", "01_optimizers", 4, 5, paper=26.5), 2.0, 12)
    table = row_power.power_table([row], [10, 20], reps=10)
    assert asked == [5, 10] and np.isnan(float(table["power"].sel(row="C1", n_seeds=20)))
    assert row_power.power_columns(table)["C1"] == {"power": "50 % (noise sd 2.0 pp)", "seeds for 80 %": "10"}
    asked.clear()
    monkeypatch.setattr(row_power, "power_at_paper", lambda *a, **k: 0.3)
    table = row_power.power_table([row], [10, 20], reps=10)
    assert row_power.power_columns(table)["C1"]["seeds for 80 %"] == "more than 20"
