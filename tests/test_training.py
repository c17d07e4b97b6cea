"""The training loop: recorded variables, determinism, divergence, clocks, checkpoint/resume."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import xarray as xr

from initmem.run.data import steps_per_epoch
from initmem.run.records import EPOCH_METRICS, SCALAR_METRICS
from initmem.run.training import train


def _metrics_only(ds: xr.Dataset) -> xr.Dataset:
    return ds.drop_vars("wall_time_s")


def test_dataset_has_every_metric(tiny_config):
    ds = train(tiny_config)
    for name in (*EPOCH_METRICS, *SCALAR_METRICS, "layer_norm"):
        assert name in ds, name
    assert list(ds.epoch.values) == [0, 1, 2, 3]
    assert ds["layer_norm"].dims == ("epoch", "layer")
    assert ds.sizes["layer"] == 9  # 8 convs + the head of ResNet-9
    # the total norm is the root of the sum of the squared layer norms
    np.testing.assert_allclose(ds["weight_norm"], np.sqrt((ds["layer_norm"] ** 2).sum("layer")), rtol=1e-12)
    assert ds["dist_from_init"].sel(epoch=0).item() == 0.0
    assert ds["dist_from_init"].sel(epoch=3).item() > 0.0
    config = json.loads(ds.attrs["config"])
    assert config["sigma_w"] == tiny_config.sigma_w
    assert ds.attrs["config_hash"] == tiny_config.hash()
    assert json.loads(ds.attrs["data_source"])["format"] == "synthetic"
    assert ds["diverged"].item() == 0.0


def test_clocks_match_the_constant_lr_schedule(tiny_config):
    config = tiny_config.replace(weight_decay=5e-3)
    ds = train(config)
    steps = steps_per_epoch(config.train_size, config.batch_size) * config.epochs
    assert ds["step"].isel(epoch=-1).item() == steps
    assert ds["T_adapt"].isel(epoch=-1).item() == pytest.approx(steps * config.lr)
    assert ds["T_SGD"].isel(epoch=-1).item() == pytest.approx(steps * config.lr**2 / config.batch_size)
    assert ds["T_L2"].isel(epoch=-1).item() == pytest.approx(steps * config.lr * 5e-3)
    assert ds["T_adapt"].sel(epoch=0).item() == 0.0
    for clock in ("T_SGD", "T_L2", "T_adapt"):
        assert ds[f"final_{clock}"].item() == ds[clock].isel(epoch=-1).item()


def test_clocks_at_the_selected_checkpoint(tiny_config):
    """The clock printed beside the selected predictor is the clock at its epoch: steps so far times lr."""
    ds = train(tiny_config.replace(epochs=4))
    best = int(ds["best_epoch"].item())
    steps = steps_per_epoch(tiny_config.train_size, tiny_config.batch_size) * best  # 4 steps per epoch
    assert ds["selected_T_adapt"].item() == pytest.approx(steps * 0.05)
    assert ds["selected_T_SGD"].item() == pytest.approx(steps * 0.05**2 / 50)
    assert ds["selected_train_acc"].item() == ds["train_acc"].sel(epoch=best).item()
    assert ds["final_epoch"].item() == 4


def test_momentum_clocks_count_the_effective_step(tiny_config):
    """Heavy-ball SGD with momentum mu moves lr/(1 - mu) per step at steady state: its clocks count that step."""
    ds = train(tiny_config.replace(optimizer="sgd_momentum", lr=0.01, momentum=0.9, weight_decay=1e-2, epochs=2))
    steps = 8  # 2 epochs of 200 // 50 steps
    eta = 0.01 / (1 - 0.9)  # = 0.1
    assert ds["T_adapt"].isel(epoch=-1).item() == pytest.approx(steps * eta)
    assert ds["T_SGD"].isel(epoch=-1).item() == pytest.approx(steps * eta**2 / 50)
    assert ds["T_L2"].isel(epoch=-1).item() == pytest.approx(steps * eta * 1e-2)
    assert "lr/(1-momentum)" in ds["T_SGD"].attrs["description"]


def test_selected_predictor_is_at_the_lowest_validation_loss(tiny_config):
    ds = train(tiny_config)
    best = int(ds["val_loss"].argmin("epoch"))
    assert ds["best_epoch"].item() == ds.epoch[best].item()
    assert ds["selected_test_acc"].item() == ds["test_acc"][best].item()
    assert ds["final_test_acc"].item() == ds["test_acc"][-1].item()


def test_same_config_gives_bit_identical_metrics_on_cpu(tiny_config):
    a, b = train(tiny_config), train(tiny_config)
    xr.testing.assert_identical(_metrics_only(a).drop_attrs(), _metrics_only(b).drop_attrs())


def test_sigma_w_changes_the_run_but_not_the_batches(tiny_config):
    a = train(tiny_config.replace(sigma_w=0.5))
    b = train(tiny_config.replace(sigma_w=2.0))
    # the kernels at init are exact multiples: norms scale by sigma ratio
    np.testing.assert_allclose(b["layer_norm"].sel(epoch=0), 4 * a["layer_norm"].sel(epoch=0), rtol=1e-6)
    assert not np.allclose(a["train_loss"][1:], b["train_loss"][1:])


def test_divergence_is_recorded_not_raised(tiny_config, monkeypatch):
    # BatchNorm makes most kernels scale-invariant, so even huge learning rates rarely produce NaN on a
    # toy; make the logits non-finite from the 6th training forward pass (epoch 2) on instead.
    import initmem.run.training as train_module

    real_model = train_module.seeded_model
    calls = {"n": 0}

    def poisoned_model(config):
        model = real_model(config)

        def hook(module, inputs, output):
            if module.training:
                calls["n"] += 1
                if calls["n"] >= 6:
                    return output * float("nan")
            return output

        model.register_forward_hook(hook)
        return model

    monkeypatch.setattr(train_module, "seeded_model", poisoned_model)
    ds = train(tiny_config.replace(epochs=3))
    assert ds["diverged"].item() == 1.0
    assert np.isnan(ds["test_acc"].isel(epoch=-1).item())
    assert np.isfinite(ds["test_acc"].sel(epoch=1).item())  # what was measured before is kept
    assert np.isnan(ds["test_acc"].sel(epoch=2).item())
    # a diverged run has no selected or final predictor: it drops out of every mean and spread
    for name in ("selected_test_acc", "selected_val_acc", "selected_train_acc", "best_epoch", "final_test_acc",
                 "final_train_acc", "selected_T_adapt", "final_T_adapt"):  # fmt: skip
        assert np.isnan(ds[name].item()), name


def test_eval_every_records_first_and_last(tiny_config):
    ds = train(tiny_config.replace(epochs=5, eval_every=2))
    assert list(ds.epoch.values) == [0, 2, 4, 5]


def test_resumed_run_equals_uninterrupted(tiny_config, tmp_path, monkeypatch):
    config = tiny_config.replace(epochs=4, checkpoint_every=1, optimizer="sgd_momentum")
    reference = train(config)

    # Interrupt the run after epoch 2 by making the 3rd epoch's data raise.
    import initmem.run.training as train_module

    calls = {"n": 0}
    import initmem.run.loop as loop_module

    real_batches = loop_module.train_batches

    def failing_batches(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_batches(*args, **kwargs)

    checkpoint = tmp_path / "run.ckpt"
    monkeypatch.setattr(loop_module, "train_batches", failing_batches)
    with pytest.raises(KeyboardInterrupt):
        train(config, checkpoint_path=checkpoint)
    assert checkpoint.exists()
    monkeypatch.setattr(loop_module, "train_batches", real_batches)
    resumed = train(config, checkpoint_path=checkpoint)
    assert not checkpoint.exists()
    xr.testing.assert_identical(_metrics_only(reference).drop_attrs(), _metrics_only(resumed).drop_attrs())


@pytest.mark.slow
@pytest.mark.data
def test_end_to_end_on_cifar10(cifar_archive):
    from initmem import RunConfig

    config = RunConfig(
        data=str(cifar_archive), model="resnet9", width=8, train_size=1000, val_size=500, test_size=1000,
        train_eval_size=500, epochs=2, batch_size=100, lr=0.05, optimizer="sgd", sigma_w=1.0,
        progress=False, device="cpu",
    )  # fmt: skip
    ds = train(config)
    assert json.loads(ds.attrs["data_source"])["format"] == "image-folder-tar.gz"
    assert ds["train_acc"].isel(epoch=-1).item() > 15.0  # learns something in 20 steps
    assert math.isfinite(ds["selected_test_acc"].item())


def test_a_finite_but_exploding_run_is_diverged_with_its_reason(tiny_config):
    # lr 1e6: the losses stay finite for a while but leave 1e6 x their epoch-0 value at once
    ds = train(tiny_config.replace(lr=1e6, epochs=3))
    assert ds["diverged"].item() == 1.0
    assert "over 1e+06 x its epoch-0 value" in ds.attrs["divergence"]
    assert np.isnan(ds["selected_test_acc"].item()) and np.isnan(ds["final_test_acc"].item())
    healthy = train(tiny_config.replace(epochs=1))
    assert healthy["diverged"].item() == 0.0 and healthy.attrs["divergence"] == ""


def test_the_divergence_watch_checks_losses_and_the_kernel_norm():
    from initmem.run.loop import DivergenceWatch

    watch = DivergenceWatch.of({"train_loss": 2.0, "weight_norm": 10.0})
    assert watch.batch(2.0e6, 1) == "" and "epoch 4" in watch.batch(2.1e6, 4)
    assert "is nan" in watch.batch(float("nan"), 2) and "is inf" in watch.batch(float("inf"), 2)
    row = {"train_loss": 1.0, "val_loss": 1.0, "test_loss": 1.0, "weight_norm": 1.0e7}
    assert watch.record(row, 3) == ""
    assert watch.record({**row, "weight_norm": 1.1e7}, 3).startswith("the kernel norm is 1.1e+07 at epoch 3")
    assert watch.record({**row, "val_loss": 3.0e6}, 5).startswith("val_loss is 3e+06 at epoch 5")


def test_a_run_records_the_cpu_its_numbers_depend_on(tiny_config):
    import torch

    ds = train(tiny_config.replace(epochs=1))
    assert ds.attrs["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert ds.attrs["cpu_model"] and ds.attrs["cpu_model"] in ds.attrs["hardware"]
    assert ds.attrs["cpu_capability"] in ds.attrs["hardware"]
    if torch.backends.mkldnn.is_available():
        assert ds.attrs["onednn_version"][0].isdigit() and f"oneDNN {ds.attrs['onednn_version']}" in ds.attrs["hardware"]
