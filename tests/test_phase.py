"""The phase diagram (experiment 10, ledger row B1): its registry entry, x computed by hand, the logistic fit on
synthetic data with a known midpoint, and the verdict the fit earns."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from initmem.study.design import layout, presets, registry
from initmem.study.verdicts import boundary, claims, phase, rules
from initmem.sweeps.spec import SweepSpec
from sweep_fakes import fake_phase, fake_sweep  # tests/ is on sys.path under pytest


def test_the_phase_diagram_is_03s_sweep_on_a_5_by_5_grid_that_holds_03s_cells():
    p10 = presets.notebook_parameters("cpu", "10_phase_diagram")
    assert len(p10["lrs"]) >= 5 and len(p10["weight_decays"]) >= 5 and 0.0 in p10["weight_decays"]
    assert p10["sigma_ws"] == [0.1, 2.5] and p10["seeds"] == [0, 1, 2, 3, 4]
    lrs, wds = np.array(p10["lrs"]), np.array([w for w in p10["weight_decays"] if w > 0])
    ratios = np.r_[lrs[1:] / lrs[:-1], wds[1:] / wds[:-1]]
    assert np.all(ratios > 1.3) and np.ptp(np.log(lrs[1:] / lrs[:-1])) < 0.1  # log-spaced learning rates
    spec10 = SweepSpec.from_dict(registry.experiment_spec("10_phase_diagram", p10))
    spec03 = SweepSpec.from_dict(
        registry.experiment_spec("03_lr_and_l2", presets.notebook_parameters("cpu", "03_lr_and_l2"))
    )
    grid_runs = len(p10["lrs"]) * len(p10["weight_decays"]) * 2 * len(p10["seeds"])
    extra_runs = sum(
        len(c["lrs"]) * len(c["weight_decays"]) * 2 * len(c.get("seeds", p10["seeds"])) for c in p10["extra_cells"]
    )
    assert spec10.n_runs == grid_runs + extra_runs == 250 + 80
    # the cells beside the grid: stronger decay at the two smallest learning rates, at the grid's five seeds
    assert p10["extra_cells"] == [{"lrs": [0.02, 0.03], "weight_decays": [0.03, 0.045, 0.07, 0.1]}]
    hashes10 = {c.hash() for _, c in spec10.configs()}
    shared = {c.hash() for _, c in spec03.configs() if c.seed in p10["seeds"]}
    assert len(shared) == 4 * 2 * len(p10["seeds"]) and shared <= hashes10  # 03's runs at 10's seeds are runs of 10
    # everything but lr and lambda at 01's cpu settings, with 03's step schedule and coupled L2
    base, base01 = (
        spec10.base,
        registry.experiment_spec("01_optimizers", presets.notebook_parameters("cpu", "01_optimizers"))["base"],
    )
    for field in ("model", "width", "logit_scale", "batch_size", "epochs", "train_size", "val_size", "test_size"):
        assert base[field] == base01[field], field
    assert base["optimizer"] == "sgd" and base["decay_mode"] == "l2" and base["schedule"] == "step"
    for preset in layout.PRESETS:  # defined at every preset but gpu, which defines 01 only and says so
        if preset == "gpu":
            with pytest.raises(ValueError, match="10_phase_diagram is not defined at preset 'gpu'"):
                presets.resolve_parameters("10_phase_diagram", preset, {})
            continue
        assert registry.experiment_spec("10_phase_diagram", presets.notebook_parameters(preset, "10_phase_diagram"))


def test_extra_cells_are_checked_and_become_the_specs_further_grids():
    p10 = presets.notebook_parameters("smoke", "10_phase_diagram")
    spec = registry.experiment_spec(
        "10_phase_diagram", {**p10, "extra_cells": [{"lrs": [0.01], "weight_decays": [0.5]}]}
    )
    assert spec["also"] == [{"lr": [0.01], "weight_decay": [0.5]}]
    assert "also" not in registry.experiment_spec("10_phase_diagram", {**p10, "extra_cells": None})
    with pytest.raises(ValueError, match=r"^extra_cells: must be a list of \{\"lrs\"") as info:
        registry.experiment_spec("10_phase_diagram", {**p10, "extra_cells": [{"lrs": [0.01], "lambdas": [0.5]}]})
    assert "\n" not in str(info.value)


def test_a_cell_without_runs_has_no_row_and_its_heat_map_cell_stays_blank():
    import matplotlib.pyplot as plt

    from initmem.study.presentation import phase_plots

    ds = fake_phase()
    empty = {"lr": 0.1, "weight_decay": 0.02}
    for var in ("selected_test_acc", "final_test_acc", "final_T_L2", "final_T_SGD", "final_train_acc", "weight_norm"):
        ds[var].loc[empty] = np.nan  # a point of the rectangle that no grid of the sweep holds
    table = phase.cell_table(ds)
    assert len(table) == 24 and (0.1, 0.02) not in table.index
    assert math.isfinite(boundary.fit_boundary(table).midpoint.estimate)
    fig = phase_plots.phase_heatmaps(ds)
    numbers = [t for t in fig.axes[0].texts if t.get_text().replace(".", "").replace("-", "").isdigit()]
    assert len(numbers) == 24  # one value per cell with runs, none in the empty one
    plt.close("all")


def test_heat_map_values_sit_above_every_line_and_the_t_sgd_contours_are_named_in_the_legend():
    """No line or label hides a cell's value: each value is drawn above the contours with a halo, the axes hold no
    text but the values (the T_SGD levels are in the legend), and the style's grid is off on the cells."""
    import matplotlib.pyplot as plt

    from initmem.study.presentation import phase_plots

    ds = fake_phase()
    fig = phase_plots.phase_heatmaps(ds)
    t_sgd = phase.cell_table(ds)["T_SGD"]
    levels = phase_plots._t_sgd_levels(phase_plots._grid(phase.cell_table(ds), "T_SGD")[0])
    assert levels and all(t_sgd.min() < v < t_sgd.max() for v in levels)
    legend = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    legend += [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert [f"$T_{{SGD}}$ = {v:.2g}" for v in levels] == [t for t in legend if t.startswith("$T_{SGD}$")]
    for ax in fig.axes[:2]:
        lines = [c for c in ax.collections if type(c).__name__.endswith(("ContourSet", "LineCollection"))]
        assert lines, "the boundary and the T_SGD contours are drawn"
        assert ax.texts and all(t.get_text().replace(".", "").replace("-", "").isdigit() for t in ax.texts)
        assert all(t.get_zorder() > max(c.get_zorder() for c in lines) and t.get_path_effects() for t in ax.texts)
        assert not any(line.get_visible() for line in ax.get_xgridlines() + ax.get_ygridlines())
    plt.close("all")


def _hand_cell(w0: float, w_star: float, t_l2: float) -> xr.Dataset:
    """One (lr, weight_decay) cell with known norms and clock, two sigma_w, two seeds."""
    ds = fake_sweep({"lr": [0.1], "weight_decay": [0.01], "sigma_w": [0.1, 2.5], "seed": [0, 1]})
    initial = xr.DataArray([1.7, w0], dims="sigma_w", coords={"sigma_w": [0.1, 2.5]})
    final = xr.DataArray([w_star, 11.0], dims="sigma_w", coords={"sigma_w": [0.1, 2.5]})
    frac = xr.DataArray(np.linspace(0, 1, ds.sizes["epoch"]), dims="epoch", coords={"epoch": ds["epoch"]})
    ds["weight_norm"] = (
        (initial + (final - initial) * frac).broadcast_like(ds["weight_norm"]).transpose(*ds["weight_norm"].dims)
    )
    ds["final_T_L2"][:] = t_l2
    acc = xr.DataArray([[60.0, 62.0], [50.0, 49.0]], dims=("sigma_w", "seed"), coords={"sigma_w": [0.1, 2.5]})
    ds["selected_test_acc"] = acc.broadcast_like(ds["selected_test_acc"]).transpose(*ds["selected_test_acc"].dims)
    return ds


def test_x_is_the_l2_clock_minus_the_log_ratio_of_the_initial_to_the_equilibrium_norm():
    table = phase.cell_table(_hand_cell(w0=42.5, w_star=10.0, t_l2=2.5))
    row = table.loc[(0.1, 0.01)]
    assert (
        row["W0"] == pytest.approx(42.5)
        and row["W_star"] == pytest.approx(10.0)
        and row["W_top"] == pytest.approx(11.0)
    )
    assert row["log_ratio"] == pytest.approx(math.log(4.25)) and row["x"] == pytest.approx(2.5 - math.log(4.25))
    # the gap: acc at sigma_w 0.1 minus at 2.5, per seed 10 and 13 -> 11.5 with its t-interval
    assert row["selected_gap"] == pytest.approx(11.5)
    assert row["selected_gap_high"] - row["selected_gap"] == pytest.approx(
        12.706 * math.sqrt(4.5) / math.sqrt(2), rel=1e-3
    )


def test_t5s_scaling_law_is_recovered_from_the_cells():
    table = phase.cell_table(fake_phase())
    law = phase.equilibrium_scaling(table)
    assert law["cells"] == 20 and law["exponent"] == pytest.approx(0.25, abs=1e-6)
    assert law["constant"] == pytest.approx(10.0 * (0.1 / 0.01) ** -0.25, rel=1e-6)  # |W*| = c (lr / lambda)^(1/4)
    no_decay = table.xs(0.0, level="weight_decay", drop_level=False)
    assert math.isnan(phase.equilibrium_scaling(no_decay)["exponent"])  # lambda = 0 only: no law


def test_t5s_exponent_has_its_t_interval_with_n_minus_2_degrees_of_freedom():
    """Three cells with ln(eta / lambda) = 0, 1, 2 and ln |W*| = 0, 0.35, 0.5 (the lambda = 0 cell is left out):
    slope 0.25, residuals -1/30, 2/30, -1/30, so its standard error is sqrt((6/900) / 1 / 2) = 0.0577 and the
    half-width t(0.975, 1) x 0.0577 = 0.7336; c = exp(mean(ln |W*| - ln(eta / lambda) / 4)) = exp(1/30)."""
    import pandas as pd

    index = pd.MultiIndex.from_tuples(
        [(0.1, 0.0), (0.1, 0.1), (0.1, 0.1 / math.e), (0.1, 0.1 / math.e**2)], names=["lr", "weight_decay"]
    )
    table = pd.DataFrame({"W_star": np.exp([9.0, 0.0, 0.35, 0.5])}, index=index)
    law = phase.equilibrium_scaling(table)
    assert law["cells"] == 3 and law["exponent"] == pytest.approx(0.25)
    assert (law["exponent_low"], law["exponent_high"]) == pytest.approx((0.25 - 0.73359, 0.25 + 0.73359), abs=1e-4)
    assert law["constant"] == pytest.approx(math.exp(1 / 30))


@pytest.mark.parametrize("midpoint", [0.0, 0.8, -0.6])
def test_the_logistic_fit_finds_a_known_midpoint(midpoint):
    table = phase.cell_table(fake_phase(midpoint=midpoint))
    fit = boundary.fit_boundary(table)
    assert fit.midpoint.estimate == pytest.approx(midpoint, abs=0.08)
    assert fit.midpoint.low <= fit.midpoint.estimate <= fit.midpoint.high and fit.identified
    assert fit.plateau == pytest.approx(20.0, abs=1.0) and fit.width == pytest.approx(0.3, abs=0.1)
    assert fit.cells == 25 and set(table["selected_gap_seeds"]) == {3}


def test_b1_in_size_when_the_boundary_sits_at_x_0_and_contradicted_with_where_it_lies_otherwise():
    phase = fake_phase(midpoint=0.05)
    row = claims.reproduction_table({"10_phase_diagram": phase}).loc["B1"]
    assert row["verdict"] == rules.IN_SIZE and (row["band_low"], row["band_high"]) == (-0.3, 0.3)
    assert row["seeds"] == phase.sizes["seed"]  # the ledger's seeds column counts seeds, not the rho's cells
    assert "lr 0.02 and 0.03 only (the smallest T_SGD)" in row["ours"]  # x0 on the two smallest learning rates
    decayed = float(row["ours"].split("cells with decay only ")[1].split(",")[0])  # x0 on the cells with lambda > 0
    assert decayed == pytest.approx(0.05, abs=0.2)
    row = claims.reproduction_table({"10_phase_diagram": fake_phase(midpoint=1.0)}).loc["B1"]
    assert row["verdict"] == rules.SIZE_CONTRADICTED and "lies wholly above the band [-0.3, 0.3]" in row["reason"]
    assert "half the memory is gone only after T_L2 reaches ln(|W0|/|W*|)" in row["reason"]
    flat = claims.reproduction_table({"10_phase_diagram": fake_phase(height=0.0, noise=0.5)}).loc["B1"]
    assert flat["verdict"] == rules.PREMISE_NOT_MET and "no memory to forget" in flat["reason"]
    rising = fake_phase(noise=0.5)  # the memory grows with lambda at every lr: 8 pp + 600 lambda
    top = rising["sigma_w"] == 2.5
    rising["selected_test_acc"] = xr.where(top, 52.0 - 600.0 * rising["weight_decay"], rising["selected_test_acc"])
    row = claims.reproduction_table({"10_phase_diagram": rising}).loc["B1"]
    assert row["verdict"] == rules.NOT_REPRODUCED and "rises with lambda at fixed lr" in row["reason"]


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [(-0.3, 0.3, "in size"), (-0.31, 0.2, "in direction"), (-0.9, -0.31, "contradicted"), (-0.9, -0.3, "in direction")],
)
def test_b1s_band_is_closed_at_its_edges(monkeypatch, low, high, verdict):
    """x0's interval may touch the band's edges (+-0.3) and still lie inside it; a hair beyond, it does not; wholly
    beyond an edge, it contradicts the band (touching the edge is not beyond it)."""
    from initmem.study.statistics.stats import Interval

    fit = boundary.Boundary(20.0, Interval(0.0, low, high, 25, "profile, F"), 0.3, True, 25, 1.0)
    monkeypatch.setattr(boundary, "fit_boundary", lambda table, value="selected_gap": fit)
    row = claims.reproduction_table({"10_phase_diagram": fake_phase()}, ["B1"]).loc["B1"]
    expected = {
        "in size": rules.IN_SIZE,
        "in direction": rules.IN_DIRECTION,
        "contradicted": rules.SIZE_CONTRADICTED,
    }
    assert row["verdict"] == expected[verdict], row["reason"]


