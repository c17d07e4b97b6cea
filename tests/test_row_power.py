"""The power of the ledger rows (initmem.study.verdicts.row_power): the noise measured by hand, the power at its extremes for
every kind of row (a spread, a contrast, an unchanged claim, C6's interaction, C7's slopes), the truth each is
simulated at, the search for the seeds that reach 80 %, and the columns the ledger prints."""

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


def _row(design: Design, noise_sd: float, **kw) -> row_power.RowDesign:
    return row_power.RowDesign(design.label, design, noise_sd, 12, **kw)


def test_power_at_the_papers_number_is_certain_without_noise_and_small_in_much_noise():
    design = Design("C1", "", "01_optimizers", 4, 5, paper=26.5)
    assert row_power.row_power(_row(design, 0.05), 5, reps=20) == 1.0
    assert row_power.row_power(_row(design, 20.0), 5, reps=40) < 0.3


def test_a_single_spread_over_two_sigma_w_and_five_seeds_can_never_pass_its_null():
    """Its permutation null has 2^5 = 32 equally likely sign patterns: the smallest p is 2/32 > 0.05."""
    design = Design("C1", "", "01_optimizers", 2, 5, paper=26.5)
    assert row_power.row_power(_row(design, 0.05), 5, reps=10) == 0.0


@pytest.mark.parametrize(
    ("design", "kw", "truth", "text"),
    [
        (Design("C2", "Adam", "01_optimizers", 4, 5, 0.0, 26.5), {}, (0.0, "reproduced in size"), "the paper's 0 pp"),
        (Design("C3", "final predictor", "02", 2, 3, None, 26.5, True), {}, (0.0, "reproduced in direction"),
         "no change"),
        (Design("C5", "equal steps", "04", 2, 3, None, 0.0), {}, (10.0, "reproduced in direction"),
         "10 pp, twice the margin"),
        (Design("C6", "", "05_depth", 2, 5, None), {}, (1.0, "reproduced in direction"), "1 pp, twice the margin"),
        (Design("C7", "", "06_norms", 4, 5, None), {"unit": "", "x": (-2.0, -1.0, 0.0, 1.0)},
         (0.2, "reproduced in direction"), "0.2, twice the margin"),
    ],
)  # fmt: skip
def test_every_kind_of_row_passes_at_its_truth_without_noise_and_rarely_in_much_noise(design, kw, truth, text):
    """The truth simulated is the paper's number where there is one, no change for C3, and twice the row's margin
    otherwise (C6's 0.5 pp of train accuracy, C7's 0.1 in slope); nearly noiseless, the design gives its best
    verdict every time; in noise many times its effect or margin, rarely (C3's "unchanged" also holds by chance in
    noise, so it is only asked to fall)."""
    row = _row(design, 1e-3, **kw)
    assert (row.target, row.truth_text) == (truth, text)
    assert row_power.row_power(row, design.n_seeds, reps=20) == 1.0
    noisy = _row(design, 50.0 if design.claim != "C7" else 5.0, **kw)
    assert row_power.row_power(noisy, design.n_seeds, reps=40) < 0.5


def test_an_effect_below_the_margin_is_not_power_c6_at_half_its_truth_is_never_in_direction(monkeypatch):
    """C6 at a true interaction of half its margin (0.25 pp), nearly noiseless: the interval lies inside the
    null-equivalence band, which is "not reproduced", never "in direction"."""
    monkeypatch.setattr(row_power.RowDesign, "target", property(lambda self: (0.25, "reproduced in direction")))
    row = row_power.RowDesign("C6", Design("C6", "", "05_depth", 2, 5, None), 1e-3, 8)
    assert row_power.row_power(row, 5, reps=10) == 0.0


def test_the_table_searches_more_seeds_only_until_the_target_is_reached(monkeypatch):
    """A fake power rising with the seeds (0.1 per seed): 5 seeds 0.5, 10 seeds 1.0; 20 is never simulated."""
    asked = []

    def fake(row, n_seeds, reps, seed=0):
        asked.append(n_seeds)
        return min(1.0, n_seeds / 10)

    monkeypatch.setattr(row_power, "row_power", fake)
    row = row_power.RowDesign("C1", Design("C1", "", "01_optimizers", 4, 5, paper=26.5), 2.0, 12)
    table = row_power.power_table([row], [10, 20], reps=10)
    assert asked == [5, 10] and np.isnan(float(table["power"].sel(row="C1", n_seeds=20)))
    assert row_power.power_columns(table)["C1"] == {
        "power": "50 % (the paper's 26.5 pp; noise sd 2.0 pp)",
        "seeds for 80 %": "10",
    }
    asked.clear()
    monkeypatch.setattr(row_power, "row_power", lambda *a, **k: 0.3)
    table = row_power.power_table([row], [10, 20], reps=10)
    assert row_power.power_columns(table)["C1"]["seeds for 80 %"] == "more than 20"


def test_c7s_noise_is_printed_in_log_norm(monkeypatch):
    monkeypatch.setattr(row_power, "row_power", lambda *a, **k: 0.9)
    row = row_power.RowDesign("C7", Design("C7", "", "06_norms", 4, 5, None), 0.0042, 24, unit="", x=(0.0, 1.0))
    table = row_power.power_table([row], [10], reps=10)
    assert row_power.power_columns(table)["C7"]["power"] == "90 % (0.2, twice the margin; noise sd 0.0042 in log norm)"
