"""The experiment registry: each experiment's spec builder turns its notebook's parameters into its sweep spec.

Every experiment notebook (``notebooks/NN_*.py``) has a cell tagged ``parameters``; the next cell builds the
sweep with :func:`experiment_spec` from those values, and so do the cost estimates
(:func:`initmem.study.costs.costs.estimate_cost`), the tests and the scripts that run a preset's sweeps outside the
notebooks. The spec decides every run's config and therefore its cache file: there is exactly one place that
says how an experiment's parameters become runs.

What every parameter means is :data:`PARAMETERS` (one line each, shown in every chapter's table of the values it
was computed with); which values each preset gives them is :mod:`initmem.study.design.presets`. A seed sets the weights
and, through ``data_seed`` = seed, the data order. Each spec builder lives in its experiment's module
(:mod:`initmem.study.experiments`); the tables below are read from those modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..experiments import CLOCKS, Table, in_group

# EXPERIMENTS is this module's attribute too (:func:`__getattr__`)
__all__ = [
    "EXPERIMENT_SPECS",
    "EXPERIMENT_ATTRS",
    "PARAMETERS",
    "ZIPPED",
    "experiment_spec",
]


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
    "bf16": "bfloat16 autocast (true/false; part of a run's hash: it changes the floating-point path)",
    "rungs": "the ladder's rungs, [[width, train_size, epochs], ...], cheapest first (11 only)",
    "lever_rungs": "the rungs, [[width, train_size], ...], on which SGD also trains at lever_lr, C4's lever (11 only)",
    "lever_lr": "the larger learning rate of C4's lever, plain SGD (11 only)",
}


def __getattr__(attribute: str) -> Any:
    """:data:`EXPERIMENTS`: the training experiments whose combined results feed the clock collapse (07) and the
    ledger (99), in order (every experiment module is imported once it is asked for)."""
    if attribute == "EXPERIMENTS":
        return in_group(CLOCKS)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


#: Parameters stored as attributes of an experiment's combined Dataset (its analyses read them back).
EXPERIMENT_ATTRS: Table = Table(lambda e: e.attrs or Table.ABSENT)

#: Per experiment: a list parameter whose entries name its configurations -> the parameters that hold one entry per
#: configuration, zipped with it (01's ``lrs`` hold one learning rate per optimizer of ``optimizers``). Setting the
#: first alone takes the others' entries from the preset (:func:`initmem.study.design.presets.zipped_defaults`).
ZIPPED: Table = Table(lambda e: dict(e.zipped) if e.zipped else Table.ABSENT)

#: Experiment name (the notebook's file name without ``.py``) -> its spec builder.
EXPERIMENT_SPECS: Table = Table(lambda e: Table.ABSENT if e.spec is None else e.spec)


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
