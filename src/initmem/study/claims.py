"""The claims ledger: the paper's claims C1-C7 (and B1, a test beyond the paper) against this reproduction.

Each claim, or each part of one (an optimizer of C2, a lever of C4, a design of C5), becomes one row judged by the
printed rules of :mod:`initmem.study.rules`:

* its **direction effect**: a per-seed paired contrast, positive in the paper's direction, summarised by the mean
  over seeds and its 95 % t-interval; spreads in it are **cross-fitted**
  (:func:`initmem.study.stats.cross_fitted_spreads`: the best and worst sigma_w are chosen on the other seeds), so
  that noise alone gives 0;
* its **noise null**: a permutation p-value (:mod:`initmem.study.nulls`) of the raw statistic (sigma_w labels
  permuted within seeds for a spread; the two conditions swapped within (sigma_w, seed) cells for a contrast);
* its **size** where the paper gives a number ``P``, with the band ``P +- max(5 pp, 30 % of P)``.

:func:`reproduction_table` builds every row; the chapter helpers (:func:`verdict_box`, :func:`chapter_box`,
:func:`chapter_verdicts`) render them. Spreads are those of the validation-selected predictor (the paper's metric),
except C3, where the final predictor carries the claim when validation selects the same checkpoints at every horizon.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from ..run.thresholds import INTERPOLATION_THRESHOLD
from . import rules
from .nulls import NullTest, contrast_null, contrast_null_floor, spread_null, spread_null_floor
from .rules import INCONCLUSIVE, IN_DIRECTION, IN_SIZE, NOT_REPRODUCED, VERDICT_DEFINITIONS, VERDICTS, Verdict
from .stats import Interval, cross_fitted_spreads, finite_runs, mean_interval, n_diverged, seed_mean

__all__ = ["IN_SIZE", "IN_DIRECTION", "NOT_REPRODUCED", "INCONCLUSIVE", "VERDICTS", "VERDICT_DEFINITIONS", "PAPER",
           "RULES", "Row", "reproduction_table", "claim_rows", "glance_table", "against_record", "answer", "verdict_box",
           "chapter_table", "chapter_box", "chapter_verdicts"]  # fmt: skip

#: The paper's claims, with where they come from (the paper summary, shared/paper/000_*.txt), and the number it
#: gives for each part (None: no number, so the claim can be at most "in direction").
PAPER: dict[str, dict[str, Any]] = {
    "C1": {"question": "Does low-lr SGD interpolate yet keep a large spread across sigma_w?",
           "text": "26.5 pp spread, >= 99.5 % train accuracy (ResNet-9, b = 128, low-lr SGD)", "values": {"": 26.5},
           "source": "summary, Key Results / Optimizer Dependence: 'SGD Remembers'"},
    "C2": {"question": "Do Adam, AdamW and Muon erase the spread that SGD keeps?",
           "text": "~4 pp spread for Muon; Adam and AdamW 'minimal'",
           "values": {"Adam": 0.0, "AdamW": 0.0, "Muon": 4.0},
           "source": "summary, Key Results / Optimizer Dependence: 'Adaptive Methods Forget'"},
    "C3": {"question": "Does training SGD much longer leave its spread unchanged?",
           "text": "5,000 epochs of low-lr SGD: spread 'essentially unchanged'", "values": {},
           "source": "summary, Hyperparameter Dependence: 'Training Time is Insufficient'"},
    "C4": {"question": "Does a larger learning rate, or L2 decay, erase the spread?",
           "text": "larger learning rates or L2 decay: spread 'near zero'",
           "values": {"larger lr": 0.0, "L2": 0.0, "both": 0.0},
           "source": "summary, Hyperparameter Dependence: 'Regularization and Learning Rate'"},
    "C5": {"question": "Do larger batches forget more slowly?",
           "text": "larger batches (16 -> 256): bigger spread", "values": {},
           "source": "summary, Hyperparameter Dependence: 'Batch Size'"},
    "C6": {"question": "Do deeper ResNets fail to interpolate at large sigma_w?",
           "text": "ResNet-56/110 fail to reach 99.5 % train accuracy at large sigma_w", "values": {},
           "source": "summary, Depth and Architecture"},
    "C7": {"question": "Does SGD's final weight norm stay coupled to the initial one, unlike the adaptive methods'?",
           "text": "SGD's final norm coupled to the initial one; adaptive methods reach a common norm", "values": {},
           "source": "summary, Key Results: final weight norm; 'converge to a common final norm scale'"},
    "B1": {"question": "Does SGD + L2 forget where the clocks say, at T_L2 = ln(|W0| / |W*|)?",
           "text": "beyond the paper: T5's norm law puts the boundary at x = T_L2 - ln(|W0|/|W*|) = 0", "values": {},
           "source": "theory chapter T5 (weight decay); the paper's T_L2 clock"},
}  # fmt: skip

_SPREAD = ("cross-fitted spread of the validation-selected test accuracy over sigma_w (pp, mean over seeds, 95 % "
           "t-interval)")  # fmt: skip
#: The rule of each claim: its direction effect, null, size and premise (printed in the book).
RULES: dict[str, str] = {
    "C1": f"effect: SGD's {_SPREAD}; null: sigma_w permuted within seeds; size: the interval inside 26.5 +- 7.95 pp; "
          "premise: every SGD run interpolates (final train accuracy >= 99.5 %)",
    "C2": f"effect, per adaptive optimizer: SGD's minus its {_SPREAD}, per seed; null: the two optimizers swapped "
          "within (sigma_w, seed) cells; size: its own spread's interval inside the band (Muon 4 +- 5 pp, Adam and "
          "AdamW 0 +- 5 pp, 'minimal')",
    "C3": "effect: the cross-fitted spread at the longest horizon minus at the reference horizon, per seed; in "
          "direction when its interval lies above -5 pp (non-inferiority: it loses less than the margin), not "
          "reproduced when below; premise: every run interpolates at the reference and the reference spread's "
          "interval lies above 0; the selected predictor is not testable when validation selects the same "
          "checkpoints at both horizons, and the final predictor then carries the claim; no size (no number)",
    "C4": f"effect, per lever (larger lr alone; L2 at the low lr; both): the low-lr, no-L2 cell's minus the lever "
          f"cell's {_SPREAD}, per seed; null: the two cells swapped within (sigma_w, seed); size: the lever cell's "
          "spread inside 0 +- 5 pp ('near zero')",
    "C5": f"effect, per design: the larger batch's minus the smaller batch's {_SPREAD}, per seed, between batch sizes "
          "whose runs all interpolate, at equal steps (within 5 %) and at equal epochs (the widest such pair of "
          "each); null: the two batch sizes swapped within (sigma_w, seed); no size (no number)",
    "C6": "effect: ResNet-9's minus the deepest model's final train accuracy at the largest sigma_w (pp, per seed); "
          "null: the two models swapped within seeds; null-equivalence margin 0.5 pp; premise: ResNet-9 "
          "interpolates at every sigma_w; no size; every run that fails to interpolate is named",
    "C7": "effect: the slope of log final against log initial kernel norm across sigma_w for SGD minus that of the "
          "adaptive optimizer with the largest slope, per seed; null: the two optimizers swapped within (sigma_w, "
          "seed); null-equivalence margin 0.1; no size (no number)",
    "B1": "effect: the memory gap acc(sigma_w 0.1) - acc(sigma_w 2.5) falls with x = T_L2 - ln(|W0|/|W*|) (Spearman "
          "rho over the cells < 0, permutation p < 0.05); size: the fitted logistic midpoint x0's whole bootstrap "
          "interval inside 0 +- 0.3 (a 35 % error in the norm ratio); not reproduced: rho's interval above 0, or the "
          "fitted height's interval inside +- 5 pp (no transition)",
}  # fmt: skip


#: The unit of each claim's effect where it is not percentage points.
_UNITS = {"C7": "", "B1": ""}


@dataclass
class Row:
    """One row of the ledger: a claim (or one part of it) with its effect, null, size and verdict."""

    claim: str
    part: str
    verdict: Verdict
    effect: Interval
    null: NullTest | None = None
    size: Interval | None = None
    band: tuple[float, float] | None = None
    ours: str = ""
    clocks: str = ""
    scale: str = ""
    note: str = ""
    seeds_needed: int | None = None
    experiment: str = ""
    unit: str = " pp"
    margin: float = rules.MARGIN_PP
    #: The per-seed values behind ``effect`` and ``size`` (what the intervals are of), None where not judged by seeds.
    values: np.ndarray | None = None
    size_values: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.unit = _UNITS.get(self.claim, self.unit)

    @property
    def key(self) -> str:
        """The row's name in the ledger: ``"C1"``, ``"C2 Adam"``, ``"C4 larger lr"``."""
        return f"{self.claim} {self.part}".strip()

    def as_dict(self) -> dict[str, Any]:
        paper = PAPER[self.claim]
        value = paper["values"].get(self.part, math.nan) if paper["values"] else math.nan
        null = self.null
        size = self.size or Interval(math.nan, math.nan, math.nan, 0)
        return {
            "claim": self.claim, "part": self.part, "question": paper["question"], "paper": paper["text"],
            "paper_value": value, "band_low": self.band[0] if self.band else math.nan,
            "band_high": self.band[1] if self.band else math.nan, "ours": self.ours, "effect": self.effect.estimate,
            "effect_low": self.effect.low, "effect_high": self.effect.high, "seeds": self.effect.n,
            "size": size.estimate, "size_low": size.low, "size_high": size.high,
            "p_value": null.p_value if null else math.nan, "null_mean": null.null_mean if null else math.nan,
            "null_p95": null.null_p95 if null else math.nan, "raw": null.observed if null else math.nan,
            "verdict": self.verdict.verdict, "reason": self.verdict.reason, "seeds_needed": self.seeds_needed,
            "rule": RULES[self.claim], "clocks": self.clocks, "scale": self.scale, "note": self.note,
            "experiment": self.experiment, "unit": self.unit.strip(), "margin": self.margin,
            "paper_source": paper["source"],
        }  # fmt: skip


