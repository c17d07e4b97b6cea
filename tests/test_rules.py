"""The verdict rules (initmem.study.verdicts.rules): each rule at its edges, and the property that noise never helps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from initmem.study.statistics.stats import Interval
from initmem.study.verdicts import rules
from initmem.study.verdicts.rules import (
    IN_DIRECTION,
    IN_SIZE,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PREMISE_NOT_MET,
    SIZE_CONTRADICTED,
    STRENGTH,
    judge,
    judge_unchanged,
)


def iv(low: float, high: float, n: int = 5) -> Interval:
    return Interval((low + high) / 2, low, high, n)


def test_the_band_is_the_paper_number_plus_minus_max_5_pp_or_30_percent():
    assert rules.band_of(26.5) == (18.55, 34.45)  # 30 % of 26.5 = 7.95 > 5
    assert rules.band_of(10.0) == (5.0, 15.0)  # 30 % = 3 < 5: the floor
    assert rules.band_of(16.0) == (11.0, 21.0) and rules.band_of(20.0) == (14.0, 26.0)  # 4.8 < 5; 6 > 5
    assert rules.band_of(0.0) == (-5.0, 5.0) and rules.band_of(4.0) == (-1.0, 9.0)
    assert rules.band_of(-20.0) == (-26.0, -14.0)  # symmetric in the sign of the number
    assert rules.MARGIN_PP == 5.0 and rules.ALPHA == 0.05


@pytest.mark.parametrize(
    ("direction", "p", "size", "band", "premise", "verdict"),
    [
        (iv(math.nan, math.nan, 1), 0.001, None, (18.55, 34.45), "", INCONCLUSIVE),  # one seed: no interval
        (iv(20.0, 30.0), 0.001, None, (18.55, 34.45), "SGD does not interpolate", PREMISE_NOT_MET),
        (iv(-3.0, -1.0), 0.9, None, None, "no premise", PREMISE_NOT_MET),  # a premise blocks the negative verdict too
        (iv(-9.0, -0.01), 0.9, None, None, "", NOT_REPRODUCED),  # entirely below 0
        (iv(-9.0, 0.0), 0.9, None, None, "", INCONCLUSIVE),  # touching 0 is not below it
        (iv(-4.99, 4.99), 0.9, None, None, "", NOT_REPRODUCED),  # inside the null-equivalence band
        (iv(-5.0, 4.99), 0.9, None, None, "", INCONCLUSIVE),  # its edge is not inside
        (iv(-4.99, 5.0), 0.9, None, None, "", INCONCLUSIVE),
        (iv(0.5, 4.99), 0.001, None, None, "", NOT_REPRODUCED),  # significant, but less than the margin
        (iv(1.01, 9.0), 0.049, None, None, "", IN_DIRECTION),  # no number: at most in direction (estimate 5.005)
        (iv(0.99, 9.0), 0.049, None, None, "", INCONCLUSIVE),  # estimate 4.995: below the margin, never a pass
        (iv(0.0, 9.0), 0.001, None, None, "", INCONCLUSIVE),  # straddles (touches) 0
        (iv(1.01, 9.0), 0.05, None, None, "", INCONCLUSIVE),  # p at alpha is not below it
        (iv(1.01, 9.0), math.nan, None, None, "", INCONCLUSIVE),  # no null: no direction
        (iv(18.55, 34.45), 0.001, None, (18.55, 34.45), "", IN_SIZE),  # the band's edges are inside it
        (iv(18.54, 30.0), 0.001, None, (18.55, 34.45), "", IN_DIRECTION),  # straddles the lower edge
        (iv(20.0, 34.46), 0.001, None, (18.55, 34.45), "", IN_DIRECTION),
        (iv(34.46, 40.0), 0.001, None, (18.55, 34.45), "", SIZE_CONTRADICTED),  # wholly above the band
        (iv(34.45, 40.0), 0.001, None, (18.55, 34.45), "", IN_DIRECTION),  # touching the edge is not outside
        (iv(6.0, 18.54), 0.001, None, (18.55, 34.45), "", SIZE_CONTRADICTED),  # wholly below it
        (iv(6.0, 18.55), 0.001, None, (18.55, 34.45), "", IN_DIRECTION),  # touching the lower edge is not below it
        (iv(6.0, 20.0), 0.001, iv(5.01, 12.0), (-5.0, 5.0), "", SIZE_CONTRADICTED),  # C4 larger lr: not near 0
        (iv(6.0, 20.0), 0.06, iv(5.01, 12.0), (-5.0, 5.0), "", INCONCLUSIVE),  # no direction: the size decides nothing
        (iv(20.0, 30.0), 0.06, None, (18.55, 34.45), "", INCONCLUSIVE),  # inside the band, but not beyond the null
        (iv(6.0, 20.0), 0.001, iv(-4.0, 4.0), (-5.0, 5.0), "", IN_SIZE),  # C2: SGD's lead, Adam's spread near 0
        (iv(6.0, 20.0), 0.001, iv(-4.0, 5.01), (-5.0, 5.0), "", IN_DIRECTION),
        (iv(6.0, 20.0), 0.001, iv(math.nan, math.nan, 1), (-5.0, 5.0), "", IN_DIRECTION),
    ],
)
def test_judge_at_the_edges(direction, p, size, band, premise, verdict):
    assert judge(direction, p, size=size, band=band, premise=premise).verdict == verdict


def test_the_margin_is_in_the_effects_units():
    assert judge(iv(0.2, 0.45), 0.001, margin=0.5).verdict == NOT_REPRODUCED
    assert judge(iv(0.45, 0.6), 0.001, margin=0.5).verdict == IN_DIRECTION  # estimate 0.525
    assert judge(iv(0.2, 0.55), 0.001, margin=0.5).verdict == INCONCLUSIVE  # estimate 0.375, below the margin
    assert judge(iv(-0.49, 0.45), 0.5, margin=0.5).verdict == NOT_REPRODUCED


def test_every_verdict_says_why():
    reasons = {
        judge(iv(-9.0, -1.0), 0.9).reason: "entirely below 0",
        judge(iv(-1.0, 1.0), 0.9).reason: "null-equivalence band ±5",
        judge(iv(20.0, 30.0), 0.001, band=(18.55, 34.45)).reason: "inside the band [18.55, 34.45]",
        judge(iv(10.0, 30.0), 0.001, band=(18.55, 34.45)).reason: "straddles an edge of the band [18.55, 34.45]",
        judge(iv(36.0, 40.0), 0.001, band=(18.55, 34.45)).reason: "larger than the paper's 26.5 by 11.5 (at least 1.5",
        judge(
            iv(6.0, 20.0), 0.001, size=iv(-12.0, -6.0), band=(-5.0, 5.0)
        ).reason: "outside the band [-5, 5]: smaller than the paper's 0 by 9.0 (at least 1 beyond",
        judge(iv(10.0, 30.0), 0.001).reason: "the paper gives no number",
        judge(iv(-1.0, 30.0), 0.001).reason: "straddles 0",
        judge(iv(0.0, 30.0), 0.001).reason: "[0.00, 30.00] straddles 0",  # touching 0 is straddling it
        judge(iv(10.0, 30.0), 0.2).reason: "p = 0.2 is not below 0.05",
        judge(iv(1.0, 10.0), 0.2).reason: "lies above 0 but its permutation p = 0.2",
        judge(iv(0.5, 9.0), 0.001).reason: "4.75 lies above 0 but below the margin 5",
        judge(iv(10.0, 30.0), 0.001, premise="not interpolating").reason: "premise not met: not interpolating",
    }
    for reason, expected in reasons.items():
        assert expected in reason, (reason, expected)


@pytest.mark.parametrize(
    ("change", "verdict"),
    [
        (iv(-4.99, 3.0), IN_DIRECTION),
        (iv(-5.0, 3.0), INCONCLUSIVE),  # its edge is not above -5
        (iv(-12.0, -5.01), NOT_REPRODUCED),
        (iv(-12.0, -5.0), INCONCLUSIVE),
        (iv(math.nan, math.nan, 1), INCONCLUSIVE),
    ],
)
def test_unchanged_is_a_non_inferiority_rule(change, verdict):
    assert judge_unchanged(change).verdict == verdict
    assert judge_unchanged(iv(-1.0, 1.0), premise="no memory at the reference").verdict == PREMISE_NOT_MET


def test_seeds_to_decide_from_the_observed_mean_and_spread():
    # mean 2, sd 1: t_{0.975,3} / 2 = 1.59 < 2 decides at 4 seeds, t_{0.975,2} / sqrt(3) = 2.48 does not at 3
    assert rules.seeds_to_decide(np.array([1.0, 3.0, 2.0]), lambda i, n: i.low > 0) == 4
    assert rules.seeds_to_decide(np.array([1.0, 3.0, 2.0, np.nan]), lambda i, n: i.low > 0) == 4  # NaN dropped
    # the number of seeds can be what decides (a permutation test's floor)
    assert rules.seeds_to_decide(np.array([1.0, 3.0, 2.0]), lambda i, n: i.low > 0 and n >= 6) == 6
    assert rules.seeds_to_decide(np.array([-1.0, 1.0, 0.0]), lambda i, n: i.low > 0) is None  # a mean of 0 never
    assert rules.seeds_to_decide(np.array([2.0]), lambda i, n: True) is None  # one seed has no spread to project
    # two seeds are enough to project: mean 2, sd 1.41 -> t_{0.975,4} * 1.41 / sqrt(5) = 1.76 < 2 at 5 seeds
    assert rules.seeds_to_decide(np.array([1.0, 3.0]), lambda i, n: i.low > 0) == 5
    assert rules.seeds_to_decide(np.array([1.0, 3.0]), lambda i, n: i.low > 0, max_seeds=5) == 5  # the limit counts
    assert rules.seeds_to_decide(np.array([1.0, 3.0]), lambda i, n: i.low > 0, max_seeds=4) is None
    # always "above the current number": values that already decide get the next one
    assert rules.seeds_to_decide(np.array([5.0, 5.1, 4.9, 5.0]), lambda i, n: i.low > 0) == 5
    assert rules.seeds_to_decide(np.array([1.0, 3.0]), lambda i, n: i.low > 1.9, max_seeds=50) is None


def test_a_verdict_cannot_be_changed_after_it_is_given():
    import dataclasses

    verdict = judge(iv(20.0, 30.0), 0.001)
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.verdict = IN_SIZE  # type: ignore[misc]
    assert str(verdict) == IN_DIRECTION


def test_the_verdicts_and_their_definitions():
    assert rules.VERDICTS == (IN_SIZE, IN_DIRECTION, SIZE_CONTRADICTED, NOT_REPRODUCED, PREMISE_NOT_MET, INCONCLUSIVE)
    assert set(rules.VERDICT_DEFINITIONS) == set(rules.VERDICTS) == set(STRENGTH)
    assert STRENGTH[IN_SIZE] == (1, 1) and STRENGTH[SIZE_CONTRADICTED] == (1, -1) and STRENGTH[IN_DIRECTION] == (1, 0)
    assert STRENGTH[NOT_REPRODUCED] == (-1, 0) and STRENGTH[INCONCLUSIVE] == STRENGTH[PREMISE_NOT_MET] == (0, 0)


def _weaker_or_equal(before: str, after: str) -> bool:
    """Each side of ``after`` (direction, size) is ``before``'s or lies between it and undecided (on the same side)."""
    return all(a == b or (a * b >= 0 and abs(a) < abs(b)) for b, a in zip(STRENGTH[before], STRENGTH[after]))


