"""The cost model: FLOPs counted by hand match the networks, the fitted table is what the committed runs give, and
estimates are finite at every preset (the paper's included)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from initmem.run.config import RunConfig
from initmem.run.models import cifar_resnet, resnet9
from initmem.study import cost_fit, costs, flops, presets

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "cpu"


def _hooked_flops(model: torch.nn.Module, side: int) -> int:
    """2 x multiply-adds of every Conv2d and Linear of one forward pass of one ``side`` x ``side`` image."""
    total = 0

    def count(module, inputs, output):
        nonlocal total
        if isinstance(module, torch.nn.Conv2d):
            k = module.kernel_size[0] * module.kernel_size[1]
            total += 2 * output.numel() * module.in_channels * k // module.groups
        elif isinstance(module, torch.nn.Linear):
            total += 2 * module.in_features * module.out_features

    for module in model.modules():
        module.register_forward_hook(count)
    with torch.no_grad():
        model(torch.zeros(1, 3, side, side))
    return total


@pytest.mark.parametrize(
    ("name", "width", "side"),
    [("resnet9", 8, 32), ("resnet9", 64, 32), ("resnet9", 4, 16), ("resnet9", 8, 24), ("resnet20", 8, 16)]
    + [("resnet56", 16, 32), ("resnet110", 8, 16)],
)
def test_forward_flops_match_the_networks(name, width, side):
    model = resnet9(width) if name == "resnet9" else cifar_resnet(int(name[6:]), width)
    assert flops.forward_flops(name, width, side) == _hooked_flops(model, side)


def test_forward_flops_by_hand_and_bad_names():
    # ResNet-9 width 8 at 32 px: prep 3->8 at 32^2 (221,184 MACs), five 3x3 convs of 1,179,648 MACs each
    # (8->16 at 32^2, two 16->16 at 16^2 ... two 64->64 at 4^2), head 64 x 10
    assert flops.forward_flops("resnet9", 8, 32) == 2 * (221_184 + 5 * 1_179_648 + 640)
    assert flops.train_flops("resnet9", 8, 32) == 3 * flops.forward_flops("resnet9", 8, 32)
    with pytest.raises(ValueError, match="model: allowed values"):
        flops.forward_flops("resnet21", 8, 32)


def test_run_cost_is_the_fitted_formula_by_hand():
    model = costs.cost_model()
    c = RunConfig(model="resnet9", width=8, image_size=32, batch_size=256, optimizer="adam", lr=1e-3, epochs=4)
    c = c.replace(train_size=5000, val_size=2000, test_size=2000, train_eval_size=1000, eval_every=2)
    trained, evaluated, seconds = costs.run_cost(c)
    assert trained == 4 * (5000 // 256) * 256 and evaluated == 3 * 5000 + 1000  # epochs 0, 2, 4
    per_image = flops.forward_flops("resnet9", 8, 32)
    log_rate = model["levels"]["resnet9@32"] + model["batch_slope"] * 2 + model["optimizer"]["adam"]
    assert seconds == pytest.approx(per_image * (3 * trained + evaluated) * math.exp(log_rate), rel=1e-12)
    cost = costs.estimate_runs([c, c], workers=2)
    band = model["calibration"]
    assert cost["core_seconds"] == pytest.approx(2 * seconds)
    assert (cost["core_seconds_p10"], cost["core_seconds_p90"]) == pytest.approx(
        (2 * seconds * band["p10"], 2 * seconds * band["p90"])
    )
    assert cost["gpu_seconds"] == pytest.approx(cost["flops"] / (0.36e15 / 3.83))


def test_a_network_the_record_lacks_takes_the_nearest_recorded_level():
    levels = costs.cost_model()["levels"]
    paper = RunConfig(model="resnet20", width=16, image_size=32, batch_size=64, optimizer="sgd", epochs=1)
    _, _, seconds = costs.run_cost(paper)
    assert seconds == pytest.approx(costs.run_flops(paper)[2] * math.exp(levels["resnet20@16"]))


@pytest.mark.parametrize("preset", ["gpu", "paper"])
def test_the_gpu_presets_are_priced_in_core_and_gpu_hours(preset):
    total = [costs.estimate_cost(preset, n) for n in presets.NOTEBOOK_PARAMETERS[preset]]
    priced = [c for c in total if c["runs"]]
    assert priced and all(math.isfinite(c["core_seconds"]) and c["gpu_seconds"] > 0 for c in priced)
    # 01 at paper scale: 105 runs of ResNet-9 width 64 on 45,000 images for 200 epochs at batch 128
    if preset == "paper":
        one = costs.estimate_cost("paper", "01_optimizers")
        per_run = 200 * (45_000 // 128) * 128 * 3 + 201 * 20_000 + 5_000
        assert one["flops"] == pytest.approx(105 * per_run * flops.forward_flops("resnet9", 64, 32))


def test_price_states_the_band_and_the_gpu_time():
    cost = {"core_seconds": 10 * 3600.0, "core_seconds_p10": 6 * 3600.0, "core_seconds_p90": 22 * 3600.0}
    cost["gpu_seconds"] = 3 * 60.0
    assert costs.price(cost) == "about 10 core-h (p10-p90 6-22), about 3 A100-min"
    cost |= {"core_seconds": 2.5 * 3600, "core_seconds_p10": 1.5 * 3600, "core_seconds_p90": 5.6 * 3600}
    assert costs.price(cost, gpu=False) == "about 2.5 core-h (p10-p90 1.5-5.6)"


@pytest.mark.slow
def test_the_committed_cost_model_is_the_fit_of_the_committed_runs():
    """scripts/fit_costs.py over results/cpu gives the committed table; its calibration is what the benchmark
    (benchmarks/cost_calibration.py) reports: the median run's recorded / estimated ratio is 1 within 10 %."""
    if not any(RUNS.glob("*/runs/*.nc")):
        pytest.skip("the committed cpu runs (results/cpu/*/runs) are absent in this checkout")
    committed = json.loads((ROOT / "src" / "initmem" / "study" / costs.COST_MODEL_FILE).read_text())
    refit = cost_fit.fit(cost_fit.run_table(ROOT / "results", "cpu"))
    for key in ("levels", "optimizer", "precision", "calibration"):
        assert refit[key] == pytest.approx(committed[key], abs=2e-5), f"{key}: re-run scripts/fit_costs.py"
    assert refit["batch_slope"] == pytest.approx(committed["batch_slope"], abs=2e-5)
    assert 0.9 <= committed["calibration"]["median"] <= 1.1
    assert committed["calibration"]["p10"] < 1 < committed["calibration"]["p90"]