# --- measurements shared by the claims -------------------------------------------------------------------
def _matrix(values: xr.DataArray) -> np.ndarray:
    """A (sigma_w, seed) DataArray as an array of that shape (the nulls' input)."""
    return values.transpose("sigma_w", "seed").values


def _cf(ds: xr.Dataset, var: str = "selected_test_acc") -> xr.DataArray:
    return cross_fitted_spreads(finite_runs(ds, var))


def _interval(values: xr.DataArray | np.ndarray, method: str = "t, cross-fitted") -> Interval:
    return mean_interval(np.asarray(values), method=method)


def _interpolates(values: xr.DataArray) -> bool:
    return bool((values >= INTERPOLATION_THRESHOLD).all())


def _clocks(ds: xr.Dataset, names: tuple[str, ...] = ("T_SGD", "T_L2", "T_adapt"), label: str = "") -> str:
    """Mean clocks at the selected checkpoint, and at the end, over sigma_w and seeds."""
    out = []
    for name in names:
        sel, fin = (float(ds[f"{w}_{name}"].mean(skipna=True)) for w in ("selected", "final"))
        if np.isfinite(sel) and (sel > 0 or fin > 0):
            out.append(f"{name}{label} {sel:.3g} at the selected checkpoint ({fin:.3g} at the end)")
    return "; ".join(out)


