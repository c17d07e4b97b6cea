"""One training run: ``train(config) -> xarray.Dataset``.

The loop is written top to bottom in the airbench style: the whole split lives as tensors on the device, batches are
index slices (their order depends only on ``data_seed`` and the epoch), and every recorded epoch measures the paper's
quantities. A loss or kernel norm that is not finite or explodes (:class:`initmem.run.loop.DivergenceWatch`, checked
on the device every few batches) ends the run with ``diverged = 1`` and the reason in the attribute
``divergence``; it never raises. With ``checkpoint_path`` and ``config.checkpoint_every > 0`` the run saves a
resumable checkpoint and resumes from it when restarted, with the metrics of an uninterrupted run.

The returned Dataset (assembled by :mod:`initmem.run.records`) has the dimensions ``epoch`` (0 = at initialisation)
and ``layer`` (kernel names): per-epoch losses, accuracies (%), kernel norms, learning rate, step and forgetting
clocks, and per-run scalars (the validation-selected predictor ``selected_*``, the last epoch ``final_*``,
``tau_interp``, ``repair_gap``, ``diverged``, ``wall_time_s``, ``cpu_time_s``). This layer's API page tabulates
every variable with its dimensions and units.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import xarray as xr

from ..base.files import remove_stale_temp_files
from .config import RunConfig
from .data.prepare import PreparedData
from .elapsed import Elapsed, load_average, now
from .kernels import kernel_parameters
from .loop import (
    BatchChecks,
    DivergenceWatch,
    TrainingStep,
    checkpoint_due,
    epoch_bar,
    guard_memory,
    initial_row,
    read_checkpoint,
    save_checkpoint,
    setup_run,
    state_mismatch,
)
from .optim.build import build_optimizer
from .records import LOSSES, RunHistory, measure, to_dataset
from .sigma_w import seeded_model
from .variables import recorded_epochs

__all__ = ["CHECKPOINT_VERSION", "train", "load_checkpoint"]

log = logging.getLogger(__name__)

#: 2: loadable with ``weights_only=True`` (the history as a plain dict).
CHECKPOINT_VERSION = 2


def load_checkpoint(
    path: Path | None,
    config: RunConfig,
    model: torch.nn.Module | None = None,
    optimizer: torch.optim.Optimizer | None = None,
) -> dict[str, Any] | None:
    """The checkpoint of run ``config`` at ``path`` (see :func:`initmem.run.loop.read_checkpoint`), or None.

    With ``model`` (and ``optimizer``), a checkpoint whose states do not fit them (:func:`initmem.run.loop.state_mismatch`:
    a tensor missing, say) is refused like a foreign one: set aside as ``.rejected``, the run starts fresh."""
    digest = config.hash()

    def mismatch(state: dict[str, Any]) -> str:
        if state.get("version") != CHECKPOINT_VERSION or state.get("config_hash") != digest:
            return "it belongs to another config or checkpoint format"
        if model is None:
            return ""
        return state_mismatch(state.get("model"), model, optimizer, state.get("optimizer"))

    state = read_checkpoint(path, f"run {digest}", mismatch)
    if state is not None:
        state["history"] = RunHistory(**state["history"])
    return state


@guard_memory
def train(
    config: RunConfig,
    *,
    checkpoint_path: str | Path | None = None,
    data: PreparedData | None = None,
    progress: bool | None = None,
    keep_checkpoint: bool = False,
    model: torch.nn.Module | None = None,
    loss: str = "cross_entropy",
    kernels: Callable[[torch.nn.Module], dict[str, torch.Tensor]] = kernel_parameters,
) -> xr.Dataset:
    """Train one run and return its metrics as an :class:`xarray.Dataset` (see the module docstring).

    Args:
        config: the run.
        checkpoint_path: where to keep a resumable checkpoint (used when ``config.checkpoint_every > 0``).
            An existing checkpoint of the same config is resumed; it is deleted when the run finishes, unless
            ``keep_checkpoint`` (then the caller deletes it once the result is safely written). Temporary files
            that killed runs left beside it are removed.
        data: already prepared data for this config (saves loading it again in a sweep).
        progress: show a tqdm bar; None follows ``config.progress`` (and tqdm hides it off a terminal).
        model: an initialised network to train instead of ``seeded_model(config)`` (the config's model fields
            are then ignored; :func:`initmem.sweeps.measure.measure_init_memory` passes your own model here). Trained in
            place.
        loss: the training and evaluation loss, a key of :data:`initmem.run.records.LOSSES`.
        kernels: which parameters' norms and distance from init are recorded (``weight_norm``, ``layer_norm``,
            ``dist_from_init``): a function of the model, default :func:`initmem.run.kernels.kernel_parameters`
            (every convolution and linear weight); your own model's sigma_w kernels under ``include``/``exclude``.

    Raises:
        TypeError: ``config`` is not a :class:`RunConfig`.
        initmem.run.loop.OutOfMemory: the run does not fit in memory (one line naming what to reduce).
    """
    if not isinstance(config, RunConfig):
        shown = repr(config) if len(repr(config)) <= 40 else repr(config)[:37] + "..."
        raise TypeError(
            f"train: takes a RunConfig, e.g. train(RunConfig(model='resnet9', sigma_w=0.5)); "
            f"got {type(config).__name__} {shown}"
        )
    if loss not in LOSSES:
        raise ValueError(f"loss: allowed values are {', '.join(LOSSES)}; got {loss!r}")
    loss_fn = LOSSES[loss]
    setup = setup_run(config, data)
    data = setup.data
    checkpoint_path = Path(checkpoint_path) if checkpoint_path is not None else None
    if checkpoint_path is not None and checkpoint_path.parent.is_dir():
        remove_stale_temp_files(checkpoint_path.parent)

    model = (seeded_model(config) if model is None else model).to(setup.device)
    if config.channels_last:
        model = model.to(memory_format=torch.channels_last)
    initial = {name: w.detach().clone() for name, w in kernels(model).items()}
    optimizer = build_optimizer(model, config)
    forward = torch.compile(model) if config.compile else model  # on CUDA only: run_device refuses it elsewhere

    step = TrainingStep.of(config, data, optimizer)
    history = RunHistory()
    recorded = recorded_epochs(config)
    start_epoch, divergence, spent, load_start = 1, "", Elapsed(), load_average()

    state = load_checkpoint(checkpoint_path, config, model, optimizer)
    if state is not None:
        model.load_state_dict(state["model"])
        step.resume(state)
        history = state["history"]
        start_epoch, spent = state["epoch"] + 1, Elapsed.of_state(state)
        log.info("resumed %s at epoch %d from %s", config.hash(), state["epoch"], checkpoint_path)
    else:
        start = now()
        history.add(0, *initial_row(model, setup, config, initial, step, loss, kernels))
        spent += now() - start
    watch = DivergenceWatch.of(history.rows[0])
    checks = BatchChecks.of([watch])

    show = config.progress if progress is None else progress
    bar = epoch_bar(config.epochs, start_epoch, show, f"{config.optimizer} sigma_w={config.sigma_w:g}")
    for epoch in range(start_epoch, config.epochs + 1):
        start = now()
        model.train()
        for x, y in step.schedule.batches(data, epoch):
            if config.channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            with setup.autocast():
                batch_loss = loss_fn(forward(x), y)
            if checks.add(batch_loss):
                (divergence,) = checks.check(epoch)
                if divergence:
                    break
            step.take(batch_loss)
        if not divergence:  # the epoch's batches since the last check
            (divergence,) = checks.check(epoch)
        if epoch in recorded and not divergence:
            row, layer_norms = measure(model, data, config, initial, setup.autocast, loss, kernels)
            divergence = watch.record(row, epoch)
            if not divergence:
                row.update(step.record())
                history.add(epoch, row, layer_norms)
        if divergence:
            log.warning("run %s diverged: %s", config.hash(), divergence)
            break
        if epoch in recorded:
            bar.set_postfix(train=f"{row['train_acc']:.1f}", val=f"{row['val_acc']:.1f}", refresh=False)
        spent += now() - start
        bar.update(1)
        if checkpoint_due(checkpoint_path, config, epoch):
            save_checkpoint(
                checkpoint_path,
                {
                    "version": CHECKPOINT_VERSION,
                    "config_hash": config.hash(),
                    "epoch": epoch,
                    "model": model.state_dict(),
                    **step.state(),
                    "history": dataclasses.asdict(history),
                    **spent.state(),
                },
            )
    bar.close()
    dataset = to_dataset(config, history, recorded, divergence, spent, data, setup.device, load_start)
    if checkpoint_path is not None and not keep_checkpoint:
        checkpoint_path.unlink(missing_ok=True)
    return dataset
