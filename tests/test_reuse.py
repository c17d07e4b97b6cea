"""Explorations build on the record: a run the record holds is read from there (read-only, checksum and hash
verified), only the others train, and the runner says so before anything runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import xarray as xr

from documented import EXPLORATION, EXPLORATION_REUSE  # tests/ is on sys.path under pytest
from initmem.base.paths import find_repo_root
from initmem.study.costs import results, reuse
from initmem.study.design import presets, registry
from initmem.sweeps import driver
from initmem.sweeps.driver import sweep
from initmem.sweeps.spec import SweepSpec
from initmem.sweeps.store import load_run, run_path, write_run

SRC = Path(results.__file__).resolve().parents[2]
ROOT = find_repo_root(start=SRC)
#: The Done-means exploration of issue 22: a subset of the committed grid of chapter 04.
SUBSET = {"batch_sizes": [64, 256]}


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def _no_training(monkeypatch) -> list:
    """Make every attempt to train a run fail the test; returns the list of attempts (empty if none)."""
    attempts: list = []

    def refuse(pending, *args, **kwargs):
        attempts.append(len(pending))
        if pending:
            pytest.fail(f"{len(pending)} runs were trained; all of them are in the record")
        return {}

    monkeypatch.setattr(driver, "_train_pending", refuse)
    return attempts


def _record_spec(name: str, **overrides) -> tuple[dict, dict]:
    p = {**presets.notebook_parameters("cpu", name), **overrides}
    return p, registry.experiment_spec(name, p)


@pytest.mark.skipif(not (ROOT / "results" / "cpu" / "04_batch_size" / "runs").is_dir(), reason="no committed record")
def test_a_subset_of_the_committed_grid_reads_every_run_from_the_record_and_trains_none(tmp_path, monkeypatch):
    """Chapter 04 with batch_sizes [64, 256] (the committed grid has 16, 64 and 256): every run is counted as reused
    before anything runs, no training function is called, and the record's files are neither changed nor moved."""
    attempts = _no_training(monkeypatch)
    record = ROOT / "results"
    p, spec = _record_spec("04_batch_size", **SUBSET)
    stores = reuse.record_stores(tmp_path, "cpu", record)
    assert record / "cpu" / "04_batch_size" / "runs" in stores
    runs_dir = tmp_path / "cpu" / "04_batch_size" / "runs"
    plan = reuse.plan_runs("04_batch_size", spec, runs_dir, p["executor"], p["workers"], stores)
    n = 2 * len(p["epochs_grid"] or [p["steps"]]) * len(p["sigma_ws"]) * len(p["seeds"])  # two batch sizes
    assert (len(plan.reused), len(plan.cached), len(plan.to_train), plan.seconds) == (n, 0, 0, 0.0)
    assert plan.summary() == f"04_batch_size: {n} runs: {n} reused from the record, 0 in its own cache, 0 to train"
    before = _snapshot(record / "cpu")
    ds = results.run_experiment(
        "04_batch_size",
        spec,
        preset="cpu",
        results_dir=tmp_path,
        executor=p["executor"],
        workers=p["workers"],
        train_missing=False,
        reuse=stores,
        progress=False,
    )
    assert (int(ds.attrs["n_reused"]), int(ds.attrs["n_cached"]), int(ds.attrs["n_runs"])) == (n, 0, n)
    assert sorted(ds["batch_size"].values.tolist()) == [64, 256]
    assert attempts in ([], [0])  # the training function was never asked to train anything
    assert not list(runs_dir.glob("*.nc"))  # reused runs are read in place, not copied
    assert (tmp_path / "cpu" / "04_batch_size.nc").is_file()  # the exploration's own combined file
    assert _snapshot(record / "cpu") == before


def test_an_exploration_reuses_every_store_of_the_record_and_the_record_its_other_chapters(tmp_path):
    record = tmp_path / "results"
    (record / "cpu" / "01_x" / "runs").mkdir(parents=True)
    (record / "cpu" / "11_y" / "runs").mkdir(parents=True)
    (record / "cpu" / "notes").mkdir()  # not a run store
    both = [record / "cpu" / "01_x" / "runs", record / "cpu" / "11_y" / "runs"]
    assert reuse.record_stores(tmp_path / "explore", "cpu", record) == both
    assert reuse.record_stores(tmp_path / "explore", "cpu", record, own="01_x") == both
    assert reuse.record_stores(tmp_path / "explore", "cpu", record, own="11_y") == both[::-1]  # its own first
    assert reuse.record_stores(record, "cpu", record, own="11_y") == both[:1]  # the record: its other chapters'
    assert reuse.record_stores(record, "cpu", record, own="01_x") == both[1:]
    assert reuse.record_stores(tmp_path / "explore", "smoke", record) == []  # another preset's runs are not there


