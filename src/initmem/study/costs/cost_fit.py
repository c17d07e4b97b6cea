"""Fit the cost model of :mod:`initmem.study.costs.costs` to the CPU time the committed runs recorded.

``CPU seconds = overhead + FLOPs * exp(level[network @ image size] + width[width] + batch_slope * log2(batch / 64) +
optimizer[name] + precision[name])``, a least-squares fit of log CPU seconds over the runs that record
``cpu_time_s`` (from commit 34eb52c on, and the smoke-scale replays that measure ``overhead``); ``sgd``, ``fp32``
and width 8 are the references (0). Why each term, and why the older wall-timed runs are calibrated (``load``)
rather than fitted: the API page's "The cost model".

* :func:`run_table` -- one row per distinct run of a preset's committed run files;
* :func:`fit` -- the model's coefficients, its calibration over the CPU-timed runs and the wall-timed runs' load, as
  the JSON-ready dict :mod:`initmem.study.costs.costs` reads (written by ``scripts/fit_costs.py``);
* :func:`calibration` -- recorded / estimated over runs: median, share within 1.5x, p10 and p90.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from ...sweeps.store import read_checked
from .costs import BASE_BATCH, core_seconds, cpu_timed, model_seconds, run_images
from .flops import TRAIN_PASSES, forward_flops

__all__ = ["DIGITS", "FACTORS", "FIT_SWEEPS", "run_table", "fitted_runs", "fit", "calibration", "ratio_figures"]

#: Decimals the fitted log-ratios keep (a relative error of 1e-5 in seconds at most): the table stays readable and
#: the same from one refit to the next.
DIGITS = 5


def run_table(results_dir: str | os.PathLike, preset: str = "cpu") -> pd.DataFrame:
    """One row per distinct run (by config hash and creation time: a run copied into two experiments' folders counts
    once, in the first; a replay of it, trained again, counts apart)
    of ``<results_dir>/<preset>/*/runs/*.nc``, sorted by folder and hash.

    Columns: ``sweep`` (the experiment folder), ``hash``, ``cell`` (``"<model>@<image size>"``), ``model``,
    ``width``, ``image_size``, ``batch_size``, ``optimizer``, ``precision``, ``flops`` (the run's total: trained
    images x :data:`~initmem.study.costs.flops.TRAIN_PASSES` + evaluated images, x forward FLOPs per image),
    ``seconds`` (its core-seconds, :func:`~initmem.study.costs.costs.core_seconds`: its CPU time where recorded, else its
    wall time), ``timer`` (``"cpu"`` or ``"wall"``: which of the two ``seconds`` is), ``hardware``, ``torch`` and
    ``git_commit`` (as the run files record them).
    """
    rows, seen = [], set()
    for path in sorted(Path(results_dir, preset).glob("*/runs/*.nc")):
        ds = read_checked(path)
        c = json.loads(ds.attrs["config"])
        copy = (path.stem, str(ds.attrs.get("created", "")))  # a copy keeps its creation time; a replay does not
        if copy in seen:
            continue
        seen.add(copy)
        eval_size = c["train_eval_size"] + c["val_size"] + c["test_size"]
        trained, evaluated = run_images(
            c["epochs"], c["train_size"], c["batch_size"], ds.sizes["epoch"], eval_size, c["train_eval_size"]
        )
        per_image = forward_flops(c["model"], c["width"], c["image_size"])
        rows.append(
            {
                "sweep": path.parent.parent.name,
                "hash": path.stem,
                "cell": f"{c['model']}@{c['image_size']}",
                "model": c["model"],
                "width": c["width"],
                "image_size": c["image_size"],
                "batch_size": c["batch_size"],
                "optimizer": c["optimizer"],
                "precision": "bf16" if c.get("bf16") else "fp32",
                "flops": float(per_image * (TRAIN_PASSES * trained + evaluated)),
                "seconds": core_seconds(ds),
                "timer": "cpu" if cpu_timed(ds) else "wall",
                "hardware": str(ds.attrs.get("hardware", "?")),
                "torch": str(ds.attrs.get("torch_version", "?")),
                "git_commit": str(ds.attrs.get("git_commit", "?")),
            }
        )
    return pd.DataFrame(rows)


#: The factors besides the cell, each as (:func:`run_table` column and model key, reference value: its term is 0).
FACTORS = (("width", 8), ("optimizer", "sgd"), ("precision", "fp32"))


#: The sweeps whose CPU-timed runs the model is fitted to: the replays of the record's cost configurations, on one
#: machine. Other CPU-timed runs (chapter 11's ladder, trained on another CPU) stay out: the machine is recorded, not
#: fitted.
FIT_SWEEPS = ("cost_replay",)


def fitted_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`run_table` the committed model is fitted and calibrated on: the CPU-timed runs of
    :data:`FIT_SWEEPS`, and every wall-timed run (the record's load)."""
    return runs[(runs["timer"] != "cpu") | runs["sweep"].isin(FIT_SWEEPS)]


def fit(runs: pd.DataFrame) -> dict[str, Any]:
    """The cost model fitted to the CPU-timed rows of ``runs`` (:func:`run_table`; module docstring), as a
    JSON-ready dict: ``overhead_s`` (seconds a run, >= 0; 0 where no cell's runs differ in FLOPs), ``levels`` (cell -> log seconds per FLOP), ``effective_gflops`` (cell -> exp(-level) / 1e9, to
    read), ``width``, ``optimizer`` and ``precision`` (value -> log-ratio; the references 8, ``sgd`` and ``fp32`` are
    0; a width is a string key, as in JSON), ``batch_slope``, ``calibration`` (:func:`calibration` over the CPU-timed
    runs), ``load`` (the same over the wall-timed runs; None without any) and ``provenance`` (the runs fitted).

    Raises ValueError when no run records its CPU time, or when the runs do not separate the terms (a factor's value
    that only ever runs in one cell with nothing else beside it, say).
    """
    timed = runs[runs["timer"] == "cpu"]
    if timed.empty:
        raise ValueError("fit: no run records its CPU time (cpu_time_s); train some with scripts/cost_replay_spec.py")
    cells = sorted(timed["cell"].unique())
    columns = {f"level {c}": (timed["cell"] == c).to_numpy(float) for c in cells}
    others = {}
    for key, reference in FACTORS:
        others[key] = sorted(v for v in timed[key].unique() if v != reference)
        columns |= {f"{key} {v}": (timed[key] == v).to_numpy(float) for v in others[key]}
    batches = timed["batch_size"].nunique() > 1
    if batches:
        columns["batch_slope"] = np.log2(timed["batch_size"].to_numpy() / BASE_BATCH)
    x = np.column_stack(list(columns.values()))
    if np.linalg.matrix_rank(x) < x.shape[1]:
        raise ValueError(f"fit: the CPU-timed runs do not separate the terms {', '.join(columns)}; add runs that do")
    overhead, terms = _least_squares(x, timed["flops"].to_numpy(), timed["seconds"].to_numpy())
    beta = dict(zip(columns, terms))

    def term(name: str) -> float:
        return round(float(beta[name]), DIGITS)

    levels = {c: term(f"level {c}") for c in cells}
    model: dict[str, Any] = {
        "overhead_s": round(overhead, DIGITS),
        "levels": levels,
        "effective_gflops": {c: round(float(np.exp(-v) / 1e9), 2) for c, v in levels.items()},
        "batch_slope": term("batch_slope") if batches else 0.0,
    }
    for key, reference in FACTORS:
        model[key] = {str(reference): 0.0, **{str(v): term(f"{key} {v}") for v in others[key]}}
    model["calibration"] = calibration(model, timed)
    wall = runs[runs["timer"] == "wall"]
    model["load"] = calibration(model, wall) if not wall.empty else None
    model["provenance"] = {
        "runs": len(timed),
        "wall_timed_runs": len(wall),
        "sweeps": {str(s): int(n) for s, n in timed["sweep"].value_counts().sort_index().items()},
        "hardware": sorted(timed["hardware"].unique()),
        "torch": sorted(timed["torch"].unique()),
        "run_git_commits": sorted(timed["git_commit"].unique()),
    }
    return model


def _least_squares(x: np.ndarray, flops: np.ndarray, seconds: np.ndarray) -> tuple[float, np.ndarray]:
    """(overhead, terms) minimising the squared log error of ``overhead + flops * exp(x @ terms)`` against
    ``seconds`` with ``overhead >= 0``, from the linear fit of ``log(seconds / flops)`` with no overhead."""
    start = np.linalg.lstsq(x, np.log(seconds / flops), rcond=None)[0]

    def parts(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flop_seconds = flops * np.exp(x @ p[1:])
        return flop_seconds, p[0] + flop_seconds

    def residuals(p: np.ndarray) -> np.ndarray:
        return np.log(parts(p)[1]) - np.log(seconds)

    def jacobian(p: np.ndarray) -> np.ndarray:
        flop_seconds, total = parts(p)
        return np.column_stack([1 / total, x * (flop_seconds / total)[:, None]])

    lower = np.r_[0.0, np.full(x.shape[1], -np.inf)]
    tight = {"xtol": 1e-14, "ftol": 1e-14, "gtol": 1e-14}
    p = least_squares(residuals, np.r_[0.0, start], jac=jacobian, bounds=(lower, np.inf), **tight).x
    return float(p[0]), p[1:]


def calibration(model: Mapping[str, Any], runs: pd.DataFrame) -> dict[str, float]:
    """Recorded / estimated seconds over ``runs`` (:func:`run_table`; cells the model lacks are left out):
    ``runs``, ``median``, ``within_1_5x`` (the share in [1/1.5, 1.5]), ``p10``, ``p90``, ``min``, ``max`` and
    ``total`` (the sum of recorded over the sum of estimated seconds)."""
    known = runs[runs["cell"].isin(model["levels"])]
    estimated = np.array(
        [
            model_seconds(model, r.flops, model["levels"][r.cell], r.width, r.batch_size, r.optimizer, r.precision)
            for r in known.itertuples(index=False)
        ]
    )
    return ratio_figures(known["seconds"].to_numpy() / estimated, known["seconds"].sum() / estimated.sum())


def ratio_figures(ratio: np.ndarray, total: float) -> dict[str, float]:
    """:func:`calibration`'s figures of recorded / estimated ratios ``ratio`` (``total``: sum over sum)."""
    figures = {
        "median": np.median(ratio),
        "within_1_5x": np.mean((ratio <= 1.5) & (ratio >= 1 / 1.5)),
        "p10": np.quantile(ratio, 0.1),
        "p90": np.quantile(ratio, 0.9),
        "min": ratio.min(),
        "max": ratio.max(),
        "total": total,
    }
    return {"runs": len(ratio), **{key: round(float(value), 4) for key, value in figures.items()}}
