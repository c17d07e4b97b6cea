"""The scale ladder (chapter 11): each condition's spread on every rung of width x training images x epochs, set
against the paper's number, the shift from the first rung, and the trend extrapolated towards the paper's scale.

Chapter 11's combined Dataset has ``width``, ``train_size`` and ``epochs`` dimensions (a rung holds one point of them;
the others are NaN) and an ``lr`` dimension whose ``optimizer`` coordinate names each condition's optimizer. The conditions (:data:`CONDITIONS`) are low-lr SGD (C1), Adam (C2) and
SGD at the larger lr (C4's lever); rungs are ordered cheapest first (width^2 x images x epochs), the first being the
reference of the shifts. The rules are the ones its design record declared before the runs
(:mod:`initmem.study.verdicts.preregistration`), and its amendments (:data:`SHIFT_PREMISE`); the method (carrying predictor, calibrated intervals, the trend's interval
and its coverage) is explained on chapter 11's page.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr
from scipy import stats as _stats

from ..statistics.calibration import CrossFitted
from ..statistics.stats import LEVEL, Interval
from .carrier import PREDICTORS, carrying_predictor, interpolation_premise
from .ledger import band, claim_record, cross_fitted

__all__ = [
    "CONDITIONS",
    "PAPER_SCALE",
    "TOWARDS",
    "AWAY",
    "UNTOLD",
    "INSIDE",
    "OUTSIDE",
    "ACROSS",
    "PREMISE_NOT_MET",
    "SHIFT_PREMISE",
    "SHIFT_PREMISE_RULE",
    "Condition",
    "Rung",
    "Trend",
    "as_ladder",
    "condition_lrs",
    "ladder_rungs",
    "rungs",
    "trend",
    "trend_coverage",
    "HeldOut",
    "held_out_fits",
    "leave_one_rung_out",
    "held_out_text",
    "ladder_frame",
    "target",
    "RunsOrigin",
    "runs_origin",
    "fit_trend",
    "TREND_LABEL",
    "PREDICTION_COLUMN",
    "prediction_text",
    "prediction_column",
]


@dataclass(frozen=True)
class Condition:
    """One condition of the ladder: its ``optimizer``, the ledger row it is read against (``claim``, ``part`` of
    :func:`initmem.study.verdicts.ledger.claim_record`) and a ``label`` for tables."""

    optimizer: str
    claim: str
    part: str
    label: str

    @property
    def row(self) -> str:
        """The ledger row's name: ``"C1"``, ``"C2 Adam"``, ``"C4 larger lr"``."""
        return f"{self.claim} {self.part}".strip()


#: The ladder's conditions, by name: SGD at its lowest lr (C1's 26.5 pp), Adam (C2's "minimal") and SGD at its
#: larger lr (C4's lever: "near zero").
CONDITIONS = {
    "sgd": Condition("sgd", "C1", "", "SGD"),
    "adam": Condition("adam", "C2", "Adam", "Adam"),
    "larger lr": Condition("sgd", "C4", "larger lr", "SGD, larger lr"),
}
#: The paper's network width and training images, where the trend is extrapolated to.
PAPER_SCALE = (64, 45_000)
TOWARDS = "towards the paper"
AWAY = "away from the paper"
UNTOLD = "no shift the seeds can tell"
INSIDE = "inside the band"
OUTSIDE = "outside the band"
ACROSS = "across the band's edge"
PREMISE_NOT_MET = "premise not met"
#: The amendment (:func:`initmem.study.verdicts.preregistration.amendments`) that reads a shift as its rung's band is
#: read: :data:`PREMISE_NOT_MET` where the condition's premise fails on the shift's predictor on either rung.
SHIFT_PREMISE = "shift_premise"
#: What the amendment :data:`SHIFT_PREMISE` declares (its record, committed beside the design record).
SHIFT_PREMISE_RULE = {
    "amends": "shift_rule",
    "rule": "a shift reads 'premise not met' where the condition's premise (the one its band is read with: every "
    "low-lr SGD run for C1, every SGD run and every run of the condition for C2 Adam and C4's larger lr, train accuracy "
    ">= 99.5 %) fails on the shift's predictor on either of its two rungs; its interval is still printed",
    "why": "every row decides its premise and its predictor the same way: on the width 8, 20,000-image rung Adam's band "
    "read 'premise not met' (lowest final train accuracy 96.6 %) while its shift read 'towards the paper'",
}


