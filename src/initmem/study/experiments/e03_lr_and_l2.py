"""03: SGD over learning rate x coupled L2 (claim C4); the phase diagram 10 is the same sweep on a finer grid."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...base.messages import shown
from . import CLOCKS, Experiment, Note
from ._presets import (
    CPU_DATA,
    CPU_NET,
    CPU_RUN,
    CPU_TEN_SEEDS,
    PAPER_DATA,
    PAPER_LOGIT_SCALE,
    PAPER_RUN,
    PAPER_SIGMAS,
    SMOKE_DATA,
    SMOKE_RUN,
)
from ._sweeps import NETWORK, STEP_SCHEDULE, base

__all__ = ["EXPERIMENT", "CPU", "spec"]


def spec(p: Mapping[str, Any]) -> dict[str, Any]:
    """SGD over learning rate x coupled L2, for 03 and the phase diagram 10. Extra: ``lrs, weight_decays, schedule,
    schedule_milestones, schedule_gamma`` and, for 10, ``extra_cells`` (grids of cells beside the main one). 10 is the
    same sweep on a finer grid, so at equal parameters a cell of 03 is a cell of 10 (the same runs, the same
    hashes)."""
    sweep = {
        "base": base(p, *NETWORK, *STEP_SCHEDULE, optimizer="sgd", decay_mode="l2"),
        "grid": {"lr": p["lrs"], "weight_decay": p["weight_decays"], "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
    }
    also = _extra_cells(p.get("extra_cells"))
    return {**sweep, "also": also} if also else sweep


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


# fmt: off
SMOKE = {
    **SMOKE_RUN, **SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50,
    "epochs": 3, "eval_every": 1, "warmup_epochs": 0.0, "schedule": "step", "schedule_milestones": [0.8, 0.9], "schedule_gamma": 0.1,
    "sigma_ws": [0.5, 2.0], "seeds": [0], "lrs": [0.02, 0.1], "weight_decays": [0.0, 0.01],
}
CPU = {
    **CPU_RUN, **CPU_DATA, **CPU_NET, "epochs": 40, "schedule": "step", "schedule_milestones": [0.8, 0.9],
    "schedule_gamma": 0.1, "sigma_ws": [0.1, 2.5], "seeds": CPU_TEN_SEEDS, "lrs": [0.02, 0.1],
    "weight_decays": [0.0, 0.01],
}
PAPER = {
    **PAPER_RUN, **PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": PAPER_LOGIT_SCALE,
    "batch_size": 128, "epochs": 200, "eval_every": 1, "warmup_epochs": 0.0, "schedule": "step", "schedule_milestones": [0.8, 0.9],
    "schedule_gamma": 0.1, "sigma_ws": PAPER_SIGMAS, "seeds": [0, 1, 2], "lrs": [0.01, 0.05, 0.1],
    "weight_decays": [0.0, 0.0005, 0.005],
}
# fmt: on

EXPERIMENT = Experiment(
    name="03_lr_and_l2",
    spec=spec,
    presets={"smoke": SMOKE, "cpu": CPU, "paper": PAPER},
    notes={
        "cpu": (
            Note(
                "03 schedule and grid",
                ("schedule", "schedule_milestones", "schedule_gamma", "lrs", "weight_decays"),
                "constant lr 0.1 was unstable at the end in the guide's pilots; the grid spans T_L2 from 0 to ~3, "
                "around ln(||W_0|| / ||W*||), the relaxation the L2 clock must cover (theory T5)",
            ),
        ),
        "paper": (
            Note(
                "03 grid",
                ("lrs", "weight_decays", "schedule", "schedule_milestones"),
                "not stated; spans the usual CIFAR recipes",
            ),
        ),
    },
    claims=("C4",),
    glue=("e03_fig_heatmap", "e03_table", "e03_spread_base", "e03_spread_high_lr_l2", "e03_T_L2_high_lr_l2"),
    groups=(CLOCKS,),
    book_preset="cpu",
    train_order={"03_lr_and_l2": 4},  # after the phase diagram, whose grid holds its cells
)
