"""The networks of the study: a BatchNorm ResNet-9 and the CIFAR ResNets of He et al. (2016).

* :func:`resnet9` -- the DAWNBench ResNet-9 of David Page, the paper's main network; channels scale with ``width``
  (64 in the original); its head has no bias and its logits are multiplied by ``logit_scale`` (0.125).
* :func:`cifar_resnet` -- ResNet-20/32/44/56/110 (depth = 6n + 2), BasicBlocks and the option-A shortcuts of
  akamaster/pytorch_resnet_cifar10; its head has a bias and no output scale (``logit_scale`` 1).
* :func:`build_model` maps a :class:`~initmem.run.config.RunConfig` to one of them.

Shapes: inputs ``(N, 3, H, W)`` with H = W in {32, 24, 16, 8}; outputs logits ``(N, num_classes)``. The
constructors leave PyTorch's default initialisation in place: the one the study sweeps is
:func:`initmem.run.sigma_w.init_sigma_w_` (:func:`initmem.run.sigma_w.seeded_model` does both). Every convolution
is followed directly by a BatchNorm, so every kernel but the head (:func:`initmem.run.kernels.head_name`) is scale
invariant: the book's Setup chapter ("Networks") says what follows and gives each network's parameter count.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:
    from initmem.run.config import RunConfig

__all__ = [
    "CIFAR_RESNET_DEPTHS",
    "ResNet9",
    "Residual9",
    "CifarResNet",
    "BasicBlock",
    "ShortcutA",
    "resnet9",
    "cifar_resnet",
    "build_model",
]

logger = logging.getLogger(__name__)

#: Depths of the CIFAR ResNets that :func:`build_model` knows by name (``resnet20`` ...).
CIFAR_RESNET_DEPTHS = (20, 32, 44, 56, 110)


def _conv3x3(c_in: int, c_out: int, stride: int = 1) -> nn.Conv2d:
    """3x3 convolution, padding 1, no bias (a BatchNorm follows)."""
    return nn.Conv2d(c_in, c_out, kernel_size=3, stride=stride, padding=1, bias=False)


def _conv_bn_relu(c_in: int, c_out: int) -> list[tuple[str, nn.Module]]:
    """Named ``conv -> bn -> relu`` modules, to be placed in an ``nn.Sequential``."""
    return [("conv", _conv3x3(c_in, c_out)), ("bn", nn.BatchNorm2d(c_out)), ("relu", nn.ReLU(inplace=True))]


# --- ResNet-9 -------------------------------------------------------------------------------------
class Residual9(nn.Module):
    """ResNet-9 residual block: ``x + relu(bn2(conv2(relu(bn1(conv1(x))))))``.

    Shapes: ``(N, C, H, W) -> (N, C, H, W)``.
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = _conv3x3(channels, channels)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = _conv3x3(channels, channels)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        return x + out


