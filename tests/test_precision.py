"""The bf16 parity study's declared design and rule (initmem.study.verdicts.precision), on tiny synthetic datasets."""

import numpy as np
import pytest
import xarray as xr

from initmem.study.statistics.stats import Interval
from initmem.study.verdicts import precision


def _combined(acc: dict[str, np.ndarray], wall: float = 100.0, sigma_ws=(0.1, 2.5)) -> xr.Dataset:
    """A combined sweep: ``acc[optimizer]`` is a (sigma_w, seed) array of selected test accuracies (%)."""
    optimizers = list(acc)
    values = np.stack([acc[o] for o in optimizers])
    dims = ("optimizer", "sigma_w", "seed")
    coords = {"optimizer": optimizers, "sigma_w": list(sigma_ws), "seed": np.arange(values.shape[-1])}
    return xr.Dataset(
        {
            "selected_test_acc": (dims, values),
            "wall_time_s": (dims, np.full(values.shape, wall)),
        },
        coords=coords,
    )


def test_the_spec_is_01s_cut_to_the_design_with_bf16_on():
    spec = {
        "base": {"epochs": 40, "width": 8},
        "grid": {"sigma_w": [0.1, 0.3, 0.9, 2.5], "seed": [0, 1, 2, 3, 4]},
        "zip": {"optimizer": ["sgd", "sgd_momentum", "adam"], "lr": [0.02, 0.002, 0.008]},
    }
    out = precision.parity_spec(spec)
    assert out["base"] == {"epochs": 40, "width": 8, "bf16": True}
    assert out["grid"] == {"sigma_w": [0.1, 2.5], "seed": [0, 1, 2, 3, 4]}
    assert out["zip"] == {"optimizer": ["sgd", "adam"], "lr": [0.02, 0.008]}
    assert spec["base"] == {"epochs": 40, "width": 8}  # the input is left as it was
    with pytest.raises(ValueError, match="adam"):
        precision.parity_spec({"base": {}, "grid": {"sigma_w": [0.1, 2.5]}, "zip": {"optimizer": ["sgd"]}})


def test_the_replay_is_the_designs_first_sigma_w_and_seed_in_fp32():
    parity = precision.parity_spec(
        {
            "base": {"epochs": 40},
            "grid": {"sigma_w": [0.1, 2.5], "seed": [0, 1, 2, 3, 4]},
            "zip": {"optimizer": ["sgd", "adam"], "lr": [0.02, 0.008]},
        }
    )
    replay = precision.replay_spec(parity)
    assert replay["base"] == {"epochs": 40, "bf16": False} and parity["base"]["bf16"] is True
    assert replay["grid"] == {"sigma_w": [0.1], "seed": [0]} and replay["zip"] == parity["zip"]


def test_the_speedup_matches_the_runs_both_hold():
    """A replay of one sigma_w and one seed against the whole design: only the matched pairs count (3 / 2 and
    5 / 2 for the two optimizers, median 2), not the design's other runs."""
    bf16 = _combined({"sgd": np.zeros((2, 3)), "adam": np.zeros((2, 3))}, wall=2.0)
    replay = _combined({"sgd": np.zeros((1, 1)), "adam": np.zeros((1, 1))}, sigma_ws=(0.1,))
    replay["wall_time_s"].loc[{"optimizer": "sgd"}] = 3.0
    replay["wall_time_s"].loc[{"optimizer": "adam"}] = 5.0
    assert precision.speedup(replay, bf16) == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [
        (-4.9, 4.9, precision.EQUIVALENT),
        (-5.0, 1.0, precision.INCONCLUSIVE),  # touching the margin is not inside it
        (3.0, 7.0, precision.INCONCLUSIVE),
        (5.0, 9.0, precision.NOT_EQUIVALENT),
        (-12.0, -5.0, precision.NOT_EQUIVALENT),
        (float("nan"), float("nan"), precision.INCONCLUSIVE),
    ],
)
def test_the_declared_rule_at_its_edges(low, high, verdict):
    assert precision.parity_verdict(Interval(0.0, low, high, 5)) == verdict


def test_rows_pair_seeds_and_cut_the_record_to_the_design():
    rng = np.random.default_rng(0)
    base = np.array([[60.0] * 5, [40.0] * 5]) + rng.normal(0, 0.5, (2, 5))
    # The fp32 record has four sigma_w; the middle two must be ignored.
    middle = np.full((2, 5), 99.0)
    fp32 = _combined(
        {"sgd": np.concatenate([base[:1], middle, base[1:]]), "adam": np.concatenate([base[:1], middle, base[1:]])},
        wall=150.0,
        sigma_ws=(0.1, 0.3, 0.9, 2.5),
    )
    shifted = base + np.array([[0.0], [-6.0]])  # bf16 loses 6 more points at sigma_w 2.5: spread +6 pp every seed
    bf16 = _combined({"sgd": base, "adam": shifted}, wall=100.0)
    rows = {row["optimizer"]: row for row in precision.parity_rows(fp32, bf16)}
    assert rows["sgd"]["difference"].estimate == pytest.approx(0.0, abs=1e-12)
    assert rows["sgd"]["verdict"] == precision.EQUIVALENT  # the same runs: a zero-width interval at 0
    assert rows["adam"]["difference"].estimate == pytest.approx(6.0)
    assert rows["adam"]["verdict"] == precision.NOT_EQUIVALENT
    # Two sigma_w: each seed's cross-fitted spread is its own accuracy at 0.1 minus at 2.5 (the others rank 0.1 best).
    assert rows["adam"]["fp32"].estimate == pytest.approx(float(np.mean(base[0] - base[1])))
    assert rows["adam"]["bf16"].estimate == pytest.approx(float(np.mean(base[0] - base[1])) + 6.0)
    assert precision.speedup(fp32, bf16) == pytest.approx(1.5)


