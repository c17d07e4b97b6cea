"""How the ledger is told: the first screen's answer and table, the chapters' boxes and lines, the scale and clock
texts, and the choices each claim makes (which optimizer, model, sigma_w and horizon it compares)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from initmem.base.numbers import decimal, p_text
from initmem.study.verdicts import claims, ledger_text
from initmem.study.verdicts.rules import (
    IN_DIRECTION,
    IN_SIZE,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PREMISE_NOT_MET,
    SIZE_CONTRADICTED,
)
from sweep_fakes import fake_sweep, ledger_results  # tests/ is on sys.path under pytest
from test_claims import SEEDS, memory, quick_nulls  # noqa: F401  (quick_nulls: an autouse fixture, used here too)


@pytest.fixture()
def results():
    out = ledger_results(SEEDS)
    memory(out["01_optimizers"], {"optimizer": "sgd"}, 26.0)
    memory(out["01_optimizers"], {"optimizer": "muon"}, 4.0)
    return out


def test_the_glance_table_gives_the_paper_ours_with_its_interval_and_the_verdict(results):
    table = claims.reproduction_table(results)
    glance = ledger_text.glance_table(table)
    assert list(glance.columns) == ["paper", "ours [95 % CI]", "effect tested [95 % CI]", "verdict"]
    assert glance.index.name == "claim"
    assert list(glance.index) == list(table.index) and list(glance["verdict"]) == list(table["verdict"])
    c1 = table.loc["C1"]
    assert glance.loc["C1", "paper"] == "26.5 pp"
    assert glance.loc["C1", "ours [95 % CI]"] == (
        f"{decimal(c1['size'])} pp [{decimal(c1['size_low'])}, {decimal(c1['size_high'])}] (SGD's spread, selected "
        "predictor)"
    )
    assert glance.loc["C2 Muon", "paper"] == "about 4 pp" and glance.loc["C4 both", "paper"] == "near 0 pp"
    c5 = table.loc["C5 equal steps"]  # no paper number: the effect, not a size
    assert glance.loc["C5 equal steps", "ours [95 % CI]"].startswith(
        f"{decimal(c5['effect'])} pp [{decimal(c5['effect_low'])}, "
    )
    c7 = table.loc["C7"]  # a slope: two decimals, no unit
    assert glance.loc["C7", "ours [95 % CI]"] == (
        f"{decimal(c7['effect'], 2)} [{decimal(c7['effect_low'], 2)}, {decimal(c7['effect_high'], 2)}] (SGD slope "
        "minus adaptive)"
    )
    assert (
        glance.loc["B1", "ours [95 % CI]"] == "not measured"
        and glance.loc["C5 equal epochs", "ours [95 % CI]"] == "not measured"
    )
    # the effect the verdict tested, beside the size, where it is another quantity (a contrast)
    c2 = table.loc["C2 Muon"]
    assert glance.loc["C2 Muon", "effect tested [95 % CI]"] == (
        f"{decimal(c2['effect'])} pp [{decimal(c2['effect_low'])}, {decimal(c2['effect_high'])}] (SGD's spread minus "
        "its)"
    )
    assert glance.loc["C1", "effect tested [95 % CI]"] == "the same"  # C1's effect is its size
    one_seed = ledger_text.glance_table(
        claims.reproduction_table({"01_optimizers": results["01_optimizers"].isel(seed=[0])})
    )
    assert "[" not in one_seed.loc["C1", "ours [95 % CI]"]  # no interval, no brackets


def test_the_answer_is_three_sentences_from_the_ledger(results):
    table = claims.reproduction_table(results)
    text = ledger_text.answer(table, "test")
    c1 = table.loc["C1"]
    first, second, third = text.split(". ", 2)[0], text.split(". ", 2)[1], text.split(". ", 2)[2]
    assert first == (
        f"At the test preset, low-learning-rate SGD keeps a cross-fitted spread of {decimal(c1['effect'])} pp "
        f"[95 % CI {decimal(c1['effect_low'])}, {decimal(c1['effect_high'])}] across the initialization scales "
        f"(its validation-selected predictor; paper: 26.5 pp): {c1['verdict']}"
    )
    assert (
        second.startswith("The adaptive optimizers keep less: Adam ") and "Muon 4.0 pp (reproduced in size)" in second
    )
    counts = table["verdict"].value_counts()
    assert third == (
        f"Of the ledger's 14 rows: {counts.get(IN_SIZE, 0)} reproduced in size, "
        f"{counts.get(IN_DIRECTION, 0)} reproduced in direction, {counts.get(SIZE_CONTRADICTED, 0)} size "
        f"contradicted, {counts.get(NOT_REPRODUCED, 0)} not reproduced, {counts.get(PREMISE_NOT_MET, 0)} premise not "
        f"met, {counts.get(INCONCLUSIVE, 0)} inconclusive; each undecided row says what would decide it."
    )
    empty = claims.reproduction_table({})
    nothing = ledger_text.answer(empty, "smoke")
    assert nothing == (
        "Of the ledger's 8 rows: 0 reproduced in size, 0 reproduced in direction, 0 size contradicted, 0 not "
        "reproduced, 0 premise not met, 8 inconclusive; each undecided row says what would decide it."
    )
    assert (empty["seeds"] == 0).all()  # a claim with no results was measured on no seed
    decided = table[table["verdict"] != INCONCLUSIVE]  # a ledger without an inconclusive row counts 0 of them
    assert ledger_text.answer(decided, "test").endswith(
        "premise not met, 0 inconclusive; each undecided row says what would decide it."
    )


def test_the_count_sentence_names_every_verdict_and_adds_up_to_the_rows(results):
    """The ledger's count (page 99 and the answer): every verdict of the vocabulary named once, in its order, zero
    counts too, and the counts add up to the rows."""
    import re

    from initmem.study.verdicts.rules import VERDICTS

    for table in (claims.reproduction_table(results), claims.reproduction_table({})):
        sentence = ledger_text.count_sentence(table)
        head, counts = sentence.split(": ", 1)
        assert head == f"Of the ledger's {len(table)} rows"
        named = [re.fullmatch(r"(\d+) (.+)", part).groups() for part in counts.split(", ")]
        assert [verdict for _, verdict in named] == list(VERDICTS)
        assert sum(int(n) for n, _ in named) == len(table)
        assert all(int(n) == (table["verdict"] == v).sum() for n, v in named)


def test_the_scale_and_the_clocks_name_what_was_measured(results):
    table = claims.reproduction_table(results)
    assert table.loc["C1", "scale"] == "test, resnet9 w8, 500 train images, 16 px, 5 seeds"
    assert table.loc["C6", "scale"].startswith("test, resnet9/resnet56 w8")
    depth = fake_sweep(
        {"sigma_w": [0.25, 2.5], "seed": SEEDS},
        {"model": ["resnet9", "resnet110"], "width": [8, 16]},
        base={"image_size": 32},
    )
    row = claims.reproduction_table({"05_depth": depth}, ["C6"]).loc["C6"]
    assert row["scale"] == "test, resnet9 w8/resnet110 w16, 500 train images, 5 seeds"  # zipped widths; 32 px unsaid
    clocks = table.loc["C1", "clocks"]
    sgd = results["01_optimizers"].sel(optimizer="sgd")
    assert clocks == (
        f"T_SGD {float(sgd['selected_T_SGD'].mean()):.3g} at the selected checkpoint "
        f"({float(sgd['final_T_SGD'].mean()):.3g} at the end)"
    )
    assert "T_adapt" in table.loc["C2 Adam", "clocks"] and "T_L2" in table.loc["C4 L2", "clocks"]
    results["01_optimizers"]["selected_T_SGD"][:] = 0.0
    results["01_optimizers"]["final_T_SGD"][:] = 0.0
    assert claims.reproduction_table(results, ["C1"]).loc["C1", "clocks"] == ""  # a clock that never ran is not shown


def test_a_subset_of_claims_and_the_chapter_renderings(results):
    table = claims.reproduction_table(results, ["C4", "C6"])
    assert list(table.index) == ["C4 larger lr", "C4 L2", "C4 both", "C6"]
    box = ledger_text.verdict_box(table, "C4")
    assert box.count("**C4.") == 1 and box.count("- C4 ") == 3 and box.count("Rule:") == 1 and "**C6." not in box
    # at a glance: one table line per row (direction, size, verdict), the long explanation in a collapsed block
    lines = box.splitlines()
    assert lines[4] == "| | direction effect [95 % CI] | noise p | size [95 % CI] · band | verdict |"
    for key in ("C4 larger lr", "C4 L2", "C4 both"):
        line = next(line for line in lines if line.startswith(f"| {key} |"))
        assert line.endswith(f"| **{table.loc[key, 'verdict']}** |") and line.count(" | ") == 4
    opened = lines.index(":::{dropdown} C4: why, ours in full, the rule")
    assert opened > 8 and lines[-1] == ":::" and all(line.startswith(("- ", "  ")) for line in lines[opened + 1 : -1])
    assert ledger_text.verdict_box(table, "C9") == ""
    # the box's heading writes the symbol, as the prose does
    heading = ledger_text.verdict_box(table, "C6").splitlines()[0]
    assert heading == "**C6.** Do deeper ResNets fail to interpolate at large $\\sigma_w$?"  # the question not in bold
    assert "About" not in box  # no inconclusive row here
    line = claims.chapter_verdicts("05_depth", results["05_depth"], label="mine")
    assert line.endswith("<mine>`).") and "C6 " in line and "C4" not in line
    no_preset = results["05_depth"].copy()
    no_preset.attrs.pop("preset")
    assert claims.chapter_verdicts("05_depth", no_preset).startswith("**Verdict at this preset:**")
    assert "**C4." in claims.chapter_box("03_lr_and_l2", results["03_lr_and_l2"], ["C4"])


def test_each_row_keeps_its_per_seed_values_and_units(results):
    rows = {row.key: row for row in claims.claim_rows(results)}
    assert len(rows["C1"].values) == 5 and np.allclose(np.mean(rows["C1"].values), rows["C1"].effect.estimate)
    assert np.allclose(np.mean(rows["C2 Muon"].size_values), rows["C2 Muon"].size.estimate)
    assert rows["C1"].unit == " pp" and rows["C7"].unit == "" and rows["B1"].unit == ""
    assert rows["C6"].margin == 0.5 and rows["C7"].margin == 0.1 and rows["C1"].margin == 5.0
    as_dict = rows["C2 Muon"].as_dict()
    assert (
        as_dict["paper_value"] == 4.0
        and as_dict["unit"] == "pp"
        and as_dict["claim"] == "C2"
        and as_dict["part"] == "Muon"
    )
    assert json.dumps({k: v for k, v in as_dict.items() if isinstance(v, (str, int, float))})


def test_the_claims_compare_what_their_rules_say(results):
    # C2: only the adaptive optimizers that were run
    opt = results["01_optimizers"].sel(optimizer=["sgd", "adam", "muon"])
    table = claims.reproduction_table({"01_optimizers": opt})
    assert [k for k in table.index if k.startswith("C2")] == ["C2 Adam", "C2 Muon"]
    # C7: against the adaptive optimizer whose final norm is most coupled to the initial one
    norms = results["01_optimizers"]["weight_norm"]
    later = {"optimizer": "muon", "epoch": norms["epoch"].values[1:]}
    norms.loc[later] = norms.sel(optimizer="sgd", epoch=later["epoch"]).values ** 0.5  # final ~ initial^(1/2)
    row = claims.reproduction_table(results, ["C7"]).loc["C7"]
    assert "SGD minus muon" in row["ours"] and row["effect"] == pytest.approx(0.5, abs=0.01)
    # C6: the deepest model at the largest sigma_w, by name
    depth = fake_sweep(
        {"sigma_w": [0.25, 1.0, 2.5], "seed": SEEDS}, {"model": ["resnet9", "resnet20", "resnet110", "resnet56"]}
    )
    depth["final_train_acc"].loc[{"model": "resnet110", "sigma_w": 2.5}] = 70.0
    depth["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 0.25}] = 70.0
    row = claims.reproduction_table({"05_depth": depth}, ["C6"]).loc["C6"]
    assert row["effect"] == pytest.approx(30.0) and "resnet110 at sigma_w 2.5" in row["ours"]
    assert "resnet56 sigma_w 0.25 seed 0 (70.0 %)" in row["note"]
    depth["final_train_acc"].loc[{"model": "resnet110", "sigma_w": 2.5}] = 99.5  # 99.5 % is interpolation
    note = claims.reproduction_table({"05_depth": depth}, ["C6"]).loc["C6", "note"]
    assert "resnet110" not in note


def test_c3_reads_the_declared_reference_horizon_or_the_one_before_the_longest(results):
    long = results["02_long_training"]
    long.attrs.update(horizons=json.dumps([2, 6, 10]), reference_horizon=6)
    assert "at 6 epochs" in claims.reproduction_table(results, ["C3"]).loc["C3 final predictor", "ours"]
    del long.attrs["reference_horizon"]
    row = claims.reproduction_table(results, ["C3"]).loc["C3 final predictor"]
    assert "at 6 epochs" in row["ours"] and row["scale"].endswith(", 6 vs 10 epochs")


def test_c7s_null_is_the_slope_difference_over_every_swap_of_cells_computed_by_brute_force():
    """Two seeds whose initial norms differ a lot (x = ln|W0| spans 2 in one, 19 in the other): the permutation p of
    C7 equals the share of the 2^6 swaps of (sigma_w, seed) cells between SGD and the strongest adaptive optimizer
    whose mean per-seed least-squares slope difference (numpy's polyfit; each seed's values centred) reaches the
    observed one."""
    import itertools

    results = ledger_results([0, 1])
    norms = results["01_optimizers"]["weight_norm"]
    x = np.array([[1.0, 2.0, 3.0], [1.0, 6.0, 20.0]]).T  # (sigma_w, seed)
    rng = np.random.default_rng(3)
    for optimizer in norms["optimizer"].values:
        final = np.exp(rng.normal(size=(3, 2)) + (0.8 if optimizer == "sgd" else 0.1) * x)
        epochs = [np.exp(x)] + [final] * (norms.sizes["epoch"] - 1)
        norms.loc[{"optimizer": optimizer}] = np.stack(epochs, axis=-1)
    row = claims.reproduction_table(results, ["C7"]).loc["C7"]
    strongest = row["ours"].rsplit("SGD minus ", 1)[1].strip()

    def slope(y: np.ndarray) -> float:
        return float(np.mean([np.polyfit(x[:, s], y[:, s], 1)[0] for s in range(2)]))

    final = np.log(norms.isel(epoch=-1)).transpose("sigma_w", "seed", "optimizer")
    a, b = final.sel(optimizer="sgd").values, final.sel(optimizer=strongest).values
    a, b = a - a.mean(axis=0), b - b.mean(axis=0)  # each seed centred over sigma_w, as contrast_null documents
    observed = slope(a) - slope(b)
    swaps = [np.array(m, bool).reshape(3, 2) for m in itertools.product([False, True], repeat=6)]
    null = np.array([slope(np.where(m, b, a)) - slope(np.where(m, a, b)) for m in swaps])
    assert row["p_value"] == pytest.approx(np.mean(null >= observed - 1e-9))


def test_c3_with_one_horizon_has_nothing_to_compare_and_earns_no_verdict(results):
    long = results["02_long_training"]
    long.attrs.update(horizons=json.dumps([10]))
    del long.attrs["reference_horizon"]
    table = claims.reproduction_table(results, ["C3"])
    for row in ("C3 final predictor", "C3 selected predictor"):
        assert table.loc[row, "verdict"] == PREMISE_NOT_MET
        assert "no horizon after the reference (10 epochs)" in table.loc[row, "reason"]


def test_the_09_note_goes_to_c2_only(results):
    results["09_adaptive_lr"] = fake_sweep(
        {"lr": [0.005, 0.05], "sigma_w": [0.1, 2.5], "seed": [0, 1, 2]},
        {"optimizer": ["adam", "adamw", "muon"], "weight_decay": [0.0, 0.05, 0.0]},
    )
    table = claims.reproduction_table(results)
    assert all("09 tried" in table.loc[k, "note"] for k in ("C2 Adam", "C2 AdamW", "C2 Muon"))
    assert not any("09 tried" in table.loc[k, "note"] for k in table.index if not k.startswith("C2"))
    del results["01_optimizers"]
    note = claims.reproduction_table(results, ["C2"]).loc["C2", "note"]  # without 01: what 09 tried, no comparison
    assert note.startswith("09 tried") and "01's learning rate" not in note


def test_an_inconclusive_contrast_says_how_many_seeds_would_decide_it(results):
    lr = results["03_lr_and_l2"]  # 2 sigma_w x 5 seeds: the contrast null can reach p < 0.05
    memory(lr, {"lr": 0.02, "weight_decay": 0.0}, 6.0, jitter=np.array([0.0, 5.0, -5.0, 4.0, -4.0]))
    memory(lr, {"lr": 0.1, "weight_decay": 0.0}, 1.0, jitter=np.array([5.0, -5.0, 0.0, -4.0, 4.0]))
    row = claims.reproduction_table(results, ["C4"]).loc["C4 larger lr"]
    assert row["verdict"] == INCONCLUSIVE and row["seeds_needed"] > 5
    box = claims.chapter_box("03_lr_and_l2", lr)
    assert f"About {row['seeds_needed']} seeds would decide it" in box


def test_a_clock_that_ran_at_either_checkpoint_is_shown_and_a_diverged_run_does_not_hide_it(results):
    from initmem.study.verdicts import ledger

    sgd = results["01_optimizers"].sel(optimizer="sgd").copy(deep=True)
    sgd["selected_T_SGD"][:] = 0.0  # validation kept the initial checkpoint everywhere; the final predictor trained on
    assert ledger.clocks_text(sgd, ("T_SGD",)).startswith("T_SGD 0 at the selected checkpoint (")
    sgd = results["01_optimizers"].sel(optimizer="sgd").copy(deep=True)
    sgd["selected_T_SGD"].loc[{"seed": SEEDS[0]}] = np.nan  # a diverged run's predictor
    text = ledger.clocks_text(sgd, ("T_SGD",))
    mean = float(sgd["selected_T_SGD"].mean(skipna=True))
    assert text.startswith(f"T_SGD {mean:.3g} at the selected checkpoint")


def test_only_an_inconclusive_row_says_how_many_seeds_would_decide_it(results):
    table = claims.reproduction_table(results)
    decided = table[table["verdict"] != INCONCLUSIVE]
    assert len(decided) >= 3 and decided["seeds_needed"].isna().all()


def test_a_spec_without_an_image_size_is_at_the_default_32_px_and_says_nothing_of_it(results):
    from initmem.study.verdicts import ledger

    ds = results["01_optimizers"]
    spec = json.loads(ds.attrs["spec"])
    del spec["base"]["image_size"]
    ds.attrs["spec"] = json.dumps(spec)
    assert "px" not in ledger.scale_text(ds)


def test_an_exploration_beside_the_record_gives_both_numbers_in_the_same_words(results):
    table = claims.reproduction_table(results)
    beside = ledger_text.against_record(table, table)
    assert beside.loc["C1", "committed record [95 % CI]"] == beside.loc["C1", "this page [95 % CI]"]
    assert beside.loc["C1", "this page [95 % CI]"].endswith("]")  # the number and its interval, not what it measures
    assert beside.loc["C1", "measures"] == "SGD's spread"


def test_an_inconclusive_row_that_no_number_of_seeds_decides_says_only_why(results):
    table = claims.reproduction_table(results, ["C5"])
    assert table.loc["C5 equal epochs", "verdict"] == INCONCLUSIVE and table["seeds_needed"].isna()["C5 equal epochs"]
    box = ledger_text.verdict_box(table, "C5")
    assert "**inconclusive**" in box and "seeds would decide it" not in box.split("C5 equal epochs")[1].split("\n")[0]


def test_a_rows_block_tabulates_what_the_verdict_judged(results):
    """The ledger's per-row block: the direction effect and the size, each with its estimate, interval, noise p and
    band, what the rule read from each, and the verdict."""
    table = claims.reproduction_table(results, ["C2"])
    row = table.loc["C2 Muon"]
    text = ledger_text.judged_table(row)
    lines = text.splitlines()
    assert lines[0] == "| | estimate [95 % CI] | noise p | band | the rule reads |" and len(lines) == 5
    effect = f"{decimal(row['effect'])} pp [{decimal(row['effect_low'])}, {decimal(row['effect_high'])}]"
    assert lines[2] == (
        f"| direction effect (SGD's spread minus its) | {effect} | {p_text(row['p_value'])} | no effect within ±5 | "
        "holds |"
    )
    size = f"{decimal(row['size'])} pp [{decimal(row['size_low'])}, {decimal(row['size_high'])}]"
    assert lines[3] == f"| size (its spread) | {size} | – | [−1, 9] around 4 | inside the band |"
    assert lines[4] == "| **verdict** | **reproduced in size** | | | |"
    c1 = claims.reproduction_table(results, ["C1"]).loc["C1"]  # C1's effect is its size: the size line names it
    assert "| direction effect (SGD's spread) |" in ledger_text.judged_table(c1)


def test_every_verdict_box_heading_writes_symbols_as_math():
    """The ledger's questions are plain text; the chapters' box headings write their symbols as the prose does."""
    from initmem.base import records
    from initmem.study.verdicts.ledger import TABLE, claim_record
    from initmem.study.verdicts.ledger_text import _heading_math

    headings = {claim: _heading_math(claim_record(claim)["question"]) for claim in records.names(TABLE)}
    assert headings["B1"].endswith(r"at $T_{L2} = \ln(\|W_0\|/\|W^*\|)$?")
    for claim, heading in headings.items():
        plain = heading.replace(r"\sigma_w", "")
        assert "sigma_w" not in plain and "T_L2" not in plain and heading.count("$") % 2 == 0, (claim, heading)