def test_b1_whose_x0_the_cells_do_not_bound_is_in_direction_and_says_so(monkeypatch):
    from initmem.study.statistics.stats import Interval

    fit = boundary.Boundary(20.0, Interval(0.0, -math.inf, 0.2, 25, "profile, F"), 0.3, False, 25, 1.0)
    monkeypatch.setattr(boundary, "fit_boundary", lambda table, value="selected_gap": fit)
    row = claims.reproduction_table({"10_phase_diagram": fake_phase()}, ["B1"]).loc["B1"]
    assert row["verdict"] == rules.IN_DIRECTION
    assert "x0 is not identified: its profile interval [-inf, 0.20] reaches the searched range" in row["reason"]


def test_the_grid_is_placed_from_a_smaller_sweep_by_t5s_law():
    ds = fake_phase(lrs=(0.02, 0.1), weight_decays=(0.0, 0.01))  # 03's four cells
    ds["final_T_adapt"] = (ds["lr"] * 2500.0 * xr.ones_like(ds["final_T_adapt"])).transpose(*ds["final_T_adapt"].dims)
    design = phase.predicted_decay_at(ds, [0.02, 0.1, 1e-5])
    assert design["sum_eta_per_lr"] == pytest.approx(2500.0) and design["W_star_ref"] == pytest.approx(10.0)
    assert (design["lr_ref"], design["weight_decay_ref"]) == (0.1, 0.01)
    # lr 1e-5: at lambda 10, T_L2 = 0.25 against ln(42.5 / 0.18) = 5.5: no lambda up to 10 reaches x = 0
    assert math.isnan(design["boundary"].pop(1e-5))
    for lr, wd in design["boundary"].items():  # at the predicted lambda, x = 0 by T5's law
        w_star = 10.0 * ((lr / 0.1) / (wd / 0.01)) ** 0.25
        assert wd * lr * 2500.0 == pytest.approx(math.log(42.5 / w_star), abs=1e-6)
    assert design["boundary"][0.1] < design["boundary"][0.02]  # a larger learning rate forgets at a smaller lambda


