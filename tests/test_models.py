"""Architectures: parameter counts, output shapes, kernel naming, shortcuts, scale invariance."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from initmem.run.config import RunConfig
from initmem.run.kernels import head_name, is_head, kernel_parameters
from initmem.run.models import CIFAR_RESNET_DEPTHS, ShortcutA, build_model, cifar_resnet, resnet9

RESNET9_PARAMS = {8: 103_944, 16: 412_944, 64: 6_573_120}
CIFAR_PARAMS = {20: 269_722, 32: 464_154, 44: 658_586, 56: 853_018, 110: 1_727_962}
RESNET9_KERNELS = [
    "prep.conv",
    "layer1.conv",
    "layer1.res.conv1",
    "layer1.res.conv2",
    "layer2.conv",
    "layer3.conv",
    "layer3.res.conv1",
    "layer3.res.conv2",
    "head",
]


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("width", sorted(RESNET9_PARAMS))
def test_resnet9_parameter_count(width):
    assert n_params(resnet9(width)) == RESNET9_PARAMS[width]


def test_resnet9_width64_breakdown():
    model = resnet9(64)
    kernels = kernel_parameters(model)
    assert sum(k.numel() for name, k in kernels.items() if name != "head") == 6_563_520
    assert kernels["head"].numel() == 5_120
    assert sum(m.weight.numel() + m.bias.numel() for m in model.modules() if isinstance(m, nn.BatchNorm2d)) == 4_480


@pytest.mark.parametrize("depth", CIFAR_RESNET_DEPTHS)
def test_cifar_resnet_parameter_count_and_depth(depth):
    model = cifar_resnet(depth)
    assert n_params(model) == CIFAR_PARAMS[depth]
    assert len(kernel_parameters(model)) == depth  # depth counts convs + head


@pytest.mark.parametrize("width", [8, 16, 64])
@pytest.mark.parametrize("size", [32, 24, 16, 8])
@torch.no_grad()
def test_resnet9_output_shape(width, size):
    model = resnet9(width)
    assert model(torch.randn(2, 3, size, size)).shape == (2, 10)


@pytest.mark.parametrize("depth", CIFAR_RESNET_DEPTHS)
@pytest.mark.parametrize("size", [32, 24, 16, 8])
@torch.no_grad()
def test_cifar_resnet_output_shape(depth, size):
    model = cifar_resnet(depth, width=4)  # shapes do not depend on the width; counts are checked at 16
    assert model(torch.randn(2, 3, size, size)).shape == (2, 10)


def test_num_classes_and_width_scale_channels():
    model = resnet9(width=8, num_classes=7)
    assert model(torch.randn(2, 3, 16, 16)).shape == (2, 7)
    assert kernel_parameters(model)["layer3.res.conv2"].shape == (64, 64, 3, 3)
    assert kernel_parameters(cifar_resnet(20, width=4))["layer3.2.conv2"].shape == (16, 16, 3, 3)


def test_resnet9_logit_scale():
    torch.manual_seed(0)
    x = torch.randn(4, 3, 16, 16)
    scaled, plain = resnet9(8), resnet9(8, logit_scale=1.0)
    plain.load_state_dict(scaled.state_dict())
    assert scaled.logit_scale == 0.125
    torch.testing.assert_close(scaled(x), plain(x) * 0.125)


def test_resnet9_head_has_no_bias_cifar_head_has_bias():
    assert resnet9(8).head.bias is None
    assert cifar_resnet(20).head.bias is not None


@pytest.mark.parametrize("depth", [0, 21, 8.0, True])
def test_bad_depth_raises(depth):
    with pytest.raises(ValueError, match="depth"):
        cifar_resnet(depth)


def test_kernel_names_and_head():
    model = resnet9(8)
    kernels = kernel_parameters(model)
    assert list(kernels) == RESNET9_KERNELS
    assert kernels["head"] is model.head.weight  # the parameters themselves, not copies
    cifar = cifar_resnet(20)
    names = list(kernel_parameters(cifar))
    assert names[:3] == ["conv1", "layer1.0.conv1", "layer1.0.conv2"] and names[-1] == "head"
    for m in (model, cifar):
        assert head_name(m) == "head"
        assert is_head(m, "head") and is_head(m, "head.weight")
        assert not is_head(m, "layer1.conv") and not is_head(m, "headless.weight")
    assert is_head(cifar, "head.bias")
    with pytest.raises(ValueError, match="head"):
        head_name(nn.Sequential(nn.Conv2d(3, 4, 3)))


def test_option_a_shortcut():
    shortcut = ShortcutA(4, 8)
    assert list(shortcut.parameters()) == [] and list(shortcut.buffers()) == []
    x = torch.randn(2, 4, 6, 6)
    out = shortcut(x)
    assert out.shape == (2, 8, 3, 3)
    torch.testing.assert_close(out[:, 2:6], x[:, :, ::2, ::2])
    assert out[:, :2].abs().sum() == 0 and out[:, 6:].abs().sum() == 0
    # every down-sampling block of a CIFAR ResNet uses it, and no block has a parametrised shortcut
    model = cifar_resnet(20)
    shortcuts = [m for m in model.modules() if isinstance(m, ShortcutA)]
    assert len(shortcuts) == 2
    blocks = [block for stage in (model.layer1, model.layer2, model.layer3) for block in stage]
    assert all(not list(block.shortcut.parameters()) for block in blocks)


@pytest.mark.parametrize(
    "factory", [lambda: resnet9(8), lambda: cifar_resnet(20, width=4)], ids=["resnet9", "resnet20"]
)
def test_hidden_kernels_are_batchnorm_scale_invariant(factory):
    """Scaling any non-head kernel leaves the train-mode output unchanged; scaling the head does not.

    BatchNorm's eps is made negligible (1e-30, in float64) so that the invariance holds to rounding.
    """
    torch.manual_seed(0)
    model = factory().double()
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eps = 1e-30
    x = torch.randn(8, 3, 16, 16, dtype=torch.float64)
    reference = model(x)
    with torch.no_grad():
        for name, kernel in kernel_parameters(model).items():
            if name != "head":
                kernel.mul_(7.0)
        torch.testing.assert_close(model(x), reference, rtol=1e-9, atol=1e-9)
        model.head.weight.mul_(7.0)
        assert not torch.allclose(model(x), reference, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize(
    "name, width, params",
    [("resnet9", None, RESNET9_PARAMS[64]), ("resnet9", 16, RESNET9_PARAMS[16]), ("resnet56", None, CIFAR_PARAMS[56])],
)
def test_build_model(name, width, params):
    model = build_model(RunConfig(model=name, width=width))
    assert n_params(model) == params
    assert model.head.out_features == 10


def test_build_model_logit_scale():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 16, 16)
    assert build_model(RunConfig(model="resnet9", width=4)).logit_scale == 0.125
    assert build_model(RunConfig(model="resnet9", width=4, logit_scale=1.0)).logit_scale == 1.0
    plain = build_model(RunConfig(model="resnet20", width=4))
    halved = build_model(RunConfig(model="resnet20", width=4, logit_scale=0.5))
    halved.load_state_dict(plain.state_dict())
    plain.eval(), halved.eval()
    assert plain.logit_scale == 1.0
    torch.testing.assert_close(halved(x), plain(x) * 0.5)


def test_build_model_unknown_name():
    class Fake:
        model, effective_width = "resnet18", 16

    with pytest.raises(ValueError, match="model: allowed values are resnet9, resnet20"):
        build_model(Fake())


def test_the_parameter_table_in_the_setup_chapter_is_true():
    """Every row of the table "Parameter counts" in the book's Setup chapter is the real count of that network."""
    import re
    from pathlib import Path

    setup = (Path(__file__).resolve().parents[1] / "book" / "setup.md").read_text()
    rows = re.findall(r"^\| (ResNet-\d+) \| (\d+) \| ([\d,]+) \|", setup, re.MULTILINE)
    assert len(rows) >= 8
    for name, width, count in rows:
        depth = int(name.split("-")[1])
        model = resnet9(width=int(width)) if depth == 9 else cifar_resnet(depth, width=int(width))
        assert n_params(model) == int(count.replace(",", "")), (name, width)
