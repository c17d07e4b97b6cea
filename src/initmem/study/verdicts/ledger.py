"""The ledger's vocabulary: the paper's claims (:func:`claim_record`), their printed rules (:data:`RULES`), one judged
row (:class:`Row`) and the measurements every claim's judge shares.

A row is judged by :func:`initmem.study.verdicts.rules.judge` (:func:`judged_row`): its direction effect is the mean over seeds
of a per-seed paired contrast with its 95 % interval (spreads in it cross-fitted,
:func:`initmem.study.statistics.stats.cross_fitted_spreads`, their interval calibrated by simulation for the design,
:mod:`initmem.study.statistics.calibration`), its noise null a permutation p-value (:mod:`initmem.study.statistics.nulls`),
and its size, where the paper gives a number ``P``, the interval against the band ``P +- max(5 pp, share of P)``
(:func:`band`: the share is 30 % unless the claim's record sets its own).
The judges of the claims are :mod:`initmem.study.verdicts.judges`; :mod:`initmem.study.verdicts.claims` assembles the ledger.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ...base import records
from ...base.lazy import MadeWhenRead
from ...base.numbers import significant
from ..statistics.calibration import CrossFitted
from ..statistics.nulls import NullTest, spread_null
from ..statistics.stats import Interval, cross_fitted_spreads, finite_runs, mean_interval
from . import rules
from .rules import INCONCLUSIVE, Verdict

__all__ = [
    "TABLE",
    "claim_record",
    "RULES",
    "Row",
    "band",
    "band_text",
    "judged_row",
    "seed_matrix",
    "cross_fitted",
    "interval_of",
    "size_method",
    "clocks_text",
    "scale_text",
    "spread_text",
]


#: The paper's claims, one record each (plain data, printed in the book; :mod:`initmem.base.records`): its question,
#: the paper's statement (each part's number written ``{part}``, the unnamed part's ``{P}``), where it comes from
#: (the paper summary, shared/paper/000_*.txt), the paper's number for each part (pp; none: the claim can be at most
#: "in direction") and, where it is not :data:`~initmem.study.verdicts.rules.BAND_SHARE`, the band's share of it
#: (:func:`band`): a claim's number and band are written there and only there.
TABLE = Path(__file__).with_name("paper.json")


def claim_record(claim: str) -> dict[str, Any]:
    """Claim ``claim``'s record in :data:`TABLE` (noted for the page's record), its statement's numbers filled in
    and its band's share set; :class:`KeyError` if there is none."""
    data = records.record(TABLE, claim)
    if data is None:
        raise KeyError(f"claim: no record {claim!r} in {TABLE.name}")
    numbers = {part or "P": f"{value:g}" for part, value in data["values"].items()}
    return {**data, "text": data["text"].format_map(numbers), "band_share": data.get("band_share", rules.BAND_SHARE)}


def band(claim: str, part: str = "") -> tuple[float, float] | None:
    """The band around the paper's number for ``part`` of ``claim`` (pp; None: the paper gives none): its number
    +- max(5 pp, the claim's share of it) (:func:`initmem.study.verdicts.rules.band_of`).

    >>> band("C2", "Muon"), band("C4", "L2"), band("C3")
    ((-1.0, 9.0), (-5.0, 5.0), None)
    """
    paper = claim_record(claim)
    value = paper["values"].get(part)
    return None if value is None else rules.band_of(value, share=paper["band_share"])


def band_text(claim: str, part: str = "") -> str:
    """The band of :func:`band` as the rules print it, in the book's number format (:mod:`initmem.base.numbers`):
    the paper's number "±" the band's half-width, each with up to three significant digits
    (:func:`~initmem.base.numbers.significant`), so that the half-width is the rule's own (C1's 30 % of 26.5 is
    7.95, not 8.0).

    >>> band_text("C2", "Muon"), band_text("C1")
    ('4 ± 5 pp', '26.5 ± 7.95 pp')
    """
    low, high = band(claim, part) or (math.nan, math.nan)
    return f"{significant(claim_record(claim)['values'][part])} ± {significant((high - low) / 2)} pp"