def test_the_batch_axis_adds_lambda_0_runs_at_every_lr_and_batch_size_but_those_the_diagram_holds():
    from initmem.study.costs import costs

    p10 = presets.notebook_parameters("cpu", "10_phase_diagram")
    added = phase.batch_axis_configs(p10, [16, p10["batch_size"], 256])
    per_batch = len(p10["lrs"]) * len(p10["sigma_ws"]) * len(p10["seeds"])
    assert len(added) == 2 * per_batch  # the column at the diagram's own batch size is its lambda = 0 row
    assert {c.batch_size for c in added} == {16, 256} and {c.weight_decay for c in added} == {0.0}
    assert {c.epochs for c in added} == {p10["epochs"]} and {c.lr for c in added} == set(p10["lrs"])
    cost = costs.estimate_runs(added, workers=2)
    assert cost["runs"] == len(added)
    assert cost["core_seconds"] == pytest.approx(sum(costs.run_cost(c)[2] for c in added))
    assert cost["wall_seconds"] == pytest.approx(cost["core_seconds"] / 2)
    assert costs.estimate_runs([]) == {
        "runs": 0,
        "train_images": 0,
        "eval_images": 0,
        "flops": 0.0,
        "core_seconds": 0.0,
        "core_seconds_p10": 0.0,
        "core_seconds_p90": 0.0,
        "wall_seconds": 0.0,
        "gpu_seconds": 0.0,
    }


