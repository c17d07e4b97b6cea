"""What a preset costs: estimated before it runs (from a model fitted to the record's CPU times and a cited GPU
throughput), measured after (from its run files).

* :func:`estimate_cost` -- runs, images, single-core seconds (with the model's p10-p90 band) and A100 seconds of an
  experiment at a preset; :func:`estimate_runs` -- the same for any list of runs; :func:`price` -- in one phrase;
* :func:`measured_costs` -- what the committed runs of a preset took, read from their provenance;
* :func:`run_images` / :func:`run_cost` / :func:`estimate_seconds` -- the images one run trains on and evaluates,
  and what runs cost; :func:`group_seconds` -- what a group of runs costs at a measured throughput (a GPU's).

CPU seconds are one otherwise idle core's, from :data:`COST_MODEL_FILE` (the model and how a width, network or
image size the fit lacks is priced: the API page's "The cost model"); GPU seconds are FLOPs over
:data:`A100_FLOPS`, a lower bound. The Setup chapter prints the estimates beside the measured cost.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...base.numbers import typeset
from ...base.package_data import finite_numbers, is_number, read_package_json
from ...base.reads import listed, note
from ...run.config import RunConfig
from ...run.variables import recorded_epochs
from ...sweeps.spec import SweepSpec
from ...sweeps.store import read_checked
from ..design import registry
from ..design.layout import results_paths
from ..design.presets import notebook_parameters
from ..design.registry import EXPERIMENT_SPECS, experiment_spec
from .flops import TRAIN_PASSES, forward_flops

__all__ = [
    "COST_MODEL_FILE",
    "COST_MODEL_PATH",
    "A100_FLOPS",
    "EVAL_SPEEDUP",
    "BASE_BATCH",
    "cost_model",
    "log_seconds_per_flop",
    "model_seconds",
    "nearest_level",
    "amount",
    "run_images",
    "run_flops",
    "run_cost",
    "group_seconds",
    "estimate_seconds",
    "estimate_cost",
    "preset_configs",
    "estimate_runs",
    "price",
    "measured_costs",
    "cpu_timed",
    "core_seconds",
]

#: The fitted CPU cost model (JSON, in this package), written by ``scripts/fit_costs.py``.
COST_MODEL_FILE = "cost_model.json"
#: Where it is: beside this module.
#:
#: :meta hide-value:
COST_MODEL_PATH = Path(__file__).with_name(COST_MODEL_FILE)
#: Effective FLOP/s of one NVIDIA A100 on a CIFAR-10 ResNet: airbench94.py trains 0.36 PFLOPs in 3.83 s (Jordan,
#: "94% on CIFAR-10 in 3.29 Seconds on a Single GPU", arXiv:2404.00498, and the table of
#: https://github.com/KellerJordan/cifar10-airbench), i.e. 94 TFLOP/s, in half precision with a tuned loop.
A100_FLOPS = 0.36e15 / 3.83
#: The batch size whose batch term is 0 (the cpu preset's).
BASE_BATCH = 64
#: How many times cheaper one evaluated (forward-only) image is than one trained image: the FLOP ratio
#: (:data:`initmem.study.costs.flops.TRAIN_PASSES`).
EVAL_SPEEDUP = float(TRAIN_PASSES)


@functools.cache
def cost_model() -> dict[str, Any]:
    """The fitted cost model (:data:`COST_MODEL_PATH`): ``overhead_s``, ``levels``, ``width``, ``batch_slope``,
    ``optimizer``, ``precision``, ``calibration``, ``load`` and ``provenance`` (:func:`initmem.study.costs.cost_fit.fit`), read once per
    process.

    Raises:
        initmem.base.package_data.PackageFileError: the file is truncated, not JSON or lacks one of those terms
            (one line naming it and how to restore it).
    """
    # noted, so that a page that estimates a cost is executed again when the model is refitted
    return read_package_json(note(COST_MODEL_PATH), _model_problem)


def _model_problem(model: Any) -> str | None:
    """What makes ``model`` unusable as :func:`cost_model` (a term missing or not numbers), or None."""
    if not isinstance(model, dict):
        return "is not a JSON object"
    for name in ("levels", "width", "optimizer", "precision"):
        if why := finite_numbers(model.get(name), name):
            return why
    if not all(re.fullmatch(r"\w+@\d+", cell) for cell in model["levels"]):
        return "levels: a cell is not named network@image size"
    if not all(width.isdigit() for width in model["width"]):
        return "width: a key is not a width"
    if not is_number(model.get("batch_slope")):
        return "batch_slope is not a finite number"
    if not is_number(model.get("overhead_s")) or model["overhead_s"] < 0:
        return "overhead_s is not a finite number of seconds >= 0"
    return finite_numbers(model.get("calibration"), "calibration", ("p10", "p90")) or finite_numbers(
        model.get("load"), "load"
    )


def log_seconds_per_flop(
    model: Mapping[str, Any], level: float, width: int, batch_size: int, optimizer: str, precision: str
) -> float:
    """The fitted log seconds per FLOP of a run at ``level`` (its network's and image size's): the model's width,
    batch, optimizer and precision terms added (a width the model lacks takes the nearest recorded width's term, in
    log2; an optimizer or precision it lacks counts as the reference, 0)."""
    widths = model["width"]
    nearest = min(widths, key=lambda w: (abs(math.log2(int(w) / width)), int(w)))
    return (
        level
        + widths[nearest]
        + model["batch_slope"] * math.log2(batch_size / BASE_BATCH)
        + model["optimizer"].get(optimizer, 0.0)
        + model["precision"].get(precision, 0.0)
    )


def model_seconds(
    model: Mapping[str, Any], flops: float, level: float, width: int, batch_size: int, optimizer: str, precision: str
) -> float:
    """The estimated CPU seconds of one run of ``flops`` FLOPs at ``level``: the model's per-run ``overhead_s`` plus
    the FLOPs at :func:`log_seconds_per_flop`'s rate; never below ``overhead_s``."""
    rate = math.exp(log_seconds_per_flop(model, level, width, batch_size, optimizer, precision))
    return model["overhead_s"] + flops * rate


