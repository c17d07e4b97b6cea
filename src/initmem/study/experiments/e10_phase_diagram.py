"""10: the phase diagram, 03's sweep on a finer learning rate x L2 grid (claim B1)."""

from __future__ import annotations

from . import LEDGER, Experiment, e03_lr_and_l2
from ._presets import CPU_FIVE_SEEDS, PAPER_DATA, PAPER_LOGIT_SCALE, PAPER_RUN, SMOKE_DATA, SMOKE_RUN

__all__ = ["EXPERIMENT"]

# fmt: off
# the phase diagram's page at a 3 x 3 grid (the cpu and paper presets use 5 x 5)
SMOKE = {
    **SMOKE_RUN, **SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50,
    "epochs": 3, "eval_every": 1, "warmup_epochs": 0.0, "schedule": "step", "schedule_milestones": [0.8, 0.9],
    "schedule_gamma": 0.1, "sigma_ws": [0.5, 2.0], "seeds": [0], "lrs": [0.02, 0.05, 0.1],
    "weight_decays": [0.0, 0.005, 0.02], "extra_cells": [{"lrs": [0.02], "weight_decays": [0.05]}],
}
# 03's sweep on a 5 x 5 grid, log-spaced, that holds 03's four cells: the clocks' predicted boundary
# T_L2 = ln(|W0| / |W*|) (T5) runs diagonally through it (notebooks/10_phase_diagram.py says how it was chosen);
# beside it, 8 cells of stronger decay at the two smallest learning rates, where x crosses 0 at low T_SGD (so the
# L2 clock can be told from the noise clock); every cell at five seeds.
CPU = {
    **e03_lr_and_l2.CPU, "lrs": [0.02, 0.03, 0.045, 0.067, 0.1], "weight_decays": [0.0, 0.0025, 0.005, 0.01, 0.02],
    "extra_cells": [{"lrs": [0.02, 0.03], "weight_decays": [0.03, 0.045, 0.07, 0.1]}], "seeds": CPU_FIVE_SEEDS,
}
PAPER = {
    **PAPER_RUN, **PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": PAPER_LOGIT_SCALE,
    "batch_size": 128, "epochs": 200, "eval_every": 1, "warmup_epochs": 0.0, "schedule": "step",
    "schedule_milestones": [0.8, 0.9], "schedule_gamma": 0.1, "sigma_ws": [0.1, 2.5], "seeds": [0, 1, 2],
    "lrs": [0.01, 0.018, 0.032, 0.056, 0.1], "weight_decays": [0.0, 0.0001, 0.0003, 0.001, 0.003],
    "extra_cells": [],
}
# fmt: on

EXPERIMENT = Experiment(
    name="10_phase_diagram",
    spec=e03_lr_and_l2.spec,
    presets={"smoke": SMOKE, "cpu": CPU, "paper": PAPER},
    claims=("B1",),
    glue=(
        "e10_fig_heatmaps",
        "e10_fig_collapse",
        "e10_cells",
        "e10_gaps",
        "e10_x0",
        "e10_measured_core_hours",
        "e10_design",
    ),
    reads=("03_lr_and_l2",),  # how the grid was placed: 03's equilibrium norms
    groups=(LEDGER,),
    book_preset="cpu",
    train_order={"10_phase_diagram": 3},  # before 03: its grid holds 03's cells, so 03 reuses them
)
