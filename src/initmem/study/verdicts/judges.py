"""The judges of the paper's claims: one function per claim (C1-C7, and B1 beyond the paper, whose judge is
:func:`initmem.study.verdicts.boundary_judge.judge_b1`) that turns an experiment's combined Dataset into the ledger's rows
(:class:`initmem.study.verdicts.ledger.Row`), by the rules printed in :data:`initmem.study.verdicts.ledger.RULES`. :func:`claims_of`
lists them in ledger order with the experiment each reads (of every experiment: ``claims_of(experiments.DISCOVERED)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import xarray as xr

from ...base.numbers import decimal
from ...run import optimizers
from ...run.thresholds import INTERPOLATION_THRESHOLD
from ..statistics.calibration import LABEL as CALIBRATED
from ..statistics.calibration import CrossFitted
from ..statistics.nulls import contrast_null, contrast_null_floor, spread_null, spread_null_floor
from ..statistics.stats import Interval, finite_runs, mean_interval
from . import rules
from .boundary_judge import judge_b1
from .carrier import PREDICTORS, carrying_predictor, interpolation_premise
from .ledger import (
    Row,
    clocks_text,
    cross_fitted,
    interval_of,
    judged_row,
    scale_text,
    seed_matrix,
    spread_text,
)
from .rules import INCONCLUSIVE, PREMISE_NOT_MET, Verdict

__all__ = [
    "RULES",
    "NOTES",
    "claims_of",
    "annotations_of",
    "learning_rates_note",
    "DEPTH_MARGIN_PP",
    "SLOPE_MARGIN",
    "adaptive_in",
    "compared_horizons",
    "most_coupled_adaptive",
    "depth_interaction",
    "norm_slopes",
    "norm_slope_difference",
]


def _contrast_row(
    claim: str,
    part: str,
    reference: xr.Dataset,
    other: xr.Dataset,
    *,
    ours: Callable[[Interval], str],
    sized: bool,
    premise: str = "",
    predictor: str = "selected",
    **texts: str,
) -> Row:
    """A row judging how much more memory ``reference`` keeps than ``other`` (each with dims sigma_w and seed): the
    per-seed difference of their cross-fitted spreads of ``predictor``'s test accuracy (pp; ``"selected"`` or
    ``"final"``), against the null of exchanging the two's runs within each seed. ``sized``: the paper's number is
    ``other``'s own spread (C2's "about 4 pp for Muon", C4's "near zero"), not the difference. ``ours`` writes the
    row's text from the difference's interval."""
    var = f"{predictor}_test_acc"
    a, b = finite_runs(reference, var), finite_runs(other, var)
    cells = a.sizes["sigma_w"]
    difference = cross_fitted(reference, var) - cross_fitted(other, var)
    return judged_row(
        claim,
        part,
        difference.values,
        contrast_null(seed_matrix(a), seed_matrix(b)),
        lambda n: contrast_null_floor(cells * n),
        size_values=cross_fitted(other, var).values if sized else None,
        premise=premise,
        method=CrossFitted(cells, "contrast"),
        ours=ours(interval_of(difference, CrossFitted(cells, "contrast"))),
        predictor=predictor,
        **texts,
    )


def _on_the_interpolating_predictor(judge: Callable[[str, str], Row], runs: dict[str, xr.Dataset]) -> Row:
    """One row judged on both predictors, ``judge(predictor, premise)`` each with the interpolation premise of
    ``runs`` (label -> Dataset, :func:`initmem.study.verdicts.carrier.interpolation_premise`) checked on that predictor's own
    train accuracy; :func:`initmem.study.verdicts.carrier.carrying_predictor` picks the one that carries the verdict; the row's
    reason says which and gives the other's verdict."""
    premises = {name: interpolation_premise(runs, name) for name in PREDICTORS}
    rows = {name: judge(name, premise) for name, premise in premises.items()}
    carrier, why = carrying_predictor(premises)
    other = "final" if carrier == "selected" else "selected"
    row, aside = rows[carrier], rows[other].verdict
    row.verdict = Verdict(
        row.verdict.verdict,
        f"{why} the verdict: {row.verdict.reason}; the {other} predictor alone: {aside.verdict} ({aside.reason})",
    )
    return row


