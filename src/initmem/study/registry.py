"""The experiment registry: one function per experiment turns its notebook's parameters into its sweep spec.

Every experiment notebook (``notebooks/NN_*.py``) has a cell tagged ``parameters``; the next cell builds the
sweep with :func:`experiment_spec` from those values, and so do the cost estimates
(:func:`initmem.study.costs.estimate_cost`), the tests and the scripts that run a preset's sweeps outside the
notebooks. The spec decides every run's config and therefore its cache file: there is exactly one place that
says how an experiment's parameters become runs.

What every parameter means is :data:`PARAMETERS` (one line each, shown in every chapter's table of the values it
was computed with); which values each preset gives them is :mod:`initmem.study.presets`. A seed sets the weights
and, through ``data_seed`` = seed, the data order.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any

from ..run.config import shown

__all__ = [
    "EXPERIMENTS",
    "EXPERIMENT_SPECS",
    "EXPERIMENT_ATTRS",
    "PARAMETERS",
    "ZIPPED",
    "experiment_spec",
    "batch_size_epochs",
]

#: The training experiments whose combined results feed the clock collapse (07) and the ledger (99), in order.
EXPERIMENTS = ("01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth")

#: What each parameter of the experiment notebooks means (units in parentheses).
PARAMETERS: dict[str, str] = {
    "preset": "the preset whose values the parameters left at None take: smoke, cpu, gpu (01 only) or paper",
    "executor": "how the runs are trained: serial, processes or dask (not part of a run's hash)",
    "workers": "parallel worker processes of the executor (None: one per core)",
    "num_threads": "torch threads per run (part of the hash: it changes the floating-point path)",
    "model": "the network: resnet9 or resnet20/32/44/56/110",
    "models": "the networks compared, one per entry of widths",
    "width": "base channel count (ResNet-9: 64 in the paper)",
    "widths": "base channel count of each of models",
    "logit_scale": "fixed factor on the logits (None: the architecture's own; ResNet-9's is 0.125)",
    "logit_scales": "the candidate logit factors calibrated against each other",
    "data": "cifar10 or synthetic",
    "image_size": "image side (pixels; 32 is CIFAR-10's own)",
    "train_size": "training images (None: all that the validation split leaves)",
    "val_size": "validation images (they select the checkpoint)",
    "test_size": "test images (None: all 10,000)",
    "train_eval_size": "training images on which train accuracy is measured each evaluation",
    "augment": "random crops and flips (true/false)",
    "batch_size": "images per step",
    "batch_sizes": "the batch sizes compared",
    "steps": "optimisation steps each batch size takes (about), when epochs_grid is None",
    "epochs_grid": "epochs each batch size is trained for (a grid: equal epochs and equal steps); None: use steps",
    "epochs": "passes over the training set",
    "eval_every": "epochs between evaluations",
    "warmup_epochs": "linear learning-rate warm-up (epochs)",
    "schedule": "learning-rate schedule: constant, step, cosine or linear",
    "schedule_milestones": "fractions of training at which the step schedule multiplies the lr by schedule_gamma",
    "schedule_gamma": "factor of each step of the step schedule",
    "lr": "learning rate (per step)",
    "lrs": "learning rates (per step): one per optimizer in 01, the grid in 03",
    "optimizers": "the optimizers compared",
    "extra_cells": "further (lr, weight_decay) cells beside the grid of lrs x weight_decays: a list of "
    '{"lrs": [...], "weight_decays": [...]}, each a grid of its own, optionally with its own "seeds" (10 only)',
    "weight_decays": "decay strength lambda: one per optimizer in 01 (AdamW decoupled), the coupled-L2 grid in 03",
    "aux_lrs": "Muon's learning rate of its AdamW group (BatchNorm, biases, head); one per optimizer",
    "sigma_ws": "the initialization scales compared",
    "seeds": "seeds (each sets the initial directions and the data order)",
    "horizons": "training lengths (epochs) at which the selected predictor is read off the long runs",
    "reference_horizon": "the horizon the longer ones are compared with (one of horizons)",
    "checkpoint_every": "epochs between resumable checkpoints (0: none)",
}

_DATA = ("data", "image_size", "train_size", "val_size", "test_size", "train_eval_size", "augment")
_RUN = ("eval_every", "warmup_epochs", "num_threads")


#: The network and its training length, which most experiments take from their parameters as they are.
_NETWORK = ("model", "width", "logit_scale", "batch_size", "epochs")
#: A step schedule's settings.
_STEP_SCHEDULE = ("schedule", "schedule_milestones", "schedule_gamma")


def _base(p: Mapping[str, Any], *names: str, **fixed: Any) -> dict[str, Any]:
    """The spec's ``base``: the named parameters, the data and execution ones, and ``fixed`` values."""
    base = {name: p[name] for name in (*names, *_DATA, *_RUN)}
    return {**base, **fixed, "progress": False}


