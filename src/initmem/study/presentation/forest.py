"""The forest plot of the ledger: every claim's measured effect against the paper's number, its band and the noise.

One row per row of :func:`initmem.study.verdicts.claims.reproduction_table`. Where the paper gives a number, the row shows the
measured size (its mean over seeds and 95 % interval, black) against the paper's number (a diamond) and its band
(shaded blue: the whole interval must lie inside it for "in size", wholly outside it for "size contradicted"), and,
where the verdict's direction effect is another quantity (C2's and C4's contrasts), that effect as an open circle
with its interval (grey) just under it; where the paper gives no number, the direction effect with its interval
against the null-equivalence band around 0 (shaded grey: an interval entirely inside it is "no effect"). The verdict
is printed under every row's name, in its colour, so the reader sees why each verdict is what it is.
Rows in other units than percentage points (C7's slope, B1's boundary in x) get a panel of their own.

The figure is drawn for a phone: :data:`WIDTH` inches wide, so that shown in a 390 px wide screen its smallest text
(:data:`SMALLEST_PT`) is still at least 9 px high. An interval far wider than the others (C6's) would squeeze every
row into a sliver: each panel's axis spans the rows' estimates and bands (:func:`_window`), and a bound beyond it is
drawn as an arrow at the axis's edge with its value printed beside.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...base.numbers import decimal
from .plots.captions import finish
from .plots.style import MUTED, legend_in, pyplot, style_axes, styled

__all__ = ["VERDICT_COLORS", "WIDTH", "SMALLEST_PT", "forest", "alt_text"]

#: The colour of each verdict's label.
VERDICT_COLORS = {
    "reproduced in size": "#1a7f37",
    "reproduced in direction": "#2f6fb5",
    "size contradicted": "#9a6700",
    "not reproduced": "#b42318",
    "premise not met": "#6e5494",
    "inconclusive": "0.35",
}
#: The rows whose verdict tests a direction effect other than the size shown (a contrast between two conditions).
_CONTRASTS = ("C2", "C4")
_BAND = "#9ec5ea"
_NULL = "0.85"
#: Height of one row (inches): its name and its verdict under it.
_ROW_HEIGHT = 0.42
#: Width of the figure (inches): shown at about its natural size in a phone's column (about 360 px of a 390 px screen).
WIDTH = 4.2
#: The smallest text of the figure (points): the verdicts, the legend and the clipped bounds.
SMALLEST_PT = 9.5
#: The share of a panel's span added on each side of its estimates and bands.
_PAD = 0.08


def _finite(*values: Any) -> bool:
    return all(v is not None and isinstance(v, (int, float, np.floating)) and math.isfinite(float(v)) for v in values)


def _window(rows: Any) -> tuple[float, float]:
    """A panel's axis range: every row's estimate (size and effect) and band, 0, and the null-equivalence band,
    padded by :data:`_PAD`; an interval's bound may lie beyond it (drawn clipped, :func:`_interval`)."""
    values = [0.0]
    for _, row in rows.iterrows():
        values += [float(row[k]) for k in ("size", "effect", "band_low", "band_high", "paper_value") if _finite(row[k])]
        if _finite(row["margin"]):
            values += [-float(row["margin"]), float(row["margin"])]
    low, high = min(values), max(values)
    pad = _PAD * (high - low or 1.0)
    return low - pad, high + pad


def _interval(ax, y: float, low: float, high: float, window: tuple[float, float], **line: Any) -> None:
    """An interval's bar at height ``y``, clipped to ``window``: a bound beyond it ends in an arrow at the edge, with
    the bound's value printed beside the arrow."""
    ax.plot([max(low, window[0]), min(high, window[1])], [y, y], solid_capstyle="butt", **line)
    for bound, edge, marker, align in ((low, window[0], "<", "left"), (high, window[1], ">", "right")):
        if (bound < edge) if marker == "<" else (bound > edge):
            ax.plot([edge], [y], marker=marker, ms=6, color=line.get("color", "black"), zorder=6, ls="none")
            ax.annotate(
                decimal(bound),
                xy=(edge, y),
                xytext=(4 if align == "left" else -4, 5),
                textcoords="offset points",
                ha=align,
                va="bottom",
                fontsize=SMALLEST_PT,
                color=line.get("color", "black"),
            )