def nearest_level(levels: Mapping[str, float], model: str, width: int, image_size: int) -> float:
    """The level (log seconds per FLOP) of ``model`` at ``image_size`` in ``levels`` (cell -> level), or the nearest
    recorded cell's: the same network at the nearest image size, else the cell nearest in FLOPs per image at
    ``width`` (module docstring)."""
    cell = f"{model}@{image_size}"
    if cell in levels:
        return levels[cell]
    same = [c for c in levels if c.split("@")[0] == model]
    if same:
        return levels[min(same, key=lambda c: abs(int(c.split("@")[1]) - image_size))]
    flops = math.log(forward_flops(model, width, image_size))

    def distance(c: str) -> float:
        name, size = c.split("@")
        return abs(math.log(forward_flops(name, width, int(size))) - flops)

    return levels[min(levels, key=distance)]


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


def run_flops(config: RunConfig) -> tuple[int, int, float]:
    """``(trained images, evaluated images, FLOPs)`` of one run: :func:`run_images`, and their FLOPs
    (:data:`~initmem.study.costs.flops.TRAIN_PASSES` forward passes per trained image, one per evaluated image)."""
    c = config
    n_train = c.train_size or 50_000 - c.val_size
    n_eval = c.val_size + (c.test_size or 10_000) + c.train_eval_size
    images, eval_images = run_images(
        c.epochs, n_train, c.batch_size, len(recorded_epochs(c)), n_eval, c.train_eval_size
    )
    per_image = forward_flops(c.model, c.effective_width, c.image_size)
    return images, eval_images, float(per_image * (TRAIN_PASSES * images + eval_images))