def _optimizers(p: Mapping[str, Any]) -> dict[str, Any]:
    """01: every optimizer over the sigma_w grid. Extra parameters: ``optimizers, lrs, weight_decays, aux_lrs``
    (one entry per optimizer)."""
    return {
        "base": _base(p, *_NETWORK, schedule="constant"),
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": {
            "optimizer": p["optimizers"],
            "lr": p["lrs"],
            "weight_decay": p["weight_decays"],
            "aux_lr": p["aux_lrs"],
        },
    }


def _positive_ints(p: Mapping[str, Any], name: str) -> list[int]:
    """Parameter ``name``, which must be a non-empty list of positive integers (horizons, batch sizes, epochs).

    Raises:
        ValueError: ``"<name>: must be a list of positive integers, e.g. [32, 512]; got <value>"``.
    """
    values = p[name]
    if not (isinstance(values, (list, tuple)) and values and all(_positive_int(v) for v in values)):
        raise ValueError(f"{name}: must be a list of positive integers, e.g. [32, 512]; got {shown(values)}")
    return [int(v) for v in values]


def _positive_int(value: Any) -> bool:
    """Whether ``value`` is an integer (numpy's too; not a bool, a float or a string) above 0."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0


def _long_training(p: Mapping[str, Any]) -> dict[str, Any]:
    """02: low-lr SGD for ``epochs``, read at several horizons. Extra: ``lr, checkpoint_every, horizons,
    reference_horizon`` (the horizons are read off the runs, see :func:`initmem.study.analysis.within_horizons`)."""
    horizons, reference = _positive_ints(p, "horizons"), p["reference_horizon"]
    if reference not in horizons or max(horizons) > p["epochs"]:
        raise ValueError(
            f"horizons: must contain reference_horizon = {shown(reference)} and lie within epochs = "
            f"{shown(p['epochs'])}; got {shown(horizons)}"
        )
    return {
        "base": _base(p, *_NETWORK, "lr", "checkpoint_every", optimizer="sgd", schedule="constant"),
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
    }


def _lr_and_l2(p: Mapping[str, Any]) -> dict[str, Any]:
    """03 and the phase diagram 10: SGD over learning rate x coupled L2. Extra: ``lrs, weight_decays, schedule,
    schedule_milestones, schedule_gamma`` and, for 10, ``extra_cells`` (grids of cells beside the main one). 10 is the
    same sweep on a finer grid, so at equal parameters a cell of 03 is a cell of 10 (the same runs, the same
    hashes)."""
    spec = {
        "base": _base(p, *_NETWORK, *_STEP_SCHEDULE, optimizer="sgd", decay_mode="l2"),
        "grid": {"lr": p["lrs"], "weight_decay": p["weight_decays"], "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
    }
    also = _extra_cells(p.get("extra_cells"))
    return {**spec, "also": also} if also else spec


def _extra_cells(value: Any) -> list[dict[str, Any]]:
    """``[{"lrs": [...], "weight_decays": [...], "seeds": [...]}, ...]`` (``seeds`` optional: the grid's) -> the sweep
    spec's ``also`` grids (None: none)."""
    if value is None:
        return []
    shape = 'a list of {"lrs": [...], "weight_decays": [...]} (and optionally "seeds": [...])'
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(cells, Mapping) and {"lrs", "weight_decays"} <= set(cells) <= {"lrs", "weight_decays", "seeds"}
        for cells in value
    ):
        raise ValueError(f"extra_cells: must be {shape}, got {shown(value)}")
    names = {"lrs": "lr", "weight_decays": "weight_decay", "seeds": "seed"}
    return [{names[key]: values for key, values in cells.items()} for cells in value]