@settings(max_examples=400, deadline=None)
@given(
    center=st.floats(-40, 40),
    half=st.floats(0.01, 30),
    widen=st.floats(1.0, 10.0),
    p=st.floats(0.0, 1.0),
    p_more=st.floats(0.0, 1.0),
    size_center=st.floats(-40, 40),
    size_half=st.floats(0.01, 30),
    paper=st.one_of(st.none(), st.floats(0, 40)),
    has_size=st.booleans(),
)
def test_more_noise_never_makes_a_claim_easier_to_pass(
    center, half, widen, p, p_more, size_center, size_half, paper, has_size
):
    """A wider interval (same centre) and a larger p can only weaken a verdict: each side (direction, size) only
    towards undecided, never towards in size, size contradicted or not reproduced."""
    band = rules.band_of(paper) if paper is not None else None
    size = Interval(size_center, size_center - size_half, size_center + size_half, 5) if has_size else None
    wider_size = (
        Interval(size_center, size_center - widen * size_half, size_center + widen * size_half, 5) if has_size else None
    )
    before = judge(Interval(center, center - half, center + half, 5), p, size=size, band=band).verdict
    after = judge(
        Interval(center, center - widen * half, center + widen * half, 5), max(p, p_more), size=wider_size, band=band
    ).verdict
    assert _weaker_or_equal(before, after), (before, after)
    unchanged_before = judge_unchanged(Interval(center, center - half, center + half, 5)).verdict
    unchanged_after = judge_unchanged(Interval(center, center - widen * half, center + widen * half, 5)).verdict
    assert _weaker_or_equal(unchanged_before, unchanged_after)


