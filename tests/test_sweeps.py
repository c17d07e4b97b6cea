"""Sweeps: spec validation, combine, cache and resume (SIGKILL), executors, spread and summary table."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import xarray as xr

import initmem.run.data.prepare
import initmem.run.training
import initmem.sweeps.executors
from initmem.run.config import ConfigError, RunConfig
from initmem.run.variables import TIMINGS
from initmem.study.statistics.calibration import critical
from initmem.study.statistics.stats import spread
from initmem.study.statistics.summary import spread_lines, summary_table
from initmem.sweeps.combine import combine_runs
from initmem.sweeps.driver import sweep
from initmem.sweeps.spec import SweepSpec
from initmem.sweeps.store import run_path
from tiny import TINY_RUN  # tests/ is on sys.path under pytest

BASE = {**TINY_RUN, "epochs": 2}
#: 4 runs: 2 sigma_w x (sgd at lr 0.05, adam at lr 0.005).
SPEC = {"base": BASE, "grid": {"sigma_w": [0.5, 2.0]}, "zip": {"optimizer": ["sgd", "adam"], "lr": [0.05, 0.005]}}


def _comparable(ds: xr.Dataset) -> xr.Dataset:
    """Without the timing variables and the provenance attributes."""
    return ds.drop_vars(list(TIMINGS)).drop_attrs()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted serial sweep of SPEC: (dataset, cache dir, prepare_data calls)."""
    cache = tmp_path_factory.mktemp("reference-cache")
    calls = []
    real = initmem.run.data.prepare.prepare_data
    initmem.sweeps.executors._DATA_CACHE.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(initmem.run.data.prepare, "prepare_data", lambda *a, **k: calls.append(1) or real(*a, **k))
        ds = sweep(SweepSpec.from_dict(SPEC), cache, progress=False)
    return ds, cache, len(calls)


# --- the spec ------------------------------------------------------------------------------------
def test_spec_points_dims_and_round_trip(tmp_path):
    spec = SweepSpec.from_dict(SPEC)
    assert spec.dims == ["sigma_w", "optimizer"] and spec.shape == (2, 2) and spec.n_runs == 4
    coords, config = spec.configs()[1]
    assert coords == {"sigma_w": 0.5, "optimizer": "adam", "lr": 0.005}
    assert (config.sigma_w, config.optimizer, config.lr, config.width) == (0.5, "adam", 0.005, 4)
    assert SweepSpec.from_dict(spec.to_dict()) == spec
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    yaml_text = "base: {width: 4}\ngrid:\n  sigma_w: [1, 2]\n  seed: [0, 1, 2]\n"
    (tmp_path / "spec.yaml").write_text(yaml_text)
    assert SweepSpec.from_file(tmp_path / "spec.json") == spec
    from_yaml = SweepSpec.from_file(tmp_path / "spec.yaml")
    assert from_yaml.n_runs == 6 and from_yaml.dims == ["sigma_w", "seed"]
    # integers given for a float field are the same runs as the floats
    assert from_yaml.configs()[0][1].hash() == RunConfig(width=4, sigma_w=1.0, seed=0).hash()
    assert SweepSpec(base=RunConfig(width=4), grid={"seed": [0]}).n_runs == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"grid": {"sigma_ww": [1.0]}}, "grid.sigma_ww: unknown field"),
        ({"base": {"widht": 4}}, "base.widht: unknown field"),
        ({"grids": {}}, "grids: unknown sweep spec key"),
        ({"grid": {"sigma_w": []}}, "grid.sigma_w: empty list"),
        ({"grid": {"sigma_w": 0.5}}, "grid.sigma_w: must be a list"),
        ({"zip": {"optimizer": ["sgd", "adam"], "lr": [0.1]}}, "zip: the zipped lists must have equal lengths"),
        ({"grid": {"sigma_w": ["big"]}}, "sigma_w: must be a number"),
        ({"grid": {"optimizer": ["sgd", "no_such_optimizer"]}}, "optimizer: allowed values"),
        ({"grid": {"seed": [0, 0]}}, "grid.seed: duplicate value"),
        ({"grid": {"progress": [True, False]}}, "grid.progress: an execution field"),
        ({"grid": {"lr": [0.1]}, "zip": {"lr": [0.1]}}, "zip.lr: already a grid field"),
        ({"grid": {"betas": [[0.9, 0.99]]}}, "grid.betas: swept values must be numbers"),
        ({"grid": {"decay_mode": ["auto", "l2"]}}, "are the same run"),
        ({"grid": {"batch_size": [10_000]}}, "batch_size: must be at most train_size"),
        ({"grid": {"lr": [0.1]}, "also": {"lr": [0.2]}}, "also: must be a list of grids"),
        ({"grid": {"lr": [0.1]}, "also": [{"seed": [1]}]}, r"also\[0\]\.seed: not a grid field"),
        ({"grid": {"lr": [0.1]}, "also": [{"lr": [0.2, 0.2]}]}, r"also\[0\]\.lr: duplicate value"),
    ],
)
def test_invalid_specs_raise_one_clear_line(spec, message):
    with pytest.raises(ConfigError, match=message) as info:
        SweepSpec.from_dict(spec)
    assert "\n" not in str(info.value)