def _scale(ds: xr.Dataset) -> str:
    from .analysis import field_values, spec_of

    base = spec_of(ds)["base"]
    models, widths = field_values(ds, "model"), field_values(ds, "width")
    if len(models) == len(widths) > 1:  # zipped (05): each model with its own width
        network = "/".join(f"{m} w{w}" for m, w in zip(models, widths))
    else:
        network = f"{'/'.join(map(str, models))} w{'/'.join(map(str, widths))}"
    parts = [str(ds.attrs.get("preset", "?")), network]
    if base.get("train_size"):
        parts.append(f"{base['train_size']} train images")
    if base.get("image_size", 32) != 32:
        parts.append(f"{base['image_size']} px")
    if "seed" in ds.dims:
        parts.append(f"{ds.sizes['seed']} seeds")
    return ", ".join(parts)


def _spread_text(ds: xr.Dataset, label: str = "") -> str:
    """Both predictors' cross-fitted spread, raw spread with its null, and mean training accuracy."""
    parts = []
    for name in ("selected", "final"):
        values = finite_runs(ds, f"{name}_test_acc")
        null = spread_null(_matrix(values))
        train = float(ds[f"{name}_train_acc"].mean(skipna=True))
        parts.append(f"{name}: {_interval(cross_fitted_spreads(values))} (raw {null.observed:.1f} pp, "
                     f"{null}), train acc {train:.1f} %")  # fmt: skip
    return (label + ": " if label else "") + "; ".join(parts)


def _seeds_for(row_values: np.ndarray, floor: Callable[[int], float], **judged: Any) -> int | None:
    """The seeds that would decide an inconclusive row: its per-seed ``row_values`` at their observed mean and sd,
    with the permutation test passing only once its smallest attainable p (``floor(n)``) is below 0.05."""

    def decides(interval: Interval, n: int) -> bool:
        return rules.judge(interval, floor(n), **judged).verdict != INCONCLUSIVE

    return rules.seeds_to_decide(row_values, decides)


def _judged_row(claim: str, part: str, direction_values: np.ndarray, null: NullTest, floor: Callable[[int], float],
                size_values: np.ndarray | None = None, margin: float = rules.MARGIN_PP, premise: str = "",
                method: str = "t, cross-fitted", **texts: Any) -> Row:  # fmt: skip
    """A row judged by :func:`initmem.study.rules.judge`, with the seeds an inconclusive verdict would need."""
    value = PAPER[claim]["values"].get(part)
    band = rules.band_of(value) if value is not None else None
    direction = mean_interval(direction_values, method=method)
    size = mean_interval(size_values, method=method) if size_values is not None else direction
    verdict = rules.judge(direction, null.p_value, size=size, band=band, margin=margin, premise=premise)
    needed = _seeds_for(direction_values, floor, margin=margin) if verdict.verdict == INCONCLUSIVE and not premise else None
    return Row(claim, part, verdict, direction, null, size, band, seeds_needed=needed, margin=margin,
               values=np.asarray(direction_values, dtype=float),
               size_values=None if size_values is None else np.asarray(size_values, dtype=float), **texts)


# --- the claims -----------------------------------------------------------------------------------------
def _c1(ds: xr.Dataset) -> list[Row]:
    sgd = ds.sel(optimizer="sgd")
    values = finite_runs(sgd, "selected_test_acc")
    train = sgd["final_train_acc"]
    premise = "" if _interpolates(train) else (
        f"not every SGD run interpolates (lowest final train accuracy {float(train.min()):.1f} %)")  # fmt: skip
    k = sgd.sizes["sigma_w"]
    return [_judged_row("C1", "", _cf(sgd).values, spread_null(_matrix(values)), lambda n: spread_null_floor(k, n),
                        premise=premise, ours=_spread_text(sgd), clocks=_clocks(sgd, ("T_SGD",)), scale=_scale(ds),
                        experiment="01_optimizers")]  # fmt: skip


