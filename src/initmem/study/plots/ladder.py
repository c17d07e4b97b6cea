"""The scale ladder's figure (chapter 11): each optimizer's spread on every rung, beside the paper's number."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from .captions import finish
from .labels import SPREAD_LABEL, label
from .seeds import CALIBRATED
from .style import hue_color, legend_in, panels, styled

if TYPE_CHECKING:  # the ladder's judging imports the ledger: a page drawing no ladder must not depend on it
    from ..ladder import Rung

__all__ = ["spread_ladder"]


@styled
def spread_ladder(ladder: Sequence[Rung], ds: xr.Dataset | None = None, title: str | None = "The spread up the ladder"):
    """Each optimizer's spread (pp, mean over seeds with its calibrated 95 % interval) on every rung of ``ladder``
    (:func:`initmem.study.ladder.rungs`), rungs left to right in their order, with the paper's number for the
    optimizer as a line and its band shaded in the optimizer's colour. ``ds``: the sweep, for the caption."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ..ladder import target

    fig, axes, strips = panels(1, legend="below")
    ax = axes[0, 0]
    names = list(dict.fromkeys((r.width, r.train_size) for r in ladder))
    optimizers = list(dict.fromkeys(r.optimizer for r in ladder))
    handles = []
    for i, optimizer in enumerate(optimizers):
        color = hue_color(optimizer, i)
        mine = [r for r in ladder if r.optimizer == optimizer]
        x = np.array([names.index((r.width, r.train_size)) for r in mine]) + (i - (len(optimizers) - 1) / 2) * 0.12
        mean = np.array([r.spread.estimate for r in mine])
        low = np.array([r.spread.low for r in mine])
        high = np.array([r.spread.high for r in mine])
        ax.errorbar(x, mean, yerr=[mean - low, high - mean], color=color, marker="o", capsize=3, lw=1.5)
        paper, (band_low, band_high) = target(optimizer)
        ax.axhspan(band_low, band_high, color=color, alpha=0.12, lw=0)
        ax.axhline(paper, color=color, ls="--", lw=1.2)
        handles.append(
            Line2D([], [], color=color, marker="o", lw=1.5, label=f"{label(optimizer)}: spread, {CALIBRATED}")
        )
        handles.append(
            Patch(facecolor=color, alpha=0.3, label=f"{label(optimizer)}: the paper's {paper:g} pp and band")
        )
    ax.set_xticks(range(len(names)), [f"width {w}\n{n:,} images" for w, n in names])
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.set_ylabel(SPREAD_LABEL)
    ax.set_xlabel("rung: network width and training images")
    ax.grid(False, axis="x")
    legend_in(strips[0], handles)
    return finish(fig, ds, title, "points: mean over seeds of each seed's cross-fitted spread; dashed: the paper")