def test_cli_reports_a_bad_spec_with_exit_code_2(tmp_path, capsys):
    from initmem.cli import main

    path = tmp_path / "bad.yaml"
    path.write_text("grid: {sigma_w: []}\n")
    assert main(["sweep", str(path), "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o.nc")]) == 2
    assert "grid.sigma_w: empty list" in capsys.readouterr().err


# --- combining -----------------------------------------------------------------------------------
def _fake_run(layers, epochs, value):
    return xr.Dataset(
        {
            "lr": ("epoch", np.full(len(epochs), 0.1)),
            "test_acc": ("epoch", np.full(len(epochs), value)),
            "layer_norm": (("epoch", "layer"), np.full((len(epochs), len(layers)), value)),
            "selected_test_acc": ((), value),
        },
        coords={"epoch": epochs, "layer": layers},
        attrs={"config_hash": f"h{value}", "hardware": "cpu", "data_source": "{}"},
    )


def test_combine_runs_nan_fills_other_layers_and_epochs():
    spec = SweepSpec.from_dict({"grid": {"model": ["resnet20", "resnet32"]}, "zip": {"lr": [0.1, 0.2], "seed": [3, 4]}})
    short = ["conv1", "layer1.0.conv1", "layer2.0.conv1", "head"]
    long = ["conv1", "layer1.0.conv1", "layer1.1.conv1", "layer2.0.conv1", "layer2.1.conv1", "head"]
    runs = [_fake_run(short, [0, 1], 1.0), _fake_run(short, [0, 1], 2.0)]
    runs += [_fake_run(long, [0, 1, 2], 3.0), _fake_run(long, [0, 1, 2], 4.0)]
    ds = combine_runs(spec, runs)
    assert ds["layer_norm"].dims == ("model", "lr", "epoch", "layer")
    assert list(ds.layer.values) == long  # the union keeps the network order
    assert list(ds.epoch.values) == [0, 1, 2]
    assert list(ds["seed"].values) == [3, 4] and ds["seed"].dims == ("lr",)
    assert "scheduled_lr" in ds and "lr" in ds.coords  # the per-epoch lr makes way for the coordinate
    short_run = ds["layer_norm"].sel(model="resnet20", lr=0.2)
    assert np.isnan(short_run.sel(layer="layer1.1.conv1")).all() and np.isnan(short_run.sel(epoch=2)).all()
    assert short_run.sel(layer="head", epoch=1).item() == 2.0
    assert ds["selected_test_acc"].sel(model="resnet32", lr=0.1).item() == 3.0
    assert ds["run_hash"].sel(model="resnet32", lr=0.2).item() == "h4.0"


