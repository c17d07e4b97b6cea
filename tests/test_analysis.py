"""initmem.study.statistics.analysis: the helpers behind notebooks 02, 06, 07 and 08."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import xarray as xr

from initmem.study.costs import costs, results
from initmem.study.statistics import analysis
from initmem.sweeps import store
from sweep_fakes import fake_sweep, ledger_results  # tests/ is on sys.path under pytest
from tiny import TINY_RUN  # tests/ is on sys.path under pytest

#: The tests' tiny run on half its data, for one epoch (a second).
_HALF_TINY = {**TINY_RUN, "train_size": 100, "val_size": 50, "test_size": 50, "train_eval_size": 50, "epochs": 1}


def test_last_finite_skips_trailing_nan():
    da = xr.DataArray([[1.0, 2.0, np.nan], [np.nan, np.nan, np.nan], [1.0, 2.0, 3.0]], dims=("run", "epoch"))
    out = analysis.last_finite(da)
    assert out.dims == ("run",)
    np.testing.assert_array_equal(out.values[[0, 2]], [2.0, 3.0])
    assert math.isnan(out.values[1])


def test_within_horizons_is_selection_on_a_prefix():
    ds = fake_sweep({"sigma_w": [0.25, 2.5], "seed": [0]})
    # make epoch 4 the best validation loss before T = 6 and epoch 10 the best overall
    ds["val_loss"][:] = np.array([5.0, 4.0, 1.0, 2.0, 3.0, 0.5])
    h = analysis.within_horizons(ds, [2, 6, 10])
    np.testing.assert_array_equal(h["best_epoch"].sel(sigma_w=0.25, seed=0).values, [2.0, 4.0, 10.0])
    at6 = ds["test_acc"].sel(epoch=4)
    xr.testing.assert_allclose(h["selected_test_acc"].sel(horizon=6, drop=True), at6.drop_vars("epoch"))
    xr.testing.assert_allclose(h["final_test_acc"].sel(horizon=6, drop=True), ds["test_acc"].sel(epoch=6, drop=True))
    np.testing.assert_allclose(h["final_T_SGD"].sel(horizon=10).values, ds["T_SGD"].sel(epoch=10).values)
    np.testing.assert_allclose(h["selected_T_SGD"].sel(horizon=6).values, ds["T_SGD"].sel(epoch=4).values)
    assert h["final_epoch"].sel(horizon=6, sigma_w=0.25, seed=0).item() == 6.0
    with pytest.raises(ValueError, match="horizons"):
        analysis.within_horizons(ds, [11])


def test_horizon_table_rows():
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]})
    table = analysis.horizon_table(ds, [4, 10])
    assert list(table.index) == [4, 10]
    assert {"selected_spread_pp", "final_spread_pp", "T_SGD", "final_T_SGD", "min_final_train_acc"} <= set(
        table.columns
    )
    # the clock printed beside the selected spread is the clock at the selected checkpoint within the horizon
    h = analysis.within_horizons(ds, [4, 10])
    assert table.loc[10, "T_SGD"] == pytest.approx(float(h["selected_T_SGD"].sel(horizon=10).mean()))
    assert table.loc[4, "final_T_SGD"] == pytest.approx(float(ds["T_SGD"].sel(epoch=4).mean()))
    assert (table["epochs"] == [4, 10]).all()


def test_norm_coupling_slopes():
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]}, {"optimizer": ["sgd", "adam"], "lr": [0.02, 0.005]})
    slopes = analysis.norm_coupling(ds)
    assert set(slopes.dims) == {"seed", "optimizer"}
    np.testing.assert_allclose(slopes.sel(optimizer="sgd").values, 1.0, atol=1e-9)  # final = 1.5 x initial
    np.testing.assert_allclose(slopes.sel(optimizer="adam").values, 0.0, atol=1e-9)  # common final norm


def test_a_diverged_run_has_no_final_norm_and_leaves_the_coupling_of_its_seed_out():
    """Its last finite norm is where it blew up, not where it ended: it is left out, as every premise leaves it."""
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]}, {"optimizer": ["sgd", "adam"], "lr": [0.02, 0.005]})
    ds["diverged"] = xr.zeros_like(ds["final_test_acc"])
    blown = {"optimizer": "sgd", "seed": 1, "sigma_w": 2.5}
    ds["diverged"].loc[blown] = 1
    ds["weight_norm"].loc[{**blown, "epoch": ds["epoch"].values[-1]}] = 1e6  # recorded once more, then stopped
    norms = analysis.final_norms(ds)
    assert np.isnan(float(norms.sel(blown))) and int(np.isnan(norms).sum()) == 1
    slopes = analysis.norm_coupling(ds)
    assert float(slopes.sel(optimizer="sgd", seed=1)) == pytest.approx(1.0)  # the two runs left of its seed: exact


def test_clock_table_families():
    table = analysis.clock_table(ledger_results())
    assert set(table["experiment"]) == {
        "01_optimizers",
        "02_long_training",
        "03_lr_and_l2",
        "04_batch_size",
        "05_depth",
    }
    assert set(table["family"]) == {"SGD", "SGD+L2", "adaptive"}
    assert (table[table["experiment"] == "02_long_training"]["epochs"].tolist()) == [10]  # each configuration once


def test_collapse_text_never_prints_nan():
    """07's prose reads each family through collapse_text: a family of two configurations (rho undefined) or none
    reads as words, with no "nan" (07 printed one for SGD with L2)."""
    table = analysis.clock_table(ledger_results())
    collapse = analysis.collapse_table(table)
    assert collapse.loc["SGD+L2", "configurations"] == 2 and math.isnan(collapse.loc["SGD+L2", "rho(T_L2)"])
    texts = {family: analysis.collapse_text(collapse, family) for family in analysis.FAMILY_CLOCK}
    assert texts["SGD+L2"] == (
        "cannot tell (fewer than 3 configurations or no variation), over 2 configurations against T_L2"
    )
    assert all("nan" not in text.lower() for text in texts.values()), texts
    empty = analysis.collapse_table(table[table["family"] != "adaptive"])
    assert analysis.collapse_text(empty, "adaptive") == "no configurations (against T_adapt)"


def test_against_reference_separates_only_intervals_entirely_below():
    """Each optimizer's smallest spread against its spread at the reference lr: lower only when the intervals part."""
    import pandas as pd

    table = pd.DataFrame(
        {
            "optimizer": ["adam", "adam", "muon", "muon", "sgd"],
            "lr": [0.01, 0.05, 0.01, 0.05, 0.1],
            "selected_spread_pp": [10.0, 2.0, 9.0, 6.0, 4.0],
            "selected_ci95_low": [8.0, 1.0, 5.0, 4.0, 3.0],
            "selected_ci95_high": [12.0, 7.9, 13.0, 8.0, 5.0],
        }
    )
    knob = analysis.against_reference(table, {"adam": 0.01, "muon": 0.01, "sgd": 0.1})
    assert knob["optimizer"].tolist() == ["adam", "muon", "sgd"]
    assert knob["best_lr"].tolist() == [0.05, 0.05, 0.1] and knob["reference_spread_pp"].tolist() == [10.0, 9.0, 4.0]
    # adam: 7.9 < 8.0 (apart); muon: 8.0 >= 5.0 (overlap); sgd: the reference is the smallest
    assert knob["measurably_lower"].tolist() == [True, False, False]
    table.loc[1, "selected_ci95_high"] = 8.0  # touching intervals do not part
    assert not analysis.against_reference(table, {"adam": 0.01})["measurably_lower"].iloc[0]
    missing = analysis.against_reference(table, {}).iloc[0]
    assert math.isnan(missing["reference_lr"]) and not missing["measurably_lower"]


