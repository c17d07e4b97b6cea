"""Lion (initmem.run.optim.lion): its update against a reference written by hand, its settings as RunConfig fields
that leave every committed hash as it was, and a run from the command line. The checks every registered optimizer
passes (builds, steps, decays, round-trips its state) are in tests/test_optim.py."""

from __future__ import annotations

import pytest
import torch

from initmem.run.config import ConfigError, RunConfig
from initmem.run.optim.build import build_optimizer
from initmem.run.optim.lion import Lion
from test_optim import compute_grads, make_net  # tests/ is on sys.path under pytest
from tiny import TINY_FLAGS


def reference_lion(params, grads, momenta, lr, beta1, beta2, weight_decay):
    """One Lion step as the paper writes it (Chen et al. 2023, Algorithm 2), on plain tensors:
    c = beta1 m + (1 - beta1) g;  w <- w - lr (sign(c) + lambda w);  m <- beta2 m + (1 - beta2) g."""
    for w, g, m in zip(params, grads, momenta):
        c = beta1 * m + (1 - beta1) * g
        w -= lr * (torch.sign(c) + weight_decay * w)
        m.copy_(beta2 * m + (1 - beta2) * g)


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_lion_equals_a_reference_written_by_hand(weight_decay):
    """Six steps on the tiny network, the reference fed the gradients our Lion saw (a gradient is computed once: the
    conv bias before BatchNorm has a gradient of rounding noise only, whose sign Lion follows)."""
    lr, beta1, beta2 = 3e-3, 0.8, 0.95
    model = make_net(dtype=torch.float64)
    opt = build_optimizer(
        model, RunConfig(optimizer="lion", lr=lr, lion_beta1=beta1, lion_beta2=beta2, weight_decay=weight_decay)
    )
    assert type(opt) is Lion and opt.param_groups[0]["betas"] == (beta1, beta2)
    start = [p.detach().clone() for p in model.parameters()]
    weights, momenta = [w.clone() for w in start], [torch.zeros_like(w) for w in start]
    for step in range(6):
        compute_grads(model, step)
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
        reference_lion(weights, grads, momenta, lr, beta1, beta2, weight_decay)
    assert max((p - w).abs().max().item() for p, w in zip(model.parameters(), weights)) <= 1e-6
    assert max((p - w).abs().max().item() for p, w in zip(model.parameters(), start)) > 5 * lr  # six steps of lr
    ours = [opt.state[p]["exp_avg"] for p in model.parameters()]
    assert max((a - b).abs().max().item() for a, b in zip(ours, momenta)) <= 1e-6


def test_every_entry_moves_by_exactly_lr():
    """Without decay each entry moves by lr or (where beta1 m + (1 - beta1) g = 0) not at all: the clock T_adapt."""
    model, before = make_net(), make_net()
    opt = build_optimizer(model, "lion", lr=0.01)
    compute_grads(model, 0)
    opt.step()
    moved = torch.cat([(p - q).abs().flatten() for p, q in zip(model.parameters(), before.parameters())])
    assert torch.allclose(moved[moved > 0], torch.tensor(0.01), rtol=1e-5) and (moved > 0).float().mean() > 0.9


def test_lions_settings_are_runconfig_fields_hashed_only_when_set():
    default = RunConfig(optimizer="lion")
    assert (default.lion_beta1, default.lion_beta2) == (0.9, 0.99) and default.effective_decay_mode == "decoupled"
    assert "lion_beta1" not in default.hash_payload() and "lion_beta2" not in RunConfig().hash_payload()
    assert default.replace(lion_beta2=0.98).hash() != default.hash()
    assert "lion_beta2" in default.replace(lion_beta2=0.98).hash_payload()
    with pytest.raises(ConfigError, match=r"lion_beta1: must be in \[0, 1\)"):
        RunConfig(optimizer="lion", lion_beta1=1.0)
    with pytest.raises(ConfigError, match="decay_mode: lion means decoupled decay"):
        RunConfig(optimizer="lion", decay_mode="l2")


def test_lion_trains_from_the_command_line(tmp_path):
    import xarray as xr

    from initmem.cli import main

    out = tmp_path / "lion.nc"
    flags = ["--optimizer", "lion", "--lr", "0.003", "--lion-beta2", "0.98", "--weight-decay", "0.1", "--epochs", "2"]
    assert main(["train", *TINY_FLAGS, *flags, "--out", str(out)]) == 0
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        config = RunConfig.from_json(ds.attrs["config"])
        assert (config.optimizer, config.lion_beta2, ds.attrs["config_hash"]) == ("lion", 0.98, config.hash())
        assert float(ds["T_adapt"].isel(epoch=-1)) == pytest.approx(0.003 * 2 * 4)  # 4 steps an epoch at lr 0.003
