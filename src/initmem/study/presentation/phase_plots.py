"""The figures of the phase diagram (experiment 10): where in the (learning rate, L2) plane SGD forgets.

* :func:`phase_heatmaps` -- the memory gap of the selected and of the final predictor in every (lr, lambda) cell,
  with the measured boundary x = 0 (``x = T_L2 - ln(|W0|/|W*|)``, :mod:`initmem.study.verdicts.phase`) and the T_SGD contours;
* :func:`boundary_collapse` -- every cell's gap against its x, with the fitted logistic and its midpoint x0, and the
  measured equilibrium norms against T5's law ``|W*| ~ (eta / lambda)^(1/4)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ..verdicts.boundary import Boundary, logistic
from ..verdicts.phase import cell_table, equilibrium_scaling
from ..verdicts.rules import BOUNDARY_BAND
from .plots.captions import finish
from .plots.overlay import RECORD_COLOR, RECORD_LABEL, record_note
from .plots.style import MUTED, legend_in, panels, styled

__all__ = ["phase_heatmaps", "boundary_collapse"]


def _grid(table: Any, column: str) -> tuple[np.ndarray, list[float], list[float]]:
    """``table[column]`` as a (weight_decay, lr) array, with the sorted lrs and weight decays (NaN in a cell the
    table lacks: the sweep's grids need not fill the rectangle)."""
    lrs = sorted(set(table.index.get_level_values("lr")))
    wds = sorted(set(table.index.get_level_values("weight_decay")))
    return _on(table, column, lrs, wds), lrs, wds


def _on(table: Any, column: str, lrs: list[float], wds: list[float]) -> np.ndarray:
    """``table[column]`` on the (weight_decay, lr) grid ``wds`` x ``lrs``, NaN where ``table`` has no such cell."""
    return np.array(
        [[table.loc[(lr, wd), column] if (lr, wd) in table.index else np.nan for lr in lrs] for wd in wds], dtype=float
    )


@styled
def phase_heatmaps(ds: xr.Dataset, title: str | None = "Where SGD with L2 forgets", record: xr.Dataset | None = None):
    """Two heat maps over (learning rate, L2 strength): the selected and the final memory gap (pp, seed mean, the
    value written in each cell), with the contour x = 0 where ``T_L2 = ln(|W0|/|W*|)`` (solid) and the T_SGD contours
    (dotted; their values in the legend, not on the cells). Each cell's value is drawn above every line, with a halo
    in the contrasting colour, so that no line hides it. The axes are the grid's cells, labelled with their values
    (lambda = 0 included); a cell without runs is left blank. ``record``:
    the committed record's Dataset, its contour x = 0 drawn muted over the cells both grids have
    (:mod:`initmem.study.presentation.plots.overlay`)."""
    from matplotlib import patheffects

    table = cell_table(ds)
    x, lrs, wds = _grid(table, "x")
    theirs = _record_x(record, lrs, wds) if record is not None else None
    t_sgd, _, _ = _grid(table, "T_SGD")
    fig, axes, strips = panels(2, height=max(2.9, 0.42 * len(wds)), legend="below")  # room for a value per cell
    gaps = [_grid(table, f"{name}_gap")[0] for name in ("selected", "final")]
    top = max(float(np.nanmax(g)) for g in gaps)
    t_levels = _t_sgd_levels(t_sgd)
    for ax, gap, name in zip(axes[0], gaps, ("validation-selected", "final epoch")):
        image = ax.imshow(
            gap, origin="lower", cmap="viridis", vmin=min(0.0, float(np.nanmin(gap))), vmax=top, aspect="auto"
        )
        ax.grid(False)  # the style's grid would run through the cells' values
        for (i, j), value in np.ndenumerate(gap):
            if not np.isfinite(value):
                continue  # no run in this cell
            light = value < 0.6 * top  # white on the dark cells, black on the bright ones
            ax.text(
                j,
                i,
                f"{value:.1f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if light else "black",
                zorder=5,  # above the contours
                path_effects=[patheffects.withStroke(linewidth=1.6, foreground="#222222" if light else "white")],
            )
        if np.nanmin(x) < 0 < np.nanmax(x):
            ax.contour(
                np.arange(len(lrs)),
                np.arange(len(wds)),
                x,
                levels=[0.0],
                colors="#d62728",
                linewidths=2.2,
                path_effects=[patheffects.withStroke(linewidth=4.0, foreground="white")],  # legible on any cell
            )
        if theirs is not None and np.nanmin(theirs) < 0 < np.nanmax(theirs):
            ax.contour(
                np.arange(len(lrs)),
                np.arange(len(wds)),
                theirs,
                levels=[0.0],
                colors=RECORD_COLOR,
                linewidths=1.4,
                linestyles="--",
            )
        if t_levels:
            ax.contour(
                np.arange(len(lrs)),
                np.arange(len(wds)),
                t_sgd,
                levels=t_levels,
                colors="white",
                linewidths=1.0,
                linestyles=_T_SGD_STYLES[: len(t_levels)],
            )
        ax.set_xticks(range(len(lrs)), [f"{v:g}" for v in lrs], rotation=45)
        ax.set_yticks(range(len(wds)), [f"{v:g}" for v in wds])
        ax.set_xlabel(r"learning rate $\eta$")
        ax.set_title(f"{name} gap (pp)")
        fig.colorbar(image, ax=ax, shrink=0.85)
    axes[0, 0].set_ylabel(r"L2 strength $\lambda$")
    from matplotlib.lines import Line2D

    overlaid = [Line2D([], [], color=RECORD_COLOR, lw=1.4, ls="--", label=f"x = 0 of the {RECORD_LABEL}")]
    legend_in(
        strips[0],
        [
            Line2D([], [], color="#d62728", lw=2.2, label=r"x = 0: $T_{L2} = \ln(|W_0|/|W^*|)$ (measured norms)"),
            *(
                Line2D([], [], color=MUTED, lw=1.0, ls=style, label=rf"$T_{{SGD}}$ = {level:.2g}")
                for level, style in zip(t_levels, _T_SGD_STYLES)
            ),
            *(overlaid if theirs is not None else []),
        ],
    )
    extra = r"gap = accuracy at the smallest minus at the largest $\sigma_w$, mean over seeds"
    return finish(fig, ds, title, record_note(record, extra) if theirs is not None else extra)


#: The line styles of the T_SGD contours, one per level (told apart in the legend).
_T_SGD_STYLES = [":", "--", "-."]


def _t_sgd_levels(t_sgd: np.ndarray) -> list[float]:
    """The T_SGD values to draw as contours: the inner of three log-spaced values over the grid's range (rounded to
    three decimals), or all of them when rounding leaves two or fewer; none when T_SGD does not vary."""
    if not np.nanmax(t_sgd) > np.nanmin(t_sgd):
        return []
    levels = np.unique(np.round(np.geomspace(np.nanmin(t_sgd[t_sgd > 0]), np.nanmax(t_sgd), 3), 3))
    return [float(v) for v in (levels[1:-1] if len(levels) > 2 else levels)]


def _record_x(record: xr.Dataset, lrs: list[float], wds: list[float]) -> np.ndarray | None:
    """The record's ``x = T_L2 - ln(|W0|/|W*|)`` on the (weight_decay, lr) grid ``wds`` x ``lrs`` (NaN where the record
    has no such cell); None when the two grids share no cell."""
    try:
        table = cell_table(record)
    except (KeyError, ValueError):  # not a phase-diagram sweep
        return None
    values = _on(table, "x", lrs, wds)
    return values if np.isfinite(values).any() else None


@styled
def boundary_collapse(ds: xr.Dataset, fit: Boundary, title: str | None = "The memory against the L2 clock's margin"):
    """Left: every cell's selected gap (seed mean, 95 % t-interval) against ``x = T_L2 - ln(|W0|/|W*|)``, coloured by
    lambda, with B1's logistic (line: plateau, x0 and w fitted; :func:`initmem.study.verdicts.boundary.fit_boundary`),
    its midpoint x0 and profile interval (band, clipped to the plotted range where unbounded), and the predicted boundary
    x = 0 (dashed) with B1's band (grey). Right: the measured equilibrium norm ``|W*|`` against T5's law
    c (eta / lambda)^(1/4) (c fitted), log-log, cells with lambda > 0."""
    import matplotlib as mpl

    table = cell_table(ds)
    fig, axes, strips = panels(2, legend="below")
    ax = axes[0, 0]
    wds = sorted(set(table.index.get_level_values("weight_decay")))
    cmap = mpl.colormaps["plasma"]
    ax.axvspan(*BOUNDARY_BAND, color="0.9", lw=0, label="B1's band around the prediction")
    ax.axvline(0.0, color=MUTED, ls="--", lw=1.0, label="predicted boundary x = 0")
    if fit.midpoint.has_bounds:
        shown = (float(table["x"].min()) - 0.5, float(table["x"].max()) + 0.5)
        ax.axvspan(
            max(fit.midpoint.low, shown[0]),
            min(fit.midpoint.high, shown[1]),
            color="#d62728",
            alpha=0.18,
            lw=0,
            label="fitted x0, 95 % profile interval",
        )
    for k, wd in enumerate(wds):
        rows = table.xs(wd, level="weight_decay")
        color = cmap(k / max(1, len(wds) - 1) * 0.85)
        yerr = np.vstack(
            [rows["selected_gap"] - rows["selected_gap_low"], rows["selected_gap_high"] - rows["selected_gap"]]
        )
        ax.errorbar(
            rows["x"],
            rows["selected_gap"],
            yerr=np.nan_to_num(yerr),
            fmt="o",
            ms=4,
            color=color,
            elinewidth=0.8,
            label=rf"$\lambda$ = {wd:g}",
        )
    if np.isfinite(fit.midpoint.estimate):
        grid = np.linspace(float(table["x"].min()), float(table["x"].max()), 200)
        ax.plot(
            grid,
            logistic(grid, fit.plateau, fit.midpoint.estimate, fit.width),
            color="#d62728",
            lw=1.4,
            label="logistic fitted",
        )
    ax.set_xlabel(r"$x = T_{L2} - \ln(|W_0|/|W^*|)$")
    ax.set_ylabel("selected gap (pp)")
    ax = axes[0, 1]
    scaling = equilibrium_scaling(table)
    decayed = table[table.index.get_level_values("weight_decay") > 0]
    if len(decayed):
        ratio = decayed.index.get_level_values("lr") / decayed.index.get_level_values("weight_decay")
        predicted = scaling["constant"] * ratio**0.25
        ax.loglog(predicted, decayed["W_star"], "o", color="C0", ms=4, label=r"cells with $\lambda > 0$")
        span = np.array([min(predicted.min(), decayed["W_star"].min()), max(predicted.max(), decayed["W_star"].max())])
        ax.loglog(span, span, color=MUTED, lw=0.8, ls="--", label="T5's law (slope 1/4 in $\\eta/\\lambda$)")
        ax.text(
            0.03,
            0.97,
            f"fitted exponent {scaling['exponent']:.2f}\n[{scaling['exponent_low']:.2f}, "
            f"{scaling['exponent_high']:.2f}]; T5: 0.25",
            transform=ax.transAxes,
            va="top",
            fontsize=8.5,
        )
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers at 1, 2, 5 x 10^k on the log axes, not powers of ten
            axis.set_major_locator(mpl.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(mpl.ticker.ScalarFormatter())
            axis.set_minor_formatter(mpl.ticker.NullFormatter())
    ax.set_xlabel(r"T5: $c\,(\eta/\lambda)^{1/4}$")
    ax.set_ylabel(r"measured $|W^*|$")
    legend_in(strips[0], [axes[0, 0], axes[0, 1]])
    extra = (
        f"logistic fitted over {fit.cells} cells: plateau {fit.plateau:.1f} pp, x0 = {fit.midpoint.estimate:.2f}"
        if np.isfinite(fit.midpoint.estimate)
        else "the logistic could not be fitted"
    )
    return finish(fig, ds, title, extra)
