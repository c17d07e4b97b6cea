"""Building a run's optimizer (:func:`build_optimizer`): the exact variants of every optimizer and of weight decay.

:func:`build_optimizer` turns a :class:`~initmem.run.config.RunConfig` (or an optimizer name and keyword settings,
``build_optimizer(model, "adamw", lr=1e-3, weight_decay=0.05)``) into ONE ``torch.optim.Optimizer``, whatever the
optimizer; learning rates are per step. Each optimizer has a record in :mod:`initmem.run.optimizers` that names its
builder: ``sgd``, ``sgd_momentum`` (heavy ball in PyTorch's convention, optionally Nesterov), ``adam``, ``adamw``
and ``muon`` (:class:`~initmem.run.optim.muon.MuonWithAuxAdam`, its groups split by :func:`split_muon_params`)
are built here, any other in its own module of this package.

Weight decay (``config.weight_decay`` = lambda, ``config.effective_decay_mode``) is ``l2`` (coupled,
``g <- g + lambda w``, what ``torch.optim``'s ``weight_decay`` argument does) or ``decoupled``
(``w <- (1 - lr lambda) w`` before the update, at the current scheduled lr; :class:`SGDW` for SGD), on every
trainable parameter. The book's Setup chapter ("Optimizers") gives each update rule, and its dropdown "How each
optimizer and its decay are built" the details and why decay takes every parameter.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor, nn

from .. import optimizers
from ..config import ConfigError, RunConfig
from .muon import MuonWithAuxAdam, _closure_loss

__all__ = [
    "SGDW",
    "OPTIMIZER_FIELDS",
    "build_optimizer",
    "builder",
    "optimizer_config",
    "split_muon_params",
    "trainable",
]

logger = logging.getLogger(__name__)

_KERNEL_MODULES = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)


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
def trainable(model: nn.Module) -> list[Tensor]:
    """The parameters of ``model`` that require a gradient, in ``model.parameters()`` order."""
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
    params = trainable(model)
    hidden = [p for p in params if id(p) in hidden_ids]
    others = [p for p in params if id(p) not in hidden_ids]
    return hidden, others


def _ns_dtype(model: nn.Module, config: RunConfig) -> str:
    """bfloat16 Newton-Schulz only for bf16 runs on CUDA; float32 otherwise."""
    on_cuda = any(p.is_cuda for p in model.parameters())
    return "bfloat16" if config.bf16 and on_cuda else "float32"


def _build_sgd(model: nn.Module, config: RunConfig, momentum: float, nesterov: bool) -> torch.optim.Optimizer:
    params = trainable(model)
    if config.effective_decay_mode == "decoupled":
        return SGDW(params, lr=config.lr, momentum=momentum, nesterov=nesterov, weight_decay=config.weight_decay)
    return torch.optim.SGD(params, lr=config.lr, momentum=momentum, nesterov=nesterov, weight_decay=config.weight_decay)


def build_sgd(model: nn.Module, config: RunConfig) -> torch.optim.Optimizer:
    return _build_sgd(model, config, momentum=0.0, nesterov=False)


def build_sgd_momentum(model: nn.Module, config: RunConfig) -> torch.optim.Optimizer:
    return _build_sgd(model, config, config.momentum, config.nesterov)


def build_adam(model: nn.Module, config: RunConfig) -> torch.optim.Optimizer:
    return torch.optim.Adam(
        trainable(model),
        lr=config.lr,
        betas=config.betas,
        eps=config.eps,
        weight_decay=config.weight_decay,
        decoupled_weight_decay=config.effective_decay_mode == "decoupled",
    )


def build_adamw(model: nn.Module, config: RunConfig) -> torch.optim.Optimizer:
    return torch.optim.AdamW(
        trainable(model), lr=config.lr, betas=config.betas, eps=config.eps, weight_decay=config.weight_decay
    )


def build_muon(model: nn.Module, config: RunConfig) -> torch.optim.Optimizer:
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


def builder(name: str) -> Callable[[nn.Module, RunConfig], torch.optim.Optimizer]:
    """The builder of optimizer ``name``: the function its record names (:attr:`~initmem.run.optimizers.Optimizer.builder`,
    ``module:function`` in this package), imported on first use.

    Raises:
        ConfigError: an unknown optimizer, naming the registered ones.
    """
    try:
        module, function = optimizers.record(name).builder.split(":")
    except KeyError as exc:
        raise ConfigError(exc.args[0]) from None
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)


#: The RunConfig fields that :func:`build_optimizer`'s plain-argument form accepts as keywords: the shared ones and
#: every registered optimizer's own settings.
OPTIMIZER_FIELDS = (
    "lr",
    "momentum",
    "nesterov",
    "betas",
    "eps",
    "weight_decay",
    "decay_mode",
    "muon_momentum",
    "muon_nesterov",
    "muon_ns_steps",
    "muon_lr_adjust",
    "aux_lr",
    "bf16",
    *(setting.name for setting in optimizers.settings()),
)


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

    The plain form takes the optimizer's name (one of :func:`~initmem.run.optimizers.names`) and any of
    :data:`OPTIMIZER_FIELDS` as keywords, with RunConfig's defaults and validation for the rest; nothing
    unrelated (batch size, data sizes) is checked. Both forms build the same optimizer for the same settings.

    Every parameter group gets ``group["initial_lr"]``, its peak learning rate; the training loop drives the
    schedule with :func:`~initmem.run.optim.schedules.apply_lr_multiplier`.

    Raises:
        ConfigError: an unknown optimizer (naming the allowed ones), an unknown keyword or an invalid value.
        TypeError: keywords given together with a RunConfig.
    """
    if isinstance(config, str):
        config = optimizer_config(config, **settings)
    elif settings:
        raise TypeError(f"build_optimizer: keywords ({', '.join(settings)}) go with an optimizer name, not a RunConfig")
    optimizer = builder(config.optimizer)(model, config)
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
