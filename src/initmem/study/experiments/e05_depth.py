"""05: SGD over depth, ResNet-9 to ResNet-110 (claim C6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import CLOCKS, Experiment, Note
from ._presets import (
    CPU_DATA,
    CPU_FIVE_SEEDS,
    CPU_LOGIT_SCALE,
    CPU_RUN,
    PAPER_DATA,
    PAPER_LOGIT_SCALE,
    PAPER_RUN,
    PAPER_SIGMAS,
    SMOKE_DATA,
    SMOKE_RUN,
)
from ._sweeps import base

__all__ = ["EXPERIMENT"]


def spec(p: Mapping[str, Any]) -> dict[str, Any]:
    """SGD over depth. Extra: ``models, widths`` (one width per model), ``lr``."""
    return {
        "base": base(p, "logit_scale", "batch_size", "epochs", "lr", optimizer="sgd", schedule="constant"),
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": {"model": p["models"], "width": p["widths"]},
    }


# fmt: off
SMOKE = {
    **SMOKE_RUN, **SMOKE_DATA, "models": ["resnet9", "resnet20"], "widths": [4, 4], "logit_scale": None,
    "batch_size": 50,
    "lr": 0.05, "epochs": 3, "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0],
}
CPU = {
    **CPU_RUN, **CPU_DATA, "image_size": 16, "train_size": 2000, "val_size": 1000, "test_size": 1000,
    "train_eval_size": 1000, "models": ["resnet9", "resnet20", "resnet56", "resnet110"], "widths": [8, 8, 8, 8],
    "logit_scale": CPU_LOGIT_SCALE, "batch_size": 64, "lr": 0.02, "epochs": 40, "eval_every": 2,
    "warmup_epochs": 1.0, "sigma_ws": [0.1, 0.9, 2.5], "seeds": CPU_FIVE_SEEDS,
}
PAPER = {
    **PAPER_RUN, **PAPER_DATA, "models": ["resnet9", "resnet20", "resnet56", "resnet110"],
    "widths": [64, 16, 16, 16], "logit_scale": PAPER_LOGIT_SCALE, "batch_size": 128, "lr": 0.01, "epochs": 200,
    "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": PAPER_SIGMAS, "seeds": [0, 1],
}
# fmt: on

EXPERIMENT = Experiment(
    name="05_depth",
    spec=spec,
    presets={"smoke": SMOKE, "cpu": CPU, "paper": PAPER},
    notes={
        "cpu": (
            Note(
                "05 models and budget",
                ("models", "widths", "image_size", "train_size", "batch_size", "epochs"),
                "the deep networks dominate the cost; with logit_scale 1 the ResNet-9 reference is meant to "
                "interpolate at every sigma_w (C6's rule checks it)",
            ),
        ),
    },
    claims=("C6",),
    glue=("e05_fig_depth", "e05_table", "e05_train_resnet9_high_sigma", "e05_failed_runs", "e05_deepest"),
    groups=(CLOCKS,),
    book_preset="cpu",
    zipped={"models": ("widths",)},
    train_order={"05_depth": 6},
)
