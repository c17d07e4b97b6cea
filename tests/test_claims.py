"""The claims ledger: every claim's rows, effects, nulls and verdicts on fake results (no training)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from initmem.study.statistics.calibration import critical
from initmem.study.verdicts import claims, ledger, ledger_text, rules
from initmem.study.verdicts.rules import (
    IN_DIRECTION,
    IN_SIZE,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PREMISE_NOT_MET,
    SIZE_CONTRADICTED,
)
from sweep_fakes import fake_sweep, ledger_results  # tests/ is on sys.path under pytest

SEEDS = [0, 1, 2, 3, 4]


@pytest.fixture(autouse=True)
def quick_nulls(monkeypatch):
    """Smaller permutation nulls (their exact and drawn forms are tested in test_nulls.py): 1,000 draws, exact up to
    2,000 permutations; every p-value this file asserts is far from where that resolution matters."""
    from initmem.study.statistics import nulls

    monkeypatch.setattr(nulls, "N_RESAMPLES", 1_000)
    monkeypatch.setattr(nulls, "MAX_EXACT", 2_000)
    monkeypatch.setattr(nulls, "MAX_EXACT_SWAPS", 1_024)


JITTER = np.array([0.0, 0.6, -0.5, 0.3, -0.4])  # the seeds' small disagreement (pp), mean 0


def memory(
    ds: xr.Dataset,
    where: dict,
    spread: float,
    var: str = "selected_test_acc",
    base: float = 60.0,
    jitter: np.ndarray = JITTER,
) -> None:
    """Set ``var`` at ``where`` so that each seed falls by ``spread + jitter[seed]`` pp from the smallest to the
    largest sigma_w (linearly in the sigma_w index)."""
    sigmas = ds["sigma_w"].values
    steps = xr.DataArray(np.linspace(0.0, 1.0, len(sigmas)), dims="sigma_w", coords={"sigma_w": sigmas})
    per_seed = xr.DataArray(spread + jitter[: ds.sizes["seed"]], dims="seed", coords={"seed": ds["seed"].values})
    ds[var].loc[where] = (base - steps * per_seed).transpose(*ds[var].loc[where].dims)


@pytest.fixture()
def results() -> dict[str, xr.Dataset]:
    """Results of 01-05 in which each claim holds clearly and in the paper's size (5 seeds)."""
    out = ledger_results(SEEDS)
    opt = out["01_optimizers"]
    memory(opt, {"optimizer": "sgd"}, 26.0)
    memory(opt, {"optimizer": "adam"}, 0.5)
    memory(opt, {"optimizer": "adamw"}, 1.0)
    memory(opt, {"optimizer": "muon"}, 4.0)
    lr = out["03_lr_and_l2"]
    memory(lr, {"lr": 0.02, "weight_decay": 0.0}, 20.0)
    memory(lr, {"lr": 0.1, "weight_decay": 0.0}, 1.0)
    memory(lr, {"lr": 0.02, "weight_decay": 0.01}, 0.5)
    memory(lr, {"lr": 0.1, "weight_decay": 0.01}, 0.0)
    # the L2 cells' clock covers what the start has to lose (T_L2 2.5 > ln(|W0|/|W*|) 1.9): C4's premise holds
    lr["final_T_L2"] = (lr["weight_decay"] * 250.0).broadcast_like(lr["final_T_L2"]).transpose(*lr["final_T_L2"].dims)
    return out


def test_the_ledger_has_a_row_per_claim_and_part(results):
    table = claims.reproduction_table(results)
    assert list(table.index) == [
        "C1",
        "C2 Adam",
        "C2 AdamW",
        "C2 Muon",
        "C3 final predictor",
        "C3 selected predictor",
        "C4 larger lr",
        "C4 L2",
        "C4 both",
        "C5 equal steps",
        "C5 equal epochs",
        "C6",
        "C7",
        "B1",
    ]
    assert set(table["verdict"]) <= set(rules.VERDICTS)
    assert table.loc["B1", "verdict"] == INCONCLUSIVE and "no results of 10_phase_diagram" in table.loc["B1", "reason"]
    assert (table["seeds"].drop(["B1", "C5 equal epochs"]) > 0).all()  # the fake 04 has no two equal epochs


def test_c1_in_size_when_the_whole_interval_lies_in_the_band(results):
    row = claims.reproduction_table(results, ["C1"]).loc["C1"]
    assert (row["band_low"], row["band_high"]) == (18.55, 34.45) and row["paper_value"] == 26.5
    # each seed's cross-fitted spread is 26 + JITTER (every seed ranks the sigma_w alike): the calibrated interval
    c, se = critical("spread", results["01_optimizers"].sizes["sigma_w"], 5), JITTER.std(ddof=1) / np.sqrt(5)
    assert row["effect"] == pytest.approx(26.0, abs=0.01)
    assert (row["effect_low"], row["effect_high"]) == pytest.approx((26.0 - c.low * se, 26.0 + c.high * se))
    assert 25.0 < row["effect_low"] < 26.0 < 27.0 < row["effect_high"] < 28.0  # wider above than below
    assert row["verdict"] == IN_SIZE and row["p_value"] < 0.05 and row["seeds"] == 5
    assert row["raw"] == pytest.approx(26.0) and row["null_mean"] < row["null_p95"] < row["raw"]
    assert "cross-fitted" in row["ours"] and "raw 26.0 pp" in row["ours"] and "final:" in row["ours"]
    assert "T_SGD" in row["clocks"] and row["experiment"] == "01_optimizers"