def _draw_row(ax, y: float, row: Any, window: tuple[float, float]) -> None:
    """One ledger row at height ``y``: the band and number of the paper, or the null band, and ours."""
    sized = _finite(row["band_low"], row["band_high"])
    if sized:
        ax.add_patch(
            pyplot().Rectangle(
                (row["band_low"], y - 0.32), row["band_high"] - row["band_low"], 0.64, color=_BAND, lw=0, zorder=1
            )
        )
        if _finite(row["paper_value"]):
            ax.plot([row["paper_value"]], [y], marker="D", ms=5, color="#1f4e79", zorder=3, ls="none")
        centre, low, high = row["size"], row["size_low"], row["size_high"]
    else:
        margin = row["margin"]
        if _finite(margin):
            ax.add_patch(pyplot().Rectangle((-margin, y - 0.32), 2 * margin, 0.64, color=_NULL, lw=0, zorder=1))
        centre, low, high = row["effect"], row["effect_low"], row["effect_high"]
    if _finite(low, high):
        _interval(ax, y, float(low), float(high), window, color="black", lw=1.6, zorder=4)
    if _finite(centre):
        ax.plot([centre], [y], marker="o", ms=4.5, color="black", zorder=5, ls="none")
    if sized and row["claim"] in _CONTRASTS and _finite(row["effect"]):
        below = y - 0.22
        if _finite(row["effect_low"], row["effect_high"]):
            _interval(ax, below, float(row["effect_low"]), float(row["effect_high"]), window, color=MUTED, lw=1.0)
        ax.plot([row["effect"]], [below], marker="o", ms=4, mfc="white", mec=MUTED, zorder=5, ls="none")


def _label_rows(ax, rows: Any, ys: np.ndarray) -> None:
    """Each row's name as its tick label, and its verdict under it in the verdict's colour."""
    ax.set_yticks(ys, list(rows.index))
    for label in ax.get_yticklabels():
        label.set_verticalalignment("bottom")
    for y, verdict in zip(ys, rows["verdict"]):
        ax.annotate(
            verdict,
            xy=(0, float(y)),
            xycoords=("axes fraction", "data"),
            xytext=(-3.5, -2),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize=SMALLEST_PT,
            color=VERDICT_COLORS.get(verdict, MUTED),
        )


@styled
def forest(table: Any, title: str | None = "The claims against the paper", caption: str | None = None):
    """The forest plot of a :func:`~initmem.study.verdicts.claims.reproduction_table` (see the module docstring)."""
    plt = pyplot()
    groups = [("pp", table[table["unit"] == "pp"]), ("other", table[table["unit"] != "pp"])]
    groups = [(name, rows) for name, rows in groups if len(rows)]
    heights = [max(len(rows), 1) * _ROW_HEIGHT + 0.5 for _, rows in groups]
    strip = 0.3  # the legend's strip under the panels (legend_in makes it as tall as the legend needs)
    fig = plt.figure(figsize=(WIDTH, sum(heights) + strip), layout="constrained")
    grid = fig.add_gridspec(len(groups) + 1, 1, height_ratios=[*heights, strip])
    for k, (name, rows) in enumerate(groups):
        ax = fig.add_subplot(grid[k])
        style_axes(ax)
        ys = np.arange(len(rows))[::-1].astype(float)
        window = _window(rows)
        for y, (_, row) in zip(ys, rows.iterrows()):
            _draw_row(ax, float(y), row, window)
        _label_rows(ax, rows, ys)
        ax.axvline(0.0, color=MUTED, lw=0.8, zorder=2)
        ax.set_xlim(*window)
        ax.set_ylim(-0.7, len(rows) - 0.4)
        ax.set_xlabel("percentage points" if name == "pp" else "C7: slope difference; B1: boundary x0")
        ax.grid(axis="x", color="0.92", lw=0.6)
    legend = [
        plt.Rectangle((0, 0), 1, 1, color=_BAND, lw=0, label="paper ◆, its band"),
        plt.Rectangle((0, 0), 1, 1, color=_NULL, lw=0, label="no-effect band"),
        plt.Line2D([], [], color="black", marker="o", ms=4.5, lw=1.6, label="ours, 95 % CI"),
        plt.Line2D([], [], color=MUTED, marker="o", ms=4, mfc="white", lw=1.0, label="effect tested"),
    ]
    keys = fig.add_subplot(grid[-1])
    keys.axis("off")
    legend_in(keys, legend, ncol=2)
    return finish(fig, caption or "", title)


def alt_text(table: Any) -> str:
    """What the forest plot of ``table`` shows, in words (the figure's alt text): each row with its verdict."""
    rows = "; ".join(f"{key}: {verdict}" for key, verdict in table["verdict"].items())
    return (
        "Forest plot of the ledger: for each claim, our estimate with its 95 % interval against the paper's number "
        f"and band, or against the no-effect band where the paper gives no number. Verdicts: {rows}."
    )