def _c2(ds: xr.Dataset) -> list[Row]:
    sgd = ds.sel(optimizer="sgd")
    names = {"adam": "Adam", "adamw": "AdamW", "muon": "Muon"}
    rows = []
    for optimizer, part in names.items():
        if optimizer not in ds["optimizer"].values:
            continue
        other = ds.sel(optimizer=optimizer)
        a, b = finite_runs(sgd, "selected_test_acc"), finite_runs(other, "selected_test_acc")
        null = contrast_null(_matrix(a), _matrix(b))
        cells = a.sizes["sigma_w"]
        ours = f"{_spread_text(other, part)} | SGD minus {part}: {_interval(_cf(sgd) - _cf(other))}"
        rows.append(_judged_row("C2", part, (_cf(sgd) - _cf(other)).values, null,
                                lambda n, c=cells: contrast_null_floor(c * n), size_values=_cf(other).values,
                                ours=ours, clocks=_clocks(other, ("T_adapt",)), scale=_scale(ds),
                                experiment="01_optimizers"))  # fmt: skip
    return rows


def _c3(ds: xr.Dataset) -> list[Row]:
    from .analysis import horizons_of, within_horizons

    horizons = horizons_of(ds)
    reference = int(ds.attrs.get("reference_horizon", horizons[-2] if len(horizons) > 1 else horizons[0]))
    last = horizons[-1]
    h = within_horizons(ds, sorted({reference, last}))
    at_ref, at_last = h.sel(horizon=reference), h.sel(horizon=last)
    scale = _scale(ds) + f", {reference} vs {last} epochs"
    clocks = _clocks(at_last, ("T_SGD",), f" ({last} epochs)")
    rows = []
    for name in ("final", "selected"):
        var = f"{name}_test_acc"
        memory = _interval(_cf(at_ref, var))
        change = _interval(_cf(at_last, var) - _cf(at_ref, var))
        premise = ""
        if not _interpolates(at_ref["final_train_acc"]):
            premise = f"not every run interpolates at the reference horizon ({reference} epochs)"
        elif not (memory.has_bounds and memory.low > 0):
            premise = f"no memory to keep at the reference horizon (cross-fitted spread {memory})"
        same = bool((at_ref["best_epoch"] == at_last["best_epoch"]).all())
        if name == "selected" and same:
            change = Interval(math.nan, math.nan, math.nan, change.n)  # nothing was measured: the spread cannot move
            verdict = Verdict(INCONCLUSIVE, f"not testable at this scale: validation selects the same checkpoints at "
                                            f"{reference} and {last} epochs (the latest at epoch "
                                            f"{int(at_last['best_epoch'].max())}), so the selected spread cannot "
                                            "change; the final predictor carries the claim")  # fmt: skip
        else:
            verdict = rules.judge_unchanged(change, premise=premise)
        ours = (f"{name} predictor: cross-fitted spread {memory} at {reference} epochs, "
                f"{_interval(_cf(at_last, var))} at {last}; change {change}")  # fmt: skip
        rows.append(Row("C3", f"{name} predictor", verdict, change, ours=ours, clocks=clocks, scale=scale,
                        experiment="02_long_training"))  # fmt: skip
    return rows


def _c4(ds: xr.Dataset) -> list[Row]:
    from .phase import cell_table

    lrs, wds = sorted(map(float, ds["lr"].values)), sorted(map(float, ds["weight_decay"].values))
    keep = ds.sel(lr=lrs[0], weight_decay=wds[0])
    cells = cell_table(ds)
    levers = {"larger lr": (lrs[-1], wds[0]), "L2": (lrs[0], wds[-1]), "both": (lrs[-1], wds[-1])}
    rows = []
    for part, (lr, wd) in levers.items():
        lever = ds.sel(lr=lr, weight_decay=wd)
        a, b = finite_runs(keep, "selected_test_acc"), finite_runs(lever, "selected_test_acc")
        null = contrast_null(_matrix(a), _matrix(b))
        n_cells = a.sizes["sigma_w"]
        cell = cells.loc[(lr, wd)]
        ours = (f"lr {lr:g}, L2 {wd:g}: {_spread_text(lever)} | lr {lrs[0]:g}, no L2 minus this cell: "
                f"{_interval(_cf(keep) - _cf(lever))} | T_L2 {cell['T_L2']:.2g} against ln(|W0|/|W*|) "
                f"{cell['log_ratio']:.2f} (x = {cell['x']:.2f})")  # fmt: skip
        rows.append(_judged_row("C4", part, (_cf(keep) - _cf(lever)).values, null,
                                lambda n, c=n_cells: contrast_null_floor(c * n), size_values=_cf(lever).values,
                                ours=ours, clocks=_clocks(lever, ("T_SGD", "T_L2")), scale=_scale(ds),
                                experiment="03_lr_and_l2"))  # fmt: skip
    return rows