@pytest.mark.parametrize(
    ("spread", "verdict", "reason"),
    [
        (17.0, SIZE_CONTRADICTED, "smaller than the paper's 26.5 by 9.5"),
        (35.5, SIZE_CONTRADICTED, "larger than the paper's 26.5 by 9.0"),
        (18.55, IN_DIRECTION, "straddles an edge of the band [18.55, 34.45]"),
        (2.0, NOT_REPRODUCED, "null-equivalence"),
    ],
)
def test_c1_outside_the_band_is_contradicted_on_its_edge_in_direction_and_small_not_reproduced(
    results, spread, verdict, reason
):
    memory(results["01_optimizers"], {"optimizer": "sgd"}, spread)
    row = claims.reproduction_table(results, ["C1"]).loc["C1"]
    assert row["verdict"] == verdict and reason in row["reason"], row["reason"]


def test_c1_checks_interpolation_on_the_predictor_it_judges(results):
    """The selected predictor (spread 26 pp) carries C1 while its checkpoints interpolate, whatever the final runs
    do; once one selected checkpoint sits at 99.4 % the final predictor (spread 12 pp, every run at 100 %) carries
    it: 12 + JITTER, mean 12.0, lies wholly below the band [18.55, 34.45]; when neither interpolates, premise not
    met."""
    opt = results["01_optimizers"]
    memory(opt, {"optimizer": "sgd"}, 12.0, var="final_test_acc")
    opt["final_train_acc"].loc[{"optimizer": "sgd", "sigma_w": 2.5, "seed": 3}] = 99.4
    row = claims.reproduction_table(results, ["C1"]).loc["C1"]
    assert (
        row["verdict"] == IN_SIZE and row["effect"] == pytest.approx(26.0, abs=0.01) and row["predictor"] == "selected"
    )
    assert row["reason"].startswith("the validation-selected predictor (the paper's metric) meets the premise")
    assert "the final predictor alone: premise not met" in row["reason"] and "lowest 99.4 %" in row["reason"]
    opt["final_train_acc"].loc[{"optimizer": "sgd", "sigma_w": 2.5, "seed": 3}] = 99.5  # 99.5 % is interpolation
    opt["selected_train_acc"].loc[{"optimizer": "sgd", "sigma_w": 1.0, "seed": 2}] = 99.4
    row = claims.reproduction_table(results, ["C1"]).loc["C1"]
    assert row["verdict"] == SIZE_CONTRADICTED and row["effect"] == pytest.approx(12.0, abs=0.01)
    assert row["predictor"] == "final" and "(its final predictor; paper: 26.5 pp)" in ledger_text.answer(
        claims.reproduction_table(results, ["C1"]), "test"
    )
    assert row["reason"].startswith("the validation-selected predictor does not meet the premise; the final one")
    assert "smaller than the paper's 26.5 by 14.5" in row["reason"]
    assert "the selected predictor alone: premise not met" in row["reason"]
    assert "validation-selected checkpoints do not all interpolate" in row["reason"]
    assert "SGD in 1 of 15 runs (lowest 99.4 %)" in row["reason"]
    opt["final_train_acc"].loc[{"optimizer": "sgd", "sigma_w": 2.5, "seed": 3}] = 99.0
    row = claims.reproduction_table(results, ["C1"]).loc["C1"]
    assert row["verdict"] == PREMISE_NOT_MET and row["reason"].startswith("neither predictor meets the premise")
    assert "final predictors do not all interpolate" in row["reason"] and pd.isna(row["seeds_needed"])
    # one seed: no interval, so inconclusive, but which predictor carries still follows the premise
    one = claims.reproduction_table({"01_optimizers": opt.isel(seed=[2])}, ["C1"]).loc["C1"]
    assert one["verdict"] == INCONCLUSIVE and one["reason"].startswith(
        "the validation-selected predictor does not meet"
    )


def test_an_inconclusive_claim_says_how_many_seeds_would_decide_it(results):
    memory(results["01_optimizers"], {"optimizer": "sgd"}, 6.0, jitter=np.array([0.0, 9.0, -9.0, 6.0, -6.0]))
    row = claims.reproduction_table(results, ["C1"]).loc["C1"]
    assert row["verdict"] == INCONCLUSIVE and row["seeds_needed"] == 9
    box = ledger_text.verdict_box(claims.reproduction_table(results, ["C1"]), "C1")
    assert f"About {row['seeds_needed']} seeds would decide it" in box


def test_c2_judges_each_adaptive_optimizer_against_its_own_band(results):
    table = claims.reproduction_table(results, ["C2"])
    assert (table.loc["C2 Muon", "band_low"], table.loc["C2 Muon", "band_high"]) == (-1.0, 9.0)
    assert (table.loc["C2 Adam", "band_low"], table.loc["C2 Adam", "band_high"]) == (-5.0, 5.0)
    for part, size in (("Adam", 0.5), ("AdamW", 1.0), ("Muon", 4.0)):
        row = table.loc[f"C2 {part}"]
        assert row["verdict"] == IN_SIZE, (part, row["reason"])
        assert row["effect"] == pytest.approx(26.0 - size, abs=0.01) and row["size"] == pytest.approx(size, abs=0.01)
        assert row["p_value"] < 0.05
        effect = f"{row['effect']:.1f} pp [95 % CI {row['effect_low']:.1f}, {row['effect_high']:.1f}"
        assert f"SGD minus {part} (selected): {effect}" in row["ours"], row["ours"]  # the interval the verdict judged


