"""The figures against the initialization scale: accuracy, the spread's bars, training curves, depth, norms.

Each function takes a sweep Dataset and returns a :class:`matplotlib.figure.Figure`
:data:`~initmem.study.presentation.plots.style.FIGURE_WIDTH` wide, with its legend under the panels and its caption line at the bottom
(:func:`~initmem.study.presentation.plots.captions.finish`). The main figure of a chapter also takes ``record``: the committed
record's Dataset, drawn muted under an exploration's (:mod:`initmem.study.presentation.plots.overlay`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from ....run.thresholds import INTERPOLATION_THRESHOLD
from ...statistics.analysis import final_norms, last_finite
from ...statistics.stats import seed_mean
from .captions import finish
from .labels import (
    HE_NOTE,
    PREDICTORS,
    SPREAD_LABEL,
    SPREAD_VARS,
    VAR_LABELS,
    field_label,
    hue_label,
    label,
    var_label,
    var_title,
)
from .overlay import RECORD_LINE, record_handle, record_note, shared
from .seeds import (
    CALIBRATED,
    check_dims,
    dodge_factor,
    estimator_handles,
    iter_hue,
    mean_and_seeds,
    reduce_other,
    seed_count,
    seed_marks,
    seed_spread,
)
from .style import (
    MUTED,
    PANEL_HEIGHT,
    SEED_MARKERSIZE,
    hue_color,
    legend_in,
    log_axis,
    panels,
    pyplot,
    sigma_axis,
    styled,
)

__all__ = ["acc_vs_sigma", "spread_bars", "training_curves", "depth_panels", "norm_scatter", "norm_trajectories"]


# --- 01: accuracy against sigma_w, spreads -----------------------------------------------------------------------------
@styled
def acc_vs_sigma(
    ds: xr.Dataset,
    hue: str | None = "optimizer",
    variables: Sequence[str] = SPREAD_VARS,
    title: str | None = "Test accuracy against the initialization scale",
    chance: float | None = 10.0,
    record: xr.Dataset | None = None,
):
    """One panel per variable (default: the validation-selected and the final-epoch test accuracy) against sigma_w
    (log axis): one colour per ``hue`` value, its seed mean as a line and its seeds as points (or the mean's 95 %
    interval, with more than :data:`~initmem.study.presentation.plots.style.SEED_POINTS_MAX` seeds). ``record``: the committed
    record's Dataset, its seed-mean line of every ``hue`` value both have drawn muted underneath
    (:mod:`initmem.study.presentation.plots.overlay`)."""
    check_dims(ds, "sigma_w")
    n_hues = ds.sizes[hue] if hue in ds.dims else 1
    fig, axes, strips = panels(len(variables), legend="below")
    sigmas = ds["sigma_w"].values
    for ax, var in zip(axes.flat, variables):
        for value in shared(ds, record, hue) if record is not None and var in record else []:
            theirs = reduce_other(
                record[var].sel({hue: value}) if value is not None else record[var], ("sigma_w", "seed")
            )
            ax.plot(theirs["sigma_w"].values, seed_mean(theirs).values, label="_record", **RECORD_LINE)
        for i, (value, da) in enumerate(iter_hue(ds[var], hue)):
            mean_and_seeds(
                ax,
                sigmas,
                reduce_other(da, ("sigma_w", "seed")),
                hue_color(value, i),
                hue_label(hue, value, ds),
                dodge_factor(i, n_hues),
            )
        sigma_axis(ax, sigmas)
        if chance is not None:
            ax.axhline(chance, color="0.6", lw=0.8, ls=":")
        ax.set_ylabel(VAR_LABELS["test_acc"] if var in PREDICTORS else var_label(var))
        ax.set_title(PREDICTORS.get(var, var_title(var)))
    overlaid = [record_handle()] if record is not None else []
    legend_in(strips[0], [axes[0, 0], *estimator_handles(seed_count(ds)), *overlaid])
    notes = "; ".join([HE_NOTE] + (["dotted: chance"] if chance is not None else []))
    return finish(fig, ds, title, record_note(record, notes) if record is not None else notes)


@styled
def spread_bars(
    ds: xr.Dataset,
    by: str = "optimizer",
    variables: Sequence[str] = SPREAD_VARS,
    title: str | None = r"Initialization memory: spread over $\sigma_w$",
    paper: Mapping[str, float] | None = None,
):
    """Bars of the spread per ``by`` value (the mean over seeds of each seed's max - min over sigma_w, as in
    :func:`initmem.study.statistics.summary.summary_table`), for the validation-selected (solid) and the final-epoch (hatched)
    test accuracy, with each seed's spread as a point (or the mean's 95 % calibrated interval). ``paper``: reference values
    per ``by`` value (black ticks)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    check_dims(ds, "sigma_w", by)
    fig, axes, strips = panels(1, legend="below")
    ax = axes[0, 0]
    names = [v.item() if hasattr(v, "item") else v for v in ds[by].values]
    x = np.arange(len(names))
    width = 0.8 / len(variables)
    colors = [hue_color(n, i) for i, n in enumerate(names)]
    handles = []
    for j, var in enumerate(variables):
        spreads = seed_spread(ds, var, (by,)).transpose(by, ...)
        style = {"alpha": 1.0 if j == 0 else 0.45, "hatch": None if j == 0 else "//"}
        centre = x + (j - (len(variables) - 1) / 2) * width
        ax.bar(centre, seed_mean(spreads).values, width * 0.95, color=colors, edgecolor="k", linewidth=0.5, **style)
        jitter = np.linspace(-width / 5, width / 5, seed_count(spreads)) if seed_count(spreads) > 1 else np.zeros(1)
        seed_marks(ax, centre[:, None] + jitter, spreads, "k")
        handles.append(Patch(facecolor="0.6", edgecolor="k", linewidth=0.5, label=PREDICTORS.get(var, var), **style))
    if paper:
        for i, n in enumerate(names):
            if str(n) in paper:
                ax.plot([i - 0.45, i + 0.45], [paper[str(n)]] * 2, color="k", lw=2)
        handles.append(Line2D([], [], color="k", lw=2, label="paper"))
    ax.set_xticks(x, [label(n) if by in ("optimizer", "model") else hue_label(by, n) for n in names])
    ax.set_ylabel(SPREAD_LABEL)
    ax.set_xlabel(field_label(by))
    ax.grid(False, axis="x")
    legend_in(strips[0], [*handles, *estimator_handles(seed_count(ds), "one seed's spread", CALIBRATED)[1:]])
    return finish(fig, ds, title, r"bars: mean over seeds of each seed's spread (max - min over $\sigma_w$)")