# --- the claims -----------------------------------------------------------------------------------------
def _c1(ds: xr.Dataset) -> list[Row]:
    sgd = ds.sel(optimizer="sgd")
    k = sgd.sizes["sigma_w"]

    def judge(predictor: str, premise: str) -> Row:
        values = finite_runs(sgd, f"{predictor}_test_acc")
        return judged_row(
            "C1",
            "",
            cross_fitted(sgd, f"{predictor}_test_acc").values,
            spread_null(seed_matrix(values)),
            lambda n: spread_null_floor(k, n),
            premise=premise,
            method=CrossFitted(k),
            ours=spread_text(sgd),
            predictor=predictor,
            clocks=clocks_text(sgd, ("T_SGD",)),
            scale=scale_text(ds),
        )

    return [_on_the_interpolating_predictor(judge, {"SGD": sgd})]


def _failed_runs(train: xr.DataArray, dims: tuple[str, ...]) -> str:
    """The runs whose ``train`` accuracy (%) lies below the interpolation threshold, in the order of ``dims``, each
    named by its coordinates (a model by its name, others as ``"sigma_w 0.1"``) with its accuracy, e.g.
    ``"resnet110 sigma_w 0.1 seed 0 (36.9 %)"``; ``"none"`` when every run interpolates."""
    failed = train.where(train < INTERPOLATION_THRESHOLD).to_dataframe(name="acc").dropna()
    failed = failed.reset_index().sort_values(list(dims))
    named = (
        " ".join(str(run[d]) if d == "model" else f"{d} {run[d]:g}" for d in dims) + f" ({run['acc']:.1f} %)"
        for _, run in failed.iterrows()
    )
    return ", ".join(named) or "none"


def adaptive_in(names: Iterable[str]) -> list[str]:
    """The adaptive optimizers among ``names`` (an experiment's ``optimizer`` coordinate), in its order; each record
    is looked up alone, so a page judging them depends on those records, not on the listing of every optimizer."""
    return [str(name) for name in names if optimizers.record(str(name)).family == "adaptive"]


def _c2(ds: xr.Dataset) -> list[Row]:
    sgd = ds.sel(optimizer="sgd")
    rows = []
    for optimizer in adaptive_in(ds["optimizer"].values):
        part = optimizers.label(optimizer)
        other = ds.sel(optimizer=optimizer)
        failed = _failed_runs(other["final_train_acc"], ("sigma_w", "seed"))
        note = (
            ""
            if failed == "none"
            else f"{part}'s runs that end below {INTERPOLATION_THRESHOLD:g} % train accuracy: {failed}"
        )

        def judge(predictor: str, premise: str, other: xr.Dataset = other, part: str = part, note: str = note) -> Row:
            return _contrast_row(
                "C2",
                part,
                sgd,
                other,
                ours=lambda difference: f"{spread_text(other, part)} | SGD minus {part} ({predictor}): {difference}",
                sized=True,
                predictor=predictor,
                premise=premise,
                note=note,
                clocks=clocks_text(other, ("T_adapt",)),
                scale=scale_text(ds),
            )

        rows.append(_on_the_interpolating_predictor(judge, {"SGD": sgd, part: other}))
    return rows


def compared_horizons(ds: xr.Dataset) -> tuple[int, int]:
    """C3's two horizons of experiment 02 (epochs): the reference (``ds.attrs["reference_horizon"]``, else the
    second-to-last of :func:`initmem.study.statistics.analysis.horizons_of`) and the last."""
    from ..statistics.analysis import horizons_of

    horizons = horizons_of(ds)
    reference = int(ds.attrs.get("reference_horizon", horizons[-2] if len(horizons) > 1 else horizons[0]))
    return reference, horizons[-1]