def test_a_further_grid_may_walk_some_entries_of_the_zip_only(tmp_path):
    """A 2-width grid over a 3-entry zip, and a third width with the zip's first entry alone: 6 + 1 runs; the combined
    Dataset is NaN at the entries the further grid leaves out."""
    values = {
        "base": {"width": 4},
        "grid": {"width": [4, 8]},
        "zip": {"lr": [0.02, 0.1, 0.002], "optimizer": ["sgd", "sgd", "adam"]},
        "also": [{"width": [16], "lr": [0.02]}],
    }
    spec = SweepSpec.from_dict(values)
    assert spec.n_runs == 7 and spec.shape == (3, 3)
    wide = [(c["width"], c["lr"], config.optimizer) for c, config in spec.configs() if c["width"] == 16]
    assert wide == [(16, 0.02, "sgd")]
    assert SweepSpec.from_dict(spec.to_dict()) == spec
    ds = combine_runs(spec, [_fake_run(["head"], [0], float(k)) for k in range(spec.n_runs)])
    assert int(np.isfinite(ds["selected_test_acc"]).sum()) == 7
    assert np.isnan(ds["selected_test_acc"].sel(width=16, lr=0.1)).item()


@pytest.mark.parametrize(
    ("also", "message"),
    [
        ([{"width": [16], "lr": [0.5]}], r"also\[0\]\.lr: 0\.5 is not one of the zipped values"),
        ([{"width": [16], "optimizer": ["sgd"]}], r"also\[0\]\.optimizer: not a grid field"),
    ],
)
def test_a_further_grid_names_only_values_of_the_first_zipped_field(also, message):
    values = {"grid": {"width": [4]}, "zip": {"lr": [0.02, 0.1], "optimizer": ["sgd", "sgd"]}, "also": also}
    with pytest.raises(ConfigError, match=message):
        SweepSpec.from_dict(values)


def test_a_spec_with_further_grids_is_their_union_and_combines_with_nan_where_no_grid_holds_a_point(tmp_path):
    # a 2 x 2 grid of (lr, weight_decay) plus one cell beside it and one it already holds: 5 distinct cells
    values = {
        "base": {"width": 4},
        "grid": {"lr": [0.1, 0.2], "weight_decay": [0.0, 0.01], "seed": [0, 1]},
        "also": [{"lr": [0.05, 0.1], "weight_decay": [0.01]}],
    }
    spec = SweepSpec.from_dict(values)
    assert spec.dims == ["lr", "weight_decay", "seed"] and spec.shape == (3, 2, 2)
    assert spec.n_runs == 10  # 8 of the grid, 2 (seeds) of the new cell; (0.1, 0.01) is one run
    assert spec.coordinate("lr") == [0.1, 0.2, 0.05]
    assert len({config.hash() for _, config in spec.configs()}) == 10
    assert SweepSpec.from_dict(spec.to_dict()) == spec and spec.to_dict()["also"] == values["also"]
    assert "also" not in SweepSpec.from_dict(SPEC).to_dict()  # a one-grid spec keeps its JSON
    runs = [_fake_run(["head"], [0], float(k)) for k in range(spec.n_runs)]
    ds = combine_runs(spec, runs)
    assert ds["selected_test_acc"].shape == (3, 2, 2)
    assert np.isnan(ds["selected_test_acc"].sel(lr=0.05, weight_decay=0.0)).all()  # no grid holds it
    assert ds["run_hash"].sel(lr=0.05, weight_decay=0.0, seed=0).item() == ""
    assert ds["selected_test_acc"].sel(lr=0.05, weight_decay=0.01, seed=1).item() == 9.0  # the last point
    assert ds["selected_test_acc"].sel(lr=0.2, weight_decay=0.01, seed=0).item() == 6.0  # C order of the grid
    assert int(np.isfinite(ds["selected_test_acc"]).sum()) == 10


