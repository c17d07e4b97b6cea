"""The figures of the spread against what should erase it: the training length, the learning rate and L2 strength,
a swept field (batch size, learning rate), and the forgetting clocks.

Each function returns a :class:`matplotlib.figure.Figure` like those of :mod:`initmem.study.presentation.plots.figures`; the
spread is each seed's cross-fitted spread over sigma_w (:func:`~initmem.study.presentation.plots.seeds.seed_spread`), its mean over
seeds drawn with the seeds as points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ...statistics.analysis import FAMILY_CLOCK
from ...statistics.stats import seed_mean
from .captions import caption_many, finish
from .labels import (
    CLOCK_FORMULAS,
    FIELD_LABELS,
    PREDICTORS,
    SPREAD_LABEL,
    SPREAD_VARS,
    VAR_LABELS,
    field_label,
    label,
    var_title,
)
from .overlay import plain
from .seeds import (
    CALIBRATED,
    check_dims,
    dodge_factor,
    estimator_handles,
    mean_and_seeds,
    reduce_other,
    seed_count,
    seed_spread,
)
from .style import STYLE, hue_color, legend_in, log_axis, panels, pyplot, sigma_axis, style_axes, styled

__all__ = ["spread_vs_horizon", "spread_heatmap", "spread_vs", "spread_vs_clocks"]

_FAMILY_MARKERS = {"SGD": "o", "SGD+L2": "s", "adaptive": "^"}
#: The widest grid (columns) of :func:`spread_heatmap` whose cells still have room for the clock's line.
_CLOCK_COLUMNS = 3
_FAMILY_CLOCK_TITLES = {
    "SGD": "plain SGD's clock",
    "SGD+L2": "SGD with L2's clock",
    "adaptive": "adaptive optimizers' clock",
}


# --- 02: spread against the training length ----------------------------------------------------------------------------
@styled
def spread_vs_horizon(
    h: xr.Dataset, title: str | None = "Spread against training length", paper_epochs: float | None = None
):
    """Left: the spread over sigma_w of the selected and final test accuracy (mean over seeds of each seed's spread,
    the seeds as points) against the horizon T (epochs), from :func:`initmem.study.statistics.analysis.within_horizons`; the
    top axis shows the T_SGD clock reached. Right: the selected test accuracy (seed mean) against sigma_w at each
    horizon."""
    from matplotlib.ticker import NullFormatter

    check_dims(h, "horizon", "sigma_w")
    T = h["horizon"].values
    fig, axes, strips = panels(2, legend="each")
    ax = axes[0, 0]
    for j, var in enumerate(SPREAD_VARS):
        mean_and_seeds(ax, T, seed_spread(h, var, ("horizon",)), f"C{j}", PREDICTORS[var], dodge_factor(j, 2))
    log_axis(ax, "x", T)
    ax.set_xlabel(FIELD_LABELS["horizon"])
    ax.set_ylabel(SPREAD_LABEL)
    ax.set_ylim(bottom=0)
    if "T_SGD" in h:
        clock = h["T_SGD"].mean([d for d in h["T_SGD"].dims if d != "horizon"]).values
        top = ax.secondary_xaxis("top")
        top.xaxis.set_minor_formatter(NullFormatter())
        every = slice(None, None, max(1, len(T) // 4))
        top.set_xticks(T[every], [f"{c:.2g}" for c in clock[every]])
        top.set_xlabel(f"{FIELD_LABELS['T_SGD']} reached")
        style_axes(top)
    legend_in(strips[0], [ax, *estimator_handles(seed_count(h), one="one seed's spread", interval=CALIBRATED)])
    ax2 = axes[0, 1]
    cmap = pyplot().get_cmap("magma_r")
    for k, t in enumerate(T):
        da = reduce_other(h["selected_test_acc"].sel(horizon=t), ("sigma_w", "seed"))
        ax2.plot(
            da["sigma_w"].values,
            seed_mean(da).values,
            marker="o",
            color=cmap(0.2 + 0.7 * k / max(1, len(T) - 1)),
            label=f"$T$ = {int(t)}",
        )
    sigma_axis(ax2, h["sigma_w"].values, he=False)
    ax2.set_ylabel(VAR_LABELS["selected_test_acc"])
    ax2.set_title("mean over seeds")
    legend_in(strips[1], ax2)
    extra = r"selection restricted to epochs $\leq T$ of one long run per $\sigma_w$ and seed"
    if paper_epochs:
        extra += f"; the paper trains {paper_epochs:g} epochs"
    return finish(fig, h, title, extra)


# --- 03: spread over (lr, lambda) --------------------------------------------------------------------------------------
@styled
def spread_heatmap(
    ds: xr.Dataset,
    x: str = "lr",
    y: str = "weight_decay",
    variables: Sequence[str] = SPREAD_VARS,
    clock: str | None = "T_L2",
    title: str | None = r"Spread over $\sigma_w$ against learning rate and L2 strength",
    record: xr.Dataset | None = None,
):
    """One heatmap per variable: the spread in each (``x``, ``y``) cell (mean over seeds of each seed's spread, pp,
    as in the tables), annotated with the spread and (``clock``, on grids of at most :data:`_CLOCK_COLUMNS` columns,
    where it fits) the clock the cell's runs reached. ``record``: the
    committed record's Dataset; its spread is written, muted, under the spread of every cell both grids have (in place
    of the clock; :mod:`initmem.study.presentation.plots.overlay`)."""
    check_dims(ds, "sigma_w", x, y)
    fig, axes, _ = panels(len(variables), height=3.0)
    for ax, var in zip(axes.flat, variables):
        wide = ds.sizes[x] > _CLOCK_COLUMNS
        clock_var = f"{var.split('_')[0]}_{clock}" if clock and record is None and not wide else None
        grid = seed_mean(seed_spread(ds, var, (x, y))).transpose(y, x)
        theirs = _record_cells(record, var, x, y) if record is not None else {}
        top = float(np.nanmax(grid.values)) if np.isfinite(grid.values).any() else 1.0
        image = ax.imshow(grid.values, origin="lower", cmap="viridis", aspect="auto", vmin=0, vmax=max(1.0, top))
        for (iy, ix), v in np.ndenumerate(grid.values):
            cell = (plain(grid[x].values[ix]), plain(grid[y].values[iy]))
            text = "n/a" if not np.isfinite(v) else f"{v:.1f}"
            if clock_var in ds:
                reached = ds[clock_var].sel({x: cell[0], y: cell[1]})
                text += f"\n{FIELD_LABELS.get(clock, clock)} = {float(reached.mean(skipna=True)):.2g}"
            color = "w" if np.isfinite(v) and v < 0.6 * top else "k"
            ax.text(
                ix,
                iy,
                text,
                ha="center",
                va="bottom" if cell in theirs else "center",
                fontsize=STYLE["legend.fontsize"],
                color=color,
            )
            if cell in theirs:
                ax.text(
                    ix,
                    iy,
                    f"({theirs[cell]:.1f})",
                    ha="center",
                    va="top",
                    fontsize=STYLE["legend.fontsize"],
                    color=color,
                    alpha=0.7,
                    fontstyle="italic",
                )
        ax.set_xticks(range(grid.sizes[x]), [f"{v:g}" for v in grid[x].values], rotation=45 if wide else 0)
        ax.set_yticks(range(grid.sizes[y]), [f"{v:g}" for v in grid[y].values])
        ax.set_xlabel(field_label(x))
        ax.set_ylabel(field_label(y))
        ax.grid(False)
        ax.set_title(PREDICTORS.get(var, var_title(var)))
        bar = fig.colorbar(image, ax=ax, shrink=0.85)
        bar.set_label(SPREAD_LABEL)
        style_axes(bar.ax)
    extra = "cells: mean over seeds of each seed's spread"
    if clock and ds.sizes[x] > _CLOCK_COLUMNS:
        extra += f"; the {field_label(clock)} clock of each cell is in the table"
    if record is not None:
        extra += "; in brackets, italic: the committed record's" + (
            f" (preset {record.attrs['preset']})" if "preset" in record.attrs else ""
        )
    return finish(fig, ds, title, extra)


def _record_cells(record: xr.Dataset, var: str, x: str, y: str) -> dict[tuple[Any, Any], float]:
    """``{(x value, y value): spread}`` of the record's cells (mean over seeds of each seed's spread, pp); empty when
    the record lacks the variable or the grid's dimensions."""
    if var not in record or x not in record.dims or y not in record.dims or "sigma_w" not in record.dims:
        return {}
    grid = seed_mean(seed_spread(record, var, (x, y)))
    return {(plain(a), plain(b)): float(grid.sel({x: a, y: b})) for a in grid[x].values for b in grid[y].values}