def _c5(ds: xr.Dataset) -> list[Row]:
    from .analysis import batch_comparisons

    rows = []
    for part, pair in batch_comparisons(ds).items():
        if pair is None:
            rows.append(Row("C5", part, Verdict(INCONCLUSIVE, f"no two batch sizes whose runs all interpolate at {part}"),
                            Interval(math.nan, math.nan, math.nan, 0), scale=_scale(ds), experiment="04_batch_size"))
            continue
        small, large = pair
        a, b = finite_runs(large.ds, "selected_test_acc"), finite_runs(small.ds, "selected_test_acc")
        null = contrast_null(_matrix(a), _matrix(b))
        n_cells = a.sizes["sigma_w"]
        ours = " | ".join(f"{point.label}: {_spread_text(point.ds)}" for point in (small, large))
        ours += f" | b={large.batch_size} minus b={small.batch_size}: {_interval(_cf(large.ds) - _cf(small.ds))}"
        clocks = "; ".join(_clocks(point.ds, ("T_SGD",), f" ({point.label})") for point in (small, large))
        rows.append(_judged_row("C5", part, (_cf(large.ds) - _cf(small.ds)).values, null,
                                lambda n, c=n_cells: contrast_null_floor(c * n), ours=ours, clocks=clocks,
                                scale=_scale(ds), experiment="04_batch_size"))  # fmt: skip
    return rows


def _depth(model: str) -> int:
    return 9 if model == "resnet9" else int(model.removeprefix("resnet"))


def _c6(ds: xr.Dataset) -> list[Row]:
    models = [str(m) for m in ds["model"].values]
    deepest = max(models, key=_depth)
    top = float(max(ds["sigma_w"].values))
    train = ds["final_train_acc"]
    reference = train.sel(model="resnet9")
    effect = (reference - train.sel(model=deepest)).sel(sigma_w=top)
    null = contrast_null(reference.sel(sigma_w=[top]).transpose("sigma_w", "seed").values,
                         train.sel(model=deepest, sigma_w=[top]).transpose("sigma_w", "seed").values,
                         lambda a, b: a.mean(axis=(-1, -2)) - b.mean(axis=(-1, -2)), center=False)  # fmt: skip
    premise = "" if _interpolates(reference) else (
        f"ResNet-9 does not interpolate at every sigma_w (lowest {float(reference.min()):.1f} %)")  # fmt: skip
    ours = "; ".join(f"{m} at sigma_w {top:g}: final train acc "
                     f"{mean_interval(train.sel(model=m, sigma_w=top).values, limits=(0.0, 100.0)).format(' %')}"
                     for m in models)  # fmt: skip
    failed = train.where(train < INTERPOLATION_THRESHOLD).to_dataframe().dropna()
    note = "runs that do not interpolate: " + (", ".join(
        f"{row.Index[0]} sigma_w {row.Index[1]:g} seed {row.Index[2]} ({row.final_train_acc:.1f} %)"
        for row in failed.reorder_levels(["model", "sigma_w", "seed"]).sort_index().itertuples()) or "none")  # fmt: skip
    row = _judged_row("C6", "", effect.values, null, lambda n: contrast_null_floor(n), margin=0.5, premise=premise,
                      method="t", ours=ours, clocks=_clocks(ds.sel(model=deepest), ("T_SGD",)), scale=_scale(ds),
                      note=note, experiment="05_depth")  # fmt: skip
    return [row]


def _c7(ds: xr.Dataset) -> list[Row]:
    from .analysis import last_finite, norm_coupling

    present = [o for o in ("adam", "adamw", "muon") if o in ds["optimizer"].values]
    slopes = norm_coupling(ds)  # (optimizer, seed)
    strongest = max(present, key=lambda o: float(slopes.sel(optimizer=o).mean()))
    x = np.log(ds["weight_norm"].isel(epoch=0).sel(optimizer="sgd")).transpose("sigma_w", "seed").values
    final = np.log(last_finite(ds["weight_norm"]))

    def slope_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        dx = x - x.mean(axis=0)
        slope = lambda y: ((y - y.mean(axis=-2, keepdims=True)) * dx).sum(-2) / (dx * dx).sum(0)  # noqa: E731
        return slope(a).mean(-1) - slope(b).mean(-1)

    null = contrast_null(final.sel(optimizer="sgd").transpose("sigma_w", "seed").values,
                         final.sel(optimizer=strongest).transpose("sigma_w", "seed").values, slope_difference)
    effect = slopes.sel(optimizer="sgd") - slopes.sel(optimizer=strongest)
    ours = "slopes: " + "; ".join(f"{o} {mean_interval(slopes.sel(optimizer=o).values).format('', 2)}"
                                  for o in ("sgd", *present))  # fmt: skip
    cells = ds.sizes["sigma_w"]
    return [_judged_row("C7", "", effect.values, null, lambda n: contrast_null_floor(cells * n), margin=0.1,
                        method="t", ours=ours + f"; SGD minus {strongest}",
                        clocks="; ".join(_clocks(ds.sel(optimizer=o), ("T_adapt",), f" ({o})") for o in present),
                        scale=_scale(ds), experiment="01_optimizers")]  # fmt: skip


