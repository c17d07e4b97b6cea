"""One training run: ``train(config) -> xarray.Dataset``.

The loop is written top to bottom in the airbench style: the whole split lives as tensors on the
device, batches are index slices (their order depends only on ``data_seed`` and the epoch), and every
recorded epoch measures the paper's quantities. A non-finite loss ends the run with ``diverged = 1``;
it never raises. With ``checkpoint_path`` and ``config.checkpoint_every > 0`` the run saves a resumable
checkpoint (model, optimizer, clocks, metric history, RNG state) and resumes from it when restarted;
the resumed run's metrics equal an uninterrupted run's.

The returned Dataset (assembled by :mod:`initmem.records`) has a dimension ``epoch`` (0 = at initialisation) and ``layer`` (kernel names):

==================  =================  =======================================================
variable            dims               meaning (units)
==================  =================  =======================================================
train_loss/acc      epoch              eval-mode cross-entropy / accuracy (%) on a fixed sample
val_loss/acc        epoch              on the held-out validation split
test_loss/acc       epoch              on the test split
weight_norm         epoch              Frobenius norm of all conv/linear kernels together
layer_norm          epoch, layer       Frobenius norm of each kernel
dist_from_init      epoch              ||W_t - W_0||_F over all kernels
lr                  epoch              learning rate of the last step of the epoch (per step)
step                epoch              optimisation steps taken so far
T_SGD/T_L2/T_adapt  epoch              cumulative forgetting clocks of the effective step (see
                                       :class:`initmem.metrics.ForgettingClocks`)
best_epoch          -                  epoch of the lowest validation loss
selected_test_acc   -                  test accuracy there: the validation-selected predictor (%)
selected_val_acc    -                  validation accuracy there (%)
selected_train_acc  -                  training accuracy there (%)
selected_T_*        -                  the three clocks there
final_epoch         -                  the last recorded epoch
final_test_acc      -                  test accuracy at the last recorded epoch (%)
final_train_acc     -                  training accuracy at the last recorded epoch (%)
final_T_*           -                  the three clocks there
tau_interp          -                  first epoch with train accuracy >= 99.5 % (NaN if never)
repair_gap          -                  val accuracy at the last epoch minus at tau_interp (pp)
diverged            -                  1 if a non-finite loss stopped the run, else 0 (then the
                                       selected_* and final_* scalars are NaN)
wall_time_s         -                  seconds spent training and evaluating
==================  =================  =======================================================
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
from pathlib import Path
from typing import Any

import torch
import xarray as xr
from tqdm.auto import tqdm

from .config import ConfigError, RunConfig
from .data import PreparedData, prepare_data, steps_per_epoch, train_batches
from .fileio import remove_stale_temp_files, temp_name
from .init import seeded_model
from .metrics import ForgettingClocks
from .models import kernel_parameters
from .optim import apply_lr_multiplier, build_optimizer, lr_multiplier
from .records import LOSSES, RunHistory, measure, recalibrated_copy, recorded_epochs, to_dataset

__all__ = ["train", "resolve_device", "save_checkpoint", "read_checkpoint", "load_checkpoint"]

log = logging.getLogger(__name__)

#: 2: loadable with ``weights_only=True`` (the history as a plain dict).
CHECKPOINT_VERSION = 2


def resolve_device(name: str) -> torch.device:
    """``auto`` -> cuda if available else cpu; ``cuda`` without a GPU raises :class:`ConfigError` naming the field."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: 'cuda' was requested but no CUDA device is available; use 'cpu' or 'auto'")
    return torch.device(name)


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write atomically: a temporary file in the same folder (:func:`initmem.fileio.temp_name`), then rename.

    ``state`` must hold only what ``torch.load(weights_only=True)`` reads back: tensors, numbers, strings,
    and lists, tuples and dicts of them (a :class:`RunHistory` is stored as its dict).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_checkpoint(path: Path | None, owner: str, matches) -> dict[str, Any] | None:
    """The state saved at ``path`` if it is a readable checkpoint for which ``matches(state)`` holds, else None.

    Loads with ``weights_only=True``: a file holding anything but tensors and plain containers (for example a
    planted object whose unpickling would run code) is refused without executing it. A refused, corrupt or
    foreign file is reported in one warning line and moved aside to ``<path>.rejected`` (so the run starts
    fresh and the file can be inspected); ``owner`` names the run or stack in that line.
    """
    if path is None or not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(state, dict):
            raise TypeError(f"holds a {type(state).__name__}, not a checkpoint dict")
        reason = None if matches(state) else "it belongs to another config or checkpoint format"
    except Exception as exc:  # noqa: BLE001 - anything unreadable is set aside, never executed or trusted
        reason = f"unreadable or unsafe ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    if reason is None:
        return state
    rejected = path.with_name(path.name + ".rejected")
    try:
        if path.is_dir():
            raise IsADirectoryError(path)
        os.replace(path, rejected)
        where = f"moved to {rejected}"
    except OSError:
        where = "left in place"
    log.warning("ignoring checkpoint %s of %s: %s; %s, training starts fresh", path, owner, reason, where)
    return None