_SPREAD = (
    "cross-fitted spread of the validation-selected test accuracy over sigma_w (pp, mean over seeds, 95 % interval "
    "calibrated by simulation for the design)"
)
_BOTH = (
    "Both predictors are judged by the rule, each with the premise on its own train accuracy: the validation-selected "
    "one (the paper's metric) carries the verdict where it interpolates, else the final one; the reason names which, "
    "and gives the other's verdict."
)


#: The rule of each claim: its direction effect, null, size and premise (printed in the book).
RULES: Mapping[str, str] = MadeWhenRead(
    {
        "C1": lambda: (
            f"effect: SGD's {_SPREAD}; null: sigma_w permuted within seeds; size: the interval inside "
            f"{band_text('C1')}; "
            f"premise: every SGD run interpolates (train accuracy ≥ 99.5 %), checked on the predictor judged. {_BOTH}"
        ),
        "C2": lambda: (
            f"effect, per adaptive optimizer: SGD's minus its {_SPREAD}, per seed; null: the two optimizers swapped "
            f"within (sigma_w, seed) cells; size: its own spread's interval inside the band (Muon {band_text('C2', 'Muon')}, "
            f"Adam and AdamW {band_text('C2', 'Adam')}, 'minimal'); premise: every run of SGD and of the optimizer interpolates (train accuracy ≥ "
            f"99.5 %), checked on the predictor judged. {_BOTH} The optimizer's runs whose final predictor does not "
            "interpolate are named in a note"
        ),
        "C3": "effect: the cross-fitted spread at the longest horizon minus at the reference horizon, per seed; in "
        "direction when its interval lies above −5 pp (non-inferiority: it loses less than the margin), not "
        "reproduced when below; premise: every run interpolates at the reference and the reference spread's "
        "interval lies above 0, and, for the selected predictor, validation selects other checkpoints at the two "
        "horizons (where it selects the same ones, the selected spread cannot change and the final predictor carries the "
        "claim); no size (no number)",
        "C4": lambda: (
            f"effect, per lever (larger lr alone; L2 at the low lr; both): the low-lr, no-L2 cell's minus the lever "
            f"cell's {_SPREAD}, per seed; null: the two cells swapped within (sigma_w, seed); size: the lever cell's "
            f"spread inside {band_text('C4', 'L2')} ('near zero'); premise: every run of both cells interpolates (train "
            "accuracy ≥ 99.5 %), checked on the predictor judged, and, for a lever with L2, its clock covers what the start "
            f"has to lose, T_L2 ≥ ln(|W0|/|W*|) (x ≥ 0, chapter T5), measured in the lever cell. {_BOTH}"
        ),
        "C5": "effect, per design: the larger batch's minus the smaller batch's cross-fitted spread of the final test "
        "accuracy over sigma_w (pp, mean over seeds, 95 % interval calibrated by simulation for the design), per seed, "
        "between batch sizes whose runs all "
        "interpolate, at equal steps (run lengths within 5 %) and at equal epochs (the widest such pair of each); the "
        "design puts the runs' ends at equal steps or epochs, so the final predictors are judged (the validation-selected "
        "checkpoints sit elsewhere in the runs: their steps, T_SGD and spreads are printed beside); null: the two batch "
        "sizes swapped within (sigma_w, seed); no size (no number)",
        "C6": "effect: the sigma_w interaction of the depth gap, per seed: ResNet-9's minus the deepest model's final "
        "train accuracy at the largest sigma_w, minus the same gap at the smallest sigma_w (pp): positive when the "
        "deepest net falls short of ResNet-9 more at large sigma_w than at small; null: the two models swapped within "
        "(sigma_w, seed) cells, each model's accuracies centred per seed (exchangeable when the two models' profiles over "
        "sigma_w agree); null-equivalence margin 0.5 pp; premise: ResNet-9 interpolates at every sigma_w; no size; the "
        "gap at each end of the sigma_w grid is printed beside, and every run that fails to interpolate is named",
        "C7": "effect: the slope of log final against log initial kernel norm across sigma_w for SGD minus that of the "
        "adaptive optimizer with the largest slope, per seed; null: the two optimizers swapped within (sigma_w, "
        "seed); null-equivalence margin 0.1; no size (no number)",
        "B1": "effect: the memory gap acc(sigma_w 0.1) - acc(sigma_w 2.5) falls with lambda at fixed lr, where T_SGD "
        "is fixed and only the L2 clock moves (Spearman rho within each lr, averaged; null: lambda permuted within each "
        "lr; p < 0.05; not reproduced when it rises, p < 0.05); premise: the gap without decay at the smallest lr (the "
        "memory to forget) is at least 5 pp; size: the midpoint x0 of gap(x) = A / (1 + exp((x - x0) / w)), "
        f"x = T_L2 - ln(|W0|/|W*|), with A, x0 and w fitted, its profile interval inside 0 ± "
        f"{rules.BOUNDARY_BAND[1]:g} (a convention: a {100 * math.expm1(rules.BOUNDARY_BAND[1]):.0f} % error in the norm "
        "ratio; T5's own 10 % criterion would put complete forgetting of the norm "
        "at x = ln(10)/4 = 0.58); a profile interval that reaches the searched range leaves x0 not identified",
    }
)


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
    #: The predictor whose test accuracy the verdict judged (``"selected"`` or ``"final"``), where a row says.
    predictor: str = ""
    unit: str = " pp"
    margin: float = rules.MARGIN_PP
    #: The per-seed values behind ``effect`` and ``size`` (what the intervals are of), None where not judged by seeds.
    values: np.ndarray | None = None
    size_values: np.ndarray | None = None
    #: The interval estimator of ``effect`` (:func:`interval_of`; the size's is :func:`size_method` of it).
    method: str | CrossFitted = "t"
    #: The seeds the row was measured on, where ``effect`` counts something else (B1's rho: its cells); None: its n.
    seeds: int | None = None

    def __post_init__(self) -> None:
        self.unit = _UNITS.get(self.claim, self.unit)

    @property
    def key(self) -> str:
        """The row's name in the ledger: ``"C1"``, ``"C2 Adam"``, ``"C4 larger lr"``."""
        return f"{self.claim} {self.part}".strip()

    def as_dict(self) -> dict[str, Any]:
        """The row as one record of the ledger's table (:func:`initmem.study.verdicts.claims.reproduction_table`): the paper's
        side (question, statement, number and band), the effect, size and null with their intervals, the verdict
        with its reason and rule, and the texts."""
        paper = claim_record(self.claim)
        value = paper["values"].get(self.part, math.nan) if paper["values"] else math.nan
        null = self.null
        size = self.size or Interval(math.nan, math.nan, math.nan, 0)
        return {
            "claim": self.claim,
            "part": self.part,
            "question": paper["question"],
            "paper": paper["text"],
            "paper_value": value,
            "band_low": self.band[0] if self.band else math.nan,
            "band_high": self.band[1] if self.band else math.nan,
            "ours": self.ours,
            "effect": self.effect.estimate,
            "effect_low": self.effect.low,
            "effect_high": self.effect.high,
            "seeds": self.effect.n if self.seeds is None else self.seeds,
            "size": size.estimate,
            "size_low": size.low,
            "size_high": size.high,
            "p_value": null.p_value if null else math.nan,
            "null_mean": null.null_mean if null else math.nan,
            "null_p95": null.null_p95 if null else math.nan,
            "raw": null.observed if null else math.nan,
            "verdict": self.verdict.verdict,
            "reason": self.verdict.reason,
            "seeds_needed": self.seeds_needed,
            "rule": RULES[self.claim],
            "clocks": self.clocks,
            "scale": self.scale,
            "note": self.note,
            "experiment": self.experiment,
            "predictor": self.predictor,
            "unit": self.unit.strip(),
            "margin": self.margin,
            "paper_source": paper["source"],
        }