def _b1(ds: xr.Dataset) -> list[Row]:
    from .phase import BOUNDARY_BAND, fit_transition

    fit = fit_transition(ds)
    trend, x0, height = fit.trend, fit.midpoint, fit.height
    where = (f"fitted boundary x0 = {x0.estimate:.2f} [{x0.low:.2f}, {x0.high:.2f}] (logistic, bootstrap over "
             f"{fit.seeds} seeds), height {height.estimate:.1f} pp [{height.low:.1f}, {height.high:.1f}], width "
             f"{fit.width.estimate:.2f}; trend {trend.format()}")  # fmt: skip
    if not (x0.has_bounds and trend.n >= 3):
        verdict = Verdict(INCONCLUSIVE, "the transition could not be fitted with an interval")
    elif trend.low > 0 or (height.has_bounds and -rules.MARGIN_PP < height.low and height.high < rules.MARGIN_PP):
        verdict = Verdict(NOT_REPRODUCED, "the memory does not fall with x" if trend.low > 0 else
                          "no transition: the fitted height's interval lies inside +-5 pp")  # fmt: skip
    elif trend.rho < 0 and trend.significant():
        if BOUNDARY_BAND[0] <= x0.low and x0.high <= BOUNDARY_BAND[1]:
            verdict = Verdict(IN_SIZE, f"the memory falls with x (p = {trend.p_value:.3g}) and x0's interval lies "
                                       f"inside [{BOUNDARY_BAND[0]:g}, {BOUNDARY_BAND[1]:g}]")  # fmt: skip
        else:
            shift = x0.estimate
            verdict = Verdict(IN_DIRECTION, f"the memory falls with x (p = {trend.p_value:.3g}), but the boundary "
                                            f"lies at x0 = {shift:.2f} [{x0.low:.2f}, {x0.high:.2f}], not within "
                                            f"+-0.3 of 0: forgetting needs T_L2 {'above' if shift > 0 else 'below'} "
                                            f"ln(|W0|/|W*|) by {abs(shift):.2f}")  # fmt: skip
    else:
        verdict = Verdict(INCONCLUSIVE, f"the fall of the memory with x is not beyond the null ({trend.format()})")
    return [Row("B1", "", verdict, x0, size=x0, band=BOUNDARY_BAND, ours=where, scale=_scale(ds), margin=math.nan,
                experiment="10_phase_diagram")]  # fmt: skip


#: (claim, experiment it reads, rule) in ledger order.
_CLAIMS: tuple[tuple[str, str, Callable[[xr.Dataset], list[Row]]], ...] = (
    ("C1", "01_optimizers", _c1),
    ("C2", "01_optimizers", _c2),
    ("C3", "02_long_training", _c3),
    ("C4", "03_lr_and_l2", _c4),
    ("C5", "04_batch_size", _c5),
    ("C6", "05_depth", _c6),
    ("C7", "01_optimizers", _c7),
    ("B1", "10_phase_diagram", _b1),
)


def claim_rows(results: Mapping[str, xr.Dataset], claims: list[str] | None = None) -> list[Row]:
    """The ledger's rows (:class:`Row`) for ``results`` (experiment name -> combined Dataset), in ledger order; only
    ``claims`` if given. A claim whose experiment has no results, or lacks what its rule needs, is one inconclusive
    row with the reason in its note."""
    rows: list[Row] = []
    for claim, name, rule in _CLAIMS:
        if claims is not None and claim not in claims:
            continue
        ds = results.get(name)
        empty = Interval(math.nan, math.nan, math.nan, 0)
        if ds is None:
            rows.append(Row(claim, "", Verdict(INCONCLUSIVE, f"not measured: no results of {name}"), empty,
                            experiment=name))  # fmt: skip
            continue
        try:
            own = rule(ds)
        except (KeyError, ValueError, IndexError) as exc:
            own = [Row(claim, "", Verdict(INCONCLUSIVE, f"{name} lacks what the rule needs ({type(exc).__name__}: "
                                                        f"{exc})"), empty, scale=_scale(ds), experiment=name)]  # fmt: skip
        diverged = n_diverged(ds)
        for row in own:
            if diverged:  # their predictors are NaN: they are left out of every interval above
                row.note = "; ".join(filter(None, [row.note, f"{diverged} run(s) of {name} diverged and are left out"]))
        rows.extend(own)
    if "09_adaptive_lr" in results:  # what the knob of C2, the adaptive learning rate, measured at each value
        note = _learning_rates_note(results["09_adaptive_lr"], results.get("01_optimizers"))
        for row in rows:
            if row.claim == "C2":
                row.note = "; ".join(filter(None, [row.note, note]))
    return rows


def reproduction_table(results: Mapping[str, xr.Dataset], claims: list[str] | None = None) -> Any:
    """The ledger as a pandas DataFrame indexed by row (``"C1"``, ``"C2 Adam"``, ...; :attr:`Row.key`), with the
    columns of :meth:`Row.as_dict`: the paper's statement and number with its band, ours (text), the direction
    effect's mean and 95 % interval (``effect``, ``effect_low``, ``effect_high``, ``seeds``), the size's
    (``size``...), the null (``p_value``, ``null_mean``, ``null_p95``, ``raw``), ``verdict`` (one of
    :data:`VERDICTS`), ``reason``, ``seeds_needed`` (inconclusive rows), ``rule``, ``clocks``, ``scale``, ``note``."""
    import pandas as pd

    rows = claim_rows(results, claims)
    table = pd.DataFrame([row.as_dict() for row in rows], index=pd.Index([row.key for row in rows], name="row"))
    table["seeds_needed"] = table["seeds_needed"].astype("Int64")
    return table