def test_run_experiment_keeps_an_unchanged_file(tmp_path):
    spec = {"base": {**_HALF_TINY, "image_size": 8}, "grid": {"sigma_w": [0.5, 2.0]}}
    ds = results.run_experiment("01_optimizers", spec, preset="test", results_dir=tmp_path, progress=False)
    runs, out = results.results_paths(tmp_path, "test", "01_optimizers")
    assert len(list(runs.glob("*.nc"))) == 2 and out.is_file()
    assert ds.attrs["preset"] == "test" and ds.attrs["experiment"] == "01_optimizers"
    before = out.read_bytes()
    again = results.run_experiment("01_optimizers", spec, preset="test", results_dir=tmp_path, progress=False)
    assert out.read_bytes() == before, "re-running a cached sweep must not rewrite the combined file"
    xr.testing.assert_equal(again["selected_test_acc"], ds["selected_test_acc"])
    noted = results.run_experiment(
        "01_optimizers", spec, preset="test", results_dir=tmp_path, progress=False, attrs={"note": [1, 2]}
    )
    assert int(noted.attrs["n_cached"]) == 2 and json.loads(noted.attrs["note"]) == [1, 2]
    xr.testing.assert_identical(results.read_results(tmp_path, "test", "01_optimizers", reader="06_norms"), noted)
    assert set(results.load_results(tmp_path, "test", ["01_optimizers", "02_long_training"])) == {"01_optimizers"}
    measured = costs.measured_costs(tmp_path, "test")
    seconds = [float(xr.open_dataset(f, engine="h5netcdf")["cpu_time_s"]) for f in sorted(runs.glob("*.nc"))]
    assert list(measured.index) == ["01_optimizers"] and int(measured.loc["01_optimizers", "runs"]) == 2
    assert measured.loc["01_optimizers", "core_hours"] == pytest.approx(sum(seconds) / 3600.0)
    assert measured.loc["01_optimizers", "minutes_per_run"] == pytest.approx(sum(seconds) / 2 / 60.0)
    assert " thread" in measured.loc["01_optimizers", "hardware"]  # "1 thread" or "2 threads"
    # a run file beside the record's (trained ahead for another grid) is not the record's cost
    stray = xr.load_dataset(sorted(runs.glob("*.nc"))[0], engine="h5netcdf")
    stray.attrs["config_hash"] = "f" * 16
    store.write_run(stray.assign(wall_time_s=3600.0 * 100, cpu_time_s=3600.0 * 100), runs / f"{'f' * 16}.nc")
    assert costs.measured_costs(tmp_path, "test").equals(measured)
    # A run that a later experiment holds too (the same file) was trained once: it is counted where it came first.
    import shutil

    later = tmp_path / "test" / "09_adaptive_lr" / "runs"
    later.mkdir(parents=True)
    shutil.copy2(sorted(runs.glob("*.nc"))[0], later)
    both = costs.measured_costs(tmp_path, "test", ["01_optimizers", "09_adaptive_lr"])
    assert both.loc["09_adaptive_lr", ["runs", "shared_runs", "core_hours"]].tolist() == [1, 1, 0.0]
    assert both.loc["01_optimizers", "core_hours"] == pytest.approx(sum(seconds) / 3600.0)
    with pytest.raises(
        FileNotFoundError,
        match=r"06_norms reads the results of 02_long_training at preset 'test'.*"
        r"initmem experiments --preset test --only 02",
    ):
        results.read_results(tmp_path, "test", "02_long_training", reader="06_norms")


