"""01: every optimizer over the sigma_w grid (claims C1, C2, C7); its results feed the clock collapse and the ledger."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...base.lazy import MadeWhenRead
from ...run import optimizers
from ...run.config import RunConfig
from . import CLOCKS, Experiment, Note
from ._presets import (
    CPU_FIVE_SEEDS,
    CPU_OPTIMIZER_RUNS,
    CPU_SIGMAS,
    PAPER_DATA,
    PAPER_LOGIT_SCALE,
    PAPER_OPTIMIZER_RUNS,
    PAPER_SEEDS,
    PAPER_SIGMAS,
    SMOKE_DATA,
    SMOKE_RUN,
)
from ._sweeps import NETWORK, base

__all__ = ["EXPERIMENT", "CPU", "PAPER", "ZIPPED", "optimizer_zip", "optimizers_at"]

#: The parameters that hold one entry per optimizer.
ZIPPED = ("lrs", "weight_decays", "aux_lrs")


def spec(p: Mapping[str, Any]) -> dict[str, Any]:
    """Every optimizer over the sigma_w grid. Extra parameters: ``optimizers, lrs, weight_decays, aux_lrs`` (one
    entry per optimizer)."""
    return {
        "base": base(p, *NETWORK, schedule="constant"),
        "grid": {"sigma_w": p["sigma_ws"], "seed": p["seeds"]},
        "zip": optimizer_zip(p),
    }


def optimizer_zip(p: Mapping[str, Any]) -> dict[str, Any]:
    """The sweep's ``zip`` of parameters ``p``: ``optimizers`` with their :data:`ZIPPED` settings, one entry each."""
    return {"optimizer": p["optimizers"], "lr": p["lrs"], "weight_decay": p["weight_decays"], "aux_lr": p["aux_lrs"]}


def optimizers_at(source: Mapping[str, Any], order: Sequence[str], batch_size: int | None = None) -> dict[str, Any]:
    """The optimizers of ``source`` (its zipped lists) in ``order``, their learning rates rescaled from the source's
    batch size to ``batch_size`` (None: the source's; linearly for the SGD family, whose step is a gradient-noise
    average, unchanged for the adaptive optimizers). From :data:`SMOKE` it reads the records of ``order`` only."""
    if isinstance(source, _Smoke):
        source = source.of(order)
    ratio = 1.0 if batch_size is None else batch_size / source["batch_size"]
    index = [source["optimizers"].index(name) for name in order]
    return {
        "optimizers": list(order),
        "lrs": [
            source["lrs"][i] * (ratio if optimizers.record(order[j]).family == "sgd" else 1.0)
            for j, i in enumerate(index)
        ],
        "weight_decays": [source["weight_decays"][i] for i in index],
        "aux_lrs": [source["aux_lrs"][i] for i in index],
    }


def _zipped(records: Sequence[optimizers.Optimizer]) -> dict[str, list[Any]]:
    """The zipped lists at smoke: the optimizers of ``records``, each at the hyperparameters its record trains the
    small networks with, RunConfig's defaults for the rest."""
    default = RunConfig()
    return {
        "optimizers": [r.name for r in records],
        **{
            key: [r.defaults.get(name, getattr(default, name)) for r in records]
            for key, name in (("lrs", "lr"), ("weight_decays", "weight_decay"), ("aux_lrs", "aux_lr"))
        },
    }


class _Smoke(Mapping[str, Any]):
    """The smoke preset: its ``fixed`` values, then every registered optimizer (:mod:`initmem.run.optimizers`) at its
    record's hyperparameters. The optimizers' lists are made when read, not at import: a page that imports this module
    without using the smoke preset does not depend on the optimizer listing, and :meth:`of` reads only the records of
    the optimizers it is given (:func:`optimizers_at`)."""

    def __init__(self, fixed: Mapping[str, Any]) -> None:
        self._fixed = dict(fixed)

    def of(self, names: Sequence[str] | None = None) -> dict[str, Any]:
        """The preset as a dict, with the optimizers ``names`` (None: every registered one, the listing)."""
        chosen = optimizers.records() if names is None else tuple(optimizers.record(name) for name in names)
        return {**self._fixed, **_zipped(chosen)}

    def __getitem__(self, key: str) -> Any:
        return self._fixed[key] if key in self._fixed else self.of()[key]

    def __iter__(self) -> Iterator[str]:
        return iter([*self._fixed, "optimizers", *ZIPPED])

    def __len__(self) -> int:
        return len(self._fixed) + 1 + len(ZIPPED)


