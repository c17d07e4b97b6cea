"""Where a constant or a comparison decides: each rule's and each unit's edge tested on both sides (issue 45 item 4,
the survivors of the mutation sample in benchmarks/mutation_score.md)."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from initmem.study.costs import costs
from initmem.study.costs.results import load_results
from initmem.study.design import presets
from initmem.study.statistics.calibration import CrossFitted
from initmem.study.verdicts import preregistration, row_power


@pytest.mark.parametrize(
    ("seconds", "unit"),
    [(89.99, "s"), (90.0, "min"), (5399.99, "min"), (5400.0, "h")],
)
def test_a_cost_changes_unit_at_exactly_90_seconds_and_90_minutes(seconds, unit):
    value, shown = costs.amount(seconds)
    assert shown == unit
    assert value * {"s": 1, "min": 60, "h": 3600}[unit] == pytest.approx(seconds)


def test_an_hour_figure_keeps_a_decimal_below_10_hours_only_core_and_gpu_alike():
    at_ten = {"core_seconds": 36_000.0, "core_seconds_p10": 30_000.0, "core_seconds_p90": 40_000.0}
    assert costs.price(at_ten | {"gpu_seconds": 36_000.0}) == "about 10 core-h (p10-p90 8-11), about 10 A100-h"
    below = {"core_seconds": 35_999.0, "core_seconds_p10": 30_000.0, "core_seconds_p90": 40_000.0}
    assert costs.price(below | {"gpu_seconds": 35_999.0}) == ("about 10.0 core-h (p10-p90 8.3-11.1), about 10.0 A100-h")


def _git(cwd, *args):
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True, env={**env, "PATH": "/usr/bin:/bin"}
    ).stdout.strip()


def test_a_design_deleted_and_committed_again_is_declared_by_the_commit_that_brought_it_back(tmp_path):
    """The history of a path holds the commit that deleted it, where the path has no content: the search for the
    oldest commit holding the present content stops there (it does not fail, and it does not reach back past it)."""
    _git(tmp_path, "init", "-q")
    design = tmp_path / "design.json"
    design.write_text('{"seeds": [0, 1]}\n')
    _git(tmp_path, "add", "design.json")
    _git(tmp_path, "commit", "-q", "-m", "declare")
    _git(tmp_path, "rm", "-q", "design.json")
    _git(tmp_path, "commit", "-q", "-m", "withdraw")
    design.write_text('{"seeds": [0, 1]}\n')
    _git(tmp_path, "add", "design.json")
    _git(tmp_path, "commit", "-q", "-m", "declare again")
    again = _git(tmp_path, "rev-parse", "HEAD")
    declaration = preregistration.declared(design)
    assert declaration is not None and declaration.commit == again


@pytest.mark.parametrize("n_seeds", [3, 5])
def test_band_power_is_the_chance_that_the_calibrated_spread_interval_lies_inside_the_band(n_seeds):
    """band_power against the ledger's own estimator (CrossFitted's interval) on draws of its own: the same chance
    within Monte Carlo error, on a design where it is neither 0 nor 1; and its extremes."""
    sd, truth, band = 4.0, 10.0, (0.0, 22.0)
    power = preregistration.band_power(sd, n_seeds, truth, band, reps=20_000, seed=1)
    estimator = CrossFitted(2)
    draws = np.random.default_rng(12345).normal(truth, sd, size=(4_000, n_seeds))
    inside = [band[0] <= (i := estimator.interval(d)).low and i.high <= band[1] for d in draws]
    assert 0.05 < power < 0.95
    assert power == pytest.approx(np.mean(inside), abs=0.02)
    assert preregistration.band_power(0.01, n_seeds, truth, band) == 1.0  # a sure interval in the middle of the band
    assert preregistration.band_power(0.01, n_seeds, 30.0, band) == 0.0  # a sure interval beyond its upper edge
    assert preregistration.band_power(0.01, n_seeds, -8.0, band) == 0.0  # and below its lower edge


RECORD = Path(__file__).resolve().parents[1] / "results"


@pytest.mark.skipif(not (RECORD / "cpu" / "row_power.nc").exists(), reason="the committed cpu record is absent")
def test_the_rows_designs_read_from_the_record_are_the_committed_power_tables_rows():
    """row_power.row_designs on the committed runs (what scripts/row_power.py reads) gives the committed table's
    rows in its order, each row's design named as the row, with the table's noise and degrees of freedom (each row
    on the ledger's predictor: the final one, C3's selected row on the selected one)."""
    table = xr.open_dataset(RECORD / "cpu" / "row_power.nc", engine="h5netcdf")
    names = [str(r) for r in table["row"].values]
    results = load_results(RECORD, "cpu", presets.NOTEBOOK_READS["99_reproduction"])
    predictors = {r: "selected" if r == "C3 selected predictor" else "final" for r in names}
    rows = row_power.row_designs(results, predictors)
    assert [r.row for r in rows] == names
    assert all(r.design.label.startswith(r.row + " (") for r in rows)
    assert [r.noise_sd for r in rows] == pytest.approx(table["noise_sd"].values.tolist(), rel=1e-9, abs=1e-12)
    assert [r.noise_df for r in rows] == table["noise_df"].values.tolist()


LADDER = RECORD / "cpu" / "11_scale_ladder"


@pytest.mark.skipif(not (LADDER / "runs").is_dir(), reason="the committed ladder runs are absent")
def test_the_ladders_runs_origin_is_what_its_run_files_record():
    """runs_origin (chapter 11's provenance line) against the run files read directly: every run counted once, its
    CPU model, commit and time as the file records them, and each rung's models those of its own runs."""
    from collections import Counter

    from initmem.study.verdicts import ladder

    ds = xr.open_dataset(RECORD / "cpu" / "11_scale_ladder.nc", engine="h5netcdf")
    files = sorted((LADDER / "runs").glob("*.nc"))
    attrs = []
    for path in files:
        with xr.open_dataset(path, engine="h5netcdf") as run:
            attrs.append(dict(run.attrs))
    origin, by_rung = ladder.runs_origin(ds, LADDER / "runs")
    assert len(origin.created) == len(files) == sum(origin.cpu_models.values())
    assert dict(origin.cpu_models) == Counter(str(a.get("cpu_model", "not recorded")) for a in attrs)
    assert set(origin.commits) == {str(a.get("git_commit", "")) for a in attrs}
    assert origin.created == tuple(sorted(str(a["created"]) for a in attrs))
    assert (origin.first, origin.last) == (origin.created[0], origin.created[-1])
    grid = set(itertools.product(*(map(int, ds[d].values) for d in ("width", "train_size", "epochs"))))
    assert by_rung and set(by_rung) <= grid
    assert sorted({m for models in by_rung.values() for m in models}) == sorted(origin.cpu_models)


def test_a_trend_with_one_residual_degree_of_freedom_is_fitted_and_with_none_is_not():
    from initmem.study.verdicts import ladder

    x = np.array([[1.0, 3.0], [2.0, 3.0], [3.0, 3.0]])  # one column varies: intercept and one slope, df = 3 - 2
    fit = ladder.fit_trend(x, np.array([1.0, 2.0, 4.0]), np.array([4.0, 3.0]))
    assert fit is not None
    estimate, low, high, df, varying, slopes, sd = fit
    assert df == 1 and varying == (0,) and slopes == pytest.approx([1.5])
    assert estimate == pytest.approx(-2 / 3 + 1.5 * 4.0) and low < estimate < high
    assert ladder.fit_trend(x[:2], np.array([1.0, 2.0]), np.array([4.0, 3.0])) is None  # two points: df = 0


def test_a_single_epochs_value_holds_for_every_batch_size_of_a_zipped_sweep():
    """An experiment-04 Dataset whose batch sizes share one training length (``epochs`` a single value, no grid):
    one point per batch size, each at that length; without a ``step`` record the steps are 0 (unknown)."""
    from initmem.study.statistics.batches import batch_points

    acc = xr.DataArray(
        np.full((3, 2, 2), 100.0),
        dims=("batch_size", "sigma_w", "seed"),
        coords={"batch_size": [16, 64, 256], "sigma_w": [0.1, 2.5], "seed": [0, 1]},
    )
    acc[1, 0, 0] = np.nan  # a diverged run at batch 64 is left out, as every premise leaves it
    acc[2, 1, 1] = 99.0  # one run of batch 256 short of the interpolation threshold
    ds = xr.Dataset({"final_train_acc": acc}).assign_coords(epochs=30)
    points = batch_points(ds)
    assert [(p.batch_size, p.epochs, p.steps, p.interpolates) for p in points] == [
        (16, 30, 0, True),
        (64, 30, 0, True),
        (256, 30, 0, False),
    ]


def test_a_cells_gap_sd_is_the_sample_standard_deviation_of_its_seeds_gaps():
    from initmem.study.verdicts import phase
    from sweep_fakes import fake_sweep  # tests/ is on sys.path under pytest

    ds = fake_sweep({"lr": [0.1], "weight_decay": [0.01], "sigma_w": [0.1, 2.5], "seed": [0, 1, 2]})
    acc = xr.DataArray(
        [[60.0, 62.0, 70.0], [50.0, 49.0, 52.0]], dims=("sigma_w", "seed"), coords={"sigma_w": [0.1, 2.5]}
    )
    ds["selected_test_acc"] = acc.broadcast_like(ds["selected_test_acc"]).transpose(*ds["selected_test_acc"].dims)
    row = phase.cell_table(ds).loc[(0.1, 0.01)]
    gaps = np.array([10.0, 13.0, 18.0])
    assert row["selected_gap"] == pytest.approx(gaps.mean())
    assert row["selected_gap_sd"] == pytest.approx(gaps.std(ddof=1)) and row["selected_gap_seeds"] == 3


@pytest.mark.parametrize(("kind", "n_sigma", "n_seeds"), [("spread", 2, 3), ("contrast", 2, 3)])
def test_a_committed_critical_value_is_what_its_provenance_simulates(kind, n_sigma, n_seeds):
    """The committed table (critical_values.json) is reproducible: an entry simulated again at the table's own
    replicates and seed gives its value to the table's 4 decimals."""
    from initmem.study.statistics import calibration

    table = calibration.read_table()
    entry = table[kind][f"{n_sigma}x{n_seeds}"]
    again = calibration.simulate_critical(
        kind, n_sigma, n_seeds, table["provenance"]["reps"], seed=table["provenance"]["seed"]
    )
    assert (round(again.low, 4), round(again.high, 4)) == (entry["low"], entry["high"])


def test_cells_without_scatter_between_seeds_have_no_lack_of_fit_test():
    """Identical seeds in every cell (a pure-error sum of squares of 0) leave nothing to compare the misfit with:
    F and p are NaN, the degrees of freedom as usual."""
    import pandas as pd

    from initmem.study.verdicts import boundary
    from test_boundary import _logistic_cells  # tests/ is on sys.path under pytest

    table = _logistic_cells(0.0, noise=2.0, xs=np.linspace(-2.0, 2.0, 12))
    table.index = pd.MultiIndex.from_tuples([(0.02, 0.001 * (i + 1)) for i in range(12)], names=table.index.names)
    fit = boundary.fit_boundary(table)
    table["selected_gap_seeds"] = 4
    table["selected_gap_sd"] = 0.0
    misfit = boundary.lack_of_fit(fit, table)
    assert (misfit.df_fit, misfit.df_pure) == (9, 36)
    assert np.isnan(misfit.f) and np.isnan(misfit.p_value)


def test_the_within_1_5x_share_holds_both_edges_and_nothing_beyond():
    from initmem.study.costs import cost_fit

    figures = cost_fit.ratio_figures(np.array([1.5, 1 / 1.5, 1.51, 1 / 1.51]), 1.0)
    assert figures["within_1_5x"] == 0.5


def test_the_calibration_total_is_recorded_over_estimated_seconds():
    """Runs that took exactly twice the model's own estimate: every ratio, their median and the total are 2."""
    import pandas as pd

    from initmem.study.costs import cost_fit
    from test_costs import _row  # tests/ is on sys.path under pytest

    designs = [{"cell": "resnet9@32"}, {"cell": "resnet9@32", "width": 16}, {"cell": "resnet9@32", "batch": 256}]
    timed = [_row(seconds=s, **d) for s, d in zip((100.0, 60.0, 70.0), designs)] + [_row(seconds=100.0)]
    model = cost_fit.fit(pd.DataFrame(timed))
    estimate = [
        cost_fit.model_seconds(model, 1e12, model["levels"]["resnet9@32"], r["width"], r["batch_size"], "sgd", "fp32")
        for r in timed
    ]
    runs = pd.DataFrame([r | {"seconds": 2 * e} for r, e in zip(timed, estimate)])
    figures = cost_fit.calibration(model, runs)
    assert figures["total"] == pytest.approx(2.0) and figures["median"] == pytest.approx(2.0)
    assert figures["within_1_5x"] == 0.0


@pytest.mark.parametrize(("n_sigma", "n_seeds", "floor"), [(2, 3, 0.25), (4, 2, 1 / 12), (3, 3, 1 / 36)])
def test_the_spread_nulls_floor_from_two_sigma_w_and_two_seeds_up(n_sigma, n_seeds, floor):
    from initmem.study.statistics.nulls import spread_null_floor

    assert spread_null_floor(n_sigma, n_seeds) == pytest.approx(floor)
    assert spread_null_floor(1, n_seeds) == spread_null_floor(n_sigma, 1) == 1.0  # no null below 2 x 2


def test_a_null_of_a_single_permutation_is_a_null():
    import dataclasses

    from initmem.study.statistics.nulls import NullTest

    fields = {f.name: 1.0 for f in dataclasses.fields(NullTest)} | {"permutations": 1, "exact": True, "p_value": 1.0}
    assert NullTest(**fields).has_null
    assert not NullTest(**(fields | {"permutations": 0})).has_null


def test_a_field_not_swept_takes_the_specs_base_value_else_the_default():
    import json

    from initmem.study.statistics.analysis import field_values

    ds = xr.Dataset(
        {"acc": ("seed", [1.0, 2.0])},
        coords={"seed": [0, 1], "lr": 0.1},
        attrs={"spec": json.dumps({"base": {"epochs": 30}})},
    )
    assert field_values(ds, "lr") == [0.1]  # swept (a coordinate)
    assert field_values(ds, "epochs") == [30]  # the spec's base
    assert field_values(ds, "batch_size", default=128) == [128] and field_values(ds, "batch_size") == []


@pytest.mark.parametrize("horizons", [[0], [0, 3], [6]])
def test_a_horizon_outside_the_recorded_epochs_1_to_the_last_is_refused(horizons):
    from initmem.study.statistics.analysis import within_horizons

    ds = xr.Dataset({"final_test_acc": ("seed", [1.0, 2.0])}, coords={"seed": [0, 1], "epoch": np.arange(6)})
    with pytest.raises(ValueError, match=r"must lie in \[1, 5\]"):
        within_horizons(ds, horizons)
