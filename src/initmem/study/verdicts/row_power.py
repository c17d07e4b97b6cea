"""The power of each ledger row: how often its design would give its best verdict if the paper were right, at the
noise its own runs show, and how many seeds would reach 80 %.

The truth simulated is the paper's number where it gives one ("in size" counts), no change for C3's "unchanged"
claim, and otherwise :data:`initmem.study.verdicts.error_rates.UNNUMBERED_FACTOR` times the row's margin ("in direction"
counts). Cross-fitted rows (C1, C2, C3, C4, C5) are simulated by :mod:`initmem.study.verdicts.error_rates` (a linear memory
profile and Gaussian noise in each (sigma_w, seed) cell); C6 and C7 by their own statistics
(:func:`initmem.study.verdicts.judges.depth_interaction`, :func:`~initmem.study.verdicts.judges.norm_slope_difference`) and
:func:`initmem.study.verdicts.ledger.judged_row`. The noise is measured on the row's runs (:func:`cell_noise`). Chapter 99
explains the reading: an inconclusive row at low power is a design that cannot tell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import xarray as xr

from ...base.numbers import decimal, significant
from ..experiments import judged_by
from ..statistics.analysis import final_norms, norm_coupling, within_horizons
from ..statistics.batches import batch_comparisons
from ..statistics.nulls import contrast_null, contrast_null_floor
from ..statistics.stats import finite_runs
from . import rules
from .error_rates import UNNUMBERED_FACTOR, Design, _judged
from .judges import (
    DEPTH_MARGIN_PP,
    SLOPE_MARGIN,
    compared_horizons,
    depth_cells,
    depth_interaction,
    most_coupled_adaptive,
    norm_slope_difference,
    norm_slopes,
)
from .ledger import claim_record, judged_row

__all__ = ["TARGET_POWER", "RowDesign", "cell_noise", "row_designs", "row_power", "power_table", "power_columns"]

#: The power a design should reach at the paper's number.
TARGET_POWER = 0.8


@dataclass(frozen=True)
class RowDesign:
    """A ledger row (``row``: ``"C1"``, ``"C2 Adam"``, ``"C6"``), its simulated :class:`Design`, the within-cell noise
    standard deviation measured on its runs (in ``unit``) with its residual degrees of freedom, and, for C7, the log
    initial norms over sigma_w its slopes are taken against (``x``)."""

    row: str
    design: Design
    noise_sd: float
    noise_df: int
    unit: str = "pp"
    x: tuple[float, ...] = ()

    @property
    def target(self) -> tuple[float, str]:
        """``(truth, verdict)`` simulated (:attr:`initmem.study.verdicts.error_rates.Design.power_target`); C6 and C7 take
        their own margins (:data:`initmem.study.verdicts.judges.DEPTH_MARGIN_PP`, :data:`~initmem.study.verdicts.judges.SLOPE_MARGIN`)."""
        if self.design.claim in _OWN_STATISTICS:
            return UNNUMBERED_FACTOR * _OWN_STATISTICS[self.design.claim][0], rules.IN_DIRECTION
        return self.design.power_target

    @property
    def truth_text(self) -> str:
        """The truth simulated, in words: ``"the paper's 26.5 pp"``, ``"no change"``, ``"10 pp, twice the margin"``."""
        truth, _ = self.target
        if self.design.unchanged:
            return "no change"
        value = significant(truth) + (f" {self.unit}" if self.unit else "")
        if self.design.paper is not None:
            return f"the paper's {value}"
        return f"{value}, {_TIMES.get(UNNUMBERED_FACTOR, f'{UNNUMBERED_FACTOR} times')} the margin"


#: How :data:`initmem.study.verdicts.error_rates.UNNUMBERED_FACTOR` is said.
_TIMES = {2: "twice", 3: "three times"}


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
    """Every ledger row but B1 (whose power is :mod:`initmem.study.verdicts.boundary_coverage`'s) that the experiments in
    ``results`` hold (:func:`initmem.study.experiments.judged_by`), with its noise on the predictor the row is judged
    on (``predictors``: row -> ``"selected"`` or ``"final"``, the ledger's ``predictor`` column)."""
    out = []
    for claim, designs in _DESIGNS.items():
        ds = results.get(judged_by(claim))
        if ds is not None:
            out += designs(ds, predictors)
    return out


def _c1_value() -> float:
    return claim_record("C1")["values"][""]


def _optimizer_rows(ds: xr.Dataset, predictors: Mapping[str, str]) -> list[RowDesign]:
    """C1 (SGD's spread) and C2 (each adaptive optimizer's against SGD's) on experiment 01."""
    experiment, sgd = judged_by("C1"), ds.sel(optimizer="sgd")
    n_sigma, n_seeds = ds.sizes["sigma_w"], ds.sizes["seed"]
    var = f"{predictors.get('C1', 'selected')}_test_acc"
    out = [
        RowDesign(
            "C1", Design("C1", "", experiment, n_sigma, n_seeds, _c1_value()), *cell_noise([finite_runs(sgd, var)])
        )
    ]
    for part, value in claim_record("C2")["values"].items():
        row = f"C2 {part}"
        if part.lower() not in ds["optimizer"].values or row not in predictors:
            continue
        var = f"{predictors[row]}_test_acc"
        noise = cell_noise([finite_runs(sgd, var), finite_runs(ds.sel(optimizer=part.lower()), var)])
        out.append(RowDesign(row, Design("C2", part, experiment, n_sigma, n_seeds, value, _c1_value()), *noise))
    return out


def _long_training_rows(ds: xr.Dataset, predictors: Mapping[str, str]) -> list[RowDesign]:
    """C3 on experiment 02, each predictor: the change of the spread between its two horizons, judged
    "unchanged"; the truth simulated is no change at C1's spread. The two horizons are the same runs, so the noise
    of a change is measured on each cell's difference between them (:func:`cell_noise` of the differences) and
    split evenly between two independent draws (sd / sqrt 2 each)."""
    reference, last = compared_horizons(ds)
    h = within_horizons(ds, sorted({reference, last}))
    out = []
    for row, predictor in predictors.items():
        if not row.startswith("C3 "):
            continue
        var = f"{predictor}_test_acc"
        change = finite_runs(h.sel(horizon=last), var) - finite_runs(h.sel(horizon=reference), var)
        sd, df = cell_noise([change])
        design = Design("C3", row[3:], judged_by("C3"), ds.sizes["sigma_w"], ds.sizes["seed"], None, _c1_value(), True)
        out.append(RowDesign(row, design, sd / math.sqrt(2), df))
    return out


def _lever_rows(ds: xr.Dataset, predictors: Mapping[str, str]) -> list[RowDesign]:
    """C4 on experiment 03, each lever against the cell with neither."""
    lrs, wds = sorted(map(float, ds["lr"].values)), sorted(map(float, ds["weight_decay"].values))
    keep = ds.sel(lr=lrs[0], weight_decay=wds[0])
    levers = {"larger lr": (lrs[-1], wds[0]), "L2": (lrs[0], wds[-1]), "both": (lrs[-1], wds[-1])}
    out = []
    for part, (a, w) in levers.items():
        row = f"C4 {part}"
        if row not in predictors:
            continue
        var = f"{predictors[row]}_test_acc"
        noise = cell_noise([finite_runs(keep, var), finite_runs(ds.sel(lr=a, weight_decay=w), var)])
        value = claim_record("C4")["values"][part]
        design = Design("C4", part, judged_by("C4"), ds.sizes["sigma_w"], ds.sizes["seed"], value, _c1_value())
        out.append(RowDesign(row, design, *noise))
    return out


def _batch_rows(ds: xr.Dataset, predictors: Mapping[str, str]) -> list[RowDesign]:
    """C5 on experiment 04, each fair comparison (:func:`initmem.study.statistics.batches.batch_comparisons`): the larger
    batch's spread minus the smaller's, final predictors, as its judge reads them."""
    out = []
    for part, pair in batch_comparisons(ds).items():
        if pair is None or f"C5 {part}" not in predictors:
            continue
        small, large = (finite_runs(point.ds, "final_test_acc") for point in pair)
        design = Design("C5", part, judged_by("C5"), small.sizes["sigma_w"], small.sizes["seed"], None, 0.0)
        out.append(RowDesign(f"C5 {part}", design, *cell_noise([small, large])))
    return out


def _depth_rows(ds: xr.Dataset, predictors: Mapping[str, str]) -> list[RowDesign]:
    """C6 on experiment 05: ResNet-9's final train accuracy against the deepest net's at the smallest and the
    largest sigma_w."""
    cells = depth_cells(finite_runs(ds, "final_train_acc"))
    design = Design("C6", "", judged_by("C6"), 2, ds.sizes["seed"], None)
    return [RowDesign("C6", design, *cell_noise(cells))]


def _norm_rows(ds: xr.Dataset, predictors: Mapping[str, str]) -> list[RowDesign]:
    """C7 on experiment 06: SGD's log final norms against the most coupled adaptive optimizer's, over SGD's mean log
    initial norm at each sigma_w; the noise is in log norm."""
    strongest = most_coupled_adaptive(norm_coupling(ds))
    final = np.log(final_norms(ds))
    cells = [final.sel(optimizer=o).transpose("sigma_w", "seed") for o in ("sgd", strongest)]
    x = np.log(ds["weight_norm"].isel(epoch=0).sel(optimizer="sgd")).mean("seed").transpose("sigma_w")
    design = Design("C7", "", judged_by("C7"), ds.sizes["sigma_w"], ds.sizes["seed"], None)
    sd, df = cell_noise(cells)
    return [RowDesign("C7", design, sd, df, unit="", x=tuple(float(v) for v in x.values))]


#: Each claim's rows, in ledger order.
_DESIGNS = {
    "C1": _optimizer_rows,
    "C3": _long_training_rows,
    "C4": _lever_rows,
    "C5": _batch_rows,
    "C6": _depth_rows,
    "C7": _norm_rows,
}


def _depth_verdicts(row: RowDesign, n_seeds: int, reps: int, rng: np.random.Generator) -> list[str]:
    """C6's verdicts of ``reps`` simulated designs: both nets level at the smallest sigma_w, the deepest
    :attr:`RowDesign.target` pp lower at the largest, cell noise ``row.noise_sd``; judged as its judge does."""
    truth, _ = row.target
    shape = (reps, 2, n_seeds)
    a = row.noise_sd * rng.standard_normal(shape)
    b = np.array([0.0, -truth])[None, :, None] + row.noise_sd * rng.standard_normal(shape)
    floor = lambda n: contrast_null_floor(2 * n)  # noqa: E731
    out = []
    for ra, rb in zip(a, b, strict=True):
        effect = (ra - rb)[1] - (ra - rb)[0]
        null = contrast_null(ra, rb, depth_interaction)
        out.append(judged_row("C6", "", effect, null, floor, margin=DEPTH_MARGIN_PP).verdict.verdict)
    return out


def _slope_verdicts(row: RowDesign, n_seeds: int, reps: int, rng: np.random.Generator) -> list[str]:
    """C7's verdicts of ``reps`` simulated designs: SGD's log final norm rising with slope :attr:`RowDesign.target`
    on ``row.x``, the other's flat, cell noise ``row.noise_sd``; judged as its judge does."""
    truth, _ = row.target
    x = np.repeat(np.asarray(row.x)[:, None], n_seeds, axis=1)
    shape = (reps, len(row.x), n_seeds)
    a = truth * x[None] + row.noise_sd * rng.standard_normal(shape)
    b = row.noise_sd * rng.standard_normal(shape)
    statistic = norm_slope_difference(x)
    floor = lambda n: contrast_null_floor(len(row.x) * n)  # noqa: E731
    out = []
    for ra, rb in zip(a, b, strict=True):
        effect = norm_slopes(ra, x) - norm_slopes(rb, x)
        null = contrast_null(ra, rb, statistic)
        out.append(judged_row("C7", "", effect, null, floor, margin=SLOPE_MARGIN).verdict.verdict)
    return out


#: The rows judged on their own statistics, not on the spread rules' :class:`Design`: each claim's null-equivalence
#: margin and its simulator (the truth it simulates is :data:`UNNUMBERED_FACTOR` times that margin).
_OWN_STATISTICS = {"C6": (DEPTH_MARGIN_PP, _depth_verdicts), "C7": (SLOPE_MARGIN, _slope_verdicts)}


def row_power(row: RowDesign, n_seeds: int, reps: int, seed: int = 0) -> float:
    """The share of ``reps`` simulated replicates of ``row``'s design at ``n_seeds`` seeds, the truth at
    :attr:`RowDesign.target`, that its rules give the target's verdict."""
    truth, best = row.target
    rng = np.random.default_rng([seed, row.design.n_sigma, n_seeds])
    if row.design.claim in _OWN_STATISTICS:
        verdicts = _OWN_STATISTICS[row.design.claim][1](row, n_seeds, reps, rng)
    else:
        verdicts = _judged(replace(row.design, n_seeds=n_seeds), rng, truth, reps, row.noise_sd)
    return float(np.mean([v == best for v in verdicts]))


def power_table(rows: Sequence[RowDesign], seeds: Sequence[int], reps: int, seed: int = 0) -> xr.Dataset:
    """:func:`row_power` of each row at its own noise, at its own number of seeds and then at each larger one of
    ``seeds`` until it reaches :data:`TARGET_POWER` (NaN past that, and below the row's own): a Dataset with
    ``power`` (share, dims ``(row, n_seeds)``), ``noise_sd`` (in ``noise_unit``), ``noise_df``, ``seeds_now`` and
    ``truth`` (the truth simulated, in words; dims ``(row,)``), and the attributes ``reps``, ``seed`` and ``target``."""
    counts = sorted({int(n) for n in seeds} | {r.design.n_seeds for r in rows})
    power = np.full((len(rows), len(counts)), np.nan)
    for i, r in enumerate(rows):
        for j, n in enumerate(counts):
            if n < r.design.n_seeds:
                continue
            power[i, j] = row_power(r, n, reps, seed)
            if power[i, j] >= TARGET_POWER:
                break
    names = [r.row for r in rows]
    return xr.Dataset(
        {
            "power": (("row", "n_seeds"), power),
            "noise_sd": ("row", [r.noise_sd for r in rows]),
            "noise_unit": ("row", [r.unit or "log norm" for r in rows]),
            "noise_df": ("row", [r.noise_df for r in rows]),
            "seeds_now": ("row", [r.design.n_seeds for r in rows]),
            "truth": ("row", [r.truth_text for r in rows]),
        },
        coords={"row": names, "n_seeds": counts},
        attrs={"reps": int(reps), "seed": int(seed), "target": TARGET_POWER},
    )


def power_columns(table: xr.Dataset) -> dict[str, dict[str, str]]:
    """For each row of a :func:`power_table`: ``{"power": "38 % (the paper's 26.5 pp; noise sd 2.4 pp)", "seeds for
    80 %": "20" | "more than 20"}``, the power at the row's own seeds with the truth simulated, and the fewest
    simulated seeds that reach :data:`TARGET_POWER`."""
    out = {}
    for row in table["row"].values:
        one = table.sel(row=row)
        now = int(one["seeds_now"])
        power = one["power"]
        reached = [int(n) for n in power["n_seeds"].values if float(power.sel(n_seeds=n)) >= TARGET_POWER]
        most = int(power["n_seeds"].values[np.isfinite(power.values)].max())
        sd, unit = float(one["noise_sd"]), str(one["noise_unit"].item())
        noise = f"{decimal(sd)} pp" if unit == "pp" else f"{significant(sd, 2)} in {unit}"
        out[str(row)] = {
            "power": f"{100 * float(power.sel(n_seeds=now)):.0f} % ({one['truth'].item()}; noise sd {noise})",
            "seeds for 80 %": str(min(reached)) if reached else f"more than {most}",
        }
    return out