def test_c2_checks_interpolation_on_the_predictor_it_judges_and_names_the_runs_that_do_not(results):
    """Muon's selected checkpoints at 90 % (one run): the final predictors carry its row (SGD minus Muon, final: 26 -
    10 = 16 pp); two final Muon runs at 98 %: neither predictor interpolates, premise not met, and the note names
    them. Adam's row, whose runs all interpolate, keeps the selected predictor and no note."""
    opt = results["01_optimizers"]
    memory(opt, {"optimizer": "sgd"}, 26.0, var="final_test_acc")
    memory(opt, {"optimizer": "muon"}, 10.0, var="final_test_acc")
    opt["selected_train_acc"].loc[{"optimizer": "muon", "sigma_w": 0.25, "seed": 0}] = 90.0
    row = claims.reproduction_table(results, ["C2"]).loc["C2 Muon"]
    assert row["effect"] == pytest.approx(16.0, abs=0.01) and row["size"] == pytest.approx(10.0, abs=0.01)
    assert row["reason"].startswith("the validation-selected predictor does not meet the premise; the final one")
    assert "Muon in 1 of 15 runs (lowest 90.0 %)" in row["reason"] and "SGD minus Muon (final)" in row["ours"]
    assert row["verdict"] == SIZE_CONTRADICTED and row["note"] == ""  # 10 pp against about 4 (band [-1, 9])
    opt["final_train_acc"].loc[{"optimizer": "muon", "sigma_w": 2.5, "seed": [1, 4]}] = 98.0
    table = claims.reproduction_table(results, ["C2"])
    row = table.loc["C2 Muon"]
    assert row["verdict"] == PREMISE_NOT_MET and row["reason"].startswith("neither predictor meets the premise")
    assert "Muon in 2 of 15 runs (lowest 98.0 %)" in row["reason"]
    assert row["note"] == (
        "Muon's runs that end below 99.5 % train accuracy: sigma_w 2.5 seed 1 (98.0 %), sigma_w 2.5 seed 4 (98.0 %)"
    )
    adam = table.loc["C2 Adam"]
    assert adam["verdict"] == IN_SIZE and adam["note"] == "" and "SGD minus Adam (selected)" in adam["ours"]


def test_c2_an_optimizer_that_remembers_like_sgd_is_not_reproduced_and_a_partial_one_contradicts_the_size(results):
    memory(results["01_optimizers"], {"optimizer": "adamw"}, 25.0)
    memory(results["01_optimizers"], {"optimizer": "adam"}, 9.0)
    memory(results["01_optimizers"], {"optimizer": "muon"}, 9.0)
    table = claims.reproduction_table(results, ["C2"])
    assert table.loc["C2 AdamW", "verdict"] == NOT_REPRODUCED and "null-equivalence" in table.loc["C2 AdamW", "reason"]
    adam = table.loc["C2 Adam"]  # keeps 9 pp against "minimal": the direction holds, the size is not the paper's
    assert adam["verdict"] == SIZE_CONTRADICTED and "larger than the paper's 0 by 9.0" in adam["reason"]
    muon = table.loc["C2 Muon"]  # 9 pp against "about 4" (band [-1, 9]): on the band's edge, undecided
    assert muon["verdict"] == IN_DIRECTION and "straddles an edge of the band [-1, 9]" in muon["reason"]


def test_c2_is_inconclusive_when_the_seeds_disagree(results):
    memory(results["01_optimizers"], {"optimizer": "muon"}, 12.0, jitter=np.array([14.0, -14.0, 12.0, -12.0, 0.0]))
    row = claims.reproduction_table(results, ["C2"]).loc["C2 Muon"]
    assert row["effect_low"] < 0 < row["effect_high"] and row["verdict"] == INCONCLUSIVE


def test_an_inconclusive_c2_row_says_how_many_seeds_would_decide_it(results):
    # SGD minus Muon per seed: 6 + JITTER - [0, 9, -9, 6, -6] = [6, -2.4, 14.5, 0.3, 11.6], mean 6.0, sd 7.19. The
    # printed interval is the calibrated contrast's, 6 +- c 7.19 / sqrt(5). The permutation floor over 4 sigma_w x n
    # seeds (1 / 2^(4n)) is far below 0.05 for every n, so the projection's t-interval decides: its low end
    # 6 - t_{n-1} 7.19 / sqrt(n) is -0.01 at n = 8 (t_7 = 2.365) and +0.47 at n = 9 (t_8 = 2.306).
    memory(results["01_optimizers"], {"optimizer": "muon"}, 20.0, jitter=np.array([0.0, 9.0, -9.0, 6.0, -6.0]))
    row = claims.reproduction_table(results, ["C2"]).loc["C2 Muon"]
    half = critical("contrast", results["01_optimizers"].sizes["sigma_w"], 5).low * 7.19 / np.sqrt(5)
    assert (row["effect_low"], row["effect_high"]) == pytest.approx((6.0 - half, 6.0 + half), abs=0.05)
    assert row["verdict"] == INCONCLUSIVE and row["seeds_needed"] == 9


