"""The page helpers of the notebooks (initmem.book.page): where a figure comes from, tables for readers."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from initmem.book import page
from initmem.study.statistics.tables import format_value, present


# --------------------------------------------------------------------------- where a figure comes from
def test_source_note_links_the_record_and_names_the_command(monkeypatch):
    """A file of the committed record is a {download} link relative to book/generated/; the command reproduces it."""
    root = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("INITMEM_ROOT", str(root))
    record = root / "results" / "cpu" / "01_optimizers.nc"
    assert record.is_file(), "the committed record of 01 at the cpu preset"
    note = page.source_note("06_norms", "cpu", ["01_optimizers"])
    assert note == (
        "data: {download}`results/cpu/01_optimizers.nc <../../results/cpu/01_optimizers.nc>` · "
        "reproduce: `initmem experiments --preset cpu --only 01,06`"
    )
    assert (root / "book" / "generated" / "../../results/cpu/01_optimizers.nc").resolve() == record


def test_source_note_gives_other_files_as_paths(tmp_path):
    note = page.source_note("01_optimizers", "smoke", results_dir=tmp_path)
    assert "{download}" not in note and f"`{tmp_path / 'smoke' / '01_optimizers.nc'}`" in note
    assert note.endswith("reproduce: `initmem experiments --preset smoke --only 01`")
    assert page.source_note("T1_scale_invariance", sources=[]).startswith("data: computed on this page")
    with pytest.raises(ValueError, match="preset"):
        page.source_note("01_optimizers")


def test_the_reproduce_command_carries_the_parameters_that_differ_from_the_preset(tmp_path):
    """The page's command reproduces the page: one -p per value that is not the preset's, quoted for the shell."""
    from initmem.study.design import presets

    p = presets.notebook_parameters("cpu", "04_batch_size")
    assert page.source_note("04_batch_size", "cpu", results_dir=tmp_path, parameters=p).endswith(
        "reproduce: `initmem experiments --preset cpu --only 04`"
    )
    changed = {**p, "batch_sizes": [64, 256], "seeds": [0]}
    assert page.overrides("04_batch_size", "cpu", changed) == {"batch_sizes": [64, 256], "seeds": [0]}
    note = page.source_note("04_batch_size", "cpu", results_dir=tmp_path, parameters=changed)
    # in the order of the page's parameters
    assert note.endswith(
        "reproduce: `initmem experiments --preset cpu --only 04 -p seeds '[0]' -p batch_sizes '[64, 256]'`"
    )


def test_against_record_shows_the_chapters_rows_beside_the_records_and_nothing_on_the_record(monkeypatch):
    """With the record, one row per claim part of the chapter: the record's number, this page's and the verdict (an
    arrow where it changed); on the record's own page (record None), nothing."""
    from initmem.study.verdicts import claims, ledger_text
    from initmem.sweeps.store import read_checked

    record = read_checked(Path(__file__).resolve().parents[1] / "results" / "cpu" / "04_batch_size.nc")
    subset = record.sel(batch_size=[64, 256])
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    page.against_record("04_batch_size", subset, None)
    assert shown == []
    page.against_record("04_batch_size", subset, record)
    table = shown[-1]
    assert list(table.columns) == ["measures", "committed record [95 % CI]", "this page [95 % CI]", "verdict"]
    assert list(table.index) == list(claims.chapter_table("04_batch_size", record).index)
    mine = claims.chapter_table("04_batch_size", subset)
    for key, row in table.iterrows():
        assert row["verdict"].endswith(mine.loc[key, "verdict"])
    same = ledger_text.against_record(
        claims.chapter_table("04_batch_size", record), claims.chapter_table("04_batch_size", record)
    )
    assert (same["committed record [95 % CI]"] == same["this page [95 % CI]"]).all()
    assert not same["verdict"].str.contains("→").any()


