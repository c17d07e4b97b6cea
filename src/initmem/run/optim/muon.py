"""Muon (MomentUm Orthogonalized by Newton-Schulz): :class:`Muon` for matrices and conv kernels, and
:class:`MuonWithAuxAdam`, Muon and AdamW as one optimizer, the ``muon`` of
:func:`initmem.run.optim.build.build_optimizer`.

Hidden kernels (:func:`initmem.run.optim.build.split_muon_params`: every conv kernel and ``nn.Linear`` weight but
the classifier head, the stem included), viewed as ``(out, in*kh*kw)`` matrices, take Muon steps::

    B <- mu B + (1 - mu) g                       (EMA buffer, mu = config.muon_momentum)
    U  = (1 - mu) g + mu B  if Nesterov else B   (config.muon_nesterov)
    w <- (1 - lr lambda) w - lr s NS5(U)         (lr = config.lr, s from config.muon_lr_adjust)

Everything else takes AdamW steps at ``config.aux_lr``. NS5 runs in float32 unless ``ns_dtype="bfloat16"`` (what
``build_optimizer`` picks for ``config.bf16`` on CUDA). The choices the paper does not state (the buffer's form,
NS5's normalisation and precision, the scale ``s``, the stem) are in the book's Setup chapter, with their reasons
("Choices the paper does not state").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch
from torch import Tensor

from ...base.constants import NS_COEFFICIENTS

__all__ = [
    "ADAM_DEFAULTS",
    "MUON_DEFAULTS",
    "Muon",
    "MuonWithAuxAdam",
    "zeropower_via_newtonschulz5",
]

_NS_DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
_MUON_LR_ADJUST = ("original", "match_rms_adamw")
_DECAY_MODES = ("l2", "decoupled")

#: Defaults of a Muon parameter group (Jordan's lr and momentum; decay off as in his code).
MUON_DEFAULTS: dict[str, Any] = {
    "lr": 0.02,
    "momentum": 0.95,
    "nesterov": True,
    "weight_decay": 0.0,
    "decay_mode": "decoupled",
    "ns_steps": 5,
    "ns_coefficients": NS_COEFFICIENTS,
    "eps": 1e-7,
    "adjust_lr": "original",
    "ns_dtype": "float32",
}
#: Defaults of an auxiliary AdamW parameter group (PyTorch's Adam defaults).
ADAM_DEFAULTS: dict[str, Any] = {
    "lr": 1e-3,
    "betas": (0.9, 0.999),
    "eps": 1e-8,
    "weight_decay": 0.0,
    "decay_mode": "decoupled",
}


# --- Newton-Schulz orthogonalisation ----------------------------------------------------------
def zeropower_via_newtonschulz5(
    G: Tensor,
    steps: int = 5,
    coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
    eps: float = 1e-7,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """Approximate the polar factor ``U V^T`` of a 2-D matrix ``G = U S V^T`` (Jordan's NS5).

    ``X = G / max(||G||_F, eps)`` (spectral norm <= 1), then ``steps`` iterations of
    ``X <- a X + (b A + c A^2) X`` with ``A = X X^T``, computed on the wide orientation (tall matrices are
    transposed and transposed back). The result is ``U S' V^T`` with ``S'`` roughly in [0.5, 1.5], not exactly
    ``U V^T``: the coefficients maximise the slope at zero. Returned in ``dtype`` (the working precision).
    """
    if G.ndim != 2:
        raise ValueError(f"Newton-Schulz needs a 2-D matrix, got shape {tuple(G.shape)}")
    a, b, c = coefficients
    tall = G.size(0) > G.size(1)
    X = G.to(dtype)
    if tall:
        X = X.T
    X = X / X.norm().clamp(min=eps)
    for _ in range(steps):
        A = X @ X.T
        B = torch.addmm(A, A, A, beta=b, alpha=c)
        X = torch.addmm(X, B, X, beta=a)
    return X.T if tall else X


def _muon_scale(adjust_lr: str, rows: int, cols: int) -> float:
    """The per-matrix factor ``s`` of Muon's step (dimensionless), as in ``torch.optim.Muon``."""
    if adjust_lr == "original":
        return math.sqrt(max(1, rows / cols))
    return 0.2 * math.sqrt(max(rows, cols))


# --- per-group update rules (shared by Muon and MuonWithAuxAdam) ------------------------------
def _gradients(state: dict, group: dict[str, Any]) -> Iterator[tuple[Tensor, Tensor, dict]]:
    """``(parameter, gradient, its state)`` for every parameter of ``group`` that has a gradient; with coupled
    decay (``decay_mode`` ``l2``) the gradient includes ``weight_decay * parameter``."""
    wd, decoupled = group["weight_decay"], group["decay_mode"] == "decoupled"
    for p in group["params"]:
        if p.grad is not None:
            yield p, p.grad if decoupled or wd == 0 else p.grad.add(p, alpha=wd), state[p]


def _muon_group_step(state: dict, group: dict[str, Any]) -> None:
    """One Muon step for every parameter of ``group`` that has a gradient (in place, no grad)."""
    lr, mu, wd = group["lr"], group["momentum"], group["weight_decay"]
    decoupled = group["decay_mode"] == "decoupled"
    for p, grad, param_state in _gradients(state, group):
        if "momentum_buffer" not in param_state:
            param_state["momentum_buffer"] = torch.zeros_like(p)
        buf = param_state["momentum_buffer"]
        buf.lerp_(grad, 1 - mu)
        update = grad.lerp(buf, mu) if group["nesterov"] else buf
        matrix = update.reshape(update.size(0), -1)
        ortho = zeropower_via_newtonschulz5(
            matrix, group["ns_steps"], group["ns_coefficients"], group["eps"], _NS_DTYPES[group["ns_dtype"]]
        )
        adjusted_lr = lr * _muon_scale(group["adjust_lr"], *matrix.shape)
        if decoupled:
            p.mul_(1 - lr * wd)
        p.add_(ortho.reshape(p.shape), alpha=-adjusted_lr)


def _adam_group_step(state: dict, group: dict[str, Any]) -> None:
    """One Adam/AdamW step (torch.optim.AdamW's formula) for every parameter of ``group`` with a gradient."""
    lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
    beta1, beta2 = group["betas"]
    decoupled = group["decay_mode"] == "decoupled"
    for p, grad, param_state in _gradients(state, group):
        if not param_state:
            param_state["step"] = 0
            param_state["exp_avg"] = torch.zeros_like(p)
            param_state["exp_avg_sq"] = torch.zeros_like(p)
        param_state["step"] += 1
        step = param_state["step"]
        exp_avg, exp_avg_sq = param_state["exp_avg"], param_state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (exp_avg_sq.sqrt() / math.sqrt(1 - beta2**step)).add_(eps)
        if decoupled:
            p.mul_(1 - lr * wd)
        p.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**step))


