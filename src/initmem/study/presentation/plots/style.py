"""The figures' style and layout: legible at the book's width, legends outside the data, log axes with plain numbers.

The notebooks call :func:`use_book_style`: their figures are SVG, shown in the book's content column (about
:data:`BOOK_COLUMN_PX` pixels wide). Every figure is :data:`FIGURE_WIDTH` inches wide, so a browser shows it at its
natural size (96 px per inch), and no text of :data:`STYLE` falls below :data:`MIN_TEXT_PX`, even in a somewhat
narrower column. :func:`panels` makes a figure of panels with strips for legends under them, which :func:`legend_in`
fills; :func:`styled` draws a figure function under :data:`STYLE` (``matplotlib.rc_context``: nothing global changes,
except by :func:`use_book_style`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ....run import optimizers
from .labels import FIELD_LABELS, wrap_words

__all__ = [
    "BOOK_COLUMN_PX",
    "MIN_TEXT_PX",
    "PX_PER_INCH",
    "FIGURE_WIDTH",
    "PANEL_HEIGHT",
    "SEED_POINTS_MAX",
    "MIN_CAPTION_PT",
    "MIN_TICK_PT",
    "STYLE",
    "MUTED",
    "SEED_MARKERSIZE",
    "DODGE",
    "pyplot",
    "styled",
    "use_book_style",
    "hue_color",
    "panels",
    "legend_in",
    "style_axes",
    "log_axis",
    "sigma_axis",
]

#: Width (CSS px) of the book's content column, in which a figure is shown.
BOOK_COLUMN_PX = 700
#: The smallest text (CSS px) a figure may show in that column.
MIN_TEXT_PX = 9.0
#: CSS px per inch: a browser shows an SVG of ``w`` inches ``96 w`` px wide (matplotlib writes its size in points).
PX_PER_INCH = 96
#: Width of every figure (inches): the book's column, less the padding the inline backend adds when it saves a
#: figure (``savefig.pad_inches``, 0.1 in each side), so that a figure is shown at its natural size.
FIGURE_WIDTH = BOOK_COLUMN_PX / PX_PER_INCH - 2 * 0.1
#: Height of one row of panels (inches).
PANEL_HEIGHT = 2.5
#: Up to this many seeds every seed is drawn as a point; with more, the seed mean's 95 % interval (calibrated for cross-fitted spreads).
SEED_POINTS_MAX = 5
#: The smallest sizes (points, as shown in the book's column) of the caption line and of the tick labels.
MIN_CAPTION_PT = 9.0
MIN_TICK_PT = 10.0

#: The matplotlib settings every figure is drawn under (:func:`styled`, :func:`use_book_style`).
STYLE: dict[str, Any] = {
    "figure.dpi": PX_PER_INCH,
    "savefig.dpi": 2 * PX_PER_INCH,  # a PNG, where one is made, at twice the resolution it is shown at
    "svg.hashsalt": "initmem",  # the same SVG for the same figure (no random ids)
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "xtick.labelsize": 10,  # at least MIN_TICK_PT
    "ytick.labelsize": 10,
    "legend.fontsize": 9.5,
    "legend.title_fontsize": 9.5,
    "legend.frameon": False,
    "figure.titlesize": 11.5,
    "figure.labelsize": 9,  # the caption line (fig.supxlabel): at least MIN_CAPTION_PT
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.5,
    "lines.markersize": 4.5,
    "errorbar.capsize": 2,
}

#: Grey of the caption line and of the legend entries that explain marks rather than name a line.
MUTED = "0.35"
#: Size of a seed's point, and the factor between the points of neighbouring lines on a log axis (so they do not
#: hide each other).
SEED_MARKERSIZE = 3.0
DODGE = 1.04
#: Height (inches) of one line of legend text, with its spacing.
_LEGEND_LINE = 0.225


def pyplot():
    """``matplotlib.pyplot``, imported on first use (importing this module imports no matplotlib)."""
    import matplotlib.pyplot as plt

    return plt


def styled(draw: Callable[..., Any]) -> Callable[..., Any]:
    """``draw`` under :data:`STYLE` (``matplotlib.rc_context``): every element it makes, legends included."""

    @functools.wraps(draw)
    def styled(*args: Any, **kwargs: Any) -> Any:
        with pyplot().rc_context(STYLE):
            return draw(*args, **kwargs)

    return styled


def use_book_style() -> None:
    """Make a notebook's figures legible in the book: the inline backend's figures as SVG (without a date, with
    fixed ids: the same figure gives the same file) and :data:`STYLE` for every figure, those drawn with plain
    matplotlib included. Call it once, in the notebook's first code cell; outside IPython it sets the style only.

    myst-nb's ``glue(name, fig)`` keeps working: it formats the figure with the same inline backend, so a glued
    figure is SVG too. Never force a non-interactive backend (Agg) instead: glue would paste text.
    """
    import matplotlib as mpl

    pyplot()  # importing pyplot activates the inline backend, which sets its own formats: choose ours after it
    mpl.rcParams.update(STYLE)
    from IPython import get_ipython

    if get_ipython() is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("svg", metadata={"Date": None})


def hue_color(name: Any, i: int) -> str:
    """The colour of line ``i``, named ``name``: an optimizer's own (its record's, :mod:`initmem.run.optimizers`),
    else the cycle's."""
    found = optimizers.lookup(str(name))
    return f"C{i % 10}" if found is None else found.colour


