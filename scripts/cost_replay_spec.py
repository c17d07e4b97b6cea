"""Write the sweep specs of the cost replay: two runs of each cost configuration the record holds, trained again so
that their CPU time is recorded (the record's runs predate ``cpu_time_s`` and their wall times count the machine's
other work), for ``scripts/fit_costs.py`` to fit the cost model to.

Usage: python scripts/cost_replay_spec.py OUT_DIR [--max-epochs N] [--smoke]

A cost configuration is what a run's seconds depend on (:data:`COST_FIELDS`: network, width, image size, batch
size, optimizer, precision, the split sizes and the epochs); learning rates, seeds and sigma_w are not. From each,
the two first runs of the record (``results/cpu/*/runs/*.nc``, by sigma_w, seed and hash) are replayed, except that
an fp32 configuration with a bf16 twin replays the twins of the bf16 runs chosen, so that the precision term is
measured on pairs (:mod:`initmem.study.costs.cost_fit`). Configurations over ``--max-epochs`` (default 50: 02's
160-epoch runs and 04's 123-epoch ones, 5-40 min each, are left out: their cost per epoch is that of 01's
and 04's 30-epoch runs) are skipped. One file per configuration, ``NN_cost_replay.json``, all
named ``cost_replay`` (they share ``results/cpu/cost_replay/runs/``); the estimated cost is printed first. Train
them with ``SPECS=OUT_DIR bash scripts/run_preset.sh cpu COMMIT``.

``--smoke`` writes instead the one spec of the smoke-scale replays (:func:`smoke_spec`), which time the per-run
overhead the record's runs are too long to show; they are trained into the same folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from initmem.run.config import RunConfig
from initmem.study.costs import costs
from initmem.sweeps.spec import SweepSpec
from initmem.sweeps.store import read_checked

#: The fields a run's cost depends on.
COST_FIELDS = (
    "model", "width", "image_size", "batch_size", "optimizer", "bf16",
    "train_size", "val_size", "test_size", "train_eval_size", "epochs",
)  # fmt: skip
#: The experiment folder the replays are trained into.
NAME = "cost_replay"


def record_configs(results: Path) -> list[dict]:
    """The configurations of the record's distinct runs (by hash), sorted by sigma_w, seed and hash."""
    configs = {}
    for path in sorted(results.glob("cpu/*/runs/*.nc")):
        if path.parent.parent.name != NAME:
            configs.setdefault(path.stem, json.loads(read_checked(path).attrs["config"]))
    return sorted(configs.values(), key=lambda c: (c["sigma_w"], c["seed"], RunConfig(**c).hash()))


def choose(configs: list[dict], max_epochs: int) -> list[list[dict]]:
    """Two configurations per cost configuration (module docstring), in the record's first-seen order."""
    groups: dict[tuple, list[dict]] = {}
    for c in configs:
        groups.setdefault(tuple(json.dumps(c[f]) for f in COST_FIELDS), []).append(c)
    chosen = {key: group[:2] for key, group in groups.items() if group[0]["epochs"] <= max_epochs}

    def twin(c: dict) -> str:  # by hash: runs of older commits lack fields a later one added at their defaults
        return RunConfig(**{**c, "bf16": False}).hash()

    for key, pair in chosen.items():
        if pair[0]["bf16"]:
            fp32_key = tuple(json.dumps(False) if f == "bf16" else k for f, k in zip(COST_FIELDS, key, strict=True))
            wanted = {twin(c) for c in pair}
            twins = [c for c in groups.get(fp32_key, []) if twin(c) in wanted]
            if fp32_key in chosen and len(twins) == len(pair):
                chosen[fp32_key] = twins
    return list(chosen.values())


def spec(pair: list[dict]) -> dict:
    """A sweep spec of exactly the configurations of ``pair``: the first as base, the fields that differ zipped
    (one that differs first, so that the zip's dimension has distinct values)."""
    differ = sorted({k for c in pair[1:] for k in c if c[k] != pair[0][k]})
    return {"base": pair[0], "grid": {}, "zip": {k: [c[k] for c in pair] for k in differ}}


#: The smoke-scale replays' grid over the smoke preset's plain-SGD run: runs of 1 and 2 epochs on 200 and 400
#: images, three seeds each, whose times differ by their FLOPs and share the per-run overhead.
SMOKE_GRID = {"epochs": [1, 2], "train_size": [200, 400], "seed": [0, 1, 2]}


def smoke_spec() -> dict:
    """The sweep spec of the smoke-scale replays: the smoke preset's first plain-SGD run of 01 (ResNet-9 width 4 at
    16 px on synthetic images) over :data:`SMOKE_GRID` (12 runs, a few CPU-seconds each)."""
    base = next(c for c in costs.preset_configs("smoke", "01_optimizers") if c.optimizer == "sgd")
    return {"base": base.to_dict(), "grid": SMOKE_GRID, "zip": {}}


def main(out: Path, max_epochs: int, smoke: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if smoke:
        specs = [smoke_spec()]
    else:
        pairs = choose(record_configs(Path("results")), max_epochs)
        specs = [spec(pair) for pair in pairs]
    configs = [config for s in specs for _, config in SweepSpec.from_dict(s).configs()]
    cost = costs.estimate_runs(configs, workers=2)
    print(
        f"{len(specs)} cost configurations, {len(configs)} runs: {costs.price(cost)} "
        f"(estimated {cost['core_seconds'] / 3600:.1f} core-h)"
    )
    for k, s in enumerate(specs):
        (out / f"{k:02d}_{NAME}.json").write_text(json.dumps({"name": NAME, "spec": s}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--max-epochs", type=int, default=50)
    parser.add_argument("--smoke", action="store_true", help="the smoke-scale replays instead (the per-run overhead)")
    args = parser.parse_args()
    main(args.out, args.max_epochs, args.smoke)
