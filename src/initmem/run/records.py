"""What a run records: its evaluations, per-epoch measurements and the Dataset with provenance.

:func:`initmem.run.training.train` and :func:`initmem.run.stacked.train_stacked` record the same things in the same
way through these functions, so a stacked run's Dataset has exactly the variables, coordinates and attributes
of a separate run's (see :mod:`initmem.run.training` for the table of variables). The variables' names and the
recorded epochs are in the torch-free :mod:`initmem.run.variables` (re-exported here), the commit in
:func:`initmem.base.paths.git_commit`.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import platform
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
import xarray as xr

from ..base.paths import git_commit
from ..base.version import __version__
from .config import RunConfig
from .data.batches import eval_batches
from .data.prepare import PreparedData
from .elapsed import Elapsed, load_average
from .kernels import kernel_parameters
from .metrics import best_index, distance_from_init, frobenius_norms, repair_gap, tau_interp, total_norm
from .variables import CLOCK_DESCRIPTIONS, CLOCKS, EPOCH_METRICS

__all__ = [
    "LOSSES",
    "RunHistory",
    "EVAL_BATCH_MIN",
    "autocast_dtype",
    "eval_batch_size",
    "evaluate",
    "recalibrated_copy",
    "measure",
    "kernel_norms",
    "cpu_model",
    "math_library_versions",
    "hardware_facts",
    "hardware_description",
    "to_dataset",
]


def mse_one_hot(logits: torch.Tensor, targets: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """Squared error between the logits (N, C) and the one-hot targets (N,) (class indices), summed over the C
    classes and averaged (``reduction="mean"``) or summed (``"sum"``) over the N examples."""
    errors = (logits - F.one_hot(targets, logits.shape[-1]).to(logits.dtype)).square().sum(-1)
    return errors.sum() if reduction == "sum" else errors.mean()


#: Training losses by name, each ``loss(logits (N, C), targets (N,) class indices, reduction="mean"|"sum")``.
#: Accuracy is always ``argmax(logits) == target``.
LOSSES = {"cross_entropy": F.cross_entropy, "mse": mse_one_hot}


@dataclass
class RunHistory:
    """Metrics recorded so far: one dict of scalars per recorded epoch."""

    epochs: list[int] = field(default_factory=list)
    rows: list[dict[str, float]] = field(default_factory=list)
    layer_rows: list[dict[str, float]] = field(default_factory=list)

    def add(self, epoch: int, row: dict[str, float], layer_norms: dict[str, float]) -> None:
        self.epochs.append(epoch)
        self.rows.append(row)
        self.layer_rows.append(layer_norms)


#: Evaluations use batches of at least this many images (they hold no gradients, so larger is faster).
EVAL_BATCH_MIN = 500


def eval_batch_size(config: RunConfig) -> int:
    """The evaluation batch size of a run: ``max(config.batch_size, EVAL_BATCH_MIN)`` images."""
    return max(config.batch_size, EVAL_BATCH_MIN)


def autocast_dtype(config: RunConfig) -> torch.dtype | None:
    """The dtype of a run's forward passes under :class:`torch.autocast`, training and evaluation alike: bfloat16
    when ``config.bf16``, on the CPU as on CUDA; None (no autocast: float32) otherwise. Recorded as the run's
    ``autocast_dtype`` attribute (:func:`to_dataset`)."""
    return torch.bfloat16 if config.bf16 else None


@torch.no_grad()
def evaluate(
    model: torch.nn.Module, data, batch_size: int, autocast, loss: str = "cross_entropy"
) -> tuple[float, float]:
    """Mean loss (default cross-entropy; see :data:`LOSSES`) and accuracy (%) of ``model`` in eval mode on a
    DeviceDataset."""
    model.eval()
    loss_fn = LOSSES[loss]
    loss_sum, correct, count = 0.0, 0, 0
    for x, y in eval_batches(data, batch_size):
        with autocast():
            logits = model(x)
        loss_sum += float(loss_fn(logits.float(), y, reduction="sum"))
        correct += int((logits.argmax(1) == y).sum())
        count += y.numel()
    return loss_sum / count, 100.0 * correct / count


@torch.no_grad()
def recalibrated_copy(model: torch.nn.Module, data, batch_size: int) -> torch.nn.Module:
    """A copy whose BatchNorm running statistics are the exact averages over ``data``.

    Used at epoch 0 only: a fresh network's running statistics (mean 0, var 1) do not describe its
    activations, whose scale depends on sigma_w, so eval-mode metrics at initialisation would be
    meaningless without this. The training trajectory is not touched.
    """
    clone = copy.deepcopy(model)
    for module in clone.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None  # cumulative average
    clone.train()
    for x, _ in eval_batches(data, batch_size):
        clone(x)
    return clone


def measure(
    model,
    data: PreparedData,
    config: RunConfig,
    initial,
    autocast,
    loss: str = "cross_entropy",
    kernels: Callable[[torch.nn.Module], dict[str, torch.Tensor]] = kernel_parameters,
) -> tuple[dict, dict]:
    """Losses (``loss``, see :data:`LOSSES`), accuracies and the norms of ``kernels(model)`` (default: every
    convolution and linear weight) at the current point."""
    bs = eval_batch_size(config)
    row: dict[str, float] = {}
    for split in ("train", "val", "test"):
        dataset = data.train_eval if split == "train" else getattr(data, split)
        row[f"{split}_loss"], row[f"{split}_acc"] = evaluate(model, dataset, bs, autocast, loss)
    norms, layer_norms = kernel_norms(kernels(model), initial)
    row.update(norms)
    return row, layer_norms


def kernel_norms(
    kernels: dict[str, torch.Tensor], initial: dict[str, torch.Tensor]
) -> tuple[dict[str, float], dict[str, float]]:
    """``({"weight_norm", "dist_from_init"}, {layer: norm})`` of ``kernels`` (keyed by layer) against the
    ``initial`` kernels: the Frobenius norm of all of them together, their distance from the initial ones, and
    each one's norm."""
    layer_norms = frobenius_norms(kernels)
    return {"weight_norm": total_norm(layer_norms), "dist_from_init": distance_from_init(kernels, initial)}, layer_norms


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``'s first ``model name`` on Linux), else what :mod:`platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    name = line.split(":", 1)[1].strip()
                    if name:
                        return " ".join(name.split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def math_library_versions() -> dict[str, str]:
    """The versions of oneDNN and MKL this torch build uses (``""`` for a library it was built without), read from
    ``torch.__config__.show()``: they choose the convolution and matmul kernels, hence the floating-point path."""
    shown = torch.__config__.show()
    found = {
        "onednn": re.search(r"(?:MKL-DNN|oneDNN)\s+v?([0-9][0-9.]*)", shown),
        "mkl": re.search(r"Math Kernel Library Version\s+([0-9][0-9.]*)", shown),
    }
    return {name: match.group(1).rstrip(".") if match else "" for name, match in found.items()}


def hardware_facts(device: torch.device) -> dict[str, str]:
    """What decides a run's floating-point path besides its config, recorded (not hashed) with every run.

    CPU: ``cpu_model`` (e.g. ``"Intel(R) Xeon(R) Processor"``), ``cpu_capability`` (the instruction set torch
    dispatches to: ``torch.backends.cpu.get_cpu_capability()``, e.g. ``AVX512``), ``machine`` (``x86_64``),
    ``onednn_version`` and ``mkl_version``. CUDA: the device's name as ``gpu_model``, with the CUDA and cuDNN
    versions. Runs of one config replay bit for bit only where these agree.
    """
    if device.type == "cuda":
        return {
            "gpu_model": torch.cuda.get_device_name(device),
            "cuda_version": str(torch.version.cuda or ""),
            "cudnn_version": str(torch.backends.cudnn.version() or ""),
        }
    libraries = math_library_versions()
    return {
        "cpu_model": cpu_model(),
        "cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
        "machine": platform.machine(),
        "onednn_version": libraries["onednn"],
        "mkl_version": libraries["mkl"],
    }


def hardware_description(device: torch.device) -> str:
    """One line naming the hardware of a run: the accelerator's name, or the CPU's model, architecture and
    instruction set with its core and thread counts and the math libraries, e.g. ``"Intel(R) Xeon(R) Processor
    (x86_64, AVX512), 2 cores, 1 thread; oneDNN 3.12.0, MKL 2024.2"``."""
    facts = hardware_facts(device)
    if device.type == "cuda":
        return facts["gpu_model"]
    libraries = ", ".join(
        f"{label} {facts[key]}" for label, key in (("oneDNN", "onednn_version"), ("MKL", "mkl_version")) if facts[key]
    )
    line = (
        f"{facts['cpu_model']} ({facts['machine']}, {facts['cpu_capability']}), {os.cpu_count()} cores, "
        f"{torch.get_num_threads()} thread{'s' if torch.get_num_threads() != 1 else ''}"
    )
    return f"{line}; {libraries}" if libraries else line


def to_dataset(
    config: RunConfig,
    history: RunHistory,
    recorded: list[int],
    divergence: str,
    spent: Elapsed,
    data,
    device,
    load_start: float = math.nan,
) -> xr.Dataset:
    """Assemble the per-epoch history and the run-level scalars into one Dataset (``spent``: the run's seconds on the
    wall clock and in CPU time; ``load_start``: the machine's 1-minute load average when the run (or its last resumed
    part) started, recorded as the attribute ``load_avg_start`` beside ``load_avg_end``, the load now).

    ``divergence`` is why the run diverged (``""``: it did not; see :class:`initmem.run.loop.DivergenceWatch`),
    stored as the attribute ``divergence``. Per-epoch values are NaN after a divergence; a diverged run's selected
    and final scalars are NaN.
    """
    diverged = bool(divergence)
    layers = list(history.layer_rows[0])
    index = {epoch: i for i, epoch in enumerate(recorded)}
    columns = {name: np.full(len(recorded), np.nan) for name in EPOCH_METRICS}
    layer_norm = np.full((len(recorded), len(layers)), np.nan)
    for epoch, row, norms in zip(history.epochs, history.rows, history.layer_rows):
        for name in EPOCH_METRICS:
            columns[name][index[epoch]] = row[name]
        layer_norm[index[epoch]] = [norms[layer] for layer in layers]

    epochs = np.asarray(recorded)
    # A diverged run has no selected or final predictor: its checkpoints stop at an arbitrary epoch (often 0),
    # so the run-level numbers are NaN and it drops out of every seed mean and spread.
    best = -1 if diverged else best_index(columns["val_loss"])
    last = -1 if diverged else int(np.flatnonzero(np.isfinite(columns["test_acc"]))[-1])
    tau = tau_interp(epochs, columns["train_acc"])

    def at(index: int, name: str) -> float:
        return float(columns[name][index]) if index >= 0 else math.nan

    scalars = {
        "best_epoch": float(epochs[best]) if best >= 0 else math.nan,
        "selected_test_acc": at(best, "test_acc"),
        "selected_val_acc": at(best, "val_acc"),
        "selected_train_acc": at(best, "train_acc"),
        **{f"selected_{clock}": at(best, clock) for clock in CLOCKS},
        "final_epoch": float(epochs[last]) if last >= 0 else math.nan,
        "final_test_acc": at(last, "test_acc"),
        "final_train_acc": at(last, "train_acc"),
        **{f"final_{clock}": at(last, clock) for clock in CLOCKS},
        "tau_interp": tau,
        "repair_gap": repair_gap(epochs, columns["val_acc"], tau),
        "diverged": float(diverged),
        **spent.state(),
    }
    ds = xr.Dataset(
        {name: ("epoch", values) for name, values in columns.items()}
        | {"layer_norm": (("epoch", "layer"), layer_norm)}
        | {name: ((), float(value)) for name, value in scalars.items()},
        coords={"epoch": epochs, "layer": np.array(layers, dtype=object)},
    )
    units = {"acc": "%", "loss": "nats"}
    for name in ds.data_vars:
        suffix = name.rsplit("_", 1)[-1]
        if suffix in units:
            ds[name].attrs["units"] = units[suffix]
        clock = name.removeprefix("selected_").removeprefix("final_")
        if clock in CLOCK_DESCRIPTIONS:
            ds[name].attrs["description"] = CLOCK_DESCRIPTIONS[clock]
    dtype = autocast_dtype(config)
    ds.attrs.update(
        config=config.to_json(),
        config_hash=config.hash(),
        initmem_version=__version__,
        git_commit=git_commit(),
        torch_version=str(torch.__version__),
        python_version=sys.version.split()[0],
        device=str(device),
        hardware=hardware_description(device),
        **hardware_facts(device),
        data_source=json.dumps(data.source, sort_keys=True),
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        num_threads=torch.get_num_threads(),
        divergence=divergence,
        stacked=0,
        channels_last=int(config.channels_last),
        autocast_dtype="none" if dtype is None else str(dtype).removeprefix("torch."),
        compiled=int(config.compile and device.type == "cuda"),
        load_avg_start=float(load_start),
        load_avg_end=load_average(),
    )
    return ds
