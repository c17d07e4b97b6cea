"""Floating-point operations of one image through the networks of :mod:`initmem.run.models`, counted by hand (no
torch import), so that a cost can be estimated for a network nobody has run.

A multiply-add counts as two FLOPs; only convolutions and the linear head are counted (batch-norm, ReLU, pooling
and the shortcuts are a few per cent and memory-bound). One *trained* image costs :data:`TRAIN_PASSES` forward
passes (forward, plus a backward pass that computes both the input and the weight gradients, each as costly as the
forward), one *evaluated* image one.
"""

from __future__ import annotations

__all__ = ["TRAIN_PASSES", "forward_flops", "train_flops"]

#: Forward passes' worth of FLOPs in one training step per image (forward + two backward products).
TRAIN_PASSES = 3


def _conv(c_in: int, c_out: int, side: int) -> int:
    """FLOPs of a 3x3 convolution with ``side`` x ``side`` outputs."""
    return 2 * 9 * c_in * c_out * side * side


def _halved(side: int) -> int:
    """Output side of a stride-2 3x3 convolution with padding 1: ceil(side / 2)."""
    return (side - 1) // 2 + 1


def forward_flops(model: str, width: int, image_size: int, num_classes: int = 10) -> int:
    """FLOPs of one forward pass of one ``image_size`` x ``image_size`` image through ``model`` at base ``width``.

    ``model``: ``"resnet9"`` (:class:`initmem.run.models.ResNet9`) or ``"resnet<6n+2>"``
    (:class:`initmem.run.models.CifarResNet`). Raises ValueError for another name.
    """
    w, s = width, image_size
    if model == "resnet9":
        # prep (w) at s; layer1 (2w) at s, pool, residual at s/2; layer2 (4w) at s/2, pool; layer3 (8w) at s/4,
        # pool, residual at s/8; head 8w -> classes
        s2, s4, s8 = s // 2, s // 4, s // 8
        convs = _conv(3, w, s) + _conv(w, 2 * w, s) + 2 * _conv(2 * w, 2 * w, s2)
        convs += _conv(2 * w, 4 * w, s2) + _conv(4 * w, 8 * w, s4) + 2 * _conv(8 * w, 8 * w, s8)
        return convs + 2 * 8 * w * num_classes
    depth = int(model.removeprefix("resnet")) if model.removeprefix("resnet").isdigit() else 0
    if not model.startswith("resnet") or depth < 8 or (depth - 2) % 6:
        raise ValueError(f"model: allowed values are resnet9 or resnet<6n+2> (resnet20, resnet56, ...); got {model!r}")
    n = (depth - 2) // 6
    total = _conv(3, w, s) + 2 * n * _conv(w, w, s)
    for c_in, c_out in ((w, 2 * w), (2 * w, 4 * w)):
        s = _halved(s)
        total += _conv(c_in, c_out, s) + (2 * n - 1) * _conv(c_out, c_out, s)
    return total + 2 * 4 * w * num_classes


def train_flops(model: str, width: int, image_size: int) -> int:
    """FLOPs of one trained image: :data:`TRAIN_PASSES` forward passes (:func:`forward_flops`)."""
    return TRAIN_PASSES * forward_flops(model, width, image_size)
