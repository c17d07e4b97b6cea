"""The training loop: recorded variables, determinism, divergence, clocks, checkpoint/resume."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import xarray as xr

from initmem.run.data.batches import steps_per_epoch
from initmem.run.training import train
from initmem.run.variables import EPOCH_METRICS, SCALAR_METRICS, TIMINGS
from tiny import TINY_RUN  # tests/ is on sys.path under pytest


def _metrics_only(ds: xr.Dataset) -> xr.Dataset:
    return ds.drop_vars(list(TIMINGS))


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


def test_a_training_step_sets_its_scheduled_lr_updates_ticks_the_clocks_and_counts(tiny_config):
    """TrainingStep on one weight w with loss w^2 / 2 (gradient w): plain SGD with L2 lambda makes
    w <- (1 - lr_k (1 + lambda)) w at the lr of step k of the schedule; the record carries the last step's lr, the
    count and the clocks of those lrs; a step resumed from its checkpoint state records the same and goes on
    identically."""
    import torch

    from initmem.run.loop import Schedule, TrainingStep
    from initmem.run.metrics import ForgettingClocks, clocks_from_lrs
    from initmem.run.optim.build import build_optimizer
    from initmem.run.optim.schedules import lr_multiplier

    config = tiny_config.replace(
        optimizer="sgd", lr=0.1, weight_decay=1e-3, epochs=2, schedule="cosine", warmup_epochs=1.0
    )

    def fresh() -> tuple[torch.nn.Linear, TrainingStep]:
        model = torch.nn.Linear(1, 1, bias=False)
        torch.nn.init.ones_(model.weight)
        schedule = Schedule(config, 4, lr_multiplier(config, 4))
        return model, TrainingStep(build_optimizer(model, config), schedule, ForgettingClocks.for_config(config))

    model, step = fresh()
    assert step.record() == dict(lr=step.schedule.lr(0), step=0.0, T_SGD=0.0, T_L2=0.0, T_adapt=0.0)
    lrs, expected = [], 1.0
    for k in range(6):
        step.take(0.5 * (model.weight**2).sum())
        lrs.append(step.schedule.lr(k))
        expected *= 1 - lrs[-1] * (1 + config.weight_decay)  # the gradient w plus the L2 penalty's lambda w
        assert step.optimizer.param_groups[0]["lr"] == lrs[-1]
        assert model.weight.item() == pytest.approx(expected, rel=1e-6)
    assert len(set(lrs)) == 5  # warm-up 1/4 .. 1, then the cosine from 1 (step 3 = step 4) down
    record = step.record()
    assert (record["lr"], record["step"]) == (lrs[-1], 6.0)
    clocks = clocks_from_lrs(np.array(lrs), config.batch_size, config.weight_decay)
    assert {name: record[name] for name in clocks} == pytest.approx(clocks, rel=1e-12)

    other_model, resumed = fresh()
    other_model.load_state_dict(model.state_dict())
    resumed.resume(step.state())
    assert resumed.record() == record
    step.take(0.5 * (model.weight**2).sum())
    resumed.take(0.5 * (other_model.weight**2).sum())
    assert other_model.weight.item() == model.weight.item() and resumed.record() == step.record()


def test_both_trainers_take_their_steps_through_the_one_training_step():
    """The update, the clocks and the schedule are stated once (:class:`initmem.run.loop.TrainingStep`)."""
    import inspect

    import initmem.run.stacked as stacked
    import initmem.run.training as training

    for module in (training, stacked):
        source = inspect.getsource(module)
        assert "step.take(" in source, module.__name__
        for restated in (
            ".backward(",
            ".zero_grad(",
            "optimizer.step(",
            ".tick(",
            ".apply(",
            "Schedule.of",
            ".for_config(",
        ):
            assert restated not in source, f"{module.__name__} re-states {restated}"


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


def test_bf16_runs_its_forward_passes_in_bfloat16_on_the_cpu_and_records_it(tiny_config):
    config = tiny_config.replace(epochs=1)
    fp32, bf16, again = train(config), train(config.replace(bf16=True)), train(config.replace(bf16=True))
    assert (fp32.attrs["autocast_dtype"], bf16.attrs["autocast_dtype"]) == ("none", "bfloat16")
    xr.testing.assert_identical(_metrics_only(bf16).drop_attrs(), _metrics_only(again).drop_attrs())
    # the same initial weights: at epoch 0 only the evaluation's precision differs
    np.testing.assert_array_equal(fp32["layer_norm"].sel(epoch=0), bf16["layer_norm"].sel(epoch=0))
    assert fp32["train_loss"].sel(epoch=0) != bf16["train_loss"].sel(epoch=0)
    # after an epoch the weights differ: the training steps' forward passes ran in bfloat16 too
    assert (fp32["layer_norm"].sel(epoch=1) != bf16["layer_norm"].sel(epoch=1)).all()


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
    for name in (
        "selected_test_acc",
        "selected_val_acc",
        "selected_train_acc",
        "best_epoch",
        "final_test_acc",
        "final_train_acc",
        "selected_T_adapt",
        "final_T_adapt",
    ):
        assert np.isnan(ds[name].item()), name


def test_eval_every_records_first_and_last(tiny_config):
    ds = train(tiny_config.replace(epochs=5, eval_every=2))
    assert list(ds.epoch.values) == [0, 2, 4, 5]


def test_resumed_run_equals_uninterrupted(tiny_config, tmp_path, interrupted_at_epoch):
    config = tiny_config.replace(epochs=4, checkpoint_every=1, optimizer="sgd_momentum")
    reference = train(config)

    checkpoint = tmp_path / "run.ckpt"
    with interrupted_at_epoch(3):  # killed after epoch 2, its checkpoint written
        train(config, checkpoint_path=checkpoint)
    assert checkpoint.exists()
    resumed = train(config, checkpoint_path=checkpoint)
    assert not checkpoint.exists()
    xr.testing.assert_identical(_metrics_only(reference).drop_attrs(), _metrics_only(resumed).drop_attrs())


def test_a_run_records_its_seconds_on_the_wall_clock_and_in_cpu_time(tiny_config, ticking_clocks):
    """Clocks ticking 1 s (wall) and 0.5 s (CPU) a reading: the epoch-0 measurement and each of the 3 epochs count one
    tick of each."""
    ticking_clocks(wall=1.0, cpu=0.5)
    ds = train(tiny_config)
    assert (float(ds["wall_time_s"]), float(ds["cpu_time_s"])) == (4.0, 2.0)


def test_a_run_records_the_machines_load_at_its_start_and_end(tiny_config, monkeypatch):
    """The load clock reads 3.0 when the run starts and 7.5 from then on: the file says both."""
    import itertools

    from initmem.run import elapsed

    readings = itertools.chain([(3.0, 2.0, 1.0)], itertools.repeat((7.5, 6.0, 5.0)))
    monkeypatch.setattr(elapsed, "load_clock", lambda: next(readings))
    ds = train(tiny_config)
    assert (ds.attrs["load_avg_start"], ds.attrs["load_avg_end"]) == (3.0, 7.5)


def test_a_run_on_a_platform_without_a_load_average_records_nan(tiny_config, monkeypatch):
    from initmem.run import elapsed

    def unavailable():
        raise OSError("no load average")

    monkeypatch.setattr(elapsed, "load_clock", unavailable)
    ds = train(tiny_config)
    assert math.isnan(ds.attrs["load_avg_start"]) and math.isnan(ds.attrs["load_avg_end"])


@pytest.mark.parametrize("old_checkpoint", [False, True], ids=["checkpoint", "checkpoint-without-cpu-time"])
def test_a_resumed_run_counts_its_seconds_before_and_after(
    tiny_config, tmp_path, interrupted_at_epoch, ticking_clocks, old_checkpoint
):
    """Killed in its third epoch and resumed: epoch 0 and the four epochs count one tick each. A checkpoint written
    before CPU time was recorded resumes too; the CPU time before it is unknown, so the run's is NaN."""
    import torch

    ticking_clocks(wall=1.0, cpu=0.5)
    config = tiny_config.replace(epochs=4, checkpoint_every=1)
    checkpoint = tmp_path / "run.ckpt"
    with interrupted_at_epoch(3):
        train(config, checkpoint_path=checkpoint)
    if old_checkpoint:
        state = torch.load(checkpoint, weights_only=True)
        del state["cpu_time_s"]
        torch.save(state, checkpoint)
    ds = train(config, checkpoint_path=checkpoint)
    assert float(ds["wall_time_s"]) == 5.0
    assert math.isnan(float(ds["cpu_time_s"])) if old_checkpoint else float(ds["cpu_time_s"]) == 2.5