def _c3(ds: xr.Dataset) -> list[Row]:
    from ..statistics.analysis import within_horizons

    reference, last = compared_horizons(ds)
    h = within_horizons(ds, sorted({reference, last}))
    at_ref, at_last = h.sel(horizon=reference), h.sel(horizon=last)
    scale = scale_text(ds) + f", {reference} vs {last} epochs"
    clocks = clocks_text(at_last, ("T_SGD",), f" ({last} epochs)")
    later = reference < last  # a horizon after the reference: something to compare
    rows = []
    for name in ("final", "selected"):
        var = f"{name}_test_acc"
        memory = interval_of(cross_fitted(at_ref, var), CrossFitted(h.sizes["sigma_w"]))
        change = interval_of(
            cross_fitted(at_last, var) - cross_fitted(at_ref, var), CrossFitted(h.sizes["sigma_w"], "contrast")
        )
        premise = ""
        if not later:
            premise = f"no horizon after the reference ({reference} epochs): nothing to compare it with"
        elif short := interpolation_premise({f"at the reference horizon ({reference} epochs)": at_ref}, "final"):
            premise = short  # decided as every claim's premise is: a diverged run is left out
        elif not (memory.has_bounds and memory.low > 0):
            premise = f"no memory to keep at the reference horizon (cross-fitted spread {memory})"
        same = bool((at_ref["best_epoch"] == at_last["best_epoch"]).all())
        if name == "selected" and same and later:
            change = Interval(math.nan, math.nan, math.nan, change.n)  # nothing was measured: the spread cannot move
            verdict = Verdict(
                PREMISE_NOT_MET,
                f"premise not met: validation selects the same checkpoints at {reference} and {last} epochs (the "
                f"latest at epoch {int(at_last['best_epoch'].max())}), so the selected spread cannot change; a "
                "reference horizon after the last checkpoint validation picks would meet it; the final predictor "
                "carries the claim",
            )
        else:
            verdict = rules.judge_unchanged(change, premise=premise)
        ours = (
            f"{name} predictor: cross-fitted spread {memory} at {reference} epochs, "
            f"{interval_of(cross_fitted(at_last, var), CrossFitted(h.sizes['sigma_w']))} at {last}; change {change}"
        )
        rows.append(
            Row(
                "C3",
                f"{name} predictor",
                verdict,
                change,
                ours=ours,
                clocks=clocks,
                scale=scale,
                predictor=name,
            )
        )
    return rows


def _l2_clock_premise(cell: Any, wd: float) -> str:
    """C4's premise for a lever with L2 decay (T5): its clock must run past what the start has to lose,
    ``T_L2 >= ln(|W0|/|W*|)`` (x >= 0), or the paper's "near zero" is not what the clocks predict here. ``""`` when it
    does; else the premise with the clock values and what would meet it (at the same measured ``|W*|``)."""
    if wd <= 0 or cell["x"] >= 0:
        return ""
    factor = cell["log_ratio"] / cell["T_L2"] if cell["T_L2"] > 0 else math.inf
    return (
        f"the L2 clock does not cover the start: T_L2 {cell['T_L2']:.2g} against ln(|W0|/|W*|) "
        f"{cell['log_ratio']:.2f} (x = {cell['x']:.2f} < 0); meeting it takes about {factor:.1f}x the clock "
        f"(lambda about {wd * factor:.2g} at this lr and length, or {factor:.1f}x the epochs)"
    )


def _c4(ds: xr.Dataset) -> list[Row]:
    from .phase import cell_table

    lrs, wds = sorted(map(float, ds["lr"].values)), sorted(map(float, ds["weight_decay"].values))
    keep = ds.sel(lr=lrs[0], weight_decay=wds[0])
    cells = cell_table(ds)
    levers = {"larger lr": (lrs[-1], wds[0]), "L2": (lrs[0], wds[-1]), "both": (lrs[-1], wds[-1])}
    rows = []
    for part, (lr, wd) in levers.items():
        lever = ds.sel(lr=lr, weight_decay=wd)
        cell = cells.loc[(lr, wd)]
        clock = f"T_L2 {cell['T_L2']:.2g} against ln(|W0|/|W*|) {cell['log_ratio']:.2f} (x = {cell['x']:.2f})"

        def judge(
            predictor: str,
            premise: str,
            part: str = part,
            lever: xr.Dataset = lever,
            lr: float = lr,
            wd: float = wd,
            clock: str = clock,
        ) -> Row:
            head = f"lr {lr:g}, L2 {wd:g}: {spread_text(lever)} | lr {lrs[0]:g}, no L2 minus this cell ({predictor})"
            clock_premise = _l2_clock_premise(cells.loc[(lr, wd)], wd)
            return _contrast_row(
                "C4",
                part,
                keep,
                lever,
                ours=lambda difference, head=head, clock=clock: f"{head}: {difference} | {clock}",
                sized=True,
                predictor=predictor,
                premise="; ".join(p for p in (premise, clock_premise) if p),
                clocks=clocks_text(lever, ("T_SGD", "T_L2")),
                scale=scale_text(ds),
            )

        cells_of = {f"lr {lrs[0]:g}, no L2": keep, f"lr {lr:g}, L2 {wd:g}": lever}
        rows.append(_on_the_interpolating_predictor(judge, cells_of))
    return rows


