"""The scale ladder's figure (chapter 11): each condition's spread on every rung, the paper's number and band, and
the trend extrapolated towards the paper's scale."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from .captions import finish
from .labels import SPREAD_LABEL
from .seeds import CALIBRATED
from .style import hue_color, legend_in, panels, styled

if TYPE_CHECKING:  # the ladder's judging imports the ledger: a page drawing no ladder must not depend on it
    from ...verdicts.ladder import Rung, Trend

__all__ = ["spread_ladder"]


@styled
def spread_ladder(
    ladder: Sequence[Rung],
    ds: xr.Dataset | None = None,
    trends: Mapping[str, Trend] | None = None,
    title: str | None = "The spread up the ladder",
):
    """One panel per condition of ``ladder`` (:func:`initmem.study.verdicts.ladder.rungs`): its carrying spread (pp, mean over
    seeds with the calibrated 95 % interval; an open marker where the premise is not met) on every rung, rungs left
    to right cheapest first, the paper's number dashed and its band shaded; where ``trends`` (condition ->
    :class:`~initmem.study.verdicts.ladder.Trend`) holds the condition, its extrapolated value with its interval at the right
    end, marked as an extrapolation. ``ds``: the sweep, for the caption."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ...verdicts.ladder import CONDITIONS, PREMISE_NOT_MET, target

    conditions = list(dict.fromkeys(r.condition for r in ladder))
    names = list(dict.fromkeys((r.width, r.train_size, r.epochs) for r in ladder))
    fig, axes, strips = panels(1, len(conditions), legend="below")
    handles = []
    for i, condition in enumerate(conditions):
        ax = axes.flat[i]
        color = hue_color(CONDITIONS[condition].optimizer, i)
        mine = [r for r in ladder if r.condition == condition]
        x = np.array([names.index((r.width, r.train_size, r.epochs)) for r in mine], dtype=float)
        mean = np.array([r.spread.estimate for r in mine])
        low = np.array([r.spread.low for r in mine])
        high = np.array([r.spread.high for r in mine])
        ax.errorbar(x, mean, yerr=[mean - low, high - mean], color=color, lw=1.5, capsize=3, ls="none")
        met = np.array([r.size != PREMISE_NOT_MET for r in mine])
        ax.plot(x[met], mean[met], "o", color=color)
        ax.plot(x[~met], mean[~met], "o", mfc="white", color=color)
        paper, (band_low, band_high) = target(condition)
        ax.axhspan(band_low, band_high, color="0.5", alpha=0.15, lw=0)
        ax.axhline(paper, color="0.3", ls="--", lw=1.2)
        ticks = [f"w{w}\n{n // 1000}k img\n{e} ep" for w, n, e in names]
        trend = (trends or {}).get(condition)
        if trend is not None:
            t = trend.interval
            ax.errorbar(
                [len(names)],
                [t.estimate],
                yerr=[[t.estimate - t.low], [t.high - t.estimate]],
                color=color,
                marker="D",
                mfc="white",
                capsize=3,
                ls="none",
            )
            ticks.append(f"w{trend.at[0]}\n{trend.at[1] // 1000}k img\n(trend)")
        ax.set_xticks(range(len(ticks)), ticks)
        ax.set_xlim(-0.5, len(ticks) - 0.5)
        ax.set_ylabel(SPREAD_LABEL)
        ax.set_title(f"{CONDITIONS[condition].label} ({CONDITIONS[condition].row}: paper {paper:g} pp)", fontsize=10)
        ax.grid(False, axis="x")
    handles += [
        Line2D([], [], color="0.2", marker="o", ls="none", label=f"spread on a rung, {CALIBRATED}"),
        Line2D([], [], color="0.2", marker="o", mfc="white", ls="none", label="premise not met on the rung"),
        Line2D([], [], color="0.2", marker="D", mfc="white", ls="none", label="the rungs' log2 trend, extrapolated"),
        Line2D([], [], color="0.3", ls="--", label="the paper's number"),
        Patch(facecolor="0.5", alpha=0.3, label="the paper's band"),
    ]
    legend_in(strips[0], handles)
    return finish(
        fig, ds, title, "points: mean over seeds of each seed's cross-fitted spread on the carrying predictor"
    )
