"""Faults around training: corrupt or foreign cache files, unsafe checkpoints (issue: nothing lost, nothing
executed, nothing stuck)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import xarray as xr

from initmem.sweeps import CHECKSUM_ATTR, load_run, run_path, sweep, write_run
from initmem.training import load_checkpoint, train


def _spec(config):
    return {"base": config.to_dict(), "grid": {"sigma_w": [0.5, 2.0]}}


def test_corrupt_truncated_or_foreign_cached_runs_are_moved_aside_and_retrained(tiny_config, tmp_path, caplog):
    config = tiny_config.replace(epochs=1)
    first = sweep(_spec(config), tmp_path, progress=False)
    files = sorted(tmp_path.glob("*.nc"))
    assert len(files) == 2
    # truncate one file, flip one float inside the other (a readable file with a wrong number)
    files[0].write_bytes(files[0].read_bytes()[:300])
    with xr.load_dataset(files[1], engine="h5netcdf") as ds:
        tampered = ds.copy()
    tampered["selected_test_acc"] = tampered["selected_test_acc"] * 0 + 99.0
    tampered.to_netcdf(files[1], engine="h5netcdf")  # keeps the old checksum: content no longer matches
    again = sweep(_spec(config), tmp_path, progress=False)
    assert again.attrs["n_cached"] == 0
    assert len(list(tmp_path.glob("*.nc.rejected"))) == 2
    assert "corrupt" in caplog.text and "unreadable" in caplog.text
    xr.testing.assert_identical(first["selected_test_acc"], again["selected_test_acc"])


def test_checksum_survives_the_round_trip(tiny_config, tmp_path):
    ds = train(tiny_config.replace(epochs=1))
    path = run_path(tmp_path, tiny_config)
    write_run(ds, path)
    loaded = load_run(path, tiny_config.replace(epochs=1))
    assert loaded is not None and len(loaded.attrs[CHECKSUM_ATTR]) == 64
    assert load_run(path, tiny_config.replace(epochs=2)) is None  # another config: set aside, not trusted
    assert not path.exists() and path.with_name(path.name + ".rejected").exists()


class _Payload:
    def __reduce__(self):
        return (os.system, (f"touch {_Payload.marker}",))


@pytest.mark.parametrize("content", ["payload", "truncated", "garbage", "directory"])
def test_unsafe_or_corrupt_checkpoints_are_refused_and_training_starts_fresh(tiny_config, tmp_path, content, caplog):
    config = tiny_config.replace(epochs=2, checkpoint_every=1)
    checkpoint = tmp_path / "run.ckpt"
    _Payload.marker = tmp_path / "executed"
    if content == "payload":
        torch.save({"version": 2, "config_hash": config.hash(), "x": _Payload()}, checkpoint)
    elif content == "truncated":
        torch.save({"version": 2, "config_hash": config.hash(), "w": torch.zeros(1000)}, checkpoint)
        checkpoint.write_bytes(checkpoint.read_bytes()[:200])
    elif content == "garbage":
        checkpoint.write_bytes(b"\x00not a checkpoint" * 10)
    else:
        checkpoint.mkdir()
    assert load_checkpoint(checkpoint, config) is None
    assert not _Payload.marker.exists()  # nothing was executed
    assert "ignoring checkpoint" in caplog.text
    if content != "directory":
        assert checkpoint.with_name("run.ckpt.rejected").exists()
        ds = train(config, checkpoint_path=checkpoint)
        reference = train(config)
        np.testing.assert_array_equal(ds["test_acc"], reference["test_acc"])
