"""Tests of initmem.run.optim: optimizer variants, weight decay, Muon (vs torch.optim.Muon), schedules."""

from __future__ import annotations

import copy
import io
import math

import pytest
import torch
from torch import nn

from initmem.run import optimizers
from initmem.run.config import ConfigError, RunConfig
from initmem.run.optim.build import SGDW, build_optimizer, builder, split_muon_params
from initmem.run.optim.muon import Muon, MuonWithAuxAdam, zeropower_via_newtonschulz5
from initmem.run.optim.schedules import apply_lr_multiplier, lr_multiplier
from initmem.run.optimizers import names as optimizer_names

#: Every registered optimizer (initmem.run.optimizers): each one is built, stepped, decayed and round-tripped below.
OPTIMIZER_NAMES = optimizer_names()


class TinyNet(nn.Module):
    """Conv-BN-ReLU x2, a hidden linear layer and a linear head: every kind of parameter once."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=True)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 16)
        self.head = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = x.mean(dim=(2, 3))
        return self.head(torch.relu(self.fc(x)))


def make_net(seed: int = 0, dtype: torch.dtype = torch.float32) -> TinyNet:
    torch.manual_seed(seed)
    return TinyNet().to(dtype)


def batch(seed: int, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1000 + seed)
    return torch.randn(8, 3, 8, 8, generator=g, dtype=dtype), torch.randint(0, 10, (8,), generator=g)


def compute_grads(model: nn.Module, seed: int) -> None:
    model.zero_grad(set_to_none=True)
    x, y = batch(seed, next(model.parameters()).dtype)
    nn.functional.cross_entropy(model(x), y).backward()


def config(name: str, **changes) -> RunConfig:
    return RunConfig(optimizer=name, **changes)


def max_diff(a: nn.Module, b: nn.Module) -> float:
    return max((p - q).abs().max().item() for p, q in zip(a.parameters(), b.parameters()))


# --- every optimizer builds and steps --------------------------------------------------------
@pytest.mark.parametrize("name", OPTIMIZER_NAMES)
def test_each_optimizer_builds_and_steps(name):
    model = make_net()
    before = copy.deepcopy(model)
    optimizer = build_optimizer(model, config(name, lr=0.01, weight_decay=1e-3))
    compute_grads(model, 0)
    optimizer.step()
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert max_diff(model, before) > 0
    assert all(g["initial_lr"] == g["lr"] for g in optimizer.param_groups)


def test_optimizer_types_follow_decay_mode():
    model = make_net()
    assert type(build_optimizer(model, config("sgd"))) is torch.optim.SGD
    assert type(build_optimizer(model, config("sgd_momentum", decay_mode="decoupled"))) is SGDW
    assert type(build_optimizer(model, config("adamw"))) is torch.optim.AdamW
    assert type(build_optimizer(model, config("muon"))) is MuonWithAuxAdam
    adam = build_optimizer(model, config("adam", decay_mode="decoupled"))
    assert type(adam) is torch.optim.Adam and adam.param_groups[0]["decoupled_weight_decay"]


def test_bad_optimizer_name_raises_clear_error():
    cfg = config("sgd")
    object.__setattr__(cfg, "optimizer", "no_such_optimizer")  # bypass RunConfig's own validation
    allowed = rf"optimizer: allowed values are {', '.join(OPTIMIZER_NAMES)}; got 'no_such_optimizer'"
    with pytest.raises(ConfigError, match=allowed):
        build_optimizer(make_net(), cfg)


# --- weight decay -----------------------------------------------------------------------------
#: The optimizers whose records allow each decay mode: a record that allows only one is tested only in it.
COUPLED = [r.name for r in optimizers.records() if "l2" in r.decay_modes]
DECOUPLED = [r.name for r in optimizers.records() if "decoupled" in r.decay_modes]


@pytest.mark.parametrize("name", COUPLED)
def test_coupled_l2_equals_hand_modified_gradient(name):
    lam, lr = 0.05, 0.02
    model, reference = make_net(), make_net()
    opt = build_optimizer(model, config(name, lr=lr, weight_decay=lam, decay_mode="l2"))
    ref_opt = build_optimizer(reference, config(name, lr=lr, weight_decay=0.0, decay_mode="l2"))
    for step in range(4):
        compute_grads(model, step)
        compute_grads(reference, step)
        with torch.no_grad():
            for p in reference.parameters():
                p.grad.add_(p, alpha=lam)
        opt.step()
        ref_opt.step()
    assert max_diff(model, reference) <= 1e-7


@pytest.mark.parametrize("name", DECOUPLED)
def test_decoupled_decay_shrinks_by_one_minus_lr_lambda(name):
    lam = 0.3
    model = make_net()
    optimizer = build_optimizer(model, config(name, lr=0.05, weight_decay=lam, decay_mode="decoupled"))
    expected = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            expected[p] = p.detach().clone() * (1 - group["lr"] * lam)
            p.grad = torch.zeros_like(p)
    optimizer.step()
    for p, want in expected.items():
        torch.testing.assert_close(p.detach(), want, rtol=0, atol=1e-7)


@pytest.mark.parametrize("nesterov", [False, True])
def test_decoupled_sgd_momentum_is_shrink_then_plain_step(nesterov):
    lam, lr = 0.1, 0.05
    model, reference = make_net(), make_net()
    opt = build_optimizer(
        model, config("sgd_momentum", lr=lr, weight_decay=lam, decay_mode="decoupled", nesterov=nesterov)
    )
    ref_opt = torch.optim.SGD(reference.parameters(), lr=lr, momentum=0.9, nesterov=nesterov)
    for step in range(4):
        compute_grads(model, step)
        compute_grads(reference, step)
        with torch.no_grad():
            for p in reference.parameters():
                p.mul_(1 - lr * lam)
        opt.step()
        ref_opt.step()
    assert max_diff(model, reference) <= 1e-7
    coupled = make_net()
    coupled_opt = build_optimizer(
        coupled, config("sgd_momentum", lr=lr, weight_decay=lam, decay_mode="l2", nesterov=nesterov)
    )
    for step in range(4):
        compute_grads(coupled, step)
        coupled_opt.step()
    assert max_diff(model, coupled) > 1e-5  # with momentum, decoupled != coupled


def test_adamw_and_decoupled_adam_equal_torch_adamw():
    settings = dict(lr=3e-3, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
    model, adam_model, reference = make_net(), make_net(), make_net()
    opt = build_optimizer(model, config("adamw", **settings))
    adam_opt = build_optimizer(adam_model, config("adam", decay_mode="decoupled", **settings))
    ref_opt = torch.optim.AdamW(reference.parameters(), **settings)
    for step in range(5):
        for m, o in ((model, opt), (adam_model, adam_opt), (reference, ref_opt)):
            compute_grads(m, step)
            o.step()
    assert max_diff(model, reference) <= 1e-7
    assert max_diff(adam_model, reference) <= 1e-7


def test_aux_adam_group_equals_torch_adamw():
    model, reference = make_net(dtype=torch.float64), make_net(dtype=torch.float64)
    settings = dict(lr=1e-2, betas=(0.8, 0.95), eps=1e-8, weight_decay=0.2)
    opt = MuonWithAuxAdam([dict(params=list(model.parameters()), use_muon=False, **settings)])
    ref_opt = torch.optim.AdamW(reference.parameters(), **settings)
    for step in range(10):
        compute_grads(model, step)
        compute_grads(reference, step)
        opt.step()
        ref_opt.step()
    assert max_diff(model, reference) <= 1e-12


# --- Muon -------------------------------------------------------------------------------------
@pytest.mark.parametrize("adjust_lr", ["original", "match_rms_adamw"])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_muon_matches_torch_muon(adjust_lr, weight_decay):
    """bfloat16 Newton-Schulz is torch.optim.Muon's numerics; 10 steps on square, wide and tall weights."""
    gen = torch.Generator().manual_seed(0)
    shapes = [(32, 32), (16, 48), (48, 16)]
    ours = [nn.Parameter(torch.randn(s, generator=gen) / math.sqrt(s[1])) for s in shapes]
    theirs = [nn.Parameter(p.detach().clone()) for p in ours]
    settings = dict(lr=0.02, weight_decay=weight_decay, momentum=0.95, nesterov=True)
    opt = Muon(ours, adjust_lr=adjust_lr, ns_dtype="bfloat16", **settings)
    ref = torch.optim.Muon(theirs, adjust_lr_fn=adjust_lr, **settings)
    for _ in range(10):
        for a, b in zip(ours, theirs):
            a.grad = torch.randn(a.shape, generator=gen)
            b.grad = a.grad.clone()
        opt.step()
        ref.step()
    for a, b in zip(ours, theirs):
        assert (a - b).abs().max().item() <= 1e-5


