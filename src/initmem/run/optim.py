"""Optimizers, weight decay and learning-rate schedules: the exact variants every run uses.

:func:`build_optimizer` turns a :class:`~initmem.run.config.RunConfig` (or an optimizer name and keyword settings,
``build_optimizer(model, "adamw", lr=1e-3, weight_decay=0.05)``) into ONE ``torch.optim.Optimizer``
(``.step()``, ``.zero_grad()``, ``state_dict()`` / ``load_state_dict()``), whatever the optimizer.
Learning rates are per step; ``lr`` below is the group's current (scheduled) learning rate.

Optimizers (``config.optimizer``)
---------------------------------
``sgd``
    ``torch.optim.SGD`` without momentum: ``w <- w - lr * g``.
``sgd_momentum``
    ``torch.optim.SGD`` with heavy-ball momentum in PyTorch's convention (dampening 0):
    ``B <- mu B + g; w <- w - lr B`` (``mu = config.momentum``), or with ``config.nesterov``
    ``w <- w - lr (g + mu B)``.
``adam``
    ``torch.optim.Adam`` (``config.betas``, ``config.eps``; eps is added to the bias-corrected
    ``sqrt(v)``; no AMSGrad).
``adamw``
    ``torch.optim.AdamW``: Adam with decoupled decay.
``muon``
    :class:`MuonWithAuxAdam`, one optimizer with two kinds of parameter groups
    (see :func:`split_muon_params`):

    * hidden kernels (every conv kernel and every ``nn.Linear`` weight except the classifier head, the
      stem conv included) take Muon steps, conv kernels viewed as ``(out, in*kh*kw)`` matrices::

          B <- mu B + (1 - mu) g                       (EMA buffer, mu = config.muon_momentum)
          U  = (1 - mu) g + mu B  if Nesterov else B   (config.muon_nesterov)
          O  = NS5(U)                                  (Newton-Schulz, ~ polar factor of U)
          w <- (1 - lr lambda) w - lr s O

      with ``s = sqrt(max(1, rows/cols))`` (``muon_lr_adjust="original"``, Jordan) or
      ``s = 0.2 sqrt(max(rows, cols))`` (``"match_rms_adamw"``, Moonshot), ``lr = config.lr``;
    * everything else (BatchNorm gains and shifts, biases, the head's weight and bias) takes AdamW
      steps with ``lr = config.aux_lr``, ``config.betas``, ``config.eps``.

Weight decay (``config.weight_decay`` = lambda, ``config.effective_decay_mode``)
--------------------------------------------------------------------------------
``l2`` (coupled)
    ``g <- g + lambda w`` before anything else sees the gradient: the gradient of
    ``L + lambda/2 ||w||^2``. This is exactly what the ``weight_decay`` argument of ``torch.optim.SGD`` and
    ``torch.optim.Adam`` does (checked in ``tests/test_optim.py`` against a hand-modified gradient). Under
    Adam the penalty gradient is then rescaled by ``1/sqrt(v)`` like the loss gradient.
``decoupled``
    ``w <- (1 - lr lambda) w`` before the optimizer's own update, with the current scheduled ``lr``, so
    that the clock ``T_L2 = lambda sum_k lr_k`` measures the total shrinkage ``prod_k (1 - lr_k lambda)``.
    For ``adam`` this is ``torch.optim.Adam(decoupled_weight_decay=True)`` (= AdamW); for ``sgd`` and
    ``sgd_momentum`` it is :class:`SGDW`. Without momentum, decoupled and coupled SGD are the same update
    (``w - lr (g + lambda w) = (1 - lr lambda) w - lr g``); with momentum they differ (the coupled penalty
    enters the buffer, the decoupled one does not). Under Muon the hidden kernels shrink by
    ``(1 - config.lr lambda)`` and the AdamW group by ``(1 - config.aux_lr lambda)``, as in Jordan's
    ``MuonWithAuxAdam`` and ``torch.optim.Muon`` (the shrink uses the group lr, not Muon's adjusted lr).

Decay applies to ALL trainable parameters (kernels, BatchNorm gains and shifts, biases, head), as a plain
``weight_decay=lambda`` argument does and as the classic CIFAR ResNet recipes do (He et al. 2016; the
akamaster ResNet-20/56/110 code passes ``weight_decay`` for every parameter). The paper states an "L2"
strength without parameter groups, so this is the reading that needs no extra assumption.

Muon choices (what the paper does not state; our choices and reasons)
---------------------------------------------------------------------
* Buffer: the EMA form ``B <- mu B + (1 - mu) g`` (Jordan's ``lerp_``). ``torch.optim.Muon``'s docstring
  writes ``B <- mu B + g`` but its code also uses ``lerp_``, so ours and torch's are the same algorithm;
  the two forms differ only by a scale that the orthogonalisation removes anyway.
* NS5: Jordan's quintic with ``(a, b, c) = (3.4445, -4.7750, 2.0315)``, 5 steps (``config.muon_ns_steps``),
  transposing tall matrices so that the Gram matrix is the small one. The input is normalised as
  ``X / max(||X||_F, 1e-7)`` (torch.optim.Muon's ``clamp``) rather than Jordan's ``X / (||X||_F + 1e-7)``:
  the two differ by a relative 1e-7/||X||_F, and the clamp makes NS5 exactly scale-free
  (``NS5(cG) = NS5(G)``) whenever ``||G||_F >= 1e-7``, which is the property the theory chapter uses.
* Precision: the reference code runs NS5 in bfloat16; we default to float32 (deterministic, accurate on
  CPU). ``ns_dtype="bfloat16"`` reproduces the reference numerics: on CPU it matches ``torch.optim.Muon``
  bit for bit (the parity test). The float32 default differs from torch's bfloat16 by bfloat16 rounding
  (about 5e-4 in the weights after 10 steps at lr 0.02) and agrees with a float64 NS5 to 1e-5.
  :func:`build_optimizer` picks bfloat16 only when ``config.bf16`` is set and the model is on CUDA
  (``bf16`` already changes the numbers and is part of the run hash).
* Per-matrix scale ``s`` uses the flattened 2-D shape ``(out, in*kh*kw)``. Jordan's code computes it from
  the last two dimensions of the 4-D gradient (``kh/kw = 1``) for conv kernels, so its conv layers get
  ``s = 1``; with the flattened shape the two agree except for convs with ``out > in*kh*kw`` (the stem:
  64 x 27 in ResNet-9, ``s = 1.54``).
* The stem conv is a Muon parameter. Jordan's CIFAR-10 Muon runs (airbench) give Muon every trainable conv
  filter (their stem is a frozen whitening layer, so they are silent on a trained stem); we treat only the
  classifier head as an output layer (AdamW).
* Gradients that are ``None`` are skipped (PyTorch's convention), not replaced by zeros.

Learning-rate schedules
-----------------------
:func:`lr_multiplier` returns a pure function ``step -> multiplier of the peak lr`` (an
:class:`LRSchedule`). :func:`build_optimizer` stores every group's peak lr as ``group["initial_lr"]``
(the key ``torch.optim.lr_scheduler`` uses); before step ``k`` the training loop calls
``apply_lr_multiplier(optimizer, schedule(k))``, which sets ``group["lr"] = group["initial_lr"] * m``
for every group, so the Muon and AdamW groups of Muon follow the same schedule shape. The same
function gives ``lr_k = config.lr * schedule(k)`` for the forgetting clocks.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from .config import OPTIMIZERS, SCHEDULES, ConfigError, RunConfig

__all__ = [
    "ADAM_DEFAULTS",
    "MUON_DEFAULTS",
    "NS_COEFFICIENTS",
    "LRSchedule",
    "Muon",
    "MuonWithAuxAdam",
    "SGDW",
    "apply_lr_multiplier",
    "build_optimizer",
    "optimizer_config",
    "OPTIMIZER_FIELDS",
    "lr_multiplier",
    "split_muon_params",
    "zeropower_via_newtonschulz5",
]

logger = logging.getLogger(__name__)

#: Jordan's quintic Newton-Schulz coefficients (a, b, c).
NS_COEFFICIENTS: tuple[float, float, float] = (3.4445, -4.7750, 2.0315)

_NS_DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
_MUON_LR_ADJUST = ("original", "match_rms_adamw")
_DECAY_MODES = ("l2", "decoupled")
_KERNEL_MODULES = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)

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
def _muon_group_step(state: dict, group: dict[str, Any]) -> None:
    """One Muon step for every parameter of ``group`` that has a gradient (in place, no grad)."""
    lr, mu, wd = group["lr"], group["momentum"], group["weight_decay"]
    decoupled = group["decay_mode"] == "decoupled"
    for p in group["params"]:
        if p.grad is None:
            continue
        grad = p.grad if decoupled or wd == 0 else p.grad.add(p, alpha=wd)
        param_state = state[p]
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
    for p in group["params"]:
        if p.grad is None:
            continue
        grad = p.grad if decoupled or wd == 0 else p.grad.add(p, alpha=wd)
        param_state = state[p]
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


class SGDW(torch.optim.SGD):
    """SGD (optionally with heavy-ball or Nesterov momentum) with decoupled weight decay.

    ``w <- (1 - lr wd) w``, then ``torch.optim.SGD``'s own step (no decay) with the gradient computed at the
    old ``w``; the momentum buffer never sees the decay. ``lr`` per step, ``weight_decay`` lambda per unit lr.
    Stored per group as ``group["decoupled_weight_decay"]`` (``group["weight_decay"]``, the coupled
    penalty, stays 0).
    """

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict[str, Any]],
        lr: float,
        momentum: float = 0.0,
        nesterov: bool = False,
        weight_decay: float = 0.0,
    ) -> None:
        if weight_decay < 0:
            raise ValueError(f"weight_decay: must be >= 0, got {weight_decay!r}")
        super().__init__(params, lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=0.0)
        self.defaults["decoupled_weight_decay"] = weight_decay
        for group in self.param_groups:
            group.setdefault("decoupled_weight_decay", weight_decay)

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Shrink every parameter that has a gradient, then take torch's SGD step."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            shrink = 1 - group["lr"] * group["decoupled_weight_decay"]
            for p in group["params"]:
                if p.grad is not None:
                    p.mul_(shrink)
        super().step()
        return loss


# --- parameter selection and construction -----------------------------------------------------
def _trainable(model: nn.Module) -> list[Tensor]:
    return [p for p in model.parameters() if p.requires_grad]


def split_muon_params(model: nn.Module) -> tuple[list[Tensor], list[Tensor]]:
    """Split the trainable parameters into (hidden kernels for Muon, others for AdamW).

    Hidden kernels: the weights of every ``nn.Conv1d/2d/3d`` and every ``nn.Linear`` except the classifier
    head, which is the last ``nn.Linear`` in ``model.modules()`` order. Others: BatchNorm gains and shifts,
    all biases, the head's weight and bias, and any parameter not owned by a conv or linear layer. Both lists
    follow ``model.parameters()`` order; together they hold every trainable parameter exactly once.
    """
    modules = list(model.modules())
    linears = [m for m in modules if isinstance(m, nn.Linear)]
    head = linears[-1] if linears else None
    hidden_ids = {id(m.weight) for m in modules if isinstance(m, _KERNEL_MODULES) and m is not head}
    params = _trainable(model)
    hidden = [p for p in params if id(p) in hidden_ids]
    others = [p for p in params if id(p) not in hidden_ids]
    return hidden, others


def _ns_dtype(model: nn.Module, config: RunConfig) -> str:
    """bfloat16 Newton-Schulz only for bf16 runs on CUDA; float32 otherwise."""
    on_cuda = any(p.is_cuda for p in model.parameters())
    return "bfloat16" if config.bf16 and on_cuda else "float32"


def _build_sgd(model: nn.Module, config: RunConfig, momentum: float, nesterov: bool) -> torch.optim.Optimizer:
    params = _trainable(model)
    if config.effective_decay_mode == "decoupled":
        return SGDW(
            params, lr=config.lr, momentum=momentum, nesterov=nesterov, weight_decay=config.weight_decay
        )
    return torch.optim.SGD(
        params, lr=config.lr, momentum=momentum, nesterov=nesterov, weight_decay=config.weight_decay
    )


def _build_adam(model: nn.Module, config: RunConfig) -> torch.optim.Optimizer:
    return torch.optim.Adam(
        _trainable(model),
        lr=config.lr,
        betas=config.betas,
        eps=config.eps,
        weight_decay=config.weight_decay,
        decoupled_weight_decay=config.effective_decay_mode == "decoupled",
    )


def _build_adamw(model: nn.Module, config: RunConfig) -> torch.optim.Optimizer:
    return torch.optim.AdamW(
        _trainable(model), lr=config.lr, betas=config.betas, eps=config.eps, weight_decay=config.weight_decay
    )


def _build_muon(model: nn.Module, config: RunConfig) -> torch.optim.Optimizer:
    hidden, others = split_muon_params(model)
    decay = {"weight_decay": config.weight_decay, "decay_mode": config.effective_decay_mode}
    muon_group = {
        "params": hidden,
        "use_muon": True,
        "lr": config.lr,
        "momentum": config.muon_momentum,
        "nesterov": config.muon_nesterov,
        "ns_steps": config.muon_ns_steps,
        "adjust_lr": config.muon_lr_adjust,
        "ns_dtype": _ns_dtype(model, config),
        **decay,
    }
    adam_group = {
        "params": others,
        "use_muon": False,
        "lr": config.aux_lr,
        "betas": config.betas,
        "eps": config.eps,
        **decay,
    }
    return MuonWithAuxAdam([g for g in (muon_group, adam_group) if g["params"]])


_BUILDERS: dict[str, Callable[[nn.Module, RunConfig], torch.optim.Optimizer]] = {
    "sgd": lambda model, config: _build_sgd(model, config, momentum=0.0, nesterov=False),
    "sgd_momentum": lambda model, config: _build_sgd(model, config, config.momentum, config.nesterov),
    "adam": _build_adam,
    "adamw": _build_adamw,
    "muon": _build_muon,
}


#: The RunConfig fields that :func:`build_optimizer`'s plain-argument form accepts as keywords.
OPTIMIZER_FIELDS = (
    "lr", "momentum", "nesterov", "betas", "eps", "weight_decay", "decay_mode", "muon_momentum", "muon_nesterov",
    "muon_ns_steps", "muon_lr_adjust", "aux_lr", "bf16",
)  # fmt: skip


def optimizer_config(optimizer: str, **settings: Any) -> RunConfig:
    """A :class:`RunConfig` carrying only optimizer settings (every other field at its default, no training
    set size), validated as RunConfig validates them.

    Raises:
        ConfigError: an unknown keyword (naming the allowed ones) or an invalid value.
    """
    unknown = sorted(set(settings) - set(OPTIMIZER_FIELDS))
    if unknown:
        raise ConfigError(f"{unknown[0]}: not an optimizer setting; allowed: {', '.join(OPTIMIZER_FIELDS)}")
    return RunConfig(optimizer=optimizer, train_size=None, **settings)


def build_optimizer(model: nn.Module, config: RunConfig | str, **settings: Any) -> torch.optim.Optimizer:
    """The optimizer over the trainable parameters of ``model`` (see the module docstring).

    Two forms::

        build_optimizer(model, config)                                  # a RunConfig
        build_optimizer(model, "adamw", lr=1e-3, weight_decay=0.05)     # plain arguments

    The plain form takes the optimizer's name (``sgd``, ``sgd_momentum``, ``adam``, ``adamw`` or ``muon``) and any of
    :data:`OPTIMIZER_FIELDS` as keywords, with RunConfig's defaults and validation for the rest; nothing
    unrelated (batch size, data sizes) is checked. Both forms build the same optimizer for the same settings.

    Every parameter group gets ``group["initial_lr"]``, its peak learning rate; the training loop drives the
    schedule with :func:`apply_lr_multiplier`.

    Raises:
        ConfigError: an unknown optimizer (naming the allowed ones), an unknown keyword or an invalid value.
        TypeError: keywords given together with a RunConfig.
    """
    if isinstance(config, str):
        config = optimizer_config(config, **settings)
    elif settings:
        raise TypeError(f"build_optimizer: keywords ({', '.join(settings)}) go with an optimizer name, not a RunConfig")
    if config.optimizer not in _BUILDERS:
        raise ConfigError(f"optimizer: allowed values are {', '.join(OPTIMIZERS)}; got {config.optimizer!r}")
    optimizer = _BUILDERS[config.optimizer](model, config)
    for group in optimizer.param_groups:
        group["initial_lr"] = group["lr"]
    logger.debug(
        "built %s (%s decay %g) with groups %s",
        type(optimizer).__name__,
        config.effective_decay_mode,
        config.weight_decay,
        [(len(g["params"]), g["lr"]) for g in optimizer.param_groups],
    )
    return optimizer


def apply_lr_multiplier(optimizer: torch.optim.Optimizer, multiplier: float) -> None:
    """Set every group's lr to ``group["initial_lr"] * multiplier`` (call before each step)."""
    for group in optimizer.param_groups:
        group["lr"] = group["initial_lr"] * multiplier


# --- learning-rate schedules ------------------------------------------------------------------
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
