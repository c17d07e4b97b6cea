"""The claims ledger: each verdict rule at its edges, on fake results (no training)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from initmem.study import claims
from initmem.study.stats import Interval

from sweep_fakes import ledger_results  # tests/ is on sys.path under pytest


@pytest.mark.parametrize(
    ("low", "high", "size", "premise", "verdict"),
    [
        (5.01, 9.0, False, True, claims.IN_DIRECTION),
        (5.01, 9.0, True, True, claims.IN_SIZE),
        (5.0, 9.0, True, True, claims.INCONCLUSIVE),  # touching the threshold is not above it
        (1.0, 4.99, True, True, claims.NOT_REPRODUCED),
        (1.0, 5.0, False, True, claims.INCONCLUSIVE),
        (6.0, 9.0, True, False, claims.INCONCLUSIVE),  # a premise that fails blocks any positive verdict
        (1.0, 4.0, False, False, claims.NOT_REPRODUCED),  # ... but not a negative one
        (math.nan, math.nan, True, True, claims.INCONCLUSIVE),  # one seed: no interval
    ],
)
def test_judge_at_the_edges(low, high, size, premise, verdict):
    assert claims.judge(Interval(7.0, low, high, 3), 5.0, size, premise) == verdict


def test_every_claim_reproduced_on_results_that_show_it():
    table = claims.reproduction_table(ledger_results())
    assert list(table.index) == ["C1", "C2", "C3", "C4", "C5", "C6", "C7"]
    assert set(table["verdict"]) <= set(claims.VERDICTS)
    v = table["verdict"]
    assert v["C2"] == claims.IN_DIRECTION  # adaptive spreads ~2 pp: Muon's interval misses 4 pp
    assert v["C4"] == claims.IN_SIZE  # the (0.1, 0.01) cell has no spread
    assert v["C5"] == claims.IN_DIRECTION and v["C7"] == claims.IN_DIRECTION  # no paper number: at most direction
    assert v["C6"] == claims.IN_SIZE  # ResNet-56 at 60 % where ResNet-9 interpolates
    assert v["C3"] == claims.IN_DIRECTION
    # both predictors with their training accuracy, and the clock at the selected checkpoint
    assert "selected: spread" in table.loc["C1", "ours"] and "final: spread" in table.loc["C1", "ours"]
    assert "at the selected checkpoint" in table.loc["C1", "clocks"]
    assert "95 % CI" in table.loc["C1", "ours"] and table.loc["C1", "seeds"] == 3


def test_c1_in_size_needs_the_paper_number_inside_the_interval_and_interpolation():
    results = ledger_results()
    acc = results["01_optimizers"]["selected_test_acc"]
    for seed, spread in zip([0, 1, 2], [24.0, 27.0, 30.0]):  # mean 27, t-interval [19.5, 34.5]
        acc.loc[{"optimizer": "sgd", "seed": seed}] = 60.0 - spread * (acc["sigma_w"] == 2.5)
    row = claims.reproduction_table(results).loc["C1"]
    assert row["effect_low"] <= 26.5 <= row["effect_high"] and row["verdict"] == claims.IN_SIZE
    results["01_optimizers"]["final_train_acc"].loc[{"optimizer": "sgd", "sigma_w": 2.5}] = 99.4
    row = claims.reproduction_table(results).loc["C1"]
    assert row["verdict"] == claims.INCONCLUSIVE and "premise" in row["note"]


def test_c1_not_reproduced_when_the_spread_is_surely_below_the_noise_floor():
    results = ledger_results()
    acc = results["01_optimizers"]["selected_test_acc"]
    acc.loc[{"optimizer": "sgd"}] = 60.0 + np.array([0.0, 1.0, 2.0])[:, None]  # 2 pp spread in every seed
    assert claims.reproduction_table(results).loc["C1", "verdict"] == claims.NOT_REPRODUCED


def test_c2_is_inconclusive_when_the_seeds_disagree():
    results = ledger_results()
    acc = results["01_optimizers"]["selected_test_acc"]
    acc.loc[{"optimizer": ["adam", "adamw", "muon"]}] = 60.0
    for seed, gap in zip([0, 1, 2], [12.0, 0.0, -6.0]):  # SGD's lead: 12, 0, -6 pp
        acc.loc[{"optimizer": "sgd", "seed": seed}] = 60.0 + (acc["sigma_w"] == 2.5) * -max(gap, 0.0)
        acc.loc[{"optimizer": "muon", "seed": seed, "sigma_w": 2.5}] = 60.0 + min(gap, 0.0)
    row = claims.reproduction_table(results).loc["C2"]
    assert row["effect_low"] < 0 < row["effect_high"] and row["verdict"] == claims.INCONCLUSIVE


def test_c3_must_agree_over_every_reference_horizon():
    results = ledger_results()
    long = results["02_long_training"]
    long.attrs["horizons"] = "[2, 6, 10]"
    row = claims.reproduction_table(results).loc["C3"]
    assert row["verdict"] == claims.IN_DIRECTION and "2 ep" in row["ours"] and "6 ep" in row["ours"]
    # the spread collapses after epoch 6: judged from 6 it is lost, judged from 2 (before the collapse) too
    long["test_acc"].loc[{"epoch": [8, 10]}] = 60.0
    assert claims.reproduction_table(results).loc["C3", "verdict"] == claims.NOT_REPRODUCED


def test_c3_says_when_validation_selects_the_same_checkpoints_at_every_horizon():
    """If the selected checkpoints at every reference horizon are those of the longest, the selected spread cannot
    change: the note says so and gives the final predictor's change instead; otherwise it says nothing of it."""
    results = ledger_results()
    long = results["02_long_training"]
    assert "same checkpoints" not in claims.reproduction_table(results).loc["C3", "note"]  # best = the last epoch
    long["val_loss"] = long["val_loss"] * 0 + 3.0 + (long["epoch"] - 2) ** 2  # the best checkpoint is epoch 2
    long["test_acc"].loc[{"epoch": 10, "sigma_w": 2.5}] = long["test_acc"].sel(epoch=10, sigma_w=2.5) + 4.0
    note = claims.reproduction_table(results).loc["C3", "note"]
    assert "same checkpoints at every reference horizon as at 10 epochs (the latest at epoch 2)" in note, note
    spread = lambda T: (long["test_acc"].sel(epoch=T).max("sigma_w") - long["test_acc"].sel(epoch=T).min("sigma_w"))
    change = float((spread(10) - spread(2)).mean())
    assert f"final predictor's spread changes by {change:.1f}" in note, (change, note)


