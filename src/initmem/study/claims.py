"""The claims ledger: the paper's seven claims C1-C7 against this reproduction, judged by printed rules.

Every claim is reduced to one *effect*, oriented so that a positive value is the paper's direction, measured
per seed (a paired comparison: runs of one seed share their initial directions and data order) and summarised
by :func:`initmem.study.stats.mean_interval`: the mean over seeds with its 95 % Student-t interval. The verdict then
follows :data:`VERDICT_DEFINITIONS` exactly:

* **reproduced in size**: the interval lies on the paper's side of the claim's threshold *and* the paper gives
  a number that the size interval is compatible with (the claim's size rule in :data:`RULES`);
* **reproduced in direction**: the interval lies on the paper's side, but the paper gives no number or the
  number is outside what we measured;
* **not reproduced**: the interval lies entirely on the other side of the threshold (it excludes the paper's
  direction);
* **inconclusive**: anything else: the interval straddles the threshold, fewer than two seeds, a premise of the
  claim is not met at this scale (e.g. SGD does not interpolate), or the experiment was not run.

:func:`reproduction_table` builds one row per claim; :func:`verdict_box` renders one row for the top of a chapter.
Spreads are those of the validation-selected predictor (the paper's metric); every row also shows the final
(last-epoch) predictor with the training accuracy of each, and the clocks at the selected checkpoint.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from ..run.thresholds import INTERPOLATION_THRESHOLD
from .stats import Interval, mean_interval, rank_correlation, seed_mean, seed_spreads

__all__ = [
    "IN_SIZE",
    "IN_DIRECTION",
    "NOT_REPRODUCED",
    "INCONCLUSIVE",
    "VERDICTS",
    "VERDICT_DEFINITIONS",
    "NOISE_FLOOR_PP",
    "PAPER",
    "RULES",
    "judge",
    "l2_cells",
    "reproduction_table",
    "verdict_box",
    "chapter_box",
]

IN_SIZE, IN_DIRECTION, NOT_REPRODUCED, INCONCLUSIVE = (
    "reproduced in size", "reproduced in direction", "not reproduced", "inconclusive",
)  # fmt: skip
#: The four verdicts, strongest first.
VERDICTS = (IN_SIZE, IN_DIRECTION, NOT_REPRODUCED, INCONCLUSIVE)
#: What each verdict means (printed in the book).
VERDICT_DEFINITIONS = {
    IN_SIZE: "the effect's 95 % interval lies on the paper's side of the threshold, and the paper's number is "
             "compatible with what we measured (the claim's size rule)",
    IN_DIRECTION: "the interval lies on the paper's side of the threshold; the paper gives no number, or its "
                  "number is not compatible with ours",
    NOT_REPRODUCED: "the interval lies entirely on the other side of the threshold: it excludes the paper's "
                    "direction",
    INCONCLUSIVE: "the interval straddles the threshold, there are fewer than 2 seeds, a premise of the claim "
                  "is not met at this scale, or the experiment has no results",
}  # fmt: skip
#: A spread below this (percentage points) is within what seeds and a 2,000-image test set produce.
NOISE_FLOOR_PP = 5.0

#: The paper's claims, with where they come from (the paper summary, shared/paper/000_*.txt).
PAPER: dict[str, dict[str, Any]] = {
    "C1": {"question": "Does low-lr SGD interpolate yet keep a large spread across sigma_w?",
           "text": "26.5 pp spread, >= 99.5 % train accuracy (ResNet-9, b = 128, low-lr SGD)", "value": 26.5,
           "source": "summary, Key Results / Optimizer Dependence: 'SGD Remembers'"},
    "C2": {"question": "Do Adam, AdamW and Muon erase the spread that SGD keeps?",
           "text": "~4 pp spread for Muon; Adam and AdamW 'minimal'", "value": 4.0,
           "source": "summary, Key Results / Optimizer Dependence: 'Adaptive Methods Forget'"},
    "C3": {"question": "Does training SGD much longer leave its spread unchanged?",
           "text": "5,000 epochs of low-lr SGD: spread 'essentially unchanged'", "value": None,
           "source": "summary, Hyperparameter Dependence: 'Training Time is Insufficient'"},
    "C4": {"question": "Do a larger learning rate and L2 decay erase the spread?",
           "text": "larger lr / L2 decay: spread 'near zero'", "value": 0.0,
           "source": "summary, Hyperparameter Dependence: 'Regularization and Learning Rate'"},
    "C5": {"question": "Do larger batches forget more slowly?",
           "text": "larger batches (16 -> 256): bigger spread", "value": None,
           "source": "summary, Hyperparameter Dependence: 'Batch Size'"},
    "C6": {"question": "Do deeper ResNets fail to interpolate at large sigma_w?",
           "text": "ResNet-56/110 fail to reach 99.5 % train accuracy at large sigma_w", "value": 99.5,
           "source": "summary, Depth and Architecture"},
    "C7": {"question": "Does SGD's final weight norm stay coupled to the initial one, unlike the adaptive methods'?",
           "text": "SGD's final norm coupled to the initial one; adaptive methods reach a common norm", "value": None,
           "source": "summary, Key Results: final weight norm; 'converge to a common final norm scale'"},
}  # fmt: skip

#: The rule of each claim: its effect (per seed, positive = the paper's direction), threshold and size rule.
RULES: dict[str, str] = {
    "C1": "effect: SGD's selected spread; direction: its interval above the 5 pp noise floor; not reproduced: "
          "entirely below it; premise: every SGD run interpolates (final train accuracy >= 99.5 %), else at most "
          "inconclusive; size: the interval contains 26.5 pp",
    "C2": "effect: SGD's selected spread minus the largest adaptive one (Adam, AdamW, Muon), per seed; threshold "
          "0; size: Muon's spread interval contains 4 pp",
    "C3": "effect: SGD's selected spread at the longest horizon minus at a reference horizon, per seed; "
          "direction: above -5 pp (it loses less than the noise floor); references: every shorter horizon at "
          "which all runs interpolate and the spread exceeds the noise floor; the verdict must agree over all of "
          "them, else inconclusive; no size (the paper gives no number)",
    "C4": "effect: the spread at the lowest lr without L2 minus the spread at the highest lr with the strongest "
          "L2, per seed; threshold 0; size: the latter's interval reaches below the 5 pp noise floor ('near "
          "zero')",
    "C5": "effect: the spread at the largest batch minus at the smallest, per seed, at equal steps; threshold "
          "0; no size (the paper gives no number)",
    "C6": "effect: ResNet-9's final train accuracy minus the deepest model's at the largest sigma_w, per seed; "
          "threshold 0; premise: ResNet-9 interpolates at every sigma_w; size: the deepest model's interval "
          "lies below 99.5 %",
    "C7": "effect: the slope of log final vs log initial kernel norm across sigma_w for SGD minus the largest "
          "adaptive slope, per seed; threshold 0; no size (the paper gives no number)",
}  # fmt: skip


def judge(effect: Interval, threshold: float = 0.0, size: bool = False, premise: bool = True) -> str:
    """The verdict of an ``effect`` oriented so that values above ``threshold`` are the paper's direction.

    ``size``: whether the claim's size rule holds (only counts with the direction); ``premise``: whether the
    claim's premise holds at this scale (without it, only "not reproduced" or "inconclusive" can be said).
    """
    if not effect.has_bounds:
        return INCONCLUSIVE
    if effect.high < threshold:
        return NOT_REPRODUCED
    if effect.low > threshold and premise:
        return IN_SIZE if size else IN_DIRECTION
    return INCONCLUSIVE


@dataclass
class _Row:
    claim: str
    effect: Interval
    verdict: str
    ours: str
    clocks: str
    scale: str
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        paper = PAPER[self.claim]
        return {
            "claim": self.claim, "question": paper["question"], "paper": paper["text"], "ours": self.ours,
            "effect": self.effect.estimate, "effect_low": self.effect.low, "effect_high": self.effect.high,
            "seeds": self.effect.n, "verdict": self.verdict, "rule": RULES[self.claim], "clocks": self.clocks,
            "scale": self.scale, "note": self.note, "paper_source": paper["source"],
        }  # fmt: skip


# --- helpers ------------------------------------------------------------------------------------------
def _spread(ds: xr.Dataset, var: str = "selected_test_acc") -> xr.DataArray:
    return seed_spreads(ds[var], "sigma_w")


def _interval(values: xr.DataArray) -> Interval:
    return mean_interval(values.values)


def _predictors(ds: xr.Dataset) -> str:
    """The selected and the final predictor: spread interval and mean training accuracy of each."""
    parts = []
    for name in ("selected", "final"):
        spread = _interval(_spread(ds, f"{name}_test_acc"))
        train = float(ds[f"{name}_train_acc"].mean(skipna=True))
        parts.append(f"{name}: spread {spread}, train acc {train:.1f} %")
    return "; ".join(parts)


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


def _interpolates(values: xr.DataArray) -> bool:
    return bool((values >= INTERPOLATION_THRESHOLD).all())


# --- the claims -----------------------------------------------------------------------------------------
def _c1(ds: xr.Dataset) -> _Row:
    sgd = ds.sel(optimizer="sgd")
    effect = _interval(_spread(sgd))
    premise = _interpolates(sgd["final_train_acc"])
    size = effect.has_bounds and effect.low <= PAPER["C1"]["value"] <= effect.high
    note = "" if premise else (f"not every SGD run interpolates (lowest final train accuracy "
                               f"{float(sgd['final_train_acc'].min()):.1f} %): the premise of C1 is not met")  # fmt: skip
    return _Row("C1", effect, judge(effect, NOISE_FLOOR_PP, size, premise), _predictors(sgd),
                _clocks(sgd, ("T_SGD",)), _scale(ds), note)  # fmt: skip


def _c2(ds: xr.Dataset) -> _Row:
    present = [o for o in ("adam", "adamw", "muon") if o in ds["optimizer"].values]
    spreads = _spread(ds)
    worst = spreads.sel(optimizer=present).max("optimizer")
    effect = _interval(spreads.sel(optimizer="sgd") - worst)
    adaptive = {o: _interval(spreads.sel(optimizer=o)) for o in present}
    muon = adaptive.get("muon")
    size = muon is not None and muon.has_bounds and muon.low <= PAPER["C2"]["value"] <= muon.high
    ours = "; ".join(f"{o} {i}" for o, i in adaptive.items()) + f"; SGD {_interval(spreads.sel(optimizer='sgd'))}"
    ours += f"; SGD minus the largest adaptive spread {effect}"
    clocks = "; ".join(_clocks(ds.sel(optimizer=o), ("T_adapt",), f"({o})") for o in present)
    return _Row("C2", effect, judge(effect, 0.0, size), ours, clocks, _scale(ds))


def _c3(ds: xr.Dataset) -> _Row:
    from .analysis import horizons_of, within_horizons

    horizons = horizons_of(ds)
    h = within_horizons(ds, horizons)
    spreads = _spread(h)  # (horizon, seed)
    last = horizons[-1]
    lines, verdicts, effects, references = [], [], [], []
    for T in horizons[:-1]:
        at = h.sel(horizon=T)
        memory = _interval(spreads.sel(horizon=T))
        if not _interpolates(at["final_train_acc"]) or not memory.low > NOISE_FLOOR_PP:
            lines.append(f"{T} ep: spread {memory} (not a reference: "
                         f"{'not every run interpolates' if not _interpolates(at['final_train_acc']) else 'no memory above the noise floor'})")  # fmt: skip
            continue
        effect = _interval(spreads.sel(horizon=last) - spreads.sel(horizon=T))
        verdicts.append(judge(effect, -NOISE_FLOOR_PP))
        effects.append(effect)
        references.append(T)
        lines.append(f"{T} ep: spread {memory}; change to {last} ep {effect} -> {verdicts[-1]}")
    lines.append(f"{last} ep: spread {_interval(spreads.sel(horizon=last))}")
    if not verdicts:
        verdict, effect, note = INCONCLUSIVE, Interval(math.nan, math.nan, math.nan, 0), "no valid reference horizon"
    else:
        verdict = verdicts[0] if len(set(verdicts)) == 1 else INCONCLUSIVE
        effect = effects[0]
        note = "" if len(set(verdicts)) == 1 else "the verdict depends on the reference horizon"
        note = "; ".join(filter(None, [note, _same_selection_note(h, references, last)]))
    clocks = _clocks(h.sel(horizon=last), ("T_SGD",), f" ({last} epochs)")
    return _Row("C3", effect, verdict, " | ".join(lines), clocks, _scale(ds) + f", up to {last} epochs", note)


def _same_selection_note(h: xr.Dataset, references: list[int], last: int) -> str:
    """C3's note when validation selects, at every reference horizon, the checkpoints it selects at the longest
    (then the selected spread cannot change by construction): says so, and gives the final predictor's change."""
    selected = h["best_epoch"]
    if not all(bool((selected.sel(horizon=T) == selected.sel(horizon=last)).all()) for T in references):
        return ""
    first = references[0]
    final = _interval(_spread(h.sel(horizon=last), "final_test_acc") - _spread(h.sel(horizon=first), "final_test_acc"))
    return (f"validation selects the same checkpoints at every reference horizon as at {last} epochs (the latest at "
            f"epoch {int(selected.sel(horizon=last).max())}), so the selected spread cannot change there; the final "
            f"predictor's spread changes by {final} from {first} to {last} epochs")  # fmt: skip