def panels(
    ncols: int = 1, nrows: int = 1, *, height: float = PANEL_HEIGHT, legend: str | None = None, sharey: bool = False
):
    """A styled figure of ``nrows`` x ``ncols`` panels, :data:`FIGURE_WIDTH` wide, in constrained layout, with room
    for legends outside the data.

    Args:
        height: of one row of panels (inches).
        legend: None (no legend), ``"below"``: one strip under all panels, for the figure's one legend, or
            ``"each"``: a strip under each panel of the last row, for one legend per column. :func:`legend_in`
            fills a strip and makes the figure as much taller as its legend needs.
        sharey: the panels share the y axis (tick labels on the left column only).

    Returns:
        ``(fig, axes, strips)``: ``axes`` an (nrows, ncols) array of panels; ``strips`` the legend strips (axes
        without axis; empty without ``legend``).
    """
    if legend not in (None, "below", "each"):
        raise ValueError(f"legend: {legend!r} is none of None, 'below', 'each'")
    strip = _strip_height(1) if legend else 0.0
    plt = pyplot()
    with plt.rc_context(STYLE):
        fig = plt.figure(figsize=(FIGURE_WIDTH, nrows * height + strip), layout="constrained")
        ratios = [height] * nrows + ([strip] if legend else [])
        grid = fig.add_gridspec(len(ratios), ncols, height_ratios=ratios)
        axes = np.empty((nrows, ncols), dtype=object)
        for row, col in np.ndindex(nrows, ncols):
            axes[row, col] = fig.add_subplot(grid[row, col], sharey=axes[0, 0] if sharey and (row or col) else None)
            if sharey and col:
                axes[row, col].tick_params(labelleft=False)
        strips = (
            [fig.add_subplot(grid[-1, :])]
            if legend == "below"
            else [fig.add_subplot(grid[-1, col]) for col in range(ncols)]
            if legend == "each"
            else []
        )
    for ax in axes.flat:
        style_axes(ax)
    for ax in strips:
        ax.axis("off")
    return fig, axes, strips


def _strip_height(lines: int) -> float:
    """Height (inches) of a legend strip for ``lines`` lines of legend text."""
    return 0.1 + _LEGEND_LINE * lines


def style_axes(ax) -> None:
    """Tick labels at :data:`STYLE`'s size: matplotlib makes ticks when it draws, after ``rc_context`` has ended."""
    ax.tick_params(labelsize=STYLE["xtick.labelsize"])


def legend_in(strip, items, ncol: int | None = None):
    """A legend in ``strip`` (a legend strip of :func:`panels`), in :data:`STYLE`'s legend style: of the labelled
    artists of ``items`` (an Axes, or a list of Axes and artists), each label once, in as many columns as fit the strip
    unless ``ncol`` is given; labels too long for the strip even in one column are wrapped. The strip's row, and the
    figure, grow to the legend's height. Returns the legend (None when there is nothing to list)."""
    artists = []
    for item in items if isinstance(items, Sequence) else [items]:
        artists += item.get_legend_handles_labels()[0] if hasattr(item, "get_legend_handles_labels") else [item]
    unique = {a.get_label(): a for a in artists if not str(a.get_label()).startswith("_")}
    if not unique:
        return None
    width = strip.get_position().width * strip.figure.bbox.width  # px, before the layout: at most the final width
    renderer = strip.figure.canvas.get_renderer()
    labels = list(unique)
    for columns in [ncol] if ncol else range(len(unique), 0, -1):
        legend = strip.legend(
            unique.values(),
            labels,
            loc="upper center",
            ncol=columns,
            frameon=STYLE["legend.frameon"],
            fontsize=STYLE["legend.fontsize"],
        )
        if ncol or columns == 1 or legend.get_window_extent(renderer).width <= width:
            break
        legend.remove()
    if not ncol and columns == 1 and legend.get_window_extent(renderer).width > width:  # too wide even in one column
        legend.remove()
        em = STYLE["legend.fontsize"] * strip.figure.dpi / 72
        labels = [wrap_words(text, int(width / (0.55 * em)) - 4) for text in labels]  # less the handle's 4 ems
        legend = strip.legend(
            unique.values(),
            labels,
            loc="upper center",
            ncol=1,
            frameon=STYLE["legend.frameon"],
            fontsize=STYLE["legend.fontsize"],
        )
    lines = sum(text.count("\n") + 1 for text in labels) if columns == 1 else math.ceil(len(labels) / columns)
    _grow_strip(strip, lines)
    return legend


def _grow_strip(strip, lines: int) -> None:
    """Make ``strip``'s row of the grid, and the figure with it, tall enough for ``lines`` lines of legend."""
    grid = strip.get_subplotspec().get_gridspec()
    ratios = list(grid.get_height_ratios())
    needed = _strip_height(lines)
    if needed > ratios[-1]:
        figure = strip.figure
        figure.set_figheight(figure.get_figheight() + needed - ratios[-1])
        grid.set_height_ratios([*ratios[:-1], needed])


def log_axis(ax, axis: str = "x", ticks: Sequence[float] | None = None, base: float = 10) -> None:
    """A log axis with plain-number labels (no crowded minor labels); ``ticks``: label exactly these."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    getattr(ax, f"set_{axis}scale")("log", base=base)
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_minor_formatter(NullFormatter())
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    if ticks is not None:
        ticks = sorted({float(t) for t in np.asarray(ticks, float).ravel() if np.isfinite(t) and t > 0})
        if ticks:
            getattr(ax, f"set_{axis}ticks")(ticks, [f"{t:g}" for t in ticks])


def sigma_axis(ax, sigmas: Sequence[float], he: bool = True) -> None:
    """x: sigma_w on a log axis labelled at ``sigmas``; ``he``: He initialization (sqrt 2) dashed, if in range."""
    log_axis(ax, "x", sigmas)
    ax.set_xlabel(FIELD_LABELS["sigma_w"])
    if he and np.min(sigmas) <= np.sqrt(2) <= np.max(sigmas):
        ax.axvline(np.sqrt(2), color="0.7", lw=0.8, ls="--")