def test_the_caveats_name_cells_without_decay_that_forget_and_a_fit_that_misses_the_cells():
    clear = phase.cell_table(fake_phase(midpoint=0.0))  # every lambda = 0 cell on the plateau; a logistic in x
    assert boundary.fit_caveats(boundary.fit_boundary(clear), clear) == []
    early = phase.cell_table(fake_phase(midpoint=-1.5))  # the fall starts among the lambda = 0 cells
    caveats = boundary.fit_caveats(boundary.fit_boundary(early), early)
    assert len(caveats) == 1 and caveats[0].startswith("Without decay (lambda = 0, T_L2 = 0) the gap falls")
    assert "p = 0.0083" in caveats[0] and "within one learning rate" in caveats[0]
    scrambled = clear.assign(selected_gap=clear["selected_gap"].to_numpy()[::-1])  # no longer one function of x
    caveats = boundary.fit_caveats(boundary.fit_boundary(scrambled), scrambled)
    assert any(c.startswith("The logistic does not fit the cells within their noise") for c in caveats), caveats


def test_the_logistic_needs_four_cells():
    """Three parameters through three cells is no fit: NaN, and no interval; four noise-free cells recover it (x
    = -1.15, -0.48, -0.02, 1.05 at lr 0.1 and lambda 0, 0.0025, 0.005, 0.01)."""
    four = boundary.fit_boundary(
        phase.cell_table(fake_phase(noise=0.0, lrs=(0.1,), weight_decays=(0.0, 0.0025, 0.005, 0.01)))
    )
    assert four.cells == 4 and four.midpoint.estimate == pytest.approx(0.0, abs=0.011)
    assert four.plateau == pytest.approx(20.0, abs=0.2)
    three = boundary.fit_boundary(
        phase.cell_table(fake_phase(noise=0.0, lrs=(0.1,), weight_decays=(0.0, 0.0025, 0.005)))
    )
    assert three.cells == 3
    with pytest.raises(dataclasses.FrozenInstanceError):  # a fit, once made, is not edited
        three.cells = 4
    assert math.isnan(three.plateau) and math.isnan(three.midpoint.estimate) and not three.midpoint.has_bounds


