"""The figures of the experiment notebooks and the book: each function takes sweep Datasets (or tables built
from them) and returns a :class:`matplotlib.figure.Figure`.

Every figure carries a caption line at its bottom (:func:`caption`) naming the preset, model, width, data
size and seeds it came from, read from the Dataset's attributes (``preset`` and the sweep ``spec``) and
coordinates, so a figure copied out of context still says what it shows. Under each figure a notebook prints
:func:`source_note`: the result files it was drawn from and the command that reproduces it.

Legible in the book. The notebooks call :func:`use_book_style`: their figures are SVG, shown in the book's content
column (about :data:`BOOK_COLUMN_PX` pixels wide). Every figure here is :data:`FIGURE_WIDTH` inches wide, so a browser
shows it at its natural size (96 px per inch), and no text of :data:`STYLE` (8 pt and up: 10.7 px) falls below
:data:`MIN_TEXT_PX`, even in a somewhat narrower column. Legends sit outside the data, in a strip under the panels
(:func:`panels`, :func:`legend_in`); labels are words with units and math (``σ_w``, ``τ_interp (epoch)``,
``test accuracy (%)``).

Seeds. With at most :data:`SEED_POINTS_MAX` seeds every seed is drawn as a small point beside the seed mean;
with more, the mean with its 95 % Student-t interval (:mod:`initmem.study.stats`). The legend says which.

Style: one palette for the optimizers (:data:`OPTIMIZER_COLORS`), a sequential colormap for sigma_w, and
:data:`STYLE`, applied through ``matplotlib.rc_context`` while a figure is made (nothing global is changed, except
by :func:`use_book_style`).

Example::

    from initmem import plots
    fig = plots.acc_vs_sigma(ds, hue="optimizer")
    fig.savefig("acc.svg")
"""

from __future__ import annotations

import functools
import math
import os
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..run.thresholds import INTERPOLATION_THRESHOLD
from .analysis import FAMILY_CLOCK, field_values, last_finite
from .stats import cross_fitted_spreads, finite_runs, seed_mean, seed_spreads

