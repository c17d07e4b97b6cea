"""11: the scale ladder: does the gap to the paper close as the network and the training set grow (C1 and C2 read
against scale)?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...base.messages import shown
from . import Experiment, Note, e01_optimizers
from ._presets import CPU_OPTIMIZER_RUNS, SMOKE_DATA, SMOKE_RUN
from ._sweeps import base, positive_int

__all__ = [
    "EXPERIMENT",
    "DESIGN_RUNGS",
    "LEVER_RUNGS",
    "TRAINED_RUNGS",
    "LADDER_SEEDS",
    "rungs_of",
    "lever_rungs_of",
    "condition_zip",
]

#: 01's optimizers that the ladder climbs with: the one that remembers (C1) and one that forgets (C2's "minimal").
LADDER_OPTIMIZERS = ("sgd", "adam")
#: The ladder's seeds: eight, so that a shift's calibrated interval is at most +-5 pp wide at the record's noise with
#: probability about 0.97 (the design record prints the computation).
LADDER_SEEDS = list(range(8))
#: The declared rungs, ``(width, train_size, epochs)``, cheapest first (the design record's).
DESIGN_RUNGS = ((8, 5000, 40), (16, 5000, 40), (8, 20000, 60), (32, 5000, 40), (16, 20000, 60))
#: How many of them (from the first) have every run committed: the cpu preset's ``rungs``; the lever runs on those of
#: the design's lever rungs among them.
TRAINED_RUNGS = 3
#: The declared rungs, ``(width, train_size)``, on which SGD also trains at the larger lr (C4's lever).
LEVER_RUNGS = ((8, 5000), (16, 5000))


def rungs_of(value: Any) -> list[tuple[int, int, int]]:
    """The ``rungs`` parameter, ``[[width, train_size, epochs], ...]`` (cheapest first), as triples.

    Raises:
        ValueError: ``"rungs: must be a non-empty list of distinct [width, train_size, epochs] triples of positive
            integers ..."``.
    """
    shape = (
        "a non-empty list of [width, train_size, epochs] triples of positive integers, no (width, train_size) twice, "
        "e.g. [[8, 5000, 40], [8, 20000, 60]]"
    )
    if not (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(r, (list, tuple)) and len(r) == 3 and all(positive_int(v) for v in r) for r in value)
    ):
        raise ValueError(f"rungs: must be {shape}; got {shown(value)}")
    rungs = [(int(w), int(n), int(e)) for w, n, e in value]
    if len({(w, n) for w, n, _ in rungs}) != len(rungs):
        raise ValueError(f"rungs: must be {shape}; {shown(value)} repeats a rung")
    return rungs


def lever_rungs_of(value: Any, rungs: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The ``lever_rungs`` parameter, ``[[width, train_size], ...]``: the rungs (of ``rungs``, the first among them)
    on which the larger-lr lever trains.

    Raises:
        ValueError: ``"lever_rungs: must be a list of [width, train_size] pairs of rungs, the first rung among
            them ..."``.
    """
    held = [(w, n) for w, n, _ in rungs]
    ok = (
        isinstance(value, (list, tuple))
        and all(isinstance(r, (list, tuple)) and len(r) == 2 and all(positive_int(v) for v in r) for r in value)
        and {(int(w), int(n)) for w, n in value} <= set(held)
        and held[0] in {(int(w), int(n)) for w, n in value}
    )
    if not ok:
        raise ValueError(
            f"lever_rungs: must be a list of [width, train_size] pairs of rungs, the first rung {list(held[0])} among "
            f"them; got {shown(value)}"
        )
    return [(int(w), int(n)) for w, n in value]


def condition_zip(p: Mapping[str, Any]) -> dict[str, Any]:
    """The sweep's ``zip``: 01's ``optimizers`` (their ``lrs, weight_decays, aux_lrs``) and, last, the larger-lr
    lever (plain SGD at ``lever_lr``), named by their learning rates (SGD's two entries share an optimizer)."""
    base = e01_optimizers.optimizer_zip(p)
    zipped = {
        "lr": [*base["lr"], p["lever_lr"]],
        "optimizer": [*base["optimizer"], "sgd"],
        "weight_decay": [*base["weight_decay"], 0.0],
        "aux_lr": [*base["aux_lr"], base["aux_lr"][base["optimizer"].index("sgd")]],
    }
    if len(set(zipped["lr"])) != len(zipped["lr"]):
        raise ValueError(f"lever_lr: must differ from every optimizer's learning rate {shown(base['lr'])}")
    return zipped