def _check_group(group: dict[str, Any], use_muon: bool) -> None:
    """Raise ValueError naming the first invalid setting of a Muon or auxiliary Adam group."""
    if group["lr"] < 0 or group["weight_decay"] < 0:
        raise ValueError(f"lr and weight_decay must be >= 0, got {group['lr']!r}, {group['weight_decay']!r}")
    _require_choice(group, "decay_mode", _DECAY_MODES)
    if not use_muon:
        return
    if not 0.0 <= group["momentum"] < 1.0:
        raise ValueError(f"momentum: must be in [0, 1), got {group['momentum']!r}")
    _require_choice(group, "adjust_lr", _MUON_LR_ADJUST)
    _require_choice(group, "ns_dtype", tuple(_NS_DTYPES))
    for p in group["params"]:
        if p.ndim < 2:
            raise ValueError(f"Muon takes matrices and conv kernels only, got shape {tuple(p.shape)}")


def _require_choice(group: dict[str, Any], key: str, allowed: tuple[str, ...]) -> None:
    if group[key] not in allowed:
        raise ValueError(f"{key}: allowed values are {', '.join(allowed)}; got {group[key]!r}")


def _closure_loss(closure: Callable[[], Any] | None) -> Any:
    if closure is None:
        return None
    with torch.enable_grad():
        return closure()