def test_c3_the_final_predictor_carries_the_claim_when_selection_does_not_move(results):
    long = results["02_long_training"]
    long["val_loss"] = long["val_loss"] * 0 + 3.0 + (long["epoch"] - 2) ** 2  # the best checkpoint is epoch 2
    table = claims.reproduction_table(results, ["C3"])
    selected = table.loc["C3 selected predictor"]
    assert selected["verdict"] == PREMISE_NOT_MET
    assert selected["reason"].startswith("premise not met: validation selects the same checkpoints")
    assert "the latest at epoch 2" in selected["reason"]
    final = table.loc["C3 final predictor"]
    assert final["verdict"] == IN_DIRECTION and final["effect_low"] > -5.0
    # the final spread collapses between the horizons: not reproduced
    long["test_acc"].loc[{"epoch": 10}] = 60.0
    assert claims.reproduction_table(results, ["C3"]).loc["C3 final predictor", "verdict"] == NOT_REPRODUCED


def test_c3_the_selected_predictor_is_judged_when_selection_moves_in_some_runs_only(results):
    long = results["02_long_training"]
    stays = 3.0 + (long["epoch"] - 2) ** 2  # seed 0 keeps its epoch-2 checkpoint; the other seeds move
    long["val_loss"] = xr.where(long["seed"] == 0, stays, long["val_loss"]).transpose(*long["val_loss"].dims)
    row = claims.reproduction_table(results, ["C3"]).loc["C3 selected predictor"]
    assert row["verdict"] != PREMISE_NOT_MET and "validation selects the same checkpoints" not in row["reason"]


def test_c3_the_selected_predictor_is_judged_when_selection_moves(results):
    row = claims.reproduction_table(results, ["C3"]).loc[
        "C3 selected predictor"
    ]  # the best epoch is each horizon's last
    assert row["verdict"] == IN_DIRECTION and "2 epochs" in row["ours"] and "at 10" in row["ours"]


def test_c3_needs_memory_and_interpolation_at_the_reference(results):
    long = results["02_long_training"]
    long["train_acc"].loc[{"epoch": 2, "sigma_w": 2.5}] = 90.0
    assert (
        "premise not met: the final predictors do not all interpolate (train accuracy below 99.5 %): at the reference "
        "horizon (2 epochs) in 5 of 15 runs (lowest 90.0 %)"
        == claims.reproduction_table(results, ["C3"]).loc["C3 final predictor", "reason"]
    )
    long["train_acc"].loc[{"epoch": 2}] = 100.0
    long["test_acc"].loc[{"epoch": 2}] = 60.0 + long["seed"] * 0.1  # no memory at the reference horizon
    assert "no memory to keep" in claims.reproduction_table(results, ["C3"]).loc["C3 final predictor", "reason"]
    # a small memory whose interval lies just above 0 (low end between 0 and 1 pp) is memory to keep: the premise
    # asks for an interval above 0, not above 1 pp
    sigma = long["sigma_w"]
    drop = xr.DataArray(np.linspace(0.8, 1.2, long.sizes["seed"]), dims="seed", coords={"seed": long["seed"]})
    reference = long["test_acc"].loc[{"epoch": 2}]
    long["test_acc"].loc[{"epoch": 2}] = (60.0 - drop * (sigma == sigma.max())).transpose(*reference.dims)
    row = claims.reproduction_table(results, ["C3"]).loc["C3 final predictor"]
    assert "no memory to keep" not in row["reason"]
    low = float(row["ours"].split("CI ")[1].split(",")[0])
    assert 0.0 < low < 1.0


def test_c4_judges_each_lever_alone_and_both(results):
    table = claims.reproduction_table(results, ["C4"])
    for part in ("larger lr", "L2", "both"):
        row = table.loc[f"C4 {part}"]
        assert row["verdict"] == IN_SIZE and (row["band_low"], row["band_high"]) == (-5.0, 5.0), (part, row["reason"])
        assert "T_L2" in row["ours"] and "ln(|W0|/|W*|)" in row["ours"] and "x = " in row["ours"]
    assert "lr 0.1, L2 0:" in table.loc["C4 larger lr", "ours"] and "lr 0.02, L2 0.01:" in table.loc["C4 L2", "ours"]
    assert "lr 0.1, L2 0.01:" in table.loc["C4 both", "ours"]
    # a lever that does nothing is not reproduced; the others keep their verdict
    memory(results["03_lr_and_l2"], {"lr": 0.1, "weight_decay": 0.0}, 19.5)
    table = claims.reproduction_table(results, ["C4"])
    assert table.loc["C4 larger lr", "verdict"] == NOT_REPRODUCED and table.loc["C4 L2", "verdict"] == IN_SIZE


def test_c4_is_judged_on_the_final_predictor_where_the_selected_checkpoints_do_not_interpolate(results):
    """Every row decides its premise and its predictor the same way: the larger-lr cell's selected checkpoints stop
    short of 99.5 %, so its lever is judged on the final predictors (where the lever keeps 12 pp: size
    contradicted), and the row says so."""
    lr = results["03_lr_and_l2"]
    lr["selected_train_acc"].loc[{"lr": 0.1, "weight_decay": 0.0}] = 70.0
    memory(lr, {"lr": 0.02, "weight_decay": 0.0}, 20.0, var="final_test_acc")
    memory(lr, {"lr": 0.1, "weight_decay": 0.0}, 12.0, var="final_test_acc")
    row = claims.reproduction_table(results, ["C4"]).loc["C4 larger lr"]
    assert row["verdict"] == SIZE_CONTRADICTED, row["reason"]
    assert row["reason"].startswith("the validation-selected predictor does not meet the premise; the final one")
    assert row["size"] == pytest.approx(12.0 + JITTER[: len(SEEDS)].mean())
    assert "(final)" in row["ours"]


