"""Which parameters are kernels and which is the head: the taxonomy that sigma_w, the norms and the optimizers use.

* A *kernel* is the ``weight`` of a convolution (any ``_ConvNd``) or an ``nn.Linear``
  (:data:`KERNEL_MODULES`). :func:`kernel_parameters` lists them by module path (``"layer1.conv"``, ``"head"``;
  the ``layer`` coordinate of a run's Dataset); :func:`sigma_w_kernels` lists what sigma_w sets by parameter name
  (``"layer1.conv.weight"``), with ``include``/``exclude`` for your own models.
* The *head* is the last ``nn.Linear`` in module order (:func:`head_name`): the one kernel that no BatchNorm
  follows, so the only one that is not scale invariant.
* *Normalization layers* (:data:`NORM_MODULES`) are set to their identity by the initialisation, never rescaled.

Parameter counts of the built-in networks are in :mod:`initmem.run.models`.
"""

from __future__ import annotations

from collections.abc import Iterable

from torch import nn

__all__ = ["KERNEL_MODULES", "NORM_MODULES", "kernel_parameters", "sigma_w_kernels", "fan_in", "head_name", "is_head"]

#: Modules whose ``weight`` is a kernel.
KERNEL_MODULES = (nn.modules.conv._ConvNd, nn.Linear)
#: Normalization layers: set to their identity (gain 1, shift 0, fresh running statistics), never rescaled.
NORM_MODULES = (
    nn.modules.batchnorm._BatchNorm,
    nn.modules.instancenorm._InstanceNorm,
    nn.LayerNorm,
    nn.GroupNorm,
    *((nn.RMSNorm,) if hasattr(nn, "RMSNorm") else ()),
)


def fan_in(module: nn.Module) -> int:
    """Inputs feeding one output unit: ``in_channels / groups * kh * kw`` for a convolution,
    ``in_features`` for a linear layer (the number of entries of one row of the kernel)."""
    if not isinstance(module, KERNEL_MODULES):
        raise TypeError(f"module: expected a convolution or Linear, got {type(module).__name__}")
    return module.weight[0].numel()


def sigma_w_kernels(
    model: nn.Module,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> dict[str, nn.Parameter]:
    """The parameters that sigma_w sets, keyed by their ``named_parameters`` name, in module order.

    The rule: the ``weight`` of every convolution and ``nn.Linear`` (its fan-in is the size of one output
    unit's slice, ``weight[0].numel()``), minus the names in ``exclude``, plus the names in ``include``
    (any parameter with at least 2 dimensions, e.g. an ``nn.Embedding`` table, fan-in ``weight[0].numel()``,
    the embedding dimension). Names are full parameter names such as ``"0.weight"`` or ``"encoder.embed.weight"``.

    Raises:
        ValueError: a name in ``include``/``exclude`` is not a parameter of ``model``, appears in both, or an
            included parameter has fewer than 2 dimensions.
    """
    params = dict(model.named_parameters())
    include, exclude = list(include), list(exclude)
    for option, names in (("include", include), ("exclude", exclude)):
        unknown = [n for n in names if n not in params]
        if unknown:
            raise ValueError(
                f"{option}: {unknown[0]!r} is not a parameter of the model; parameters: {', '.join(params)}"
            )
    both = sorted(set(include) & set(exclude))
    if both:
        raise ValueError(f"include: {both[0]!r} is also in exclude; name each parameter in one of them")
    flat = [n for n in include if params[n].ndim < 2]
    if flat:
        raise ValueError(f"include: {flat[0]!r} has shape {tuple(params[flat[0]].shape)}; a kernel has >= 2 dims")
    chosen = {
        f"{name}.weight" if name else "weight" for name, m in model.named_modules() if isinstance(m, KERNEL_MODULES)
    }
    chosen = (chosen | set(include)) - set(exclude)
    return {name: p for name, p in params.items() if name in chosen}


def kernel_parameters(
    model: nn.Module, include: Iterable[str] = (), exclude: Iterable[str] = ()
) -> dict[str, nn.Parameter]:
    """The kernels whose norms a run records: the ``weight`` of every ``Conv2d`` (any ``_ConvNd``) and ``Linear``, in
    module order, keyed by module path (``"layer1.conv"``, ``"layer2.0.conv1"``, ``"head"``; the ``layer``
    coordinate of a run); values are the parameters themselves (shapes ``(c_out, c_in/groups, kh, kw)`` or
    ``(out, in)``), not copies.

    ``include``/``exclude`` (parameter names, as for :func:`sigma_w_kernels`) make it the parameters that sigma_w
    sets on your own model: the named weights are left out, and the included parameters follow, keyed by their
    parameter name (``"embed.weight"``).
    """
    excluded = set(exclude)
    kernels = {
        name: module.weight
        for name, module in model.named_modules()
        if isinstance(module, KERNEL_MODULES) and (f"{name}.weight" if name else "weight") not in excluded
    }
    included = set(include)
    if included:
        kernels.update({name: p for name, p in sigma_w_kernels(model, include, exclude).items() if name in included})
    return kernels


def head_name(model: nn.Module) -> str:
    """Module path of the classifier head: the last ``Linear`` in module order (``"head"`` here)."""
    names = [name for name, module in model.named_modules() if isinstance(module, nn.Linear)]
    if not names:
        raise ValueError(f"model: {type(model).__name__} has no Linear layer, so no classifier head")
    return names[-1]


def is_head(model: nn.Module, name: str) -> bool:
    """Whether ``name`` -- a module path (``"head"``) or a parameter name (``"head.weight"``,
    ``"head.bias"``) -- belongs to the classifier head of ``model``."""
    head = head_name(model)
    return name == head or name.rsplit(".", 1)[0] == head