def test_float32_newton_schulz_is_accurate():
    """The default float32 NS5 agrees with a float64 evaluation (the bfloat16 path is torch's)."""
    G = torch.randn(24, 72, generator=torch.Generator().manual_seed(1))
    exact = zeropower_via_newtonschulz5(G.double(), dtype=torch.float64)
    assert (zeropower_via_newtonschulz5(G) - exact).abs().max().item() <= 1e-5


@pytest.mark.parametrize("shape", [(32, 64), (64, 32), (16, 72), (40, 40)])
def test_newton_schulz_singular_values_and_scale_invariance(shape):
    G = torch.randn(shape, generator=torch.Generator().manual_seed(2))
    O = zeropower_via_newtonschulz5(G)
    assert O.shape == G.shape
    s = torch.linalg.svdvals(O.double())
    assert 0.5 <= s.min().item() and s.max().item() <= 1.5
    for c in (1e-2, 1e2):
        assert (zeropower_via_newtonschulz5(c * G) - O).abs().max().item() <= 1e-5


def test_muon_conv_kernel_equals_flattened_matrix():
    gen = torch.Generator().manual_seed(3)
    kernel = nn.Parameter(torch.randn(16, 4, 3, 3, generator=gen))
    matrix = nn.Parameter(kernel.detach().reshape(16, -1).clone())
    opt_k, opt_m = Muon([kernel], lr=0.02, weight_decay=0.1), Muon([matrix], lr=0.02, weight_decay=0.1)
    for _ in range(3):
        kernel.grad = torch.randn(kernel.shape, generator=gen)
        matrix.grad = kernel.grad.reshape(16, -1).clone()
        opt_k.step()
        opt_m.step()
    assert torch.equal(kernel.detach().reshape(16, -1), matrix.detach())


