"""The scale ladder (initmem.study.ladder, chapter 11): spreads and shifts by hand on a synthetic ladder, the rungs
parameter's checks, and the chapter's spec."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr

from initmem.study import ladder, ledger, presets
from initmem.study.calibration import critical
from initmem.study.experiments import e11_scale_ladder
from initmem.study.registry import experiment_spec
from initmem.sweeps.spec import SweepSpec

SEED_NOISE = np.array([1.0, -0.5, -0.5])  # added to each seed's accuracy at sigma_w 0.1: sd 0.866, mean 0


def _ladder(spreads: dict[tuple[str, int, int], float]) -> xr.Dataset:
    """A combined ladder sweep: for each (optimizer, width, train_size) of ``spreads``, accuracy 40 % at sigma_w
    2.5 and 40 + spread + :data:`SEED_NOISE` at 0.1 for seeds 0-2; every other rung NaN."""
    coords = {"width": [8, 16], "train_size": [5000, 20000], "optimizer": ["sgd", "adam"], "sigma_w": [0.1, 2.5]}
    shape = (2, 2, 2, 2, 3)
    acc = np.full(shape, np.nan)
    for (optimizer, width, size), spread in spreads.items():
        i, j, k = coords["width"].index(width), coords["train_size"].index(size), coords["optimizer"].index(optimizer)
        acc[i, j, k, 0] = 40.0 + spread + SEED_NOISE
        acc[i, j, k, 1] = 40.0
    dims = ("width", "train_size", "optimizer", "sigma_w", "seed")
    wall = np.where(np.isfinite(acc), 60.0, np.nan)
    return xr.Dataset(
        {
            "selected_test_acc": (dims, acc),
            "final_train_acc": (dims, np.where(np.isfinite(acc), 100.0, np.nan)),
            "wall_time_s": (dims, wall),
        },
        coords={**coords, "seed": [0, 1, 2]},
    )


def _calibrated(mean: float, sd: float, kind: str) -> tuple[float, float]:
    c = critical(kind, 2, 3)
    low, high = c.low, c.high
    se = sd / math.sqrt(3)
    return mean - low * se, mean + high * se


def test_each_rung_gets_its_calibrated_spread_and_a_paired_shift_read_against_the_paper():
    ds = _ladder({("sgd", 8, 5000): 20.0, ("sgd", 8, 20000): 26.0, ("sgd", 16, 5000): 12.0, ("adam", 8, 5000): 9.0})
    ds["selected_test_acc"].loc[{"optimizer": "adam", "width": 8, "train_size": 20000, "sigma_w": 0.1}] = [
        41.0,
        42.0,
        43.0,
    ]  # adam, rung 2: spreads 1, 2, 3 pp
    ds["selected_test_acc"].loc[{"optimizer": "adam", "width": 8, "train_size": 20000, "sigma_w": 2.5}] = 40.0
    ds["final_train_acc"].loc[{"optimizer": "adam", "width": 8, "train_size": 20000}] = 99.0
    climbed = ladder.rungs(ds)
    assert [(r.optimizer, r.width, r.train_size) for r in climbed] == [
        ("sgd", 8, 5000),
        ("sgd", 8, 20000),
        ("sgd", 16, 5000),
        ("adam", 8, 5000),
        ("adam", 8, 20000),
    ]  # the rung (16, 20000) holds no run: left out; adam has no run at (16, 5000)
    first, up, wide = climbed[:3]
    sd = float(np.std(SEED_NOISE, ddof=1))
    assert (first.spread.estimate, first.spread.low, first.spread.high) == pytest.approx(
        (20.0, *_calibrated(20.0, sd, "spread"))
    )
    assert first.moves == "" and not first.shift.has_bounds  # the reference
    # every seed moves by exactly +6 (sgd: the seed noise is the same on every rung): a zero-width shift, towards 26.5
    assert (up.shift.estimate, up.shift.low, up.shift.high) == pytest.approx((6.0, 6.0, 6.0))
    assert up.moves == ladder.TOWARDS and up.in_band  # 26 [25.2, 28.3]-ish lies inside 26.5 +- 7.95
    assert wide.shift.estimate == pytest.approx(-8.0) and wide.moves == ladder.AWAY and not wide.in_band
    adam_first, adam_up = climbed[3:]
    assert adam_up.spread.estimate == pytest.approx(2.0)
    shifts = np.array([1.0, 2.0, 3.0]) - (9.0 + SEED_NOISE)  # -9, -6.5, -5.5: towards the paper's 0
    low, high = _calibrated(float(shifts.mean()), float(shifts.std(ddof=1)), "contrast")
    assert (adam_up.shift.low, adam_up.shift.high) == pytest.approx((low, high))
    # three seeds' contrast has a critical value of 7.08: a mean shift of -7 pp (se 1.04) still reaches above 0
    assert low < 0 < high and adam_up.moves == ladder.UNTOLD
    assert adam_up.spread.high > 5.0 and not adam_up.in_band  # 2 pp, but its interval reaches 7.6: not inside +-5
    assert first.runs == 6 and first.core_seconds == pytest.approx(360.0) and first.train_acc == pytest.approx(100.0)


def test_a_shift_whose_interval_straddles_zero_is_untold():
    ds = _ladder({("sgd", 8, 5000): 20.0, ("sgd", 8, 20000): 20.0})
    ds["selected_test_acc"].loc[{"optimizer": "sgd", "width": 8, "train_size": 20000, "sigma_w": 0.1}] = [
        62.0,
        58.0,
        61.0,
    ]  # shifts +1, -1.5, +1.5 against 61, 59.5, 59.5
    up = ladder.rungs(ds)[1]
    assert up.shift.low < 0 < up.shift.high and up.moves == ladder.UNTOLD


def test_the_targets_are_the_ledgers_numbers_and_bands():
    assert ladder.target("sgd") == (ledger.PAPER["C1"]["values"][""], ledger.band("C1"))
    assert ladder.target("adam") == (0.0, (-5.0, 5.0))


@pytest.mark.parametrize(
    "value",
    [[], [[8]], [[8, 0]], [[8, 5000.0]], [[8, 5000], [8, 5000]], "8x5000", [[True, 5000]]],
)
def test_rungs_must_be_distinct_pairs_of_positive_integers(value):
    with pytest.raises(ValueError, match=r"^rungs: must be a non-empty list of distinct \[width, train_size\] pairs"):
        e11_scale_ladder.rungs_of(value)


def test_the_cpu_ladder_climbs_from_01s_record_with_01s_sgd_and_adam():
    p = presets.notebook_parameters("cpu", "11_scale_ladder")
    spec = SweepSpec.from_dict(experiment_spec("11_scale_ladder", p))
    configs = [c for _, c in spec.configs()]
    assert len(configs) == 3 * 2 * 2 * 3 and {(c.width, c.train_size) for c in configs} == {
        (8, 5000),
        (8, 20000),
        (16, 5000),
    }
    record = {
        c.hash()
        for _, c in SweepSpec.from_dict(
            experiment_spec("01_optimizers", presets.notebook_parameters("cpu", "01_optimizers"))
        ).configs()
    }
    first = [c for c in configs if (c.width, c.train_size) == (8, 5000)]
    assert len(first) == 12 and {c.hash() for c in first} <= record  # the first rung is 01's record
    assert {(c.optimizer, c.lr) for c in configs} == {("sgd", 0.02), ("adam", 0.008)} and not any(
        c.bf16 for c in configs
    )