def target(condition: str) -> tuple[float, tuple[float, float]]:
    """The paper's number for ``condition`` (pp) and its band (:func:`initmem.study.verdicts.ledger.band`)."""
    c = CONDITIONS[condition]
    return claim_record(c.claim)["values"][c.part], band(c.claim, c.part)


def as_ladder(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` with an ``epochs`` dimension: a sweep that set its epochs in its base (one rung trained elsewhere, as the
    GPU one-shot trains it) gets one, of its last recorded epoch."""
    if "epochs" in ds.dims:
        return ds
    return ds.expand_dims(epochs=[int(ds["epoch"].max())])


def condition_lrs(ds: xr.Dataset) -> dict[str, float]:
    """Each condition of :data:`CONDITIONS` that ``ds`` holds -> its ``lr`` coordinate (:func:`conditions_at`)."""
    return conditions_at(ds["optimizer"].values, ds["lr"].values)


def conditions_at(optimizers: Sequence[str], lrs: Sequence[float]) -> dict[str, float]:
    """Each condition of :data:`CONDITIONS` among the paired ``optimizers`` and ``lrs`` (a sweep's conditions) -> its
    learning rate: SGD's lowest lr is ``"sgd"``, a second SGD lr ``"larger lr"``, Adam's ``"adam"``."""
    pairs = [(str(o), float(lr)) for o, lr in zip(optimizers, lrs)]
    sgd = sorted(lr for o, lr in pairs if o == "sgd")
    out = {}
    if sgd:
        out["sgd"] = sgd[0]
    if any(o == "adam" for o, _ in pairs):
        out["adam"] = next(lr for o, lr in pairs if o == "adam")
    if len(sgd) > 1:
        out["larger lr"] = sgd[-1]
    return out


def ladder_rungs(ds: xr.Dataset, lr: float) -> list[tuple[int, int, int]]:
    """The ``(width, train_size, epochs)`` rungs at which the condition trained at ``lr`` holds a finite test
    accuracy, cheapest first (width^2 x train_size x epochs)."""
    acc = ds["final_test_acc"].sel(lr=lr)
    held = np.isfinite(acc).any([d for d in acc.dims if d not in ("width", "train_size", "epochs")])
    found = [
        (int(w), int(n), int(e))
        for w in ds["width"].values
        for n in ds["train_size"].values
        for e in ds["epochs"].values
        if bool(held.sel(width=w, train_size=n, epochs=e))
    ]
    return sorted(found, key=lambda r: (r[0] ** 2 * r[1] * r[2], r))


@dataclass(frozen=True)
class Rung:
    """One condition on one rung.

    ``spreads``: the per-predictor spread (pp, mean of the per-seed cross-fitted spreads, calibrated interval);
    ``predictor`` carries (:func:`initmem.study.verdicts.carrier.carrying_predictor`, ``why`` says why; ``premise`` is ``""``
    where the carrying predictor meets it); ``size`` reads the carrying spread against the paper's band
    (:data:`INSIDE`, :data:`OUTSIDE`, :data:`ACROSS`, or :data:`PREMISE_NOT_MET`). ``shift``: the spread minus the
    first rung's, paired by seed, on ``shift_predictor`` (the selected where it carries on both rungs, else the
    final; no bounds on the first rung) and its reading ``moves`` (empty on the first rung; :data:`PREMISE_NOT_MET`
    under :data:`SHIFT_PREMISE` where the premise fails on ``shift_predictor`` on either rung). ``final_train_min``:
    the lowest final train accuracy of the condition's runs (%); ``selected_train_mean``: the mean train accuracy of
    its validation-selected checkpoints (%); ``core_seconds``: the runs' recorded CPU time (wall time where none);
    ``cpu_models``: the CPUs the runs record."""

    condition: str
    width: int
    train_size: int
    epochs: int
    spreads: Mapping[str, Interval]
    predictor: str
    why: str
    premise: str
    size: str
    shift: Interval
    shift_predictor: str
    moves: str
    final_train_min: float
    selected_train_mean: float
    runs: int
    core_seconds: float
    cpu_models: tuple[str, ...] = field(default=())

    @property
    def spread(self) -> Interval:
        """The carrying predictor's spread."""
        return self.spreads[self.predictor]

    @property
    def name(self) -> str:
        """``"width 8, 5,000 images, 40 epochs"``."""
        return f"width {self.width}, {self.train_size:,} images, {self.epochs} epochs"


def _moves(shift: Interval, first: float, paper: float) -> str:
    if not shift.has_bounds:
        return UNTOLD
    side = 1.0 if paper >= first else -1.0  # the sign of a shift towards the paper's number
    if side * shift.low > 0 and side * shift.high > 0:
        return TOWARDS
    if side * shift.low < 0 and side * shift.high < 0:
        return AWAY
    return UNTOLD


def _size(spread: Interval, bounds: tuple[float, float], premise: str) -> str:
    if premise:
        return PREMISE_NOT_MET
    low, high = bounds
    if spread.has_bounds and low <= spread.low and spread.high <= high:
        return INSIDE
    if spread.has_bounds and (spread.high < low or spread.low > high):
        return OUTSIDE
    return ACROSS


def _premise_runs(cut: Mapping[str, xr.Dataset], condition: str) -> dict[str, xr.Dataset]:
    """The runs whose interpolation a condition's premise asks for (the ledger's): SGD's for C1; SGD's and the
    condition's for a contrast with SGD (C2's Adam, C4's lever)."""
    if condition == "sgd":
        return {"SGD": cut["sgd"]}
    return {"SGD": cut["sgd"], CONDITIONS[condition].label: cut[condition]}


def _core_seconds(runs: xr.Dataset) -> float:
    if "cpu_time_s" in runs and bool(np.isfinite(runs["cpu_time_s"]).any()):
        return float(np.nansum(runs["cpu_time_s"].values))
    return float(np.nansum(runs["wall_time_s"].values))


def _per_seed(ds: xr.Dataset, rung: tuple[int, int, int], lr: float, predictor: str) -> xr.DataArray:
    w, n, e = rung
    return cross_fitted(ds.sel(width=w, train_size=n, epochs=e, lr=lr), f"{predictor}_test_acc")


def rungs(
    ds: xr.Dataset,
    cpu_models: Mapping[tuple[int, int, int], Sequence[str]] | None = None,
    *,
    shift_premise: bool = False,
) -> list[Rung]:
    """Every condition of :data:`CONDITIONS` in ``ds`` on every rung that holds its runs, condition by condition,
    rungs cheapest first (its first rung is the reference of its shifts). A contrast condition (Adam, the larger lr)
    is judged on the rungs where SGD trained too. ``cpu_models``: the CPU models each rung's runs record;
    ``shift_premise``: whether the amendment :data:`SHIFT_PREMISE` is declared (shifts gated by the premise)."""
    ds = as_ladder(ds)
    lrs = condition_lrs(ds)
    n_sigma = ds.sizes["sigma_w"]
    spread_of, shift_of = CrossFitted(n_sigma, "spread"), CrossFitted(n_sigma, "contrast")
    sgd_rungs = set(ladder_rungs(ds, lrs["sgd"])) if "sgd" in lrs else set()
    out = []
    for condition, lr in lrs.items():
        present = [r for r in ladder_rungs(ds, lr) if condition == "sgd" or r in sgd_rungs]
        if not present:
            continue
        paper, bounds = target(condition)
        carriers = {}
        for rung in present:
            w, n, e = rung
            cut = {name: ds.sel(width=w, train_size=n, epochs=e, lr=value) for name, value in lrs.items()}
            premises = {p: interpolation_premise(_premise_runs(cut, condition), p) for p in PREDICTORS}
            carriers[rung] = (*carrying_predictor(premises), premises)
        reference = present[0]
        for rung in present:
            w, n, e = rung
            runs = ds.sel(width=w, train_size=n, epochs=e, lr=lr)
            predictor, why, premises = carriers[rung]
            spreads = {p: spread_of.interval(_per_seed(ds, rung, lr, p)) for p in PREDICTORS}
            shift_predictor = "selected" if carriers[rung][0] == carriers[reference][0] == "selected" else "final"
            if rung == reference:
                shift = Interval(0.0, math.nan, math.nan, spreads[shift_predictor].n, shift_of.label)
                moves = ""
            else:
                mine = _per_seed(ds, rung, lr, shift_predictor)
                first = _per_seed(ds, reference, lr, shift_predictor)
                shift = shift_of.interval(mine - first)
                first_spread = spread_of.interval(first).estimate
                unmet = premises[shift_predictor] or carriers[reference][2][shift_predictor]
                moves = PREMISE_NOT_MET if shift_premise and unmet else _moves(shift, first_spread, paper)
            final_train = runs["final_train_acc"].values
            out.append(
                Rung(
                    condition=condition,
                    width=w,
                    train_size=n,
                    epochs=e,
                    spreads=spreads,
                    predictor=predictor,
                    why=why,
                    premise=premises[predictor],
                    size=_size(spreads[predictor], bounds, premises[predictor]),
                    shift=shift,
                    shift_predictor=shift_predictor,
                    moves=moves,
                    final_train_min=float(np.nanmin(final_train)),
                    selected_train_mean=float(np.nanmean(runs["selected_train_acc"].values)),
                    runs=int(np.isfinite(final_train).sum()),
                    core_seconds=_core_seconds(runs),
                    cpu_models=tuple((cpu_models or {}).get(rung, ())),
                )
            )
    return out


@dataclass(frozen=True)
class Trend:
    """A condition's spread as a straight line in log2(width) and log2(training images) over its rungs, fitted by
    least squares to the per-seed spreads (seeds the unit of replication), and its value at ``at`` (width, images)
    with a 95 % t-interval (``interval``; Student-t on the residual degrees of freedom; its ``n`` is the seeds per
    rung). ``terms`` names the slopes
    the rungs could identify (a factor the rungs do not vary is held at the rungs' value: ``at`` then keeps it);
    ``predictor`` is the one every rung was read on; ``rungs`` counts them. None of it says the line holds beyond
    the rungs: it is an extrapolation."""

    condition: str
    predictor: str
    terms: tuple[str, ...]
    slopes: tuple[float, ...]
    at: tuple[int, int]
    interval: Interval
    rungs: int
    design: tuple[tuple[float, float], ...] = ()
    residual_sd: float = math.nan

    def coverage(self, bend: float = 0.0, reps: int = 2000) -> float:
        """The interval's coverage on ladders simulated like this one (:func:`trend_coverage`: its rungs and seeds,
        Gaussian noise of its residual sd), the truth straight (``bend`` 0) or leaving the line by ``bend`` pp at
        ``at``."""
        at = np.log2(np.array(self.at, dtype=float))
        return trend_coverage(np.array(self.design), self.residual_sd, at, bend=bend, reps=reps)

    @property
    def reaches_paper_scale(self) -> bool:
        """Whether ``at`` is the paper's width and training set (:data:`PAPER_SCALE`)."""
        return self.at == PAPER_SCALE


#: The interval's label beside a trend's estimate.
TREND_LABEL = "t, log2 trend"


def _design(points: np.ndarray, varying: Sequence[int]) -> np.ndarray:
    return np.column_stack([np.ones(len(points)), *(points[:, i] for i in varying)])


def fit_trend(
    x: np.ndarray, y: np.ndarray, at: np.ndarray, new_points: int = 0
) -> tuple[float, float, float, int, tuple[int, ...], np.ndarray, float] | None:
    """Least squares of ``y`` (per-seed spreads, pp, shape ``(m,)``) on ``x`` (``(m, 2)``: log2 width, log2 images)
    with an intercept and a slope for each column that varies; evaluated at ``at`` (``(2,)``, the columns that do
    not vary taken at their value). The interval is the line's there (``new_points`` 0), or, for ``new_points``
    n > 0, the prediction interval of the mean of n new per-seed spreads there (the line's variance plus s^2 / n).
    Returns ``(estimate, low, high, df, varying columns, slopes, residual sd)``, or None where the points cannot
    identify a line with a residual degree of freedom (fewer than two distinct points, or none left over)."""
    varying = tuple(i for i in range(x.shape[1]) if np.ptp(x[:, i]) > 0)
    if not varying:
        return None
    X = _design(x, varying)
    df = len(y) - X.shape[1]
    if df < 1 or np.linalg.matrix_rank(X) < X.shape[1]:
        return None
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ beta
    s2 = float(residual @ residual) / df
    point = np.concatenate([[1.0], [at[i] for i in varying]])
    estimate = float(point @ beta)
    se = math.sqrt(s2 * (float(point @ np.linalg.inv(X.T @ X) @ point) + (1.0 / new_points if new_points else 0.0)))
    half = float(_stats.t.ppf(0.5 + LEVEL / 2, df)) * se
    return estimate, estimate - half, estimate + half, df, varying, beta[1:], math.sqrt(s2)


def _trend_points(ds: xr.Dataset, ladder: Sequence[Rung], condition: str) -> tuple[str, np.ndarray, np.ndarray]:
    mine = [r for r in ladder if r.condition == condition and r.size != PREMISE_NOT_MET]
    predictor = "selected" if all(r.predictor == "selected" for r in mine) else "final"
    lr = condition_lrs(ds)[condition]
    xs, ys = [], []
    for r in mine:
        values = _per_seed(ds, (r.width, r.train_size, r.epochs), lr, predictor).values
        values = values[np.isfinite(values)]
        xs += [[math.log2(r.width), math.log2(r.train_size)]] * len(values)
        ys += list(values)
    return predictor, np.array(xs, dtype=float).reshape(-1, 2), np.array(ys, dtype=float)


def trend(ds: xr.Dataset, ladder: Sequence[Rung], condition: str) -> Trend | None:
    """``condition``'s :class:`Trend` over the rungs of ``ladder`` (:func:`rungs`) that meet its premise, at the
    paper's scale where those rungs vary both the width and the training set, else at the paper's value of the factor
    they vary; None where they cannot identify a line (:func:`fit_trend`)."""
    ds = as_ladder(ds)
    if condition not in condition_lrs(ds):
        return None
    predictor, x, y = _trend_points(ds, ladder, condition)
    if len(y) == 0:
        return None
    target_x = np.array([math.log2(PAPER_SCALE[0]), math.log2(PAPER_SCALE[1])])
    varying = [i for i in range(2) if np.ptp(x[:, i]) > 0]
    at_x = np.array([target_x[i] if i in varying else x[0, i] for i in range(2)])
    fitted = fit_trend(x, y, at_x)
    if fitted is None:
        return None
    estimate, low, high, df, columns, slopes, sd = fitted
    n_rungs = len({tuple(row) for row in x})
    return Trend(
        condition=condition,
        predictor=predictor,
        terms=tuple(("log2 width", "log2 images")[i] for i in columns),
        slopes=tuple(float(s) for s in slopes),
        at=(round(2 ** at_x[0]), round(2 ** at_x[1])),
        interval=Interval(estimate, low, high, len(y) // n_rungs, TREND_LABEL).clip(),
        rungs=n_rungs,
        design=tuple((float(a), float(b)) for a, b in x),
        residual_sd=sd,
    )


def trend_coverage(
    x: np.ndarray, sd: float, at: np.ndarray, bend: float = 0.0, reps: int = 4000, seed: int = 0
) -> float:
    """The share of simulated ladders whose :func:`fit_trend` interval covers the true spread at ``at``: per-seed
    spreads at the design ``x`` (``(m, 2)``, as :func:`fit_trend`'s) drawn around a true trend with Gaussian noise
    of ``sd`` (pp). ``bend`` (pp) makes the truth curve: it adds ``bend`` times the squared distance, in doublings of
    the varying factors, from the rungs' mean, scaled so that the truth at ``at`` leaves the straight line by
    ``bend`` pp (0: a straight line, which the interval assumes)."""
    rng = np.random.default_rng(seed)
    centre = x.mean(axis=0)
    reach = float(((at - centre) ** 2).sum())
    curve = (lambda z: bend * ((z - centre) ** 2).sum(axis=-1) / reach) if reach > 0 else (lambda z: 0.0 * z[..., 0])
    slope = np.array([1.5, 2.0])

    def truth(z: np.ndarray) -> np.ndarray:
        return 20.0 + (z - centre) @ slope + curve(z)

    covered = 0
    for _ in range(reps):
        y = truth(x) + rng.normal(0.0, sd, len(x))
        fitted = fit_trend(x, y, at)
        if fitted is None:
            return math.nan
        _, low, high, *_ = fitted
        covered += low <= float(truth(at)) <= high
    return covered / reps


@dataclass(frozen=True)
class HeldOut:
    """A rung left out of a condition's trend (:func:`leave_one_rung_out`): its ``width`` and ``train_size``, its
    measured mean spread over seeds (pp) and the 95 % prediction interval of that mean from the line through the
    other rungs (``predicted``, :func:`fit_trend` with the rung's seeds as new points; None where the other rungs do
    not vary a factor in which this rung differs from them, so no line through them reaches it)."""

    width: int
    train_size: int
    measured: float
    predicted: Interval | None

    @property
    def inside(self) -> bool | None:
        """Whether the measured mean lies in the predicted interval (None: not predicted)."""
        return None if self.predicted is None else self.predicted.low <= self.measured <= self.predicted.high


def held_out_fits(x: np.ndarray, y: np.ndarray) -> list[HeldOut]:
    """Each distinct rung of ``x`` (``(m, 2)``, log2 width and log2 images per per-seed spread ``y``, as
    :func:`fit_trend`'s), in the order of ``x``, predicted from the others (:class:`HeldOut`)."""
    out = []
    for point in dict.fromkeys(map(tuple, x)):
        held = np.all(x == np.array(point), axis=1)
        others = x[~held]
        reaches = len(others) > 0 and all(np.ptp(others[:, i]) > 0 or others[0, i] == point[i] for i in range(2))
        fitted = fit_trend(others, y[~held], np.array(point), new_points=int(held.sum())) if reaches else None
        predicted = None
        if fitted is not None:
            estimate, low, high, *_ = fitted
            predicted = Interval(estimate, low, high, int(held.sum()), TREND_LABEL)
        out.append(HeldOut(round(2 ** point[0]), round(2 ** point[1]), float(y[held].mean()), predicted))
    return out


def leave_one_rung_out(ds: xr.Dataset, ladder: Sequence[Rung], condition: str) -> list[HeldOut]:
    """:func:`held_out_fits` over ``condition``'s rungs that meet its premise, read on its trend's predictor (as
    :func:`trend` reads them); empty where the ladder does not hold the condition."""
    ds = as_ladder(ds)
    if condition not in condition_lrs(ds):
        return []
    _, x, y = _trend_points(ds, ladder, condition)
    return held_out_fits(x, y)


def held_out_text(held: Sequence[HeldOut]) -> str:
    """One sentence on :func:`leave_one_rung_out`: how many of the rungs the others can predict fall inside their
    prediction interval, and which cannot be predicted yet."""
    predicted = [h for h in held if h.predicted is not None]
    if not predicted:
        return (
            f"none of its {len(held)} rungs can be predicted from the others yet (each differs from them in a factor "
            "they do not vary)"
        )
    inside = sum(bool(h.inside) for h in predicted)
    missed = [f"width {h.width}, {h.train_size:,} images" for h in predicted if not h.inside]
    return (
        f"{inside} of the {len(predicted)} rungs the others can predict lie inside their 95 % prediction interval"
        + (f" (outside: {'; '.join(missed)})" if missed else "")
    )


def ladder_frame(ladder: Sequence[Rung]) -> Any:
    """:func:`rungs` as a table for a page (pandas, indexed by condition and rung): both predictors' spreads, the one
    that carries, the size reading, the shift and its reading, and the lowest final train accuracy (the premise); the
    runs and their CPU time are said beside it on the page."""
    import pandas as pd

    return pd.DataFrame(
        {
            "carried by": [r.predictor for r in ladder],
            "selected (pp)": [r.spreads["selected"].brief() for r in ladder],
            "final (pp)": [r.spreads["final"].brief() for r in ladder],
            "paper's band": [r.size for r in ladder],
            "shift (pp)": [f"{r.shift.brief()} ({r.shift_predictor})" if r.moves else "reference" for r in ladder],
            "reading": [r.moves or "" for r in ladder],
            "min final train (%)": [f"{r.final_train_min:.1f}" for r in ladder],
        },
        index=pd.MultiIndex.from_tuples(
            [(CONDITIONS[r.condition].label, f"w{r.width}, {r.train_size:,} img, {r.epochs} ep") for r in ladder],
            names=["condition", "rung"],
        ),
    )


@dataclass(frozen=True)
class RunsOrigin:
    """Where a ladder's runs came from: the commits that trained them, the first and last time a run was written
    (ISO 8601, UTC), every run's ``created`` (sorted) and ``cpu_of`` (each run's hash -> the CPU model it records)."""

    commits: tuple[str, ...]
    first: str
    last: str
    created: tuple[str, ...]
    cpu_of: Mapping[str, str]

    @property
    def cpu_models(self) -> dict[str, int]:
        """Each CPU model -> how many runs it trained, in the order the runs were read."""
        return dict(Counter(self.cpu_of.values()))


def runs_origin(
    ds: xr.Dataset, runs_dir: str | os.PathLike
) -> tuple[RunsOrigin, dict[tuple[int, int, int], tuple[str, ...]]]:
    """The :class:`RunsOrigin` of every run ``ds`` holds (its ``run_hash`` -> ``runs_dir/<hash>.nc``, read for their
    attributes only), and each rung's CPU models."""
    from ..costs.results import run_attributes

    ds = as_ladder(ds)
    commits, created, cpu_of = [], [], {}
    by_rung: dict[tuple[int, int, int], set[str]] = {}
    for point, attrs in run_attributes(ds, runs_dir):
        rung = tuple(int(ds[d].values[point[d]]) for d in ("width", "train_size", "epochs"))
        model = str(attrs.get("cpu_model", "not recorded"))
        cpu_of[str(ds["run_hash"].values[tuple(point[d] for d in ds["run_hash"].dims)])] = model
        commits.append(str(attrs.get("git_commit", "")))
        created.append(str(attrs.get("created", "")))
        by_rung.setdefault(rung, set()).add(model)
    ordered = sorted(created)
    origin = RunsOrigin(tuple(dict.fromkeys(commits)), ordered[0], ordered[-1], tuple(ordered), cpu_of)
    return origin, {rung: tuple(sorted(m)) for rung, m in by_rung.items()}


#: The ledger's column of the extrapolations (:func:`prediction_column`).
PREDICTION_COLUMN = "predicted at paper scale (extrapolation of chapter 11's rungs)"


def prediction_text(t: Trend | None, condition: str) -> str:
    """One cell of :func:`prediction_column`: the trend's value with its interval and coverage, where it was read
    (the paper's scale, or width 64 on the rungs' training set when the rungs vary the width only), and whether the
    interval can tell anything against the paper's band."""
    if t is None:
        return "not extrapolated: the ladder holds no two rungs of this condition with a residual degree of freedom"
    _, (low, high) = target(condition)
    where = (
        "at the paper's width 64 and 45,000 images"
        if t.reaches_paper_scale
        else f"at width {t.at[0]} on {t.at[1]:,} images (the rungs vary the width only)"
    )
    i = t.interval
    verdict = (
        "too wide to tell where it falls against the paper's band"
        if i.low < low and i.high > high
        else "inside the paper's band"
        if low <= i.low and i.high <= high
        else "outside the paper's band"
        if i.high < low or i.low > high
        else "across the band's edge"
    )
    return (
        f"extrapolation {where}: {i.format()} over {t.rungs} rungs ({t.predictor} predictor), {verdict}; the interval "
        f"covers {100 * t.coverage(0.0):.0f} % of simulated straight trends and {100 * t.coverage(5.0):.0f} % of "
        "trends bent by 5 pp"
    )


def prediction_column(ds: xr.Dataset) -> Any:
    """The ledger's :data:`PREDICTION_COLUMN`: for each ladder condition's ledger row (``"C1"``, ``"C2 Adam"``,
    ``"C4 larger lr"``), :func:`prediction_text` of its :func:`trend` over the rungs of the ladder ``ds`` (pandas
    Series indexed by the row)."""
    import pandas as pd

    climbed = rungs(ds)
    held = dict.fromkeys(r.condition for r in climbed)
    return pd.Series(
        {CONDITIONS[c].row: prediction_text(trend(ds, climbed, c), c) for c in held},
        name=PREDICTION_COLUMN,
        dtype=object,
    )
