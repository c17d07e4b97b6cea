"""The paper's measurements, as small pure functions.

* Forgetting clocks, accumulated over optimisation steps k with learning rate eta_k (per step),
  batch size b and decay strength lambda (derived on the book's Theory pages)::

      T_SGD   = (1/b) * sum_k eta_k^2      (stochastic finite-step effects)
      T_L2    = lambda * sum_k eta_k       (explicit norm decay)
      T_adapt = sum_k eta_k                (adaptive preconditioning; gradient-flow time)

* ``tau_interp``: the first recorded epoch with training accuracy >= 99.5 % (NaN if never).
* The validation-selected predictor: the recorded epoch with the lowest validation loss.
* ``repair_gap``: validation accuracy at the final epoch minus at ``tau_interp``.
* Norms of the kernels and their distance from the initial ones (Frobenius).

The spread over sigma_w is :func:`initmem.study.statistics.stats.spread`. Accuracies are in percent throughout.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from .thresholds import INTERPOLATION_THRESHOLD

__all__ = [
    "ForgettingClocks",
    "clocks_from_lrs",
    "frobenius_norms",
    "total_norm",
    "distance_from_init",
    "tau_interp",
    "best_index",
    "repair_gap",
]


@dataclass
class ForgettingClocks:
    """Running sums of the three clocks; call :meth:`tick` once per optimisation step.

    ``step_scale`` converts the scheduled learning rate into the effective step the clocks count: 1 for plain
    SGD, Adam, AdamW and Muon; ``1 / (1 - mu)`` for heavy-ball SGD with momentum ``mu`` (its steady-state step,
    see :meth:`for_config`). Under Muon, ``lr`` is the learning rate of the orthogonalised hidden kernels: the
    clocks do not cover its auxiliary AdamW group (BatchNorm, biases, head), whose rate is ``aux_lr``.
    """

    batch_size: int
    weight_decay: float
    T_SGD: float = 0.0
    T_L2: float = 0.0
    T_adapt: float = 0.0
    step_scale: float = 1.0

    @classmethod
    def for_config(cls, config, **sums: float) -> ForgettingClocks:
        """The clocks of run ``config`` (a :class:`initmem.run.config.RunConfig`), starting from ``sums`` (resume)."""
        scale = 1.0 / (1.0 - config.momentum) if config.optimizer == "sgd_momentum" else 1.0
        return cls(config.batch_size, config.weight_decay, step_scale=scale, **sums)

    def tick(self, lr: float) -> None:
        """Account for one step taken with scheduled learning rate ``lr`` (effective step ``lr * step_scale``)."""
        eta = lr * self.step_scale
        self.T_SGD += eta * eta / self.batch_size
        self.T_L2 += self.weight_decay * eta
        self.T_adapt += eta

    def as_dict(self) -> dict[str, float]:
        return {"T_SGD": self.T_SGD, "T_L2": self.T_L2, "T_adapt": self.T_adapt}


def clocks_from_lrs(lrs: np.ndarray, batch_size: int, weight_decay: float) -> dict[str, float]:
    """The three clocks of a whole run from its per-step learning rates ``lrs`` (shape (steps,))."""
    lrs = np.asarray(lrs, dtype=np.float64)
    return {
        "T_SGD": float(np.sum(lrs**2) / batch_size),
        "T_L2": float(weight_decay * np.sum(lrs)),
        "T_adapt": float(np.sum(lrs)),
    }


@torch.no_grad()
def frobenius_norms(kernels: Mapping[str, torch.Tensor]) -> dict[str, float]:
    """Frobenius norm of every kernel, keyed like ``kernels``."""
    return {name: float(torch.linalg.vector_norm(w.detach().double())) for name, w in kernels.items()}


def total_norm(layer_norms: Mapping[str, float]) -> float:
    """Frobenius norm of all kernels together: sqrt(sum of squared per-layer norms)."""
    return math.sqrt(sum(v * v for v in layer_norms.values()))


@torch.no_grad()
def distance_from_init(kernels: Mapping[str, torch.Tensor], initial: Mapping[str, torch.Tensor]) -> float:
    """||W_t - W_0||_F over all kernels together."""
    total = 0.0
    for name, w in kernels.items():
        total += float(torch.sum((w.detach().double() - initial[name].double()) ** 2))
    return math.sqrt(total)


def tau_interp(epochs: np.ndarray, train_acc: np.ndarray, threshold: float = INTERPOLATION_THRESHOLD) -> float:
    """First epoch whose training accuracy (percent) reaches ``threshold``; NaN if none does."""
    hits = np.flatnonzero(np.asarray(train_acc, dtype=float) >= threshold)
    return float(np.asarray(epochs)[hits[0]]) if hits.size else math.nan


def best_index(val_loss: np.ndarray) -> int:
    """Index of the lowest finite validation loss (ties: the earliest); -1 if none is finite."""
    values = np.asarray(val_loss, dtype=float)
    finite = np.isfinite(values)
    if not finite.any():
        return -1
    return int(np.argmin(np.where(finite, values, np.inf)))


def repair_gap(epochs: np.ndarray, val_acc: np.ndarray, tau: float) -> float:
    """Validation accuracy at the last finite epoch minus at ``tau`` (percentage points); NaN if tau is NaN."""
    if math.isnan(tau):
        return math.nan
    epochs = np.asarray(epochs)
    values = np.asarray(val_acc, dtype=float)
    finite = np.flatnonzero(np.isfinite(values))
    at_tau = values[np.flatnonzero(epochs == tau)[0]]
    return float(values[finite[-1]] - at_tau)