def _c5(ds: xr.Dataset) -> list[Row]:
    from ..statistics.batches import batch_comparisons

    rows = []
    for part, pair in batch_comparisons(ds).items():
        if pair is None:
            rows.append(
                Row(
                    "C5",
                    part,
                    Verdict(INCONCLUSIVE, f"no two batch sizes whose runs all interpolate at {part}"),
                    Interval(math.nan, math.nan, math.nan, 0),
                    scale=scale_text(ds),
                )
            )
            continue
        small, large = pair
        # the design puts the runs' ends (the final predictors) at equal steps or epochs; the validation-selected
        # checkpoints need not be (printed beside): the final predictors carry the verdict
        head = " | ".join(
            f"{point.label}, judged at its end (T_SGD {float(point.ds['final_T_SGD'].mean(skipna=True)):.2g}); "
            f"validation selects at {point.selected_steps:,.0f} steps (T_SGD {point.selected_T_SGD:.2g}): "
            f"{spread_text(point.ds)}"
            for point in (small, large)
        )
        head += f" | b={large.batch_size} minus b={small.batch_size}, final predictors ({part})"
        clocks = "; ".join(clocks_text(point.ds, ("T_SGD",), f" ({point.label})") for point in (small, large))
        rows.append(
            _contrast_row(
                "C5",
                part,
                large.ds,
                small.ds,
                ours=lambda difference, head=head: f"{head}: {difference}",
                sized=False,
                predictor="final",
                clocks=clocks,
                scale=scale_text(ds),
            )
        )
    return rows


def _depth(model: str) -> int:
    return 9 if model == "resnet9" else int(model.removeprefix("resnet"))


#: C6's null-equivalence margin: an interaction of train accuracy (pp) within it is no effect.
DEPTH_MARGIN_PP = 0.5
#: C7's null-equivalence margin, in slope of log final on log initial norm.
SLOPE_MARGIN = 0.1


def depth_interaction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C6's statistic: ResNet-9's final train accuracies ``a`` minus the deepest net's ``b`` at the largest sigma_w,
    less the same at the smallest, averaged over seeds; ``a``, ``b`` ``(..., 2, n_seeds)`` (smallest, largest
    sigma_w) -> ``(...)``, pp."""
    d = a - b
    return (d[..., 1, :] - d[..., 0, :]).mean(-1)


def depth_cells(train: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray]:
    """C6's two cells of ``train`` (final train accuracy, %, dims ``(model, sigma_w, seed)``): ResNet-9's and the
    deepest net's, each ``(sigma_w, seed)`` at the smallest and the largest sigma_w (in that order)."""
    deepest = max((str(m) for m in train["model"].values), key=_depth)
    ends = [float(train["sigma_w"].min()), float(train["sigma_w"].max())]
    reference, deep = (train.sel(model=m, sigma_w=ends).transpose("sigma_w", "seed") for m in ("resnet9", deepest))
    return reference, deep


