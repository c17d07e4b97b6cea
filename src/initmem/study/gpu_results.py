"""The paper-scale GPU results (``results/gpu/``): reading them and the ledger's "paper scale (GPU)" column.

``benchmarks/gpu_oneshot.py`` runs a reduced paper-scale experiment 01 (five optimizers x sigma_w, full CIFAR-10,
ResNet-9 at width 64, batch 128, one seed) on one GPU within a fixed time budget and writes, in the layout of
every other preset (:func:`initmem.study.layout.results_paths` with preset ``gpu``)::

    results/gpu/01_optimizers/runs/<hash>[.stacked<K>].nc   one ordinary run file per finished run
    results/gpu/01_optimizers.nc                             the combined Dataset of the optimizers whose every
                                                             sigma_w run finished (attrs: spec, preset="gpu", ...)
    results/gpu/oneshot.json                                 throughput, parity, plan, status of every run
    results/gpu/summary.txt                                  the one-page summary the script printed

This module reads that folder; it trains nothing. :func:`paper_scale_column` gives one text per claim (C1, C2)
for the ledger, or :data:`NOT_RUN` when the folder holds no results. Accuracies are in percent, spreads in
percentage points (pp) of the validation-selected test accuracy (max - min over sigma_w).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..run.config import ADAPTIVE
from ..run.thresholds import INTERPOLATION_THRESHOLD
from ..run.variables import CLOCKS
from ..sweeps.store import read_checked

__all__ = [
    "GPU_PRESET",
    "EXPERIMENT",
    "MANIFEST",
    "SUMMARY",
    "NOT_RUN",
    "CLAIMS",
    "load_paper_scale",
    "load_manifest",
    "optimizer_summary",
    "paper_scale_column",
]

#: The preset name of these results (``results/<GPU_PRESET>/``).
GPU_PRESET = "gpu"
#: The experiment the one-shot script runs.
EXPERIMENT = "01_optimizers"
#: The script's record of the session (throughput, parity, plan, per-run status), JSON.
MANIFEST = "oneshot.json"
#: The one-page summary, as printed.
SUMMARY = "summary.txt"
#: What the column says for a claim without results.
NOT_RUN = "not run yet"
#: The claims the one-shot run measures.
CLAIMS = ("C1", "C2")


def load_paper_scale(results_dir: str | os.PathLike = "results/gpu") -> xr.Dataset | None:
    """The combined Dataset ``<results_dir>/01_optimizers.nc`` (dims ``sigma_w``, ``seed``, ``optimizer``,
    ``epoch``, ``layer``), fully in memory; None if there is none.

    Read with :func:`initmem.sweeps.store.read_checked` (its checksum verified). ``results_dir`` is the GPU folder
    itself (``results/gpu``), not ``results``. The Dataset can be passed to
    :func:`initmem.study.claims.reproduction_table` as ``{"01_optimizers": ds}`` for the ledger's verdicts.
    """
    path = Path(results_dir) / f"{EXPERIMENT}.nc"
    if not path.is_file():
        return None
    return read_checked(path)


def load_manifest(results_dir: str | os.PathLike = "results/gpu") -> dict[str, Any]:
    """``<results_dir>/oneshot.json`` as a dict ({} if absent or unreadable)."""
    path = Path(results_dir) / MANIFEST
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def optimizer_summary(ds: xr.Dataset) -> "Any":
    """One row per optimizer of a combined Dataset (a pandas DataFrame indexed by optimizer).

    Columns: ``selected_spread_pp`` / ``final_spread_pp`` (seed-mean spread over sigma_w, from
    :func:`initmem.study.summary.summary_table`), ``selected_best_sigma_w`` / ``selected_worst_sigma_w``,
    ``min_final_train_acc`` (%), ``interpolated`` (runs with a finite ``tau_interp``, i.e. train accuracy
    >= 99.5 % at some recorded epoch), ``runs``, ``diverged``, ``max_tau_interp`` (epochs), ``epochs``,
    and the clocks reached at the final epoch (means over sigma_w and seeds): ``T_SGD``, ``T_L2``, ``T_adapt``.
    """
    from .summary import summary_table

    table = summary_table(ds, over="sigma_w", by="optimizer")
    interpolated, runs, diverged, min_train, max_tau, clocks = [], [], [], [], [], {c: [] for c in CLOCKS}
    for name in table.index:
        sub = ds.sel(optimizer=name)
        tau = np.asarray(sub["tau_interp"].values, dtype=float).ravel()
        interpolated.append(int(np.isfinite(tau).sum()))
        runs.append(int(tau.size))
        diverged.append(int(np.nansum(sub["diverged"].values)))
        min_train.append(float(sub["final_train_acc"].min(skipna=True)))
        max_tau.append(float(np.nanmax(tau)) if np.isfinite(tau).any() else math.nan)
        for clock in CLOCKS:
            name_final = f"final_{clock}"
            clocks[clock].append(float(sub[name_final].mean(skipna=True)) if name_final in sub else math.nan)
    table["min_final_train_acc"] = min_train
    table["interpolated"] = interpolated
    table["runs"] = runs
    table["diverged"] = diverged
    table["max_tau_interp"] = max_tau
    table["epochs"] = _epochs(ds)
    for clock, values in clocks.items():
        table[clock] = values
    return table




def _epochs(ds: xr.Dataset) -> int:
    try:
        return int(json.loads(ds.attrs["spec"])["base"]["epochs"])
    except (KeyError, ValueError, TypeError):
        return int(ds["epoch"].max())


def _scale(ds: xr.Dataset, manifest: dict[str, Any]) -> str:
    """'H200, 12 epochs, 1 seed, 4 sigma_w in [0.1, 2.5], full CIFAR-10, ResNet-9 w64, b=128, bf16, stacked'."""
    base = json.loads(ds.attrs.get("spec", "{}")).get("base", {})
    sigmas = [float(s) for s in ds["sigma_w"].values]
    seeds = ds.sizes.get("seed", 1)
    parts = [str(ds.attrs.get("hardware", "?")), f"{_epochs(ds)} epochs", f"{seeds} seed{'s' if seeds > 1 else ''}",
             f"{len(sigmas)} sigma_w in [{min(sigmas):g}, {max(sigmas):g}]"]  # fmt: skip
    train_size = base.get("train_size")
    parts.append("full CIFAR-10" if train_size is None else f"n={train_size}")
    parts.append(f"{base.get('model', 'resnet9')} w{base.get('width')}, b={base.get('batch_size')}")
    if base.get("bf16"):
        parts.append("bf16")
    plan = manifest.get("plan", {})
    if plan.get("mode"):
        parts.append(str(plan["mode"]))
    if manifest.get("status") and manifest["status"] != "complete":
        parts.append(f"run {manifest['status']}")
    return ", ".join(parts)


def paper_scale_column(results_dir: str | os.PathLike = "results/gpu") -> dict[str, str]:
    """The ledger's "paper scale (GPU)" column: ``{"C1": text, "C2": text}``.

    Each text is :data:`NOT_RUN` when ``results_dir`` holds no combined results. Otherwise C1 gives SGD's spread
    (selected and final), the lowest final training accuracy and how many SGD runs interpolated; C2 gives every
    adaptive optimizer's spread beside SGD's. Both end with the scale in parentheses (hardware, epochs, seeds,
    sigma_w grid, data, model, precision, trainer, and the run's status if it stopped early). A claim whose
    optimizers did not finish says so.
    """
    ds = load_paper_scale(results_dir)
    if ds is None:
        return {claim: NOT_RUN for claim in CLAIMS}
    table = optimizer_summary(ds)
    manifest = load_manifest(results_dir)
    planned = {row["optimizer"] for row in manifest.get("optimizer_table", [])} or set(ADAPTIVE)
    scale = f" ({_scale(ds, manifest)})"
    present = list(table.index)
    out: dict[str, str] = {}
    if "sgd" in present:
        row = table.loc["sgd"]
        out["C1"] = (f"SGD spread {row['selected_spread_pp']:.1f} pp (final epoch {row['final_spread_pp']:.1f} pp); "
                     f"lowest final train acc {row['min_final_train_acc']:.1f} %, {int(row['interpolated'])}/{int(row['runs'])} "
                     f"runs reached {INTERPOLATION_THRESHOLD:g} %") + scale  # fmt: skip
    else:
        out["C1"] = "not measured: the GPU run stopped before SGD finished" + scale
    adaptive = [o for o in ADAPTIVE if o in present]
    if "sgd" in present and adaptive:
        parts = ", ".join(f"{o} {table.loc[o, 'selected_spread_pp']:.1f} pp" for o in adaptive)
        missing = [o for o in ADAPTIVE if o in planned and o not in present]
        out["C2"] = f"{parts} against SGD {table.loc['sgd', 'selected_spread_pp']:.1f} pp"
        if missing:
            out["C2"] += f" ({', '.join(missing)} not finished)"
        out["C2"] += scale
    else:
        out["C2"] = "not measured: the GPU run did not finish SGD and an adaptive optimizer" + scale
    return out
