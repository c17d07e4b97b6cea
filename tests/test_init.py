"""init_sigma_w_: the distribution, the exact-multiple property, BatchNorm/bias resets, the head, seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from initmem.run.config import RunConfig
from initmem.run.kernels import fan_in, kernel_parameters
from initmem.run.models import cifar_resnet, resnet9
from initmem.run.sigma_w import init_sigma_w_, seeded_model


def init(model: nn.Module, sigma_w: float, seed: int = 0, **kwargs) -> nn.Module:
    return init_sigma_w_(model, sigma_w, generator=torch.Generator().manual_seed(seed), **kwargs)


def kernels(model: nn.Module) -> dict[str, torch.Tensor]:
    return {name: k.detach().clone() for name, k in kernel_parameters(model).items()}


@pytest.fixture(scope="module")
def wide_resnet9() -> nn.Module:
    return resnet9(64)


def test_fan_in():
    assert fan_in(nn.Conv2d(64, 256, (5, 3), groups=4)) == 16 * 5 * 3
    assert fan_in(nn.Linear(33, 7)) == 33
    with pytest.raises(TypeError, match="module"):
        fan_in(nn.BatchNorm2d(4))


@pytest.mark.parametrize("sigma_w", [0.3, 2.5])
def test_per_layer_std_matches_sigma_over_sqrt_fan_in(wide_resnet9, sigma_w):
    """Every layer with >= 50k weights: empirical std within 3 % of sigma_w / sqrt(fan_in), mean ~ 0."""
    model = init(wide_resnet9, sigma_w)
    modules = dict(model.named_modules())
    checked = 0
    for name, k in kernel_parameters(model).items():
        if k.numel() < 50_000:
            continue
        expected = sigma_w / math.sqrt(fan_in(modules[name]))
        assert k.std().item() == pytest.approx(expected, rel=0.03), name
        assert abs(k.mean().item()) < 0.03 * expected, name
        checked += 1
    assert checked == 7  # all hidden convs except prep.conv (1,728 weights); head has 5,120


def test_grouped_rectangular_conv_and_linear_std():
    model = nn.Sequential(nn.Conv2d(64, 256, (5, 3), groups=4, bias=True), nn.Flatten(), nn.Linear(300, 200))
    init(model, 1.7)
    conv, linear = model[0], model[2]
    assert conv.weight.std().item() == pytest.approx(1.7 / math.sqrt(16 * 15), rel=0.03)
    assert linear.weight.std().item() == pytest.approx(1.7 / math.sqrt(300), rel=0.03)
    assert conv.bias.abs().sum() == 0 and linear.bias.abs().sum() == 0


def test_sqrt2_is_he_initialisation():
    """sigma_w = sqrt(2) draws the same kernels as kaiming_normal_(fan_in, relu) from the same stream."""
    conv = nn.Conv2d(16, 32, 3, bias=False)
    init(conv, math.sqrt(2.0), seed=3)
    he = torch.empty_like(conv.weight)
    nn.init.kaiming_normal_(he, mode="fan_in", nonlinearity="relu", generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(conv.weight.detach(), he, rtol=1e-6, atol=0.0)


def test_same_seed_kernels_are_exact_multiples():
    s1, s2 = 0.3, 1.7
    k1 = kernels(init(resnet9(16), s1))
    k2 = kernels(init(resnet9(16), s2))
    for name in k1:
        torch.testing.assert_close(k2[name], k1[name] * (s2 / s1), rtol=1e-6, atol=0.0)
        torch.testing.assert_close(k1[name] / s1, k2[name] / s2, rtol=1e-6, atol=0.0)
    # a power-of-two ratio is exact in floating point: bit-identical multiples
    k_half, k_two = kernels(init(resnet9(16), 0.5)), kernels(init(resnet9(16), 2.0))
    assert all(torch.equal(k_two[name], k_half[name] * 4) for name in k1)


def test_batchnorm_and_biases_reset():
    model = cifar_resnet(20, width=4)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.weight.fill_(3.0)
                module.bias.fill_(-2.0)
                module.running_mean.fill_(5.0)
                module.running_var.fill_(9.0)
                module.num_batches_tracked.fill_(11)
        model.head.bias.fill_(1.0)
    init(model, 0.7)
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    assert len(norms) == 19
    for bn in norms:
        assert torch.all(bn.weight == 1) and torch.all(bn.bias == 0)
        assert torch.all(bn.running_mean == 0) and torch.all(bn.running_var == 1)
        assert bn.num_batches_tracked.item() == 0
    assert torch.all(model.head.bias == 0)


def test_include_head_false_keeps_head_at_sigma_one():
    hidden_only = kernels(init(resnet9(16), 2.0, include_head=False))
    everything = kernels(init(resnet9(16), 2.0))
    at_one = kernels(init(resnet9(16), 1.0))
    assert torch.equal(hidden_only["head"], at_one["head"])
    assert not torch.equal(hidden_only["head"], everything["head"])
    assert all(torch.equal(hidden_only[name], everything[name]) for name in everything if name != "head")


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, float("nan"), float("inf"), "1.0", None, True])
def test_bad_sigma_w_raises_naming_it(bad):
    with pytest.raises(ValueError, match="sigma_w"):
        init_sigma_w_(resnet9(8), bad)


def test_numpy_sigma_w_accepted():
    a = kernels(init(resnet9(8), np.float64(0.5)))
    b = kernels(init(resnet9(8), 0.5))
    assert all(torch.equal(a[name], b[name]) for name in a)


class _Tagger(nn.Module):
    """A toy sequence model: an embedding, a LayerNorm, a GroupNorm, a free parameter and a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 6)
        self.norm = nn.LayerNorm(6)
        self.group = nn.GroupNorm(2, 6)
        self.gate = nn.Parameter(torch.full((6,), 0.3))
        self.head = nn.Linear(6, 3)


