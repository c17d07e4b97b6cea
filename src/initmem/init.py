"""The initialisation that the study sweeps: the one definition of sigma_w in this code base.

Every kernel (the weight of each convolution and linear layer) is drawn as

    W ~ N(0, sigma_w^2 / fan_in),   fan_in = (in_channels / groups) * kh * kw   (convolution)
                                    fan_in = in_features                        (linear)

with biases 0 and every BatchNorm at gamma = 1, beta = 0 and reset running statistics.
``sigma_w = sqrt(2)`` is He initialisation: ``nn.init.kaiming_normal_(W, mode="fan_in",
nonlinearity="relu")`` draws from N(0, 2 / fan_in), i.e. std = gain / sqrt(fan_in) with gain sqrt(2).

Because every hidden kernel feeds a BatchNorm (see :mod:`initmem.models`), sigma_w changes only
the *norm* of those kernels, not the function the network computes at initialisation. With the same
seed the kernels of different sigma_w are exact multiples of each other: the standard normals are
drawn in a fixed order (module order, one draw per kernel, independent of sigma_w and of
``include_head``) and then multiplied by ``sigma_w / sqrt(fan_in)``. A sweep over sigma_w at a
fixed seed therefore compares the *same directions* at different radii.
"""

from __future__ import annotations

import logging
import math
import numbers
from typing import TYPE_CHECKING

import torch
from torch import nn

from initmem.models import build_model, head_name

if TYPE_CHECKING:
    from initmem.config import RunConfig

__all__ = ["init_sigma_w_", "seeded_model", "fan_in"]

logger = logging.getLogger(__name__)

_KERNEL_MODULES = (nn.modules.conv._ConvNd, nn.Linear)
_NORM_MODULES = (nn.modules.batchnorm._BatchNorm,)


def fan_in(module: nn.Module) -> int:
    """Inputs feeding one output unit: ``in_channels / groups * kh * kw`` for a convolution,
    ``in_features`` for a linear layer (the number of entries of one row of the kernel)."""
    if not isinstance(module, _KERNEL_MODULES):
        raise TypeError(f"module: expected a convolution or Linear, got {type(module).__name__}")
    return module.weight[0].numel()


@torch.no_grad()
def init_sigma_w_(
    model: nn.Module,
    sigma_w: float,
    include_head: bool = True,
    generator: torch.Generator | None = None,
) -> nn.Module:
    """Initialise ``model`` in place at scale ``sigma_w`` and return it.

    * every convolution and linear kernel W: N(0, sigma_w^2 / fan_in) (see :func:`fan_in`);
      ``sigma_w = sqrt(2)`` is He (Kaiming normal, fan_in, ReLU) initialisation;
    * every convolution and linear bias: 0;
    * every BatchNorm: weight (gamma) 1, bias (beta) 0, running mean 0, running variance 1,
      batch counter 0.

    Args:
        model: a network whose parameters all belong to convolutions, linear layers or BatchNorms.
        sigma_w: the init scale, a finite number > 0.
        include_head: if False, the classifier head (:func:`initmem.models.head_name`, the last
            Linear) is drawn with sigma_w = 1 whatever ``sigma_w`` is. The head is the one kernel that
            is not BatchNorm scale invariant, so its scale sets the size of the initial logits; with
            ``include_head=False`` that size is held fixed while the hidden kernels vary.
        generator: source of the standard normals (a CPU ``torch.Generator`` unless its device
            matches). None uses PyTorch's global generator.

    Determinism: the standard normals are drawn kernel by kernel in module order, one tensor per
    kernel, whatever ``sigma_w`` and ``include_head`` are. With generators seeded alike, the kernels
    at ``sigma_w = s1`` and ``s2`` satisfy ``W2 = W1 * s2 / s1`` up to float rounding (exactly when
    ``s2 / s1`` is a power of two).

    Raises:
        ValueError: ``sigma_w`` is not a finite number > 0.
        TypeError: ``model`` has parameters outside convolutions, linear layers and BatchNorms.
    """
    if isinstance(sigma_w, bool) or not isinstance(sigma_w, numbers.Real) or not (
        math.isfinite(sigma_w) and sigma_w > 0
    ):
        raise ValueError(f"sigma_w: must be a finite number > 0, got {sigma_w!r}")
    unsupported = [
        f"{name or '<root>'} ({type(module).__name__})"
        for name, module in model.named_modules()
        if not isinstance(module, _KERNEL_MODULES + _NORM_MODULES)
        and next(module.parameters(recurse=False), None) is not None
    ]
    if unsupported:
        raise TypeError(f"model: init_sigma_w_ cannot initialise the parameters of {', '.join(unsupported)}")

    head = head_name(model) if any(isinstance(m, nn.Linear) for m in model.modules()) else None
    for name, module in model.named_modules():
        if isinstance(module, _KERNEL_MODULES):
            weight = module.weight
            device = generator.device if generator is not None else weight.device
            z = torch.randn(weight.shape, generator=generator, dtype=weight.dtype, device=device)
            scale = 1.0 if (name == head and not include_head) else float(sigma_w)
            weight.copy_(z.mul_(scale / math.sqrt(fan_in(module))))
            if module.bias is not None:
                module.bias.zero_()
        elif isinstance(module, _NORM_MODULES):
            module.reset_parameters()
    logger.debug(
        "initialised %s at sigma_w=%g (head at %s)", type(model).__name__, sigma_w, "sigma_w" if include_head else "1"
    )
    return model


def seeded_model(config: RunConfig) -> nn.Module:
    """The model of a run: ``build_model(config)`` initialised by :func:`init_sigma_w_` with
    ``config.sigma_w``, ``include_head=config.init_head`` and a CPU generator seeded by ``config.seed``.

    The result depends only on those fields, and building it leaves PyTorch's global random state
    untouched (the constructors' default initialisation runs inside ``torch.random.fork_rng``).
    The model is on the CPU; move it to the device afterwards.
    """
    with torch.random.fork_rng(devices=[]):
        model = build_model(config)
    generator = torch.Generator().manual_seed(config.seed)
    return init_sigma_w_(model, config.sigma_w, include_head=config.init_head, generator=generator)