def test_the_record_against_itself_is_in_parity_and_a_shifted_copy_is_not():
    from pathlib import Path

    from initmem.sweeps.store import read_checked

    record = read_checked(Path(__file__).parents[1] / "results" / "cpu" / "01_optimizers.nc")
    claims = precision.parity_claims(record, record)
    assert [c["row"] for c in claims][:2] == ["C1", "C2 Adam"]
    assert all(c["fp32"] == c["bf16"] != "" for c in claims)
    assert [c["decidable"] for c in claims[:2]] == [False, True]  # C1's null cannot reach p < 0.05 on the design
    rows = precision.parity_rows(record, record)
    assert precision.parity_outcome(rows, claims)[0] == precision.IN_PARITY
    shifted = record.copy(deep=True)
    at = {"optimizer": "adam", "sigma_w": 2.5}
    shifted["selected_test_acc"].loc[at] = shifted["selected_test_acc"].loc[at] - 6.0
    rows = {row["optimizer"]: row for row in precision.parity_rows(record, shifted)}
    assert rows["adam"]["difference"].estimate == pytest.approx(6.0)
    assert rows["adam"]["verdict"] == precision.NOT_EQUIVALENT
    verdict, why = precision.parity_outcome(list(rows.values()), claims)
    assert verdict == precision.NOT_IN_PARITY and "adam's difference" in why and "wholly outside ±5 pp" in why


def _row(optimizer: str, verdict: str, low: float = -1.0, high: float = 1.0) -> dict:
    return {"optimizer": optimizer, "difference": Interval(0.0, low, high, 5), "verdict": verdict}


def _claim(row: str, fp32: str, bf16: str, decidable: bool) -> dict:
    return {
        "row": row,
        "fp32": fp32,
        "bf16": bf16,
        "smallest_p": 0.001 if decidable else 0.0625,
        "decidable": decidable,
    }


def test_an_undecided_part_leaves_parity_not_established_and_only_decidable_claims_count():
    """An inconclusive difference is no difference: "parity not established", not "not in parity"; a claim the design
    cannot decide (C1: smallest p 0.0625) is left out of the rule whatever its verdicts; one it can decide (C2 Adam)
    that changes its verdict leaves parity not established."""
    equivalent = [_row("sgd", precision.EQUIVALENT), _row("adam", precision.EQUIVALENT)]
    c1_moved = [_claim("C1", "inconclusive", "premise not met", False), _claim("C2 Adam", "x", "x", True)]
    assert precision.parity_outcome(equivalent, c1_moved)[0] == precision.IN_PARITY
    verdict, why = precision.parity_outcome([equivalent[0], _row("adam", precision.INCONCLUSIVE, -2.1, 11.0)], c1_moved)
    assert verdict == precision.NOT_ESTABLISHED and "adam's difference 0.0 [−2.1, 11.0] pp reaches past ±5 pp" in why
    c2_moved = [_claim("C2 Adam", "reproduced in direction", "premise not met", True)]
    verdict, why = precision.parity_outcome(equivalent, c2_moved)
    assert verdict == precision.NOT_ESTABLISHED
    assert why == "C2 Adam is reproduced in direction in fp32 and premise not met in bf16"
    frame = precision.claims_frame(c1_moved)
    assert list(frame["in the rule"]) == ["no: p cannot reach below 0.05", "yes"]


def test_the_smallest_p_of_each_claim_on_the_design():
    """C1's spread null: two sigma_w labels permuted within five seeds, 2 of 2^5 relabellings reach the largest
    spread; C2's contrast null: 2^10 sign flips over ten cells."""
    assert precision.smallest_p("C1", 5) == pytest.approx(2 / 2**5)
    assert precision.smallest_p("C2", 5) == pytest.approx(2.0**-10)


def test_bf16_on_a_cpu_without_native_bf16_says_it_will_be_slower(monkeypatch, caplog):
    import logging

    import torch

    from initmem.run import loop
    from initmem.run.config import RunConfig

    config = RunConfig(
        data="synthetic", width=4, image_size=8, train_size=16, val_size=8, test_size=8, batch_size=8, bf16=True
    )
    for native, expected in ((False, 1), (True, 0)):
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda native=native: native, raising=False)
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="initmem.run.loop"):
            setup = loop.setup_run(config)
        assert setup.dtype is torch.bfloat16
        assert sum("no native bfloat16" in r.getMessage() for r in caplog.records) == expected