def test_an_exploration_reads_a_run_both_chapters_hold_from_its_own_chapters_record(tmp_path, monkeypatch):
    """The same run (hash ``abc``) committed by 01_x and by 11_y from different commits, as 01's and the ladder's
    first rung are: an exploration of 11_y reads 11_y's file, for its numbers (the sweep's reuse) and for its
    provenance (run_attributes), and an exploration of 01_x reads 01_x's."""
    record = tmp_path / "results"
    for name, commit in (("01_x", "one"), ("11_y", "eleven")):
        write_run(
            xr.Dataset({"acc": ((), 50.0 + len(commit))}, attrs={"git_commit": commit}),
            record / "cpu" / name / "runs" / "abc.nc",
        )
    monkeypatch.setattr(reuse, "record_dir", lambda root=None: record)
    job = SimpleNamespace(path=Path("anywhere/abc.nc"))  # reusable reads only the file's name
    for name, commit in (("01_x", "one"), ("11_y", "eleven")):
        stores = reuse.record_stores(tmp_path / "explore", "cpu", own=name)
        assert driver.reusable(job, stores) == record / "cpu" / name / "runs" / "abc.nc"
        runs_dir = tmp_path / "explore" / "cpu" / name / "runs"
        ds = xr.Dataset({"run_hash": (("seed",), ["abc"])})
        ((point, attrs),) = list(results.run_attributes(ds, runs_dir))
        assert point == {"seed": 0} and attrs["git_commit"] == commit


@pytest.mark.skipif(not (ROOT / "results" / "cpu" / "01_optimizers" / "runs").is_dir(), reason="no committed record")
def test_the_ladders_runs_that_01_holds_are_read_from_01s_runs_in_a_record_without_11s(tmp_path):
    """A record holding 01's cpu runs and none of 11's: the ladder's first-rung runs that are 01's (SGD and Adam at
    sigma_w 0.1 and 2.5, seeds 0-4: 20 runs) are read from 01's runs; the rest (seeds 5-7, the larger lr, the
    further rungs) would train."""
    record = tmp_path / "results"
    (record / "cpu" / "01_optimizers").mkdir(parents=True)
    (record / "cpu" / "01_optimizers" / "runs").symlink_to(ROOT / "results" / "cpu" / "01_optimizers" / "runs")
    p = presets.notebook_parameters("cpu", "11_scale_ladder")
    plan = reuse.notebook_plan("11_scale_ladder", p, record, "cpu", record=record)
    total = SweepSpec.from_dict(registry.experiment_spec("11_scale_ladder", p)).n_runs
    assert (len(plan.reused), len(plan.cached), len(plan.to_train)) == (20, 0, total - 20)


def test_a_damaged_record_run_is_trained_again_and_left_in_place(tiny_config, tmp_path, caplog):
    """A record file whose content does not match its checksum is not reused (one warning line) and not moved aside:
    the record is read-only. The run trains into the exploration's own store; the intact one is reused."""
    spec = {"base": tiny_config.to_dict(), "grid": {"sigma_w": [0.5, 2.0]}}
    store = tmp_path / "record" / "smoke" / "01_x" / "runs"
    first = sweep(spec, store, progress=False)
    assert first.attrs["n_reused"] == 0
    configs = [tiny_config.replace(sigma_w=s) for s in (0.5, 2.0)]
    damaged = run_path(store, configs[1])
    ds = xr.load_dataset(damaged, engine="h5netcdf")
    ds["selected_test_acc"] = ds["selected_test_acc"] + 1.0  # its checksum attribute stays: no longer its content
    ds.to_netcdf(damaged, engine="h5netcdf")
    before = _snapshot(store)
    own = tmp_path / "explore" / "runs"
    with caplog.at_level("WARNING"):
        again = sweep(spec, own, progress=False, reuse=[store])
    assert (again.attrs["n_reused"], again.attrs["n_cached"]) == (1, 0)
    assert "not reusing the run" in caplog.text and str(damaged) in caplog.text
    assert _snapshot(store) == before and not list(store.glob("*.rejected"))
    assert sorted(p.name for p in own.glob("*.nc")) == [run_path(own, configs[1]).name]  # only the damaged one