@pytest.mark.slow
@pytest.mark.data
def test_end_to_end_on_cifar10(cifar_archive):
    from initmem import RunConfig

    config = RunConfig(
        data=str(cifar_archive),
        model="resnet9",
        width=8,
        train_size=1000,
        val_size=500,
        test_size=1000,
        train_eval_size=500,
        epochs=2,
        batch_size=100,
        lr=0.05,
        optimizer="sgd",
        sigma_w=1.0,
        progress=False,
        device="cpu",
    )
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
        assert (
            ds.attrs["onednn_version"][0].isdigit() and f"oneDNN {ds.attrs['onednn_version']}" in ds.attrs["hardware"]
        )


# --- the learning rate is set at the call site, and the numbers are those of the loop before that change -------
_SCHEDULED = dict(**TINY_RUN, epochs=3, schedule="cosine", warmup_epochs=1.0, final_lr_fraction=0.1)
#: Per-epoch numbers of three runs with a warm-up + cosine schedule, computed by the loop whose Schedule.batches set
#: the learning rate inside its generator (commit 96ab4e0), on the floating-point path of :data:`_REFERENCE_PATH`
#: (the CPU model included: an Intel and an AMD CPU with the same instruction set differ in the 7th digit). The clocks
#: were added from the loops of 722c2c8, the last before both trainers took their steps through
#: :class:`initmem.run.loop.TrainingStep`; they are float arithmetic on the learning rates, the same on every machine.
_REFERENCE = {
    "sgd_momentum": {
        "config": dict(optimizer="sgd_momentum", lr=0.05, momentum=0.9, weight_decay=5e-4),
        "train_loss": [2.3828594970703123, 2.3481266784667967, 2.185699462890625, 2.1126731872558593],
        "val_loss": [2.3572694396972658, 2.329300537109375, 2.200172119140625, 2.132769012451172],
        "lr": [0.0125, 0.05, 0.03611037722821452, 0.006712710518496048],
        "T_SGD": [0.0, 0.009375000000000005, 0.025415082621505748, 0.02800000000000001],
        "T_L2": [0.0, 0.0006250000000000001, 0.0015140378464320794, 0.0018375000000000004],
        "T_adapt": [0.0, 1.2500000000000004, 3.028075692864159, 3.675000000000001],
    },
    "muon": {
        "config": dict(optimizer="muon", lr=0.02, aux_lr=3e-3, weight_decay=1e-3),
        "train_loss": [2.3828594970703123, 2.31643310546875, 2.1362489318847655, 2.048975067138672],
        "val_loss": [2.3572694396972658, 2.30322998046875, 2.158487091064453, 2.0828082275390627],
        "lr": [0.005, 0.02, 0.014444150891285808, 0.0026850842073984195],
        "T_SGD": [0.0, 1.4999999999999999e-05, 4.0664132194409176e-05, 4.48e-05],
        "T_L2": [0.0, 5.000000000000001e-05, 0.00012112302771456632, 0.000147],
        "T_adapt": [0.0, 0.05, 0.12112302771456633, 0.147],
    },
    "stacked sigma_w=2": {
        "config": dict(optimizer="sgd_momentum", lr=0.05, momentum=0.9, sigma_w=2.0),
        "train_loss": [2.4744390869140624, 3.849312744140625, 2.317726745605469, 2.096527099609375],
        "val_loss": [2.442262725830078, 3.7868878173828127, 2.35849853515625, 2.1339096069335937],
        "lr": [0.0125, 0.05, 0.03611037722821452, 0.006712710518496048],
        "T_SGD": [0.0, 0.009375000000000005, 0.025415082621505748, 0.02800000000000001],
        "T_L2": [0.0, 0.0, 0.0, 0.0],
        "T_adapt": [0.0, 1.2500000000000004, 3.028075692864159, 3.675000000000001],
    },
}
_REFERENCE_PATH = {
    "cpu_model": "AMD EPYC",
    "cpu_capability": "AVX512",
    "torch_version": "2.14.1",
    "onednn_version": "3.12.0",
    "mkl_version": "2024.2",
}