def test_muon_rejects_vectors_and_unknown_settings():
    with pytest.raises(ValueError, match="matrices and conv kernels"):
        Muon([nn.Parameter(torch.zeros(4))])
    with pytest.raises(TypeError, match="unknown setting"):
        Muon([nn.Parameter(torch.zeros(4, 4))], betas=(0.9, 0.99))


def test_split_muon_params():
    model = make_net()
    hidden, others = split_muon_params(model)
    assert {id(p) for p in hidden} == {id(model.conv1.weight), id(model.conv2.weight), id(model.fc.weight)}
    want_others = [
        model.bn1.weight,
        model.bn1.bias,
        model.conv2.bias,
        model.bn2.weight,
        model.bn2.bias,
        model.fc.bias,
        model.head.weight,
        model.head.bias,
    ]
    assert {id(p) for p in others} == {id(p) for p in want_others}
    assert len(hidden) + len(others) == len(list(model.parameters()))


def test_muon_hybrid_groups_cover_every_parameter_once():
    model = make_net()
    opt = build_optimizer(model, config("muon", lr=0.03, aux_lr=2e-3, weight_decay=0.01))
    seen = [id(p) for g in opt.param_groups for p in g["params"]]
    assert sorted(seen) == sorted(id(p) for p in model.parameters())
    muon_group, adam_group = opt.param_groups
    assert muon_group["use_muon"] and not adam_group["use_muon"]
    assert {id(p) for p in muon_group["params"]} == {id(p) for p in split_muon_params(model)[0]}
    assert (muon_group["lr"], adam_group["lr"]) == (0.03, 2e-3)
    assert muon_group["decay_mode"] == adam_group["decay_mode"] == "decoupled"
    assert muon_group["ns_dtype"] == "float32"


