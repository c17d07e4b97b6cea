"""The one checked read: every file :func:`write_run` writes (a run, a combined sweep, the GPU results) is read back
through :func:`read_checked`, which verifies its checksum or says that it predates checksums."""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from initmem.cli.flags import recorded_config
from initmem.run.config import ConfigError
from initmem.study.costs import costs, results
from initmem.study.design.layout import results_paths
from initmem.study.verdicts import gpu_results
from initmem.sweeps.store import CHECKSUM_ATTR, ChecksumError, load_run, read_checked, write_run


def _dataset() -> xr.Dataset:
    """A small Dataset shaped like a combined sweep, with the provenance a run file carries."""
    rng = np.random.default_rng(0)
    return xr.Dataset(
        {"selected_test_acc": (("sigma_w", "seed"), rng.uniform(10, 90, (3, 2))), "wall_time_s": ((), 12.5)},
        coords={"sigma_w": [0.5, 1.0, 2.0], "seed": [0, 1]},
        attrs={"config": json.dumps({"sigma_w": 0.5}), "config_hash": "abc", "hardware": "cpu", "torch_version": "2"},
    )


def _tamper(path) -> None:
    """Change one number and write the file back with its old checksum (a readable file with a wrong value)."""
    tampered = xr.load_dataset(path, engine="h5netcdf")
    tampered["selected_test_acc"][0, 0] = 99.0
    tampered.to_netcdf(path, engine="h5netcdf")


def test_read_checked_returns_what_write_run_wrote(tmp_path):
    path = tmp_path / "run.nc"
    write_run(_dataset(), path)
    ds = read_checked(path)
    assert len(ds.attrs[CHECKSUM_ATTR]) == 64
    xr.testing.assert_identical(ds.drop_attrs(), _dataset().drop_attrs())
    path.unlink()  # fully in memory, the file closed
    assert float(ds["wall_time_s"]) == 12.5


def test_a_mostly_missing_grid_is_written_compressed_and_read_back_exactly(tmp_path):
    """A combined sweep is a dense grid over its design's factors, mostly missing cells (the ladder's is 98 % NaN)."""
    values = np.full((8, 8, 31, 100), np.nan)
    values[0, :, :, :] = np.random.default_rng(0).normal(size=(8, 31, 100))
    ds = xr.Dataset({"layer_norm": (("rung", "seed", "epoch", "layer"), values)})
    path = tmp_path / "combined.nc"
    write_run(ds, path)
    assert path.stat().st_size < values.nbytes / 4  # 1/8 of the cells hold numbers that do not compress
    xr.testing.assert_identical(read_checked(path).drop_attrs(), ds)


def test_a_runs_small_arrays_are_stored_unfiltered_so_its_file_is_no_larger_than_written_plain(tmp_path):
    """A chunked, filtered array carries an index of about 1 kB: on a run's per-epoch curves it would double the file."""
    curves = {f"curve_{i}": ("epoch", np.linspace(0, 1, 31) + i) for i in range(30)}
    ds = xr.Dataset(curves, coords={"epoch": np.arange(31)})
    plain, written = tmp_path / "plain.nc", tmp_path / "written.nc"
    ds.attrs[CHECKSUM_ATTR] = "0" * 64  # what write_run adds, so that both files hold the same
    ds.to_netcdf(plain, engine="h5netcdf")
    write_run(ds, written)
    assert written.stat().st_size <= plain.stat().st_size


def test_equal_content_gives_equal_bytes_whatever_encoding_it_was_read_with(tmp_path):
    first, again = tmp_path / "first.nc", tmp_path / "again.nc"
    write_run(_dataset(), first)
    read_back = xr.load_dataset(first, engine="h5netcdf")
    read_back["selected_test_acc"].encoding.update(chunksizes=(1, 1), complevel=9)  # what another writer might carry
    write_run(read_back, again)
    assert first.read_bytes() == again.read_bytes()


