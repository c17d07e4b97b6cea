"""The initialisation that the study sweeps: the one definition of sigma_w in this code base.

Every convolution and linear kernel is drawn as ``W ~ N(0, sigma_w^2 / fan_in)`` (``fan_in = in_channels / groups *
kh * kw`` for a convolution, ``in_features`` for a linear layer), with biases 0 and every BatchNorm at gamma = 1,
beta = 0 and reset running statistics; ``sigma_w = sqrt(2)`` is He initialisation. The standard normals are drawn in
a fixed order (module order, one draw per kernel, independent of sigma_w and of ``include_head``) and then scaled,
so at a fixed seed the kernels of different sigma_w are exact multiples of each other: a sweep over sigma_w compares
the same directions at different radii. The book's Setup chapter ("The initialization scale") says why that
isolates the initialization.

The rule applies to any ``nn.Module`` (:func:`init_sigma_w_`, :func:`sigma_w_kernels`): convolution and linear
kernels are rescaled, normalization layers set to their identity, every other parameter left as constructed
(biases of convolution/linear layers are 0); ``include=[...]`` / ``exclude=[...]`` add or remove named parameters.
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Iterable
from typing import TYPE_CHECKING

import torch
from torch import nn

from .kernels import KERNEL_MODULES, NORM_MODULES, head_name, sigma_w_kernels
from .models import build_model

if TYPE_CHECKING:
    from .config import RunConfig

__all__ = ["init_sigma_w_", "seeded_model"]

logger = logging.getLogger(__name__)


@torch.no_grad()
def init_sigma_w_(
    model: nn.Module,
    sigma_w: float,
    include_head: bool = True,
    generator: torch.Generator | None = None,
    *,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> nn.Module:
    """Initialise ``model`` in place at scale ``sigma_w`` and return it. Works on any ``nn.Module``.

    The one definition of sigma_w (:func:`sigma_w_kernels` says which parameters are kernels):

    * every kernel W (by default the weight of every convolution and ``nn.Linear``):
      N(0, sigma_w^2 / fan_in) with ``fan_in = W[0].numel()`` (see :func:`fan_in`);
      ``sigma_w = sqrt(2)`` is He (Kaiming normal, fan_in, ReLU) initialisation;
    * the bias of every convolution and linear layer: 0;
    * every normalization layer (BatchNorm, InstanceNorm, LayerNorm, GroupNorm, RMSNorm): its identity,
      weight (gamma) 1 and bias (beta) 0, running mean 0, running variance 1, batch counter 0;
    * every other parameter (embeddings, recurrent or attention weights, your own ``nn.Parameter``) is left as
      the model's constructor made it, and so are kernels named in ``exclude``; name a parameter in ``include``
      to have sigma_w set it too (for example an embedding table, ``include=["embed.weight"]``).

    Nothing but the kernels depends on sigma_w.

    Args:
        model: any network.
        sigma_w: the init scale, a finite number > 0.
        include_head: if False, the classifier head (:func:`initmem.run.kernels.head_name`, the last
            Linear) is drawn with sigma_w = 1 whatever ``sigma_w`` is. The head is the one kernel that
            is not BatchNorm scale invariant, so its scale sets the size of the initial logits; with
            ``include_head=False`` that size is held fixed while the hidden kernels vary.
        generator: source of the standard normals (a CPU ``torch.Generator`` unless its device
            matches). None uses PyTorch's global generator.
        include: names of further parameters (``model.named_parameters()`` names) that sigma_w sets.
        exclude: names of convolution/linear weights that sigma_w leaves alone.

    Determinism: the standard normals are drawn kernel by kernel in parameter order, one tensor per
    kernel, whatever ``sigma_w`` and ``include_head`` are. With generators seeded alike, the kernels
    at ``sigma_w = s1`` and ``s2`` satisfy ``W2 = W1 * s2 / s1`` up to float rounding (exactly when
    ``s2 / s1`` is a power of two).

    Raises:
        ValueError: ``sigma_w`` is not a finite number > 0, or ``include``/``exclude`` name no parameter
            (see :func:`sigma_w_kernels`).
    """
    if (
        isinstance(sigma_w, bool)
        or not isinstance(sigma_w, numbers.Real)
        or not (math.isfinite(sigma_w) and sigma_w > 0)
    ):
        raise ValueError(f"sigma_w: must be a finite number > 0, got {sigma_w!r}")
    kernels = sigma_w_kernels(model, include, exclude)
    head = head_name(model) if any(isinstance(m, nn.Linear) for m in model.modules()) else None
    head_weight = f"{head}.weight" if head else None
    for name, weight in kernels.items():
        device = generator.device if generator is not None else weight.device
        z = torch.randn(weight.shape, generator=generator, dtype=weight.dtype, device=device)
        scale = 1.0 if (name == head_weight and not include_head) else float(sigma_w)
        weight.copy_(z.mul_(scale / math.sqrt(weight[0].numel())))
    for module in model.modules():
        if isinstance(module, KERNEL_MODULES) and module.bias is not None:
            module.bias.zero_()
        elif isinstance(module, NORM_MODULES):
            module.reset_parameters()
    untouched = [n for n, _ in model.named_parameters() if n not in kernels and not _is_reset(model, n)]
    logger.debug(
        "initialised %s at sigma_w=%g (head at %s); left as constructed: %s",
        type(model).__name__,
        sigma_w,
        "sigma_w" if include_head else "1",
        ", ".join(untouched) or "nothing",
    )
    return model


def _is_reset(model: nn.Module, name: str) -> bool:
    """Whether parameter ``name`` is a conv/linear bias or belongs to a normalization layer (set, not drawn)."""
    owner = model.get_submodule(name.rpartition(".")[0])
    return isinstance(owner, NORM_MODULES) or (isinstance(owner, KERNEL_MODULES) and name.endswith("bias"))


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