def test_c4_an_l2_lever_whose_clock_does_not_cover_the_start_has_its_premise_not_met(results):
    """T5: L2 erases the start once T_L2 >= ln(|W0|/|W*|). At T_L2 0.5 against 1.90 (x = -1.40) the L2 lever's
    premise is not met, and the row says what would meet it: 1.90 / 0.5 = 3.8x the clock (lambda 0.038 at L2 0.01);
    the larger-lr lever (no L2) has no such premise."""
    lr = results["03_lr_and_l2"]
    lr["final_T_L2"] = (lr["weight_decay"] * 50.0).broadcast_like(lr["final_T_L2"]).transpose(*lr["final_T_L2"].dims)
    table = claims.reproduction_table(results, ["C4"])
    for part in ("L2", "both"):
        row = table.loc[f"C4 {part}"]
        assert row["verdict"] == PREMISE_NOT_MET and pd.isna(row["seeds_needed"]), (part, row["reason"])
        assert "T_L2 0.5 against ln(|W0|/|W*|) 1.90 (x = -1.40 < 0)" in row["reason"], row["reason"]
        assert "about 3.8x the clock (lambda about 0.038" in row["reason"], row["reason"]
    assert table.loc["C4 larger lr", "verdict"] == IN_SIZE


def _batch_grid(spreads: dict[tuple[int, int], float], interpolating: set[tuple[int, int]]) -> xr.Dataset:
    ds = fake_sweep(
        {"batch_size": [16, 64, 256], "epochs": [30, 123], "sigma_w": [0.1, 2.5], "seed": SEEDS},
        base={"train_size": 5000},
    )
    ds["final_train_acc"][:] = 90.0
    for (b, e), spread in spreads.items():  # the final predictors carry C5; the selected ones remember otherwise
        memory(ds, {"batch_size": b, "epochs": e}, spread, var="final_test_acc")
        memory(ds, {"batch_size": b, "epochs": e}, 30.0 - spread)
        ds["step"].loc[{"batch_size": b, "epochs": e}] = ds["step"].loc[{"batch_size": b, "epochs": e}] * 0 + e * (
            5000 // b
        )
        if (b, e) in interpolating:
            ds["final_train_acc"].loc[{"batch_size": b, "epochs": e}] = 100.0
    return ds


def test_c5_compares_interpolating_batch_sizes_at_equal_steps_and_at_equal_epochs(results):
    spreads = {(16, 30): 4.0, (16, 123): 1.0, (64, 30): 12.0, (64, 123): 8.0, (256, 30): 25.0, (256, 123): 20.0}
    results["04_batch_size"] = _batch_grid(spreads, {(16, 30), (16, 123), (64, 30), (64, 123), (256, 123)})
    table = claims.reproduction_table(results, ["C5"])
    steps, epochs = table.loc["C5 equal steps"], table.loc["C5 equal epochs"]
    # the rule prints the estimator the rows use: a contrast of cross-fitted spreads, its interval calibrated
    assert "95 % interval calibrated by simulation" in ledger.RULES["C5"] and "t-interval" not in ledger.RULES["C5"]
    assert "calibrated t, cross-fitted" in steps["ours"]
    # equal steps: 16 x 30 (9,360) against 64 x 123 (9,594), and 64 x 30 (2,340) against 256 x 123 (2,337): the
    # latter pair has the same batch ratio and fewer steps; both are within 5 %, the widest ratio wins (4 both), ties
    # to the most steps: b=16 vs 64
    assert "b=16, 30 epochs (9360 steps)" in steps["ours"] and "b=64, 123 epochs (9594 steps)" in steps["ours"]
    assert steps["effect"] == pytest.approx(8.0 - 4.0, abs=0.01)
    # equal epochs: 256 x 30 does not interpolate, so at 123 epochs: 16 against 256
    assert "b=16, 123 epochs" in epochs["ours"] and "b=256, 123 epochs" in epochs["ours"]
    assert epochs["effect"] == pytest.approx(19.0, abs=0.01) and epochs["verdict"] == IN_DIRECTION
    assert math.isnan(epochs["band_low"])  # no paper number: at most in direction
    assert steps["verdict"] == NOT_REPRODUCED  # a 4 pp difference: inside the null-equivalence band
    # what it judges: the runs' ends, at equal steps; where validation selected is printed beside
    assert "b=64 minus b=16, final predictors (equal steps): 4.0 pp" in steps["ours"]
    assert "b=16, 30 epochs (9360 steps), judged at its end" in steps["ours"]
    assert "validation selects at" in steps["ours"] and "T_SGD" in steps["ours"]
    assert steps["predictor"] == epochs["predictor"] == "final"


