"""Lion (EvoLved Sign Momentum; Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Algorithm 2): the
``lion`` of :func:`initmem.run.optim.build.build_optimizer`, with its record in :mod:`initmem.run.optimizers`.

Per parameter, with gradient ``g`` and momentum ``m`` (zero at the start)::

    w <- (1 - lr lambda) w                       (decoupled decay, as AdamW; lambda = config.weight_decay)
    w <- w - lr sign(beta1 m + (1 - beta1) g)    (beta1 = config.lion_beta1)
    m <- beta2 m + (1 - beta2) g                 (beta2 = config.lion_beta2)

The paper writes the first two lines as one, ``w <- w - lr (sign(c) + lambda w)``: the same update, since ``c`` does
not depend on ``w``. Every entry moves by exactly ``lr`` (or not at all where ``c = 0``), so Lion's forgetting clock is
T_adapt, as for the adaptive optimizers; the paper's advice is an ``lr`` 3-10x smaller than AdamW's with a
``lambda`` as many times larger (the same shrink ``lr lambda`` per step). The update acts on each entry alone, so K
runs of it train as one stacked model. Gradients that are ``None`` are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor, nn

from ..config import RunConfig
from .build import trainable
from .muon import _closure_loss

__all__ = ["Lion", "build"]


class Lion(torch.optim.Optimizer):
    """Lion with decoupled weight decay (see the module docstring): ``lr`` per step, ``betas = (beta1, beta2)``,
    ``weight_decay`` lambda per unit lr. State per parameter: ``exp_avg`` (the momentum ``m``)."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict[str, Any]],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0,
    ) -> None:
        if not lr > 0:
            raise ValueError(f"lr: must be > 0, got {lr!r}")
        if not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"betas: must be in [0, 1), got {betas!r}")
        if weight_decay < 0:
            raise ValueError(f"weight_decay: must be >= 0, got {weight_decay!r}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                m = state["exp_avg"]
                p.mul_(1 - lr * wd)
                p.add_(torch.lerp(p.grad, m, beta1).sign_(), alpha=-lr)  # lerp(g, m, beta1) = beta1 m + (1 - beta1) g
                m.lerp_(p.grad, 1 - beta2)  # beta2 m + (1 - beta2) g
        return loss


def build(model: nn.Module, config: RunConfig) -> Lion:
    """Lion over the trainable parameters of ``model`` at ``config.lr``, ``config.lion_beta1``/``lion_beta2`` and
    ``config.weight_decay`` (decoupled: the only decay mode Lion's record allows)."""
    betas = (config.lion_beta1, config.lion_beta2)  # RunConfig fields from Lion's record
    return Lion(trainable(model), lr=config.lr, betas=betas, weight_decay=config.weight_decay)