class ResNet9(nn.Module):
    """BatchNorm ResNet-9 (Page's DAWNBench network) with base width ``w``.

    ======  =====================================================  ===========================
    stage   modules                                                output (input 32x32)
    ======  =====================================================  ===========================
    prep    conv(3 -> w) BN ReLU                                   (N, w, 32, 32)
    layer1  conv(w -> 2w) BN ReLU, maxpool 2, residual(2w)         (N, 2w, 16, 16)
    layer2  conv(2w -> 4w) BN ReLU, maxpool 2                      (N, 4w, 8, 8)
    layer3  conv(4w -> 8w) BN ReLU, maxpool 2, residual(8w)        (N, 8w, 4, 4)
    pool    adaptive max pool to 1x1, flatten                      (N, 8w)
    head    Linear(8w -> num_classes, no bias), times logit_scale  (N, num_classes)
    ======  =====================================================  ===========================

    Inputs of side 32, 24, 16 or 8 work (8 -> 4 -> 2 -> 1 through the three max pools).
    The kernel names (:func:`initmem.run.kernels.kernel_parameters`) are ``prep.conv``, ``layer1.conv``,
    ``layer1.res.conv1``, ``layer1.res.conv2``, ``layer2.conv``, ``layer3.conv``,
    ``layer3.res.conv1``, ``layer3.res.conv2`` and ``head``.
    """

    def __init__(self, width: int = 64, num_classes: int = 10, logit_scale: float = 0.125) -> None:
        super().__init__()
        w = width
        self.logit_scale = float(logit_scale)
        self.prep = nn.Sequential(OrderedDict(_conv_bn_relu(3, w)))
        self.layer1 = nn.Sequential(
            OrderedDict([*_conv_bn_relu(w, 2 * w), ("pool", nn.MaxPool2d(2)), ("res", Residual9(2 * w))])
        )
        self.layer2 = nn.Sequential(OrderedDict([*_conv_bn_relu(2 * w, 4 * w), ("pool", nn.MaxPool2d(2))]))
        self.layer3 = nn.Sequential(
            OrderedDict([*_conv_bn_relu(4 * w, 8 * w), ("pool", nn.MaxPool2d(2)), ("res", Residual9(8 * w))])
        )
        self.pool = nn.AdaptiveMaxPool2d(1)
        self.head = nn.Linear(8 * w, num_classes, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(N, 3, H, W) -> (N, num_classes)`` logits."""
        x = self.layer3(self.layer2(self.layer1(self.prep(x))))
        x = torch.flatten(self.pool(x), 1)
        return self.head(x) * self.logit_scale

    def extra_repr(self) -> str:
        return f"logit_scale={self.logit_scale}"


def resnet9(width: int = 64, num_classes: int = 10, logit_scale: float = 0.125) -> ResNet9:
    """The BatchNorm ResNet-9 of the DAWNBench / Myrtle family (see :class:`ResNet9`).

    Args:
        width: base channel count ``w``; the stages have w, 2w, 4w, 8w channels (64 in the original).
        num_classes: outputs of the head.
        logit_scale: fixed (not trained) factor applied to the head's output. Page uses 0.125: it
            shrinks the initial logits so the softmax starts near uniform. It is a constant of the
            architecture, independent of sigma_w.

    Parameter counts (10 classes): width 64: 6,573,120 (6.57 M: 6,563,520 conv, 5,120 head,
    4,480 BatchNorm); width 16: 412,944; width 8: 103,944.

    Returns:
        The model with PyTorch's default initialisation; apply :func:`initmem.run.sigma_w.init_sigma_w_`.
    """
    if width < 1:
        raise ValueError(f"width: must be a positive integer, got {width!r}")
    return ResNet9(width=width, num_classes=num_classes, logit_scale=logit_scale)


# --- CIFAR ResNets (He et al. 2016) ---------------------------------------------------------------
class ShortcutA(nn.Module):
    """Option-A shortcut: spatial subsampling by 2 and zero channel padding; no parameters.

    Shapes: ``(N, c_in, H, W) -> (N, c_out, ceil(H/2), ceil(W/2))``; the input channels sit in the
    middle, with ``(c_out - c_in) // 2`` zero channels before them and the rest after.
    """

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        if c_out < c_in:
            raise ValueError(f"c_out: must be >= c_in={c_in}, got {c_out!r}")
        self.c_in, self.c_out = c_in, c_out
        self.pad_before = (c_out - c_in) // 2
        self.pad_after = c_out - c_in - self.pad_before

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, self.pad_before, self.pad_after))

    def extra_repr(self) -> str:
        return f"{self.c_in} -> {self.c_out}, stride=2"


class BasicBlock(nn.Module):
    """``relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))``.

    The shortcut is the identity, or :class:`ShortcutA` when the block halves the resolution
    (``stride=2``) and changes the channel count. Shapes: ``(N, c_in, H, W) -> (N, c_out, H/s, W/s)``.
    """

    def __init__(self, c_in: int, c_out: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = _conv3x3(c_in, c_out, stride=stride)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = _conv3x3(c_out, c_out)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut: nn.Module = ShortcutA(c_in, c_out) if stride != 1 or c_in != c_out else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class CifarResNet(nn.Module):
    """He et al. (2016) CIFAR ResNet: conv-BN-ReLU stem, three stages of ``n`` BasicBlocks with
    w, 2w, 4w channels (the 2nd and 3rd start with stride 2), global average pool, Linear head with bias.

    Shapes (input 32x32): stem (N, w, 32, 32) -> layer1 (N, w, 32, 32) -> layer2 (N, 2w, 16, 16)
    -> layer3 (N, 4w, 8, 8) -> pool (N, 4w) -> head (N, num_classes), times ``logit_scale`` (1 in the original).
    Kernel names: ``conv1``, ``layer{1,2,3}.{i}.conv{1,2}``, ``head``.
    """

    def __init__(self, depth: int, width: int = 16, num_classes: int = 10, logit_scale: float = 1.0) -> None:
        super().__init__()
        n = (depth - 2) // 6
        self.depth = depth
        self.logit_scale = float(logit_scale)
        self.conv1 = _conv3x3(3, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.layer1 = self._stage(width, width, n, stride=1)
        self.layer2 = self._stage(width, 2 * width, n, stride=2)
        self.layer3 = self._stage(2 * width, 4 * width, n, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(4 * width, num_classes)

    @staticmethod
    def _stage(c_in: int, c_out: int, blocks: int, stride: int) -> nn.Sequential:
        layers = [BasicBlock(c_in, c_out, stride)] + [BasicBlock(c_out, c_out) for _ in range(blocks - 1)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(N, 3, H, W) -> (N, num_classes)`` logits."""
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.head(torch.flatten(self.pool(x), 1)) * self.logit_scale

    def extra_repr(self) -> str:
        return f"depth={self.depth}, logit_scale={self.logit_scale}"


