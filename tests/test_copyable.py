"""Pages a reader can copy: the own-model page's example runs as it is in a fresh Python session outside the
repository and holds none of the book's plumbing, its code fits the page, and every chapter's notebook to download
runs outside the repository from an installed initmem."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")

from initmem.book import portable  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
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


def _outside_env() -> dict[str, str]:
    """A fresh session with initmem importable as if installed, and no pointer to the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("INITMEM_ROOT", "PYTHONPATH", "MPLBACKEND")}
    env.update(PYTHONPATH=str(SRC), MPLBACKEND="Agg")
    return env


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


@pytest.mark.slow
def test_the_own_model_example_runs_in_a_fresh_session_outside_the_repository(tmp_path):
    """The cells a reader copies, pasted in order into ``python -c`` in an empty folder: they run, print the spreads
    as sentences (no raw repr, no six-decimal table), and write nothing."""
    code = "\n\n".join(c.source for c in _example_cells())
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=_outside_env(), capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("spread of each seed: ") and lines[0].endswith(" pp"), proc.stdout
    assert sum(line.startswith(("SGD: spread ", "Adam: spread ")) for line in lines) == 2, proc.stdout
    assert "<xarray" not in proc.stdout and not re.search(r"\d\.\d{3}", proc.stdout), proc.stdout
    assert not list(tmp_path.iterdir())


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


@pytest.mark.slow
def test_a_downloaded_chapter_runs_outside_the_repository(tmp_path):
    """Chapter 04 as a reader downloads it, executed with papermill in an empty folder with initmem importable but no
    checkout around: it trains its smoke runs into results/ beside it and completes."""
    pytest.importorskip("papermill")
    source = tmp_path / "04_batch_size.ipynb"
    nbformat.write(portable.portable_notebook(REPO / "notebooks" / "04_batch_size.py"), str(source))
    env = _outside_env()
    env.pop("MPLBACKEND")  # the inline backend, as in Jupyter
    code = (
        "import papermill; papermill.execute_notebook('04_batch_size.ipynb', 'out.ipynb', kernel_name='python3', "
        "progress_bar=False)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "results" / "smoke" / "04_batch_size.nc").is_file()