def test_other_layers_are_left_alone_by_default():
    model = _Tagger()
    with torch.no_grad():
        model.norm.weight.fill_(4.0)
        model.group.bias.fill_(2.0)
    embed = model.embed.weight.detach().clone()
    init(model, 2.0)
    assert torch.equal(model.embed.weight, embed)  # not a kernel: as constructed
    assert torch.equal(model.gate, torch.full((6,), 0.3))
    assert torch.all(model.norm.weight == 1) and torch.all(model.group.bias == 0)  # normalization: identity
    assert model.head.weight.std().item() == pytest.approx(2.0 / math.sqrt(6), rel=0.5)
    assert torch.all(model.head.bias == 0)


def test_include_and_exclude_named_parameters():
    model = init(_Tagger(), 0.5, include=["embed.weight"], exclude=["head.weight"])
    reference = init(_Tagger(), 0.5, include=["embed.weight"])
    draws = torch.randn(20, 6, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(model.embed.weight, draws * 0.5 / math.sqrt(6))
    assert torch.equal(model.embed.weight, reference.embed.weight)
    assert not torch.equal(model.head.weight, reference.head.weight)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"include": ["nope.weight"]}, "include: 'nope.weight' is not a parameter"),
        ({"exclude": ["head"]}, "exclude: 'head' is not a parameter"),
        ({"include": ["gate"]}, "include: 'gate' has shape"),
        ({"include": ["head.weight"], "exclude": ["head.weight"]}, "also in exclude"),
    ],
)
def test_include_exclude_errors_name_the_option(kwargs, message):
    with pytest.raises(ValueError, match=message):
        init_sigma_w_(_Tagger(), 1.0, **kwargs)


def test_seeds():
    a, b = init(resnet9(8), 1.0, seed=1), init(resnet9(8), 1.0, seed=1)
    c = init(resnet9(8), 1.0, seed=2)
    for (name, x), y, _ in zip(a.state_dict().items(), b.state_dict().values(), c.state_dict().values()):
        assert torch.equal(x, y), name
    assert all(not torch.equal(a_k, c_k) for a_k, c_k in zip(kernels(a).values(), kernels(c).values()))


def test_global_generator_when_none():
    torch.manual_seed(4)
    a = kernels(init_sigma_w_(resnet9(8), 1.0))
    torch.manual_seed(4)
    b = kernels(init_sigma_w_(resnet9(8), 1.0))
    assert all(torch.equal(a[name], b[name]) for name in a)


def test_seeded_model():
    config = RunConfig(model="resnet20", width=4, sigma_w=0.8, init_head=False, seed=5)
    state = torch.random.get_rng_state()
    model = seeded_model(config)
    assert torch.equal(torch.random.get_rng_state(), state)  # the global RNG is untouched
    expected = init(cifar_resnet(20, width=4), 0.8, seed=5, include_head=False)
    for (name, x), y in zip(model.state_dict().items(), expected.state_dict().values()):
        assert torch.equal(x, y), name
    other = kernels(seeded_model(config.replace(seed=6)))
    assert not torch.equal(other["conv1"], kernels(model)["conv1"])
