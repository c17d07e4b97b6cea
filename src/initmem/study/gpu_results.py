"""The paper-scale GPU results (preset ``gpu``): reading them, the ledger's "paper scale (GPU)" column, the summary.

``benchmarks/gpu_oneshot.py`` runs experiment 01 at preset ``gpu`` (the paper's data and network, one seed, four
sigma_w) on one GPU within a time budget (:func:`initmem.study.timed.run_timed_experiment`), in the layout of every
preset::

    results/gpu/<EXPERIMENT>/runs/<hash>[.stacked<K>].nc   one ordinary run file per finished run
    results/gpu/<EXPERIMENT>.nc                             the combined Dataset (optimizers whose every run finished)
    results/gpu/oneshot.json                                throughput, parity, trainer, plan, status of every run
    results/gpu/summary.txt                                 the one-page summary the script printed

This module reads that folder; it trains nothing. The column is judged by the ledger's one judge,
:func:`initmem.study.claims.reproduction_table`: with one seed nothing can be cross-fitted, so each row shows the raw
spreads ("1 seed, no interval") beside the verdict (inconclusive). Spreads in pp of the selected test accuracy.
"""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from ..run import optimizers
from ..run.thresholds import INTERPOLATION_THRESHOLD
from ..run.variables import CLOCKS
from . import claims
from .experiments import find
from .layout import results_paths
from .results import load_results

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "GPU_PRESET",
    "EXPERIMENT",
    "MANIFEST",
    "SUMMARY",
    "COLUMN",
    "load_paper_scale",
    "load_manifest",
    "optimizer_summary",
    "paper_scale",
    "ledger_column",
]

#: The preset of these results (``results/<GPU_PRESET>/``).
GPU_PRESET = "gpu"
#: The experiment the one-shot script runs: the first whose module defines the :data:`GPU_PRESET` (01).
EXPERIMENT = next(e.name for e in find(lambda e: GPU_PRESET in e.presets and e.spec is not None))
#: The script's record of the session (throughput, parity, trainer, plan, per-run status), JSON.
MANIFEST = "oneshot.json"
#: The one-page summary, as printed.
SUMMARY = "summary.txt"
#: The ledger column's name.
COLUMN = "paper scale (GPU)"


def load_paper_scale(results_dir: str | os.PathLike = "results") -> xr.Dataset | None:
    """The combined Dataset of 01 at preset ``gpu`` under ``results_dir`` (dims ``sigma_w``, ``seed``, ``optimizer``,
    ``epoch``, ``layer``), its checksum verified (:func:`initmem.study.results.load_results`); None if there is none."""
    return load_results(results_dir, GPU_PRESET, [EXPERIMENT]).get(EXPERIMENT)


def load_manifest(results_dir: str | os.PathLike = "results") -> dict[str, Any]:
    """``<results_dir>/gpu/oneshot.json`` as a dict ({} if absent or unreadable)."""
    path = results_paths(results_dir, GPU_PRESET, EXPERIMENT)[1].parent / MANIFEST
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def optimizer_summary(ds: xr.Dataset) -> pd.DataFrame:
    """One row per optimizer of a combined Dataset (a pandas DataFrame indexed by optimizer).

    The columns of :func:`initmem.study.summary.summary_table` (``selected_spread_pp`` is the raw spread with one
    seed, ``selected_estimator`` says so), plus ``min_final_train_acc`` (%), ``interpolated`` (runs with a finite
    ``tau_interp``, i.e. train accuracy >= 99.5 % at some recorded epoch), ``runs``, ``diverged`` and the clocks
    reached at the final epoch (means over sigma_w and seeds): ``T_SGD``, ``T_L2``, ``T_adapt``.
    """
    from .summary import summary_table

    table = summary_table(ds, over="sigma_w", by="optimizer")
    extra: dict[str, list[float]] = {"min_final_train_acc": [], "interpolated": [], "runs": [], "diverged": []}
    extra.update({clock: [] for clock in CLOCKS})
    for name in table.index:
        sub = ds.sel(optimizer=name)
        tau = np.asarray(sub["tau_interp"].values, dtype=float).ravel()
        extra["min_final_train_acc"].append(float(sub["final_train_acc"].min(skipna=True)))
        extra["interpolated"].append(int(np.isfinite(tau).sum()))
        extra["runs"].append(int(tau.size))
        extra["diverged"].append(int(np.nansum(sub["diverged"].values)))
        for clock in CLOCKS:
            final = f"final_{clock}"
            extra[clock].append(float(sub[final].mean(skipna=True)) if final in sub else math.nan)
    return table.assign(**extra)


def _epochs(ds: xr.Dataset) -> int:
    return int(json.loads(ds.attrs["spec"])["base"]["epochs"])