def test_a_foreign_file_under_a_runs_name_is_not_reused(tiny_config, tmp_path):
    """A record file with the right name but another run's content (another config_hash) trains the run instead."""
    store = tmp_path / "record"
    a, b = tiny_config.replace(sigma_w=0.5), tiny_config.replace(sigma_w=2.0)
    sweep({"base": a.to_dict(), "grid": {"seed": [0]}}, store, progress=False)
    store.mkdir(exist_ok=True)
    write_run(load_run(run_path(store, a)), run_path(store, b))  # b's name, a's run
    ds = sweep({"base": b.to_dict(), "grid": {"seed": [0]}}, tmp_path / "own", progress=False, reuse=[store])
    assert (ds.attrs["n_reused"], ds.attrs["n_cached"]) == (0, 0)
    assert run_path(tmp_path / "own", b).is_file()


@pytest.mark.slow
@pytest.mark.skipif(not (ROOT / "results" / "cpu" / "04_batch_size" / "runs").is_dir(), reason="no committed record")
def test_the_done_means_command_trains_nothing_and_prints_the_page(tmp_path):
    """``initmem experiments --preset cpu --only 04 -p batch_sizes "[64, 256]"`` on a copy of the checkout (its
    notebooks, its source, its committed record and book): the runner announces every run as reused before the kernel
    starts, nothing is written into the exploration's run store (nothing trained), and the printed page exists, with the
    banner naming the parameter and the figure drawn over the record."""
    copy = tmp_path / "clone"
    copy.mkdir()
    for item in ("pyproject.toml", "_config.yml", "_toc.yml", "notebooks", "book", "src"):
        source = ROOT / item
        (
            shutil.copytree(source, copy / item, ignore=shutil.ignore_patterns("_build", "__pycache__", "_failed"))
            if source.is_dir()
            else shutil.copy2(source, copy / item)
        )
    shutil.copytree(ROOT / "results" / "cpu", copy / "results" / "cpu")
    env = {k: v for k, v in os.environ.items() if k not in ("INITMEM_ROOT", "PYTHONPATH")}
    env["PYTHONPATH"] = str(copy / "src")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "initmem", *EXPLORATION],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    seconds = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert EXPLORATION_REUSE in proc.stdout
    folder = next((copy / "results" / "explore").glob("cpu-*"))
    assert not list((folder / "cpu" / "04_batch_size" / "runs").glob("*.nc"))  # nothing trained
    page_line = next(line for line in proc.stdout.splitlines() if line.startswith("04_batch_size: file://"))
    page = Path(page_line.split("file://", 1)[1])
    html = page.read_text(encoding="utf-8")
    assert "Exploration, not the committed record" in html and "batch_sizes" in html
    assert "committed record" in html  # the overlay's legend
    print(f"the Done-means command took {seconds:.0f} s")


def test_the_record_is_drawn_beside_an_exploration_at_its_own_preset_only(tmp_path, monkeypatch):
    """An exploration at the record's preset gets the record's Dataset to draw and tabulate beside its own; one at
    another preset (synthetic 16-pixel smoke runs against the cpu CIFAR record) gets None, and so does the record."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "initmem"\n')
    monkeypatch.setenv("INITMEM_ROOT", str(tmp_path))
    name = "01_optimizers"
    assert presets.book_preset(name) == "cpu"
    write_run(
        xr.Dataset({"a": ("x", [1.0, 2.0])}, attrs={"preset": "cpu"}), tmp_path / "results" / "cpu" / f"{name}.nc"
    )
    mine = tmp_path / "results" / "explore" / "mine"
    assert reuse.record_results(name, "cpu", mine)["a"].values.tolist() == [1.0, 2.0]
    assert reuse.record_results(name, "smoke", mine) is None
    assert reuse.record_results(name, "cpu", tmp_path / "results") is None
