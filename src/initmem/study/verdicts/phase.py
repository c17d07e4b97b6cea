"""The phase diagram's cells (chapters 03 and 10): where in the (learning rate, decay) plane the memory of sigma_w
ends, measured against T5's margin ``x = T_L2 - ln(|W0| / |W*|)`` (theory T5 derives it; chapter 10 explains how
each quantity is measured).

:func:`cell_table` gives one row per (lr, weight_decay) cell: the norms ``|W0|`` (initial, largest sigma_w) and
``|W*|`` (final, smallest sigma_w), the clocks at the last step, ``x``, and each cell's memory **gap**
``acc(smallest sigma_w) - acc(largest sigma_w)`` (pp, per seed via :func:`gap`). :func:`equilibrium_scaling` sets
T5's law ``|W*| ~ (eta / lambda)^(1/4)`` beside the measured norms; :func:`predicted_decay_at` places a grid around
the predicted boundary from a smaller sweep's runs; :func:`batch_axis_configs` lists the runs a map of the batch
axis would add. B1's tests on these cells are in :mod:`initmem.study.verdicts.boundary`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ..statistics.analysis import final_norms
from ..statistics.stats import LEVEL, finite_runs, mean_interval, seed_mean

__all__ = [
    "cell_table",
    "gap",
    "equilibrium_scaling",
    "predicted_decay_at",
    "batch_axis_configs",
]

_CELL = ("lr", "weight_decay")


def gap(ds: xr.Dataset, var: str = "selected_test_acc") -> xr.DataArray:
    """Per seed, ``var`` at the smallest sigma_w minus at the largest (pp), every other dimension kept; diverged runs
    are NaN (:func:`initmem.study.statistics.stats.finite_runs`)."""
    values = finite_runs(ds, var)
    sigmas = sorted(float(s) for s in ds["sigma_w"].values)
    return values.sel(sigma_w=sigmas[0], drop=True) - values.sel(sigma_w=sigmas[-1], drop=True)


def cell_table(ds: xr.Dataset) -> Any:
    """One row per (lr, weight_decay) cell of an SGD + coupled-L2 sweep (03, 10): a pandas DataFrame indexed by
    ``lr`` and ``weight_decay``.

    Columns: ``W0`` (initial kernel norm at the largest sigma_w), ``W_star`` (final kernel norm at the smallest
    sigma_w), ``W_top`` (final kernel norm at the largest sigma_w), ``log_ratio`` = ln(W0 / W_star), ``T_L2`` and
    ``T_SGD`` (at the last step), ``x`` = T_L2 - log_ratio; for the selected and the final predictor
    (``{v}`` = selected, final) the gap's mean over seeds and 95 % t-interval (``{v}_gap``, ``{v}_gap_low``,
    ``{v}_gap_high``, pp), its standard deviation over seeds (``{v}_gap_sd``, pp) and finite seeds (``{v}_gap_seeds``), and ``final_train_acc`` (mean) and ``min_final_train_acc``. Norms are seed means. A cell
    without runs (the sweep's grids need not fill the lr x weight_decay rectangle) has no row.
    """
    import pandas as pd

    sigmas = sorted(float(s) for s in ds["sigma_w"].values)
    initial = seed_mean(ds["weight_norm"].isel(epoch=0))
    final = seed_mean(final_norms(ds))
    gaps = {name: gap(ds, f"{name}_test_acc") for name in ("selected", "final")}
    rows = []
    for lr in ds["lr"].values:
        for wd in ds["weight_decay"].values:
            at = {"lr": lr, "weight_decay": wd}
            if not np.isfinite(ds["final_T_L2"].sel(at)).any():
                continue  # a cell beside the grid that no run holds (a sweep with ``also``)
            w0 = float(initial.sel(at).sel(sigma_w=sigmas[-1]))
            w_star = float(final.sel(at).sel(sigma_w=sigmas[0]))
            cell = ds.sel(at)
            row = {
                "lr": float(lr),
                "weight_decay": float(wd),
                "W0": w0,
                "W_star": w_star,
                "W_top": float(final.sel(at).sel(sigma_w=sigmas[-1])),
                "log_ratio": math.log(w0 / w_star),
                "T_L2": float(cell["final_T_L2"].mean()),
                "T_SGD": float(cell["final_T_SGD"].mean()),
            }
            row["x"] = row["T_L2"] - row["log_ratio"]
            for name, values in gaps.items():
                per_seed = values.sel(at).values
                interval = mean_interval(per_seed)
                row.update(
                    {
                        f"{name}_gap": interval.estimate,
                        f"{name}_gap_low": interval.low,
                        f"{name}_gap_high": interval.high,
                        f"{name}_gap_sd": float(np.nanstd(per_seed, ddof=1)),
                        f"{name}_gap_seeds": int(np.isfinite(per_seed).sum()),
                    }
                )
            row["final_train_acc"] = float(cell["final_train_acc"].mean())
            row["min_final_train_acc"] = float(cell["final_train_acc"].min())
            rows.append(row)
    return pd.DataFrame(rows).set_index(list(_CELL))


def equilibrium_scaling(table: Any) -> dict[str, float]:
    """T5's law for the measured equilibrium norms of the cells with decay: ``|W*| = c (eta / lambda)^(1/4)``.

    Returns ``{"exponent", "exponent_low", "exponent_high", "constant", "cells"}``: the least-squares slope of
    ``ln |W*|`` on ``ln(eta / lambda)`` with its 95 % interval (T5 predicts 0.25), and ``c`` fitted with the exponent
    fixed at 1/4 (``table`` is a :func:`cell_table`; ``predicted_W_star`` = c (eta / lambda)^(1/4) can be set beside
    ``W_star``)."""
    from scipy import stats

    rows = table[table.index.get_level_values("weight_decay") > 0]
    if len(rows) < 3:
        return {
            "exponent": math.nan,
            "exponent_low": math.nan,
            "exponent_high": math.nan,
            "constant": math.nan,
            "cells": len(rows),
        }
    ratio = np.log(rows.index.get_level_values("lr") / rows.index.get_level_values("weight_decay"))
    y = np.log(rows["W_star"].to_numpy())
    fit = stats.linregress(ratio, y)
    half = float(stats.t.ppf(0.5 + LEVEL / 2, len(rows) - 2)) * fit.stderr
    constant = float(np.exp(np.mean(y - 0.25 * ratio)))
    return {
        "exponent": float(fit.slope),
        "exponent_low": float(fit.slope - half),
        "exponent_high": float(fit.slope + half),
        "constant": constant,
        "cells": len(rows),
    }


def predicted_decay_at(ds: xr.Dataset, lrs: Any) -> dict[str, Any]:
    """How a grid is placed around the predicted boundary, from the runs of a smaller sweep ``ds`` (03's cells): the
    schedule's ``sum_eta_per_lr`` (sum_k eta_k / eta, from ``final_T_adapt``), the reference cell (the largest lr
    with the largest lambda) and its measured ``W_star``, ``W0``, and for each learning rate of ``lrs`` the lambda at
    which T5's law puts x = 0 (``{lr: lambda}``; NaN where no lambda up to 10 reaches it).

    With ``|W*|(eta, lambda) = W*_ref ((eta / eta_ref) / (lambda / lambda_ref))^(1/4)``, ``x = lambda eta S -
    ln(W0 / |W*|)`` falls with lambda up to ``lambda = 1 / (4 eta S)`` (where the law's ``|W*|`` grows without bound
    as lambda -> 0, which no real norm does) and rises after it; the boundary is the root on the rising side
    (``scipy.optimize.brentq``)."""
    from scipy import optimize

    table = cell_table(ds)
    decayed = table[table.index.get_level_values("weight_decay") > 0]
    (lr_ref, wd_ref) = max(decayed.index)
    w_ref = float(decayed.loc[(lr_ref, wd_ref), "W_star"])
    w0 = float(table["W0"].mean())
    total = float((ds["final_T_adapt"] / ds["lr"]).mean())

    def x_at(wd: float, lr: float) -> float:
        return wd * lr * total - math.log(w0 / (w_ref * ((lr / lr_ref) / (wd / wd_ref)) ** 0.25))

    boundary = {}
    for lr in np.atleast_1d(lrs):
        lr = float(lr)
        low, high = 1.0 / (4.0 * lr * total), 10.0
        boundary[lr] = optimize.brentq(x_at, low, high, args=(lr,)) if x_at(low, lr) < 0 < x_at(high, lr) else math.nan
    return {
        "sum_eta_per_lr": total,
        "lr_ref": lr_ref,
        "weight_decay_ref": wd_ref,
        "W_star_ref": w_ref,
        "W0": w0,
        "boundary": boundary,
    }


def batch_axis_configs(parameters: Mapping[str, Any], batch_sizes: Sequence[int]) -> list[Any]:
    """The runs a map of the batch axis would add to the phase diagram at ``parameters`` (10's notebook
    parameters): plain SGD without L2 (lambda = 0) at every learning rate of ``lrs``, every batch size of
    ``batch_sizes``, ``sigma_ws`` and ``seeds``, all at the diagram's ``epochs`` (equal epochs, so the batch size
    moves T_SGD = (1/b) sum_k eta_k^2 through both b and the number of steps). The runs the diagram already holds
    (its lambda = 0 row at its own batch size: the same configurations) are left out. Returns
    :class:`~initmem.run.config.RunConfig` objects in the sweep's order, for :func:`initmem.study.costs.costs.estimate_runs`.
    """
    from ...sweeps.spec import SweepSpec
    from ..design.registry import experiment_spec

    diagram = SweepSpec.from_dict(experiment_spec("10_phase_diagram", parameters))
    spec = experiment_spec("10_phase_diagram", {**parameters, "weight_decays": [0.0], "extra_cells": None})
    spec["base"].pop("batch_size")
    spec["grid"] = {"batch_size": sorted(int(b) for b in batch_sizes), **spec["grid"]}
    held = {config.hash() for _, config in diagram.configs()}
    return [config for _, config in SweepSpec.from_dict(spec).configs() if config.hash() not in held]