@pytest.mark.parametrize("name", sorted(_REFERENCE))
def test_per_epoch_numbers_equal_the_reference_of_the_loop_before_schedule_apply(name):
    from initmem.run.config import RunConfig
    from initmem.run.stacked import train_stacked
    from initmem.sweeps.executors import prepared_data

    reference = _REFERENCE[name]
    config = RunConfig(**_SCHEDULED, **reference["config"])
    if name.startswith("stacked"):
        partner = config.replace(sigma_w=0.5)  # a stack of two; the reference is the sigma_w=2 member
        ds = train_stacked([partner, config], data=prepared_data(config))[1]
        assert ds.attrs["stacked"] == 2
    else:
        ds = train(config)
    # the schedule is plain float arithmetic: the same on every machine
    np.testing.assert_allclose(ds["lr"], reference["lr"], rtol=1e-12, atol=0)
    for clock in ("T_SGD", "T_L2", "T_adapt"):  # so are the clocks, summed step by step: bit-identical
        np.testing.assert_array_equal(ds[clock], reference[clock], err_msg=clock)
    # the losses are bit-identical on the floating-point path they were computed on, close elsewhere
    same_path = all(str(ds.attrs[key]).split("+")[0] == value for key, value in _REFERENCE_PATH.items())
    rtol = 1e-12 if same_path else 1e-3
    for variable in ("train_loss", "val_loss"):
        np.testing.assert_allclose(ds[variable], reference[variable], rtol=rtol, atol=0, err_msg=variable)