def test_the_bf16_term_is_the_median_ratio_to_same_session_fp32_twins():
    """Two bf16 runs with an fp32 twin (the same configuration, commit and machine) at 0.8x and 0.6x its seconds, and
    one whose only fp32 twin ran on another machine: the term is the median of log 0.8 and log 0.6 (their mean,
    log 0.693); the levels
    are fitted with it removed, so the bf16 runs do not pull the fp32 level down."""
    import pandas as pd

    def row(sweep, key, precision, seconds, hardware="epyc"):
        return {
            "sweep": sweep, "hash": f"{sweep}{key}{precision}", "cell": "resnet9@32", "model": "resnet9", "width": 8,
            "image_size": 32, "batch_size": 64, "optimizer": "sgd", "precision": precision, "twin": key,
            "flops": 1e12, "seconds": seconds, "hardware": hardware, "torch": "2", "git_commit": "abc",
        }  # fmt: skip

    runs = pd.DataFrame(
        [
            row("fp32", "a", "fp32", 100.0),
            row("fp32", "b", "fp32", 100.0),
            row("fp32", "c", "fp32", 100.0, hardware="other"),
            row("bf16", "a", "bf16", 80.0),
            row("bf16", "b", "bf16", 60.0),
            row("bf16", "c", "bf16", 10.0),
        ]
    )
    model = cost_fit.fit(runs)
    assert model["precision"] == pytest.approx({"fp32": 0.0, "bf16": math.log(math.sqrt(0.8 * 0.6))}, abs=1e-5)
    without = cost_fit.fit(runs[runs["precision"] == "fp32"])
    assert "bf16" not in without["precision"]
    # the median run of the six, its bf16 term removed: 100 s per 1e12 FLOPs (the bf16 run c, at 10 / 0.693 s, is low)
    assert math.exp(model["levels"]["resnet9@32"]) * 1e12 == pytest.approx(100.0, rel=1e-4)


def test_a_runs_core_seconds_are_its_cpu_time_where_recorded_else_its_wall_time():
    """A run recorded after session 17 has ``cpu_time_s``: it counts. One recorded before (no variable) or resumed
    from a checkpoint older than it (NaN) counts its wall time."""
    import xarray as xr

    def run(**timings):
        return xr.Dataset({name: ((), value) for name, value in timings.items()})

    assert costs.core_seconds(run(wall_time_s=120.0, cpu_time_s=61.5)) == 61.5
    assert costs.core_seconds(run(wall_time_s=120.0)) == 120.0
    assert costs.core_seconds(run(wall_time_s=120.0, cpu_time_s=math.nan)) == 120.0