def _c6(ds: xr.Dataset) -> list[Row]:
    models = [str(m) for m in ds["model"].values]
    deepest = max(models, key=_depth)
    ends = [float(min(ds["sigma_w"].values)), float(max(ds["sigma_w"].values))]  # (smallest, largest)
    train = ds["final_train_acc"]
    reference, deep = depth_cells(train)
    gap = reference - deep  # (sigma_w, seed): how far the deepest net falls short of ResNet-9
    effect = gap.sel(sigma_w=ends[1]) - gap.sel(sigma_w=ends[0])  # per seed: the sigma_w interaction
    # centred per seed, the swap of the two models within (sigma_w, seed) cells is exchangeable exactly when their
    # profiles over sigma_w agree: no interaction
    null = contrast_null(reference.values, deep.values, depth_interaction)
    # a diverged run (NaN) is left out, as in every claim's premise (initmem.study.verdicts.carrier.interpolation_premise)
    premise = (
        ""
        if not bool((train.sel(model="resnet9") < INTERPOLATION_THRESHOLD).any())
        else f"ResNet-9 does not interpolate at every sigma_w (lowest {float(train.sel(model='resnet9').min()):.1f} %)"
    )
    ours = "; ".join(
        f"{m} at sigma_w {ends[1]:g}: final train acc "
        f"{mean_interval(train.sel(model=m, sigma_w=ends[1]).values, limits=(0.0, 100.0)).format(' %')}"
        for m in models
    )
    ours += f"; ResNet-9 minus {deepest}: " + ", ".join(
        f"at sigma_w {s:g} {mean_interval(gap.sel(sigma_w=s).values, method='t').format(' pp')}" for s in reversed(ends)
    )
    ours += f"; the largest minus the smallest sigma_w (the interaction judged): {interval_of(effect, 't')}"
    row = judged_row(
        "C6",
        "",
        effect.values,
        null,
        lambda n: contrast_null_floor(2 * n),
        margin=DEPTH_MARGIN_PP,
        premise=premise,
        method="t",
        ours=ours,
        clocks=clocks_text(ds.sel(model=deepest), ("T_SGD",)),
        scale=scale_text(ds),
        note="runs that do not interpolate: " + _failed_runs(train, ("model", "sigma_w", "seed")),
    )
    return [row]


def most_coupled_adaptive(slopes: xr.DataArray) -> str:
    """C7's comparison for SGD: of the adaptive optimizers in ``slopes`` (the norm coupling of experiment 06,
    :func:`initmem.study.statistics.analysis.norm_coupling`, dims ``(optimizer, seed)``), the one whose mean slope is largest,
    the hardest to tell from SGD."""
    present = adaptive_in(slopes["optimizer"].values)
    return max(present, key=lambda o: float(slopes.sel(optimizer=o).mean()))