# --- measurements shared by the claims -------------------------------------------------------------------
def seed_matrix(values: xr.DataArray) -> np.ndarray:
    """A (sigma_w, seed) DataArray as an array of that shape (the nulls' input)."""
    return values.transpose("sigma_w", "seed").values


def cross_fitted(ds: xr.Dataset, var: str = "selected_test_acc") -> xr.DataArray:
    """The cross-fitted spread of ``var`` over sigma_w for each seed (pp, dims ``(seed,)``), diverged runs left out."""
    return cross_fitted_spreads(finite_runs(ds, var))


def interval_of(values: xr.DataArray | np.ndarray, method: str | CrossFitted) -> Interval:
    """The mean of per-seed ``values`` with its 95 % interval: ``method`` a :class:`CrossFitted` estimator (per-seed
    cross-fitted spreads or their contrasts, :mod:`initmem.study.statistics.calibration`), or the label of a plain Student-t
    interval (:func:`initmem.study.statistics.stats.mean_interval`)."""
    if isinstance(method, CrossFitted):
        return method.interval(values)
    return mean_interval(np.asarray(values), method=method)


def size_method(method: str | CrossFitted) -> str | CrossFitted:
    """The estimator of a row's size given its effect's: a :class:`CrossFitted` contrast's size is one condition's
    own spread over the same design; otherwise the same."""
    return method.spread() if isinstance(method, CrossFitted) else method