# --- optimizers -------------------------------------------------------------------------------
class Muon(torch.optim.Optimizer):
    """Muon (MomentUm Orthogonalized by Newton-Schulz) for matrices and conv kernels.

    Per parameter (conv kernels viewed as ``(out, in*kh*kw)``)::

        B <- mu B + (1 - mu) g;  U = (1 - mu) g + mu B (nesterov) or B;  O = NS5(U)
        w <- (1 - lr wd) w - lr s O          (decay_mode "decoupled")

    With ``decay_mode="l2"`` the gradient becomes ``g + wd w`` instead and there is no shrink.
    Args (units): ``lr`` per step, in spectral norm of the step (times ``s``); ``momentum`` mu;
    ``nesterov``; ``weight_decay`` lambda (per unit lr); ``decay_mode`` ``"decoupled"`` | ``"l2"``;
    ``ns_steps``; ``ns_coefficients`` (a, b, c); ``eps`` the floor of ``||U||_F`` in NS5;
    ``adjust_lr`` ``"original"`` (``s = sqrt(max(1, rows/cols))``) | ``"match_rms_adamw"``
    (``s = 0.2 sqrt(max(rows, cols))``); ``ns_dtype`` ``"float32"`` (default, deterministic) |
    ``"bfloat16"`` (the reference numerics, fast on CUDA) | ``"float64"``.
    Defaults are Jordan's (lr 0.02, momentum 0.95, Nesterov, no decay); ``torch.optim.Muon`` differs in
    lr (1e-3) and weight decay (0.1) and accepts only 2-D parameters.
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]], **settings: Any) -> None:
        unknown = sorted(set(settings) - set(MUON_DEFAULTS))
        if unknown:
            raise TypeError(f"Muon: unknown setting {unknown[0]!r}; known: {', '.join(MUON_DEFAULTS)}")
        super().__init__(params, {**MUON_DEFAULTS, **settings})
        for group in self.param_groups:
            _check_group(group, use_muon=True)

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Muon step for every parameter with a gradient; returns the closure's loss if given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            _muon_group_step(self.state, group)
        return loss


class MuonWithAuxAdam(torch.optim.Optimizer):
    """Muon for hidden kernels and AdamW for everything else, as ONE optimizer (Jordan's design).

    ``param_groups`` is a list of dicts, each with ``params`` and ``use_muon`` (bool). Groups with
    ``use_muon=True`` take :class:`Muon` steps (settings and defaults: ``MUON_DEFAULTS``); the others take
    Adam steps in ``torch.optim.AdamW``'s formula (``lr``, ``betas``, ``eps``, ``weight_decay``,
    ``decay_mode``; defaults ``ADAM_DEFAULTS``, i.e. PyTorch's Adam defaults rather than Jordan's
    ``(0.9, 0.95)``, eps 1e-10). A missing setting takes its default; an unknown one raises TypeError.
    """

    def __init__(self, param_groups: Iterable[dict[str, Any]]) -> None:
        groups = [_complete_group(dict(group)) for group in param_groups]
        super().__init__(groups, {})
        for group in self.param_groups:
            _check_group(group, use_muon=group["use_muon"])

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One step of every group (Muon or AdamW by its ``use_muon`` flag); returns the closure's loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            if group["use_muon"]:
                _muon_group_step(self.state, group)
            else:
                _adam_group_step(self.state, group)
        return loss


def _complete_group(group: dict[str, Any]) -> dict[str, Any]:
    """Fill a hybrid group's missing settings with the defaults of its kind; reject unknown keys."""
    if "use_muon" not in group or "params" not in group:
        raise TypeError("MuonWithAuxAdam: every parameter group needs 'params' and 'use_muon'")
    defaults = MUON_DEFAULTS if group["use_muon"] else ADAM_DEFAULTS
    known = set(defaults) | {"params", "use_muon", "initial_lr"}
    unknown = sorted(set(group) - known)
    if unknown:
        raise TypeError(f"MuonWithAuxAdam: unknown setting {unknown[0]!r}; known: {', '.join(sorted(known))}")
    return {**defaults, **group}