__all__ = [
    "STYLE",
    "BOOK_COLUMN_PX",
    "MIN_TEXT_PX",
    "PX_PER_INCH",
    "FIGURE_WIDTH",
    "PANEL_HEIGHT",
    "SEED_POINTS_MAX",
    "OPTIMIZER_COLORS",
    "OPTIMIZER_LABELS",
    "use_book_style",
    "panels",
    "legend_in",
    "caption",
    "caption_many",
    "label",
    "acc_vs_sigma",
    "spread_bars",
    "training_curves",
    "spread_vs_horizon",
    "spread_heatmap",
    "spread_vs",
    "depth_panels",
    "norm_scatter",
    "norm_trajectories",
    "spread_vs_clocks",
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
#: Up to this many seeds every seed is drawn as a point; with more, the seed mean's 95 % t-interval.
SEED_POINTS_MAX = 5

STYLE: dict[str, Any] = {
    "figure.dpi": PX_PER_INCH,
    "savefig.dpi": 2 * PX_PER_INCH,  # a PNG, where one is made, at twice the resolution it is shown at
    "svg.hashsalt": "initmem",  # the same SVG for the same figure (no random ids)
    "font.size": 8.5,
    "axes.titlesize": 9,
    "axes.labelsize": 8.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "legend.frameon": False,
    "figure.titlesize": 10,
    "figure.labelsize": 8,  # the caption line (fig.supxlabel)
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.5,
    "lines.markersize": 4.5,
    "errorbar.capsize": 2,
}

OPTIMIZER_COLORS = {
    "sgd": "#1f77b4",
    "sgd_momentum": "#17becf",
    "adam": "#d62728",
    "adamw": "#ff7f0e",
    "muon": "#2ca02c",
}
OPTIMIZER_LABELS = {"sgd": "SGD", "sgd_momentum": "SGD+momentum", "adam": "Adam", "adamw": "AdamW", "muon": "Muon"}
_MODEL_LABELS = {"resnet9": "ResNet-9"}
#: Axis labels of the recorded variables (with units).
_VAR_LABELS = {
    "selected_test_acc": "selected test accuracy (%)",
    "final_test_acc": "final-epoch test accuracy (%)",
    "final_train_acc": "final training accuracy (%)",
    "tau_interp": r"$\tau_{\mathrm{interp}}$ (epoch)",
    "test_acc": "test accuracy (%)",
    "train_acc": "training accuracy (%)",
    "val_acc": "validation accuracy (%)",
    "val_loss": "validation loss",
    "weight_norm": r"kernel norm $\|W\|_F$",
    "dist_from_init": r"$\|W - W_0\|_F$",
}
#: The two predictors whose test accuracy the spreads are of.
_PREDICTORS = {"selected_test_acc": "validation-selected", "final_test_acc": "final epoch"}
_SPREAD_VARS = tuple(_PREDICTORS)
_SPREAD_LABEL = r"cross-fitted spread over $\sigma_w$ (pp)"
#: Axis labels of the swept fields and the clocks, and the symbols that name their values in a legend.
_FIELD_LABELS = {"sigma_w": r"$\sigma_w$", "lr": r"learning rate $\eta$", "weight_decay": r"L2 strength $\lambda$",
                 "batch_size": "batch size $b$", "logit_scale": "logit factor", "epoch": "epoch",
                 "horizon": "training horizon $T$ (epochs)", "T_SGD": r"$T_{\mathrm{SGD}}$",
                 "T_L2": r"$T_{\mathrm{L2}}$", "T_adapt": r"$T_{\mathrm{adapt}}$"}  # fmt: skip
_FIELD_SYMBOLS = {"sigma_w": r"$\sigma_w$", "lr": r"$\eta$", "weight_decay": r"$\lambda$", "batch_size": "$b$",
                  "logit_scale": "logit factor"}  # fmt: skip
_CLOCK_FORMULAS = {"T_SGD": r"$T_{\mathrm{SGD}} = \frac{1}{b}\sum_k \eta_k^2$",
                   "T_L2": r"$T_{\mathrm{L2}} = \lambda\sum_k \eta_k$",
                   "T_adapt": r"$T_{\mathrm{adapt}} = \sum_k \eta_k$"}  # fmt: skip
_FAMILY_MARKERS = {"SGD": "o", "SGD+L2": "s", "adaptive": "^"}
_FAMILY_CLOCK_TITLES = {"SGD": "plain SGD's clock", "SGD+L2": "SGD with L2's clock",
                        "adaptive": "adaptive optimizers' clock"}  # fmt: skip
_HE_NOTE = r"dashed: He initialization ($\sigma_w = \sqrt{2}$)"
#: Grey of the caption line and of the legend entries that explain marks rather than name a line.
_MUTED = "0.35"
#: Size of a seed's point, and the factor between the points of neighbouring lines on a log axis (so they do not
#: hide each other).
_SEED_MARKERSIZE = 3.0
_DODGE = 1.04
#: Heights (inches) of one line of legend text, of the title and of one line of the caption, with their spacing.
_LEGEND_LINE = 0.19
_TITLE_HEIGHT = 0.25
_CAPTION_LINE = 0.16


def _plt():
    import matplotlib.pyplot as plt

    return plt


def _styled(draw: Callable[..., Any]) -> Callable[..., Any]:
    """``draw`` under :data:`STYLE` (``matplotlib.rc_context``): every element it makes, legends included."""

    @functools.wraps(draw)
    def styled(*args: Any, **kwargs: Any) -> Any:
        with _plt().rc_context(STYLE):
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

    _plt()  # importing pyplot activates the inline backend, which sets its own formats: choose ours after it
    mpl.rcParams.update(STYLE)
    from IPython import get_ipython

    if get_ipython() is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("svg", metadata={"Date": None})


def label(name: Any) -> str:
    """A readable label for an optimizer or model name (unchanged otherwise)."""
    text = str(name)
    if text in OPTIMIZER_LABELS:
        return OPTIMIZER_LABELS[text]
    if text in _MODEL_LABELS:
        return _MODEL_LABELS[text]
    if text.startswith("resnet"):
        return "ResNet-" + text.removeprefix("resnet")
    return text


def _var_label(var: str) -> str:
    return _VAR_LABELS.get(var, var.replace("_", " "))


def _field_label(name: str) -> str:
    return _FIELD_LABELS.get(name, name.replace("_", " "))


def _var_title(var: str) -> str:
    """``var``'s label without its unit, capitalised: a title ("Test accuracy")."""
    text = re.sub(r" \([^()]*\)$", "", _var_label(var))
    return text[:1].upper() + text[1:]


def _color(name: Any, i: int) -> str:
    return OPTIMIZER_COLORS.get(str(name), f"C{i % 10}")


# ----------------------------------------------------------------------------------------------
# Layout: panels at the book's width, legends outside the data
# ----------------------------------------------------------------------------------------------
def panels(ncols: int = 1, nrows: int = 1, *, height: float = PANEL_HEIGHT, legend: str | None = None,
           sharey: bool = False):  # fmt: skip
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
    plt = _plt()
    with plt.rc_context(STYLE):
        fig = plt.figure(figsize=(FIGURE_WIDTH, nrows * height + strip), layout="constrained")
        ratios = [height] * nrows + ([strip] if legend else [])
        grid = fig.add_gridspec(len(ratios), ncols, height_ratios=ratios)
        axes = np.empty((nrows, ncols), dtype=object)
        for row, col in np.ndindex(nrows, ncols):
            axes[row, col] = fig.add_subplot(grid[row, col], sharey=axes[0, 0] if sharey and (row or col) else None)
            if sharey and col:
                axes[row, col].tick_params(labelleft=False)
        strips = [fig.add_subplot(grid[-1, :])] if legend == "below" else \
                 [fig.add_subplot(grid[-1, col]) for col in range(ncols)] if legend == "each" else []  # fmt: skip
    for ax in axes.flat:
        _style_axes(ax)
    for ax in strips:
        ax.axis("off")
    return fig, axes, strips


def _strip_height(lines: int) -> float:
    """Height (inches) of a legend strip for ``lines`` lines of legend text."""
    return 0.1 + _LEGEND_LINE * lines


def _style_axes(ax) -> None:
    """Tick labels at :data:`STYLE`'s size: matplotlib makes ticks when it draws, after ``rc_context`` has ended."""
    ax.tick_params(labelsize=STYLE["xtick.labelsize"])


def legend_in(strip, items, ncol: int | None = None):
    """A legend in ``strip`` (a legend strip of :func:`panels`), in :data:`STYLE`'s legend style: of the labelled
    artists of ``items`` (an Axes, or a list of Axes and artists), each label once, in as many columns as fit the strip
    unless ``ncol`` is given. The strip's row, and the figure, grow to the legend's height. Returns the legend (None
    when there is nothing to list)."""
    artists = []
    for item in items if isinstance(items, Sequence) else [items]:
        artists += item.get_legend_handles_labels()[0] if hasattr(item, "get_legend_handles_labels") else [item]
    unique = {a.get_label(): a for a in artists if not str(a.get_label()).startswith("_")}
    if not unique:
        return None
    width = strip.get_position().width * strip.figure.bbox.width  # px, before the layout: at most the final width
    renderer = strip.figure.canvas.get_renderer()
    for columns in [ncol] if ncol else range(len(unique), 0, -1):
        legend = strip.legend(unique.values(), unique.keys(), loc="upper center", ncol=columns,
                              frameon=STYLE["legend.frameon"], fontsize=STYLE["legend.fontsize"])  # fmt: skip
        if ncol or columns == 1 or legend.get_window_extent(renderer).width <= width:
            break
        legend.remove()
    _grow_strip(strip, math.ceil(len(unique) / columns))
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


def _log_axis(ax, axis: str = "x", ticks: Sequence[float] | None = None, base: float = 10) -> None:
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


def _sigma_axis(ax, sigmas: Sequence[float], he: bool = True) -> None:
    """x: sigma_w on a log axis labelled at ``sigmas``; ``he``: He initialization (sqrt 2) dashed, if in range."""
    _log_axis(ax, "x", sigmas)
    ax.set_xlabel(_FIELD_LABELS["sigma_w"])
    if he and np.min(sigmas) <= np.sqrt(2) <= np.max(sigmas):
        ax.axvline(np.sqrt(2), color="0.7", lw=0.8, ls="--")


# ----------------------------------------------------------------------------------------------
# Caption and source
# ----------------------------------------------------------------------------------------------
def _join(values: Sequence[Any], fmt=str) -> str:
    return "/".join(fmt(v) for v in dict.fromkeys(values))


def _caption_parts(ds: xr.Dataset | xr.DataArray) -> dict[str, list[Any]]:
    """The raw values behind a caption: preset, models, widths, train sizes, image sizes, data, augment,
    batch sizes, epochs, seeds (each a list, possibly empty)."""
    return {
        "preset": [ds.attrs.get("preset", "?")],
        "model": field_values(ds, "model", "resnet9"),
        "width": field_values(ds, "width"),
        "train_size": field_values(ds, "train_size"),
        "image_size": field_values(ds, "image_size"),
        "data": field_values(ds, "data"),
        "augment": field_values(ds, "augment"),
        "batch_size": [] if "batch_size" in ds.dims else field_values(ds, "batch_size"),
        "epochs": [] if "epochs" in ds.dims else field_values(ds, "epochs"),
        "seed": field_values(ds, "seed", 0),
    }


def _caption_text(parts: Mapping[str, list[Any]], extra: str | None = None) -> str:
    out = [f"preset {_join(parts['preset'])}"]
    model_text = _join(parts["model"], label)
    if parts["width"]:
        model_text += f", width {_join(parts['width'])}"
    out.append(model_text)
    details = []
    if parts["image_size"] and list(dict.fromkeys(parts["image_size"])) != [32]:
        details.append(f"{_join(parts['image_size'])} px")
    if "synthetic" in parts["data"]:
        details.append("synthetic data")
    if True in parts["augment"]:
        details.append("augmented" if False not in parts["augment"] else "augmented in part")
    if parts["train_size"]:
        text = f"{_join(parts['train_size'], lambda v: 'all' if v is None else f'{int(v):,}')} train images"
        out.append(text + (f" ({', '.join(details)})" if details else ""))
    elif details:
        out.append(", ".join(details))
    if parts["batch_size"]:
        out.append(f"b = {_join(parts['batch_size'])}")
    if parts["epochs"]:
        out.append(f"{_join(parts['epochs'])} epochs")
    seeds = list(dict.fromkeys(parts["seed"]))
    out.append(f"seed{'s' if len(seeds) > 1 else ''} {_join(seeds)}")
    if extra:
        out.append(extra)
    return " | ".join(out)


def caption(ds: xr.Dataset | xr.DataArray, extra: str | None = None) -> str:
    """One line saying where a figure's numbers come from, from ``ds``'s attributes and coordinates:
    preset, model and width, training images (image size, augmentation), batch size, epochs, seeds.

    >>> import xarray as xr, json
    >>> ds = xr.Dataset(coords={"seed": [0, 1]}, attrs={"preset": "cpu",
    ...     "spec": json.dumps({"base": {"model": "resnet9", "width": 8, "train_size": 5000}})})
    >>> caption(ds)
    'preset cpu | ResNet-9, width 8 | 5,000 train images | seeds 0,1'
    """
    return _caption_text(_caption_parts(ds), extra)


def caption_many(datasets: Mapping[str, xr.Dataset] | Sequence[xr.Dataset], extra: str | None = None) -> str:
    """:func:`caption` of several sweeps at once (values joined with '/'), prefixed by the experiments."""
    items = list(datasets.values()) if isinstance(datasets, Mapping) else list(datasets)
    if not items:
        return extra or ""
    merged: dict[str, list[Any]] = {}
    for ds in items:
        for key, values in _caption_parts(ds).items():
            merged.setdefault(key, []).extend(values)
    names = list(datasets) if isinstance(datasets, Mapping) else []
    text = _caption_text(merged, extra)
    return (f"experiments {', '.join(n[:2] for n in names)} | " if names else "") + text


def _finish(fig, ds: xr.Dataset | xr.DataArray | str | None, title: str | None, extra: str | None = None):
    """Title on top; at the bottom the caption of ``ds`` (or ``ds`` itself if it is a string); the figure grows by
    their height, so that the panels keep theirs."""
    if title:
        fig.suptitle(title)
        fig.set_figheight(fig.get_figheight() + _TITLE_HEIGHT)
    text = ds if isinstance(ds, str) else caption(ds, extra) if ds is not None else extra
    if text:
        text = _wrap(text, fig.get_figwidth())
        fig.supxlabel(text, color=_MUTED)
        fig.set_figheight(fig.get_figheight() + _CAPTION_LINE * (text.count("\n") + 1))
    return fig


def _wrap(text: str, width_in: float) -> str:
    """``text`` in lines that fit ``width_in`` inches at the caption's size, never broken inside ``$math$``."""
    chars = int(width_in * 72 / (0.5 * STYLE["figure.labelsize"]))
    nbsp = "\u00a0"
    protected = "$".join(part.replace(" ", nbsp) if i % 2 else part for i, part in enumerate(text.split("$")))
    lines = textwrap.wrap(protected, chars, break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines).replace(nbsp, " ")


# ----------------------------------------------------------------------------------------------
# Seeds: points, or the mean's interval
# ----------------------------------------------------------------------------------------------
def _n_seeds(ds: xr.Dataset | xr.DataArray) -> int:
    return int(ds.sizes.get("seed", 1))


def _mean_ci(da: xr.DataArray, seed_dim: str = "seed") -> tuple[xr.DataArray, xr.DataArray]:
    """Seed mean and the half-width of its 95 % t-interval (NaN with < 2 finite seeds; see :mod:`initmem.study.stats`)."""
    from .stats import mean_interval

    if seed_dim not in da.dims:
        return da, xr.full_like(da, np.nan, dtype=float)
    intervals = xr.apply_ufunc(lambda x: mean_interval(x).high - mean_interval(x).estimate, da,
                               input_core_dims=[[seed_dim]], vectorize=True)  # fmt: skip
    return seed_mean(da, seed_dim), intervals


def _seed_marks(ax, x: np.ndarray, da: xr.DataArray, color: Any) -> None:
    """The seeds of ``da`` (dims: one matching ``x``, and ``seed``) at ``x``: each a small point with at most
    :data:`SEED_POINTS_MAX` seeds, else the 95 % t-interval of their mean as error bars; nothing with one seed.
    ``x`` may also give a position per seed (shape: points x seeds)."""
    n = _n_seeds(da)
    if n < 2:
        return
    along = [d for d in da.dims if d != "seed"]
    values = da.transpose(*along, "seed").values
    x = np.asarray(x, float)
    if n > SEED_POINTS_MAX:
        mean, half = _mean_ci(da)
        centre = x if x.ndim == 1 else x.mean(-1)
        ax.errorbar(centre, mean.values, yerr=half.values, fmt="none", ecolor=color, alpha=0.8, label="_interval")
        return
    positions = np.broadcast_to(x[:, None] if x.ndim == 1 else x, values.shape)
    ax.plot(positions.ravel(), values.ravel(), ls="none", marker="o", ms=_SEED_MARKERSIZE, mew=0, color=color,
            alpha=0.55, label="_seed")  # fmt: skip


def _mean_and_seeds(ax, x: np.ndarray, da: xr.DataArray, color: Any, label: str | None = None,
                    dodge: float = 1.0) -> None:  # fmt: skip
    """The seed mean of ``da`` as a line with markers at ``x``, and its seeds (:func:`_seed_marks`) at
    ``x * dodge`` (a log axis: neighbouring lines' seeds side by side)."""
    ax.plot(x, seed_mean(da).values, marker="o", color=color, label=label)
    _seed_marks(ax, np.asarray(x, float) * dodge, da, color)


def _dodge(i: int, n: int) -> float:
    """The factor by which line ``i`` of ``n`` draws its seeds beside the others on a log axis."""
    return _DODGE ** (i - (n - 1) / 2)


def _estimator_handles(n_seeds: int, one: str = "one seed") -> list:
    """Legend entries saying what the lines and marks are (see :func:`_seed_marks`): the mean over the
    ``n_seeds`` seeds, and ``one`` seed's point or the mean's 95 % t-interval; none with one seed."""
    from matplotlib.lines import Line2D

    if n_seeds < 2:
        return []
    mean = Line2D([], [], color=_MUTED, marker="o", label=f"mean over {n_seeds} seeds")
    if n_seeds > SEED_POINTS_MAX:
        return [mean, Line2D([], [], color=_MUTED, marker="|", ms=9, ls="none", label="its 95 % t-interval")]
    point = Line2D([], [], color=_MUTED, marker="o", ms=_SEED_MARKERSIZE, mew=0, ls="none", alpha=0.55, label=one)
    return [mean, point]


def _reduce_other(da: xr.DataArray, keep: Sequence[str]) -> xr.DataArray:
    """Select the first value of every dimension not in ``keep`` (with a size > 1 that would be ambiguous)."""
    for dim in list(da.dims):
        if dim not in keep:
            da = da.isel({dim: 0})
    return da


def _seed_spread(ds: xr.Dataset, var: str, keep: Sequence[str]) -> xr.DataArray:
    """Each seed's cross-fitted spread over sigma_w of ``var`` (pp; :func:`initmem.study.stats.cross_fitted_spreads`;
    diverged runs left out), dims ``keep`` and ``seed``: the per-seed values whose mean is the headline spread
    (:func:`initmem.study.summary.summary_table`). With a single seed, its raw spread (max - min), as the table."""
    values = finite_runs(ds, var)
    if "seed" not in values.dims or values.sizes["seed"] < 2:
        per_seed = seed_spreads(values if "seed" in values.dims else values.expand_dims("seed"), "sigma_w")
    else:
        per_seed = cross_fitted_spreads(values)
    return _reduce_other(per_seed, (*keep, "seed"))


def _iter_hue(da: xr.DataArray, hue: str | None):
    if hue is None or hue not in da.dims:
        yield None, da
        return
    for value in da[hue].values:
        yield (value.item() if hasattr(value, "item") else value), da.sel({hue: value})


def _hue_label(hue: str | None, value: Any, ds: xr.Dataset | None = None) -> str:
    if hue is None:
        return ""
    if hue == "optimizer":
        text = label(value)
        if ds is not None and "lr" in ds.coords and ds["lr"].dims == ("optimizer",):
            text += rf" ($\eta$ = {float(ds['lr'].sel(optimizer=value)):g})"
        return text
    if hue == "model":
        return label(value)
    symbol = _FIELD_SYMBOLS.get(hue, hue.replace("_", " "))
    return f"{symbol} = {value:g}" if isinstance(value, (int, float)) else f"{symbol} = {value}"


def _check_dims(ds: xr.Dataset | xr.DataArray, *dims: str) -> None:
    missing = [d for d in dims if d not in ds.dims]
    if missing:
        raise ValueError(f"expected dimension(s) {', '.join(missing)}; the data has {', '.join(map(str, ds.dims))}")


# ----------------------------------------------------------------------------------------------
# 01: accuracy against sigma_w, spreads
# ----------------------------------------------------------------------------------------------
@_styled
def acc_vs_sigma(
    ds: xr.Dataset,
    hue: str | None = "optimizer",
    variables: Sequence[str] = _SPREAD_VARS,
    title: str | None = "Test accuracy against the initialization scale",
    chance: float | None = 10.0,
):
    """One panel per variable (default: the validation-selected and the final-epoch test accuracy) against sigma_w
    (log axis): one colour per ``hue`` value, its seed mean as a line and its seeds as points (or the mean's 95 %
    interval, with more than :data:`SEED_POINTS_MAX` seeds)."""
    _check_dims(ds, "sigma_w")
    n_hues = ds.sizes[hue] if hue in ds.dims else 1
    fig, axes, strips = panels(len(variables), legend="below")
    sigmas = ds["sigma_w"].values
    for ax, var in zip(axes.flat, variables):
        for i, (value, da) in enumerate(_iter_hue(ds[var], hue)):
            _mean_and_seeds(ax, sigmas, _reduce_other(da, ("sigma_w", "seed")), _color(value, i),
                            _hue_label(hue, value, ds), _dodge(i, n_hues))  # fmt: skip
        _sigma_axis(ax, sigmas)
        if chance is not None:
            ax.axhline(chance, color="0.6", lw=0.8, ls=":")
        ax.set_ylabel(_VAR_LABELS["test_acc"] if var in _PREDICTORS else _var_label(var))
        ax.set_title(_PREDICTORS.get(var, _var_title(var)))
    legend_in(strips[0], [axes[0, 0], *_estimator_handles(_n_seeds(ds))])
    notes = [_HE_NOTE] + (["dotted: chance"] if chance is not None else [])
    return _finish(fig, ds, title, "; ".join(notes))


@_styled
def spread_bars(
    ds: xr.Dataset,
    by: str = "optimizer",
    variables: Sequence[str] = _SPREAD_VARS,
    title: str | None = r"Initialization memory: spread over $\sigma_w$",
    paper: Mapping[str, float] | None = None,
):
    """Bars of the spread per ``by`` value (the mean over seeds of each seed's max - min over sigma_w, as in
    :func:`initmem.study.summary.summary_table`), for the validation-selected (solid) and the final-epoch (hatched)
    test accuracy, with each seed's spread as a point (or the mean's 95 % t-interval). ``paper``: reference values
    per ``by`` value (black ticks)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    _check_dims(ds, "sigma_w", by)
    fig, axes, strips = panels(1, legend="below")
    ax = axes[0, 0]
    names = [v.item() if hasattr(v, "item") else v for v in ds[by].values]
    x = np.arange(len(names))
    width = 0.8 / len(variables)
    colors = [_color(n, i) for i, n in enumerate(names)]
    handles = []
    for j, var in enumerate(variables):
        spreads = _seed_spread(ds, var, (by,)).transpose(by, ...)
        style = {"alpha": 1.0 if j == 0 else 0.45, "hatch": None if j == 0 else "//"}
        centre = x + (j - (len(variables) - 1) / 2) * width
        ax.bar(centre, seed_mean(spreads).values, width * 0.95, color=colors, edgecolor="k", linewidth=0.5, **style)
        jitter = np.linspace(-width / 5, width / 5, _n_seeds(spreads)) if _n_seeds(spreads) > 1 else np.zeros(1)
        _seed_marks(ax, centre[:, None] + jitter, spreads, "k")
        handles.append(Patch(facecolor="0.6", edgecolor="k", linewidth=0.5, label=_PREDICTORS.get(var, var), **style))
    if paper:
        for i, n in enumerate(names):
            if str(n) in paper:
                ax.plot([i - 0.45, i + 0.45], [paper[str(n)]] * 2, color="k", lw=2)
        handles.append(Line2D([], [], color="k", lw=2, label="paper"))
    ax.set_xticks(x, [label(n) if by in ("optimizer", "model") else _hue_label(by, n) for n in names])
    ax.set_ylabel(_SPREAD_LABEL)
    ax.set_xlabel(_field_label(by))
    ax.grid(False, axis="x")
    legend_in(strips[0], [*handles, *_estimator_handles(_n_seeds(ds), "one seed's spread")[1:]])
    return _finish(fig, ds, title, r"bars: mean over seeds of each seed's spread (max - min over $\sigma_w$)")


@_styled
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
    (a training accuracy, :data:`initmem.run.metrics.INTERPOLATION_THRESHOLD`) dashed in every panel."""
    from matplotlib.lines import Line2D

    _check_dims(ds, "sigma_w", "epoch")
    curves = list(_iter_hue(ds[var], col))[:max_panels]
    ncols = min(3, len(curves))
    nrows = -(-len(curves) // ncols)
    sigmas = ds["sigma_w"].values
    spare = len(curves) < ncols * nrows  # an empty slot in the grid: the legend goes there
    fig, axes, strips = panels(ncols, nrows, height=PANEL_HEIGHT if nrows == 1 else 2.1,
                               legend=None if spare else "below", sharey=True)  # fmt: skip
    for ax in axes.flat[len(curves):]:
        ax.axis("off")
    cmap = _plt().get_cmap("viridis")
    for ax, (value, da) in zip(axes.flat, curves):
        sub = ds.sel({col: value}) if value is not None else ds
        for k, s in enumerate(sigmas):
            curve = seed_mean(_reduce_other(da.sel(sigma_w=s), ("epoch", "seed")))
            ok = np.isfinite(curve.values)
            xs = sub[x] if x == "epoch" else seed_mean(_reduce_other(sub[x].sel(sigma_w=s), ("epoch", "seed")))
            color = cmap(k / max(1, len(sigmas) - 1))
            ax.plot(xs.values[ok], curve.values[ok], color=color, label=f"$\\sigma_w$ = {s:g}")
            best = _reduce_other(sub["best_epoch"].sel(sigma_w=s), ("seed",))
            best = float(best.isel(seed=0)) if "seed" in best.dims else float(best)
            if np.isfinite(best) and x == "epoch" and best in set(curve["epoch"].values):
                ax.plot([best], [float(curve.sel(epoch=best))], "o", color=color, ms=4)
        if value is not None:
            ax.set_title(_hue_label(col, value, ds))
        ax.set_xlabel(_field_label(x))
        if x != "epoch":
            _log_axis(ax, "x")
        if var in ("weight_norm", "dist_from_init"):
            _log_axis(ax, "y")
        if interpolation:
            ax.axhline(INTERPOLATION_THRESHOLD, color="0.5", ls="--", lw=0.8)
    for row in axes:
        row[0].set_ylabel(_var_label(var))
    selected = Line2D([], [], color=_MUTED, marker="o", ms=4, ls="none", label="validation-selected epoch (seed 0)")
    legend_in(axes.flat[len(curves)] if spare else strips[0], [axes[0, 0], selected])
    notes = ["lines: mean over seeds"] + [f"dashed: {INTERPOLATION_THRESHOLD:g} % (interpolation)"] * interpolation
    return _finish(fig, ds, title or f"{_var_title(var)} during training", "; ".join(notes))


# ----------------------------------------------------------------------------------------------
# 02: spread against the training length
# ----------------------------------------------------------------------------------------------
@_styled
def spread_vs_horizon(h: xr.Dataset, title: str | None = "Spread against training length", paper_epochs: float | None = None):
    """Left: the spread over sigma_w of the selected and final test accuracy (mean over seeds of each seed's spread,
    the seeds as points) against the horizon T (epochs), from :func:`initmem.study.analysis.within_horizons`; the
    top axis shows the T_SGD clock reached. Right: the selected test accuracy (seed mean) against sigma_w at each
    horizon."""
    from matplotlib.ticker import NullFormatter

    _check_dims(h, "horizon", "sigma_w")
    T = h["horizon"].values
    fig, axes, strips = panels(2, legend="each")
    ax = axes[0, 0]
    for j, var in enumerate(_SPREAD_VARS):
        _mean_and_seeds(ax, T, _seed_spread(h, var, ("horizon",)), f"C{j}", _PREDICTORS[var], _dodge(j, 2))
    _log_axis(ax, "x", T)
    ax.set_xlabel(_FIELD_LABELS["horizon"])
    ax.set_ylabel(_SPREAD_LABEL)
    ax.set_ylim(bottom=0)
    if "T_SGD" in h:
        clock = h["T_SGD"].mean([d for d in h["T_SGD"].dims if d != "horizon"]).values
        top = ax.secondary_xaxis("top")
        top.xaxis.set_minor_formatter(NullFormatter())
        every = slice(None, None, max(1, len(T) // 4))
        top.set_xticks(T[every], [f"{c:.2g}" for c in clock[every]])
        top.set_xlabel(f"{_FIELD_LABELS['T_SGD']} reached")
        _style_axes(top)
    legend_in(strips[0], [ax, *_estimator_handles(_n_seeds(h), one="one seed's spread")])
    ax2 = axes[0, 1]
    cmap = _plt().get_cmap("magma_r")
    for k, t in enumerate(T):
        da = _reduce_other(h["selected_test_acc"].sel(horizon=t), ("sigma_w", "seed"))
        ax2.plot(da["sigma_w"].values, seed_mean(da).values, marker="o", color=cmap(0.2 + 0.7 * k / max(1, len(T) - 1)),
                 label=f"$T$ = {int(t)}")  # fmt: skip
    _sigma_axis(ax2, h["sigma_w"].values, he=False)
    ax2.set_ylabel(_VAR_LABELS["selected_test_acc"])
    ax2.set_title("mean over seeds")
    legend_in(strips[1], ax2)
    extra = r"selection restricted to epochs $\leq T$ of one long run per $\sigma_w$ and seed"
    if paper_epochs:
        extra += f"; the paper trains {paper_epochs:g} epochs"
    return _finish(fig, h, title, extra)


# ----------------------------------------------------------------------------------------------
# 03: spread over (lr, lambda)
# ----------------------------------------------------------------------------------------------
@_styled
def spread_heatmap(
    ds: xr.Dataset,
    x: str = "lr",
    y: str = "weight_decay",
    variables: Sequence[str] = _SPREAD_VARS,
    clock: str | None = "T_L2",
    title: str | None = r"Spread over $\sigma_w$ against learning rate and L2 strength",
):
    """One heatmap per variable: the spread in each (``x``, ``y``) cell (mean over seeds of each seed's spread, pp,
    as in the tables), annotated with the spread and (``clock``) the clock the cell's runs reached."""
    _check_dims(ds, "sigma_w", x, y)
    fig, axes, _ = panels(len(variables), height=3.0)
    for ax, var in zip(axes.flat, variables):
        clock_var = f"{var.split('_')[0]}_{clock}" if clock else None  # the clock of the predictor shown
        grid = seed_mean(_seed_spread(ds, var, (x, y))).transpose(y, x)
        top = float(np.nanmax(grid.values)) if np.isfinite(grid.values).any() else 1.0
        image = ax.imshow(grid.values, origin="lower", cmap="viridis", aspect="auto", vmin=0, vmax=max(1.0, top))
        for (iy, ix), v in np.ndenumerate(grid.values):
            text = "n/a" if not np.isfinite(v) else f"{v:.1f}"
            if clock_var in ds:
                reached = ds[clock_var].sel({x: grid[x].values[ix], y: grid[y].values[iy]})
                text += f"\n{_FIELD_LABELS.get(clock, clock)} = {float(reached.mean(skipna=True)):.2g}"
            ax.text(ix, iy, text, ha="center", va="center", fontsize=STYLE["legend.fontsize"],
                    color="w" if np.isfinite(v) and v < 0.6 * top else "k")  # fmt: skip
        ax.set_xticks(range(grid.sizes[x]), [f"{v:g}" for v in grid[x].values])
        ax.set_yticks(range(grid.sizes[y]), [f"{v:g}" for v in grid[y].values])
        ax.set_xlabel(_field_label(x))
        ax.set_ylabel(_field_label(y))
        ax.grid(False)
        ax.set_title(_PREDICTORS.get(var, _var_title(var)))
        bar = fig.colorbar(image, ax=ax, shrink=0.85)
        bar.set_label(_SPREAD_LABEL)
        _style_axes(bar.ax)
    return _finish(fig, ds, title, "cells: mean over seeds of each seed's spread")


# ----------------------------------------------------------------------------------------------
# 04: spread against one swept field
# ----------------------------------------------------------------------------------------------
@_styled
def spread_vs(
    ds: xr.Dataset,
    dim: str = "batch_size",
    variables: Sequence[str] = _SPREAD_VARS,
    clock: str | None = "T_SGD",
    title: str | None = None,
    logx: bool = True,
):
    """The spread over sigma_w (mean over seeds of each seed's spread, the seeds as points) against ``dim``; with
    ``clock``, a second panel shows each spread against the clock of its predictor (at the selected checkpoint for
    the selected predictor, at the end for the final one), one point per ``dim`` value."""
    _check_dims(ds, "sigma_w", dim)
    n = 2 if clock else 1
    fig, axes, strips = panels(n, legend="below")
    values = ds[dim].values.astype(float)
    for k in range(n):
        ax = axes[0, k]
        for j, var in enumerate(variables):
            xs = values if k == 0 else _clock_reached(ds, f"{var.split('_')[0]}_{clock}", dim)
            _mean_and_seeds(ax, xs, _seed_spread(ds, var, (dim,)).transpose(dim, ...), f"C{j}",
                            _PREDICTORS.get(var, _var_title(var)), _dodge(j, len(variables)))  # fmt: skip
        if logx and all(np.all(line.get_xdata() > 0) for line in ax.lines):
            _log_axis(ax, "x", values if k == 0 else None, base=2 if k == 0 and dim == "batch_size" else 10)
        ax.set_xlabel(_field_label(dim) if k == 0 else f"{_CLOCK_FORMULAS.get(clock, clock)} reached")
        ax.set_ylabel(_SPREAD_LABEL)
        ax.set_ylim(bottom=0)
    legend_in(strips[0], [axes[0, 0], *_estimator_handles(_n_seeds(ds), one="one seed's spread")])
    return _finish(fig, ds, title or rf"Spread over $\sigma_w$ against the {_field_label(dim)}")


def _clock_reached(ds: xr.Dataset, clock: str, dim: str) -> np.ndarray:
    """The mean of ``ds[clock]`` at each value of ``dim`` (over sigma_w and seeds)."""
    return np.array([float(ds[clock].sel({dim: v}).mean(skipna=True)) for v in ds[dim].values])


# ----------------------------------------------------------------------------------------------
# 05: depth
# ----------------------------------------------------------------------------------------------
@_styled
def depth_panels(ds: xr.Dataset, title: str | None = "Deeper ResNets against the initialization scale"):
    """Four panels against sigma_w, one colour per model (seed mean as a line, seeds as points): the final training
    accuracy (with the interpolation threshold), tau_interp (the first epoch at or above it: its line where every seed
    interpolated, a cross above the last epoch where a seed never did), and the selected and the final-epoch test
    accuracy."""
    from matplotlib.lines import Line2D

    _check_dims(ds, "sigma_w", "model")
    models = list(ds["model"].values)
    fig, axes, strips = panels(2, 2, height=2.3, legend="below")
    sigmas = ds["sigma_w"].values
    last = float(ds["epoch"].max())
    panel_vars = ("final_train_acc", "tau_interp", "selected_test_acc", "final_test_acc")
    for i, m in enumerate(models):
        sub = ds.sel(model=m)
        for ax, var in zip(axes.flat, panel_vars):
            da = _reduce_other(sub[var], ("sigma_w", "seed"))
            if var != "tau_interp":
                _mean_and_seeds(ax, sigmas, da, f"C{i}", label(m), _dodge(i, len(models)))
                continue
            every = da.notnull().all("seed") if "seed" in da.dims else da.notnull()
            ax.plot(sigmas, seed_mean(da.where(every)).values, marker="o", color=f"C{i}", label=label(m))
            _seed_marks(ax, sigmas * _dodge(i, len(models)), da, f"C{i}")
            never = (da.isnull().any("seed") if "seed" in da.dims else da.isnull()).values
            ax.plot(sigmas[never] * _dodge(i, len(models)), np.full(never.sum(), last * 1.06), "x", color=f"C{i}",
                    ms=6, label="_never")  # fmt: skip
    for ax, var in zip(axes.flat, panel_vars):
        _sigma_axis(ax, sigmas, he=False)
        ax.set_ylabel(_var_label(var))
    axes[0, 0].axhline(INTERPOLATION_THRESHOLD, color="k", lw=0.8, ls=":")
    axes[0, 1].axhline(last, color="0.6", lw=0.8, ls=":")
    axes[0, 1].set_ylim(0, last * 1.14)
    never = Line2D([], [], color=_MUTED, marker="x", ls="none", ms=6, label="never interpolated")
    legend_in(strips[0], [axes[0, 0], *_estimator_handles(_n_seeds(ds)), never])
    return _finish(fig, ds, title, f"dotted: {INTERPOLATION_THRESHOLD:g} % training accuracy, the last epoch; "
                                   r"$\tau_{\mathrm{interp}}$: first epoch at or above it")  # fmt: skip


# ----------------------------------------------------------------------------------------------
# 06: radial memory
# ----------------------------------------------------------------------------------------------
@_styled
def norm_scatter(ds: xr.Dataset, hue: str = "optimizer", title: str | None = "Radial memory: final against initial kernel norm"):
    """Left: final against initial total kernel norm (log-log), one colour per ``hue`` value, every run a point and
    the seed means joined, the identity line dashed. Right: distance from initialization ``||W_T - W_0||_F``
    relative to the initial norm, against sigma_w (seed mean, seeds as points)."""
    _check_dims(ds, "sigma_w", "epoch")
    n_hues = ds.sizes[hue] if hue in ds.dims else 1
    fig, axes, strips = panels(2, legend="below")
    initial = ds["weight_norm"].isel(epoch=0)
    final = last_finite(ds["weight_norm"])
    dist = last_finite(ds["dist_from_init"]) / initial
    lo, hi = np.inf, 0.0
    for i, (value, _) in enumerate(_iter_hue(initial, hue)):
        pick = {hue: value} if value is not None else {}
        x = _reduce_other(initial.sel(pick), ("sigma_w", "seed"))
        y = _reduce_other(final.sel(pick), ("sigma_w", "seed"))
        color = _color(value, i)
        axes[0, 0].plot(x.values.ravel(), y.values.ravel(), "o", color=color, ms=_SEED_MARKERSIZE + 1, alpha=0.7,
                        label=_hue_label(hue, value, ds))  # fmt: skip
        axes[0, 0].plot(seed_mean(x).values, seed_mean(y).values, "-", color=color, alpha=0.6, lw=1)
        finite = np.concatenate([x.values[np.isfinite(x.values)], y.values[np.isfinite(y.values)]])
        if finite.size:
            lo, hi = min(lo, finite.min()), max(hi, finite.max())
        _mean_and_seeds(axes[0, 1], ds["sigma_w"].values, _reduce_other(dist.sel(pick), ("sigma_w", "seed")), color,
                        _hue_label(hue, value, ds), _dodge(i, n_hues))  # fmt: skip
    if np.isfinite(lo) and hi > 0:
        line = np.array([lo / 1.5, hi * 1.5])
        axes[0, 0].plot(line, line, "k--", lw=0.8, label="final = initial")
    _log_axis(axes[0, 0], "x")
    _log_axis(axes[0, 0], "y")
    axes[0, 0].set_xlabel(r"initial kernel norm $\|W_0\|_F$")
    axes[0, 0].set_ylabel(r"final kernel norm $\|W_T\|_F$")
    axes[0, 0].set_title("every run; lines join the seed means")
    _sigma_axis(axes[0, 1], ds["sigma_w"].values, he=False)
    _log_axis(axes[0, 1], "y")
    axes[0, 1].set_ylabel(r"$\|W_T - W_0\|_F \,/\, \|W_0\|_F$")
    axes[0, 1].set_title("distance travelled")
    legend_in(strips[0], [axes[0, 0], *_estimator_handles(_n_seeds(ds))])
    return _finish(fig, ds, title)


def norm_trajectories(ds: xr.Dataset, col: str = "optimizer", x: str = "epoch", title: str | None = None):
    """Total kernel norm during training, one panel per ``col`` value, one line per sigma_w (seed mean).
    ``x`` may be ``epoch`` or a clock (``T_SGD``, ``T_L2``, ``T_adapt``)."""
    return training_curves(ds, var="weight_norm", col=col, x=x, title=title or "Kernel norm during training")


# ----------------------------------------------------------------------------------------------
# 07: spread against the clocks
# ----------------------------------------------------------------------------------------------
@_styled
def spread_vs_clocks(
    table: Any,
    clocks: Sequence[str] = ("T_SGD", "T_L2", "T_adapt"),
    var: str = "selected",
    title: str | None = "Spread against the forgetting clocks, every sweep",
    source: Mapping[str, xr.Dataset] | xr.Dataset | str | None = None,
    note: str | None = None,
):
    """One panel per clock: the spread over sigma_w of every configuration (a row of
    :func:`initmem.study.analysis.clock_table`) against the clock it reached (log axis; zero clocks are drawn at
    the left edge). Colour: optimizer; marker: family (SGD, SGD+L2, adaptive); the family whose own clock a
    panel shows is drawn filled, the others hollow. ``source``: the Datasets (name -> Dataset) the table was
    built from, for the caption (:func:`caption_many`), or one Dataset, or a caption string."""
    import pandas as pd
    from matplotlib.lines import Line2D

    frame = pd.DataFrame(table)
    groups = list(frame.groupby(["optimizer", "family"], sort=False)) if len(frame) else []
    fig, axes, strips = panels(len(clocks), legend="below", sharey=True)
    owners = {clock: family for family, clock in FAMILY_CLOCK.items()}
    for ax, clock in zip(axes.flat, clocks):
        ax.set_xlabel(_CLOCK_FORMULAS.get(clock, clock))
        if frame.empty or clock not in frame:
            ax.set_title(f"{_field_label(clock)}: no data")
            continue
        values = frame[clock].to_numpy(float)
        positive = values[values > 0]
        floor = positive.min() / 3 if positive.size else 1e-6
        for (opt, family), rows in groups:
            xs = rows[clock].to_numpy(float)
            own = FAMILY_CLOCK.get(family) == clock
            color = _color(opt, 0)
            ax.scatter(np.where(xs > 0, xs, floor), rows[f"{var}_spread_pp"].to_numpy(float), s=30, linewidths=1.0,
                       marker=_FAMILY_MARKERS.get(family, "o"), facecolors=color if own else "none",
                       edgecolors=color)  # fmt: skip
        _log_axis(ax, "x")
        ax.set_ylim(bottom=0)
        ax.set_title(_FAMILY_CLOCK_TITLES[owners[clock]] if clock in owners else _field_label(clock))
    axes[0, 0].set_ylabel(_SPREAD_LABEL)
    keys = [Line2D([], [], ls="none", marker=_FAMILY_MARKERS.get(family, "o"), ms=6, color=_color(opt, 0),
                   label=f"{label(opt)} ({family})") for (opt, family), _ in groups]  # fmt: skip
    legend_in(strips[0], keys)
    extra = "filled: the clock of the point's own family; zero clocks drawn at the left edge"
    if note:
        extra += f"; {note}"
    if isinstance(source, Mapping):
        return _finish(fig, caption_many(source, extra), title)
    return _finish(fig, source, title, extra)