# --- 04: spread against one swept field --------------------------------------------------------------------------------
@styled
def spread_vs(
    ds: xr.Dataset,
    dim: str = "batch_size",
    variables: Sequence[str] = SPREAD_VARS,
    clock: str | None = "T_SGD",
    title: str | None = None,
    logx: bool = True,
):
    """The spread over sigma_w (mean over seeds of each seed's spread, the seeds as points) against ``dim``; with
    ``clock``, a second panel shows each spread against the clock of its predictor (at the selected checkpoint for
    the selected predictor, at the end for the final one), one point per ``dim`` value."""
    check_dims(ds, "sigma_w", dim)
    n = 2 if clock else 1
    fig, axes, strips = panels(n, legend="below")
    values = ds[dim].values.astype(float)
    for k in range(n):
        ax = axes[0, k]
        for j, var in enumerate(variables):
            xs = values if k == 0 else _clock_reached(ds, f"{var.split('_')[0]}_{clock}", dim)
            mean_and_seeds(
                ax,
                xs,
                seed_spread(ds, var, (dim,)).transpose(dim, ...),
                f"C{j}",
                PREDICTORS.get(var, var_title(var)),
                dodge_factor(j, len(variables)),
            )
        if logx and all(np.all(line.get_xdata() > 0) for line in ax.lines):
            log_axis(ax, "x", values if k == 0 else None, base=2 if k == 0 and dim == "batch_size" else 10)
        ax.set_xlabel(field_label(dim) if k == 0 else f"{CLOCK_FORMULAS.get(clock, clock)} reached")
        ax.set_ylabel(SPREAD_LABEL)
        ax.set_ylim(bottom=0)
    legend_in(strips[0], [axes[0, 0], *estimator_handles(seed_count(ds), one="one seed's spread", interval=CALIBRATED)])
    return finish(fig, ds, title or rf"Spread over $\sigma_w$ against the {field_label(dim)}")


