"""The verdict rules: six verdicts, bands around the paper's numbers, and how many seeds would decide a claim.

A claim (or one part of it) is judged (:func:`judge`) from its direction effect ``D`` (a per-seed paired contrast,
positive in the paper's direction, with its 95 % interval, :mod:`initmem.study.statistics.calibration`, and its permutation p,
:mod:`initmem.study.statistics.nulls`) and, where the paper gives a number ``P``, the size ``S`` with its interval against the
band ``P +- max(5 pp, 30 % of P)`` (:func:`band_of`; a claim's record may set another share,
:func:`initmem.study.verdicts.ledger.claim_record`; "minimal" is ``P = 0``). In order: inconclusive without an interval; premise
not met; not reproduced (D's interval below 0, or inside the null-equivalence margin); the direction holds (D's
interval above 0, p below 0.05, estimate at least the margin) and S decides between in size, size contradicted and
in direction; else inconclusive, with :func:`seeds_to_decide`. A verdict's two sides are :data:`STRENGTH`; C3
("unchanged") has its own non-inferiority rule (:func:`judge_unchanged`).

Every rule asks an interval to lie inside or outside something, so more noise can only move a verdict towards
undecided (``tests/test_rules.py`` checks it). The book's page "Paper vs this reproduction" ("How to read the
verdicts") states each rule and why the estimate must reach the margin.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...base.numbers import p_text
from ..statistics.stats import LEVEL, Interval

__all__ = [
    "IN_SIZE",
    "IN_DIRECTION",
    "SIZE_CONTRADICTED",
    "NOT_REPRODUCED",
    "PREMISE_NOT_MET",
    "INCONCLUSIVE",
    "VERDICTS",
    "VERDICT_DEFINITIONS",
    "STRENGTH",
    "ALPHA",
    "MARGIN_PP",
    "BOUNDARY_BAND",
    "BAND_SHARE",
    "band_of",
    "Verdict",
    "judge",
    "judge_unchanged",
    "seeds_to_decide",
]

IN_SIZE, IN_DIRECTION, SIZE_CONTRADICTED, NOT_REPRODUCED, PREMISE_NOT_MET, INCONCLUSIVE = (
    "reproduced in size",
    "reproduced in direction",
    "size contradicted",
    "not reproduced",
    "premise not met",
    "inconclusive",
)
#: The six verdicts, in the order the book lists them.
VERDICTS = (IN_SIZE, IN_DIRECTION, SIZE_CONTRADICTED, NOT_REPRODUCED, PREMISE_NOT_MET, INCONCLUSIVE)
#: Each verdict's two sides, ``(direction, size)``: +1 holds (inside the band), -1 fails (wrong side or no effect;
#: outside the band), 0 undecided. Noise may only move a side towards 0. A premise that is not met decides neither.
STRENGTH = {
    IN_SIZE: (1, 1),
    IN_DIRECTION: (1, 0),
    SIZE_CONTRADICTED: (1, -1),
    INCONCLUSIVE: (0, 0),
    PREMISE_NOT_MET: (0, 0),
    NOT_REPRODUCED: (-1, 0),
}
#: The significance level of every permutation test in the book.
ALPHA = 0.05
#: The null-equivalence margin (percentage points): an effect whose whole interval lies within +- this is no effect.
MARGIN_PP = 5.0
#: The band's share of the paper's number, unless a claim's record sets its own: ``P +- max(MARGIN_PP, share * P)``.
BAND_SHARE = 0.3
#: B1's band around the predicted boundary x = 0: +- 0.3 in x, i.e. a 35 % error in the norm ratio ``|W0| / |W*|``.
BOUNDARY_BAND = (-0.3, 0.3)

_HOLDS = (
    "the effect lies on the paper's side beyond its noise null (95 % interval above 0, permutation p < 0.05) with an "
    f"estimate of at least the margin ({MARGIN_PP:g} pp)"
)
#: What each verdict means (printed in the book).
VERDICT_DEFINITIONS = {
    IN_SIZE: f"{_HOLDS}, and the whole 95 % interval of the measured size lies inside the band around the paper's "
    f"number (P ± max({MARGIN_PP:g} pp, {100 * BAND_SHARE:g} % of P) unless the claim's rule prints another band)",
    IN_DIRECTION: f"{_HOLDS}, and the size's interval straddles an edge of the band (it neither confirms nor "
    "contradicts the paper's number), or the paper gives no number",
    SIZE_CONTRADICTED: f"{_HOLDS}, but the whole 95 % interval of the measured size lies outside the band: the "
    "direction is the paper's, the size measurably is not (the row says larger or smaller, and by how much)",
    NOT_REPRODUCED: "the effect's interval lies entirely on the wrong side of 0, or entirely inside the "
    f"null-equivalence band ± {MARGIN_PP:g} pp (no effect, within the margin)",
    PREMISE_NOT_MET: "a condition the claim presupposes does not hold at this scale (SGD interpolates; the L2 clock "
    "runs past ln(|W0|/|W*|)); the row prints the premise and what would meet it",
    INCONCLUSIVE: "anything else: the effect's interval straddles 0 or the margin, the permutation p is not below "
    "0.05, or there are fewer than 2 seeds; the row then says how many seeds would decide it",
}


def band_of(paper: float, floor: float = MARGIN_PP, share: float = BAND_SHARE) -> tuple[float, float]:
    """The band around the paper's number ``paper``: ``paper +- max(floor, share * |paper|)``.

    >>> band_of(20.0), band_of(4.0), band_of(0.0)
    ((14.0, 26.0), (-1.0, 9.0), (-5.0, 5.0))
    """
    half = max(floor, share * abs(paper))
    return (round(paper - half, 10), round(paper + half, 10))


@dataclass(frozen=True)
class Verdict:
    """A verdict with the one-line reason for it (which rule applied, with the numbers it compared)."""

    verdict: str
    reason: str

    def __str__(self) -> str:
        return self.verdict


def _inside(interval: Interval, band: tuple[float, float]) -> bool:
    return interval.has_bounds and band[0] <= interval.low and interval.high <= band[1]


def _outside(interval: Interval, band: tuple[float, float]) -> bool:
    return interval.has_bounds and (interval.high < band[0] or interval.low > band[1])


def _contradiction(size: Interval, band: tuple[float, float]) -> str:
    """How a size wholly outside ``band`` differs from the paper's number (the band's centre)."""
    paper = (band[0] + band[1]) / 2
    side, gap = ("larger", size.low - band[1]) if size.low > band[1] else ("smaller", band[0] - size.high)
    return (
        f"the size's interval [{size.low:.1f}, {size.high:.1f}] lies wholly outside the band [{band[0]:g}, "
        f"{band[1]:g}]: {side} than the paper's {paper:g} by {abs(size.estimate - paper):.1f} (at least "
        f"{gap:.2g} beyond the band's edge)"
    )


def judge(
    direction: Interval,
    p_value: float,
    *,
    size: Interval | None = None,
    band: tuple[float, float] | None = None,
    margin: float = MARGIN_PP,
    premise: str = "",
    alpha: float = ALPHA,
) -> Verdict:
    """The verdict of a claim by the rules of the module docstring.

    Args:
        direction: D, the per-seed paired effect (positive = the paper's direction), with its interval.
        p_value: D's one-sided permutation p-value (NaN: no null could be formed).
        size: S, the quantity the paper's number is about (default: ``direction`` itself).
        band: the band around the paper's number (:func:`band_of`); None: the paper gives no number, so the claim
            can be at most "in direction".
        margin: the null-equivalence margin of D, in D's units.
        premise: why a premise of the claim is not met here (``""``: it is met).
    """
    size = direction if size is None else size
    if not direction.has_bounds:
        return Verdict(
            INCONCLUSIVE, "no interval: fewer than 2 seeds with a value (a spread is cross-fitted on the other seeds)"
        )
    if premise:
        return Verdict(PREMISE_NOT_MET, f"premise not met: {premise}")
    if direction.high < 0:
        return Verdict(
            NOT_REPRODUCED, f"the effect's interval [{direction.low:.2f}, {direction.high:.2f}] lies entirely below 0"
        )
    if -margin < direction.low and direction.high < margin:
        return Verdict(
            NOT_REPRODUCED,
            f"the effect's interval [{direction.low:.2f}, {direction.high:.2f}] lies "
            f"inside the null-equivalence band ±{margin:g}",
        )
    beyond_null = direction.low > 0 and math.isfinite(p_value) and p_value < alpha and direction.estimate >= margin
    if beyond_null:
        if band is not None and _inside(size, band):
            return Verdict(
                IN_SIZE,
                f"effect above 0 (p = {p_text(p_value)}) and the size's interval [{size.low:.1f}, "
                f"{size.high:.1f}] inside the band [{band[0]:g}, {band[1]:g}]",
            )
        if band is not None and _outside(size, band):
            return Verdict(SIZE_CONTRADICTED, f"effect above 0 (p = {p_text(p_value)}); {_contradiction(size, band)}")
        why = (
            "the paper gives no number"
            if band is None
            else f"the size's interval [{size.low:.1f}, {size.high:.1f}] straddles an edge of the band "
            f"[{band[0]:g}, {band[1]:g}]"
            if size.has_bounds
            else "the size has no interval"
        )
        return Verdict(IN_DIRECTION, f"effect above 0 (p = {p_text(p_value)}); {why}")
    if direction.low <= 0:
        return Verdict(INCONCLUSIVE, f"the effect's interval [{direction.low:.2f}, {direction.high:.2f}] straddles 0")
    if direction.estimate < margin:
        return Verdict(
            INCONCLUSIVE,
            f"the effect {direction.estimate:.2f} lies above 0 but below the margin {margin:g}, and its interval "
            f"[{direction.low:.2f}, {direction.high:.2f}] reaches past the null-equivalence band",
        )
    return Verdict(
        INCONCLUSIVE,
        f"the effect's interval lies above 0 but its permutation p = {p_text(p_value)} is not below {alpha:g}",
    )


def judge_unchanged(change: Interval, margin: float = MARGIN_PP, premise: str = "") -> Verdict:
    """C3's rule, a non-inferiority test: the claim is that a quantity does *not* fall (the spread after far longer
    training is "essentially unchanged"). **In direction** when the change's whole interval lies above ``-margin``;
    **not reproduced** when it lies entirely below ``-margin`` (it fell by more than the margin); else inconclusive.
    The claim is itself the null (no change), so no permutation test applies; the paper gives no number, so it can
    be at most "in direction"."""
    if not change.has_bounds:
        return Verdict(INCONCLUSIVE, "no interval: fewer than 2 seeds with a value")
    if premise:
        return Verdict(PREMISE_NOT_MET, f"premise not met: {premise}")
    if change.low > -margin:
        return Verdict(
            IN_DIRECTION, f"the change's interval [{change.low:.1f}, {change.high:.1f}] lies above -{margin:g}"
        )
    if change.high < -margin:
        return Verdict(
            NOT_REPRODUCED, f"the change's interval [{change.low:.1f}, {change.high:.1f}] lies below -{margin:g}"
        )
    return Verdict(INCONCLUSIVE, f"the change's interval [{change.low:.1f}, {change.high:.1f}] straddles -{margin:g}")


def seeds_to_decide(
    values: np.ndarray,
    decides: Callable[[Interval, int], bool],
    max_seeds: int = 100,
    level: float = LEVEL,
) -> int | None:
    """The smallest number of seeds n (above the current one) at which ``decides(interval, n)`` holds for the
    t-interval ``mean +- t_{n-1} sd / sqrt(n)`` of per-seed ``values`` with their observed mean and sd: the seeds a
    claim would need if more seeds behaved like these. For cross-fitted spreads, whose calibrated critical values
    (:mod:`initmem.study.statistics.calibration`) exceed Student's, this is a lower bound. None if no n up to ``max_seeds`` decides (e.g. the mean lies
    on a band's edge). ``decides`` also gets n, to check what else depends on it (a permutation test's smallest p).

    >>> from initmem.study.verdicts.rules import seeds_to_decide
    >>> seeds_to_decide(np.array([1.0, 3.0, 2.0]), lambda interval, n: interval.low > 0)
    4
    """
    from scipy import stats

    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) < 2:
        return None
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    for n in range(len(x) + 1, max_seeds + 1):
        half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
        if decides(Interval(mean, mean - half, mean + half, n), n):
            return n
    return None