def l2_cells(ds: xr.Dataset) -> "Any":
    """03's four (or more) lr x L2 cells, one row each (a pandas DataFrame indexed by lr and weight_decay).

    Columns: the selected spread's interval (``spread``, ``low``, ``high``), the final spread, ``T_L2`` at the end,
    and ``log_norm_ratio`` = the largest over sigma_w of ln(||W_0|| / ||W_T||) (seed mean): the relaxation the
    L2 clock must cover for the norms to forget their start. ``T_L2 > log_norm_ratio`` is when theory (T5)
    predicts forgetting.
    """
    import pandas as pd

    from .analysis import last_finite

    rows = []
    ratio = np.log(ds["weight_norm"].isel(epoch=0) / last_finite(ds["weight_norm"]))
    for lr in ds["lr"].values:
        for wd in ds["weight_decay"].values:
            cell = ds.sel(lr=lr, weight_decay=wd)
            spread, final = _interval(_spread(cell)), _interval(_spread(cell, "final_test_acc"))
            rows.append({
                "lr": float(lr), "weight_decay": float(wd), "spread": spread.estimate, "low": spread.low,
                "high": spread.high, "final_spread": final.estimate,
                "final_train_acc": float(cell["final_train_acc"].mean()), "T_L2": float(cell["final_T_L2"].mean()),
                "log_norm_ratio": float(seed_mean(ratio.sel(lr=lr, weight_decay=wd)).max()),
            })  # fmt: skip
    table = pd.DataFrame(rows)
    table["forgetting_predicted"] = table["T_L2"] > table["log_norm_ratio"]
    return table.set_index(["lr", "weight_decay"])