def test_the_parameters_close_the_page_as_a_list_in_a_dropdown(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    page.parameters("cpu", {"lr": 0.02, "seeds": [0, 1]})
    text = shown[0].data
    assert text.startswith(":::{dropdown}") and text.rstrip().endswith(":::")
    assert '`preset` = `"cpu"`\n: ' in text and "`seeds` = `[0, 1]`\n: " in text and "<table" not in text


def test_a_table_for_readers_has_human_headers_one_decimal_and_intervals_in_one_cell():
    table = pd.DataFrame(
        {
            "selected_spread_pp": [21.15, math.nan],
            "selected_ci95_low": [15.17, math.nan],
            "selected_ci95_high": [27.13, math.nan],
            "selected_null_p": [0.00694, 0.52],
            "T_SGD": [0.0153, 0.38245],
            "selected_n_seeds": [5.0, 1.0],
        },
        index=pd.Index(["sgd", "adam"], name="optimizer"),
    )
    shown = present(table)
    assert list(shown.columns) == ["selected spread (pp), 95 % CI", "noise p (selected)", "T_SGD, selected", "seeds"]
    assert shown.index.name == "optimizer"
    assert shown.loc["sgd"].tolist() == ["21.1 [15.2, 27.1]", "0.0069", "0.0153", "5"]
    assert shown.loc["adam"].tolist() == ["–", "0.52", "0.382", "1"]
    assert present(table, ["T_SGD"], labels={"T_SGD": "T_SGD at the selected checkpoint"}).columns.tolist() == [
        "T_SGD at the selected checkpoint"
    ]
    two = table.set_index(pd.MultiIndex.from_tuples([(0.02, 0.0), (0.1, 0.01)], names=["lr", "weight_decay"]))
    assert present(two).index.names == ["learning rate", "λ"]


def test_a_table_is_shown_once_even_as_a_cells_last_expression(monkeypatch):
    """page.table displays (or glues) the table itself and returns None: a notebook cell that ends with the call
    would otherwise show the table a second time as the cell's value (02 and 03 did)."""
    shown, glued = [], []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    monkeypatch.setattr("myst_nb.glue", lambda key, obj, display=True: glued.append((key, display)))
    table = pd.DataFrame({"T_SGD": [0.0153]}, index=pd.Index(["sgd"], name="optimizer"))
    assert page.table(table) is None and len(shown) == 1 and not glued
    assert page.table(table, "e00_table") is None and len(shown) == 1 and glued == [("e00_table", True)]
    assert page.table(table, "e00_hidden", show=False) is None and glued[-1] == ("e00_hidden", False)


def test_cell_formats():
    assert format_value("selected_spread_pp", 21.149) == "21.1" and format_value("final_train_acc", 99.96) == "100.0"
    assert format_value("selected_null_p", 0.0004) == "4e-4" and format_value("x", -1.6701) == "−1.67"
    assert format_value("optimizer", "sgd") == "sgd" and format_value("anything", None) == "–"
    # the minus sign, never a negative zero; a bound at what an accuracy difference can be says it was clipped
    assert format_value("selected_spread_pp", -0.04) == "0.0" and format_value("final_gap", -4.44) == "−4.4"
    cells = present(
        pd.DataFrame({"selected_spread_pp": [61.1], "selected_ci95_low": [28.8], "selected_ci95_high": [100.0]})
    )
    assert cells.iloc[0, 0] == "61.1 [28.8, 100.0, clipped]"


def test_a_figure_carries_its_alt_text_in_its_svg():
    """page.figure writes the alt text into the SVG's title, and the book's extension reads it back from there; without
    one given, the figure describes itself from its own texts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from initmem.book.extension import svg_title

    fig, ax = plt.subplots()
    ax.set_title("selected")
    ax.set_xlabel("σ_w")
    ax.set_ylabel("test accuracy (%)")
    fig.suptitle("Test accuracy against σ_w")
    described = page.describe(fig)
    assert described == "Figure: Test accuracy against σ_w. Panels: selected (x: σ_w; y: test accuracy (%))."
    assert svg_title(page.figure_svg(fig, "SGD & Adam: <spreads>")) == "SGD & Adam: <spreads>"
    plt.close(fig)


def test_the_forest_plot_is_drawn_for_a_phone_and_clips_a_far_bound():
    """Its smallest text stays at least 9 px high in a 390 px screen's column (about 360 px), and a bound far beyond
    the other rows (C6's) ends in an arrow at the axis's edge with its value beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from initmem.study.presentation import forest

    column_px, natural_px = 360, forest.WIDTH * 96 + 2 * 0.1 * 96
    assert forest.SMALLEST_PT / 72 * 96 * min(1.0, column_px / natural_px) >= 9.0
    nan = math.nan
    rows = pd.DataFrame(
        {
            "claim": ["C1", "C6"],
            "unit": ["pp", "pp"],
            "band_low": [18.55, nan],
            "band_high": [34.45, nan],
            "paper_value": [26.5, nan],
            "size": [21.2, nan],
            "size_low": [18.8, nan],
            "size_high": [25.9, nan],
            "effect": [21.2, -10.6],
            "effect_low": [18.8, -44.5],
            "effect_high": [25.9, 23.3],
            "margin": [5.0, 0.5],
            "verdict": ["reproduced in size", "inconclusive"],
        },
        index=["C1", "C6"],
    )
    fig = forest.forest(rows, title=None)
    ax = fig.get_axes()[0]
    assert ax.get_xlim()[0] > -44.5  # the axis is not stretched to C6's bound
    assert "−44.5" in [text.get_text() for text in ax.texts]
    assert "C6: inconclusive" in forest.alt_text(rows)
    plt.close(fig)