def _clock_reached(ds: xr.Dataset, clock: str, dim: str) -> np.ndarray:
    """The mean of ``ds[clock]`` at each value of ``dim`` (over sigma_w and seeds)."""
    return np.array([float(ds[clock].sel({dim: v}).mean(skipna=True)) for v in ds[dim].values])


# --- 07: spread against the clocks -------------------------------------------------------------------------------------
@styled
def spread_vs_clocks(
    table: Any,
    clocks: Sequence[str] = ("T_SGD", "T_L2", "T_adapt"),
    var: str = "selected",
    title: str | None = "Spread against the forgetting clocks, every sweep",
    source: Mapping[str, xr.Dataset] | xr.Dataset | str | None = None,
    note: str | None = None,
):
    """One panel per clock: the spread over sigma_w of every configuration (a row of
    :func:`initmem.study.statistics.analysis.clock_table`) against the clock it reached (log axis; zero clocks are drawn at
    the left edge). Colour: optimizer; marker: family (SGD, SGD+L2, adaptive); the family whose own clock a
    panel shows is drawn filled, the others hollow. ``source``: the Datasets (name -> Dataset) the table was
    built from, for the caption (:func:`~initmem.study.presentation.plots.captions.caption_many`), or one Dataset, or a caption string."""
    import pandas as pd
    from matplotlib.lines import Line2D

    frame = pd.DataFrame(table)
    groups = list(frame.groupby(["optimizer", "family"], sort=False)) if len(frame) else []
    fig, axes, strips = panels(len(clocks), legend="below", sharey=True)
    owners = {clock: family for family, clock in FAMILY_CLOCK.items()}
    for ax, clock in zip(axes.flat, clocks):
        ax.set_xlabel(CLOCK_FORMULAS.get(clock, clock))
        if frame.empty or clock not in frame:
            ax.set_title(f"{field_label(clock)}: no data")
            continue
        values = frame[clock].to_numpy(float)
        positive = values[values > 0]
        floor = positive.min() / 3 if positive.size else 1e-6
        for (opt, family), rows in groups:
            xs = rows[clock].to_numpy(float)
            own = FAMILY_CLOCK.get(family) == clock
            color = hue_color(opt, 0)
            ax.scatter(
                np.where(xs > 0, xs, floor),
                rows[f"{var}_spread_pp"].to_numpy(float),
                s=30,
                linewidths=1.0,
                marker=_FAMILY_MARKERS.get(family, "o"),
                facecolors=color if own else "none",
                edgecolors=color,
            )
        log_axis(ax, "x")
        ax.set_ylim(bottom=0)
        ax.set_title(_FAMILY_CLOCK_TITLES[owners[clock]] if clock in owners else field_label(clock))
    axes[0, 0].set_ylabel(SPREAD_LABEL)
    keys = [
        Line2D(
            [],
            [],
            ls="none",
            marker=_FAMILY_MARKERS.get(family, "o"),
            ms=6,
            color=hue_color(opt, 0),
            label=f"{label(opt)} ({family})",
        )
        for (opt, family), _ in groups
    ]
    legend_in(strips[0], keys)
    extra = "filled: the clock of the point's own family; zero clocks drawn at the left edge"
    if note:
        extra += f"; {note}"
    if isinstance(source, Mapping):
        return finish(fig, caption_many(source, extra), title)
    return finish(fig, source, title, extra)
