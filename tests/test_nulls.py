"""Noise nulls and the noise-corrected spread: permutation tests with known answers, the cross-fitted estimator,
intervals that stay within what a quantity can take, rank correlations with their null."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import xarray as xr

from initmem.study.statistics import nulls
from initmem.study.statistics.stats import Interval, cross_fitted_spreads, mean_interval, rank_correlation, rank_test


def test_the_raw_spread_is_max_minus_min_of_the_seed_mean_curve():
    acc = np.array([[60.0, 62.0, 64.0], [50.0, 50.0, 53.0], [40.0, 44.0, 42.0]])  # 3 sigma_w x 3 seeds
    assert float(nulls.raw_spread(acc)) == pytest.approx(62.0 - 42.0)
    assert nulls.raw_spread(np.stack([acc, acc + 1.0, acc * 2])).tolist() == pytest.approx([20.0, 20.0, 40.0])


def test_a_memory_that_every_seed_shows_has_the_smallest_p_the_design_allows():
    # 4 sigma_w x 3 seeds, the same top and bottom sigma_w in every seed: only the permutations that keep every seed's
    # top and bottom values on one label each reach it (4 x 3 choices of the two labels, the middle two in any order)
    acc = np.array([[70.0, 71.0, 69.5], [60.0, 59.0, 61.0], [50.0, 51.0, 49.0], [40.0, 41.0, 39.0]])
    test = nulls.spread_null(acc)
    assert test.exact and test.permutations == 24**3
    assert test.p_value == pytest.approx(12 * 2**3 / 24**3) == pytest.approx(nulls.spread_null_floor(4, 3))
    assert test.smallest_p == pytest.approx(test.p_value)
    assert test.observed == pytest.approx(float(nulls.raw_spread(acc)))
    assert 0 < test.null_mean < test.null_p95 < test.observed


def test_two_sigma_values_and_three_seeds_can_never_reach_p_below_a_quarter():
    acc = np.array([[90.0, 91.0, 89.0], [10.0, 11.0, 9.0]])  # an 80 pp memory
    test = nulls.spread_null(acc)
    assert test.permutations == 8 and test.p_value == 0.25 and test.smallest_p == 0.25
    assert nulls.spread_null_floor(2, 3) == 0.25 and nulls.spread_null_floor(2, 5) == 1 / 16
    assert nulls.spread_null_floor(4, 5) == pytest.approx(12.0**-4) and nulls.spread_null_floor(3, 1) == 1.0


def test_pure_noise_is_not_memory():
    rng = np.random.default_rng(3)
    p_values = [nulls.spread_null(rng.normal(60.0, 2.5, (4, 3))).p_value for _ in range(40)]
    assert 0.3 < float(np.mean(p_values)) < 0.7  # uniform under the null
    assert np.mean(np.array(p_values) < 0.05) < 0.2


def test_a_large_null_is_drawn_with_a_fixed_seed():
    acc = np.random.default_rng(0).normal(60.0, 2.5, (4, 5))  # 24^5 = 8e6 permutations: drawn
    first, second = nulls.spread_null(acc), nulls.spread_null(acc)
    assert not first.exact and first.permutations == nulls.N_RESAMPLES
    assert first == second  # reproducible
    assert first.smallest_p == pytest.approx(1 / (nulls.N_RESAMPLES + 1))
    assert "10,000 permutations, random, seed 20260529" in str(first)  # what the book prints: the record's draws


def test_nulls_need_two_complete_seeds():
    one = nulls.spread_null(np.array([[60.0], [40.0]]))
    assert not one.has_null and one.permutations == 0 and math.isnan(one.p_value)
    assert one.format() == "no null (fewer than 2 complete seeds)"
    # a diverged run (NaN) drops its seed
    test = nulls.spread_null(np.array([[60.0, 61.0, np.nan], [40.0, 41.0, 39.0]]))
    assert test.permutations == 4
    with pytest.raises(ValueError, match="n_sigma, n_seeds"):
        nulls.spread_null(np.zeros(3))


def test_a_contrast_swaps_conditions_within_cells():
    a = np.array([[60.0, 61.0, 59.0], [40.0, 41.0, 39.0]])  # A remembers (20 pp)
    b = np.array([[50.0, 50.5, 49.5], [50.0, 49.0, 51.0]])  # B does not
    test = nulls.contrast_null(a, b)
    assert test.exact and test.permutations == 2**6
    assert test.observed == pytest.approx(float(nulls.raw_spread(a) - nulls.raw_spread(b)))
    assert test.p_value == pytest.approx(1 / 64) == nulls.contrast_null_floor(6)
    # the opposite direction is not significant
    assert nulls.contrast_null(b, a).p_value > 0.9


def test_the_spread_null_is_every_relabelling_of_every_seed():
    """3 sigma_w x 4 seeds: the 6^4 = 1,296 relabellings enumerated here by hand give the null's mean, its 95th
    percentile, the p-value and the smallest p the design allows."""
    acc = np.random.default_rng(5).normal(60.0, 3.0, (3, 4))
    null = np.array(
        [
            float(nulls.raw_spread(np.stack([acc[list(order), j] for j, order in enumerate(orders)], axis=1)))
            for orders in itertools.product(itertools.permutations(range(3)), repeat=4)
        ]
    )
    test = nulls.spread_null(acc)
    assert test.exact and test.permutations == 1296
    assert test.null_mean == pytest.approx(null.mean(), abs=1e-9)
    assert test.null_p95 == pytest.approx(np.percentile(null, 95), abs=1e-9)
    assert np.percentile(null, 95) != pytest.approx(np.percentile(null, 96))  # the percentile is the 95th
    assert test.p_value == pytest.approx(np.mean(null >= float(nulls.raw_spread(acc)) - 1e-9))
    assert test.smallest_p == pytest.approx(np.mean(null >= null.max() - 1e-9))


def test_the_contrast_null_is_every_swap_of_the_centred_cells():
    """2 sigma_w x 3 seeds: the 2^6 swaps of A's and B's (seed-centred) cells, enumerated here by hand."""
    rng = np.random.default_rng(6)
    a, b = rng.normal(60.0, 3.0, (2, 3)), rng.normal(70.0, 3.0, (2, 3))
    ca, cb = a - a.mean(axis=0), b - b.mean(axis=0)
    null = []
    for swap in itertools.product((False, True), repeat=6):
        mask = np.array(swap).reshape(2, 3)
        null.append(float(nulls.raw_spread(np.where(mask, cb, ca)) - nulls.raw_spread(np.where(mask, ca, cb))))
    null = np.array(null)
    test = nulls.contrast_null(a.tolist(), b.tolist())  # lists are arrays too
    assert test.exact and test.permutations == 64
    assert test.observed == pytest.approx(float(nulls.raw_spread(a) - nulls.raw_spread(b)))
    assert test.null_mean == pytest.approx(null.mean(), abs=1e-9)
    assert test.null_p95 == pytest.approx(np.percentile(null, 95), abs=1e-9)
    assert test.p_value == pytest.approx(np.mean(null >= test.observed - 1e-9))


@pytest.mark.parametrize("c", [8.5, -3.0, 19.0])
def test_a_constant_on_every_accuracy_leaves_a_tied_contrasts_p_value_alone(c):
    """Found by the judges' invariants: scipy's tie tolerance is relative to the observed statistic, so the rounding
    that a constant leaves in the centred cells (about 1e-13 pp) turned ties into misses (p 0.539 against 0.547
    here). A permutation within :data:`~initmem.study.statistics.nulls.TIE` of the observed statistic is a hit."""
    a = np.array([[64.0, 45.5, 10.5], [15.0, 64.5, 65.5], [56.0, 28.0, 63.0]])
    b = np.array([[18.5, 60.0, 56.0], [38.5, 27.5, 68.0], [24.5, 22.5, 60.5]])
    before, after = nulls.contrast_null(a, b), nulls.contrast_null(a + c, b + c)
    assert after.p_value == before.p_value == pytest.approx(0.546875)  # 280 of the 512 swaps reach the observed


def test_a_contrast_of_one_seed_has_its_four_swaps_and_of_one_cell_none():
    # swapping neither cell: 20; both: -20; one: each condition's spread is 10, so 0 twice: p = 1/4
    test = nulls.contrast_null(np.array([[60.0], [40.0]]), np.array([[50.0], [50.0]]))
    assert test.exact and test.permutations == 4 and test.p_value == pytest.approx(0.25)
    assert test.null_mean == pytest.approx(0.0)
    assert not nulls.contrast_null(np.array([[60.0]]), np.array([[50.0]])).has_null


def test_a_contrast_is_exact_up_to_2_to_the_13_swaps_and_drawn_beyond():
    """Exact up to MAX_EXACT_SWAPS = 2^12 by choice, and at 2^13 = 8,192 because scipy enumerates every swap when
    it could draw as many (10,000); 2^14 swaps are drawn."""
    rng = np.random.default_rng(7)
    twelve = nulls.contrast_null(rng.normal(60.0, 2.0, (4, 3)), rng.normal(60.0, 2.0, (4, 3)))
    assert twelve.exact and twelve.permutations == 2**12 == nulls.MAX_EXACT_SWAPS
    mean = lambda x, y: x.mean(axis=(-1, -2)) - y.mean(axis=(-1, -2))  # noqa: E731
    thirteen = nulls.contrast_null(rng.normal(60.0, 2.0, (1, 13)), rng.normal(60.0, 2.0, (1, 13)), mean, False)
    assert thirteen.exact and thirteen.permutations == 2**13 and thirteen.smallest_p == pytest.approx(1 / 2**13)
    fourteen = nulls.contrast_null(rng.normal(60.0, 2.0, (1, 14)), rng.normal(60.0, 2.0, (1, 14)), mean, False)
    assert not fourteen.exact and fourteen.permutations == 10_000
    assert fourteen.smallest_p == pytest.approx(1 / 10_001)  # one hit among the draws, above the exact 1 / 2^14


def test_a_null_without_a_p_value_is_no_null():
    assert not nulls.NullTest(-0.5, math.nan, math.nan, math.nan, 10_000, False, 1e-4).has_null  # B1 without strata
    assert nulls.NullTest(-0.5, 0.01, math.nan, math.nan, 10_000, False, 1e-4).has_null


def test_a_contrast_drops_a_seed_with_a_diverged_run_in_either_condition():
    a = np.array([[60.0, 61.0, 59.0, 60.5], [40.0, 41.0, 39.0, 40.5]])
    b = np.array([[50.0, 50.5, 49.5, 50.0], [50.0, 49.0, 51.0, 50.0]])
    complete = nulls.contrast_null(a[:, :3], b[:, :3])
    for diverged in (a, b):  # seed 3 diverged in one condition: NaN in one cell
        diverged[1, 3] = np.nan
        test = nulls.contrast_null(a, b)
        assert test.permutations == complete.permutations == 2**6  # 2 sigma_w x 3 seeds swapped, not 4 seeds
        assert test.observed == pytest.approx(complete.observed) and test.p_value == pytest.approx(complete.p_value)
        diverged[1, 3] = 40.5 if diverged is a else 50.0


def test_a_contrast_does_not_see_a_difference_in_level():
    rng = np.random.default_rng(1)
    a, b = rng.normal(60.0, 2.0, (4, 3)), rng.normal(60.0, 2.0, (4, 3))
    level = nulls.contrast_null(a, b + 30.0)  # B 30 pp better everywhere: no spread sees it
    assert level.p_value == pytest.approx(nulls.contrast_null(a, b).p_value)
    assert level.null_p95 == pytest.approx(nulls.contrast_null(a, b).null_p95)
    # uncentred, the level difference leaks into the null and widens it
    assert nulls.contrast_null(a, b + 30.0, center=False).null_p95 > 1.3 * level.null_p95


def test_a_contrast_of_one_sigma_value_is_a_sign_flip_test():
    a, b = np.array([[100.0, 100.0, 99.8, 100.0, 99.9]]), np.array([[80.0, 85.0, 90.0, 70.0, 95.0]])
    test = nulls.contrast_null(a, b, lambda x, y: x.mean(axis=(-1, -2)) - y.mean(axis=(-1, -2)), center=False)
    assert test.permutations == 32 and test.p_value == pytest.approx(1 / 32)


def test_the_null_formats_itself():
    test = nulls.spread_null(np.array([[70.0, 71.0, 69.5], [40.0, 41.0, 39.0]]))
    text = test.format()
    assert str(test) == text and text.startswith("p = 0.25 (noise alone: mean ") and "8 permutations, exact" in text


def _acc(values, sigmas=(0.1, 2.5)) -> xr.DataArray:
    return xr.DataArray(np.asarray(values, float), dims=("sigma_w", "seed"), coords={"sigma_w": list(sigmas)})


def test_the_cross_fitted_spread_measures_each_seed_where_the_others_point():
    acc = _acc([[60.0, 62.0, 61.0, 40.0], [40.0, 43.0, 38.0, 41.0]])
    # seeds 0-2: the others say 0.1 is best; seed 3 (a reversed seed) is measured where the others point
    assert cross_fitted_spreads(acc).values.tolist() == [20.0, 19.0, 23.0, -1.0]
    three = _acc([[50.0, 51.0, 49.0], [60.0, 59.0, 61.0], [40.0, 39.0, 41.0]], (0.1, 0.9, 2.5))
    assert cross_fitted_spreads(three).values.tolist() == [20.0, 20.0, 20.0]  # best 0.9, worst 2.5


def test_the_cross_fitted_spread_is_unbiased_without_memory():
    rng = np.random.default_rng(7)
    noise = _acc(rng.normal(60.0, 2.5, (4, 5)), (0.1, 0.3, 0.9, 2.5))
    values = [
        float(cross_fitted_spreads(_acc(rng.normal(60.0, 2.5, (4, 5)), (0.1, 0.3, 0.9, 2.5))).mean())
        for _ in range(300)
    ]
    raw = [float(nulls.raw_spread(rng.normal(60.0, 2.5, (4, 5)))) for _ in range(300)]
    assert abs(np.mean(values)) < 0.35  # about 0 (standard error ~0.15)
    assert np.mean(raw) > 2.0  # the raw spread of pure noise: the range of 4 means of sd 2.5 / sqrt(5), about 2.3
    assert noise.dims == ("sigma_w", "seed")


def test_the_cross_fitted_spread_leaves_out_incomplete_seeds_and_keeps_other_dims():
    acc = _acc([[60.0, 62.0, np.nan], [40.0, 43.0, 38.0]])
    assert cross_fitted_spreads(acc).values.tolist()[:2] == [20.0, 19.0]
    assert math.isnan(float(cross_fitted_spreads(acc)[2]))
    assert np.isnan(cross_fitted_spreads(_acc([[60.0], [40.0]])).values).all()  # one seed: nothing to fit on
    stacked = xr.concat([acc.fillna(61.0), acc.fillna(61.0) * 0 + 50.0], dim="optimizer")
    out = cross_fitted_spreads(stacked)
    assert out.dims == ("optimizer", "seed") and out.sel(optimizer=1).values.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="needs the dimensions"):
        cross_fitted_spreads(acc.rename(seed="run"))


def test_an_accuracy_interval_stays_within_0_and_100():
    interval = mean_interval([100.0, 100.0, 83.1], limits=(0.0, 100.0))
    assert interval.high == 100.0 and interval.low > 0 and interval.estimate == pytest.approx(94.3666, abs=1e-3)
    unclipped = mean_interval([100.0, 100.0, 83.1])
    assert unclipped.high > 100.0 and unclipped.low == pytest.approx(interval.low)
    assert mean_interval([1.0, 2.0, 3.0], limits=(1.5, 2.5)).low == 1.5


def test_an_interval_formats_one_seed_without_bounds():
    assert Interval(5.81, math.nan, math.nan, 1).format() == "5.8 pp (1 seed, no interval)"
    assert Interval(5.81, 4.1, 7.52, 3).format() == "5.8 pp [95 % CI 4.1, 7.5; t over 3 seeds]"
    assert (
        Interval(5.81, 4.1, 7.52, 3, "t, cross-fitted").format(" %", 2)
        == "5.81 % [95 % CI 4.10, 7.52; t, cross-fitted over 3 seeds]"
    )
    assert Interval(math.nan, math.nan, math.nan, 0).format() == "n/a"
    assert mean_interval([]).n == 0 and mean_interval([2.0]).format() == "2.0 pp (1 seed, no interval)"


def test_an_interval_writes_the_minus_sign_and_never_a_negative_zero():
    assert Interval(-0.04, -4.44, 3.6, 5).brief() == "0.0 [−4.4, 3.6]"
    assert Interval(-1.1, -8.9, -0.01, 5).format() == "−1.1 pp [95 % CI −8.9, 0.0; t over 5 seeds]"


def test_a_clipped_interval_says_so():
    """An accuracy difference cannot pass ±100 pp: the interval is clipped there, and its text says it was."""
    wide = Interval(61.1, 28.8, 126.4, 3, "calibrated t, cross-fitted")
    clipped = wide.clip()
    assert (clipped.low, clipped.high, clipped.clipped) == (28.8, 100.0, (-100.0, 100.0))
    assert clipped.brief() == "61.1 [28.8, 100.0, clipped]"
    assert clipped.format() == (
        "61.1 pp [95 % CI 28.8, 100.0; calibrated t, cross-fitted over 3 seeds; clipped to what is possible, "
        "[−100, 100]]"
    )
    narrow = Interval(5.0, 1.0, 9.0, 3)
    assert narrow.clip() is narrow and "clipped" not in narrow.format()
    from initmem.study.statistics.calibration import CrossFitted

    assert CrossFitted(2).interval([90.0, 10.0, 95.0]).high <= 100.0  # a cross-fitted spread is clipped to ±100
    assert CrossFitted(2, "contrast").limits == (-200.0, 200.0)  # a difference of two spreads, to ±200


def test_a_rank_correlation_is_nan_only_without_variation():
    # x spans exactly 1 (a range the guard must not mistake for none); a constant x or y has no ranks to correlate
    assert rank_correlation([0.0, 0.5, 1.0], [3.0, 2.0, 1.0]) == -1.0
    assert rank_correlation([0.0, 0.5, 1.0], [1.0, 1.5, 2.0]) == 1.0
    assert not math.isfinite(rank_correlation([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]))
    assert not math.isfinite(rank_correlation([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]))


def test_a_rank_correlation_comes_with_its_permutation_p_and_bootstrap_interval():
    x = list(range(12))
    falling = rank_test(x, [12, 10, 11, 9, 7, 8, 6, 5, 3, 4, 2, 1])
    assert falling.rho == pytest.approx(rank_correlation(x, [12, 10, 11, 9, 7, 8, 6, 5, 3, 4, 2, 1]))
    assert falling.significant() and falling.p_value < 1e-3 and falling.low < falling.rho <= falling.high <= 1.0
    # three configurations: even a perfect rank order has p = 1/6 (exact), so it is not significant
    three = rank_test([1, 2, 3], [3, 2, 1])
    assert three.rho == -1.0 and three.p_value == pytest.approx(1 / 6) and not three.significant()
    assert rank_test([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], alternative="greater").p_value == pytest.approx(1 / 120)
    assert not math.isfinite(rank_test([1, 2], [2, 1]).rho)  # fewer than 3 pairs
    assert "rho = −1.00" in three.format() and "3 configurations" in three.format()