def _c4(ds: xr.Dataset) -> _Row:
    lrs, wds = sorted(map(float, ds["lr"].values)), sorted(map(float, ds["weight_decay"].values))
    spreads = _spread(ds)
    keep, forget = spreads.sel(lr=lrs[0], weight_decay=wds[0]), spreads.sel(lr=lrs[-1], weight_decay=wds[-1])
    effect = _interval(keep - forget)
    forget_interval = _interval(forget)
    size = forget_interval.has_bounds and forget_interval.low < NOISE_FLOOR_PP
    cells = l2_cells(ds)
    ours = "; ".join(
        f"lr {lr:g}, L2 {wd:g}: {Interval(r.spread, r.low, r.high, effect.n)} (T_L2 {r.T_L2:.2g} vs "
        f"ln(|W0|/|W*|) {r.log_norm_ratio:.2f})" for (lr, wd), r in cells.iterrows()
    )
    clocks = _clocks(ds.sel(lr=lrs[-1], weight_decay=wds[-1]), ("T_SGD", "T_L2"), " (forget cell)")
    return _Row("C4", effect, judge(effect, 0.0, size), ours, clocks, _scale(ds))


def _c5(ds: xr.Dataset) -> _Row:
    sizes = sorted(int(b) for b in ds["batch_size"].values)
    spreads = _spread(ds)
    effect = _interval(spreads.sel(batch_size=sizes[-1]) - spreads.sel(batch_size=sizes[0]))
    means = [float(seed_mean(spreads.sel(batch_size=b))) for b in sizes]
    rho = rank_correlation(sizes, means)
    ours = ", ".join(f"b={b}: {_interval(spreads.sel(batch_size=b))}" for b in sizes)
    ours += f"; largest minus smallest b {effect}; Spearman rho of the seed-mean spreads {rho:.2f}"
    clocks = "; ".join(_clocks(ds.sel(batch_size=b), ("T_SGD",), f"(b={b})") for b in (sizes[0], sizes[-1]))
    steps = [int(ds["final_epoch"].sel(batch_size=b).max()) for b in sizes]
    note = "epochs per batch size: " + ", ".join(f"b={b}: {e}" for b, e in zip(sizes, steps))
    return _Row("C5", effect, judge(effect, 0.0), ours, clocks, _scale(ds), note)


