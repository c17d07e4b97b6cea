"""Measure the initialization memory of your own model on your own data: :func:`measure_init_memory`.

::

    from initmem import measure_init_memory, spread

    ds = measure_init_memory(
        lambda: MyNet(),                     # () -> nn.Module, called once per (sigma_w, seed)
        (x_train, y_train), (x_val, y_val), (x_test, y_test),
        sigma_ws=[0.25, 1.0, 2.5], seeds=[0, 1, 2], optimizer="sgd", lr=0.05, epochs=30, batch_size=128,
    )
    spread(ds)                               # max - min over sigma_w of the selected test accuracy, per seed

Each (sigma_w, seed) builds a fresh model, initialised by :func:`initmem.run.sigma_w.init_sigma_w_` and trained by
:func:`initmem.run.training.train`; the result has a built-in sweep's layout and variables, so every analysis works on it.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import logging
import math
import numbers
import pickle
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import xarray as xr
from torch import nn

from ..base.files import check_output_dir
from ..run.config import ConfigError, RunConfig
from ..run.data.prepare import PreparedData, SplitData, prepare_tensors
from ..run.data.sources import DataError
from ..run.kernels import kernel_parameters, sigma_w_kernels
from ..run.loop import resolve_device
from ..run.optim.build import OPTIMIZER_FIELDS
from ..run.records import LOSSES
from ..run.sigma_w import init_sigma_w_
from ..run.training import train
from .combine import combine_runs
from .driver import train_jobs
from .executors import RunJob, resolve_threads
from .spec import SweepSpec
from .tensor_splits import TensorSplits

__all__ = [
    "measure_init_memory",
    "MEASURE_EXECUTORS",
    "MEASURE_FIELDS",
    "MEASURE_FORMAT_VERSION",
    "OwnModelJob",
    "run_digest",
]

log = logging.getLogger(__name__)

#: Bumped whenever a cached measurement changes meaning; part of every run digest.
MEASURE_FORMAT_VERSION = 2  # 2: norms count the kernels sigma_w set (include/exclude)
#: RunConfig fields :func:`measure_init_memory` accepts as extra keywords (optimizer, schedule, evaluation and
#: floating-point path).
MEASURE_FIELDS = (
    *OPTIMIZER_FIELDS,
    "schedule",
    "warmup_epochs",
    "schedule_milestones",
    "schedule_gamma",
    "final_lr_fraction",
    "eval_every",
    "num_threads",
    "compile",
    "channels_last",
    "augment",
)
#: The executors a measurement can run on (stacking needs the built-in networks).
MEASURE_EXECUTORS = ("serial", "processes", "dask")
#: RunConfig fields that describe the built-in models or data, meaningless for your own model and data.
_NOT_APPLICABLE = ("model", "width", "logit_scale", "data", "image_size", "device", "progress", "checkpoint_every")


def measure_init_memory(
    model_fn: Callable[[], nn.Module],
    train: SplitData,
    val: SplitData,
    test: SplitData,
    sigma_ws: Sequence[float] = (0.25, 1.0, 2.5),
    seeds: Sequence[int] = (0, 1, 2),
    optimizer: str = "sgd",
    lr: float = 0.05,
    epochs: int = 30,
    batch_size: int = 128,
    loss: str = "cross_entropy",
    device: str = "auto",
    *,
    include_head: bool = True,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    train_eval_size: int = 5000,
    data_seed: int | None = None,
    cache_dir: str | Path | None = None,
    executor: str = "serial",
    workers: int | None = None,
    client: Any = None,
    progress: bool = True,
    **options: Any,
) -> xr.Dataset:
    """Train ``model_fn()`` at every (sigma_w, seed) and return the initialization-memory Dataset.

    sigma_w follows the package's one definition (:func:`initmem.run.sigma_w.init_sigma_w_`): the kernel W of every
    convolution and ``nn.Linear`` is drawn from N(0, sigma_w^2 / fan_in) (fan_in = ``W[0].numel()``), their
    biases are set to 0, normalization layers (BatchNorm, LayerNorm, GroupNorm, ...) to gain 1 and shift 0;
    embeddings and every other parameter keep what ``model_fn`` gave them (the same at every sigma_w of a
    seed). ``include=["embed.weight"]`` adds named parameters to the kernels, ``exclude=["head.weight"]``
    removes some.

    Args:
        model_fn: builds the network, ``() -> nn.Module``; called once per (sigma_w, seed) with PyTorch's global
            generator seeded by ``seed``. Its output (N, C) are the logits of C classes.
        train, val, test: each an ``(inputs, targets)`` pair of tensors (or arrays) or a map-style torch
            Dataset of such pairs: inputs (N, ...) of any example shape (vectors, token sequences, images),
            targets (N,) integer class indices. Used as given (no normalisation); validation selects the
            checkpoint (lowest validation loss), test is reported.
        sigma_ws: the init scales, distinct numbers > 0 (the ``sigma_w`` dimension).
        seeds: distinct integers >= 0 (the ``seed`` dimension); a seed fixes the draws of the kernels, the
            parameters ``model_fn`` initialises and, unless ``data_seed`` is given, the batch order.
        optimizer, lr, epochs, batch_size: as in :class:`~initmem.run.config.RunConfig` (lr per step; an epoch is
            ``len(train) // batch_size`` steps).
        loss: ``cross_entropy`` or ``mse`` (squared error to the one-hot targets), see
            :data:`initmem.run.records.LOSSES`; accuracy is ``argmax == target`` either way.
        device: ``auto`` (CUDA if available), ``cpu`` or ``cuda``.
        include_head: False draws the last ``nn.Linear`` at sigma_w = 1 whatever sigma_w is.
        include, exclude: parameter names (``model.named_parameters()``) to add to / remove from the kernels.
        train_eval_size: training examples (a fixed class-balanced sample) on which train_loss/acc are measured.
        data_seed: seed of the batch order and of that sample; None uses each run's ``seed``.
        cache_dir: a folder in which each run is kept as ``<run_hash>.nc`` and read back instead of trained
            again. The key (:func:`run_digest`) covers the settings, ``repr`` of the model, its parameter
            shapes and a fingerprint of the data, but not the code of ``forward``: clear the folder when you change
            what the model computes without changing its repr. None (default): no cache.
        executor: ``serial`` (in this process), ``processes`` or ``dask``: the executors of
            :func:`initmem.sweeps.driver.sweep` (:mod:`initmem.sweeps.executors`). The parallel ones need a picklable
            ``model_fn`` (a function or class defined at module level, not a lambda) and send each worker the data
            once, as a file of tensors beside the runs.
        workers, client: as in :func:`initmem.sweeps.driver.sweep` (default ``min(runs, cores)`` workers; a
            ``distributed.Client`` for ``dask``).
        progress: tqdm bars.
        **options: other RunConfig fields among :data:`MEASURE_FIELDS` (``momentum``, ``weight_decay``,
            ``schedule``, ``warmup_epochs``, ``eval_every``, ``num_threads``, ``channels_last`` (default: True
            for 4-D image inputs), ``augment`` (image inputs only), ...).

    Returns:
        One Dataset with dimensions ``sigma_w``, ``seed``, ``epoch`` and ``layer`` holding every variable of a
        built-in sweep (:mod:`initmem.sweeps`). Its attributes say what was measured: ``model`` (repr),
        ``model_class``, ``n_parameters``, ``kernels`` (the parameters sigma_w set), ``data_sizes``,
        ``input_shape``, ``n_classes``, ``training`` (the settings, JSON), ``optimizer``, ``loss``, and the
        provenance of a sweep (``git_commit``, ``torch_version``, ``hardware``, ``device``, ``data_source``, ...).

    With ``executor="serial"`` ``model_fn`` and the tensors need not be picklable. Under ``processes`` or ``dask``
    each run's torch thread count defaults to ``cores // workers`` (as in a built-in sweep; it is part of the run's
    key).

    Raises:
        ConfigError: an empty or invalid ``sigma_ws``/``seeds``, an unknown keyword or an invalid setting, an
            unknown ``executor``, or a ``model_fn`` that the parallel executors cannot pickle.
        TypeError: ``model_fn`` is a model instead of a function that builds one, is not callable, or returns
            something other than an ``nn.Module``.
        ValueError: mismatched data shapes or training targets of fewer than 2 classes
            (:class:`initmem.run.data.sources.DataError`), a model with no weight layer that sigma_w scales, a model
            whose output does not fit the targets, or an unknown ``loss``.
    """
    sigma_ws, seeds = _check_grid("sigma_ws", sigma_ws, _is_positive), _check_grid("seeds", seeds, _is_seed)
    if isinstance(model_fn, nn.Module):
        name = type(model_fn).__name__
        raise TypeError(
            f"model_fn: got a model ({name}), not a function that builds one; every (sigma_w, seed) "
            f"trains a fresh copy, so pass e.g. model_fn=lambda: {name}(...) or the class itself"
        )
    if not callable(model_fn):
        raise TypeError(f"model_fn: must be a callable () -> torch.nn.Module, got {type(model_fn).__name__}")
    if loss not in LOSSES:
        raise ConfigError(f"loss: allowed values are {', '.join(LOSSES)}; got {loss!r}")
    if executor not in MEASURE_EXECUTORS:
        raise ConfigError(
            f"executor: allowed values are {', '.join(MEASURE_EXECUTORS)} (stacked needs the built-in "
            f"networks); got {executor!r}"
        )
    if executor != "serial":
        _check_picklable(model_fn, executor)
    include, exclude = list(include), list(exclude)
    first = prepare_tensors(
        train, val, test, resolve_device(device), train_eval_size, seeds[0] if data_seed is None else data_seed
    )
    classes = torch.unique(first.train.labels).tolist()
    if len(classes) < 2:
        raise DataError(
            f"train: the targets hold {len(classes)} class ({', '.join(map(str, classes))}); measuring "
            "needs at least 2 (a first slice of data sorted by class holds one: shuffle it, e.g. "
            "initmem.cifar10_tensors)"
        )
    base = _base_config(
        first,
        optimizer=optimizer,
        lr=lr,
        epochs=epochs,
        batch_size=batch_size,
        device=device,
        progress=progress,
        data_seed=data_seed,
        train_eval_size=train_eval_size,
        init_head=include_head,
        **options,
    )
    spec = SweepSpec(base=base, grid={"sigma_w": sigma_ws, "seed": seeds})
    configs = resolve_threads([config for _, config in spec.configs()], executor, workers, client, None)
    skeleton = _check_first_model(model_fn, configs[0], first, include, exclude)

    with contextlib.ExitStack() as stack:
        folder = Path(cache_dir) if cache_dir is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        check_output_dir(folder, "cache_dir")  # before anything trains
        data = TensorSplits(fingerprint=first.source["sha256"], device=device, train_eval_size=train_eval_size)
        stack.callback(TensorSplits.release)  # the data of a measurement is held only while it runs
        data.hold(configs[0].effective_data_seed, first)
        if executor == "serial":
            data.prepare_in_this_process([c.effective_data_seed for c in configs], (train, val, test))
        else:
            data = stack.enter_context(data.written_to(folder, first))
        jobs = [
            OwnModelJob(
                config=config,
                path=folder / f"{digest}.nc",
                model_fn=model_fn,
                data=data,
                loss=loss,
                include=tuple(include),
                exclude=tuple(exclude),
            )
            for config, digest in ((c, _job_digest(model_fn, c, first, loss, include, exclude)) for c in configs)
        ]
        runs, *_ = train_jobs(jobs, executor, workers=workers, client=client, progress=progress)
        combined = combine_runs(spec, [runs[job.key] for job in jobs])
    combined.attrs.update(_description(skeleton, first, base, loss))
    return combined


# ----------------------------------------------------------------------------------------------
# Validation and the run configs
# ----------------------------------------------------------------------------------------------
def _is_positive(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _is_seed(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _check_grid(name: str, values: Any, ok: Callable[[Any], bool]) -> list:
    """A non-empty list of distinct valid values (numbers > 0 for sigma_ws, integers >= 0 for seeds)."""
    what = "numbers > 0" if name == "sigma_ws" else "integers >= 0"
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ConfigError(f"{name}: must be a list of {what}, got {values!r}")
    values = list(values)
    if not values:
        raise ConfigError(f"{name}: empty; give at least one value ({what})")
    bad = [v for v in values if not ok(v)]
    if bad:
        raise ConfigError(f"{name}: must be {what}, got {bad[0]!r}")
    values = [float(v) if name == "sigma_ws" else int(v) for v in values]
    if len(set(values)) != len(values):
        raise ConfigError(f"{name}: values must differ, got {values!r}")
    return values


def _base_config(data: PreparedData, **settings: Any) -> RunConfig:
    """The RunConfig that carries the training settings to :func:`initmem.run.training.train`. Its data sizes are
    those of ``data``; its model and data-source fields are unused (the model comes from ``model_fn``)."""
    fixed = {
        "optimizer",
        "lr",
        "epochs",
        "batch_size",
        "device",
        "progress",
        "data_seed",
        "train_eval_size",
        "init_head",
    }
    unknown = sorted(set(settings) - fixed - set(MEASURE_FIELDS))
    if unknown:
        raise ConfigError(f"{unknown[0]}: not a setting of measure_init_memory; allowed: {', '.join(MEASURE_FIELDS)}")
    image_inputs = data.train.images.ndim == 4
    settings.setdefault("channels_last", image_inputs)
    if settings.get("augment") and not image_inputs:
        raise ConfigError(
            f"augment: needs image inputs (N, C, H, W), got examples of shape {tuple(data.train.images.shape[1:])}"
        )
    sizes = {"train_size": len(data.train), "val_size": len(data.val), "test_size": len(data.test)}
    return RunConfig(data="tensors", **sizes, **settings)


# ----------------------------------------------------------------------------------------------
# One run
# ----------------------------------------------------------------------------------------------
def _build(model_fn: Callable[[], nn.Module], config: RunConfig, include: list[str], exclude: list[str]) -> nn.Module:
    """``model_fn()`` with the global generator seeded by ``config.seed``, then initialised at ``config.sigma_w``."""
    torch.manual_seed(config.seed)
    model = model_fn()
    if not isinstance(model, nn.Module):
        raise TypeError(f"model_fn: must return a torch.nn.Module, got {type(model).__name__}")
    generator = torch.Generator().manual_seed(config.seed)
    return init_sigma_w_(model, config.sigma_w, config.init_head, generator, include=include, exclude=exclude)


@torch.no_grad()
def _check_model(model: nn.Module, data: PreparedData) -> None:
    """A copy of ``model`` must map two training inputs to logits (2, C) with C above every target."""
    probe = copy.deepcopy(model).to(data.train.device).eval()
    x = data.train.images[:2]
    try:
        out = probe(x)
    except Exception as exc:  # noqa: BLE001 - any failure here is a shape/dtype mismatch to report in one line
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(
            f"model_fn: the model fails on training inputs of shape (N, "
            f"{', '.join(map(str, x.shape[1:]))}) and dtype {x.dtype}: {first}"
        ) from None
    n_classes = int(max(int(d.labels.max()) for d in (data.train, data.val, data.test))) + 1
    if not isinstance(out, torch.Tensor) or out.ndim != 2 or out.shape[1] < n_classes:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(
            f"model_fn: the model must return logits (N, C) with C >= {n_classes} (the targets go up to "
            f"{n_classes - 1}), got {shape}"
        )


def run_digest(config: RunConfig, model: nn.Module, data: PreparedData, loss: str, include, exclude) -> str:
    """16 hex digits naming one run of :func:`measure_init_memory`: the training settings (the RunConfig's hashed
    fields that apply), ``repr(model)``, its parameter names and shapes, the data's fingerprint, the loss, the
    ``include``/``exclude`` names and :data:`MEASURE_FORMAT_VERSION`."""
    payload = {k: v for k, v in config.hash_payload().items() if k not in _NOT_APPLICABLE}
    payload.update(
        model=repr(model),
        parameters=[[n, list(p.shape)] for n, p in model.named_parameters()],
        data=data.source["sha256"],
        loss=loss,
        include=list(include),
        exclude=list(exclude),
        measure_format_version=MEASURE_FORMAT_VERSION,
    )
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _check_first_model(model_fn, config: RunConfig, data: PreparedData, include, exclude) -> dict[str, Any]:
    """Build the first run's model, check that sigma_w scales some of its weights and that it fits the data
    (:func:`_check_model`), and return its :func:`_skeleton` (before anything trains, so a mismatch is one early
    error)."""
    with torch.random.fork_rng(devices=[]):
        model = _build(model_fn, config, include, exclude)
        if not sigma_w_kernels(model, include, exclude):
            raise ValueError(
                f"model_fn: the model ({type(model).__name__}) has no weight layer that sigma_w scales "
                "(no nn.Linear or convolution, nothing in include=[...]), so there is nothing to "
                "measure"
            )
        _check_model(model, data)
        return _skeleton(model, include, exclude)


def _job_digest(model_fn, config: RunConfig, data: PreparedData, loss: str, include, exclude) -> str:
    """The :func:`run_digest` of one (sigma_w, seed): its model is built (not trained) to read its repr and shapes."""
    with torch.random.fork_rng(devices=[]):
        return run_digest(config, _build(model_fn, config, include, exclude), data, loss, include, exclude)


def _check_picklable(model_fn: Callable[[], nn.Module], executor: str) -> None:
    try:
        pickle.dumps(model_fn)
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the workers cannot receive it
        raise ConfigError(
            f"model_fn: the {executor} executor sends model_fn to worker processes, which needs a picklable "
            f"callable (a function or class defined at module level), got {model_fn!r} "
            f"({type(exc).__name__}); use executor='serial' or define it at module level"
        ) from None


@dataclass(frozen=True, kw_only=True)
class OwnModelJob(RunJob):
    """One (sigma_w, seed) of :func:`measure_init_memory` for the executors: ``model_fn()`` initialised at the run's
    sigma_w (:func:`_build`), trained by :func:`initmem.run.training.train` on your data (no checkpoint). Its file is
    named by :func:`run_digest`."""

    model_fn: Callable[[], nn.Module]
    data: TensorSplits
    loss: str = "cross_entropy"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def checkpoint(self) -> Path | None:
        return None

    def train(self, progress: bool, checkpoint: Path | None) -> xr.Dataset:
        config = self.config
        data = self.data.prepared(config.effective_data_seed)
        with torch.random.fork_rng(devices=[]):
            model = _build(self.model_fn, config, list(self.include), list(self.exclude))
            torch.manual_seed(config.seed)  # dropout and other random layers: reproducible per seed
            kernels = functools.partial(kernel_parameters, include=self.include, exclude=self.exclude)
            ds = train(config, data=data, model=model, loss=self.loss, progress=progress, kernels=kernels)
        ds.attrs.update(config=_training_json(config, self.loss), config_hash=self.key)
        if self.loss != "cross_entropy":
            for name in ("train_loss", "val_loss", "test_loss"):
                ds[name].attrs["units"] = f"{self.loss} per example"
        return ds


def _skeleton(model: nn.Module, include, exclude) -> dict[str, Any]:
    """What the attributes need of a model, taken before training changes it."""
    return {
        "repr": repr(model),
        "class": type(model).__name__,
        "n_parameters": sum(p.numel() for p in model.parameters()),
        "n_trainable": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "kernels": ", ".join(sigma_w_kernels(model, include, exclude)),
    }


def _training_json(config: RunConfig, loss: str) -> str:
    """The settings that applied (RunConfig fields minus the built-in model/data ones), as JSON."""
    values = {k: v for k, v in config.to_dict().items() if k not in _NOT_APPLICABLE}
    return json.dumps({**values, "loss": loss}, sort_keys=True)


def _description(skeleton: dict[str, Any], data: PreparedData, base: RunConfig, loss: str) -> dict[str, Any]:
    """The combined Dataset's attributes: what was measured and how."""
    sizes = {**data.split.sizes, "train_eval": len(data.train_eval)}
    n_classes = int(max(int(d.labels.max()) for d in (data.train, data.val, data.test))) + 1
    caption_base = {
        "model": skeleton["class"],
        "train_size": sizes["train"],
        "batch_size": base.batch_size,
        "epochs": base.epochs,
    }
    return {
        "measured": "initialization memory of model_fn() on the given data: the dependence on sigma_w of the "
        "validation-selected predictor (initmem.measure_init_memory)",
        "preset": "own model",
        "model": skeleton["repr"],
        "model_class": skeleton["class"],
        "n_parameters": skeleton["n_parameters"],
        "n_trainable_parameters": skeleton["n_trainable"],
        "kernels": skeleton["kernels"],
        "include_head": int(base.init_head),
        "data_sizes": json.dumps(sizes),
        "input_shape": json.dumps(list(data.train.images.shape[1:])),
        "input_dtype": str(data.train.images.dtype),
        "n_classes": n_classes,
        "optimizer": base.optimizer,
        "loss": loss,
        "training": _training_json(base, loss),
        "spec": json.dumps({"base": caption_base, "grid": {}, "zip": {}}),
    }