# fmt: off
#: At smoke it trains every registered optimizer, each at its record's hyperparameters (made when read: :class:`_Smoke`).
SMOKE = _Smoke({
    **SMOKE_RUN, **SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50, "epochs": 3, "eval_every": 1,
    "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0],
})
CPU = {
    **CPU_OPTIMIZER_RUNS, "sigma_ws": CPU_SIGMAS, "seeds": CPU_FIVE_SEEDS,
    "optimizers": list(optimizers.in_paper()),
    "lrs": [0.02, 0.002, 0.008, 0.008, 0.02],
    "weight_decays": [0.0, 0.0, 0.0, 0.05, 0.0],
    "aux_lrs": [0.001, 0.001, 0.001, 0.001, 0.008],
}
PAPER = {
    **PAPER_OPTIMIZER_RUNS, "sigma_ws": PAPER_SIGMAS, "seeds": PAPER_SEEDS,
    "optimizers": list(optimizers.in_paper()),
    "lrs": [0.01, 0.001, 0.001, 0.001, 0.02],
    "weight_decays": [0.0, 0.0, 0.0, 0.05, 0.0],
    "aux_lrs": [0.001, 0.001, 0.001, 0.001, 0.001],
}
#: At the gpu preset (paper scale on one GPU within minutes, benchmarks/gpu_oneshot.py) SGD and an adaptive optimizer
#: train first, so that a sweep stopped at its deadline still measures C1 and C2 (Muon's, the one sized part of C2):
#: then the other adaptive optimizers, then the rest of the SGD family.
_GPU_FIRST = ("sgd", "muon")
_GPU_ORDER = [
    *_GPU_FIRST,
    *(o for o in optimizers.in_paper() if optimizers.record(o).family == "adaptive" and o not in _GPU_FIRST),
    *(o for o in optimizers.in_paper() if optimizers.record(o).family == "sgd" and o not in _GPU_FIRST),
]
GPU = {
    "executor": "stacked", "workers": None, "num_threads": None, **PAPER_DATA, "model": "resnet9", "width": 64,
    "logit_scale": PAPER_LOGIT_SCALE, "batch_size": 128, "epochs": 200, "eval_every": 1, "warmup_epochs": 1.0,
    "sigma_ws": [0.1, 0.25, 1.0, 2.5], "seeds": [0], **optimizers_at(CPU, _GPU_ORDER, 128),
}
# fmt: on

EXPERIMENT = Experiment(
    name="01_optimizers",
    spec=spec,
    presets=MadeWhenRead({"smoke": SMOKE.of, "cpu": CPU, "gpu": GPU, "paper": PAPER}),
    notes={
        "cpu": (
            Note(
                "learning rates (01)",
                ("optimizers", "lrs", "aux_lrs"),
                "SGD at 0.02 is low-lr SGD that interpolates in "
                "the budget (the calibration, 08); SGD+momentum (momentum 0.9) at 0.002 has the same effective step "
                "lr/(1-mu) = 0.02, so it isolates momentum from step size; 0.02 is Muon's customary rate (its AdamW "
                "group at 8e-3); 09 measures the adaptive optimizers at 0.008, 0.02 and 0.05",
            ),
            Note(
                "AdamW decay / Muon decay",
                ("optimizers", "weight_decays"),
                "0.05 decoupled is a common AdamW setting; "
                "Muon without decay isolates the orthogonalised update from norm decay",
            ),
        ),
        "paper": (
            Note(
                "learning rates (01)",
                ("optimizers", "lrs"),
                "the summary says 'low learning rate' for SGD and uses 1e-2 "
                "in the L2 experiment; the adaptive rates are the usual defaults",
            ),
        ),
    },
    claims=("C1", "C2", "C7"),
    glue=(
        "e01_fig_acc_vs_sigma",
        "e01_fig_spread",
        "e01_table",
        "e01_clocks_table",
        "e01_spread_sgd",
        "e01_spread_muon",
        "e01_final_spread_sgd",
        "e01_T_adapt_adam",
    ),
    groups=(CLOCKS,),
    book_preset="cpu",
    zipped={"optimizers": ZIPPED},
    # plain SGD first (C1, the headline), after the calibration; then the rest (C2, C7)
    train_order={"01_optimizers:sgd": 1, "01_optimizers": 2},
)
