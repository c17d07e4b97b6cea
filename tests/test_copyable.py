"""Pages a reader can copy: the own-model page's example holds none of the book's plumbing and its code fits the
page, and every chapter's notebook to download trains what it lacks and says how to install initmem. That both run
from the installed wheel outside the repository is tests/test_dist.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")

from initmem.book import portable  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OWN_MODEL = REPO / "notebooks" / "U1_own_model.py"
#: The longest code line a page shows without a horizontal scroll bar.
MAX_CODE_LINE = 88
#: The book's own plumbing, which the cells a reader copies must not need.
PLUMBING = re.compile(r"\bglue\b|myst_nb|initmem\.book|use_book_style|\bpage\.")
HIDDEN = {"remove-cell", "remove-input", "parameters"}


def _example_cells(path: Path = OWN_MODEL) -> list:
    """The code cells a reader sees and copies (not the parameters cell, not the book's hidden cells)."""
    nb = jupytext.read(path)
    return [c for c in nb.cells if c.cell_type == "code" and not HIDDEN & set(c.metadata.get("tags", []))]


def test_the_own_model_example_holds_no_book_plumbing():
    cells = _example_cells()
    assert len(cells) >= 3
    leaks = {i: PLUMBING.findall(c.source) for i, c in enumerate(cells) if PLUMBING.search(c.source)}
    assert not leaks, f"book helpers in the cells to copy: {leaks}"
    assert PLUMBING.search("from myst_nb import glue") and PLUMBING.search("plots.use_book_style()")


def test_the_own_model_page_code_fits_the_column():
    long = [
        line
        for c in jupytext.read(OWN_MODEL).cells
        if c.cell_type == "code"
        for line in c.source.splitlines()
        if len(line) > MAX_CODE_LINE
    ]
    assert not long, f"code lines over {MAX_CODE_LINE} characters: {long}"


def test_a_notebook_to_download_trains_what_it_lacks_and_says_how_to_run():
    nb = portable.portable_notebook(REPO / "notebooks" / "04_batch_size.py")
    assert nb.cells[0].source.startswith("# 04.") and nb.cells[1].source == portable.HOW_TO_RUN
    parameters = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "train_missing = True" in parameters.source and 'preset = "smoke"' in parameters.source
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert "jupytext" not in nb.metadata and nb.metadata["kernelspec"]["name"] == "python3"
    nbformat.validate(nb)


def test_every_chapter_is_written_for_download(tmp_path):
    names = ["04_batch_size", "T1_scale_invariance", "no_such_chapter"]
    written = portable.write_portable_notebooks(REPO / "notebooks", tmp_path, names)
    assert [p.name for p in written] == ["04_batch_size.ipynb", "T1_scale_invariance.ipynb"]
    assert nbformat.read(written[0], as_version=4).cells[1].source == portable.HOW_TO_RUN