def _rejudge(row, k: float, p_more: float = 0.0):
    """``row``'s verdict when its per-seed values spread k times as far around their means (more seed noise, the same
    estimate) and its permutation p is ``p_more`` larger."""
    from initmem.study.verdicts.ledger import interval_of, size_method

    inflate = lambda v: None if v is None else np.nanmean(v) + k * (v - np.nanmean(v))  # noqa: E731
    size = inflate(row.size_values)
    return judge(
        interval_of(inflate(row.values), row.method),  # the row's own estimator (calibrated for spreads)
        min(1.0, row.null.p_value + p_more),
        size=None if size is None else interval_of(size, size_method(row.method)),
        band=row.band,
        margin=row.margin,
        premise=row.verdict.reason.removeprefix("premise not met: ") if row.verdict.verdict == PREMISE_NOT_MET else "",
    ).verdict


def test_more_seed_noise_on_the_committed_runs_never_strengthens_a_verdict():
    """The committed cpu results of 01 and 03 (real run files), every row that is judged by seeds: its per-seed
    effects spread 1.5, 2, 4 and 8 times as far (and its p-value raised), the verdict only moves towards
    inconclusive."""
    from pathlib import Path

    import xarray as xr

    from initmem.study.verdicts import claims

    root = Path(__file__).resolve().parents[1] / "results" / "cpu"
    results = {
        name: xr.load_dataset(root / f"{name}.nc", engine="h5netcdf") for name in ("01_optimizers", "03_lr_and_l2")
    }
    rows = [row for row in claims.claim_rows(results, ["C1", "C2", "C4", "C7"]) if row.values is not None]
    assert len(rows) == 8
    for row in rows:
        assert _rejudge(row, 1.0) == row.verdict.verdict  # the rows' verdicts are these rules' on these values
        verdicts = [row.verdict.verdict] + [
            _rejudge(row, k, p) for k, p in ((1.5, 0.0), (2, 0.01), (4, 0.05), (8, 0.2))
        ]
        for before, after in zip(verdicts, verdicts[1:]):
            assert _weaker_or_equal(before, after), (row.key, verdicts)
        assert verdicts[-1] in (INCONCLUSIVE, row.verdict.verdict), (row.key, verdicts)


def test_a_significant_effect_smaller_than_the_margin_is_not_reproduced_and_its_noisier_copy_inconclusive():
    """The edge hypothesis found: [2, 4] with p = 0 is told apart from 0 but lies inside the +-5 equivalence band, so
    it is no effect that matters: not reproduced. Its noisier copy [1, 5] (the same estimate, 3) reaches the band's
    edge; it used to pass as "in direction" (more noise, an easier pass), and is inconclusive now, since an estimate
    below the margin never passes. An estimate at the margin, beyond the null, does."""
    assert judge(iv(2.0, 4.0), 0.0).verdict == NOT_REPRODUCED
    assert judge(iv(1.0, 5.0), 0.0).verdict == INCONCLUSIVE
    assert "below the margin 5" in judge(iv(1.0, 5.0), 0.0).reason
    assert judge(iv(0.5, 9.5), 0.001).verdict == IN_DIRECTION  # estimate 5.0: at the margin
    assert judge(iv(0.5, 9.4), 0.001).verdict == INCONCLUSIVE  # estimate 4.95
    assert judge(iv(0.5, 9.5), 0.001, size=iv(1.0, 3.0), band=rules.band_of(0.0)).verdict == IN_SIZE