def _learning_rates_note(ds: xr.Dataset, reference: xr.Dataset | None = None) -> str:
    """C2's note from experiment 09 (``ds``): each adaptive optimizer's cross-fitted spread at every learning rate
    tried (at the ends of the sigma_w grid), the smallest, and whether it lies measurably below the spread at the
    optimizer's learning rate in experiment 01 (``reference``, whose runs decide C2)."""
    from .analysis import against_reference, learning_rates_of, smallest_spread, spread_points

    table = spread_points(ds, "09_adaptive_lr")
    parts = []
    for optimizer, rows in table.groupby("optimizer", sort=False):
        tried = ", ".join(f"lr {row.lr:g}: {row.selected_spread_pp:.1f} pp" for row in rows.itertuples())
        parts.append(f"{optimizer} {tried}")
    best = smallest_spread(table)
    smallest = ", ".join(
        f"{row.optimizer} {Interval(row.selected_spread_pp, row.selected_ci95_low, row.selected_ci95_high, int(row.selected_n_seeds), 't, cross-fitted')} at lr {row.lr:g}"
        for row in best.itertuples()
    )  # fmt: skip
    note = (f"09 tried other adaptive learning rates (cross-fitted selected spread over the ends of the sigma_w "
            f"grid): {'; '.join(parts)}; the smallest: {smallest}")  # fmt: skip
    if reference is None:
        return note
    knob = against_reference(table, learning_rates_of(reference))
    lower = list(knob.loc[knob["measurably_lower"], "optimizer"])
    outcome = (f"measurably below the spread at 01's learning rate (intervals apart) for {', '.join(lower)} only"
               if lower else "none measurably below the spread at 01's learning rate (the intervals overlap), so "
               "the learning rate does not decide this verdict")  # fmt: skip
    return f"{note}; {outcome}"


# --- the first screen ---------------------------------------------------------------------------------------------
#: The paper's side of each row, in a few words (the glance table's "paper" column).
_PAPER_SHORT = {
    "C1": "26.5 pp", "C2 Adam": "minimal (0 pp)", "C2 AdamW": "minimal (0 pp)", "C2 Muon": "about 4 pp",
    "C3 final predictor": "unchanged after 5,000 epochs", "C3 selected predictor": "unchanged after 5,000 epochs",
    "C4 larger lr": "near 0 pp", "C4 L2": "near 0 pp", "C4 both": "near 0 pp", "C5 equal steps": "larger with b",
    "C5 equal epochs": "larger with b", "C6": "< 99.5 % train acc at large σ_w", "C7": "SGD's norm coupled, not adaptive",
    "B1": "boundary at x = 0 (theory, beyond the paper)",
}  # fmt: skip
#: What the glance table's "ours" column measures for each claim.
_OURS_SHORT = {
    "C1": "SGD's spread", "C2": "its spread", "C3": "change of spread", "C4": "spread with the lever",
    "C5": "larger b minus smaller b", "C6": "ResNet-9 minus deepest, train acc", "C7": "SGD slope minus adaptive",
    "B1": "fitted boundary x0",
}  # fmt: skip


def _ours_cell(row: Any, describe: bool = True) -> str:
    """A row's measured number with its interval: the size where the paper gives a number, else the effect; with
    ``describe``, followed by what it measures."""
    sized = _given(row["band_low"])
    centre, low, high = ((row["size"], row["size_low"], row["size_high"]) if sized else
                         (row["effect"], row["effect_low"], row["effect_high"]))  # fmt: skip
    if not _given(centre):
        return "not measured"
    unit, digits = (" pp", 1) if row["unit"] == "pp" else ("", 2)
    interval = f" [{low:.{digits}f}, {high:.{digits}f}]" if _given(low) and _given(high) else ""
    return f"{centre:.{digits}f}{unit}{interval}" + (f" ({_OURS_SHORT[row['claim']]})" if describe else "")


def glance_table(table: Any) -> Any:
    """The first screen's table of a :func:`reproduction_table`: one row per ledger row with the paper's number, ours
    with its 95 % interval, and the verdict."""
    import pandas as pd

    rows = {"paper": [_PAPER_SHORT.get(key, "") for key in table.index],
            "ours [95 % CI]": [_ours_cell(row) for _, row in table.iterrows()], "verdict": list(table["verdict"])}  # fmt: skip
    return pd.DataFrame(rows, index=pd.Index(list(table.index), name="claim"))


def against_record(table: Any, record: Any) -> Any:
    """An exploration's rows (``table``, a :func:`reproduction_table`) beside the committed record's (``record``, the
    same claims measured on the record): what each row measures, the record's number with its 95 % interval, this
    exploration's, and the verdict, ``"reproduced in size"`` or ``"record → here"`` where it changed."""
    import pandas as pd

    keys = list(table.index)
    theirs = {key: record.loc[key] for key in keys if key in record.index}
    rows = {
        "measures": [_OURS_SHORT[table.loc[key, "claim"]] for key in keys],
        "committed record [95 % CI]": [_ours_cell(theirs[key], False) if key in theirs else "–" for key in keys],
        "this page [95 % CI]": [_ours_cell(table.loc[key], False) for key in keys],
        "verdict": [_verdict_change(theirs[key]["verdict"] if key in theirs else None, table.loc[key, "verdict"])
                    for key in keys],
    }  # fmt: skip
    return pd.DataFrame(rows, index=pd.Index(keys, name="claim"))


