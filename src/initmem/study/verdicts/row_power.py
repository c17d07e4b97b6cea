"""The power of each sized ledger row: how often its design would say "reproduced in size" if the paper's number were
the truth, at the noise its own runs show, and how many seeds would reach 80 %.

A row's design is its claim's (the model of :mod:`initmem.study.verdicts.error_rates`: ``n_sigma`` sigma_w x ``n_seeds``
seeds, a linear memory profile, Gaussian noise in each (sigma_w, seed) cell), judged through the ledger's rules by
:func:`initmem.study.verdicts.error_rates.simulate`'s machinery. The noise is measured on the row's runs (:func:`cell_noise`:
the residual standard deviation of a two-way additive fit, sigma_w plus seed, of the carrying predictor's test
accuracy, pooled over the row's conditions), so the power answers "could this design have said it, at this noise?":
an inconclusive row at low power says the design cannot tell; at high power, that it could and did not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ..experiments import judged_by
from ..statistics.stats import finite_runs
from . import rules
from .error_rates import Design, _judged
from .ledger import claim_record

__all__ = ["TARGET_POWER", "RowDesign", "cell_noise", "row_designs", "power_at_paper", "power_table", "power_columns"]

#: The power a design should reach at the paper's number.
TARGET_POWER = 0.8


@dataclass(frozen=True)
class RowDesign:
    """A sized ledger row (``row``: ``"C1"``, ``"C2 Adam"``, ``"C4 L2"``), its simulated :class:`Design` and the
    within-cell noise standard deviation (pp) measured on its runs, with the residual degrees of freedom."""

    row: str
    design: Design
    noise_sd: float
    noise_df: int


def cell_noise(cells: Sequence[xr.DataArray]) -> tuple[float, int]:
    """The within-cell noise of ``cells`` (each test accuracies, %, dims ``(sigma_w, seed)``; NaN runs dropped with
    their seed): the pooled residual standard deviation (pp) of a fit ``sigma_w effect + seed effect`` per cell,
    and its degrees of freedom ``sum((k - 1) (n - 1))``."""
    ss, df = 0.0, 0
    for acc in cells:
        values = acc.transpose("sigma_w", "seed").values
        values = values[:, np.isfinite(values).all(axis=0)]
        k, n = values.shape
        if k < 2 or n < 2:
            continue
        residual = values - values.mean(axis=1, keepdims=True) - values.mean(axis=0, keepdims=True) + values.mean()
        ss += float((residual**2).sum())
        df += (k - 1) * (n - 1)
    return (math.sqrt(ss / df) if df else math.nan), df


def _c1_value() -> float:
    return claim_record("C1")["values"][""]


def row_designs(results: Mapping[str, xr.Dataset], predictors: Mapping[str, str]) -> list[RowDesign]:
    """The sized rows of C1, C2 (each adaptive optimizer the experiment that judges them holds) and C4 (each lever of
    the experiment that judges it; :func:`initmem.study.experiments.judged_by`), with their noise on the predictor each row is judged on (``predictors``: row ->
    ``"selected"`` or ``"final"``, the ledger's ``predictor`` column)."""
    out = []
    optimizers, levers_experiment = judged_by("C1"), judged_by("C4")
    opt = results.get(optimizers)
    if opt is not None:
        sgd = opt.sel(optimizer="sgd")
        n_sigma, n_seeds = opt.sizes["sigma_w"], opt.sizes["seed"]
        var = f"{predictors.get('C1', 'selected')}_test_acc"
        noise, df = cell_noise([finite_runs(sgd, var)])
        out.append(RowDesign("C1", Design("C1", "", optimizers, n_sigma, n_seeds, _c1_value()), noise, df))
        for part, value in claim_record("C2")["values"].items():
            name = part.lower()
            row = f"C2 {part}"
            if name not in opt["optimizer"].values or row not in predictors:
                continue
            var = f"{predictors[row]}_test_acc"
            noise, df = cell_noise([finite_runs(sgd, var), finite_runs(opt.sel(optimizer=name), var)])
            design = Design("C2", part, optimizers, n_sigma, n_seeds, value, reference=_c1_value())
            out.append(RowDesign(row, design, noise, df))
    lr = results.get(levers_experiment)
    if lr is not None:
        lrs, wds = sorted(map(float, lr["lr"].values)), sorted(map(float, lr["weight_decay"].values))
        keep = lr.sel(lr=lrs[0], weight_decay=wds[0])
        levers = {"larger lr": (lrs[-1], wds[0]), "L2": (lrs[0], wds[-1]), "both": (lrs[-1], wds[-1])}
        for part, (a, w) in levers.items():
            row = f"C4 {part}"
            if row not in predictors:
                continue
            var = f"{predictors[row]}_test_acc"
            noise, df = cell_noise([finite_runs(keep, var), finite_runs(lr.sel(lr=a, weight_decay=w), var)])
            value = claim_record("C4")["values"][part]
            design = Design("C4", part, levers_experiment, lr.sizes["sigma_w"], lr.sizes["seed"], value, _c1_value())
            out.append(RowDesign(row, design, noise, df))
    return out


def power_at_paper(design: Design, noise_sd: float, reps: int, seed: int = 0) -> float:
    """The share of ``reps`` simulated replicates of ``design`` at within-cell noise ``noise_sd`` (pp), the truth at
    the paper's number, that the ledger's rules call "reproduced in size"."""
    rng = np.random.default_rng([seed, design.n_sigma, design.n_seeds])
    verdicts = _judged(design, rng, float(design.paper), reps, noise_sd)
    return float(np.mean([v == rules.IN_SIZE for v in verdicts]))


def power_table(rows: Sequence[RowDesign], seeds: Sequence[int], reps: int, seed: int = 0) -> xr.Dataset:
    """:func:`power_at_paper` of each row at its own noise, at its own number of seeds and then at each larger one of
    ``seeds`` until it reaches :data:`TARGET_POWER` (NaN past that, and below the row's own): a Dataset with
    ``power`` (share, dims ``(row, n_seeds)``), ``noise_sd`` (pp), ``noise_df`` and ``seeds_now`` (dims ``(row,)``),
    and the attributes ``reps``, ``seed`` and ``target``."""
    counts = sorted({int(n) for n in seeds} | {r.design.n_seeds for r in rows})
    power = np.full((len(rows), len(counts)), np.nan)
    for i, r in enumerate(rows):
        for j, n in enumerate(counts):
            if n < r.design.n_seeds:
                continue
            design = Design(r.design.claim, r.design.part, r.design.experiment, r.design.n_sigma, n,
                            r.design.paper, r.design.reference)  # fmt: skip
            power[i, j] = power_at_paper(design, r.noise_sd, reps, seed)
            if power[i, j] >= TARGET_POWER:
                break
    names = [r.row for r in rows]
    return xr.Dataset(
        {
            "power": (("row", "n_seeds"), power),
            "noise_sd": ("row", [r.noise_sd for r in rows]),
            "noise_df": ("row", [r.noise_df for r in rows]),
            "seeds_now": ("row", [r.design.n_seeds for r in rows]),
        },
        coords={"row": names, "n_seeds": counts},
        attrs={"reps": int(reps), "seed": int(seed), "target": TARGET_POWER},
    )


def power_columns(table: xr.Dataset) -> dict[str, dict[str, str]]:
    """For each row of a :func:`power_table`: ``{"power": "38 % (sd 2.4 pp)", "seeds for 80 %": "20" | "more than
    20"}``, the power at the row's own seeds and the fewest simulated seeds that reach :data:`TARGET_POWER`."""
    out = {}
    for row in table["row"].values:
        one = table.sel(row=row)
        now = int(one["seeds_now"])
        power = one["power"]
        reached = [int(n) for n in power["n_seeds"].values if float(power.sel(n_seeds=n)) >= TARGET_POWER]
        most = int(power["n_seeds"].values[np.isfinite(power.values)].max())
        out[str(row)] = {
            "power": f"{100 * float(power.sel(n_seeds=now)):.0f} % (noise sd {float(one['noise_sd']):.1f} pp)",
            "seeds for 80 %": str(min(reached)) if reached else f"more than {most}",
        }
    return out