def _scale(ds: xr.Dataset, manifest: dict[str, Any]) -> str:
    """'H200, 12 epochs, 1 seed, 4 sigma_w in [0.1, 2.5], full CIFAR-10, resnet9 w64, b=128, bf16, stacked'."""
    base = json.loads(ds.attrs["spec"])["base"]
    sigmas = [float(s) for s in ds["sigma_w"].values]
    seeds = ds.sizes.get("seed", 1)
    parts = [
        str(ds.attrs.get("hardware", "?")),
        f"{_epochs(ds)} epochs",
        f"{seeds} seed{'s' if seeds > 1 else ''}",
        f"{len(sigmas)} sigma_w in [{min(sigmas):g}, {max(sigmas):g}]",
        "full CIFAR-10" if base.get("train_size") is None else f"n={base['train_size']}",
        f"{base.get('model')} w{base.get('width')}, b={base.get('batch_size')}",
    ]
    parts += ["bf16"] if base.get("bf16") else []
    parts += [str(manifest["trainer"]["mode"])] if manifest.get("trainer") else []
    if ds.attrs.get("sweep_status", "complete") != "complete":
        parts.append(f"run {ds.attrs['sweep_status']}")
    return ", ".join(parts)


def _spreads(table: pd.DataFrame, names: list[str]) -> str:
    """Optimizers' spreads as the summary table gives them: cross-fitted with their intervals (2 seeds or more), or
    raw with one seed: ``"Adam 1.2 pp against SGD 9.8 pp (raw, 1 seed, no interval)"``."""
    rows = [table.loc[name] for name in names]
    if all(row["selected_estimator"] == "cross-fitted" for row in rows):
        parts = [
            f"{optimizers.label(n)} {r['selected_spread_pp']:.1f} pp [{r['selected_ci95_low']:.1f}, "
            f"{r['selected_ci95_high']:.1f}]"
            for n, r in zip(names, rows)
        ]
        how = f"cross-fitted, {int(min(r['selected_n_seeds'] for r in rows))} seeds"
    else:
        parts = [f"{optimizers.label(n)} {r['selected_raw_spread_pp']:.1f} pp" for n, r in zip(names, rows)]
        how = f"raw, {int(min(r['selected_n_seeds'] for r in rows))} seed, no interval"
    return f"{' against '.join(parts)} ({how})"


def _measured(row: pd.Series, table: pd.DataFrame) -> str:
    """What the GPU results measured for one ledger row, before its verdict."""
    optimizer = {optimizers.label(name): name for name in table.index}.get(str(row["part"]), "")
    if row["claim"] == "C1" and "sgd" in table.index:
        sgd = table.loc["sgd"]
        return (
            f"spread: {_spreads(table, ['sgd'])}, final epoch {sgd['final_raw_spread_pp']:.1f} pp raw; lowest final "
            f"train acc {sgd['min_final_train_acc']:.1f} %, {int(sgd['interpolated'])}/{int(sgd['runs'])} runs "
            f"reached {INTERPOLATION_THRESHOLD:g} %"
        )
    if row["claim"] == "C2" and {optimizer, "sgd"} <= set(table.index):
        return f"spreads: {_spreads(table, [optimizer, 'sgd'])}"
    if math.isfinite(row["effect"]):
        interval = "no interval" if row["seeds"] < 2 else f"[{row['effect_low']:.3g}, {row['effect_high']:.3g}]"
        unit = f" {row['unit']}" if row["unit"] else ""
        return f"effect {row['effect']:.3g}{unit} ({int(row['seeds'])} seed, {interval})"
    return "not measured"


def paper_scale(results_dir: str | os.PathLike = "results") -> str:
    """The scale of the GPU results in one line (hardware, epochs, seeds, sigma_w grid, data, network, precision,
    trainer, and the run's status if it stopped early); "" when there are none."""
    ds = load_paper_scale(results_dir)
    return "" if ds is None else _scale(ds, load_manifest(results_dir))


def ledger_column(results_dir: str | os.PathLike = "results") -> pd.Series | None:
    """The ledger's "paper scale (GPU)" column (:data:`COLUMN`): one text per ledger row that the GPU results of
    01 decide (C1, each part of C2, C7), indexed like :func:`initmem.study.claims.reproduction_table`; None when
    ``results_dir`` holds no GPU results.

    Each text says what was measured (the spreads: raw, with one seed), then the verdict and its reason from
    :func:`~initmem.study.claims.reproduction_table` on these results: the ledger's one judge. The scale they were
    measured at is :func:`paper_scale`. An optimizer that did not finish is absent from the results, and so are
    its rows.
    """
    import pandas as pd

    ds = load_paper_scale(results_dir)
    if ds is None:
        return None
    table = claims.reproduction_table({EXPERIMENT: ds})
    spreads = optimizer_summary(ds)
    texts = {
        key: f"{_measured(row, spreads)}; {row['verdict']}: {row['reason']}"
        for key, row in table.iterrows()
        if row["experiment"] == EXPERIMENT
    }
    return pd.Series(texts, name=COLUMN, dtype=object)