# --- notebooks that travel: results found from anywhere in the checkout; no silent hours of training ------------
def _big_spec() -> dict:
    """Two runs of the cpu preset's shape (minutes each on a CPU); nothing here trains them."""
    return {
        "base": {
            "model": "resnet9",
            "width": 8,
            "data": "synthetic",
            "image_size": 32,
            "train_size": 5000,
            "val_size": 2000,
            "test_size": 2000,
            "train_eval_size": 1000,
            "batch_size": 64,
            "epochs": 40,
            "num_threads": 1,
            "progress": False,
        },
        "grid": {"sigma_w": [0.1, 2.5]},
    }


def test_missing_runs_of_hours_are_refused_unless_asked(tmp_path, monkeypatch):
    from initmem.base.paths import TRAIN_ENV

    monkeypatch.delenv(TRAIN_ENV, raising=False)
    with pytest.raises(results.TrainingRefused) as info:
        results.run_experiment("01_optimizers", _big_spec(), preset="cpu", results_dir=tmp_path, train_missing=None)
    message = str(info.value)
    assert message.startswith("train_missing: 2 of 2 runs of 01_optimizers at preset 'cpu'") and "\n" not in message
    assert re.search(r"about \d+ core-min \(p10-p90 \d+-\d+\) to train", message)  # two 40-epoch runs, with the band
    assert "initmem experiments --preset cpu --only 01" in message
    assert not any(tmp_path.rglob("*.nc")), "nothing may be trained or written"
    with pytest.raises(results.TrainingRefused):
        results.run_experiment("01_optimizers", _big_spec(), preset="cpu", results_dir=tmp_path, train_missing=False)
    # Under `initmem experiments` (TRAIN_ENV=1) the same call is asked for: the check lets it through.
    monkeypatch.setenv(TRAIN_ENV, "1")
    runs_dir = tmp_path / "cpu" / "01_optimizers" / "runs"
    results._check_training_allowed("01_optimizers", _big_spec(), "cpu", runs_dir, None, "serial", None)