# Designs on which a fit started elsewhere (another start height, midpoint or width, or other bounds) settles in a
# worse local optimum: the first drops sharply just above x = 0, and a fit started too wide stops at x0 = -2.16
# (sum of squares 118 against 41.6).
_SHARP_DESIGNS = [
    ([-2.93, 0.03, 0.09, 0.22, 0.42, 1.08], [30.1, 7.6, 4.7, -1.5, -2.2, 5.6]),
    ([-2.35, -1.62, -1.16, -0.72, -0.21, 1.13, 1.17, 1.68], [5.1, -2.2, -2.8, -0.2, 5.1, -2.4, -1.9, 5.6]),
    ([-2.66, -0.75, -0.0, 0.6], [11.5, 12.6, 16.8, 11.1]),
    ([-2.75, -1.3, -1.13, 0.9, 1.81], [34.3, 32.6, 23.6, 8.5, 3.4]),
    ([-2.25, -2.16, -2.1, -2.09, 1.33, 1.54], [33.7, 30.5, 30.1, 26.7, 4.6, 7.3]),
    ([-2.41, -1.78, -1.7, -1.46, -0.73, -0.68, 0.05], [19.8, 25.0, 26.6, 24.8, 26.2, 26.0, 20.7]),
]


def _cells_at(x, y) -> pd.DataFrame:
    index = pd.MultiIndex.from_tuples([(0.1, 0.001 * (i + 1)) for i in range(len(x))], names=["lr", "weight_decay"])
    return pd.DataFrame({"x": np.asarray(x, float), "selected_gap": np.asarray(y, float)}, index=index)