def norm_slopes(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """C7's per-seed slopes: the least-squares slope over sigma_w of ``y`` (log final norms, ``(..., n_sigma,
    n_seeds)``) on ``x`` (log initial norms, ``(n_sigma, n_seeds)``), shape ``(..., n_seeds)``."""
    dx = x - x.mean(axis=0)
    return ((y - y.mean(axis=-2, keepdims=True)) * dx).sum(-2) / (dx * dx).sum(0)


def norm_slope_difference(x: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """C7's statistic on log initial norms ``x`` ``(n_sigma, n_seeds)``: ``(a, b) ->`` the mean over seeds of
    :func:`norm_slopes` of ``a`` minus those of ``b`` (SGD's minus an adaptive optimizer's), shape ``(...)``."""
    return lambda a, b: norm_slopes(a, x).mean(-1) - norm_slopes(b, x).mean(-1)


def _c7(ds: xr.Dataset) -> list[Row]:
    from ..statistics.analysis import final_norms, norm_coupling

    present = adaptive_in(ds["optimizer"].values)
    slopes = norm_coupling(ds)  # (optimizer, seed)
    strongest = most_coupled_adaptive(slopes)
    x = np.log(ds["weight_norm"].isel(epoch=0).sel(optimizer="sgd")).transpose("sigma_w", "seed").values
    final = np.log(final_norms(ds))
    a, b = (final.sel(optimizer=o).transpose("sigma_w", "seed").values for o in ("sgd", strongest))
    # the null drops the seeds with a missing run (contrast_null); x must keep the same seeds as a and b
    keep = np.isfinite(a).all(axis=0) & np.isfinite(b).all(axis=0) & np.isfinite(x).all(axis=0)
    x = x[:, keep]
    null = contrast_null(a[:, keep], b[:, keep], norm_slope_difference(x))
    effect = slopes.sel(optimizer="sgd") - slopes.sel(optimizer=strongest)
    ours = "slopes: " + "; ".join(
        f"{o} {mean_interval(slopes.sel(optimizer=o).values).format('', 2)}" for o in ("sgd", *present)
    )
    cells = ds.sizes["sigma_w"]
    return [
        judged_row(
            "C7",
            "",
            effect.values,
            null,
            lambda n: contrast_null_floor(cells * n),
            margin=SLOPE_MARGIN,
            method="t",
            ours=ours + f"; SGD minus {strongest}",
            clocks="; ".join(clocks_text(ds.sel(optimizer=o), ("T_adapt",), f" ({o})") for o in present),
            scale=scale_text(ds),
        )
    ]


#: Each claim's rule, in ledger order.
RULES: dict[str, Callable[[xr.Dataset], list[Row]]] = {
    "C1": _c1, "C2": _c2, "C3": _c3, "C4": _c4, "C5": _c5, "C6": _c6, "C7": _c7, "B1": judge_b1,
}  # fmt: skip
_ORDER = {claim: rank for rank, claim in enumerate(RULES)}


def claims_of(records: Any) -> tuple[tuple[str, str, Callable[[xr.Dataset], list[Row]]], ...]:
    """(claim, experiment it reads, rule) for every claim the experiment ``records`` list
    (:attr:`initmem.study.experiments.Experiment.claims`), in ledger order. A rule's rows leave
    ``Row.experiment`` to its caller (:func:`initmem.study.verdicts.claims.claim_rows` names the
    experiment it read)."""
    return tuple(sorted(((c, e.name, RULES[c]) for e in records for c in e.claims), key=lambda row: _ORDER[row[0]]))


def learning_rates_note(ds: xr.Dataset, reference: xr.Dataset | None = None, experiment: str = "") -> str:
    """C2's note from experiment 09 (``ds``, the results of ``experiment``): each adaptive optimizer's cross-fitted
    spread at every learning rate tried (at the ends of the sigma_w grid), the smallest with its calibrated interval
    (the one :func:`initmem.study.statistics.analysis.spread_points` computes), and whether it lies measurably below the spread at
    the optimizer's learning rate in experiment 01 (``reference``, whose runs decide C2); where none does, how wide
    the smallest spreads' intervals are, and that they cannot tell."""
    from ..statistics.analysis import against_reference, learning_rates_of, smallest_spread, spread_points

    table = spread_points(ds, experiment)
    parts = []
    for optimizer, rows in table.groupby("optimizer", sort=False):
        tried = ", ".join(f"lr {row.lr:g}: {row.selected_spread_pp:.1f} pp" for row in rows.itertuples())
        parts.append(f"{optimizer} {tried}")
    best = smallest_spread(table)
    smallest = ", ".join(
        f"{row.optimizer} {Interval(row.selected_spread_pp, row.selected_ci95_low, row.selected_ci95_high, int(row.selected_n_seeds), CALIBRATED)} at lr {row.lr:g}"
        for row in best.itertuples()
    )
    note = (
        f"09 tried other adaptive learning rates (cross-fitted selected spread over the ends of the sigma_w "
        f"grid): {'; '.join(parts)}; the smallest: {smallest}"
    )
    if reference is None:
        return note
    knob = against_reference(table, learning_rates_of(reference))
    lower = list(knob.loc[knob["measurably_lower"], "optimizer"])
    widths = knob["best_high"] - knob["best_low"]
    outcome = (
        f"measurably below the spread at 01's learning rate (intervals apart) for {', '.join(lower)} only"
        if lower
        else "none measurably below the spread at 01's learning rate (the intervals overlap); at "
        f"{decimal(widths.min(), 0)} to {decimal(widths.max(), 0)} pp wide, 09's intervals cannot tell whether the "
        "learning rate moves this verdict"
    )
    return f"{note}; {outcome}"


#: The notes an experiment's results add to a claim's rows besides the claim's own experiment: claim -> ``note(ds,
#: reference, experiment)``, ``ds`` the annotating experiment's results (its name ``experiment``), ``reference`` those
#: of the experiment that judges the claim (None where absent).
NOTES: dict[str, Callable[[xr.Dataset, xr.Dataset | None, str], str]] = {"C2": learning_rates_note}


def annotations_of(records: Any) -> tuple[tuple[str, str, Callable[[xr.Dataset, xr.Dataset | None, str], str]], ...]:
    """(claim, experiment, note) for each claim the experiment ``records`` list in
    :attr:`~initmem.study.experiments.Experiment.annotates`, in ledger order."""
    return tuple(sorted(((c, e.name, NOTES[c]) for e in records for c in e.annotates), key=lambda row: _ORDER[row[0]]))