def spec(p: Mapping[str, Any]) -> dict[str, Any]:
    """01's optimizers ``optimizers`` (with ``lrs, weight_decays, aux_lrs``, one entry each) over ``sigma_ws`` and
    ``seeds`` on every rung of ``rungs`` (:func:`rungs_of`, each with its own epochs), and plain SGD at ``lever_lr``
    on ``lever_rungs`` (:func:`lever_rungs_of`). The first rung is the grid, each further rung a grid of ``also``;
    the combined Dataset has ``width``, ``train_size`` and ``epochs`` dimensions (NaN where no rung is) and an ``lr``
    dimension whose ``optimizer`` coordinate names each condition's optimizer; ``bf16`` trains under bfloat16
    autocast."""
    rungs = rungs_of(p["rungs"])
    levers = lever_rungs_of(p["lever_rungs"], rungs)
    zipped = condition_zip(p)
    without_lever = zipped["lr"][:-1]
    (width, train_size, epochs), *rest = rungs
    fixed = base({**p, "train_size": train_size}, "model", "logit_scale", "batch_size", schedule="constant")
    fixed["bf16"] = bool(p["bf16"])
    del fixed["train_size"]  # swept with the width and the epochs, rung by rung
    return {
        "base": fixed,
        "grid": {
            "width": [width],
            "train_size": [train_size],
            "epochs": [epochs],
            "sigma_w": p["sigma_ws"],
            "seed": p["seeds"],
        },
        "zip": zipped,
        "also": [
            {"width": [w], "train_size": [n], "epochs": [e], **({} if (w, n) in levers else {"lr": without_lever})}
            for w, n, e in rest
        ],
    }


# fmt: off
SMOKE = {
    **SMOKE_RUN, **{k: v for k, v in SMOKE_DATA.items() if k != "train_size"}, "model": "resnet9", "logit_scale": None, "batch_size": 50,
    "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0], "bf16": False,
    "rungs": [[4, 200, 2], [4, 400, 3], [8, 200, 2]], "lever_rungs": [[4, 200]], "lever_lr": 0.2,
    **e01_optimizers.optimizers_at(e01_optimizers.SMOKE, LADDER_OPTIMIZERS),
}
# The design declared in results/cpu/11_scale_ladder/design.json before its first run (scripts/declare_ladder.py):
# 01's network and optimizers (batch 64, constant lr, fp32) at the ends of the sigma_w grid, 8 seeds, five rungs
# cheapest first, 60 epochs on 20,000 images (the record's 40 left SGD at sigma_w 2.5 at 98.3 %), and SGD at 03's
# larger lr (0.1) on the two 5,000-image rungs below width 32. ``rungs`` holds the rungs whose runs are committed.
CPU = {
    **{k: v for k, v in CPU_OPTIMIZER_RUNS.items() if k not in ("width", "train_size", "epochs")}, "sigma_ws": [0.1, 2.5],
    "seeds": LADDER_SEEDS, "bf16": False, "rungs": [list(r) for r in DESIGN_RUNGS[:TRAINED_RUNGS]],
    "lever_rungs": [list(r[:2]) for r in DESIGN_RUNGS[:TRAINED_RUNGS] if r[:2] in LEVER_RUNGS],
    "lever_lr": 0.1, **e01_optimizers.optimizers_at(e01_optimizers.CPU, LADDER_OPTIMIZERS),
}
# fmt: on

EXPERIMENT = Experiment(
    name="11_scale_ladder",
    spec=spec,
    presets={"smoke": SMOKE, "cpu": CPU},
    notes={
        "cpu": (
            Note(
                "11 rungs",
                ("rungs", "lever_rungs", "lever_lr", "bf16", "seeds"),
                "width x training images x epochs from 01's network and training set upward, cheapest first, as "
                "declared in results/cpu/11_scale_ladder/design.json before the first run (60 epochs on 20,000 "
                "images, where 40 left SGD short of interpolation); SGD at 03's larger lr (0.1) on the first two "
                "rungs for C4; fp32, since chapter 01's parity study did not find bf16 in parity; eight seeds, so that "
                "a shift's calibrated interval is at most ±5 pp wide at the record's noise; every rung, the first "
                "included, trained from one commit on one machine",
            ),
        ),
    },
    glue=("e11_answer", "e11_declared", "e11_fig_ladder", "e11_table", "e11_costs"),
    reads=("01_optimizers",),
    book_preset="cpu",
    zipped={"optimizers": e01_optimizers.ZIPPED},
    train_order={"11_scale_ladder": 11},
)