#: One run of a second: a sweep that trains without asking (estimated far below a minute).
ONE_TINY_RUN = {"base": {k: v for k, v in _HALF_TINY.items() if k != "device"}, "grid": {"sigma_w": [0.5]}}


def test_a_minute_of_missing_runs_trains_without_asking(tmp_path, monkeypatch):
    from initmem.base.paths import TRAIN_ENV

    monkeypatch.delenv(TRAIN_ENV, raising=False)
    spec = ONE_TINY_RUN
    ds = results.run_experiment(
        "01_optimizers", spec, preset="smoke", results_dir=tmp_path, train_missing=None, progress=False
    )
    assert int(ds.attrs["n_runs"]) == 1 and len(list((tmp_path / "smoke" / "01_optimizers" / "runs").glob("*.nc"))) == 1


def test_a_relative_results_dir_is_taken_from_the_repository_root(tmp_path, monkeypatch):
    from initmem.study.design import layout

    root = tmp_path / "checkout"
    (root / "book" / "generated").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "initmem"\n')
    monkeypatch.delenv("INITMEM_ROOT", raising=False)
    monkeypatch.chdir(root / "book" / "generated")  # where an executed notebook is opened
    runs, combined = layout.results_paths("results", "cpu", "06_norms")
    assert combined == root.resolve() / "results" / "cpu" / "06_norms.nc"
    assert runs == root.resolve() / "results" / "cpu" / "06_norms" / "runs"
    assert layout.resolve_results_dir(tmp_path / "elsewhere") == tmp_path / "elsewhere"  # absolute: unchanged
    monkeypatch.chdir(tmp_path)  # outside any checkout: the working directory
    assert layout.resolve_results_dir("results") == tmp_path / "results"


def test_another_sweep_never_replaces_a_record_outside_the_runner(tmp_path, monkeypatch):
    from initmem.base.paths import TRAIN_ENV

    monkeypatch.delenv(TRAIN_ENV, raising=False)
    spec = ONE_TINY_RUN
    results.run_experiment("04_batch_size", spec, preset="smoke", results_dir=tmp_path, progress=False)
    record = (tmp_path / "smoke" / "04_batch_size.nc").read_bytes()
    other = {**spec, "grid": {"sigma_w": [0.5, 2.0]}}
    with pytest.raises(results.ReplaceRefused, match=r"^results_dir: .*04_batch_size.nc holds another sweep of "):
        results.run_experiment("04_batch_size", other, preset="smoke", results_dir=tmp_path, progress=False)
    assert (tmp_path / "smoke" / "04_batch_size.nc").read_bytes() == record
    assert len(list((tmp_path / "smoke" / "04_batch_size" / "runs").glob("*.nc"))) == 1, "refused before training"
    replaced = results.run_experiment(
        "04_batch_size", other, preset="smoke", results_dir=tmp_path, progress=False, replace=True
    )
    assert replaced.sizes["sigma_w"] == 2