# --- state_dict round trip --------------------------------------------------------------------
@pytest.mark.parametrize("name", OPTIMIZER_NAMES)
def test_state_dict_round_trip_reproduces_next_step(name):
    cfg = config(name, lr=0.01, weight_decay=1e-2)
    model = make_net()
    opt = build_optimizer(model, cfg)
    for step in range(3):
        compute_grads(model, step)
        opt.step()
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer)  # weights_only: the state must be plain tensors, numbers and strings
    compute_grads(model, 3)
    opt.step()

    resumed = make_net(seed=1)
    resumed.load_state_dict(saved["model"])
    resumed_opt = build_optimizer(resumed, cfg)
    resumed_opt.load_state_dict(saved["optimizer"])
    compute_grads(resumed, 3)
    resumed_opt.step()
    assert max_diff(model, resumed) == 0


# --- learning-rate schedules ------------------------------------------------------------------
def test_constant_schedule_and_warmup():
    sched = lr_multiplier(config("sgd", epochs=10, warmup_epochs=1.0), steps_per_epoch=10)
    assert sched(0) == pytest.approx(0.1)
    assert sched(4) == pytest.approx(0.5)
    assert sched(9) == 1.0 and sched(10) == 1.0 and sched(99) == 1.0
    assert lr_multiplier(config("sgd", epochs=10), 10)(0) == 1.0


def test_step_schedule_at_milestones():
    sched = lr_multiplier(config("sgd", epochs=10, schedule="step", schedule_gamma=0.1), steps_per_epoch=10)
    assert [sched(k) for k in (0, 49)] == [1.0, 1.0]
    assert sched(50) == pytest.approx(0.1) and sched(74) == pytest.approx(0.1)
    assert sched(75) == pytest.approx(0.01) and sched(99) == pytest.approx(0.01)


@pytest.mark.parametrize("final", [0.0, 0.1])
def test_cosine_and_linear_schedules(final):
    cos = lr_multiplier(config("sgd", epochs=10, schedule="cosine", final_lr_fraction=final), 10)
    assert cos(0) == 1.0
    assert cos(25) == pytest.approx(final + (1 - final) * (1 + math.cos(math.pi / 4)) / 2)
    assert cos(50) == pytest.approx((1 + final) / 2)
    assert cos(100) == pytest.approx(final)
    lin = lr_multiplier(config("sgd", epochs=10, schedule="linear", final_lr_fraction=final), 10)
    assert lin(50) == pytest.approx((1 + final) / 2)
    assert lin(75) == pytest.approx(1 - 0.75 * (1 - final))
    warm = lr_multiplier(config("sgd", epochs=10, schedule="cosine", final_lr_fraction=final, warmup_epochs=2.0), 10)
    assert warm(0) == pytest.approx(0.05) and warm(19) == 1.0 and warm(20) == 1.0
    assert warm(60) == pytest.approx((1 + final) / 2)  # half-way through the 80 post-warm-up steps


def test_schedule_is_plain_and_rejects_bad_input():
    sched = lr_multiplier(config("sgd", schedule="cosine"), 5)
    assert copy.deepcopy(sched) == sched
    with pytest.raises(ValueError, match="steps_per_epoch"):
        lr_multiplier(config("sgd"), 0)
    with pytest.raises(ValueError, match="step"):
        sched(-1)