def test_a_batch_point_gives_the_steps_and_clock_at_its_selected_checkpoints():
    """The verdict judges validation-selected checkpoints, which sit inside the runs: equal run lengths (steps) need
    not mean equal steps where the predictors were taken (04 prints both)."""
    from initmem.study.statistics.batches import batch_points

    ds = _batch_grid({}, set())
    ds["step"][:] = ds["epoch"] * 10.0
    ds["best_epoch"][:] = 8.0
    ds["best_epoch"].loc[{"batch_size": 64, "epochs": 30, "seed": SEEDS[0]}] = 2.0
    ds["best_epoch"].loc[{"batch_size": 64, "epochs": 30, "seed": SEEDS[1]}] = np.nan  # e.g. a diverged run
    ds["selected_T_SGD"][:] = 0.5
    point = next(pt for pt in batch_points(ds) if (pt.batch_size, pt.epochs) == (64, 30))
    runs = [20.0] * 2 + [80.0] * 2 * (len(SEEDS) - 2)  # seed 0 at both sigma_w selects epoch 2; seed 1 none
    assert point.selected_steps == pytest.approx(np.mean(runs)) and point.selected_T_SGD == pytest.approx(0.5)


def test_c5_without_interpolating_pairs_is_inconclusive_with_the_reason(results):
    results["04_batch_size"] = _batch_grid({(256, 123): 20.0}, {(256, 123)})
    row = claims.reproduction_table(results, ["C5"]).loc["C5 equal steps"]
    assert (
        row["verdict"] == INCONCLUSIVE
        and row["reason"] == "no two batch sizes whose runs all interpolate at equal steps"
    )


def test_c5_reads_batch_sizes_zipped_with_their_epochs(results):
    bs = results["04_batch_size"]  # batch sizes 16, 64, 256 zipped with 2, 8, 32 epochs: equal steps
    bs["step"][:] = 64.0
    bs["final_train_acc"][:] = 100.0
    memory(bs, {"batch_size": 16}, 2.0, var="final_test_acc")
    memory(bs, {"batch_size": 256}, 20.0, var="final_test_acc")
    row = claims.reproduction_table(results, ["C5"]).loc["C5 equal steps"]
    assert (
        "b=16, 2 epochs" in row["ours"]
        and "b=256, 32 epochs" in row["ours"]
        and row["effect"] == pytest.approx(18.0, abs=0.01)
    )
    assert claims.reproduction_table(results, ["C5"]).loc["C5 equal epochs", "verdict"] == INCONCLUSIVE