def test_a_tampered_combined_file_is_refused_with_a_clear_message(tmp_path):
    runs_dir, combined = results_paths(tmp_path, "test", "01_optimizers")
    runs_dir.mkdir(parents=True)
    write_run(_dataset(), combined)
    write_run(_dataset(), runs_dir / "abc.nc")
    gpu = tmp_path / "gpu"
    gpu.mkdir()
    write_run(_dataset(), gpu / "11_scale_ladder.nc")
    assert results.read_results(tmp_path, "test", "01_optimizers", reader="06_norms")["seed"].size == 2
    for path in (combined, runs_dir / "abc.nc", gpu / "11_scale_ladder.nc"):
        _tamper(path)
    with pytest.raises(ChecksumError) as error:
        read_checked(combined)
    message = str(error.value)
    assert str(combined) in message and "does not match its checksum" in message and "\n" not in message
    again = pickle.loads(pickle.dumps(error.value))  # a worker process can send it back whole
    assert str(again) == message and again.reason == error.value.reason
    # every reader of the study goes through it
    match = "refused, its content does not match its checksum"
    with pytest.raises(ChecksumError, match=match):
        results.read_results(tmp_path, "test", "01_optimizers", reader="06_norms")
    with pytest.raises(ChecksumError, match=match):
        results.load_results(tmp_path, "test", ["01_optimizers"])
    with pytest.raises(ChecksumError, match=match):
        gpu_results.load_rung(tmp_path)  # its results_dir/gpu/11_scale_ladder.nc
    with pytest.raises(ChecksumError, match=match):
        costs.measured_costs(tmp_path, "test", ["01_optimizers"])
    with pytest.raises(ConfigError, match=f"--config: .*abc.nc: {match}"):
        recorded_config(runs_dir / "abc.nc")
    # the cache sets a tampered run aside (and trains it again)
    assert load_run(runs_dir / "abc.nc") is None and (runs_dir / "abc.nc.rejected").exists()


def test_a_file_that_predates_checksums_is_read_with_a_logged_line(tmp_path, caplog):
    old = tmp_path / "old.nc"
    _dataset().to_netcdf(old, engine="h5netcdf")  # written before write_run added the checksum
    with caplog.at_level(logging.WARNING, logger="initmem.sweeps.store"):
        ds = read_checked(old)
    assert float(ds["wall_time_s"]) == 12.5
    assert "predates checksums" in caplog.text and str(old) in caplog.text and len(caplog.records) == 1
    with pytest.raises(ChecksumError, match="it has no checksum"):
        read_checked(old, require_checksum=True)
    assert load_run(old) is None and not old.exists()  # a cached run must have one: set aside, trained again


def test_the_results_writer_is_the_only_writer_of_netcdf():
    """Every netCDF the package, its scripts and its benchmarks write goes through write_run (atomic, checksummed,
    compressed as the record is, encoded in memory with h5netcdf): no module calls ``to_netcdf``, and only the store
    opens an h5netcdf file for writing."""
    root = Path(__file__).resolve().parents[1]
    writers = [
        path.relative_to(root).as_posix()
        for folder in ("src", "scripts", "benchmarks")
        for path in sorted((root / folder).rglob("*.py"))
        if ".to_netcdf(" in (text := path.read_text()) or "h5netcdf.File(" in text
    ]
    assert writers == ["src/initmem/sweeps/store.py"]


def test_a_scripts_result_is_read_with_its_checksum_or_refused_and_an_absent_one_is_noted(tmp_path):
    from initmem.base.reads import noted

    path = tmp_path / "error_rates.nc"
    assert results.read_if_present(path) is None
    assert str(path.resolve()) in noted()  # looked for: a page that reads it re-executes when it appears
    write_run(_dataset(), path)
    xr.testing.assert_equal(results.read_if_present(path), _dataset())
    _dataset().to_netcdf(path, engine="h5netcdf")  # written without a checksum
    with pytest.raises(ChecksumError, match="no checksum"):
        results.read_if_present(path)
