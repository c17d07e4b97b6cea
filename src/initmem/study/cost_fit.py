"""Fit the cost model of :mod:`initmem.study.costs` to the seconds the committed runs recorded: their CPU time where
they record one, else their wall time (:func:`initmem.study.costs.core_seconds`; the record's runs before session 17
record wall time only, which counts the machine's load: each run against the median of its own configuration is
within 1.5x for 63 % of them, a ceiling for any model of their wall time).

The model (one line per factor, each an interpretable log-ratio):

    log(seconds / FLOPs) = level[network @ image size] + batch_slope * log2(batch / 64) + optimizer[name]
                           + precision[name]

where FLOPs are a run's trained and evaluated images times their FLOPs (:mod:`initmem.study.flops`), so that
``exp(-level)`` is the effective FLOP/s of one core for that network and image size, and width enters through the
FLOPs alone (the record holds width 8 only). It is fitted in two steps, because the record's runs shared two cores
with other jobs, and the load a sweep ran under differs from sweep to sweep by up to 4x:

1. ``batch_slope``, the optimizer terms and the contrasts between the networks of one sweep are the least-squares
   fit of ``log(seconds / FLOPs)`` with one free term per sweep (an experiment's run folder), so that they compare
   runs that ran side by side and a busy sweep's load does not pass for an optimizer's cost (an optimizer no sweep
   runs beside SGD, or a batch size no sweep runs beside another, gets no term: it counts as the reference);
2. each network's ``level`` is the median over its runs of what the other terms leave, so that the median run's
   recorded / estimated ratio is 1 (the estimate is a typical run on the development machine under its usual load).

``precision`` is 0 (a factor of 1) for fp32. A bf16 run cannot be compared with fp32 inside its own sweep (a
sweep trains one precision), so its term is measured on **twins** instead: the median log-ratio of each bf16 run's
seconds to an fp32 run of the same configuration (all else equal) trained by the same commit on the same machine
(chapter 01's parity study and its fp32 replays); with no twin there is no bf16 term. bf16 runs then take part in
step 2 with their term removed, as every run does with its optimizer's.

* :func:`run_table` -- one row per distinct run of a preset's committed run files;
* :func:`fit` -- the model's coefficients and its calibration over the runs, as the JSON-ready dict
  :mod:`initmem.study.costs` reads (written by ``scripts/fit_costs.py``);
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

from ..sweeps.store import read_checked
from .costs import BASE_BATCH, core_seconds, log_seconds_per_flop, run_images
from .flops import TRAIN_PASSES, forward_flops

__all__ = ["DIGITS", "run_table", "fit", "calibration"]

#: Decimals the fitted log-ratios keep (a relative error of 1e-5 in seconds at most): the table stays readable and
#: the same from one refit to the next.
DIGITS = 5


def run_table(results_dir: str | os.PathLike, preset: str = "cpu") -> pd.DataFrame:
    """One row per distinct run (by config hash and creation time: a run copied into two experiments' folders counts
    once, in the first; a replay of it, trained again, counts apart)
    of ``<results_dir>/<preset>/*/runs/*.nc``, sorted by folder and hash.

    Columns: ``sweep`` (the experiment folder), ``hash``, ``cell`` (``"<model>@<image size>"``), ``model``,
    ``width``, ``image_size``, ``batch_size``, ``optimizer``, ``precision``, ``flops`` (the run's total: trained
    images x :data:`~initmem.study.flops.TRAIN_PASSES` + evaluated images, x forward FLOPs per image),
    ``seconds`` (its core-seconds, :func:`~initmem.study.costs.core_seconds`: its CPU time where recorded, else its
    wall time), ``hardware``, ``torch`` and ``git_commit`` (as the run files record them),
    ``twin`` (its configuration but the precision, as JSON: runs that differ in precision alone share it).
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
                "twin": json.dumps({k: v for k, v in c.items() if k != "bf16"}, sort_keys=True),
                "flops": float(per_image * (TRAIN_PASSES * trained + evaluated)),
                "seconds": core_seconds(ds),
                "hardware": str(ds.attrs.get("hardware", "?")),
                "torch": str(ds.attrs.get("torch_version", "?")),
                "git_commit": str(ds.attrs.get("git_commit", "?")),
            }
        )
    return pd.DataFrame(rows)


def fit(runs: pd.DataFrame) -> dict[str, Any]:
    """The cost model fitted to ``runs`` (:func:`run_table`), as a JSON-ready dict: ``levels`` (cell ->
    log seconds per FLOP), ``effective_gflops`` (cell -> exp(-level) / 1e9, to read), ``batch_slope``,
    ``optimizer`` and ``precision`` (name -> log-ratio; ``sgd`` and ``fp32`` are 0), ``calibration``
    (:func:`calibration` over ``runs``) and ``provenance`` (the runs it was fitted to).
    """
    y = np.log(runs["seconds"] / runs["flops"]).to_numpy()
    sweeps = sorted(runs["sweep"].unique())
    # a term only where a sweep compares it with the reference (an optimizer beside SGD, two batch sizes): one no
    # sweep compares would trade off against that sweep's own term, so it counts as the reference (0)
    by_sweep = runs.groupby("sweep")
    optimizers = sorted({o for _, g in by_sweep if "sgd" in set(g["optimizer"]) for o in g["optimizer"]} - {"sgd"})
    batches = any(g["batch_size"].nunique() > 1 for _, g in by_sweep)
    # the cells beside the first of a sweep get a term (they ran side by side); the levels are fitted in step 2
    contrasts = sorted({cell for _, g in runs.groupby("sweep") for cell in sorted(g["cell"].unique())[1:]})
    columns = (
        [(runs["sweep"] == s).to_numpy(float) for s in sweeps]
        + [(runs["cell"] == c).to_numpy(float) for c in contrasts]
        + [(runs["optimizer"] == o).to_numpy(float) for o in optimizers]
        + ([np.log2(runs["batch_size"].to_numpy() / BASE_BATCH)] if batches else [])
    )
    beta = np.linalg.lstsq(np.column_stack(columns), y, rcond=None)[0]
    k = len(sweeps) + len(contrasts)
    terms = zip(optimizers, beta[k : k + len(optimizers)], strict=True)
    optimizer = {"sgd": 0.0, **{o: round(float(b), DIGITS) for o, b in terms}}
    slope = round(float(beta[-1]), DIGITS) if batches else 0.0
    precision = {"fp32": 0.0, **_twin_terms(runs)}
    rest = (
        y
        - slope * np.log2(runs["batch_size"].to_numpy() / BASE_BATCH)
        - runs["optimizer"].map(lambda o: optimizer.get(o, 0.0)).to_numpy()
        - runs["precision"].map(lambda name: precision.get(name, 0.0)).to_numpy()
    )
    levels = {
        cell: round(float(np.median(rest[(runs["cell"] == cell).to_numpy()])), DIGITS)
        for cell in sorted(runs["cell"].unique())
    }
    model: dict[str, Any] = {
        "levels": levels,
        "effective_gflops": {cell: round(float(np.exp(-v) / 1e9), 2) for cell, v in levels.items()},
        "batch_slope": slope,
        "optimizer": optimizer,
        "precision": precision,
    }
    model["calibration"] = calibration(model, runs)
    model["provenance"] = {
        "runs": len(runs),
        "sweeps": {s: int((runs["sweep"] == s).sum()) for s in sweeps},
        "widths": sorted(int(w) for w in runs["width"].unique()),
        "hardware": sorted(runs["hardware"].unique()),
        "torch": sorted(runs["torch"].unique()),
        "run_git_commits": sorted(runs["git_commit"].unique()),
    }
    return model


def _twin_terms(runs: pd.DataFrame) -> dict[str, float]:
    """Each precision but fp32 -> the median log-ratio of its runs' seconds to their fp32 twins' (the same ``twin``
    configuration, ``git_commit`` and ``hardware``), rounded to :data:`DIGITS`; a precision without twins is left
    out."""
    fp32 = runs[runs["precision"] == "fp32"].set_index(["twin", "git_commit", "hardware"])["seconds"]
    fp32 = fp32[~fp32.index.duplicated()]
    terms = {}
    for name, group in runs[runs["precision"] != "fp32"].groupby("precision"):
        keys = list(zip(group["twin"], group["git_commit"], group["hardware"], strict=True))
        matched = [(sec, fp32[key]) for sec, key in zip(group["seconds"], keys, strict=True) if key in fp32.index]
        if matched:
            terms[str(name)] = round(float(np.median([np.log(a / b) for a, b in matched])), DIGITS)
    return terms


def calibration(model: Mapping[str, Any], runs: pd.DataFrame) -> dict[str, float]:
    """Recorded / estimated seconds over ``runs`` (:func:`run_table`; cells the model lacks are left out):
    ``runs``, ``median``, ``within_1_5x`` (the share in [1/1.5, 1.5]), ``p10``, ``p90``, ``min``, ``max`` and
    ``total`` (the sum of recorded over the sum of estimated seconds)."""
    known = runs[runs["cell"].isin(model["levels"])]
    log_rate = np.array(
        [
            log_seconds_per_flop(model, model["levels"][r.cell], r.batch_size, r.optimizer, r.precision)
            for r in known.itertuples(index=False)
        ]
    )
    estimated = known["flops"].to_numpy() * np.exp(log_rate)
    ratio = known["seconds"].to_numpy() / estimated
    figures = {
        "median": np.median(ratio),
        "within_1_5x": np.mean((ratio <= 1.5) & (ratio >= 1 / 1.5)),
        "p10": np.quantile(ratio, 0.1),
        "p90": np.quantile(ratio, 0.9),
        "min": ratio.min(),
        "max": ratio.max(),
        "total": known["seconds"].sum() / estimated.sum(),
    }
    return {"runs": len(ratio), **{key: round(float(value), 4) for key, value in figures.items()}}
