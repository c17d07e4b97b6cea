"""08: plain SGD at the ends of the sigma_w grid for each candidate logit factor; it chooses the presets' factor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import Experiment
from ._presets import CPU_DATA, CPU_RUN, CPU_SEEDS, PAPER_DATA, PAPER_RUN, SMOKE_DATA, SMOKE_RUN
from ._sweeps import base

__all__ = ["EXPERIMENT"]


def spec(p: Mapping[str, Any]) -> dict[str, Any]:
    """Plain SGD at the ends of the sigma_w grid, for each candidate logit factor. Extra: ``lr, logit_scales``."""
    return {
        "base": base(p, "model", "width", "batch_size", "epochs", "lr", optimizer="sgd", schedule="constant"),
        "grid": {"logit_scale": p["logit_scales"], "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
    }


# fmt: off
SMOKE = {
    **SMOKE_RUN, **SMOKE_DATA, "model": "resnet9", "width": 4, "batch_size": 50, "eval_every": 1,
    "warmup_epochs": 0.0, "lr": 0.05, "epochs": 3, "logit_scales": [0.125, 1.0], "sigma_ws": [0.5, 2.0],
    "seeds": [0],
}
CPU = {
    **CPU_RUN, **CPU_DATA, "model": "resnet9", "width": 8, "batch_size": 64, "eval_every": 2,
    "warmup_epochs": 1.0, "lr": 0.02, "epochs": 50, "logit_scales": [0.125, 1.0], "sigma_ws": [0.1, 2.5],
    "seeds": CPU_SEEDS,
}
PAPER = {
    **PAPER_RUN, **PAPER_DATA, "model": "resnet9", "width": 64, "batch_size": 128, "eval_every": 1,
    "warmup_epochs": 0.0, "lr": 0.01, "epochs": 100, "logit_scales": [0.125, 1.0], "sigma_ws": [0.1, 2.5],
    "seeds": [0, 1, 2],
}
# fmt: on

EXPERIMENT = Experiment(
    name="08_calibration",
    spec=spec,
    presets={"smoke": SMOKE, "cpu": CPU, "paper": PAPER},
    glue=("e08_fig_train_acc", "e08_table", "e08_choice"),
    book_preset="cpu",
    train_order={"08_calibration": 0},  # first: it decides the logit factor
)
