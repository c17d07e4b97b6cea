"""The experiment registry: one function per experiment turns its notebook's parameters into its sweep spec.

Every experiment notebook (``notebooks/NN_*.py``) has a cell tagged ``parameters``; the next cell builds the
sweep with :func:`experiment_spec` from those values, and so do the cost estimates
(:func:`initmem.study.costs.estimate_cost`), the tests and the scripts that run a preset's sweeps outside the
notebooks. The spec decides every run's config and therefore its cache file: there is exactly one place that
says how an experiment's parameters become runs.

Parameters common to the training experiments (the names of the notebooks' parameters cells):

``model, width, logit_scale``
    the network (``logit_scale`` None: the architecture's own factor, see :class:`initmem.run.config.RunConfig`);
``data, image_size, train_size, val_size, test_size, train_eval_size, augment``
    the data;
``batch_size, epochs, eval_every, warmup_epochs, num_threads``
    the budget and execution (``num_threads`` is part of every run's hash);
``sigma_ws, seeds``
    the grid of every experiment (a seed sets the weights and, through ``data_seed`` = seed, the data order).

Experiment-specific ones are listed in each builder's docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["EXPERIMENTS", "EXPERIMENT_SPECS", "experiment_spec", "batch_size_epochs"]

#: The training experiments whose combined results feed the clock collapse (07) and the ledger (99), in order.
EXPERIMENTS = ("01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth")

_DATA = ("data", "image_size", "train_size", "val_size", "test_size", "train_eval_size", "augment")
_RUN = ("eval_every", "warmup_epochs", "num_threads")


def _base(p: Mapping[str, Any], *names: str, **fixed: Any) -> dict[str, Any]:
    """The spec's ``base``: the named parameters, the data and execution ones, and ``fixed`` values."""
    base = {name: p[name] for name in (*names, *_DATA, *_RUN)}
    return {**base, **fixed, "progress": False}


def _optimizers(p: Mapping[str, Any]) -> dict[str, Any]:
    """01: every optimizer over the sigma_w grid. Extra parameters: ``optimizers, lrs, weight_decays, aux_lrs``
    (one entry per optimizer)."""
    return {
        "base": _base(p, "model", "width", "logit_scale", "batch_size", "epochs", schedule="constant"),
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": {"optimizer": p["optimizers"], "lr": p["lrs"], "weight_decay": p["weight_decays"],
                "aux_lr": p["aux_lrs"]},
    }  # fmt: skip


def _long_training(p: Mapping[str, Any]) -> dict[str, Any]:
    """02: low-lr SGD for ``epochs``, read at several horizons. Extra: ``lr, checkpoint_every`` (the horizons
    are read off the runs, see :func:`initmem.study.analysis.within_horizons`)."""
    return {
        "base": _base(p, "model", "width", "logit_scale", "batch_size", "epochs", "lr", "checkpoint_every",
                      optimizer="sgd", schedule="constant"),
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
    }  # fmt: skip


def _lr_and_l2(p: Mapping[str, Any]) -> dict[str, Any]:
    """03: SGD over learning rate x coupled L2. Extra: ``lrs, weight_decays, schedule, schedule_milestones,
    schedule_gamma``."""
    return {
        "base": _base(p, "model", "width", "logit_scale", "batch_size", "epochs", "schedule", "schedule_milestones",
                      "schedule_gamma", optimizer="sgd", decay_mode="l2"),
        "grid": {"lr": p["lrs"], "weight_decay": p["weight_decays"], "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
    }  # fmt: skip


def batch_size_epochs(batch_sizes: list[int], steps: int, train_size: int) -> list[int]:
    """Epochs that give each batch size about ``steps`` optimisation steps on ``train_size`` images.

    An epoch has ``train_size // b`` steps (the last partial batch is dropped), so the epochs are
    ``max(1, round(steps / (train_size // b)))``; the steps actually taken are recorded by every run.

    >>> batch_size_epochs([16, 64, 256], 2340, 5000)
    [8, 30, 123]
    """
    return [max(1, round(steps / (train_size // b))) for b in batch_sizes]


def _batch_size(p: Mapping[str, Any]) -> dict[str, Any]:
    """04: SGD over the batch size at (about) equal steps. Extra: ``lr, batch_sizes, steps`` (each batch size
    trains :func:`batch_size_epochs` epochs)."""
    sizes = sorted(p["batch_sizes"])
    train_size = p["train_size"] or 50_000 - p["val_size"]  # None: all that the validation split leaves
    too_large = [b for b in sizes if b > train_size]
    if too_large:
        raise ValueError(
            f"batch_sizes: {too_large} exceed train_size = {train_size}; every batch must fit in the training "
            f"set (use smaller batches or e.g. -p train_size {max(too_large)})"
        )
    return {
        "base": _base(p, "model", "width", "logit_scale", "lr", optimizer="sgd", schedule="constant"),
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


#: Experiment name (the notebook's file name without ``.py``) -> its spec builder.
EXPERIMENT_SPECS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "01_optimizers": _optimizers,
    "02_long_training": _long_training,
    "03_lr_and_l2": _lr_and_l2,
    "04_batch_size": _batch_size,
    "05_depth": _depth,
    "08_calibration": _calibration,
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