# --- serial sweep, cache and resume -----------------------------------------------------------------
def test_serial_sweep_builds_a_dense_grid(reference):
    ds, cache, prepare_calls = reference
    table = summary_table(ds)
    assert list(table.index) == ["sgd", "adam"] and list(table["lr"]) == [0.05, 0.005]
    assert table.loc["sgd", "selected_raw_spread_pp"] == spread(ds).sel(optimizer="sgd").item()
    # one seed: nothing to cross-fit on, so the headline is the seed's raw spread, and says so
    assert table.loc["sgd", "selected_spread_pp"] == table.loc["sgd", "selected_raw_spread_pp"]
    assert table.loc["sgd", "selected_estimator"] == "raw (1 seed)"
    assert ds["test_acc"].dims == ("sigma_w", "optimizer", "epoch")
    assert ds["layer_norm"].dims == ("sigma_w", "optimizer", "epoch", "layer")
    assert list(ds.optimizer.values) == ["sgd", "adam"] and list(ds["lr"].values) == [0.05, 0.005]
    assert ds.attrs["n_runs"] == 4 and ds.attrs["n_cached"] == 0
    assert json.loads(ds.attrs["spec"])["zip"]["lr"] == [0.05, 0.005]
    for key in ("git_commit", "initmem_version", "hardware", "data_source", "created", "wall_time_s"):
        assert key in ds.attrs, key
    assert json.loads(ds.attrs["data_source"])["format"] == "synthetic"
    assert prepare_calls == 1  # all four runs share their data
    for coords, config in SweepSpec.from_dict(SPEC).configs():
        assert run_path(cache, config).exists()
        assert ds["run_hash"].sel(sigma_w=coords["sigma_w"], optimizer=coords["optimizer"]).item() == config.hash()
    assert not list(cache.glob(".*.tmp"))


def test_cached_run_equals_a_direct_train_call(reference):
    ds, cache, _ = reference
    config = RunConfig(**BASE, sigma_w=2.0, optimizer="adam", lr=0.005)
    direct = initmem.run.training.train(config)
    cached = xr.load_dataset(run_path(cache, config), engine="h5netcdf")
    xr.testing.assert_identical(_comparable(cached), _comparable(direct))
    from_sweep = ds.sel(sigma_w=2.0, optimizer="adam").drop_vars(["sigma_w", "optimizer", "lr", "run_hash"])
    np.testing.assert_array_equal(from_sweep["test_loss"], direct["test_loss"])
    assert from_sweep["selected_test_acc"].item() == direct["selected_test_acc"].item()


def test_rerun_trains_nothing_that_is_cached(reference, monkeypatch):
    ds, cache, _ = reference
    stale = cache / f".x.nc.{socket.gethostname()}.{_dead_pid()}.tmp"
    stale.write_text("left by a killed sweep")

    def no_training(*args, **kwargs):
        raise AssertionError("a cached run was trained again")

    monkeypatch.setattr(initmem.run.training, "train", no_training)
    again = sweep(SPEC, cache, progress=False)
    assert again.attrs["n_cached"] == 4
    xr.testing.assert_identical(_comparable(again), _comparable(ds))
    assert not stale.exists()


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_failed_runs_are_reported_after_the_others_are_cached(reference, tmp_path, caplog):
    ds, cache, _ = reference
    grid = {"data": ["synthetic", str(tmp_path / "missing")], "sigma_w": [0.5, 2.0]}
    spec = {"base": {**BASE, "optimizer": "sgd", "lr": 0.05}, "grid": grid}
    with pytest.raises(RuntimeError, match="2 of 4 runs failed") as info:
        sweep(spec, cache, progress=False)
    bad = SweepSpec.from_dict(spec).configs()[2][1]
    assert bad.hash() in str(info.value) and "DataError" in str(info.value)
    assert "config:" in caplog.text and str(tmp_path / "missing") in caplog.text
    assert not run_path(cache, bad).exists()