def run_cost(config: RunConfig) -> tuple[int, int, float]:
    """``(trained images, evaluated images, estimated single-core seconds)`` of one run on the development CPU (the
    fitted model, module docstring: CPU seconds of an otherwise idle core)."""
    c, model = config, cost_model()
    images, eval_images, flops = run_flops(c)
    level = nearest_level(model["levels"], c.model, c.effective_width, c.image_size)
    precision = "bf16" if c.bf16 else "fp32"
    return (
        images,
        eval_images,
        model_seconds(model, flops, level, c.effective_width, c.batch_size, c.optimizer, precision),
    )


def group_seconds(configs: Sequence[RunConfig], rate: float, overhead_s: float = 1.0) -> float:
    """Estimated seconds of ``configs`` trained together (a stack of runs differing in their initialisation, or one
    run) at ``rate`` training images/s per model, measured on the machine: their trained and evaluated images
    (:func:`run_images`; one evaluated image costs 1 / :data:`EVAL_SPEEDUP` of a trained one), plus ``overhead_s``
    per run (writing its file, combining, Python)."""
    trained, evaluated, _ = run_cost(configs[0])
    return len(configs) * ((trained + evaluated / EVAL_SPEEDUP) / rate + overhead_s)


def estimate_seconds(configs: Iterable[RunConfig]) -> float:
    """Estimated single-core seconds of training ``configs`` (:func:`run_cost`)."""
    return float(sum(run_cost(config)[2] for config in configs))


def estimate_cost(preset: str, name: str) -> dict[str, Any]:
    """Runs, estimated single-core seconds and A100 seconds of notebook ``name`` at ``preset`` (module docstring).

    The runs are those of the experiment's sweep (:func:`initmem.study.design.registry.experiment_spec`). Returns
    :func:`estimate_runs`'s dict; ``wall_seconds`` divides by the preset's ``workers`` (at least 1). At the gpu
    and paper presets the core-seconds are what one core of the development machine would need.
    """
    p = notebook_parameters(preset, name)
    return estimate_runs(preset_configs(preset, name), p.get("workers") if p else None)


def preset_configs(preset: str, name: str) -> list[RunConfig]:
    """The runs of experiment ``name``'s sweep at ``preset`` (none for a notebook without a sweep there)."""
    p = notebook_parameters(preset, name)
    if not p or name not in EXPERIMENT_SPECS:
        return []
    return [config for _, config in SweepSpec.from_dict(experiment_spec(name, p)).configs()]


def estimate_runs(configs: Sequence[RunConfig], workers: int | None = None) -> dict[str, Any]:
    """What training ``configs`` costs (:func:`run_cost`): ``{"runs", "train_images", "eval_images", "flops",
    "core_seconds", "core_seconds_p10", "core_seconds_p90", "wall_seconds", "gpu_seconds"}``. ``core_seconds_p10``
    / ``_p90`` scale the estimate by the p10 / p90 recorded-to-estimated CPU seconds of the runs the model was
    fitted to (the model's error: the runs of one sweep share their configurations, so their errors do not average
    out); ``wall_seconds`` is ``core_seconds`` over ``workers`` (None: 1) on an otherwise idle machine;
    ``gpu_seconds`` is ``flops`` over :data:`A100_FLOPS`."""
    band = cost_model()["calibration"]
    per_run = [run_cost(c) for c in configs]
    seconds = float(sum(r[2] for r in per_run))
    flops = float(sum(run_flops(c)[2] for c in configs))
    return {
        "runs": len(per_run),
        "train_images": int(sum(r[0] for r in per_run)),
        "eval_images": int(sum(r[1] for r in per_run)),
        "flops": flops,
        "core_seconds": seconds,
        "core_seconds_p10": seconds * band["p10"],
        "core_seconds_p90": seconds * band["p90"],
        "wall_seconds": seconds / max(1, workers or 1),
        "gpu_seconds": flops / A100_FLOPS,
    }


def amount(seconds: float) -> tuple[float, str]:
    """``seconds`` in the unit a reader wants: ``(40.0, "s")`` below 90 s, minutes below 90 min, else hours."""
    if seconds < 90:
        return seconds, "s"
    return (seconds / 60, "min") if seconds < 5400 else (seconds / 3600, "h")