def test_c4_shows_all_four_cells_with_the_l2_clock_against_the_norm_ratio():
    results = ledger_results()
    cells = claims.l2_cells(results["03_lr_and_l2"])
    assert len(cells) == 4 and {"T_L2", "log_norm_ratio", "forgetting_predicted"} <= set(cells.columns)
    row = claims.reproduction_table(results).loc["C4"]
    assert row["ours"].count("lr ") == 4 and "ln(|W0|/|W*|)" in row["ours"]


def test_c6_needs_an_interpolating_reference():
    results = ledger_results()
    results["05_depth"]["final_train_acc"].loc[{"model": "resnet9", "sigma_w": 0.25}] = 84.0
    row = claims.reproduction_table(results).loc["C6"]
    assert row["verdict"] == claims.INCONCLUSIVE and "reference ResNet-9" in row["note"]


def test_missing_experiments_are_inconclusive_with_a_reason():
    table = claims.reproduction_table({})
    assert (table["verdict"] == claims.INCONCLUSIVE).all()
    assert table.loc["C5", "note"] == "not measured: no results of 04_batch_size"


def test_verdict_box_names_the_claim_the_paper_ours_and_the_rule():
    table = claims.reproduction_table(ledger_results())
    box = claims.verdict_box(table, ["C1", "C2"])
    assert box.startswith("**C1.") and "**C2." in box and "Paper: 26.5 pp" in box and "Rule:" in box


def test_diverged_runs_are_left_out_and_counted_in_the_note():
    results = ledger_results()
    opt = results["01_optimizers"]
    opt["diverged"].loc[{"optimizer": "sgd", "seed": 2, "sigma_w": 2.5}] = 1.0
    opt["selected_test_acc"].loc[{"optimizer": "sgd", "seed": 2, "sigma_w": 2.5}] = np.nan
    row = claims.reproduction_table(results).loc["C1"]
    assert row["seeds"] == 2 and "1 run(s) of 01_optimizers diverged" in row["note"]


def test_c2_notes_what_each_adaptive_learning_rate_of_09_measured():
    """With 09's results, C2's note lists each adaptive optimizer's spread at every learning rate tried and names
    the smallest with its interval; without them the note says nothing about 09."""
    from sweep_fakes import fake_sweep, ledger_results

    results = ledger_results()
    without = claims.reproduction_table(results).loc["C2", "note"]
    assert "09" not in without
    results["09_adaptive_lr"] = fake_sweep(
        {"lr": [0.008, 0.05], "sigma_w": [0.1, 2.5], "seed": [0, 1, 2]},
        {"optimizer": ["adam", "adamw", "muon"], "weight_decay": [0.0, 0.05, 0.0]},
    )
    note = claims.reproduction_table(results).loc["C2", "note"]
    assert note.startswith("09 tried other adaptive learning rates") or "; 09 tried other adaptive" in note
    for optimizer in ("adam", "adamw", "muon"):
        assert f"{optimizer} lr 0.008: " in note and "lr 0.05: " in note
    smallest = note.split("the smallest: ")[1]
    assert smallest.count("95 % CI") == 3 and smallest.count(" at lr ") == 3
    assert note.endswith("none measurably below the spread at 01's learning rate (the intervals overlap), so the "
                         "learning rate does not decide this verdict")  # fmt: skip


def test_c2_notes_a_learning_rate_that_lowers_the_spread_measurably():
    """An adaptive optimizer with a wide spread at 01's learning rate and none at another of 09's is named."""
    from sweep_fakes import fake_sweep, ledger_results

    results = ledger_results()  # 01 trains adam at lr 0.005
    later = fake_sweep(
        {"lr": [0.005, 0.05], "sigma_w": [0.1, 2.5], "seed": [0, 1, 2]},
        {"optimizer": ["adam", "adamw", "muon"], "weight_decay": [0.0, 0.05, 0.0]},
    )
    later["selected_test_acc"].loc[{"optimizer": "adam", "lr": 0.005, "sigma_w": 2.5}] -= 20.0
    results["09_adaptive_lr"] = later
    note = claims.reproduction_table(results).loc["C2", "note"]
    assert note.endswith("measurably below the spread at 01's learning rate (intervals apart) for adam only"), note


def test_chapter_verdicts_is_one_line_with_the_ledgers_verdicts():
    """The first-screen line names the preset and each claim with the ledger's verdict, and links to the full box."""
    results = ledger_results()
    table = claims.reproduction_table(results)
    line = claims.chapter_verdicts("01_optimizers", results["01_optimizers"])
    assert "\n" not in line and line.startswith("**Verdict at the test preset:**"), line
    for claim in ("C1", "C2", "C7"):
        assert f"{claim} {table.loc[claim, 'verdict']}" in line
    assert "C3" not in line and line.endswith("<verdict-01_optimizers>`).")
    assert claims.chapter_verdicts("01_optimizers", results["01_optimizers"], ["C7"]).count(" · ") == 0
