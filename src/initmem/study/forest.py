"""The forest plot of the ledger: every claim's measured effect against the paper's number, its band and the noise.

One row per row of :func:`initmem.study.claims.reproduction_table`. Where the paper gives a number, the row shows the
measured size (its mean over seeds and 95 % interval, black) against the paper's number (a diamond) and its band
(shaded blue: the whole interval must lie inside it for "in size", wholly outside it for "size contradicted"), and,
where the verdict's direction effect is another quantity (C2's and C4's contrasts), that effect as an open circle
with its interval (grey) just under it; where the paper gives no number, the direction effect with its interval
against the null-equivalence band around 0 (shaded grey: an interval entirely inside it is "no effect"). The verdict
is printed at the right end of every row, so the reader sees why each verdict is what it is.
Rows in other units than percentage points (C7's slope, B1's boundary in x) get a panel of their own.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .plots.captions import finish
from .plots.style import FIGURE_WIDTH, MUTED, STYLE, legend_in, pyplot, style_axes, styled

__all__ = ["VERDICT_COLORS", "forest"]

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
_ROW_HEIGHT = 0.14


def _finite(*values: Any) -> bool:
    return all(v is not None and isinstance(v, (int, float, np.floating)) and math.isfinite(float(v)) for v in values)


def _draw_row(ax, y: float, row: Any) -> None:
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
        ax.plot([low, high], [y, y], color="black", lw=1.6, zorder=4, solid_capstyle="butt")
    if _finite(centre):
        ax.plot([centre], [y], marker="o", ms=4.5, color="black", zorder=5, ls="none")
    if sized and row["claim"] in _CONTRASTS and _finite(row["effect"]):
        below = y - 0.22
        if _finite(row["effect_low"], row["effect_high"]):
            ax.plot([row["effect_low"], row["effect_high"]], [below] * 2, color=MUTED, lw=1.0, zorder=4)
        ax.plot([row["effect"]], [below], marker="o", ms=4, mfc="white", mec=MUTED, zorder=5, ls="none")


@styled
def forest(table: Any, title: str | None = "The claims against the paper", caption: str | None = None):
    """The forest plot of a :func:`~initmem.study.claims.reproduction_table` (see the module docstring)."""
    plt = pyplot()
    groups = [("pp", table[table["unit"] == "pp"]), ("other", table[table["unit"] != "pp"])]
    groups = [(name, rows) for name, rows in groups if len(rows)]
    heights = [max(len(rows), 1) * _ROW_HEIGHT + 0.5 for _, rows in groups]
    strip = 0.3  # the legend's strip under the panels (legend_in makes it as tall as the legend needs)
    fig = plt.figure(figsize=(FIGURE_WIDTH, sum(heights) + strip), layout="constrained")
    grid = fig.add_gridspec(len(groups) + 1, 1, height_ratios=[*heights, strip])
    for k, (name, rows) in enumerate(groups):
        ax = fig.add_subplot(grid[k])
        style_axes(ax)
        ys = np.arange(len(rows))[::-1]
        for y, (_, row) in zip(ys, rows.iterrows()):
            _draw_row(ax, float(y), row)
            ax.annotate(
                row["verdict"],
                xy=(1.01, float(y)),
                xycoords=("axes fraction", "data"),
                va="center",
                fontsize=STYLE["legend.fontsize"],
                color=VERDICT_COLORS.get(row["verdict"], MUTED),
            )
        ax.axvline(0.0, color=MUTED, lw=0.8, zorder=2)
        ax.set_yticks(ys, list(rows.index))
        ax.set_ylim(-0.6, len(rows) - 0.4)
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
    legend_in(keys, legend, ncol=4)
    return finish(fig, caption or "", title)