def test_c6_names_every_run_that_fails_to_interpolate(results):
    """ResNet-9 at 100 % everywhere; ResNet-56 at [60, 70, 65, 62, 68] % at sigma_w 2.5 and 36.9 % at 0.25 in seed 1.
    The interaction per seed, (gap at 2.5) - (gap at 0.25), is [40, -33.1, 35, 38, 32], mean 22.38, whose t-interval
    straddles 0: the failure at the small sigma_w leaves it undecided."""
    depth = results["05_depth"]
    depth["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 2.5}] = [60.0, 70.0, 65.0, 62.0, 68.0]
    depth["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 0.25, "seed": 1}] = 36.9
    row = claims.reproduction_table(results, ["C6"]).loc["C6"]
    assert row["effect"] == pytest.approx(22.38) and row["verdict"] == INCONCLUSIVE
    assert "ResNet-9 minus resnet56: at sigma_w 2.5 35.0 pp" in row["ours"] and "at sigma_w 0.25 12.6 pp" in row["ours"]
    assert (
        "resnet56 sigma_w 0.25 seed 1 (36.9 %)" in row["note"] and "resnet56 sigma_w 2.5 seed 0 (60.0 %)" in row["note"]
    )
    assert row["note"].count(" seed ") == 6 and "resnet9" not in row["note"]
    assert "100.0 %" in row["ours"]  # an accuracy interval never passes 100 %
    depth["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 2.5}] = [100.0, 100.0, 100.0, 100.0, 90.0]
    ours = claims.reproduction_table(results, ["C6"]).loc[
        "C6", "ours"
    ]  # mean 98, its t-interval reaches 103.5: clipped
    assert "resnet56 at sigma_w 2.5: final train acc 98.0 % [95 % CI 92.4, 100.0;" in ours, ours


def test_c6_judges_the_sigma_w_interaction_of_the_depth_gap(results):
    """The claim is a failure *at large sigma_w*: the depth gap at the largest sigma_w minus at the smallest. ResNet-56
    at [60, 70, 65, 62, 68] % at sigma_w 2.5 and 100 % at 0.25: per seed [40, 30, 35, 38, 32], mean 35, sd 4.12,
    t-interval 35 +- 2.776 * 4.12 / sqrt(5) = [29.9, 40.1]; the centred swap null leaves a seed's term at +-40 (both
    cells kept or both swapped) or 0 (one swapped), so only the identity of 4^5 = 1,024 arrangements reaches 35: p =
    1/1024. The same failure at both ends of the grid is no interaction: not reproduced."""
    depth = results["05_depth"]
    depth["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 2.5}] = [60.0, 70.0, 65.0, 62.0, 68.0]
    row = claims.reproduction_table(results, ["C6"]).loc["C6"]
    assert row["effect"] == pytest.approx(35.0) and row["verdict"] == IN_DIRECTION
    assert (row["effect_low"], row["effect_high"]) == (pytest.approx(29.88, abs=0.01), pytest.approx(40.12, abs=0.01))
    assert row["p_value"] == pytest.approx(1 / 1024)
    depth["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 0.25}] = [60.0, 70.0, 65.0, 62.0, 68.0]
    row = claims.reproduction_table(results, ["C6"]).loc["C6"]
    assert row["effect"] == pytest.approx(0.0) and row["verdict"] == NOT_REPRODUCED
    assert "ResNet-9 minus resnet56: at sigma_w 2.5 35.0 pp" in row["ours"] and "at sigma_w 0.25 35.0 pp" in row["ours"]


def test_c6_is_not_reproduced_when_the_deep_net_interpolates_and_needs_an_interpolating_reference(results):
    depth = results["05_depth"]
    depth["final_train_acc"].loc[{"model": "resnet56"}] = 99.5  # exactly the threshold: interpolates
    row = claims.reproduction_table(results, ["C6"]).loc["C6"]
    assert row["verdict"] == NOT_REPRODUCED and row["reason"].endswith("band ±0.5") and row["margin"] == 0.5
    assert row["note"] == "runs that do not interpolate: none"
    depth["final_train_acc"].loc[{"model": "resnet9", "sigma_w": 0.25}] = 84.0
    row = claims.reproduction_table(results, ["C6"]).loc["C6"]
    assert row["verdict"] == PREMISE_NOT_MET and "ResNet-9 does not interpolate" in row["reason"]


def test_c7_sets_sgds_norm_coupling_against_the_most_coupled_adaptive_optimizer(results):
    row = claims.reproduction_table(results, ["C7"]).loc["C7"]
    assert row["verdict"] == IN_DIRECTION and row["p_value"] < 0.05 and row["unit"] == ""
    assert row["effect"] == pytest.approx(1.0, abs=0.01)  # SGD's final norm follows the initial one; Adam's is constant
    opt = results["01_optimizers"]
    opt["weight_norm"].loc[{"optimizer": "muon"}] = opt["weight_norm"].sel(optimizer="sgd").values
    row = claims.reproduction_table(results, ["C7"]).loc["C7"]
    assert "SGD minus muon" in row["ours"] and row["verdict"] == NOT_REPRODUCED


def test_missing_experiments_are_inconclusive_with_a_reason():
    table = claims.reproduction_table({})
    assert (table["verdict"] == INCONCLUSIVE).all() and list(table.index) == [
        "C1",
        "C2",
        "C3",
        "C4",
        "C5",
        "C6",
        "C7",
        "B1",
    ]
    assert table.loc["C5", "reason"] == "not measured: no results of 04_batch_size"


def test_a_rule_that_lacks_its_data_is_inconclusive_with_the_error(results):
    results["05_depth"] = results["05_depth"].drop_vars("final_train_acc")
    assert (
        "05_depth lacks what the rule needs (KeyError" in claims.reproduction_table(results, ["C6"]).loc["C6", "reason"]
    )


def test_diverged_runs_are_left_out_and_counted_in_the_note(results):
    opt = results["01_optimizers"]
    opt["diverged"].loc[{"optimizer": "sgd", "seed": 2, "sigma_w": 2.5}] = 1.0
    table = claims.reproduction_table(results, ["C1"])
    assert table.loc["C1", "seeds"] == 4 and "1 run(s) of 01_optimizers diverged" in table.loc["C1", "note"]


def test_verdict_box_and_chapter_verdicts_render_every_row_of_a_claim(results):
    table = claims.reproduction_table(results, ["C1", "C2", "C7"])
    box = ledger_text.verdict_box(table, ["C1", "C2"])
    assert box.startswith("**C1.** Does low-lr SGD") and "**C2." in box and "Paper: 26.5 pp" in box
    assert box.count("- Rule:") == 2 and "- C2 Muon: **reproduced in size**" in box and "Clocks:" in box
    line = claims.chapter_verdicts("01_optimizers", results["01_optimizers"])
    assert "\n" not in line and line.startswith("**Verdict at the test preset:**"), line
    for key in ("C1", "C2 Adam", "C2 AdamW", "C2 Muon", "C7"):
        assert f"{key} {table.loc[key, 'verdict']}" in line
    assert "C3" not in line and line.endswith("<verdict-01_optimizers>`).")
    assert claims.chapter_verdicts("01_optimizers", results["01_optimizers"], ["C7"]).count(" · ") == 0
    assert "**C4." in claims.chapter_box("03_lr_and_l2", results["03_lr_and_l2"])


def test_c2_notes_what_each_adaptive_learning_rate_of_09_measured(results):
    """With 09's results, C2's rows note each adaptive optimizer's spread at every learning rate tried and name the
    smallest with its interval; without them the note says nothing about 09."""
    assert "09" not in claims.reproduction_table(results, ["C2"]).loc["C2 Adam", "note"]
    results["09_adaptive_lr"] = fake_sweep(
        {"lr": [0.008, 0.05], "sigma_w": [0.1, 2.5], "seed": [0, 1, 2]},
        {"optimizer": ["adam", "adamw", "muon"], "weight_decay": [0.0, 0.05, 0.0]},
    )
    note = claims.reproduction_table(results, ["C2"]).loc["C2 Muon", "note"]
    assert note.startswith("09 tried other adaptive learning rates")
    for optimizer in ("adam", "adamw", "muon"):
        assert f"{optimizer} lr 0.008: " in note and "lr 0.05: " in note
    smallest = note.split("the smallest: ")[1]
    assert smallest.count("95 % CI") == 3 and smallest.count(" at lr ") == 3
    assert smallest.count("calibrated t, cross-fitted over 3 seeds") == 3  # the estimator spread_points uses
    assert re.search(
        r"none measurably below the spread at 01's learning rate \(the intervals overlap\); at \d+ to \d+ pp wide, "
        r"09's intervals cannot tell whether the learning rate moves this verdict$",
        note,
    )


def test_c2_notes_a_learning_rate_that_lowers_the_spread_measurably(results):
    later = fake_sweep(
        {"lr": [0.005, 0.05], "sigma_w": [0.1, 2.5], "seed": [0, 1, 2]},  # 01 trains adam at lr 0.005
        {"optimizer": ["adam", "adamw", "muon"], "weight_decay": [0.0, 0.05, 0.0]},
    )
    later["selected_test_acc"].loc[{"optimizer": "adam", "lr": 0.005, "sigma_w": 2.5}] -= 20.0
    results["09_adaptive_lr"] = later
    note = claims.reproduction_table(results, ["C2"]).loc["C2 Adam", "note"]
    assert note.endswith("measurably below the spread at 01's learning rate (intervals apart) for adam only"), note


def test_the_rules_and_the_paper_are_printed_for_every_claim():
    from initmem.base import records
    from initmem.study.verdicts.ledger import TABLE, claim_record

    assert set(ledger.RULES) == set(records.names(TABLE)) == {"C1", "C2", "C3", "C4", "C5", "C6", "C7", "B1"}
    assert claim_record("C1")["values"] == {"": 26.5}
    assert claim_record("C2")["values"] == {"Adam": 0.0, "AdamW": 0.0, "Muon": 4.0}
    assert "or L2" in claim_record("C4")["question"] and "inside 26.5 ± 7.95 pp" in ledger.RULES["C1"]
    assert json.dumps(claim_record("C1"))  # plain data, printed in the book


def test_c1s_number_and_band_are_one_edit_each_in_its_record(tmp_path, monkeypatch):
    """C1's paper number and its band's share are written once, in C1's record (``study/verdicts/paper.json``): the statement,
    the band and the printed rule follow an edit there."""
    from pathlib import Path

    from initmem.study.verdicts import ledger

    package = Path(claims.__file__).resolve().parents[1]
    number = f"{ledger.claim_record('C1')['values']['']:g}"
    written = [p for p in package.rglob("*.py") if f'values={{"": {number}}}' in p.read_text(encoding="utf-8")]
    assert written == []  # the number lives in the data file only
    table = json.loads(ledger.TABLE.read_text(encoding="utf-8"))
    table["records"]["C1"].update(values={"": 30.0}, band_share=0.2)
    edited = tmp_path / "paper.json"
    edited.write_text(json.dumps(table), encoding="utf-8")
    monkeypatch.setattr(ledger, "TABLE", edited)
    assert ledger.band("C1") == (24.0, 36.0)  # 30 +- max(5, 20 % of 30)
    assert ledger.claim_record("C1")["text"].startswith("30 pp spread")
    assert "size: the interval inside 30 ± 6 pp;" in ledger.RULES["C1"]
    assert ledger.band("C2", "Muon") == (-1.0, 9.0)  # the other claims keep the default share


def test_a_diverged_run_counts_as_its_seed_missing_in_the_rows_it_enters():
    """A run that diverged (NaN accuracies, diverged = 1) in Adam's cell (sigma_w 1.0, seed 1) leaves C2 Adam's row
    exactly as if seed 1 had not been run for 01: its own spread and its contrast with SGD both drop that seed."""
    results = ledger_results(seeds=(0, 1, 2, 3, 4))
    without = {**results, "01_optimizers": results["01_optimizers"].drop_sel(seed=1)}
    diverged = results["01_optimizers"]
    at = {"optimizer": "adam", "sigma_w": 1.0, "seed": 1}
    for var in ("selected_test_acc", "final_test_acc", "test_acc", "val_acc", "val_loss"):
        diverged[var].loc[at] = np.nan
    diverged["diverged"].loc[at] = 1.0
    numbers = ["effect", "effect_low", "effect_high", "size", "size_low", "size_high", "p_value", "seeds"]
    got = claims.reproduction_table(results, ["C2"]).loc["C2 Adam"]
    want = claims.reproduction_table(without, ["C2"]).loc["C2 Adam"]
    assert got["seeds"] == 4
    for column in numbers:
        assert got[column] == pytest.approx(want[column], nan_ok=True), column
    assert got["verdict"] == want["verdict"]


def test_identical_seeds_give_a_zero_width_interval_not_an_error():
    """Five seeds that are one run repeated (a copied run file, say): the interval of every spread collapses onto its
    estimate; nothing divides by the zero standard deviation."""
    results = ledger_results(seeds=(0, 1, 2, 3, 4))
    opt = results["01_optimizers"]
    for var in ("selected_test_acc", "final_test_acc"):
        opt[var] = opt[var].sel(seed=0, drop=True).broadcast_like(opt[var]).transpose(*opt[var].dims)
    row = claims.reproduction_table(results, ["C1"]).iloc[0]
    assert row["size_low"] == pytest.approx(row["size"]) == pytest.approx(row["size_high"])
    assert math.isfinite(row["size"]) and row["seeds"] == 5