def test_every_step_is_taken_at_the_lr_of_its_schedule_in_every_group(tiny_config, monkeypatch):
    """Muon's two groups (hidden kernels at lr, the AdamW rest at aux_lr) both follow the schedule at every step."""
    import initmem.run.training as training_module
    from initmem.run.optim.build import build_optimizer
    from initmem.run.optim.schedules import lr_multiplier

    config = tiny_config.replace(
        **{k: _SCHEDULED[k] for k in ("schedule", "warmup_epochs", "final_lr_fraction")},
        optimizer="muon",
        lr=0.02,
        aux_lr=3e-3,
        epochs=2,
    )
    taken: list[list[float]] = []

    def spying_build_optimizer(model, run_config):
        optimizer = build_optimizer(model, run_config)
        step = optimizer.step

        def recording_step(*args, **kwargs):
            taken.append([group["lr"] for group in optimizer.param_groups])
            return step(*args, **kwargs)

        optimizer.step = recording_step
        return optimizer

    monkeypatch.setattr(training_module, "build_optimizer", spying_build_optimizer)
    train(config)
    multiplier = lr_multiplier(config, steps_per_epoch(config.train_size, config.batch_size))
    assert len(taken) == 8  # 2 epochs of 200 // 50 steps
    for k, lrs in enumerate(taken):
        assert lrs == [0.02 * multiplier(k), 3e-3 * multiplier(k)], k
    assert len({tuple(lrs) for lrs in taken}) == 7  # warm-up (1/4 .. 1), then the cosine from 1: step 3 = step 4