@pytest.mark.parametrize(("x", "y"), _SHARP_DESIGNS)
def test_the_logistic_fit_reaches_the_least_squares_optimum_of_a_finer_grid(x, y):
    """The fit's sum of squares is within 0.5 % of the best of a finer grid over the midpoint and the width within the
    fit's bounds (3 beyond the cells; 0.01 to 10), with the plateau (linear given them) solved and clipped to [0,
    100] pp: the x0 grid's step (0.01) costs no more than that on designs where a local optimiser went astray."""
    x, y = np.array(x), np.array(y)
    fit = boundary.fit_boundary(_cells_at(x, y))
    midpoints, widths = np.meshgrid(
        np.linspace(x.min() - 3.0, x.max() + 3.0, 3001), np.geomspace(0.01, 10.0, 601), indexing="ij"
    )
    shapes = boundary.logistic(x[:, None, None], 1.0, midpoints, widths)  # (cells, midpoints, widths)
    with np.errstate(divide="ignore", invalid="ignore"):
        heights = np.einsum("c,cmw->mw", y, shapes) / np.einsum("cmw,cmw->mw", shapes, shapes)
    heights = np.clip(np.nan_to_num(heights), 0.0, boundary.PLATEAU_BOUND)
    grid_sse = np.sum((heights * shapes - y[:, None, None]) ** 2, axis=0)
    assert fit.sse <= grid_sse.min() * 1.005 + 1e-9
    assert fit.sse == pytest.approx(
        float(np.sum((boundary.logistic(x, fit.plateau, fit.midpoint.estimate, fit.width) - y) ** 2))
    )


def test_a_cell_whose_gap_is_missing_is_left_out_of_the_fit_not_the_fit_dropped():
    """A cell whose every seed diverged has a NaN gap: the fit goes through the other cells, as if it were absent."""
    x, y = (np.array(values) for values in _SHARP_DESIGNS[0])
    with_missing = boundary.fit_boundary(_cells_at(np.append(x, 0.3), np.append(y, np.nan)))
    assert with_missing == boundary.fit_boundary(_cells_at(x, y))


def test_a_memory_of_half_a_point_is_fitted_as_half_a_point():
    """The plateau is bounded below by 0 pp, not more: a drop of 0.5 pp is fitted with plateau 0.5."""
    fit = boundary.fit_boundary(_cells_at([-1.0, -0.6, -0.2, 0.2, 0.6, 1.0], [0.5, 0.5, 0.5, 0.0, 0.0, 0.0]))
    assert fit.plateau == pytest.approx(0.5, abs=1e-6)


def test_a_gap_beyond_the_plateau_bound_is_fitted_at_the_bound():
    """No accuracy difference exceeds 100 pp: a gap of 150 is fitted with the plateau at the bound, not beyond."""
    fit = boundary.fit_boundary(_cells_at([-1.0, -0.5, 0.0, 0.5, 1.0], [150.0, 150.0, 150.0, 0.0, 0.0]))
    assert fit.plateau == boundary.PLATEAU_BOUND


@pytest.mark.parametrize(
    ("p_less", "p_greater", "strata", "verdict"),
    [
        (0.96, 0.0499, 5, rules.NOT_REPRODUCED),  # the memory rises with lambda beyond the null
        (0.95, 0.05, 5, rules.INCONCLUSIVE),  # p at alpha is not below it: neither direction
        (0.05, 0.95, 5, rules.INCONCLUSIVE),
        (0.0499, 0.96, 5, rules.IN_SIZE),  # falls beyond the null; the fitted x0 of fake_phase sits in the band
        (0.0499, 0.96, 1, rules.IN_SIZE),  # one learning rate with 3 cells is a test
        (math.nan, math.nan, 0, rules.INCONCLUSIVE),  # none is not: "the L2 clock cannot be tested"
    ],
)
def test_b1s_direction_needs_p_below_alpha_either_way(monkeypatch, p_less, p_greater, strata, verdict):

    rho = -0.5 if p_less < p_greater else 0.5 if p_greater < p_less else math.nan
    trend = boundary.StratifiedTrend(rho, p_less, p_greater, "weight_decay", "lr", strata, 5 * strata)
    monkeypatch.setattr(boundary, "stratified_trend", lambda table, factor, stratum: trend)
    row = claims.reproduction_table({"10_phase_diagram": fake_phase()}, ["B1"]).loc["B1"]
    assert row["verdict"] == verdict, row["reason"]
    assert ("cannot be tested" in row["reason"]) == (strata == 0)
