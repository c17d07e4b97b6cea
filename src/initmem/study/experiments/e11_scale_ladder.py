"""11: the scale ladder: does the gap to the paper close as the network and the training set grow (C1 and C2 read
against scale)?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...run.config import shown
from . import e01_optimizers
from ._presets import CPU_OPTIMIZER_RUNS, CPU_SEEDS, SMOKE_DATA, SMOKE_RUN
from ._record import Experiment, Note
from ._sweeps import base, positive_int

__all__ = ["EXPERIMENT", "rungs_of"]

#: 01's optimizers that the ladder climbs with: the one that remembers (C1) and one that forgets (C2's "minimal").
LADDER_OPTIMIZERS = ("sgd", "adam")


def rungs_of(value: Any) -> list[tuple[int, int]]:
    """The ``rungs`` parameter, ``[[width, train_size], ...]`` (cheapest first), as ``(width, train_size)`` pairs.

    Raises:
        ValueError: ``"rungs: must be a non-empty list of distinct [width, train_size] pairs of positive integers
            ..."``.
    """
    shape = "a non-empty list of distinct [width, train_size] pairs of positive integers, e.g. [[8, 5000], [16, 5000]]"
    if not (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(r, (list, tuple)) and len(r) == 2 and all(positive_int(v) for v in r) for r in value)
    ):
        raise ValueError(f"rungs: must be {shape}; got {shown(value)}")
    rungs = [(int(w), int(n)) for w, n in value]
    if len(set(rungs)) != len(rungs):
        raise ValueError(f"rungs: must be {shape}; {shown(value)} repeats a rung")
    return rungs


def spec(p: Mapping[str, Any]) -> dict[str, Any]:
    """01's optimizers ``optimizers`` (with ``lrs, weight_decays, aux_lrs``, one entry each) over ``sigma_ws`` and
    ``seeds`` on every rung of ``rungs`` (:func:`rungs_of`): the first rung is the grid, each further rung a grid of
    ``also`` (so the combined Dataset has ``width`` and ``train_size`` dimensions, NaN where no rung is); ``bf16``
    trains under bfloat16 autocast."""
    (width, train_size), *rest = rungs_of(p["rungs"])
    fixed = base({**p, "train_size": train_size}, "model", "logit_scale", "batch_size", "epochs", schedule="constant")
    fixed["bf16"] = bool(p["bf16"])
    del fixed["train_size"]  # swept with the width, rung by rung
    return {
        "base": fixed,
        "grid": {"width": [width], "train_size": [train_size], "sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": e01_optimizers.optimizer_zip(p),
        "also": [{"width": [w], "train_size": [n]} for w, n in rest],
    }


# fmt: off
SMOKE = {
    **SMOKE_RUN, **{k: v for k, v in SMOKE_DATA.items() if k != "train_size"}, "model": "resnet9", "logit_scale": None, "batch_size": 50, "epochs": 2,
    "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0], "bf16": False,
    "rungs": [[4, 200], [4, 400], [8, 200]], **e01_optimizers.optimizers_at(e01_optimizers.SMOKE, LADDER_OPTIMIZERS),
}
# 01's cpu runs (40 epochs, batch 64) of SGD and Adam at the ends of its sigma_w grid; the first rung is 01's
# network and training set; the dearest rung, width 16 on 20,000 images, is left for a later session.
CPU = {
    **{k: v for k, v in CPU_OPTIMIZER_RUNS.items() if k not in ("width", "train_size")}, "sigma_ws": [0.1, 2.5], "seeds": CPU_SEEDS,
    "bf16": False, "rungs": [[8, 5000], [8, 20000], [16, 5000]], **e01_optimizers.optimizers_at(e01_optimizers.CPU, LADDER_OPTIMIZERS),
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
                ("rungs", "bf16", "seeds"),
                "width x training images from 01's network and training set upward, cheapest first; fp32, since "
                "chapter 01's parity study did not find bf16 in parity (Adam's spread difference inconclusive, its "
                "C2 premise failed in bf16); three seeds, the smallest design with a calibrated interval; the first "
                "rung is 01's record",
            ),
        ),
    },
    glue=("e11_fig_ladder", "e11_table", "e11_costs", "e11_closes"),
    reads=("01_optimizers",),
    book_preset="cpu",
    zipped={"optimizers": e01_optimizers.ZIPPED},
    train_order={"11_scale_ladder": 11},
)
