"""02: low-lr SGD trained long and read at several horizons (claim C3)."""

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
    SMOKE_DATA,
    SMOKE_RUN,
)
from ._sweeps import NETWORK, base, positive_ints

__all__ = ["EXPERIMENT"]


def spec(p: Mapping[str, Any]) -> dict[str, Any]:
    """Low-lr SGD for ``epochs``, read at several horizons. Extra: ``lr, checkpoint_every, horizons,
    reference_horizon`` (the horizons are read off the runs, see :func:`initmem.study.statistics.analysis.within_horizons`)."""
    horizons, reference = positive_ints(p, "horizons"), p["reference_horizon"]
    if reference not in horizons or max(horizons) > p["epochs"]:
        raise ValueError(
            f"horizons: must contain reference_horizon = {shown(reference)} and lie within epochs = "
            f"{shown(p['epochs'])}; got {shown(horizons)}"
        )
    return {
        "base": base(p, *NETWORK, "lr", "checkpoint_every", optimizer="sgd", schedule="constant"),
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
    }


# fmt: off
SMOKE = {
    **SMOKE_RUN, **SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50,
    "lr": 0.05, "epochs": 6, "checkpoint_every": 0,
    "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0], "horizons": [2, 4, 6],
    "reference_horizon": 2,
}
CPU = {
    **CPU_RUN, **CPU_DATA, **CPU_NET, "lr": 0.02, "epochs": 160, "sigma_ws": [0.1, 2.5], "seeds": CPU_SEEDS,
    "horizons": [10, 20, 40, 80, 160], "reference_horizon": 40, "checkpoint_every": 10,
}
PAPER = {
    **PAPER_RUN, **PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": PAPER_LOGIT_SCALE,
    "batch_size": 128, "lr": 0.01, "epochs": 5000,
    "eval_every": 25, "warmup_epochs": 0.0, "sigma_ws": [0.1, 0.5, 1.0, 1.5, 2.5], "seeds": [0, 1],
    "horizons": [50, 100, 200, 500, 1000, 2000, 5000], "reference_horizon": 200, "checkpoint_every": 50,
}
# fmt: on

EXPERIMENT = Experiment(
    name="02_long_training",
    spec=spec,
    presets={"smoke": SMOKE, "cpu": CPU, "paper": PAPER},
    notes={
        "cpu": (
            Note(
                "02 length",
                ("epochs", "horizons", "checkpoint_every"),
                "4x the length of 01 with 01's SGD recipe; the "
                "paper's 5,000 epochs are out of reach on a CPU. A resumable checkpoint every 10 epochs lets the long "
                "runs survive an interrupted session",
            ),
        ),
    },
    claims=("C3",),
    glue=(
        "e02_fig_spread_vs_horizon",
        "e02_table",
        "e02_spread_reference",
        "e02_spread_longest",
        "e02_final_spread_reference",
        "e02_final_spread_longest",
        "e02_selection",
    ),
    groups=(CLOCKS,),
    book_preset="cpu",
    attrs=("horizons", "reference_horizon"),
    train_order={"02_long_training": 7},  # the long runs of C3 last but one
)