def load_checkpoint(path: Path | None, config: RunConfig) -> dict[str, Any] | None:
    """The checkpoint of run ``config`` at ``path`` (see :func:`read_checkpoint`), or None."""
    digest = config.hash()
    state = read_checkpoint(
        path, f"run {digest}",
        lambda s: s.get("version") == CHECKPOINT_VERSION and s.get("config_hash") == digest,
    )  # fmt: skip
    if state is not None:
        state["history"] = RunHistory(**state["history"])
    return state


def train(
    config: RunConfig,
    *,
    checkpoint_path: str | Path | None = None,
    data: PreparedData | None = None,
    progress: bool | None = None,
    keep_checkpoint: bool = False,
    model: torch.nn.Module | None = None,
    loss: str = "cross_entropy",
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
            are then ignored; :func:`initmem.measure.measure_init_memory` passes your own model here). Trained in
            place.
        loss: the training and evaluation loss, a key of :data:`initmem.records.LOSSES`.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss: allowed values are {', '.join(LOSSES)}; got {loss!r}")
    loss_fn = LOSSES[loss]
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    device = resolve_device(config.device)
    on_cuda = device.type == "cuda"
    if data is None:
        data = prepare_data(config, device)
    checkpoint_path = Path(checkpoint_path) if checkpoint_path is not None else None
    if checkpoint_path is not None and checkpoint_path.parent.is_dir():
        remove_stale_temp_files(checkpoint_path.parent)

    model = (seeded_model(config) if model is None else model).to(device)
    if config.channels_last:
        model = model.to(memory_format=torch.channels_last)
    initial = {name: w.detach().clone() for name, w in kernel_parameters(model).items()}
    optimizer = build_optimizer(model, config)
    forward = torch.compile(model) if (config.compile and on_cuda) else model
    use_bf16 = config.bf16 and on_cuda

    def autocast():
        if use_bf16:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    n_steps = steps_per_epoch(len(data.train), config.batch_size)
    multiplier = lr_multiplier(config, n_steps)
    clocks = ForgettingClocks.for_config(config)
    history = RunHistory()
    recorded = recorded_epochs(config)
    start_epoch, step, diverged, wall = 1, 0, False, 0.0

    state = load_checkpoint(checkpoint_path, config)
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        clocks = ForgettingClocks.for_config(config, **state["clocks"])
        history = state["history"]
        start_epoch, step, wall = state["epoch"] + 1, state["step"], state["wall_time_s"]
        torch.set_rng_state(state["torch_rng"])
        log.info("resumed %s at epoch %d from %s", config.hash(), state["epoch"], checkpoint_path)
    else:
        t0 = time.perf_counter()
        row, layer_norms = measure(
            recalibrated_copy(model, data.train_eval, max(config.batch_size, 500)), data, config, initial, autocast,
            loss,
        )
        row.update(lr=config.lr * multiplier(0), step=0.0, **clocks.as_dict())
        history.add(0, row, layer_norms)
        wall += time.perf_counter() - t0

    show = config.progress if progress is None else progress
    bar = tqdm(
        total=config.epochs, initial=start_epoch - 1, disable=None if show else True,
        desc=f"{config.optimizer} sigma_w={config.sigma_w:g}", leave=False, dynamic_ncols=True,
    )  # fmt: skip
    for epoch in range(start_epoch, config.epochs + 1):
        t0 = time.perf_counter()
        model.train()
        lr = config.lr * multiplier(step)
        for x, y in train_batches(data.train, config.batch_size, epoch, config.effective_data_seed, config.augment):
            factor = multiplier(step)
            lr = config.lr * factor
            apply_lr_multiplier(optimizer, factor)
            if config.channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            with autocast():
                batch_loss = loss_fn(forward(x), y)
            if not torch.isfinite(batch_loss):
                diverged = True
                break
            optimizer.zero_grad(set_to_none=True)
            batch_loss.backward()
            optimizer.step()
            clocks.tick(lr)
            step += 1
        if diverged:
            log.warning("run %s diverged in epoch %d (non-finite loss)", config.hash(), epoch)
            break
        if epoch in recorded:
            row, layer_norms = measure(model, data, config, initial, autocast, loss)
            row.update(lr=lr, step=float(step), **clocks.as_dict())
            history.add(epoch, row, layer_norms)
            bar.set_postfix(train=f"{row['train_acc']:.1f}", val=f"{row['val_acc']:.1f}", refresh=False)
        wall += time.perf_counter() - t0
        bar.update(1)
        if checkpoint_path is not None and config.checkpoint_every and epoch % config.checkpoint_every == 0:
            save_checkpoint(checkpoint_path, {
                "version": CHECKPOINT_VERSION, "config_hash": config.hash(), "epoch": epoch, "step": step,
                "model": model.state_dict(), "optimizer": optimizer.state_dict(), "clocks": clocks.as_dict(),
                "history": dataclasses.asdict(history), "wall_time_s": wall, "torch_rng": torch.get_rng_state(),
            })  # fmt: skip
    bar.close()
    dataset = to_dataset(config, history, recorded, diverged, wall, data, device)
    if checkpoint_path is not None and not keep_checkpoint:
        checkpoint_path.unlink(missing_ok=True)
    return dataset