@pytest.mark.slow
def test_killed_sweep_resumes_without_losing_finished_runs(reference, tmp_path):
    ds, _, _ = reference
    cache = tmp_path / "cache"
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC))
    command = [sys.executable, "-m", "initmem", "sweep", str(spec_file), "--cache", str(cache)]
    command += ["--out", str(tmp_path / "out.nc")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    try:
        while not list(cache.glob("*.nc")):
            assert process.poll() is None, f"the sweep ended before it was killed: {process.stderr.read().decode()}"
            assert time.monotonic() < deadline, "no run finished within 120 s"
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
        process.stderr.close()
    finished = {path.name: (path.stat().st_mtime_ns, path.read_bytes()) for path in cache.glob("*.nc")}
    assert 1 <= len(finished) < 4

    resumed = sweep(SPEC, cache, progress=False)
    assert resumed.attrs["n_cached"] == len(finished)
    for name, (mtime, content) in finished.items():
        assert (cache / name).stat().st_mtime_ns == mtime and (cache / name).read_bytes() == content
    assert not list(cache.glob(".*.tmp"))
    xr.testing.assert_identical(_comparable(resumed), _comparable(ds))


# --- parallel executors ------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("executor", ["dask", "processes"])
def test_parallel_executors_equal_serial(reference, tmp_path, executor):
    if executor == "dask":
        pytest.importorskip("distributed")
    ds, _, _ = reference
    sgd_only = {**SPEC, "zip": {"optimizer": ["sgd"], "lr": [0.05]}}  # two of the reference's runs
    parallel = sweep(sgd_only, tmp_path / "cache", executor=executor, workers=2, progress=False)
    assert parallel.attrs["executor"] == executor and parallel.attrs["n_cached"] == 0
    xr.testing.assert_identical(_comparable(parallel), _comparable(ds.isel(optimizer=[0])))


def test_dask_accepts_a_client_and_reports_failed_runs(reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    _, cache, _ = reference
    grid = {"sigma_w": [0.5, 2.0], "data": ["synthetic", str(tmp_path / "missing")]}
    spec = {"base": {**BASE, "optimizer": "sgd", "lr": 0.05}, "grid": grid}
    # in-process workers (inproc://): the one thing that listens is the scheduler's HTTP server, on 127.0.0.1
    cluster_options = dict(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0")
    with distributed.LocalCluster(**cluster_options) as cluster:
        with distributed.Client(cluster) as client:
            with pytest.raises(RuntimeError, match="2 of 4 runs failed"):
                sweep(spec, cache, executor="dask", client=client, progress=False)
            assert client.status == "running"  # a client passed in is left open


# --- spread and summary table -------------------------------------------------------------------------
def _accuracy_grid():
    """selected/final test accuracy over sigma_w (3) x seed (2) x optimizer (2), with known spreads."""
    selected = np.array(
        [
            [[60.0, 50.0], [62.0, 51.0]],  # sigma_w 0.5: seeds 0, 1; optimizers sgd, adam
            [[50.0, 52.0], [54.0, 50.0]],  # sigma_w 1.0
            [[40.0, 49.0], [38.0, 53.0]],  # sigma_w 2.0
        ]
    )
    coords = {"sigma_w": [0.5, 1.0, 2.0], "seed": [0, 1], "optimizer": ["sgd", "adam"]}
    dims = ("sigma_w", "seed", "optimizer")
    return xr.Dataset({"selected_test_acc": (dims, selected), "final_test_acc": (dims, selected + 1.0)}, coords=coords)


def test_spread_accepts_a_dataset_or_a_dataarray():
    ds = _accuracy_grid()
    per_seed = spread(ds)
    assert per_seed.dims == ("seed", "optimizer")
    assert per_seed.sel(seed=0, optimizer="sgd").item() == 20.0
    xr.testing.assert_identical(spread(ds["selected_test_acc"]), per_seed)
    with pytest.raises(ValueError, match="over"):
        spread(ds, over="depth")


def test_summary_table_treats_seeds_as_documented():
    table = summary_table(_accuracy_grid())
    assert list(table.index) == ["sgd", "adam"] and table.index.name == "optimizer"
    sgd = table.loc["sgd"]
    # cross-fitted: seed 0 measured where seed 1 is best (0.5) and worst (2.0): 60 - 40 = 20; seed 1 where seed 0
    # is: 62 - 38 = 24 -> 22, the printed estimator; the seed-mean curve 61, 52, 39 gives the raw spread 22 as well
    assert sgd["selected_spread_pp"] == pytest.approx(22.0)
    assert sgd["selected_raw_spread_pp"] == pytest.approx(22.0)
    assert sgd["selected_best_sigma_w"] == 0.5 and sgd["selected_worst_sigma_w"] == 2.0
    # the ledger's calibrated interval for 3 sigma_w x 2 seeds: se = sd(20, 24) / sqrt(2) = 2, critical values from
    # the committed table (wide with 2 seeds, and wider above, where the estimate is pulled from)
    c = critical("spread", 3, 2)
    assert (c.low, c.high) == pytest.approx((18.9929, 63.3859))
    assert sgd["selected_ci95_low"] == pytest.approx(22.0 - 2 * c.low)
    assert 22.0 + 2 * c.high > 100.0 and sgd["selected_ci95_high"] == 100.0  # clipped to what a spread can be
    assert sgd["selected_n_seeds"] == 2 and sgd["selected_estimator"] == "cross-fitted"
    # the null: 3 sigma_w x 2 seeds, 36 permutations; this ordering is the most extreme: p = 1/6 (the floor)
    assert sgd["selected_null_p"] == pytest.approx(1 / 6) and sgd["selected_null_mean_pp"] < 22.0
    adam = table.loc["adam"]  # the seeds disagree: each is measured where the other is best and worst
    assert adam["selected_spread_pp"] == pytest.approx(-3.0)  # seed 0: 49 - 52; seed 1: 50 - 53
    assert adam["selected_ci95_low"] == pytest.approx(-3.0) and adam["selected_ci95_high"] == pytest.approx(-3.0)
    assert adam["selected_raw_spread_pp"] == pytest.approx(0.5)
    assert adam["selected_worst_sigma_w"] == 0.5 and adam["selected_null_p"] > 0.5
    assert table.loc["sgd", "final_spread_pp"] == pytest.approx(22.0)


def test_summary_table_with_one_seed_and_explicit_by():
    one_seed = _accuracy_grid().isel(seed=0)
    table = summary_table(one_seed, by="optimizer")
    assert table.loc["sgd", "selected_raw_spread_pp"] == 20.0 == table.loc["sgd", "selected_spread_pp"]
    assert math.isnan(table.loc["sgd", "selected_ci95_low"]) and table.loc["sgd", "selected_n_seeds"] == 1
    with pytest.raises(ValueError, match="optimizer"):
        summary_table(_accuracy_grid(), by=[])


def _zipped_grid():
    """:func:`_accuracy_grid` with a learning rate zipped along the optimizers, as a sweep's spec gives it."""
    return _accuracy_grid().assign_coords(lr=("optimizer", [0.02, 0.001]))


def test_spread_lines_say_each_configurations_spread_with_its_interval():
    # sgd: cross-fitted 20 and 24 -> [22 - 2 c_low, 22 + 2 c_high] = [-16.0, 148.8] (the table's calibrated interval,
    # test above), clipped to what a spread can be; adam: both seeds -3 -> [-3.0, -3.0]
    assert spread_lines(_zipped_grid()) == [
        "SGD, learning rate 0.02: spread 22.0 pp [\u221216.0, 100.0, clipped] (95 % CI, calibrated t; cross-fitted, "
        "2 seeds)",
        "Adam, learning rate 0.001: spread \u22123.0 pp [\u22123.0, \u22123.0] (95 % CI, calibrated t; cross-fitted, "
        "2 seeds)",
    ]
    assert spread_lines(summary_table(_zipped_grid())) == spread_lines(_zipped_grid())
    # final = selected + 1: the same spreads; one configuration: the line is the sentence alone
    assert spread_lines(_zipped_grid().sel(optimizer="sgd"), variable="final", digits=2) == [
        "spread 22.00 pp [\u221215.99, 100.00, clipped] (95 % CI, calibrated t; cross-fitted, 2 seeds)"
    ]
    # one seed: its raw spread (sgd seed 0: 60 - 40; adam: 52 - 49), and no interval
    assert spread_lines(_zipped_grid().isel(seed=0)) == [
        "SGD, learning rate 0.02: spread 20.0 pp (raw, 1 seed: no interval)",
        "Adam, learning rate 0.001: spread 3.0 pp (raw, 1 seed: no interval)",
    ]
    # rows over two dims name both
    lines = spread_lines(_zipped_grid().expand_dims(batch_size=[64, 128]))
    assert (
        lines[1]
        == "batch size 64, Adam, learning rate 0.001: spread \u22123.0 pp [\u22123.0, \u22123.0] (95 % CI, calibrated t; "
        "cross-fitted, 2 seeds)"
    )
    assert len(lines) == 4 and lines[2].startswith("batch size 128, SGD, learning rate 0.02: spread 22.0 pp")
    with pytest.raises(ValueError, match="variable: allowed values are 'selected', 'final'; got 'best'"):
        spread_lines(_zipped_grid(), variable="best")
    with pytest.raises(ValueError, match="view='full'"):
        spread_lines(summary_table(_zipped_grid(), view="reader"))


def test_spread_lines_count_diverged_runs():
    ds = _zipped_grid().sel(optimizer="sgd")
    ds["diverged"] = xr.zeros_like(ds["selected_test_acc"])
    ds["diverged"].loc[{"sigma_w": 2.0, "seed": 1}] = 1.0
    # seed 1 drops out: one complete seed; the seed-mean curve 61, 52, 40 (seed 0 alone at 2.0): raw spread 21
    assert spread_lines(ds) == ["spread 21.0 pp (raw, 1 seed: no interval); 1 run diverged, left out"]


def test_summary_table_reader_view_is_a_short_table_with_units():
    table = summary_table(_zipped_grid(), view="reader")
    assert list(table.columns) == [
        "learning rate",
        "selected spread (pp), 95 % CI",
        "estimator",
        "seeds",
        "noise p (selected)",
        "best σ_w",
        "worst σ_w",
        "final spread (pp), 95 % CI",
    ]
    assert list(table.index) == ["SGD", "Adam"] and table.columns.name == "optimizer" and table.index.name is None
    assert table.loc["SGD"].tolist() == [
        "0.02",
        "22.0 [\u221216.0, 100.0, clipped]",
        "cross-fitted",
        "2",
        "0.17",
        "0.5",
        "2",
        "22.0 [\u221216.0, 100.0, clipped]",
    ]
    # a diverged run adds its column
    ds = _zipped_grid()
    ds["diverged"] = xr.zeros_like(ds["selected_test_acc"])
    ds["diverged"].loc[{"sigma_w": 2.0, "seed": 1, "optimizer": "adam"}] = 1.0
    shown = summary_table(ds, view="reader")
    assert shown["diverged runs"].tolist() == ["0", "1"]
    assert shown.loc["Adam", "estimator"] == "raw (1 seed)" and shown.loc["Adam", "seeds"] == "1"
    with pytest.raises(ValueError, match="view: allowed values are 'full', 'reader'; got 'pretty'"):
        summary_table(_zipped_grid(), view="pretty")
