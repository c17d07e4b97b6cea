"""Declare the scale ladder's design (chapter 11) before its first run: results/cpu/11_scale_ladder/design.json.

Usage: python scripts/declare_ladder.py [OUT]

The record holds what the ladder trains (the cpu preset's rungs, conditions, sigma_w and seeds of
``initmem.study.experiments.e11_scale_ladder``), how it is judged, and what it expects before any run: the power of its
shift rule at the noise measured on the record (01's per-seed cross-fitted spreads at sigma_w 0.1 and 2.5, five
seeds) and its cost by the package's cost model. Commit it before the first run; the page prints its commit beside the
runs' (initmem.study.verdicts.preregistration.declared).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import xarray as xr

from initmem.base.paths import git_commit
from initmem.study.costs import costs
from initmem.study.design import presets
from initmem.study.experiments import e11_scale_ladder as e11
from initmem.study.verdicts.preregistration import shift_power, spread_noise
from initmem.sweeps.spec import SweepSpec

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results/cpu/11_scale_ladder/design.json"
NOISE_SOURCE = "results/cpu/01_optimizers.nc"
MIN_SHIFT = 5.0


def noise() -> dict[str, dict[str, float]]:
    """The standard deviation over seeds of the per-seed cross-fitted spread (pp) on the record, per optimizer and
    predictor, at the ladder's sigma_w."""
    with xr.open_dataset(ROOT / NOISE_SOURCE) as ds:
        return spread_noise(ds, e11.LADDER_OPTIMIZERS, e11.CPU["sigma_ws"])


def main(out: Path) -> None:
    p = presets.notebook_parameters("cpu", "11_scale_ladder")
    p["rungs"] = [list(r) for r in e11.DESIGN_RUNGS]
    spec = SweepSpec.from_dict(e11.spec(p))
    configs = spec.configs()
    per_rung = []
    for w, n, e in e11.DESIGN_RUNGS:
        runs = [c for coords, c in configs if (coords["width"], coords["train_size"]) == (w, n)]
        seconds = costs.estimate_seconds(runs)
        per_rung.append(
            {
                "width": w,
                "train_size": n,
                "epochs": e,
                "runs": len(runs),
                "lever": (w, n) in {tuple(r) for r in p["lever_rungs"]},
                "estimated_core_h": round(seconds / 3600, 2),
            }
        )
    sds = noise()
    n_seeds = len(p["seeds"])
    power = {
        optimizer: {predictor: shift_power(sd, n_seeds, shift=MIN_SHIFT).to_dict() for predictor, sd in by.items()}
        for optimizer, by in sds.items()
    }
    zipped = e11.condition_zip(p)
    design = {
        "study": "11_scale_ladder",
        "preset": "cpu",
        "question": "Does the gap between the cpu preset's spreads and the paper's close as the network and the "
        "training set grow?",
        "rungs": per_rung,
        "conditions": [
            {
                "optimizer": o,
                "lr": lr,
                "weight_decay": wd,
                "aux_lr": a,
                "role": {"sgd": "C1 (low-lr SGD)", "adam": "C2 Adam"}[o]
                if i < len(zipped["lr"]) - 1
                else "C4 larger lr (plain SGD, constant schedule), on the lever rungs only",
            }
            for i, (o, lr, wd, a) in enumerate(
                zip(zipped["optimizer"], zipped["lr"], zipped["weight_decay"], zipped["aux_lr"])
            )
        ],
        "sigma_ws": p["sigma_ws"],
        "seeds": p["seeds"],
        "fixed": {
            k: p[k]
            for k in (
                "model",
                "logit_scale",
                "batch_size",
                "eval_every",
                "warmup_epochs",
                "val_size",
                "test_size",
                "train_eval_size",
                "image_size",
                "augment",
                "bf16",
                "num_threads",
            )
        }
        | {"schedule": "constant"},
        "epoch_rule": "40 epochs on 5,000 images (01's); 60 on 20,000: the record's (width 8, 20,000) SGD runs at "
        "sigma_w 2.5 reached 98.3 % final train accuracy in 40 epochs, climbing about 1 pp every 2 epochs; the "
        "premise is verified on every run",
        "premise": "every low-lr SGD run reaches >= 99.5 % final train accuracy; a rung whose runs miss it is "
        "reported 'premise not met' for C1",
        "predictor": "each claim on the ledger's carrying predictor: the validation-selected checkpoint where every "
        "run of the condition on the rung interpolates (>= 99.5 % train accuracy), else the final one; both printed",
        "spread": "per seed, the cross-fitted spread of the carrying predictor's test accuracy over sigma_w; a rung's "
        "spread is their mean with the calibrated interval (initmem.study.statistics.calibration, kind 'spread')",
        "shift_rule": "a rung's shift is its per-seed spreads minus the first rung's, paired by seed, mean with the "
        "calibrated contrast interval (kind 'contrast'); 'towards the paper' when the interval lies wholly on the "
        "paper's side of 0, 'away' when wholly on the other, else 'no shift the seeds can tell'",
        "size_rule": "a spread 'in the paper's band' when its whole interval lies inside the claim's band "
        "(initmem.study.verdicts.ledger.band)",
        "trend": "spread ~ a + b log2(width) + c log2(train images), fitted to the per-seed spreads (seeds the unit of "
        "replication), extrapolated to width 64 and 45,000 images with a prediction interval whose coverage is "
        "checked by simulation (leave one rung out on the record, and synthetic trends); labelled an extrapolation",
        "machine": "every run from one frozen commit on one machine, its CPU model in every file; where runs come "
        "from more than one CPU type, two runs of the first rung are re-trained on each and the machine effect "
        "printed beside the shifts",
        "smallest_shift_pp": MIN_SHIFT,
        "noise": {
            "source": NOISE_SOURCE,
            "sd_per_seed_spread_pp": {o: {k: round(v, 3) for k, v in by.items()} for o, by in sds.items()},
        },
        "power": power,
        "estimated_core_h": round(sum(r["estimated_core_h"] for r in per_rung), 1),
        "cost_model": "initmem.study.costs.costs (fitted on AMD EPYC CPU time; width 32 takes width 16's term)",
        "written_at_commit": git_commit(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(design, indent=1) + "\n")
    print(f"wrote {out}")
    for r in per_rung:
        print(
            f"  rung w{r['width']} n{r['train_size']} {r['epochs']} ep: {r['runs']} runs, "
            f"{r['estimated_core_h']} core-h"
        )
    print(f"  total {design['estimated_core_h']} core-h (package cost model)")
    for o, by in power.items():
        for k, v in by.items():
            print(
                f"  {o} {k}: sd {v['sd']:.2f}, c {v['critical']:.2f}, E half-width {v['expected_half_width']:.2f}, "
                f"P(<= +-5) {v['p_narrow']:.2f}, power at 5 pp {v['power']:.2f}"
            )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
