"""Runs of one configuration trained twice (initmem.study.costs.replays): found, copies ignored, differences measured."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import xarray as xr

from initmem.study.costs.replays import replay_pairs, replay_summary
from initmem.sweeps.store import write_run


def _run(acc: float, created: str, hardware: str = "cpu A") -> xr.Dataset:
    return xr.Dataset(
        {"selected_test_acc": ((), acc), "final_test_acc": ((), acc + 1.0)},
        attrs={"config_hash": "abc123", "created": created, "git_commit": "f00", "hardware": hardware},
    )


def test_replays_are_separately_trained_files_of_one_configuration(tmp_path):
    runs = {name: tmp_path / "cpu" / name / "runs" for name in ("01_optimizers", "09_adaptive_lr", "03_lr_and_l2")}
    for folder in runs.values():
        folder.mkdir(parents=True)
    write_run(_run(60.0, "2026-11-01T00:00:00"), runs["01_optimizers"] / "abc123.nc")
    write_run(_run(57.5, "2026-12-01T00:00:00", "cpu B"), runs["09_adaptive_lr"] / "abc123.nc")
    shutil.copy2(runs["01_optimizers"] / "abc123.nc", runs["03_lr_and_l2"] / "abc123.nc")  # a copy: no replay
    write_run(_run(50.0, "2026-11-01T00:00:00").assign_attrs(config_hash="other"), runs["03_lr_and_l2"] / "other.nc")
    pairs = replay_pairs(tmp_path, "cpu")
    assert len(pairs) == 1 and {pairs.loc[0, "experiment_a"], pairs.loc[0, "experiment_b"]} <= set(runs)
    assert pairs.loc[0, "selected_delta"] == pytest.approx(2.5) and pairs.loc[0, "final_delta"] == pytest.approx(2.5)
    text = replay_summary(pairs)
    assert text == (
        "Of 1 pairs of runs of one configuration trained twice in this record (1 of them on differently "
        "described hardware), 1 differ, the selected test accuracy by 2.5 pp on average and up to 2.5 pp."
    )
    assert replay_summary(pairs.iloc[:0]) == "The record holds no configuration trained twice."
    assert np.isfinite(pairs["selected_delta"]).all()
