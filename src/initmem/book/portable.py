"""Chapters to download: each notebook as an ``.ipynb`` that runs outside the repository, from an installed initmem.

The book's pages are executed notebooks whose parameters point into the checkout (``results_dir`` of the record or of
an exploration). :func:`portable_notebook` makes the copy a reader downloads instead: the jupytext source of
``notebooks/<name>.py`` without outputs, its parameters cell at the source's defaults (``preset = "smoke"``:
synthetic data, a minute on a laptop CPU) with ``train_missing = True`` (it trains the runs it lacks, into
``results/`` next to it), a first cell saying how to install initmem (the wheel the book offers,
:mod:`initmem.book.dist`, or a clone) and how to run it, and a code cell that makes its Markdown outputs plain
CommonMark with the command under each figure that works where it runs (:func:`initmem.book.plain.use_plain_markdown`:
MyST is for the book's own build only). :func:`write_portable_notebooks` writes them; the
book's extension (:mod:`initmem.book.extension`) puts them in the HTML build's ``_notebooks/`` and adds a button to
each chapter's download menu.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .dist import wheel_name

__all__ = ["PORTABLE_DIR", "HOW_TO_RUN", "PLAIN_OUTPUTS", "portable_notebook", "write_portable_notebooks"]

#: The folder of the HTML build that holds the notebooks to download.
PORTABLE_DIR = "_notebooks"
#: The first cell of every notebook to download.
HOW_TO_RUN = (
    "**Run this notebook anywhere.** It needs only an installed initmem with the book's extras: download the "
    f"package, `{wheel_name()}`, from the book (its Reproduce page links it) into this folder and run "
    f'`pip install "{wheel_name()}[book]"`, or in a clone of the repository run `pip install ".[book]"`. '
    'At `preset = "smoke"` (the default '
    'below) it trains its runs on synthetic data in about a minute on a laptop CPU; at `"cpu"` it trains on CIFAR-10 '
    "(found under `data/`, or fetched with `initmem download-data data`) for hours. The runs it trains are kept in "
    "`results/` next to it, so a second run reads them back; a chapter that analyses another's results (06, 07, "
    "99) reads them there, so run that chapter first in the same folder."
)
#: The code cell after :data:`HOW_TO_RUN` (``{name}``: the chapter).
PLAIN_OUTPUTS = (
    "# Markdown outputs for this Jupyter (the book's pages render MyST), with commands that work here\n"
    "from initmem.book.plain import use_plain_markdown\n\n"
    'use_plain_markdown("{name}")'
)
_TRAIN_MISSING = re.compile(r"^train_missing = None\b.*$", re.MULTILINE)


def portable_notebook(source: str | Path) -> Any:
    """The notebook to download for the jupytext notebook ``source`` (``notebooks/<name>.py``), as an nbformat v4
    notebook: see the module docstring."""
    import jupytext
    import nbformat

    nb = jupytext.read(source, fmt="py:percent")
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            cell.source = _TRAIN_MISSING.sub("train_missing = True  # this copy trains the runs it lacks", cell.source)
    at = 1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0
    plain = nbformat.v4.new_code_cell(PLAIN_OUTPUTS.format(name=Path(source).stem))
    nb.cells[at:at] = [nbformat.v4.new_markdown_cell(HOW_TO_RUN), plain]
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def write_portable_notebooks(notebooks_dir: str | Path, out_dir: str | Path, names: Iterable[str]) -> list[Path]:
    """Write :func:`portable_notebook` of ``<notebooks_dir>/<name>.py`` to ``<out_dir>/<name>.ipynb`` for each name
    whose source exists; returns the files written."""
    import nbformat

    out = Path(out_dir)
    written = []
    for name in names:
        source = Path(notebooks_dir) / f"{name}.py"
        if source.is_file():
            out.mkdir(parents=True, exist_ok=True)
            nbformat.write(portable_notebook(source), str(out / f"{name}.ipynb"))
            written.append(out / f"{name}.ipynb")
    return written
