"""The paper's measurements, checked against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import xarray as xr

from initmem.run.metrics import (
    ForgettingClocks,
    best_index,
    clocks_from_lrs,
    distance_from_init,
    frobenius_norms,
    repair_gap,
    tau_interp,
    total_norm,
)
from initmem.study.statistics.stats import spread


def test_clocks_by_hand():
    # three steps at lr 0.1, 0.2, 0.3 with b = 4, lambda = 0.5
    clocks = ForgettingClocks(batch_size=4, weight_decay=0.5)
    for lr in (0.1, 0.2, 0.3):
        clocks.tick(lr)
    assert clocks.T_SGD == pytest.approx((0.01 + 0.04 + 0.09) / 4)
    assert clocks.T_L2 == pytest.approx(0.5 * 0.6)
    assert clocks.T_adapt == pytest.approx(0.6)
    assert clocks.as_dict() == pytest.approx(clocks_from_lrs(np.array([0.1, 0.2, 0.3]), 4, 0.5))


def test_clock_of_a_constant_lr_run():
    # 30 epochs x 39 steps at lr 0.01, b = 128: T_SGD = 1170 * 1e-4 / 128
    assert clocks_from_lrs(np.full(1170, 0.01), 128, 0.0)["T_SGD"] == pytest.approx(1170e-4 / 128)


def test_norms_and_distance():
    kernels = {"a": torch.tensor([[3.0, 4.0]]), "b": torch.tensor([12.0])}
    norms = frobenius_norms(kernels)
    assert norms == {"a": 5.0, "b": 12.0}
    assert total_norm(norms) == 13.0
    initial = {"a": torch.tensor([[3.0, 0.0]]), "b": torch.tensor([9.0])}
    assert distance_from_init(kernels, initial) == 5.0


def test_tau_interp_and_repair_gap():
    epochs = np.array([0, 1, 2, 3, 4])
    train_acc = np.array([10.0, 90.0, 99.5, 100.0, 100.0])
    val_acc = np.array([10.0, 50.0, 55.0, 57.0, 58.5])
    assert tau_interp(epochs, train_acc) == 2.0
    assert repair_gap(epochs, val_acc, 2.0) == pytest.approx(3.5)
    assert math.isnan(tau_interp(epochs, np.full(5, 99.4)))
    assert math.isnan(repair_gap(epochs, val_acc, math.nan))
    # after a divergence the last finite epoch counts
    assert repair_gap(epochs, np.array([10.0, 50.0, 55.0, 60.0, np.nan]), 2.0) == pytest.approx(5.0)


def test_best_index_ignores_nan_and_takes_earliest_tie():
    assert best_index(np.array([2.0, np.nan, 1.0, 1.0, 3.0])) == 2
    assert best_index(np.array([np.nan, np.nan])) == -1


def test_spread_over_sigma_keeps_other_dims():
    values = xr.DataArray(
        [[60.0, 50.0, 40.0], [55.0, 54.0, np.nan]],
        dims=("optimizer", "sigma_w"),
        coords={"optimizer": ["sgd", "adam"], "sigma_w": [0.25, 1.0, 2.5]},
    )
    result = spread(values)
    assert result.sel(optimizer="sgd").item() == 20.0
    assert result.sel(optimizer="adam").item() == 1.0
    with pytest.raises(ValueError, match="over:"):
        spread(values, over="batch_size")
