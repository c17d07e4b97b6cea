"""Seed statistics (initmem.study.statistics.stats) on arrays small enough to check by hand: the t-interval from two seeds,
and the spread of a Dataset that leaves a diverged run out."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from initmem.study.statistics.stats import diverged_runs, mean_interval, seed_spreads, spread


def test_two_seeds_give_a_t_interval_with_one_degree_of_freedom():
    # mean 2, sd sqrt(2), half-width t(0.975, 1) sqrt(2) / sqrt(2) = 12.706
    interval = mean_interval([1.0, 3.0, np.nan])  # a diverged seed (NaN) is left out
    assert interval.n == 2 and interval.estimate == 2.0
    assert (interval.low, interval.high) == pytest.approx((2.0 - 12.7062047, 2.0 + 12.7062047))
    clipped = mean_interval([95.0, 99.0], limits=(0.0, 100.0))  # 97 +- 25.4: an accuracy stays within 0-100 %
    assert (clipped.low, clipped.high) == pytest.approx((97.0 - 2 * 12.7062047, 100.0))


def test_the_spread_of_a_dataset_leaves_a_diverged_run_out_and_of_an_array_does_not():
    acc = xr.DataArray([[60.0, 62.0], [40.0, 90.0]], dims=("sigma_w", "seed"), coords={"sigma_w": [0.1, 2.5]})
    ds = xr.Dataset({"selected_test_acc": acc, "diverged": xr.DataArray([[0, 0], [0, 1]], dims=("sigma_w", "seed"))})
    assert spread(ds).values.tolist() == [20.0, 0.0]  # seed 1 keeps one sigma_w: max - min of one value
    assert spread(ds["selected_test_acc"]).values.tolist() == [20.0, 28.0]


def test_a_seeds_spread_is_nan_where_a_sigma_value_is_missing():
    acc = xr.DataArray([[60.0, 62.0, 61.0], [40.0, np.nan, 45.0]], dims=("sigma_w", "seed"))
    assert np.array_equal(seed_spreads(acc).values, [20.0, np.nan, 16.0], equal_nan=True)
    with pytest.raises(ValueError, match="over: 'lr' is not a dimension"):
        seed_spreads(acc, "lr")


def test_a_loss_that_grows_a_million_fold_at_one_epoch_is_a_diverged_run():
    """Files written before the trainer flagged divergence: a run whose loss passes DIVERGENCE_FACTOR (1e6) times
    its epoch-0 value at any one epoch diverged; a NaN epoch (not recorded) never counts."""
    loss = xr.DataArray([[2.5, 2.0, 1.0, np.nan], [2.5, 3e6, 1.0, 0.5], [2.5, 2.5e6, 1.0, 0.5]], dims=("seed", "epoch"))
    ds = xr.Dataset({"train_loss": loss, "selected_test_acc": xr.DataArray([60.0, 61.0, 62.0], dims="seed")})
    assert diverged_runs(ds).values.tolist() == [False, True, False]  # 3e6 > 1e6 x 2.5; 2.5e6 is not above it