def cifar_resnet(depth: int, width: int = 16, num_classes: int = 10, logit_scale: float = 1.0) -> CifarResNet:
    """ResNet-``depth`` for CIFAR (He et al. 2016, section 4.2), option-A shortcuts.

    ``depth`` counts the weighted layers (convs + head) and must be 6n + 2 (20, 32, 44, 56, 110, ...).

    Parameter counts at width 16, 10 classes (as in akamaster/pytorch_resnet_cifar10):
    ResNet-20: 269,722 (0.27 M); ResNet-32: 464,154; ResNet-44: 658,586;
    ResNet-56: 853,018 (0.85 M); ResNet-110: 1,727,962 (1.7 M).

    ``logit_scale`` is a fixed factor on the head's output (1, i.e. none, in the original).

    Returns:
        The model with PyTorch's default initialisation; apply :func:`initmem.run.sigma_w.init_sigma_w_`.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 8 or (depth - 2) % 6 != 0:
        raise ValueError(f"depth: must be 6n + 2 with n >= 1 (20, 32, 44, 56, 110), got {depth!r}")
    if width < 1:
        raise ValueError(f"width: must be a positive integer, got {width!r}")
    return CifarResNet(depth=depth, width=width, num_classes=num_classes, logit_scale=logit_scale)


# --- dispatch -------------------------------------------------------------------------
def build_model(config: RunConfig) -> nn.Module:
    """The network named by ``config.model`` at ``config.effective_width`` and ``config.effective_logit_scale``,
    10 classes.

    ``resnet9`` -> :func:`resnet9`; ``resnet20`` ... ``resnet110`` -> :func:`cifar_resnet`. The model
    keeps PyTorch's default initialisation (use :func:`initmem.run.sigma_w.seeded_model` for a run's model).
    """
    name, width = config.model, config.effective_width
    depths = {f"resnet{d}": d for d in CIFAR_RESNET_DEPTHS}
    if name == "resnet9":
        model: nn.Module = resnet9(width=width, num_classes=10, logit_scale=config.effective_logit_scale)
    elif name in depths:
        model = cifar_resnet(depths[name], width=width, num_classes=10, logit_scale=config.effective_logit_scale)
    else:
        raise ValueError(f"model: allowed values are {', '.join(['resnet9', *depths])}; got {name!r}")
    logger.debug("built %s (width %d, %d parameters)", name, width, sum(p.numel() for p in model.parameters()))
    return model