def price(cost: Mapping[str, Any], gpu: bool = True) -> str:
    """A cost of :func:`estimate_runs` in one phrase: ``"about 28 core-h (p10-p90 17-63)"``, with ``gpu``
    followed by ``", about 8 A100-min"`` (:data:`A100_FLOPS`); each figure in the unit of :func:`amount`, and one
    that would print as 0 seconds as ``"under 1 core-s"`` or ``", under 1 A100-s"``."""
    if cost["core_seconds"] < 0.5:
        text = "under 1 core-s"
    else:
        value, unit = amount(cost["core_seconds"])
        scale = value / cost["core_seconds"]
        low, high = cost["core_seconds_p10"] * scale, cost["core_seconds_p90"] * scale
        digits = 1 if unit == "h" and value < 10 else 0
        text = f"about {value:,.{digits}f} core-{unit} (p10-p90 {low:,.{digits}f}-{high:,.{digits}f})"
    if gpu and cost["gpu_seconds"] < 0.5:
        text += ", under 1 A100-s"
    elif gpu:
        gpu_value, gpu_unit = amount(cost["gpu_seconds"])
        text += f", about {gpu_value:,.{1 if gpu_unit == 'h' and gpu_value < 10 else 0}f} A100-{gpu_unit}"
    return text


def cpu_timed(run: Any) -> bool:
    """Whether one run (its Dataset) records its CPU time (``cpu_time_s``, finite: a run resumed from a checkpoint
    older than the variable records NaN)."""
    return "cpu_time_s" in run.data_vars and math.isfinite(float(run["cpu_time_s"]))


def core_seconds(run: Any) -> float:
    """What one run (its Dataset) cost in core-seconds: its recorded CPU time (``cpu_time_s``,
    :mod:`initmem.run.elapsed`) where it has one, else its wall time (a run recorded before CPU time was: its wall
    time also counts whatever else the machine was doing, up to 2x on a shared core, ``benchmarks/cpu_time.py``)."""
    return float(run["cpu_time_s"] if cpu_timed(run) else run["wall_time_s"])


def measured_costs(results_dir: str | os.PathLike, preset: str, names: Iterable[str] | None = None):
    """What the cached runs of ``preset`` cost, per experiment of ``names`` (None:
    ``registry.EXPERIMENTS``), read from the run files' provenance. An experiment's
    runs are those its combined result holds (its ``run_hash`` values), so that run files its folder holds beside
    them (runs trained ahead for a grid the preset does not yet define, say) are not counted; without a combined
    result, every run file in its folder.

    Returns a :class:`pandas.DataFrame` indexed by experiment with columns ``runs``, ``shared_runs`` (runs that an
    earlier experiment of ``names`` holds too, the same configuration and file: trained once, counted there),
    ``core_hours`` (the sum of the other runs' :func:`core_seconds`; every CPU-preset run uses one thread),
    ``minutes_per_run`` (their mean), ``hardware`` and ``torch`` (the distinct values recorded, joined by "; ").
    Experiments without runs are left out.
    """
    import pandas as pd

    rows, counted = [], set()
    for name in registry.EXPERIMENTS if names is None else names:
        runs_dir, combined = results_paths(results_dir, preset, name)
        record = _run_hashes(combined)
        seconds, shared, hardware, torch_versions = [], 0, set(), set()
        for path in listed(runs_dir, "*.nc"):
            if record is not None and path.stem not in record:
                continue
            ds = read_checked(path)
            hardware.add(typeset(str(ds.attrs.get("hardware", "?"))))  # "1 thread", as older files did not write
            torch_versions.add(str(ds.attrs.get("torch_version", "?")))
            digest = str(ds.attrs.get("config_hash", path.stem))
            if digest in counted:
                shared += 1
                continue
            counted.add(digest)
            seconds.append(core_seconds(ds))
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
