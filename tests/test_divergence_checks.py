"""The training batches' divergence checks (initmem.run.loop.BatchChecks): the losses stay on the device and are
checked every DIVERGENCE_CHECK_EVERY batches and at each epoch's end, which changes no run's numbers, and a run that
diverges still stops in the same epoch with the same reason. The tiny run takes 4 steps an epoch: an interval of 1
checks before every step (the rule as it was, batch by batch), 3 checks mid-epoch and at the end, 50 only at the end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr

import initmem.run.loop as loop
import initmem.run.stacked as stacked_module
from initmem.run.config import RunConfig
from initmem.run.loop import BatchChecks, DivergenceWatch
from initmem.run.records import hardware_facts
from initmem.run.stacked import train_stacked
from initmem.run.training import train
from initmem.run.variables import TIMINGS
from tiny import TINY_RUN  # tests/ is on sys.path under pytest

BASE = RunConfig(**TINY_RUN, epochs=3, lr=0.05)
INTERVALS = (1, 3, 50)
REPO = Path(__file__).resolve().parents[1]


def _numbers(ds: xr.Dataset) -> xr.Dataset:
    """Every recorded number but the timings, and the reason a run diverged."""
    return ds.drop_vars(list(TIMINGS), errors="ignore").drop_attrs().assign_attrs(divergence=ds.attrs["divergence"])


def _each_interval(monkeypatch, trainer) -> list:
    out = []
    for every in INTERVALS:
        monkeypatch.setattr(loop, "DIVERGENCE_CHECK_EVERY", every)
        out.append(trainer())
    return out


@pytest.mark.parametrize(
    ("optimizer", "lr"), [("sgd", 0.05), ("adam", 5e-3), ("sgd", 1e6)], ids=["sgd", "adam", "diverging"]
)
def test_a_run_is_the_same_at_every_check_interval(monkeypatch, optimizer, lr):
    runs = _each_interval(monkeypatch, lambda: _numbers(train(BASE.replace(optimizer=optimizer, lr=lr))))
    for ds in runs[1:]:
        xr.testing.assert_identical(ds, runs[0])
    if lr > 1:  # lr 1e6: a batch loss leaves 1e6 x its epoch-0 value in the first epoch
        assert runs[0]["diverged"].item() == 1.0 and "in epoch 1, over 1e+06 x" in runs[0].attrs["divergence"]
    else:
        assert runs[0]["diverged"].item() == 0.0 and runs[0].attrs["divergence"] == ""


def test_a_stack_is_the_same_at_every_check_interval_and_a_diverging_member_stops_alone(monkeypatch):
    configs = [BASE.replace(sigma_w=s) for s in (0.5, 1.0, 2.0)]
    real_losses = stacked_module._member_losses

    def stack():
        calls = {"n": 0}

        def poisoned(logits, y, reduction):  # the middle member's training losses are NaN from the 6th step (epoch 2)
            losses = real_losses(logits, y, reduction)
            if reduction == "mean":
                calls["n"] += 1
                if calls["n"] >= 6:
                    losses = losses * torch.tensor([1.0, math.nan, 1.0])
            return losses

        monkeypatch.setattr(stacked_module, "_member_losses", poisoned)
        return [_numbers(ds) for ds in train_stacked(configs)]

    runs = _each_interval(monkeypatch, stack)
    for members in runs[1:]:
        for ds, first in zip(members, runs[0]):
            xr.testing.assert_identical(ds, first)
    healthy, sick, _ = runs[0]
    assert sick.attrs["divergence"] == "a training batch's loss is nan in epoch 2" and sick["diverged"].item() == 1.0
    assert np.isfinite(sick["test_acc"].sel(epoch=1).item()) and np.isnan(sick["test_acc"].sel(epoch=2).item())
    assert healthy["diverged"].item() == 0.0 and np.isfinite(healthy["test_acc"].sel(epoch=3).item())


def test_the_checks_read_the_device_once_per_check(monkeypatch):
    reads = []
    real = BatchChecks.check

    def counted(self, epoch):
        reads.append(len(self.queued))
        return real(self, epoch)

    monkeypatch.setattr(BatchChecks, "check", counted)
    monkeypatch.setattr(loop, "DIVERGENCE_CHECK_EVERY", 3)
    train(BASE)
    assert reads == [3, 1] * 3  # per epoch of 4 steps: a check after 3 batches, one at its end


def test_the_batch_checks_apply_the_watch_rule():
    watches = [DivergenceWatch.of({"train_loss": 2.0, "weight_norm": 1.0}), DivergenceWatch(0.0, 1.0)]
    checks = BatchChecks(watches, every=2)
    assert watches[0].loss_limit == 2.0e6 and watches[1].loss_limit == math.inf  # a zero epoch-0 loss: finiteness
    assert checks.check(1) == ["", ""]  # nothing queued
    assert not checks.add(torch.tensor([2.0e6, 1e30])) and checks.add(torch.tensor([1.0, 2.0]))
    assert checks.check(1) == ["", ""] and checks.queued == []  # at the limit is not over it
    checks.add(torch.tensor([1.0, math.inf]))
    checks.add(torch.tensor([3.0e6, math.nan]))
    checks.add(torch.tensor([math.nan, 1.0]))
    first, second = checks.check(4)
    assert first == watches[0].batch(3.0e6, 4) and first.startswith("a training batch's loss is 3e+06 in epoch 4")
    assert second == "a training batch's loss is inf in epoch 4"  # its first exploding batch's reason
    single = BatchChecks.of([watches[0]])
    assert single.every == loop.DIVERGENCE_CHECK_EVERY
    single.add(torch.tensor(float(np.float32(2.0e6 + 0.25))))  # a float32 loss just over the limit
    assert single.check(1)[0].startswith("a training batch's loss is 2e+06 in epoch 1, over 1e+06 x")


def _committed_smoke_runs(count: int) -> list[Path]:
    return sorted((REPO / "results" / "smoke" / "10_phase_diagram" / "runs").glob("*.nc"))[:count]


@pytest.mark.parametrize("path", _committed_smoke_runs(2), ids=lambda p: p.stem)
def test_committed_runs_replay_bit_for_bit(path):
    committed = xr.load_dataset(path, engine="h5netcdf")
    config = RunConfig(**json.loads(committed.attrs["config"]))
    facts = hardware_facts(torch.device("cpu"))
    if any(committed.attrs.get(key) != value for key, value in facts.items()):
        pytest.skip(f"{path.name} was trained on other hardware ({committed.attrs.get('hardware')})")
    assert config.hash() == committed.attrs["config_hash"]
    replayed = _numbers(train(config))
    xr.testing.assert_identical(replayed[list(_numbers(committed).data_vars)], _numbers(committed))
