"""04: SGD over the batch size at one learning rate (claim C5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...base.messages import shown
from . import CLOCKS, Experiment, Note
from ._presets import (
    CPU_DATA,
    CPU_NET,
    CPU_RUN,
    CPU_SEEDS,
    PAPER_DATA,
    PAPER_LOGIT_SCALE,
    PAPER_RUN,
    PAPER_SIGMAS,
    SMOKE_DATA,
    SMOKE_RUN,
)
from ._sweeps import base, positive_int, positive_ints

__all__ = ["EXPERIMENT", "batch_size_epochs"]


def batch_size_epochs(batch_sizes: list[int], steps: int, train_size: int) -> list[int]:
    """Epochs that give each batch size about ``steps`` optimisation steps on ``train_size`` images.

    An epoch has ``train_size // b`` steps (the last partial batch is dropped), so the epochs are
    ``max(1, round(steps / (train_size // b)))``; the steps actually taken are recorded by every run.

    >>> batch_size_epochs([16, 64, 256], 2340, 5000)
    [8, 30, 123]
    """
    return [max(1, round(steps / (train_size // b))) for b in batch_sizes]


def spec(p: Mapping[str, Any]) -> dict[str, Any]:
    """SGD over the batch size at one learning rate. Extra: ``lr, batch_sizes`` and either ``epochs_grid`` (every
    batch size trained for each of these epochs: a grid in which batch sizes meet at equal epochs along a column and
    at equal steps where their ratio matches the epochs' ratio) or, with ``epochs_grid`` None, ``steps`` (each batch
    size trained about that many steps, :func:`batch_size_epochs`)."""
    sizes = sorted(positive_ints(p, "batch_sizes"))
    train_size = p["train_size"] or 50_000 - p["val_size"]  # None: all that the validation split leaves
    too_large = [b for b in sizes if b > train_size]
    if too_large:
        raise ValueError(
            f"batch_sizes: {shown(too_large)} exceed train_size = {train_size}; every batch must fit in the training "
            f"set (use smaller batches or e.g. -p train_size {max(too_large)})"
        )
    fixed = base(p, "model", "width", "logit_scale", "lr", optimizer="sgd", schedule="constant")
    if p.get("epochs_grid"):
        epochs = sorted(set(positive_ints(p, "epochs_grid")))
        return {
            "base": fixed,
            "grid": {"batch_size": sizes, "epochs": epochs, "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        }
    if not p.get("steps"):
        raise ValueError("steps: give the steps every batch size takes, or epochs_grid for a grid of epochs")
    if not positive_int(p["steps"]):
        raise ValueError(f"steps: must be a positive integer; got {shown(p['steps'])}")
    return {
        "base": fixed,
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": {"batch_size": sizes, "epochs": batch_size_epochs(sizes, p["steps"], train_size)},
    }


# fmt: off
# train_size 640 at smoke so that `-p batch_sizes "[32, 512]"` works at every preset.
SMOKE = {
    **SMOKE_RUN, **SMOKE_DATA, "train_size": 640, "model": "resnet9", "width": 4, "logit_scale": None,
    "lr": 0.05, "steps": 10, "epochs_grid": None, "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0],
    "seeds": [0], "batch_sizes": [32, 128],
}
# A grid of two lengths, so that C5 compares batch sizes that all interpolate both ways: every pair meets at
# equal epochs, and b meets 4b at equal steps (b at 30 epochs, 4b at 123: 9,360 and 9,594 steps for 16 and 64).
# At equal steps alone (2,340), b = 16 got 8 epochs and did not interpolate (59-76 % train accuracy).
CPU = {
    **CPU_RUN, **CPU_DATA, **{k: v for k, v in CPU_NET.items() if k != "batch_size"}, "lr": 0.02,
    "steps": None, "epochs_grid": [30, 123], "sigma_ws": [0.1, 2.5], "seeds": CPU_SEEDS,
    "batch_sizes": [16, 64, 256],
}
PAPER = {
    **PAPER_RUN, **PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": PAPER_LOGIT_SCALE, "lr": 0.01,
    "steps": None, "epochs_grid": [50, 200], "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": PAPER_SIGMAS,
    "seeds": [0, 1, 2],
    "batch_sizes": [16, 32, 64, 128, 256],
}
# fmt: on

EXPERIMENT = Experiment(
    name="04_batch_size",
    spec=spec,
    presets={"smoke": SMOKE, "cpu": CPU, "paper": PAPER},
    notes={
        "smoke": (
            Note(
                "train_size (04)",
                ("train_size",),
                "at least 512 so that the documented example -p batch_sizes '[32, 512]' runs at every preset",
            ),
        ),
        "cpu": (
            Note(
                "04 design",
                ("batch_sizes", "epochs_grid", "lr"),
                "a grid of two lengths: every pair of batch sizes meets at equal epochs, and b meets 4b at equal "
                "steps (b at the shorter length, 4b at the longer, about 4x as many epochs), so C5 is judged both "
                "ways between batch sizes that interpolate; at equal steps the batch sizes differ only in their "
                "noise, T_SGD = S eta^2 / b",
            ),
        ),
        "paper": (
            Note(
                "04 design",
                ("batch_sizes", "epochs_grid"),
                "a grid: every pair of batch sizes meets at equal epochs, and "
                "b and 4b meet at equal steps (b at 50 epochs, 4b at 200), so C5 is judged both ways between batch "
                "sizes that interpolate",
            ),
        ),
    },
    claims=("C5",),
    glue=("e04_fig_spread_vs_batch", "e04_table", "e04_spread_small_b", "e04_spread_large_b"),
    groups=(CLOCKS,),
    book_preset="cpu",
    train_order={"04_batch_size": 5},
)
