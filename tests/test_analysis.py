"""initmem.analysis: the helpers behind notebooks 02, 06, 07 and the reproduction ledger (99)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import xarray as xr

from initmem import analysis

from sweep_fakes import fake_sweep  # tests/ is on sys.path under pytest


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
    np.testing.assert_allclose(h["T_SGD"].sel(horizon=10).values, ds["T_SGD"].sel(epoch=10).values)
    with pytest.raises(ValueError, match="horizons"):
        analysis.within_horizons(ds, [11])


def test_horizon_table_rows():
    ds = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]})
    table = analysis.horizon_table(ds, [4, 10])
    assert list(table.index) == [4, 10]
    assert {"selected_spread_pp", "final_spread_pp", "T_SGD", "min_final_train_acc"} <= set(table.columns)
    assert (table["epochs"] == [4, 10]).all()


def test_norm_coupling_slopes():
    ds = fake_sweep(
        {"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]}, {"optimizer": ["sgd", "adam"], "lr": [0.02, 0.005]}
    )
    slopes = analysis.norm_coupling(ds)
    assert set(slopes.dims) == {"seed", "optimizer"}
    np.testing.assert_allclose(slopes.sel(optimizer="sgd").values, 1.0, atol=1e-9)  # final = 1.5 x initial
    np.testing.assert_allclose(slopes.sel(optimizer="adam").values, 0.0, atol=1e-9)  # common final norm


def test_t_interval_and_spearman():
    mean, low, high, n = analysis.t_interval([1.0, 2.0, 3.0, np.nan])
    assert (mean, n) == (2.0, 3) and low < 2.0 < high
    assert math.isnan(analysis.t_interval([1.0])[1])
    assert analysis.spearman([16, 32, 64, 128], [1.0, 2.0, 3.0, 5.0]) == pytest.approx(1.0)
    assert math.isnan(analysis.spearman([1, 2], [1, 2]))


def _results():
    opt = fake_sweep(
        {"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]},
        {"optimizer": ["sgd", "adam", "adamw", "muon"], "lr": [0.02, 0.005, 0.005, 0.02]},
    )
    long = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": [0, 1]})
    long.attrs.update(horizons=json.dumps([2, 10]), reference_horizon=2)
    lr = fake_sweep({"lr": [0.02, 0.1], "weight_decay": [0.0, 0.01], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    lr["selected_test_acc"].loc[{"lr": 0.1, "weight_decay": 0.01}] = 60.0  # the forgetting cell: no spread
    bs = fake_sweep({"batch_size": [16, 64, 256], "sigma_w": [0.25, 2.5], "seed": [0, 1]})
    bs["selected_test_acc"] = bs["selected_test_acc"] * (1 + 0 * bs["batch_size"])
    scale = xr.DataArray([0.2, 0.5, 1.0], dims="batch_size", coords={"batch_size": [16, 64, 256]})
    low = bs["selected_test_acc"].sel(sigma_w=0.25)
    bs["selected_test_acc"] = low - (low - bs["selected_test_acc"]) * scale  # spread grows with b
    depth = fake_sweep({"sigma_w": [0.25, 2.5], "seed": [0]}, {"model": ["resnet9", "resnet56"]})
    depth["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 2.5}] = 60.0
    return {"01_optimizers": opt, "02_long_training": long, "03_lr_and_l2": lr, "04_batch_size": bs, "05_depth": depth}


def test_reproduction_table_rules():
    table = analysis.reproduction_table(_results())
    assert list(table.index) == ["C1", "C2", "C3", "C4", "C5", "C6", "C7"]
    assert set(table.columns) >= {"paper", "ours", "scale", "verdict", "rule", "clocks_reached", "paper_source"}
    v = table["verdict"]
    assert v["C1"] == analysis.IN_SIZE  # ~16 pp spread, interpolating: within a factor 2 of 26.5
    assert v["C2"] == analysis.IN_SIZE  # adaptive spreads ~1 pp
    assert v["C4"] == analysis.IN_SIZE  # the (0.1, 0.01) cell has no spread
    assert v["C5"] == analysis.IN_SIZE
    assert v["C6"] == analysis.IN_SIZE  # ResNet-56 at 60 % where ResNet-9 interpolates
    assert v["C7"] == analysis.IN_SIZE
    assert v["C3"] == analysis.IN_SIZE  # the spread grows from horizon 2 to 10 (5x longer)
    assert table.loc["C3", "note"] == "lowest final train accuracy at 10 epochs 100.0 %"
    assert "T_SGD" in table.loc["C1", "clocks_reached"] and "T_adapt" in table.loc["C2", "clocks_reached"]
    assert "95 % CI" in table.loc["C1", "ours"]


def test_reproduction_verdicts_need_more_than_the_noise_floor():
    results = _results()
    long = results["02_long_training"]
    long["test_acc"] = long["test_acc"].sel(sigma_w=0.25, drop=True).broadcast_like(long["test_acc"])  # no spread
    lr = results["03_lr_and_l2"]
    base = lr["selected_test_acc"].sel(lr=0.02, weight_decay=0.0)
    lr["selected_test_acc"].loc[{"lr": 0.1, "weight_decay": 0.01}] = base + 3.0 * (base["sigma_w"] == 2.5)
    bs = results["04_batch_size"]
    low = bs["selected_test_acc"].sel(sigma_w=0.25)
    scale = xr.DataArray([0.9, 0.95, 1.0], dims="batch_size", coords={"batch_size": [16, 64, 256]})
    full = bs["selected_test_acc"].sel(batch_size=256, drop=True)
    bs["selected_test_acc"] = low - (low - full) * scale  # rho = 1 but a gap of ~2 pp
    table = analysis.reproduction_table(results)
    assert table.loc["C3", "verdict"] == analysis.NOT_REPRODUCED and "noise floor" in table.loc["C3", "note"]
    assert table.loc["C4", "verdict"] == analysis.NOT_REPRODUCED  # 3 pp less spread is within the noise floor
    assert table.loc["C5", "verdict"] == analysis.NOT_REPRODUCED


def test_a_small_memory_that_is_erased_gets_no_excuse():
    results = _results()
    lr = results["03_lr_and_l2"]
    base = lr["selected_test_acc"].sel(lr=0.02, weight_decay=0.0)
    low = base.sel(sigma_w=0.25)
    lr["selected_test_acc"].loc[{"lr": 0.02, "weight_decay": 0.0}] = low - (low - base) * 0.5  # ~8 pp to erase
    row = analysis.reproduction_table(results).loc["C4"]
    assert 5.0 < float(row["ours"].split(" vs ")[1].split(" pp")[0]) < 10.0
    assert row["verdict"] == analysis.IN_SIZE and row["note"] == ""


def test_reproduction_table_without_results():
    table = analysis.reproduction_table({})
    assert (table["verdict"] == analysis.NOT_MEASURED).all()
    results = _results()
    results["01_optimizers"] = results["01_optimizers"].sel(optimizer=["sgd"])
    table = analysis.reproduction_table(results)
    assert table.loc["C2", "verdict"] == analysis.NOT_MEASURED


def test_clock_table_families():
    table = analysis.clock_table(_results())
    assert set(table["experiment"]) == {"01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth"}
    assert set(table["family"]) == {"SGD", "SGD+L2", "adaptive"}
    assert (table[table["experiment"] == "02_long_training"]["epochs"].tolist()) == [2, 10]


def test_run_experiment_keeps_an_unchanged_file(tmp_path):
    spec = {
        "base": {"model": "resnet9", "width": 4, "data": "synthetic", "train_size": 100, "val_size": 50,
                 "test_size": 50, "train_eval_size": 50, "image_size": 8, "batch_size": 50, "epochs": 1,
                 "progress": False, "device": "cpu", "num_threads": 1},
        "grid": {"sigma_w": [0.5, 2.0]},
    }  # fmt: skip
    ds = analysis.run_experiment("01_optimizers", spec, preset="test", results_dir=tmp_path, progress=False)
    runs, out = analysis.results_paths(tmp_path, "test", "01_optimizers")
    assert len(list(runs.glob("*.nc"))) == 2 and out.is_file()
    assert ds.attrs["preset"] == "test" and ds.attrs["experiment"] == "01_optimizers"
    before = out.read_bytes()
    again = analysis.run_experiment("01_optimizers", spec, preset="test", results_dir=tmp_path, progress=False)
    assert out.read_bytes() == before, "re-running a cached sweep must not rewrite the combined file"
    xr.testing.assert_equal(again["selected_test_acc"], ds["selected_test_acc"])
    noted = analysis.run_experiment("01_optimizers", spec, preset="test", results_dir=tmp_path, progress=False,
                                    attrs={"note": [1, 2]})  # fmt: skip
    assert int(noted.attrs["n_cached"]) == 2 and json.loads(noted.attrs["note"]) == [1, 2]
    xr.testing.assert_identical(analysis.read_results(tmp_path, "test", "01_optimizers", reader="06_norms"), noted)
    assert set(analysis.load_results(tmp_path, "test", ["01_optimizers", "02_long_training"])) == {"01_optimizers"}
    costs = analysis.measured_costs(tmp_path, "test")
    seconds = [float(xr.open_dataset(f, engine="h5netcdf")["wall_time_s"]) for f in sorted(runs.glob("*.nc"))]
    assert list(costs.index) == ["01_optimizers"] and int(costs.loc["01_optimizers", "runs"]) == 2
    assert costs.loc["01_optimizers", "core_hours"] == pytest.approx(sum(seconds) / 3600.0)
    assert costs.loc["01_optimizers", "minutes_per_run"] == pytest.approx(sum(seconds) / 2 / 60.0)
    assert "threads" in costs.loc["01_optimizers", "hardware"]
    with pytest.raises(FileNotFoundError, match=r"06_norms reads the results of 02_long_training at preset 'test'.*"
                                                r"initmem experiments --preset test --only 02"):
        analysis.read_results(tmp_path, "test", "02_long_training", reader="06_norms")


def test_c2_needs_sgd_to_remember_more_than_the_noise_floor_beyond_adaptive():
    results = _results()
    opt = results["01_optimizers"]
    acc = opt["selected_test_acc"]
    acc.loc[{"optimizer": ["adam", "adamw", "muon"]}] = 60.0  # no spread at all
    acc.loc[{"optimizer": "sgd"}] = 60.0
    acc.loc[{"optimizer": "sgd", "sigma_w": 2.5}] = 56.0  # SGD: 4 pp, below the 5 pp margin
    row = analysis.reproduction_table(results).loc["C2"]
    assert row["verdict"] == analysis.NOT_REPRODUCED and "noise floor" in row["note"]
    acc.loc[{"optimizer": "sgd", "sigma_w": 2.5}] = 44.0  # SGD: 16 pp, adaptive 0 pp
    assert analysis.reproduction_table(results).loc["C2", "verdict"] == analysis.IN_SIZE