def clocks_text(ds: xr.Dataset, names: tuple[str, ...] = ("T_SGD", "T_L2", "T_adapt"), label: str = "") -> str:
    """Mean clocks at the selected checkpoint, and at the end, over sigma_w and seeds."""
    out = []
    for name in names:
        sel, fin = (float(ds[f"{w}_{name}"].mean(skipna=True)) for w in ("selected", "final"))
        if np.isfinite(sel) and (sel > 0 or fin > 0):
            out.append(f"{name}{label} {sel:.3g} at the selected checkpoint ({fin:.3g} at the end)")
    return "; ".join(out)


def scale_text(ds: xr.Dataset) -> str:
    """The scale a row was measured at, in words: preset, network and width, train images, image size, seeds."""
    from ..statistics.analysis import field_values, spec_of

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


def spread_text(ds: xr.Dataset, label: str = "") -> str:
    """Both predictors' cross-fitted spread, raw spread with its null, and mean training accuracy."""
    parts = []
    for name in ("selected", "final"):
        values = finite_runs(ds, f"{name}_test_acc")
        null = spread_null(seed_matrix(values))
        train = float(ds[f"{name}_train_acc"].mean(skipna=True))
        memory = interval_of(cross_fitted_spreads(values), CrossFitted(values.sizes["sigma_w"]))
        parts.append(f"{name}: {memory} (raw {null.observed:.1f} pp, {null}), train acc {train:.1f} %")
    return (label + ": " if label else "") + "; ".join(parts)


def _seeds_for(row_values: np.ndarray, floor: Callable[[int], float], **judged: Any) -> int | None:
    """The seeds that would decide an inconclusive row: its per-seed ``row_values`` at their observed mean and sd,
    with the permutation test passing only once its smallest attainable p (``floor(n)``) is below 0.05."""

    def decides(interval: Interval, n: int) -> bool:
        return rules.judge(interval, floor(n), **judged).verdict != INCONCLUSIVE

    return rules.seeds_to_decide(row_values, decides)


def judged_row(
    claim: str,
    part: str,
    direction_values: np.ndarray,
    null: NullTest,
    floor: Callable[[int], float],
    size_values: np.ndarray | None = None,
    margin: float = rules.MARGIN_PP,
    premise: str = "",
    method: str | CrossFitted = "t",
    **texts: Any,
) -> Row:
    """A row judged by :func:`initmem.study.verdicts.rules.judge`, with the seeds an inconclusive verdict would need.
    ``method``: the interval of :func:`interval_of` (the size's: :func:`size_method`). The seeds needed are
    projected with Student-t critical values (:func:`initmem.study.verdicts.rules.seeds_to_decide`); the calibrated ones are
    larger, so for a cross-fitted row it is a lower bound."""
    sized = band(claim, part)
    direction = interval_of(direction_values, method)
    size = interval_of(size_values, size_method(method)) if size_values is not None else direction
    verdict = rules.judge(direction, null.p_value, size=size, band=sized, margin=margin, premise=premise)
    needed = (
        _seeds_for(direction_values, floor, margin=margin) if verdict.verdict == INCONCLUSIVE and not premise else None
    )
    return Row(
        claim,
        part,
        verdict,
        direction,
        null,
        size,
        sized,
        seeds_needed=needed,
        margin=margin,
        values=np.asarray(direction_values, dtype=float),
        size_values=None if size_values is None else np.asarray(size_values, dtype=float),
        method=method,
        **texts,
    )
