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
    assert PLUMBING.search("from myst_nb import glue") and PLUMBING.search("style.use_book_style()")


def test_every_own_model_cell_ends_with_what_it_shows():
    """A cell's last statement shows its result in a script too: a ``print(...)``, ``fig.savefig(...)`` or
    ``plt.show()`` (a bare expression shows only in a notebook)."""
    import ast

    def shows(cell) -> bool:
        last = ast.parse(cell.source).body[-1]
        call = last.value if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) else None
        name = getattr(call.func, "id", None) or getattr(call.func, "attr", None) if call else None
        return name in ("print", "savefig", "show")

    silent = [c.source.splitlines()[-1] for c in _example_cells() if not shows(c)]
    assert not silent, f"cells that end without showing what they compute: {silent}"


@pytest.mark.slow
def test_the_own_model_cells_run_as_a_script_outside_the_repository(tmp_path):
    """The page's cells pasted in order into one script, run in an empty folder outside the checkout with the package
    importable: it prints the page's sentences and saves the figure beside it."""
    import os
    import subprocess
    import sys

    script = tmp_path / "own_model.py"
    script.write_text("\n\n".join(c.source for c in _example_cells()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("INITMEM_ROOT", "INITMEM_TRAIN_MISSING")}
    env |= {"PYTHONPATH": str(REPO / "src"), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("spread of each seed: ") and lines[0].endswith(" pp"), proc.stdout
    assert sum(line.startswith(("SGD: spread ", "Adam: spread ")) for line in lines) == 2, proc.stdout
    assert (tmp_path / "own_model.png").read_bytes().startswith(b"\x89PNG"), "no figure saved"


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


def test_a_notebook_to_download_shows_plain_markdown_where_it_runs(monkeypatch, tmp_path):
    """Its second cell makes the kernel's Markdown outputs CommonMark (plain.use_plain_markdown): the roles, the
    dropdown and the definition lists the book's pages print in MyST become text, and the command under a figure is
    the papermill line outside a checkout, the initmem one inside."""
    from initmem.book import plain

    nb = portable.portable_notebook(REPO / "notebooks" / "04_batch_size.py")
    assert nb.cells[2].cell_type == "code" and 'use_plain_markdown("04_batch_size")' in nb.cells[2].source
    myst = (
        "**Verdict:** C5 ({ref}`the numbers <verdict-04>`), see {doc}`Paper vs this reproduction <99_reproduction>`\n\n"
        "data: {download}`results/smoke/04_batch_size.nc <../../results/smoke/04_batch_size.nc>` · reproduce: "
        "`initmem experiments --preset smoke --only 04 -p batch_sizes '[32, 128]'`\n\n"
        ':::{dropdown} The values\n`preset` = `"smoke"`\n: the preset\n\n`seeds` = `[0]`\n: the seeds\n:::'
    )
    shown = plain.commonmark(myst)
    assert not re.search(r"\{\w+\}`|:::|^: ", shown, re.MULTILINE), shown
    assert "**Verdict:** C5 (the numbers), see Paper vs this reproduction" in shown
    assert "data: `results/smoke/04_batch_size.nc`" in shown
    assert shown.endswith('**The values**\n\n- `preset` = `"smoke"`: the preset\n\n- `seeds` = `[0]`: the seeds')
    monkeypatch.delenv("INITMEM_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # outside a checkout
    assert (
        "reproduce: `papermill 04_batch_size.ipynb 04_batch_size-run.ipynb -p preset smoke -y '{\"batch_sizes\": [32, 128]}'`"
        in plain.reproduce_here(shown, "04_batch_size")
    )
    monkeypatch.chdir(REPO)  # inside one, the initmem command works
    assert plain.reproduce_here(shown, "04_batch_size") == shown


@pytest.mark.slow
def test_a_downloaded_chapter_executed_outside_the_checkout_prints_commonmark(monkeypatch, tmp_path):
    """Chapter 04 as a reader downloads it, executed by papermill in an empty folder outside the checkout (the
    package importable): every Markdown output is plain CommonMark, and the line under each figure gives the papermill
    command that runs it there."""
    papermill = pytest.importorskip("papermill")
    path = tmp_path / "04_batch_size.ipynb"
    nbformat.write(portable.portable_notebook(REPO / "notebooks" / "04_batch_size.py"), str(path))
    for name in ("INITMEM_ROOT", "INITMEM_TRAIN_MISSING", "MPLBACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTHONPATH", str(REPO / "src"))
    papermill.execute_notebook(str(path), str(tmp_path / "out.ipynb"), cwd=str(tmp_path), progress_bar=False)
    outputs = [
        output["data"]["text/markdown"]
        for cell in nbformat.read(tmp_path / "out.ipynb", as_version=4).cells
        for output in cell.get("outputs", [])
        if "text/markdown" in output.get("data", {})
    ]
    assert outputs and not [md for md in outputs if re.search(r"\{\w+\}`|^:::|^: ", md, re.MULTILINE)]
    footers = [md for md in outputs if "reproduce: " in md]
    assert footers and all(
        "reproduce: `papermill 04_batch_size.ipynb 04_batch_size-run.ipynb -p preset smoke`" in md for md in footers
    )