def _depth(model: str) -> int:
    return 9 if model == "resnet9" else int(model.removeprefix("resnet"))


def _c6(ds: xr.Dataset) -> _Row:
    models = [str(m) for m in ds["model"].values]
    deepest = max(models, key=_depth)
    top = float(max(ds["sigma_w"].values))
    train = ds["final_train_acc"]
    reference = train.sel(model="resnet9")
    effect = _interval(reference.sel(sigma_w=top) - train.sel(model=deepest, sigma_w=top))
    deep = _interval(train.sel(model=deepest, sigma_w=top))
    premise = _interpolates(reference)
    size = deep.has_bounds and deep.high < PAPER["C6"]["value"]
    ours = "; ".join(f"{m} at sigma_w {top:g}: final train acc {_interval(train.sel(model=m, sigma_w=top)).format(' %')}"
                     for m in models)  # fmt: skip
    note = "" if premise else (f"the reference ResNet-9 does not interpolate at every sigma_w (lowest "
                               f"{float(reference.min()):.1f} %): the premise of the comparison is not met")  # fmt: skip
    return _Row("C6", effect, judge(effect, 0.0, size, premise), ours, _clocks(ds.sel(model=deepest), ("T_SGD",)),
                _scale(ds), note)  # fmt: skip


def _c7(ds: xr.Dataset) -> _Row:
    from .analysis import norm_coupling

    present = [o for o in ("adam", "adamw", "muon") if o in ds["optimizer"].values]
    slopes = norm_coupling(ds)  # (optimizer, seed)
    effect = _interval(slopes.sel(optimizer="sgd") - slopes.sel(optimizer=present).max("optimizer"))
    ours = "; ".join(f"{o} {_interval(slopes.sel(optimizer=o)).format('', 2)}" for o in ("sgd", *present))
    clocks = "; ".join(_clocks(ds.sel(optimizer=o), ("T_adapt",), f"({o})") for o in present)
    return _Row("C7", effect, judge(effect, 0.0), "slopes: " + ours, clocks, _scale(ds))


