"""The names of what a run records and the epochs it records them at.

Plain Python (no torch), so that the analysis of committed results (:mod:`initmem.study`) reads them without
importing the trainer; :mod:`initmem.run.records` fills them in (and re-exports these names).

* :data:`EPOCH_METRICS` -- per-epoch variables (dimension ``epoch``), at :func:`recorded_epochs`;
* :data:`SCALAR_METRICS` -- per-run scalars;
* :data:`CLOCKS` and :data:`CLOCK_DESCRIPTIONS` -- the forgetting clocks (:mod:`initmem.run.metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import RunConfig

__all__ = ["EPOCH_METRICS", "SCALAR_METRICS", "TIMINGS", "CLOCKS", "CLOCK_DESCRIPTIONS", "recorded_epochs"]

#: Per-epoch scalar variables, in the order they are recorded.
EPOCH_METRICS = (
    "train_loss",
    "train_acc",
    "val_loss",
    "val_acc",
    "test_loss",
    "test_acc",
    "weight_norm",
    "dist_from_init",
    "lr",
    "step",
    "T_SGD",
    "T_L2",
    "T_adapt",
)
#: Per-run scalar variables.
SCALAR_METRICS = (
    "best_epoch",
    "selected_test_acc",
    "selected_val_acc",
    "selected_train_acc",
    "selected_T_SGD",
    "selected_T_L2",
    "selected_T_adapt",
    "final_epoch",
    "final_test_acc",
    "final_train_acc",
    "final_T_SGD",
    "final_T_L2",
    "final_T_adapt",
    "tau_interp",
    "repair_gap",
    "diverged",
    "wall_time_s",
    "cpu_time_s",
)
#: The scalars that measure the machine, not the run: identical runs differ in them.
TIMINGS = ("wall_time_s", "cpu_time_s")
#: The clocks, each recorded per epoch and at the selected and the final checkpoint.
CLOCKS = ("T_SGD", "T_L2", "T_adapt")
#: What each clock counts (stored as the variables' ``description`` attribute).
CLOCK_DESCRIPTIONS = {
    "T_SGD": "(1/b) sum_k eta_k^2 over the steps so far; eta_k is the effective step (lr/(1-momentum) for "
    "sgd_momentum; under muon the lr of the orthogonalised hidden kernels, not aux_lr)",
    "T_L2": "lambda sum_k eta_k over the steps so far (eta_k as for T_SGD)",
    "T_adapt": "sum_k eta_k over the steps so far (eta_k as for T_SGD; under muon it covers the orthogonalised "
    "hidden kernels only, not the auxiliary AdamW group of BatchNorm, biases and head)",
}


def recorded_epochs(config: RunConfig) -> list[int]:
    """Epoch 0, every ``eval_every``-th epoch and the last one."""
    return sorted({0, config.epochs, *range(config.eval_every, config.epochs + 1, config.eval_every)})
