"""What a preset costs: estimated before it runs (from measured throughput), measured after (from its run files).

* :func:`estimate_cost` -- runs, images and single-core seconds of an experiment at a preset, from
  :data:`CPU_THROUGHPUT` and the experiment's sweep (:func:`initmem.study.registry.experiment_spec`);
  :func:`estimate_runs` -- the same for any list of runs (a design not yet in the registry);
* :func:`measured_costs` -- what the committed runs of a preset took, read from their provenance;
* :func:`run_images` / :func:`run_cost` / :func:`estimate_seconds` -- the images one run trains on and evaluates,
  and what runs cost; :func:`group_seconds` -- what a group of runs costs at a measured throughput (a GPU's).

The Setup chapter prints both, side by side.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..base.reads import listed, note
from ..run.config import RunConfig
from ..run.variables import recorded_epochs
from ..sweeps.spec import SweepSpec
from ..sweeps.store import read_checked
from .layout import results_paths
from .presets import notebook_parameters
from .registry import EXPERIMENT_SPECS, EXPERIMENTS, experiment_spec

__all__ = [
    "CPU_THROUGHPUT",
    "BATCH_FACTOR",
    "EVAL_SPEEDUP",
    "run_images",
    "run_cost",
    "group_seconds",
    "estimate_seconds",
    "estimate_cost",
    "estimate_runs",
    "measured_costs",
]

#: Training throughput (images/s per core, ONE thread per run, batch 64, no augmentation, channels-last) on the
#: 2-core development machine (torch 2.14.1, x86_64), keyed by (model, width, image_size): the medians over the
#: committed cpu-preset runs of ``python benchmarks/run_throughput.py --preset cpu`` (training images plus evaluated
#: images / EVAL_SPEEDUP, over each run's wall time, two runs side by side). Entries marked "estimated" were not run.
#: Other batch sizes: :data:`BATCH_FACTOR`.
CPU_THROUGHPUT: dict[tuple[str, int, int], float] = {
    ("resnet9", 4, 16): 3000.0,  # estimated (width 4 is overhead-bound); smoke only
    ("resnet9", 8, 16): 2270.0,
    ("resnet9", 8, 24): 1900.0,  # estimated, between 16 and 32 px
    ("resnet9", 8, 32): 1615.0,
    ("resnet9", 16, 16): 690.0,  # estimated: an early measurement at batch 128 under load
    ("resnet20", 4, 16): 1500.0,  # estimated; smoke only
    ("resnet20", 8, 16): 1129.0,
    ("resnet56", 8, 16): 404.0,
    ("resnet110", 8, 16): 241.0,
}
#: Relative training throughput per image against batch 64 (ResNet-9 width 8, 32 px, 1 thread; measured at 16, 64
#: and 256 by the same benchmark, the others interpolated).
BATCH_FACTOR: dict[int, float] = {16: 1.08, 32: 1.04, 64: 1.0, 128: 0.95, 256: 0.9, 512: 0.9}
#: How many times cheaper one evaluated (forward-only) image is than one trained image.
EVAL_SPEEDUP = 2.8
#: Whole run against the tight-loop benchmark (optimizer, data movement, bookkeeping): measured ~1.0 for a
#: ResNet-9 width-8 run (about 250 s against 258 s estimated); 1.05 leaves room for Adam/Muon.
_OVERHEAD = 1.05


def run_images(
    epochs: int, train_size: int, batch_size: int, evaluations: int, eval_size: int, recalibration_size: int
) -> tuple[int, int]:
    """(trained, evaluated) images of one run, as :func:`initmem.run.training.train` reads them.

    Training reads ``epochs`` passes of full batches (the last partial batch is dropped). Evaluation reads
    ``eval_size`` images (train-eval + validation + test splits) at each of ``evaluations`` recorded epochs, plus
    one forward pass over ``recalibration_size`` images (the train-eval split) that recalibrates BatchNorm at
    epoch 0.
    """
    return epochs * (train_size // batch_size) * batch_size, evaluations * eval_size + recalibration_size


def run_cost(config: RunConfig) -> tuple[int, int, float]:
    """``(trained images, evaluated images, estimated single-core seconds)`` of one run on the development CPU
    (:data:`CPU_THROUGHPUT`; NaN seconds for a network the table lacks)."""
    c = config
    n_train = c.train_size or 50_000 - c.val_size
    n_eval = c.val_size + (c.test_size or 10_000) + c.train_eval_size
    images, eval_images = run_images(
        c.epochs, n_train, c.batch_size, len(recorded_epochs(c)), n_eval, c.train_eval_size
    )
    rate = CPU_THROUGHPUT.get((c.model, c.effective_width, c.image_size), math.nan)
    seconds = _OVERHEAD * (images / (rate * BATCH_FACTOR.get(c.batch_size, 1.0)) + eval_images / (rate * EVAL_SPEEDUP))
    return images, eval_images, seconds


def group_seconds(configs: Sequence[RunConfig], rate: float, overhead_s: float = 1.0) -> float:
    """Estimated seconds of ``configs`` trained together (a stack of runs differing in their initialisation, or one
    run) at ``rate`` training images/s per model, measured on the machine: their trained and evaluated images
    (:func:`run_images`; one evaluated image costs 1 / :data:`EVAL_SPEEDUP` of a trained one), plus ``overhead_s``
    per run (writing its file, combining, Python)."""
    trained, evaluated, _ = run_cost(configs[0])
    return len(configs) * ((trained + evaluated / EVAL_SPEEDUP) / rate + overhead_s)


def estimate_seconds(configs: Iterable[RunConfig]) -> float:
    """Estimated single-core seconds of training ``configs`` (:func:`run_cost`; a network without a throughput entry
    counts as one hour, so that an unknown cost is never taken for a small one)."""
    total = 0.0
    for config in configs:
        seconds = run_cost(config)[2]
        total += seconds if math.isfinite(seconds) else 3600.0
    return total


def estimate_cost(preset: str, name: str) -> dict[str, Any]:
    """Runs and estimated single-core seconds of notebook ``name`` at ``preset``, from :data:`CPU_THROUGHPUT`.

    The runs are those of the experiment's sweep (:func:`initmem.study.registry.experiment_spec`). Returns
    :func:`estimate_runs`'s dict; ``wall_seconds`` divides by the preset's ``workers`` (at least 1). Meaningful for
    CPU presets; for ``paper`` the images are right and the seconds are what a CPU would need (NaN where the table
    has no entry).
    """
    p = notebook_parameters(preset, name)
    if not p or name not in EXPERIMENT_SPECS:
        return estimate_runs([])
    configs = [config for _, config in SweepSpec.from_dict(experiment_spec(name, p)).configs()]
    return estimate_runs(configs, p.get("workers"))


def estimate_runs(configs: Sequence[RunConfig], workers: int | None = None) -> dict[str, Any]:
    """What training ``configs`` costs (:func:`run_cost`): ``{"runs", "train_images", "eval_images",
    "core_seconds", "wall_seconds"}``, ``wall_seconds`` being ``core_seconds`` over ``workers`` (None: 1)."""
    per_run = [run_cost(c) for c in configs]
    seconds = float(sum(r[2] for r in per_run))
    return {
        "runs": len(per_run),
        "train_images": int(sum(r[0] for r in per_run)),
        "eval_images": int(sum(r[1] for r in per_run)),
        "core_seconds": seconds,
        "wall_seconds": seconds / max(1, workers or 1),
    }


def measured_costs(results_dir: str | os.PathLike, preset: str, names: Iterable[str] = EXPERIMENTS):
    """What the cached runs of ``preset`` cost, per experiment, read from the run files' provenance. An experiment's
    runs are those its combined result holds (its ``run_hash`` values), so that run files its folder holds beside
    them (runs trained ahead for a grid the preset does not yet define, say) are not counted; without a combined
    result, every run file in its folder.

    Returns a :class:`pandas.DataFrame` indexed by experiment with columns ``runs``, ``shared_runs`` (runs that an
    earlier experiment of ``names`` holds too, the same configuration and file: trained once, counted there),
    ``core_hours`` (the sum of the training wall times of the other runs; every CPU-preset run uses one thread),
    ``minutes_per_run`` (their mean), ``hardware`` and ``torch`` (the distinct values recorded, joined by "; ").
    Experiments without runs are left out.
    """
    import pandas as pd

    rows, counted = [], set()
    for name in names:
        runs_dir, combined = results_paths(results_dir, preset, name)
        record = _run_hashes(combined)
        seconds, shared, hardware, torch_versions = [], 0, set(), set()
        for path in listed(runs_dir, "*.nc"):
            if record is not None and path.stem not in record:
                continue
            ds = read_checked(path)
            hardware.add(str(ds.attrs.get("hardware", "?")))
            torch_versions.add(str(ds.attrs.get("torch_version", "?")))
            digest = str(ds.attrs.get("config_hash", path.stem))
            if digest in counted:
                shared += 1
                continue
            counted.add(digest)
            seconds.append(float(ds["wall_time_s"]))
        if seconds or shared:
            rows.append(
                {
                    "experiment": name,
                    "runs": len(seconds) + shared,
                    "shared_runs": shared,
                    "core_hours": sum(seconds) / 3600.0,
                    "minutes_per_run": float(np.mean(seconds)) / 60.0 if seconds else math.nan,
                    "hardware": "; ".join(sorted(hardware)),
                    "torch": "; ".join(sorted(torch_versions)),
                }
            )
    columns = ["experiment", "runs", "shared_runs", "core_hours", "minutes_per_run", "hardware", "torch"]
    return pd.DataFrame(rows, columns=columns).set_index("experiment")


def _run_hashes(combined: os.PathLike) -> set[str] | None:
    """The ``run_hash`` values of a combined result (the names of its run files); None where there is no such file."""
    if not note(combined).exists():
        return None
    return {str(h) for h in np.asarray(read_checked(combined)["run_hash"].values).ravel()}