#: (claim, experiment it reads, rule) in ledger order.
_CLAIMS: tuple[tuple[str, str, Callable[[xr.Dataset], _Row]], ...] = (
    ("C1", "01_optimizers", _c1),
    ("C2", "01_optimizers", _c2),
    ("C3", "02_long_training", _c3),
    ("C4", "03_lr_and_l2", _c4),
    ("C5", "04_batch_size", _c5),
    ("C6", "05_depth", _c6),
    ("C7", "01_optimizers", _c7),
)


def reproduction_table(results: Mapping[str, xr.Dataset]) -> "Any":
    """The ledger: one row per claim C1-C7 (a pandas DataFrame indexed by claim).

    Columns: ``question``, ``paper`` (the paper's statement), ``ours`` (the measured intervals, both predictors
    where a spread is judged), ``effect`` / ``effect_low`` / ``effect_high`` / ``seeds`` (the judged effect's mean
    over seeds and 95 % t-interval), ``verdict`` (one of :data:`VERDICTS`), ``rule`` (:data:`RULES`), ``clocks``
    (at the selected checkpoint, and at the end), ``scale``, ``note`` and ``paper_source``. A claim whose
    experiment has no results, or lacks what its rule needs, is inconclusive with the reason in ``note``.
    """
    import pandas as pd

    rows = []
    for claim, name, rule in _CLAIMS:
        ds = results.get(name)
        empty = Interval(math.nan, math.nan, math.nan, 0)
        if ds is None:
            rows.append(_Row(claim, empty, INCONCLUSIVE, "n/a", "", "", f"not measured: no results of {name}"))
            continue
        try:
            row = rule(ds)
            diverged = int((ds["diverged"] == 1).sum()) if "diverged" in ds else 0
            if diverged:  # their predictors are NaN: they are left out of every interval above
                row.note = "; ".join(filter(None, [row.note, f"{diverged} run(s) of {name} diverged and are left out"]))
            rows.append(row)
        except (KeyError, ValueError, IndexError) as exc:
            rows.append(_Row(claim, empty, INCONCLUSIVE, "n/a", "", _scale(ds),
                             f"{name} lacks what the rule needs ({type(exc).__name__}: {exc})"))  # fmt: skip
    if "09_adaptive_lr" in results:  # what the knob of C2, the adaptive learning rate, measured at each value
        c2 = next(row for row in rows if row.claim == "C2")
        reference = results.get("01_optimizers")
        c2.note = "; ".join(filter(None, [c2.note, _learning_rates_note(results["09_adaptive_lr"], reference)]))
    return pd.DataFrame([row.as_dict() for row in rows]).set_index("claim")