def _verdict_change(record: str | None, here: str) -> str:
    return here if record in (None, here) else f"{record} → {here}"


def answer(table: Any, preset: str) -> str:
    """Three sentences that answer the book's question from a :func:`reproduction_table`: SGD's memory (C1), the
    adaptive optimizers' (C2), and the count of verdicts."""
    parts = []
    if "C1" in table.index and _given(table.loc["C1", "effect"]):
        c1 = table.loc["C1"]
        parts.append(f"At the {preset} preset, low-learning-rate SGD keeps a cross-fitted spread of "
                     f"{c1['effect']:.1f} pp [95 % CI {c1['effect_low']:.1f}, {c1['effect_high']:.1f}] across the "
                     f"initialization scales (paper: 26.5 pp): {c1['verdict']}.")  # fmt: skip
    adaptive = [key for key in ("C2 Adam", "C2 AdamW", "C2 Muon") if key in table.index and _given(table.loc[key, "size"])]
    if adaptive:
        spreads = ", ".join(f"{key.split()[1]} {table.loc[key, 'size']:.1f} pp ({table.loc[key, 'verdict']})"
                            for key in adaptive)  # fmt: skip
        parts.append(f"The adaptive optimizers keep less: {spreads} (paper: minimal, about 4 pp for Muon).")
    counts = table["verdict"].value_counts()
    parts.append(f"Of the ledger's {len(table)} rows, {counts.get(IN_SIZE, 0)} are reproduced in size, "
                 f"{counts.get(IN_DIRECTION, 0)} in direction, {counts.get(NOT_REPRODUCED, 0)} not reproduced and "
                 f"{counts.get(INCONCLUSIVE, 0)} inconclusive; each inconclusive row says what would decide it.")  # fmt: skip
    return " ".join(parts)


# --- rendering for the chapters ------------------------------------------------------------------------------
def verdict_box(table: Any, claims: str | list[str]) -> str:
    """MyST text summarising the rows of ``claims`` (claim names like ``"C2"``, or row keys) of a
    :func:`reproduction_table` for a chapter: per row the paper's statement, ours, the verdict with its reason, the
    clocks and the note; the rule once per claim."""
    claims = [claims] if isinstance(claims, str) else list(claims)
    lines = []
    for claim in claims:
        own = table[(table["claim"] == claim) | (table.index == claim)]
        if own.empty:
            continue
        first = own.iloc[0]
        lines += [f"**{first['claim']}. {first['question']}**", "", f"- Paper: {first['paper']}."]
        for key, row in own.iterrows():
            label = f"{key}: " if row["part"] else ""
            needed = (f" About {int(row['seeds_needed'])} seeds would decide it at the observed mean and spread."
                      if row["verdict"] == INCONCLUSIVE and _given(row["seeds_needed"]) else "")  # fmt: skip
            lines.append(f"- {label}**{row['verdict']}** ({row['reason']}).{needed}")
            lines.append(f"  Ours ({row['scale']}): {row['ours']}.")
            if row["clocks"]:
                lines.append(f"  Clocks: {row['clocks']}.")
            if row["note"]:
                lines.append(f"  Note: {row['note']}.")
        lines += [f"- Rule: {first['rule']}.", ""]
    return "\n".join(lines).strip()


def _given(value: Any) -> bool:
    """Whether a table cell holds a value (not None, NaN or pandas' NA)."""
    import pandas as pd

    return value is not None and not bool(pd.isna(value))


def _own_claims(experiment: str, claims: list[str] | None) -> list[str]:
    return list(claims) if claims else [claim for claim, name, _ in _CLAIMS if name == experiment]


def chapter_table(experiment: str, ds: xr.Dataset, claims: list[str] | None = None) -> Any:
    """The :func:`reproduction_table` of the claims that ``experiment``'s results ``ds`` decide (all of them, or
    ``claims``)."""
    return reproduction_table({experiment: ds}, _own_claims(experiment, claims))


def chapter_box(experiment: str, ds: xr.Dataset, claims: list[str] | None = None) -> str:
    """The verdict box of the claims that ``experiment``'s results ``ds`` decide (all of them, or ``claims``), for
    its chapter; the same rules and numbers as the ledger."""
    return verdict_box(chapter_table(experiment, ds, claims), _own_claims(experiment, claims))


def chapter_verdicts(experiment: str, ds: xr.Dataset, claims: list[str] | None = None, label: str | None = None) -> str:
    """One line with the verdict of each row that ``experiment``'s results ``ds`` decide, for the first screen of
    its chapter, linking to the full box (:func:`chapter_box`) under the MyST target ``label`` (default
    ``verdict-<experiment>``), e.g. ``**Verdict at the cpu preset:** C1 reproduced in direction · C7 reproduced in
    direction ({ref}`the numbers and the rules <verdict-01_optimizers>`).``"""
    table = chapter_table(experiment, ds, claims)
    where = f"the {ds.attrs['preset']} preset" if "preset" in ds.attrs else "this preset"
    verdicts = " · ".join(f"{key} {row['verdict']}" for key, row in table.iterrows())
    return f"**Verdict at {where}:** {verdicts} ({{ref}}`the numbers and the rules <{label or f'verdict-{experiment}'}>`)."