def batch_size_epochs(batch_sizes: list[int], steps: int, train_size: int) -> list[int]:
    """Epochs that give each batch size about ``steps`` optimisation steps on ``train_size`` images.

    An epoch has ``train_size // b`` steps (the last partial batch is dropped), so the epochs are
    ``max(1, round(steps / (train_size // b)))``; the steps actually taken are recorded by every run.

    >>> batch_size_epochs([16, 64, 256], 2340, 5000)
    [8, 30, 123]
    """
    return [max(1, round(steps / (train_size // b))) for b in batch_sizes]


def _batch_size(p: Mapping[str, Any]) -> dict[str, Any]:
    """04: SGD over the batch size at one learning rate. Extra: ``lr, batch_sizes`` and either ``epochs_grid`` (every
    batch size trained for each of these epochs: a grid in which batch sizes meet at equal epochs along a column and
    at equal steps where their ratio matches the epochs' ratio) or, with ``epochs_grid`` None, ``steps`` (each batch
    size trained about that many steps, :func:`batch_size_epochs`)."""
    sizes = sorted(_positive_ints(p, "batch_sizes"))
    train_size = p["train_size"] or 50_000 - p["val_size"]  # None: all that the validation split leaves
    too_large = [b for b in sizes if b > train_size]
    if too_large:
        raise ValueError(
            f"batch_sizes: {shown(too_large)} exceed train_size = {train_size}; every batch must fit in the training "
            f"set (use smaller batches or e.g. -p train_size {max(too_large)})"
        )
    base = _base(p, "model", "width", "logit_scale", "lr", optimizer="sgd", schedule="constant")
    if p.get("epochs_grid"):
        epochs = sorted(set(_positive_ints(p, "epochs_grid")))
        return {
            "base": base,
            "grid": {"batch_size": sizes, "epochs": epochs, "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        }
    if not p.get("steps"):
        raise ValueError("steps: give the steps every batch size takes, or epochs_grid for a grid of epochs")
    if not _positive_int(p["steps"]):
        raise ValueError(f"steps: must be a positive integer; got {shown(p['steps'])}")
    return {
        "base": base,
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": {"batch_size": sizes, "epochs": batch_size_epochs(sizes, p["steps"], train_size)},
    }


def _depth(p: Mapping[str, Any]) -> dict[str, Any]:
    """05: SGD over depth. Extra: ``models, widths`` (one width per model), ``lr``."""
    return {
        "base": _base(p, "logit_scale", "batch_size", "epochs", "lr", optimizer="sgd", schedule="constant"),
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": {"model": p["models"], "width": p["widths"]},
    }


def _calibration(p: Mapping[str, Any]) -> dict[str, Any]:
    """08: plain SGD at the ends of the sigma_w grid, for each candidate logit factor. Extra: ``lr,
    logit_scales``."""
    return {
        "base": _base(p, "model", "width", "batch_size", "epochs", "lr", optimizer="sgd", schedule="constant"),
        "grid": {"logit_scale": p["logit_scales"], "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
    }


def _adaptive_lr(p: Mapping[str, Any]) -> dict[str, Any]:
    """09: the adaptive optimizers of 01, each at every learning rate of ``lrs``, at the ends of the sigma_w grid.
    Extra: ``optimizers, lrs`` (the grid every optimizer is tried at), ``weight_decays, aux_lrs`` (one per
    optimizer). The base is 01's, so a point at 01's own learning rate is one of 01's runs (the same hash)."""
    return {
        "base": _base(p, *_NETWORK, schedule="constant"),
        "grid": {"lr": p["lrs"], "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": {"optimizer": p["optimizers"], "weight_decay": p["weight_decays"], "aux_lr": p["aux_lrs"]},
    }


#: Parameters stored as attributes of an experiment's combined Dataset (its analyses read them back).
EXPERIMENT_ATTRS: dict[str, tuple[str, ...]] = {"02_long_training": ("horizons", "reference_horizon")}

#: Per experiment: a list parameter whose entries name its configurations -> the parameters that hold one entry per
#: configuration, zipped with it (01's ``lrs`` hold one learning rate per optimizer of ``optimizers``). Setting the
#: first alone takes the others' entries from the preset (:func:`initmem.study.presets.zipped_defaults`).
ZIPPED: dict[str, dict[str, tuple[str, ...]]] = {
    "01_optimizers": {"optimizers": ("lrs", "weight_decays", "aux_lrs")},
    "05_depth": {"models": ("widths",)},
    "09_adaptive_lr": {"optimizers": ("weight_decays", "aux_lrs")},
}

#: Experiment name (the notebook's file name without ``.py``) -> its spec builder.
EXPERIMENT_SPECS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "01_optimizers": _optimizers,
    "02_long_training": _long_training,
    "03_lr_and_l2": _lr_and_l2,
    "04_batch_size": _batch_size,
    "05_depth": _depth,
    "08_calibration": _calibration,
    "09_adaptive_lr": _adaptive_lr,
    "10_phase_diagram": _lr_and_l2,
}


def experiment_spec(name: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The sweep spec (``base``, ``grid``, ``zip``) of experiment ``name`` for its notebook's ``parameters``.

    ``parameters`` may hold more names than the experiment uses (a notebook passes ``globals()``).

    Raises:
        ValueError: an unknown experiment, a missing parameter, or a value the experiment cannot run with.
    """
    if name not in EXPERIMENT_SPECS:
        raise ValueError(f"name: unknown experiment {name!r}; known: {', '.join(EXPERIMENT_SPECS)}")
    try:
        return EXPERIMENT_SPECS[name](parameters)
    except KeyError as exc:
        raise ValueError(f"parameters: experiment {name} needs the parameter {exc.args[0]!r}") from None