def _learning_rates_note(ds: xr.Dataset, reference: xr.Dataset | None = None) -> str:
    """C2's note from experiment 09 (``ds``): each adaptive optimizer's selected spread at every learning rate tried
    (at the ends of the sigma_w grid), the smallest, and whether it lies measurably below the spread at the
    optimizer's learning rate in experiment 01 (``reference``, whose runs decide C2)."""
    from .analysis import against_reference, field_values, smallest_spread, spread_points

    table = spread_points(ds, "09_adaptive_lr")
    parts = []
    for optimizer, rows in table.groupby("optimizer", sort=False):
        tried = ", ".join(f"lr {row.lr:g}: {row.selected_spread_pp:.1f} pp" for row in rows.itertuples())
        parts.append(f"{optimizer} {tried}")
    best = smallest_spread(table)
    smallest = ", ".join(
        f"{row.optimizer} {Interval(row.selected_spread_pp, row.selected_ci95_low, row.selected_ci95_high, int(row.selected_n_seeds))} at lr {row.lr:g}"
        for row in best.itertuples()
    )  # fmt: skip
    note = (f"09 tried other adaptive learning rates (selected spread over the ends of the sigma_w grid): "
            f"{'; '.join(parts)}; the smallest: {smallest}")  # fmt: skip
    if reference is None:
        return note
    optimizers, lrs = field_values(reference, "optimizer"), field_values(reference, "lr")
    own_lrs = dict(zip(optimizers, lrs)) if len(lrs) == len(optimizers) else dict.fromkeys(optimizers, lrs[0])
    knob = against_reference(table, own_lrs)
    lower = list(knob.loc[knob["measurably_lower"], "optimizer"])
    outcome = (f"measurably below the spread at 01's learning rate (intervals apart) for {', '.join(lower)} only"
               if lower else "none measurably below the spread at 01's learning rate (the intervals overlap), so "
               "the learning rate does not decide this verdict")  # fmt: skip
    return f"{note}; {outcome}"


def verdict_box(table: "Any", claims: str | list[str]) -> str:
    """A MyST admonition summarising ``claims`` (rows of :func:`reproduction_table`) for the top of a chapter:
    the paper's statement, ours with its interval, the verdict, the clocks."""
    claims = [claims] if isinstance(claims, str) else list(claims)
    lines = []
    for claim in claims:
        row = table.loc[claim]
        lines += [f"**{claim}. {row['question']}** Verdict: **{row['verdict']}**.", "",
                  f"- Paper: {row['paper']}.", f"- Ours ({row['scale']}): {row['ours']}."]  # fmt: skip
        if row["clocks"]:
            lines.append(f"- Clocks: {row['clocks']}.")
        if row["note"]:
            lines.append(f"- Note: {row['note']}.")
        lines.append(f"- Rule: {row['rule']}.")
        lines.append("")
    return "\n".join(lines).strip()


def chapter_box(experiment: str, ds: xr.Dataset, claims: list[str] | None = None) -> str:
    """The verdict box of the claims that ``experiment``'s results ``ds`` decide (all of them, or ``claims``), for
    its chapter; the same rules and numbers as the ledger."""
    return verdict_box(reproduction_table({experiment: ds}), _own_claims(experiment, claims))


def chapter_verdicts(experiment: str, ds: xr.Dataset, claims: list[str] | None = None, label: str | None = None) -> str:
    """One line with the verdict of each claim that ``experiment``'s results ``ds`` decide, for the first screen of
    its chapter, linking to the full box (:func:`chapter_box`) under the MyST target ``label`` (default
    ``verdict-<experiment>``), e.g. ``**Verdict at the cpu preset:** C1 reproduced in size · C7 reproduced in direction
    ({ref}`the numbers and the rules <verdict-01_optimizers>`).`` The verdicts are the ledger's
    (:func:`reproduction_table`)."""
    table = reproduction_table({experiment: ds})
    own = _own_claims(experiment, claims)
    where = f"the {ds.attrs['preset']} preset" if "preset" in ds.attrs else "this preset"
    verdicts = " · ".join(f"{claim} {table.loc[claim, 'verdict']}" for claim in own)
    return f"**Verdict at {where}:** {verdicts} ({{ref}}`the numbers and the rules <{label or f'verdict-{experiment}'}>`)."


def _own_claims(experiment: str, claims: list[str] | None) -> list[str]:
    return list(claims) if claims else [claim for claim, name, _ in _CLAIMS if name == experiment]
