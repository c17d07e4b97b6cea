"""Stacked training: K sigma_w values as one vmapped model equal K separate runs."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
import xarray as xr

import initmem.run.stacked as stacked_module
from initmem.run import optimizers
from initmem.run.config import RunConfig
from initmem.run.stacked import group_hash, stack_groups, stack_key, train_stacked
from initmem.run.training import train
from initmem.run.variables import TIMINGS
from initmem.sweeps.driver import sweep
from initmem.sweeps.executors import prepared_data
from initmem.sweeps.store import run_path
from tiny import TINY_RUN  # tests/ is on sys.path under pytest

BASE = RunConfig(**TINY_RUN, epochs=2)
SIGMAS = (0.5, 1.0, 2.0)
CONTINUOUS = ("train_loss", "val_loss", "test_loss", "weight_norm", "dist_from_init", "layer_norm")


def _comparable(ds: xr.Dataset) -> xr.Dataset:
    return ds.drop_vars(list(TIMINGS)).drop_attrs()


#: Every optimizer whose record declares an elementwise update (it trains stacked), at its record's defaults: a new
#: elementwise optimizer's stacked training is tested by registering it.
STACKABLE = [r for r in optimizers.records() if r.elementwise]


@pytest.mark.parametrize("record", STACKABLE, ids=[r.name for r in STACKABLE])
def test_stacked_equals_separate_runs(record):
    settings = {"lr": 0.05, "weight_decay": 1e-3, **record.defaults}  # decay too, unless the record sets its own
    configs = [BASE.replace(sigma_w=s, optimizer=record.name, **settings) for s in SIGMAS]
    data = prepared_data(configs[0])
    stacked = train_stacked(configs, data=data)
    for config, ds in zip(configs, stacked):
        alone = train(config.replace(channels_last=False), data=data)  # the stacked model is NCHW
        # same structure: variables, dims, coordinates, attributes (plus stacked=K)
        assert set(ds.data_vars) == set(alone.data_vars)
        assert dict(ds.sizes) == dict(alone.sizes) and list(ds.layer.values) == list(alone.layer.values)
        assert set(ds.attrs) == set(alone.attrs) | {"stacked"} and ds.attrs["stacked"] == len(SIGMAS)
        assert ds.attrs["config_hash"] == config.hash()
        for name in CONTINUOUS:  # rounding differences grow over the steps (measured up to 1.3e-4 after 4 steps)
            np.testing.assert_allclose(ds[name], alone[name], rtol=1e-3, err_msg=name)
        # accuracies count images: identical unless a logit sits within rounding of a tie
        for name in ("train_acc", "val_acc", "test_acc"):
            np.testing.assert_allclose(ds[name], alone[name], atol=1.0, err_msg=name)
        for name in ("lr", "step", "T_SGD", "T_L2", "T_adapt", "diverged"):
            np.testing.assert_array_equal(ds[name], alone[name], err_msg=name)
        # epoch 0 is measured on the real modules, exactly as train() does
        xr.testing.assert_identical(_comparable(ds.sel(epoch=0)), _comparable(alone.sel(epoch=0)))


def test_stacked_bf16_runs_in_bfloat16_on_the_cpu_as_separate_runs_do():
    configs = [BASE.replace(sigma_w=s, epochs=1, lr=0.05) for s in SIGMAS[:2]]
    fp32 = train_stacked(configs)
    bf16 = train_stacked([c.replace(bf16=True) for c in configs])
    for a, b in zip(fp32, bf16):
        assert (a.attrs["autocast_dtype"], b.attrs["autocast_dtype"]) == ("none", "bfloat16")
        assert (a["layer_norm"].sel(epoch=1) != b["layer_norm"].sel(epoch=1)).all()


def test_groups_share_everything_but_the_initialisation():
    a, b = BASE.replace(sigma_w=0.5), BASE.replace(sigma_w=2.0, seed=1, data_seed=0)
    other_lr = BASE.replace(lr=0.5)
    # a seed also sets the data order unless data_seed is given: then the runs cannot share a stack
    assert stack_key(BASE.replace(seed=1)) != stack_key(a)
    # every optimizer whose record's update is not elementwise (Muon's per-matrix one) trains run by run
    alone = [
        BASE.replace(optimizer=r.name, sigma_w=s) for r in optimizers.records() if not r.elementwise for s in SIGMAS
    ]
    assert stack_key(a) == stack_key(b) != stack_key(other_lr)
    groups = stack_groups([a, other_lr, b, *alone])
    assert groups[:2] == [[a, b], [other_lr]]
    assert alone and groups[2:] == [[m] for m in alone]
    five = [BASE.replace(sigma_w=s) for s in (0.1, 0.2, 0.3, 0.4, 0.5)]
    assert stack_groups(five, max_size=2) == [five[:2], five[2:4], five[4:]]
    assert group_hash([a, b]) != group_hash([b, a])
    with pytest.raises(ValueError, match="may differ only in"):
        train_stacked([a, other_lr])


def test_a_diverging_member_stops_alone(monkeypatch):
    configs = [BASE.replace(sigma_w=s) for s in (0.5, 2.0)]
    real_losses = stacked_module._member_losses
    calls = {"n": 0}

    def poisoned(logits, y, reduction):
        losses = real_losses(logits, y, reduction)
        if reduction == "mean":  # a training step; the 6th and later are in epoch 2 (4 steps per epoch)
            calls["n"] += 1
            if calls["n"] >= 6:
                losses = losses * torch.tensor([1.0, float("nan")])
        return losses

    monkeypatch.setattr(stacked_module, "_member_losses", poisoned)
    healthy, sick = train_stacked(configs)
    assert sick["diverged"].item() == 1.0 and healthy["diverged"].item() == 0.0
    assert np.isfinite(sick["test_acc"].sel(epoch=1).item()) and np.isnan(sick["test_acc"].sel(epoch=2).item())
    assert np.isfinite(healthy["test_acc"].sel(epoch=2).item())


def test_stacked_resume_equals_uninterrupted(tmp_path, interrupted_at_epoch):
    configs = [BASE.replace(sigma_w=s, epochs=3, checkpoint_every=1, optimizer="sgd_momentum") for s in (0.5, 2.0)]
    data = prepared_data(configs[0])
    reference = train_stacked(configs, data=data)

    checkpoint = tmp_path / "stack.ckpt"
    with interrupted_at_epoch(3):
        train_stacked(configs, data=data, checkpoint_path=checkpoint)
    assert checkpoint.exists()
    resumed = train_stacked(configs, data=data, checkpoint_path=checkpoint)
    assert not checkpoint.exists()
    for a, b in zip(reference, resumed):
        xr.testing.assert_identical(_comparable(a), _comparable(b))


@pytest.mark.parametrize("old_checkpoint", [False, True], ids=["fresh", "resumed-without-cpu-time"])
def test_stacked_members_share_the_stacks_seconds(tmp_path, interrupted_at_epoch, ticking_clocks, old_checkpoint):
    """Clocks ticking 1 s (wall) and 0.5 s (CPU) a reading: each member's epoch 0 is its own tick, each of the 3
    epochs a tick shared by the 2 members. Resumed from a checkpoint without CPU times (written before they were
    recorded), the wall times carry on and the CPU times are NaN."""
    import torch

    ticking_clocks(wall=1.0, cpu=0.5)
    configs = [BASE.replace(sigma_w=s, epochs=3, checkpoint_every=1) for s in (0.5, 2.0)]
    data = prepared_data(configs[0])
    checkpoint = tmp_path / "stack.ckpt"
    if old_checkpoint:
        with interrupted_at_epoch(3):
            train_stacked(configs, data=data, checkpoint_path=checkpoint)
        state = torch.load(checkpoint, weights_only=True)
        del state["cpus"]
        torch.save(state, checkpoint)
    runs = train_stacked(configs, data=data, checkpoint_path=checkpoint)
    assert [float(ds["wall_time_s"]) for ds in runs] == [2.5, 2.5]
    cpu = [float(ds["cpu_time_s"]) for ds in runs]
    assert all(map(np.isnan, cpu)) if old_checkpoint else cpu == [1.25, 1.25]


def test_stacked_runs_never_share_a_cache_file_with_sequential_runs(tmp_path, monkeypatch, caplog):
    base = {**BASE.to_dict(), "epochs": 1}
    spec = {"base": base, "grid": {"sigma_w": [0.5, 2.0]}, "zip": {"optimizer": ["sgd", "muon"], "lr": [0.05, 0.02]}}
    with caplog.at_level(logging.INFO, logger="initmem"):
        ds = sweep(spec, tmp_path, executor="stacked", progress=False)
    assert ds["test_acc"].dims == ("sigma_w", "optimizer", "epoch")
    sgd_config = RunConfig.from_dict({**base, "sigma_w": 0.5, "lr": 0.05})
    assert not run_path(tmp_path, sgd_config).exists()
    sgd_run = xr.load_dataset(run_path(tmp_path, sgd_config, stacked=2), engine="h5netcdf")
    assert sgd_run.attrs["stacked"] == 2
    muon_config = RunConfig.from_dict({**base, "sigma_w": 0.5, "optimizer": "muon", "lr": 0.02})
    muon_run = xr.load_dataset(run_path(tmp_path, muon_config), engine="h5netcdf")
    assert muon_run.attrs["stacked"] == 0  # muon was trained by train() one run at a time
    assert "one at a time" in caplog.text

    import initmem.run.training

    trained = []
    real_train = initmem.run.training.train
    monkeypatch.setattr(initmem.run.training, "train", lambda c, **k: trained.append(c.optimizer) or real_train(c, **k))
    again = sweep(spec, tmp_path, executor="serial", progress=False)
    assert sorted(trained) == ["sgd", "sgd"]  # the sequential sgd runs are their own; muon's files are reused
    assert again.attrs["n_cached"] == 2
    stacked_again = sweep(spec, tmp_path, executor="stacked", progress=False)
    assert stacked_again.attrs["n_cached"] == 4
