"""Learning-rate schedules: the multiplier of the peak learning rate at every global step, and applying it.

:func:`lr_multiplier` returns a pure function ``step -> multiplier of the peak lr`` (an :class:`LRSchedule`).
:func:`~initmem.run.optim.build.build_optimizer` stores every group's peak lr as ``group["initial_lr"]`` (the key
``torch.optim.lr_scheduler`` uses); before step ``k`` the training loop calls
``apply_lr_multiplier(optimizer, schedule(k))`` (through :meth:`initmem.run.loop.Schedule.apply`), which sets
``group["lr"] = group["initial_lr"] * m`` for every group, so the Muon and AdamW groups of Muon follow the same
schedule shape. The same function gives ``lr_k = config.lr * schedule(k)`` for the forgetting clocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..config import SCHEDULES, ConfigError, RunConfig

__all__ = ["LRSchedule", "apply_lr_multiplier", "lr_multiplier"]


def apply_lr_multiplier(optimizer: torch.optim.Optimizer, multiplier: float) -> None:
    """Set every group's lr to ``group["initial_lr"] * multiplier`` (call before each step)."""
    for group in optimizer.param_groups:
        group["lr"] = group["initial_lr"] * multiplier


@dataclass(frozen=True)
class LRSchedule:
    """Multiplier of the peak learning rate at global step ``k`` (0-based): ``warmup(k) * decay(k)``.

    ``warmup(k) = min(1, (k + 1) / warmup_steps)`` (1 when ``warmup_steps`` is 0): ``1/warmup_steps`` at
    the first step, 1 from step ``warmup_steps - 1`` on. ``decay(k)``, with ``p = (k - W) / (T - W)``
    clipped to [0, 1] the fraction of the post-warm-up steps done (``W`` warm-up steps, ``T`` total):

    * ``constant``: 1;
    * ``step``: ``gamma ** n`` with ``n`` the number of milestones (in steps) ``<= k``;
    * ``cosine``: ``f + (1 - f) (1 + cos(pi p)) / 2``, 1 -> ``f`` (``f = final_fraction``);
    * ``linear``: ``1 - (1 - f) p``.

    ``f`` is reached at step ``T`` (the end of training); the last step taken, ``T - 1``, is one step
    above it. A plain picklable value: no torch state.
    """

    kind: str
    total_steps: int
    warmup_steps: int = 0
    milestones: tuple[int, ...] = ()
    gamma: float = 0.1
    final_fraction: float = 0.0

    def __call__(self, step: int) -> float:
        if step < 0:
            raise ValueError(f"step: must be >= 0, got {step!r}")
        return self._warmup(step) * self._decay(step)

    def _warmup(self, step: int) -> float:
        if self.warmup_steps == 0:
            return 1.0
        return min(1.0, (step + 1) / self.warmup_steps)

    def _decay(self, step: int) -> float:
        if self.kind == "constant":
            return 1.0
        if self.kind == "step":
            return self.gamma ** sum(step >= m for m in self.milestones)
        span = max(1, self.total_steps - self.warmup_steps)
        progress = min(1.0, max(0.0, (step - self.warmup_steps) / span))
        f = self.final_fraction
        if self.kind == "cosine":
            return f + (1 - f) * (1 + math.cos(math.pi * progress)) / 2
        return 1 - (1 - f) * progress


def lr_multiplier(config: RunConfig, steps_per_epoch: int) -> LRSchedule:
    """The schedule of ``config`` as a pure function of the global step (see :class:`LRSchedule`).

    ``steps_per_epoch``: optimizer steps per epoch. Total steps ``T = config.epochs * steps_per_epoch``;
    warm-up steps ``round(config.warmup_epochs * steps_per_epoch)`` (at least 1 if ``warmup_epochs > 0``);
    milestone ``m`` (a fraction of training) falls at step ``round(m * T)``.
    """
    if config.schedule not in SCHEDULES:
        raise ConfigError(f"schedule: allowed values are {', '.join(SCHEDULES)}; got {config.schedule!r}")
    if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
        raise ValueError(f"steps_per_epoch: must be a positive integer, got {steps_per_epoch!r}")
    total = config.epochs * steps_per_epoch
    warmup = round(config.warmup_epochs * steps_per_epoch)
    if config.warmup_epochs > 0:
        warmup = max(1, warmup)
    return LRSchedule(
        kind=config.schedule,
        total_steps=total,
        warmup_steps=warmup,
        milestones=tuple(round(m * total) for m in config.schedule_milestones),
        gamma=config.schedule_gamma,
        final_fraction=config.final_lr_fraction,
    )