@styled
def training_curves(
    ds: xr.Dataset,
    var: str = "test_acc",
    col: str | None = "optimizer",
    title: str | None = None,
    x: str = "epoch",
    max_panels: int = 6,
    interpolation: bool = False,
):
    """Per-epoch curves of ``var`` (seed mean), one panel per ``col`` value (at most ``max_panels``, three to a
    row), one line per sigma_w; the validation-selected epoch of each curve is marked (a dot). ``x``: ``epoch`` or
    a clock (``T_SGD``, ``T_L2``, ``T_adapt``, log axis). ``interpolation``: the interpolation threshold
    (a training accuracy, :data:`initmem.run.thresholds.INTERPOLATION_THRESHOLD`) dashed in every panel."""
    from matplotlib.lines import Line2D

    check_dims(ds, "sigma_w", "epoch")
    curves = list(iter_hue(ds[var], col))[:max_panels]
    ncols = min(3, len(curves))
    nrows = -(-len(curves) // ncols)
    sigmas = ds["sigma_w"].values
    spare = len(curves) < ncols * nrows  # an empty slot in the grid: the legend goes there
    fig, axes, strips = panels(
        ncols, nrows, height=PANEL_HEIGHT if nrows == 1 else 2.1, legend=None if spare else "below", sharey=True
    )
    for ax in axes.flat[len(curves) :]:
        ax.axis("off")
    cmap = pyplot().get_cmap("viridis")
    for ax, (value, da) in zip(axes.flat, curves):
        sub = ds.sel({col: value}) if value is not None else ds
        for k, s in enumerate(sigmas):
            curve = seed_mean(reduce_other(da.sel(sigma_w=s), ("epoch", "seed")))
            ok = np.isfinite(curve.values)
            xs = sub[x] if x == "epoch" else seed_mean(reduce_other(sub[x].sel(sigma_w=s), ("epoch", "seed")))
            color = cmap(k / max(1, len(sigmas) - 1))
            ax.plot(xs.values[ok], curve.values[ok], color=color, label=f"$\\sigma_w$ = {s:g}")
            best = reduce_other(sub["best_epoch"].sel(sigma_w=s), ("seed",))
            best = float(best.isel(seed=0)) if "seed" in best.dims else float(best)
            if np.isfinite(best) and x == "epoch" and best in set(curve["epoch"].values):
                ax.plot([best], [float(curve.sel(epoch=best))], "o", color=color, ms=4)
        if value is not None:
            ax.set_title(hue_label(col, value, ds))
        ax.set_xlabel(field_label(x))
        if x != "epoch":
            log_axis(ax, "x")
        if var in ("weight_norm", "dist_from_init"):
            log_axis(ax, "y")
        if interpolation:
            ax.axhline(INTERPOLATION_THRESHOLD, color="0.5", ls="--", lw=0.8)
    for row in axes:
        row[0].set_ylabel(var_label(var))
    selected = Line2D([], [], color=MUTED, marker="o", ms=4, ls="none", label="validation-selected epoch (seed 0)")
    legend_in(axes.flat[len(curves)] if spare else strips[0], [axes[0, 0], selected])
    notes = ["lines: mean over seeds"] + [f"dashed: {INTERPOLATION_THRESHOLD:g} % (interpolation)"] * interpolation
    return finish(fig, ds, title or f"{var_title(var)} during training", "; ".join(notes))


# --- 05: depth ---------------------------------------------------------------------------------------------------------
@styled
def depth_panels(ds: xr.Dataset, title: str | None = "Deeper ResNets against the initialization scale"):
    """Four panels against sigma_w, one colour per model (seed mean as a line, seeds as points): the final training
    accuracy (with the interpolation threshold), tau_interp (the first epoch at or above it: its line where every seed
    interpolated, a cross above the last epoch where a seed never did), and the selected and the final-epoch test
    accuracy."""
    from matplotlib.lines import Line2D

    check_dims(ds, "sigma_w", "model")
    models = list(ds["model"].values)
    fig, axes, strips = panels(2, 2, height=2.3, legend="below")
    sigmas = ds["sigma_w"].values
    last = float(ds["epoch"].max())
    panel_vars = ("final_train_acc", "tau_interp", "selected_test_acc", "final_test_acc")
    for i, m in enumerate(models):
        sub = ds.sel(model=m)
        for ax, var in zip(axes.flat, panel_vars):
            da = reduce_other(sub[var], ("sigma_w", "seed"))
            if var != "tau_interp":
                mean_and_seeds(ax, sigmas, da, f"C{i}", label(m), dodge_factor(i, len(models)))
                continue
            every = da.notnull().all("seed") if "seed" in da.dims else da.notnull()
            ax.plot(sigmas, seed_mean(da.where(every)).values, marker="o", color=f"C{i}", label=label(m))
            seed_marks(ax, sigmas * dodge_factor(i, len(models)), da, f"C{i}")
            never = (da.isnull().any("seed") if "seed" in da.dims else da.isnull()).values
            ax.plot(
                sigmas[never] * dodge_factor(i, len(models)),
                np.full(never.sum(), last * 1.06),
                "x",
                color=f"C{i}",
                ms=6,
                label="_never",
            )
    for ax, var in zip(axes.flat, panel_vars):
        sigma_axis(ax, sigmas, he=False)
        ax.set_ylabel(var_label(var))
    axes[0, 0].axhline(INTERPOLATION_THRESHOLD, color="k", lw=0.8, ls=":")
    axes[0, 1].axhline(last, color="0.6", lw=0.8, ls=":")
    axes[0, 1].set_ylim(0, last * 1.14)
    never = Line2D([], [], color=MUTED, marker="x", ls="none", ms=6, label="never interpolated")
    legend_in(strips[0], [axes[0, 0], *estimator_handles(seed_count(ds)), never])
    return finish(
        fig,
        ds,
        title,
        f"dotted: {INTERPOLATION_THRESHOLD:g} % training accuracy, the last epoch; "
        r"$\tau_{\mathrm{interp}}$: first epoch at or above it",
    )


# --- 06: radial memory -------------------------------------------------------------------------------------------------
@styled
def norm_scatter(
    ds: xr.Dataset, hue: str = "optimizer", title: str | None = "Radial memory: final against initial kernel norm"
):
    """Left: final against initial total kernel norm (log-log), one colour per ``hue`` value, every run a point and
    the seed means joined, the identity line dashed. Right: distance from initialization ``||W_T - W_0||_F``
    relative to the initial norm, against sigma_w (seed mean, seeds as points)."""
    check_dims(ds, "sigma_w", "epoch")
    n_hues = ds.sizes[hue] if hue in ds.dims else 1
    fig, axes, strips = panels(2, legend="below")
    initial = ds["weight_norm"].isel(epoch=0)
    final = final_norms(ds)
    dist = last_finite(ds["dist_from_init"]) / initial
    lo, hi = np.inf, 0.0
    for i, (value, _) in enumerate(iter_hue(initial, hue)):
        pick = {hue: value} if value is not None else {}
        x = reduce_other(initial.sel(pick), ("sigma_w", "seed"))
        y = reduce_other(final.sel(pick), ("sigma_w", "seed"))
        color = hue_color(value, i)
        axes[0, 0].plot(
            x.values.ravel(),
            y.values.ravel(),
            "o",
            color=color,
            ms=SEED_MARKERSIZE + 1,
            alpha=0.7,
            label=hue_label(hue, value, ds),
        )
        axes[0, 0].plot(seed_mean(x).values, seed_mean(y).values, "-", color=color, alpha=0.6, lw=1)
        finite = np.concatenate([x.values[np.isfinite(x.values)], y.values[np.isfinite(y.values)]])
        if finite.size:
            lo, hi = min(lo, finite.min()), max(hi, finite.max())
        mean_and_seeds(
            axes[0, 1],
            ds["sigma_w"].values,
            reduce_other(dist.sel(pick), ("sigma_w", "seed")),
            color,
            hue_label(hue, value, ds),
            dodge_factor(i, n_hues),
        )
    if np.isfinite(lo) and hi > 0:
        line = np.array([lo / 1.5, hi * 1.5])
        axes[0, 0].plot(line, line, "k--", lw=0.8, label="final = initial")
    log_axis(axes[0, 0], "x")
    log_axis(axes[0, 0], "y")
    axes[0, 0].set_xlabel(r"initial kernel norm $\|W_0\|_F$")
    axes[0, 0].set_ylabel(r"final kernel norm $\|W_T\|_F$")
    axes[0, 0].set_title("every run; lines join the seed means")
    sigma_axis(axes[0, 1], ds["sigma_w"].values, he=False)
    log_axis(axes[0, 1], "y")
    axes[0, 1].set_ylabel(r"$\|W_T - W_0\|_F \,/\, \|W_0\|_F$")
    axes[0, 1].set_title("distance travelled")
    legend_in(strips[0], [axes[0, 0], *estimator_handles(seed_count(ds))])
    return finish(fig, ds, title)


def norm_trajectories(ds: xr.Dataset, col: str = "optimizer", x: str = "epoch", title: str | None = None):
    """Total kernel norm during training, one panel per ``col`` value, one line per sigma_w (seed mean).
    ``x`` may be ``epoch`` or a clock (``T_SGD``, ``T_L2``, ``T_adapt``)."""
    return training_curves(ds, var="weight_norm", col=col, x=x, title=title or "Kernel norm during training")
