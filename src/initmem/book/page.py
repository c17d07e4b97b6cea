"""What every notebook page shows the same way: figures with their source line, tables for readers, verdicts.

The notebooks import it as ``from initmem.book import page``:

* :func:`open_experiment` -- an experiment chapter's opening: the book's figure style, its results at the page's
  parameters, the line under its figures and the committed record to draw beside an exploration;
* :func:`figure` -- glue a figure under a key (so other pages can paste it), show it, print its :func:`source_note`
  (the results it was drawn from and the command that reproduces it); its alt text travels in the SVG's title;
* :func:`table` -- a table for readers (:func:`initmem.study.statistics.tables.present`), shown and glued;
* :func:`verdict_line` / :func:`verdict_box` -- the first-screen verdicts of a chapter and its full box;
* :func:`against_record` -- on an exploration's page, the chapter's ledger rows beside the committed record's;
* :func:`parameters` -- the values a page was computed with and what each means, in a dropdown.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..base.paths import RootError, find_repo_root
from ..study.design.layout import EXPLORE_DIR, RECORD_OUT_DIR, RECORD_RESULTS_DIR, results_paths
from .exploration import rerun_command

__all__ = [
    "VERDICT_INTRO",
    "Opening",
    "open_experiment",
    "figure",
    "figure_svg",
    "describe",
    "table",
    "verdict_line",
    "verdict_box",
    "against_record",
    "parameters",
    "source_note",
    "overrides",
]

#: The paragraph above every chapter's verdict box (MyST: its value is not shown here, where it would not render).
#:
#: :meta hide-value:
VERDICT_INTRO = (
    "Each row: the paper's statement, ours (the mean over seeds with its 95 % interval; spreads cross-fitted, their "
    "interval calibrated by simulation for the design, every raw spread against its noise null), and the verdict with the reason, by the claim's rule printed below it. The "
    "numbers and rules are the ledger's ({doc}`Paper vs this reproduction <99_reproduction>`)."
)


class Opening(NamedTuple):
    """What an experiment chapter opens with (:func:`open_experiment`)."""

    #: The experiment's combined sweep Dataset at the page's parameters.
    ds: Any
    #: The parameters the page was computed with (the preset's, replaced by those the reader set).
    parameters: dict[str, Any]
    #: The line under every figure (:func:`source_note`).
    source: str
    #: The committed record's Dataset of this chapter, to draw and tabulate beside an exploration; None on the record.
    record: Any


def open_experiment(name: str, namespace: Mapping[str, Any]) -> Opening:
    """Open experiment chapter ``name`` from its notebook's ``namespace`` (``globals()``, whose parameters cell sets
    ``preset``, ``results_dir`` and every parameter, None for the preset's value): set the book's figure style
    (:func:`initmem.study.presentation.plots.style.use_book_style`), read or run the sweep (:func:`initmem.study.costs.results.notebook_experiment`:
    committed runs are reused, missing ones trained where allowed), and return it with its parameters, the line
    under every figure and the committed record (:func:`initmem.study.costs.reuse.record_results`)."""
    from ..study.costs import results, reuse
    from ..study.presentation.plots import style

    style.use_book_style()
    ds, p = results.notebook_experiment(name, namespace)
    preset, results_dir = namespace["preset"], namespace["results_dir"]
    source = source_note(name, preset, results_dir=results_dir, parameters=p)
    return Opening(ds, p, source, reuse.record_results(name, preset, results_dir))


def figure(fig: Any, key: str, source: str | None = None, alt: str | None = None) -> None:
    """Glue ``fig`` under ``key`` (without displaying it there) as an SVG whose title is its alt text (``alt``, or
    :func:`describe` of the figure; the book's extension shows it as the image's alt text and links the image to its
    full-size SVG, :mod:`initmem.book.extension`), then show it with ``source`` printed under it, or, with no
    ``source``, only glue it (a page that pastes the figure elsewhere, ``{glue} key``, would otherwise show it twice).
    The figure is closed: the inline backend would draw it again when the cell ends."""
    import matplotlib.pyplot as plt
    from IPython.display import SVG, Markdown, display
    from myst_nb import glue

    image = SVG(figure_svg(fig, alt or describe(fig)))
    plt.close(fig)
    glue(key, image, display=False)
    if source is not None:
        display(image)
        display(Markdown(source))


def figure_svg(fig: Any, title: str) -> str:
    """``fig`` as the inline backend writes it (SVG, tight bounding box, no date), with ``title`` as the SVG's title
    (its ``<dc:title>``, which :func:`initmem.book.extension.svg_title` reads back)."""
    from IPython.core.pylabtools import print_figure

    return print_figure(fig, "svg", bbox_inches="tight", metadata={"Date": None, "Title": title})


def describe(fig: Any) -> str:
    """What ``fig`` shows, in words, from its own texts: its title, each panel's title and axis labels, and its
    caption line, e.g. ``"Figure: test accuracy against σ_w. Panels: selected (x: σ_w; y: test accuracy (%))."``."""
    panels = []
    for ax in fig.get_axes():
        if not ax.axison:
            continue
        labels = "; ".join(f"{axis}: {text}" for axis, text in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())) if text)
        panels.append(f"{ax.get_title() or 'a panel'}" + (f" ({labels})" if labels else ""))
    title = fig._suptitle.get_text() if fig._suptitle else ""
    caption = fig._supxlabel.get_text().replace("\n", " ") if fig._supxlabel else ""
    parts = [f"Figure: {title}" if title else "Figure", f"Panels: {', '.join(panels)}" if panels else "", caption]
    return ". ".join(part.rstrip(".") for part in parts if part) + "."


def table(
    frame: Any, key: str | None = None, columns: Sequence[str] | None = None, show: bool = True, **present: Any
) -> None:
    """Show ``frame`` for readers (:func:`initmem.study.statistics.tables.present` of its ``columns``), glued under ``key`` if
    given (``show=False``: glued only, for a page that pastes it elsewhere), every cell in full (pandas would cut one
    longer than 50 characters) and with one header row (a single index's name heads its column, where pandas would
    give it a row of its own).

    Returns None: a cell that ends with this call would otherwise show the table a second time, as the value of its
    last expression (the presented table is :func:`initmem.study.statistics.tables.present`'s)."""
    import pandas as pd
    from IPython.display import display
    from myst_nb import glue

    from ..study.statistics.tables import present as present_table

    shown = present_table(frame, columns, **present)
    if shown.index.nlevels == 1 and shown.index.name:
        shown = shown.rename_axis(index=None, columns=shown.index.name)
    with pd.option_context("display.max_colwidth", None):
        if key:
            glue(key, shown, display=show)
        elif show:
            display(shown)


def verdict_line(experiment: str, ds: Any, claims: list[str] | None = None, label: str | None = None) -> None:
    """The first-screen line of a chapter: each of its claims' verdicts, linking to the box
    (:func:`initmem.study.verdicts.claims.chapter_verdicts`)."""
    from IPython.display import Markdown, display

    from ..study.verdicts.claims import chapter_verdicts

    display(Markdown(chapter_verdicts(experiment, ds, claims, label)))


def verdict_box(experiment: str, ds: Any, claims: list[str] | None = None) -> None:
    """The chapter's verdict box: every row of its claims with the numbers, the reason and the rule
    (:func:`initmem.study.verdicts.claims.chapter_box`)."""
    from IPython.display import Markdown, display

    from ..study.verdicts.claims import chapter_box

    display(Markdown(f"{VERDICT_INTRO}\n\n{chapter_box(experiment, ds, claims)}"))


def source_note(
    page: str,
    preset: str | None = None,
    sources: Sequence[str] | None = None,
    results_dir: str | os.PathLike = "results",
    parameters: Mapping[str, Any] | None = None,
) -> str:
    """The line a notebook prints under each figure (MyST Markdown): the results the figure was drawn from and the
    command that reproduces it, e.g. ``data: results/cpu/NN_name.nc · reproduce: initmem experiments --preset
    cpu --only NN``; with ``parameters`` that differ from the preset's, one ``-p NAME VALUE`` per difference
    (:func:`overrides`), so that the command reproduces the page.

    A file of the committed record (``<root>/results/<preset>/``) becomes a ``{download}`` link relative to the page
    (``book/generated/<page>.ipynb``), so that the built book carries a copy of it; any other file (an exploration's,
    one in a temporary folder) is given as its path. The notebook renders its Markdown output as MyST (its metadata
    ``mystnb.render_markdown_format``).

    Args:
        page: the notebook, e.g. ``"NN_name"``.
        preset: the page's preset (None: a page without one, e.g. a theory section).
        sources: the experiments whose combined results the figure reads; default ``[page]``; ``[]``: the page
            computes its figures itself.
        results_dir: the notebook's ``results_dir``.
        parameters: the complete parameters the page was computed with (what
            :func:`initmem.study.costs.results.notebook_experiment` returns).

    >>> source_note("T1_scale_invariance", sources=[])
    'data: computed on this page · reproduce: `initmem experiments --only T1`'
    """
    sources = [page] if sources is None else list(sources)
    if sources and preset is None:
        raise ValueError(f"source_note: the results of {', '.join(sources)} need the preset they were computed at")
    files = [_result_link(results_paths(results_dir, preset, name)[1]) for name in sources]
    changed = overrides(page, preset, parameters) if preset and parameters else {}
    command = rerun_command(preset, [*sources, page], changed)
    return f"data: {', '.join(files) if files else 'computed on this page'} · reproduce: `{command}`"


def overrides(page: str, preset: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The ``parameters`` of notebook ``page`` whose values differ from ``preset``'s
    (:func:`initmem.study.design.presets.notebook_parameters`): the ``-p`` flags that reproduce the page."""
    from ..study.design.presets import notebook_parameters

    values = notebook_parameters(preset, page)
    return {key: value for key, value in parameters.items() if key in values and values[key] != value}


def _result_link(path: Path) -> str:
    """``path`` as a MyST ``{download}`` link from the book's pages when it is a file of the committed record,
    else in code font (see :func:`source_note`)."""
    try:
        root = find_repo_root()
    except RootError:
        return f"`{path}`"
    record, explore = root / RECORD_RESULTS_DIR, root / EXPLORE_DIR
    if not path.is_file() or not path.is_relative_to(record) or path.is_relative_to(explore):
        return f"`{path.relative_to(root) if path.is_relative_to(root) else path}`"
    target = Path(os.path.relpath(path, root / RECORD_OUT_DIR)).as_posix()
    return f"{{download}}`{path.relative_to(root).as_posix()} <{target}>`"


def against_record(experiment: str, ds: Any, record: Any, claims: list[str] | None = None) -> None:
    """On an exploration's page (``record`` is the committed record's Dataset of the chapter,
    :func:`initmem.study.costs.reuse.record_results`), the chapter's ledger rows measured here beside the record's
    (:func:`initmem.study.verdicts.ledger_text.against_record`); nothing on the record's own pages (``record`` None)."""
    if record is None:
        return
    from IPython.display import Markdown, display

    from ..study.verdicts.claims import chapter_table
    from ..study.verdicts.ledger_text import against_record as rows

    display(
        Markdown(
            f"**This exploration against the committed record** (preset {record.attrs.get('preset', '?')}): "
            "the chapter's ledger rows, by the same rules."
        )
    )
    display(rows(chapter_table(experiment, ds, claims), chapter_table(experiment, record, claims)))


def parameters(preset: str, values: Mapping[str, Any]) -> None:
    """What closes every experiment page: the values it was computed with and what each means
    (:data:`initmem.study.design.registry.PARAMETERS`), as a list in a dropdown (long meanings read as text, not as table
    cells)."""
    import json

    from IPython.display import Markdown, display

    from ..study.design.registry import PARAMETERS

    items = [
        f"`{key}` = `{json.dumps(value)}`\n: {PARAMETERS.get(key, '')}"
        for key, value in {"preset": preset, **values}.items()
    ]
    display(Markdown(":::{dropdown} The values of this page, and what each means\n" + "\n\n".join(items) + "\n:::"))