def test_apply_lr_multiplier_scales_every_group_from_its_peak():
    model = make_net()
    opt = build_optimizer(model, config("muon", lr=0.02, aux_lr=1e-3))
    apply_lr_multiplier(opt, 0.5)
    assert [g["lr"] for g in opt.param_groups] == [0.01, 5e-4]
    apply_lr_multiplier(opt, 1.0)
    assert [g["lr"] for g in opt.param_groups] == [0.02, 1e-3]


# --- the registry ---------------------------------------------------------------------------
#: The paper's optimizers: the cpu, gpu and paper presets train these and no other (their results are committed).
PAPER_OPTIMIZERS = ["sgd", "sgd_momentum", "adam", "adamw", "muon"]


def test_every_list_of_optimizers_is_read_from_the_registry():
    from initmem.run import optimizers
    from initmem.study.design import presets
    from initmem.study.presentation.plots import labels, style

    names = optimizers.names()
    assert names[:5] == tuple(PAPER_OPTIMIZERS) and optimizers.in_paper() == tuple(PAPER_OPTIMIZERS)
    assert sorted(optimizers.family("sgd") + optimizers.family("adaptive")) == sorted(names)
    assert optimizers.family("sgd") == ("sgd", "sgd_momentum")
    assert optimizers.family("adaptive")[:3] == ("adam", "adamw", "muon")
    assert [labels.label(name) for name in names] == [r.label for r in optimizers.records()]
    assert len({style.hue_color(name, 0) for name in names}) == len(names)
    assert optimizers.sequential() == ("muon",)
    assert [s.name for s in optimizers.settings()] == ["lion_beta1", "lion_beta2"]
    for name in names:
        record = optimizers.record(name)
        assert RunConfig(optimizer=name).effective_decay_mode == record.decay_modes[0]
        assert callable(builder(name)) and record.defaults["lr"] > 0
    with pytest.raises(KeyError, match="allowed values are sgd, sgd_momentum"):
        optimizers.record("no_such_optimizer")
    smoke = presets.notebook_parameters("smoke", "01_optimizers")
    assert smoke["optimizers"] == list(names)  # 01 at smoke trains every registered optimizer
    assert smoke["lrs"][:5] == [0.05, 0.005, 0.005, 0.005, 0.02] and smoke["aux_lrs"][4] == 0.005
    for preset in ("cpu", "gpu", "paper"):
        assert sorted(presets.notebook_parameters(preset, "01_optimizers")["optimizers"]) == sorted(PAPER_OPTIMIZERS)


# --- plain-argument form ----------------------------------------------------------------------
@pytest.mark.parametrize("name", OPTIMIZER_NAMES)
def test_plain_arguments_build_the_same_optimizer_as_a_config(name):
    settings = {"lr": 0.03, "weight_decay": 1e-3, "eps": 1e-7}
    a, b = make_net(), make_net()
    b.load_state_dict(a.state_dict())
    plain = build_optimizer(a, name, **settings)
    from_config = build_optimizer(b, config(name, **settings))
    assert type(plain) is type(from_config)
    for model, optimizer in ((a, plain), (b, from_config)):
        compute_grads(model, 0)
        optimizer.step()
    assert max_diff(a, b) == 0.0


def test_plain_arguments_skip_unrelated_checks_and_reject_unknown_keywords():
    opt = build_optimizer(make_net(), "adamw", lr=1e-3, weight_decay=0.05)
    assert type(opt) is torch.optim.AdamW and opt.param_groups[0]["weight_decay"] == 0.05
    with pytest.raises(ConfigError, match="batch_size: not an optimizer setting; allowed: lr, momentum"):
        build_optimizer(make_net(), "sgd", batch_size=8192)
    with pytest.raises(ConfigError, match="optimizer: allowed values are sgd"):
        build_optimizer(make_net(), "no_such_optimizer")
    with pytest.raises(ConfigError, match="lr: must be > 0"):
        build_optimizer(make_net(), "sgd", lr=-1.0)
    with pytest.raises(TypeError, match="go with an optimizer name"):
        build_optimizer(make_net(), config("sgd"), lr=0.1)
