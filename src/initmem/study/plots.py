"""The figures of the experiment notebooks and the book: each function takes sweep Datasets (or tables built
from them) and returns a :class:`matplotlib.figure.Figure`.

Every figure carries a caption line at its bottom (:func:`caption`) naming the preset, model, width, data
size and seeds it came from, read from the Dataset's attributes (``preset`` and the sweep ``spec``) and
coordinates, so a figure copied out of context still says what it shows.

Style: one palette for the optimizers (:data:`OPTIMIZER_COLORS`), a sequential colormap for sigma_w, and
:data:`STYLE` applied through ``matplotlib.rc_context`` (nothing global is changed). Error bars are 95 %
Student-t intervals over seeds where there are at least two seeds, otherwise absent.

Example::

    from initmem import plots
    fig = plots.acc_vs_sigma(ds, hue="optimizer")
    fig.savefig("acc.png")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ..run.metrics import INTERPOLATION_THRESHOLD
from .analysis import field_values
from .stats import seed_mean

__all__ = [
    "STYLE",
    "OPTIMIZER_COLORS",
    "OPTIMIZER_LABELS",
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

STYLE: dict[str, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
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
_VAR_LABELS = {
    "selected_test_acc": "selected test acc. (%)",
    "final_test_acc": "final-epoch test acc. (%)",
    "final_train_acc": "final train acc. (%)",
    "tau_interp": "tau_interp (epoch)",
    "test_acc": "test acc. (%)",
    "train_acc": "train acc. (%)",
    "val_acc": "val. acc. (%)",
    "val_loss": "val. loss",
    "weight_norm": "kernel norm ||W||_F",
    "dist_from_init": "||W - W0||_F",
}
_SPREAD_VARS = ("selected_test_acc", "final_test_acc")
_CLOCK_LABELS = {"T_SGD": r"$T_{SGD} = \frac{1}{b}\sum_k \eta_k^2$", "T_L2": r"$T_{L2} = \lambda\sum_k \eta_k$",
                 "T_adapt": r"$T_{adapt} = \sum_k \eta_k$"}  # fmt: skip
_FAMILY_MARKERS = {"SGD": "o", "SGD+L2": "s", "adaptive": "^"}


def _plt():
    import matplotlib.pyplot as plt

    return plt


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


def _color(name: Any, i: int) -> str:
    return OPTIMIZER_COLORS.get(str(name), f"C{i % 10}")


# ----------------------------------------------------------------------------------------------
# Caption
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
    """Title on top; at the bottom the caption of ``ds`` (or ``ds`` itself if it is a string)."""
    if title:
        fig.suptitle(title, fontsize=11)
    text = ds if isinstance(ds, str) else caption(ds, extra) if ds is not None else extra
    if text:
        fig.supxlabel(_wrap(text), fontsize=7.5, color="0.35")
    return fig


def _wrap(text: str, width: int = 150) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_long_words=False)) if len(text) > width else text


def _figure(ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.3, **kw):
    plt = _plt()
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), layout="constrained",
                                 squeeze=False, **kw)  # fmt: skip
    for ax in axes.flat:
        _style_axes(ax)
    return fig, axes


def _style_axes(ax) -> None:
    ax.grid(True, alpha=0.3)
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.tick_params(labelsize=9)


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


# ----------------------------------------------------------------------------------------------
# Statistics helpers
# ----------------------------------------------------------------------------------------------
def _mean_ci(da: xr.DataArray, seed_dim: str = "seed") -> tuple[xr.DataArray, xr.DataArray]:
    """Seed mean and the half-width of its 95 % t-interval (NaN with < 2 finite seeds; see :mod:`initmem.study.stats`)."""
    from .stats import mean_interval

    if seed_dim not in da.dims:
        return da, xr.full_like(da, np.nan, dtype=float)
    intervals = xr.apply_ufunc(lambda x: mean_interval(x).high - mean_interval(x).estimate, da,
                               input_core_dims=[[seed_dim]], vectorize=True)  # fmt: skip
    return da.mean(seed_dim, skipna=True), intervals


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
            text += f" (lr {float(ds['lr'].sel(optimizer=value)):g})"
        return text
    if hue == "model":
        return label(value)
    return f"{hue} = {value:g}" if isinstance(value, (int, float)) else f"{hue} = {value}"


def _check_dims(ds: xr.Dataset | xr.DataArray, *dims: str) -> None:
    missing = [d for d in dims if d not in ds.dims]
    if missing:
        raise ValueError(f"expected dimension(s) {', '.join(missing)}; the data has {', '.join(map(str, ds.dims))}")


def _reduce_other(da: xr.DataArray, keep: Sequence[str]) -> xr.DataArray:
    """Select the first value of every dimension not in ``keep`` (with a size > 1 that would be ambiguous)."""
    for dim in list(da.dims):
        if dim not in keep:
            da = da.isel({dim: 0})
    return da


# ----------------------------------------------------------------------------------------------
# 01: accuracy against sigma_w, spreads
# ----------------------------------------------------------------------------------------------
def acc_vs_sigma(
    ds: xr.Dataset,
    hue: str | None = "optimizer",
    variables: Sequence[str] = _SPREAD_VARS,
    title: str | None = "Test accuracy against the initialisation scale",
    chance: float | None = 10.0,
):
    """One panel per variable (default: the validation-selected and the final-epoch test accuracy):
    seed-mean accuracy against sigma_w (log axis), one line per ``hue`` value, 95 % intervals over seeds."""
    _check_dims(ds, "sigma_w")
    fig, axes = _figure(len(variables))
    for ax, var in zip(axes.flat, variables):
        for i, (value, da) in enumerate(_iter_hue(ds[var], hue)):
            da = _reduce_other(da, ("sigma_w", "seed"))
            mean, half = _mean_ci(da)
            x = da["sigma_w"].values
            color = _color(value, i)
            ax.errorbar(x, mean.values, yerr=np.nan_to_num(half.values, nan=0.0), marker="o", color=color,
                        capsize=2, label=_hue_label(hue, value, ds))  # fmt: skip
        _log_axis(ax, "x", ds["sigma_w"].values)
        ax.set_xlabel(r"$\sigma_w$")
        ax.set_ylabel(_VAR_LABELS.get(var, var))
        if chance is not None:
            ax.axhline(chance, color="0.6", lw=0.8, ls=":")
        if np.sqrt(2) >= float(ds["sigma_w"].min()) and np.sqrt(2) <= float(ds["sigma_w"].max()):
            ax.axvline(np.sqrt(2), color="0.7", lw=0.8, ls="--")
        ax.set_title(_VAR_LABELS.get(var, var).replace(" (%)", ""))
    if hue is not None and hue in ds.dims:
        # accuracy falls with sigma_w, so the lower left corner is the one the curves leave free
        axes.flat[0].legend(loc="lower left", fontsize="small", framealpha=0.9)
    return _finish(fig, ds, title, "dashed: He init. (sqrt 2); dotted: chance")


def spread_bars(
    ds: xr.Dataset,
    by: str = "optimizer",
    variables: Sequence[str] = _SPREAD_VARS,
    title: str | None = "Initialization memory: spread over sigma_w",
    paper: Mapping[str, float] | None = None,
):
    """Bars of the spread (the mean over seeds of the per-seed max - min over sigma_w) per ``by`` value, for the
    selected and the final-epoch test accuracy, with its 95 % t-interval (:func:`initmem.study.summary.summary_table`). ``paper``: optional reference values per ``by`` value (drawn as
    black ticks)."""
    from .summary import summary_table

    _check_dims(ds, "sigma_w", by)
    table = summary_table(ds, over="sigma_w", by=by, variables=tuple(variables))
    fig, axes = _figure(1, width=max(4.5, 1.1 * len(table) + 2.5))
    ax = axes[0, 0]
    names = list(table.index)
    x = np.arange(len(names))
    w = 0.8 / len(variables)
    for j, var in enumerate(variables):
        p = var.removesuffix("_test_acc")
        heights = table[f"{p}_spread_pp"].to_numpy(float)
        low = table[f"{p}_ci95_low"].to_numpy(float)
        high = table[f"{p}_ci95_high"].to_numpy(float)
        centre = heights
        colors = [_color(n, i) for i, n in enumerate(names)]
        bars = ax.bar(x + (j - (len(variables) - 1) / 2) * w, heights, w * 0.95, color=colors,
                      alpha=1.0 if j == 0 else 0.45, label=_VAR_LABELS.get(var, var).replace(" (%)", ""),
                      edgecolor="k", linewidth=0.5, hatch=None if j == 0 else "//")  # fmt: skip
        ok = np.isfinite(low) & np.isfinite(high)
        if ok.any():
            xs = np.array([b.get_x() + b.get_width() / 2 for b in bars])
            ax.errorbar(xs[ok], centre[ok], yerr=[centre[ok] - low[ok], high[ok] - centre[ok]], fmt="none",
                        ecolor="k", capsize=3, lw=1)  # fmt: skip
    if paper:
        for i, n in enumerate(names):
            if str(n) in paper:
                ax.plot([i - 0.45, i + 0.45], [paper[str(n)]] * 2, color="k", lw=2)
    ax.set_xticks(x, [label(n) if by in ("optimizer", "model") else f"{n:g}" if isinstance(n, (int, float)) else str(n)
                      for n in names])  # fmt: skip
    ax.set_ylabel("spread over $\\sigma_w$ (pp)")
    ax.set_xlabel(by)
    ax.legend()
    extra = "bars: mean over seeds of the per-seed spread; whiskers: its 95 % t-interval"
    if paper:
        extra += "; black: paper"
    return _finish(fig, ds, title, extra)


def training_curves(
    ds: xr.Dataset,
    var: str = "test_acc",
    col: str | None = "optimizer",
    title: str | None = None,
    x: str = "epoch",
    max_panels: int = 6,
):
    """Per-epoch curves of ``var`` (seed mean), one panel per ``col`` value, one line per sigma_w; the
    validation-selected epoch of each curve is marked (a dot)."""
    _check_dims(ds, "sigma_w", "epoch")
    panels = list(_iter_hue(ds[var], col))[:max_panels]
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = _figure(ncols, nrows, width=3.4, height=2.8, sharey=True)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    plt = _plt()
    cmap = plt.get_cmap("viridis")
    sig = ds["sigma_w"].values
    for ax, (value, da) in zip(axes.flat, panels):
        sub = ds.sel({col: value}) if value is not None else ds
        for k, s in enumerate(sig):
            curve = _reduce_other(da.sel(sigma_w=s), ("epoch", "seed"))
            curve = seed_mean(curve)
            ok = np.isfinite(curve.values)
            xs = sub[x].values if x == "epoch" else _reduce_other(sub[x].sel(sigma_w=s), ("epoch", "seed"))
            if x != "epoch":
                xs = seed_mean(xs).values
            color = cmap(k / max(1, len(sig) - 1))
            ax.plot(np.asarray(xs)[ok], curve.values[ok], color=color, label=f"$\\sigma_w$ = {s:g}")
            best = _reduce_other(sub["best_epoch"].sel(sigma_w=s), ("seed",))
            best = float(best.isel(seed=0)) if "seed" in best.dims else float(best)
            if np.isfinite(best) and x == "epoch" and best in set(curve["epoch"].values):
                ax.plot([best], [float(curve.sel(epoch=best))], "o", color=color, ms=4)
        ax.set_title(_hue_label(col, value, ds) if value is not None else var)
        ax.set_xlabel(x)
        if x != "epoch":
            _log_axis(ax, "x")
        if var in ("weight_norm", "dist_from_init"):
            _log_axis(ax, "y")
    for row in axes:
        row[0].set_ylabel(_VAR_LABELS.get(var, var))
    axes.flat[0].legend()
    return _finish(fig, ds, title or f"{_VAR_LABELS.get(var, var)} during training", "dots: validation-selected epoch (seed 0)")


# ----------------------------------------------------------------------------------------------
# 02: spread against the training length
# ----------------------------------------------------------------------------------------------
def spread_vs_horizon(h: xr.Dataset, title: str | None = "Spread against training length", paper_epochs: float | None = None):
    """Left: spread over sigma_w of the selected and final test accuracy against the horizon T (epochs),
    from :func:`initmem.study.analysis.within_horizons`, with 95 % intervals of the per-seed spreads; the top axis
    shows the T_SGD clock reached. Right: selected test accuracy against sigma_w at each horizon."""
    from .stats import spread

    _check_dims(h, "horizon", "sigma_w")
    fig, axes = _figure(2)
    ax = axes[0, 0]
    T = h["horizon"].values
    for j, var in enumerate(_SPREAD_VARS):
        per_seed = spread(h[var], "sigma_w")
        mean_curve = seed_mean(h[var])
        headline = spread(mean_curve, "sigma_w")
        _, half = _mean_ci(per_seed)
        centre = seed_mean(per_seed)
        ax.plot(T, headline.values, marker="o", color=f"C{j}", label=_VAR_LABELS[var].replace(" (%)", ""))
        ok = np.isfinite(half.values)
        if ok.any():
            ax.errorbar(T[ok], centre.values[ok], yerr=half.values[ok], fmt="none", ecolor=f"C{j}", capsize=2, alpha=0.6)
    _log_axis(ax, "x", T)
    ax.set_xlabel("training horizon T (epochs)")
    ax.set_ylabel("spread over $\\sigma_w$ (pp)")
    ax.set_ylim(bottom=0)
    ax.legend()
    if "T_SGD" in h:
        clock = h["T_SGD"].mean([d for d in h["T_SGD"].dims if d != "horizon"]).values
        from matplotlib.ticker import NullFormatter

        top = ax.secondary_xaxis("top")
        top.xaxis.set_minor_formatter(NullFormatter())
        top.set_xticks(T[:: max(1, len(T) // 4)], [f"{c:.2g}" for c in clock[:: max(1, len(T) // 4)]])
        top.set_xlabel("$T_{SGD}$ reached", fontsize=8)
        top.tick_params(labelsize=7)
    ax2 = axes[0, 1]
    plt = _plt()
    cmap = plt.get_cmap("magma_r")
    for k, t in enumerate(T):
        da = h["selected_test_acc"].sel(horizon=t)
        da = _reduce_other(da, ("sigma_w", "seed"))
        mean, _ = _mean_ci(da)
        ax2.plot(da["sigma_w"].values, mean.values, marker="o", color=cmap(0.2 + 0.7 * k / max(1, len(T) - 1)),
                 label=f"T = {int(t)}")  # fmt: skip
    _log_axis(ax2, "x", h["sigma_w"].values)
    ax2.set_xlabel(r"$\sigma_w$")
    ax2.set_ylabel(_VAR_LABELS["selected_test_acc"])
    ax2.legend()
    extra = "selection restricted to epochs <= T of one long run per sigma_w and seed"
    if paper_epochs:
        extra += f"; the paper trains {paper_epochs:g} epochs"
    return _finish(fig, h, title, extra)


# ----------------------------------------------------------------------------------------------
# 03: spread over (lr, lambda)
# ----------------------------------------------------------------------------------------------
def spread_heatmap(
    ds: xr.Dataset,
    x: str = "lr",
    y: str = "weight_decay",
    variables: Sequence[str] = _SPREAD_VARS,
    clock: str | None = "T_L2",
    title: str | None = "Spread over sigma_w against learning rate and L2 strength",
):
    """One heatmap per variable: the spread (seed mean, pp) in each (``x``, ``y``) cell, annotated with
    the spread and (``clock``) the clock the cell's runs reached."""
    from .stats import spread

    _check_dims(ds, "sigma_w", x, y)
    fig, axes = _figure(len(variables), width=4.4, height=3.6)
    for ax, var in zip(axes.flat, variables):
        clock_var = f"{var.split('_')[0]}_{clock}" if clock else None  # the clock of the predictor shown
        values = seed_mean(ds[var])
        grid = _reduce_other(spread(values, "sigma_w"), (x, y)).transpose(y, x)
        im = ax.imshow(grid.values, origin="lower", cmap="viridis", aspect="auto",
                       vmin=0, vmax=max(1.0, float(np.nanmax(grid.values)) if np.isfinite(grid.values).any() else 1.0))  # fmt: skip
        for (iy, ix), v in np.ndenumerate(grid.values):
            text = "n/a" if not np.isfinite(v) else f"{v:.1f}"
            if clock_var in ds:
                c = ds[clock_var].sel({x: grid[x].values[ix], y: grid[y].values[iy]})
                c = float(c.mean(skipna=True))
                text += f"\n{clock}={c:.2g}"
            ax.text(ix, iy, text, ha="center", va="center", fontsize=7.5,
                    color="w" if np.isfinite(v) and v < 0.6 * np.nanmax(grid.values) else "k")  # fmt: skip
        ax.set_xticks(range(grid.sizes[x]), [f"{v:g}" for v in grid[x].values])
        ax.set_yticks(range(grid.sizes[y]), [f"{v:g}" for v in grid[y].values])
        ax.set_xlabel("learning rate" if x == "lr" else x)
        ax.set_ylabel("L2 strength $\\lambda$" if y == "weight_decay" else y)
        ax.grid(False)
        ax.set_title(f"spread of {_VAR_LABELS.get(var, var).replace(' (%)', '')} (pp)")
        fig.colorbar(im, ax=ax, shrink=0.85)
    return _finish(fig, ds, title)


# ----------------------------------------------------------------------------------------------
# 04: spread against one swept field
# ----------------------------------------------------------------------------------------------
def spread_vs(
    ds: xr.Dataset,
    dim: str = "batch_size",
    variables: Sequence[str] = _SPREAD_VARS,
    clock: str | None = "T_SGD",
    title: str | None = None,
    logx: bool = True,
):
    """Spread over sigma_w (mean of the per-seed spreads, whiskers: its 95 % t-interval) against ``dim``; with
    ``clock``, a second panel shows each spread against the clock of its predictor (at the selected checkpoint for
    the selected predictor, at the end for the final one), one point per ``dim`` value."""
    from .summary import summary_table

    _check_dims(ds, "sigma_w", dim)
    table = summary_table(ds, over="sigma_w", by=dim, variables=tuple(variables))
    n = 2 if clock else 1
    fig, axes = _figure(n)
    xs = np.asarray(table.index, dtype=float)
    for k in range(n):
        ax = axes[0, k]
        for j, var in enumerate(variables):
            p = var.removesuffix("_test_acc")
            xvals = xs
            if k == 1:
                c = ds[f"{var.split('_')[0]}_{clock}"]
                xvals = np.array([float(c.sel({dim: v}).mean(skipna=True)) for v in table.index])
            centre = table[f"{p}_spread_pp"].to_numpy(float)
            low, high = table[f"{p}_ci95_low"].to_numpy(float), table[f"{p}_ci95_high"].to_numpy(float)
            ax.plot(xvals, centre, marker="o", color=f"C{j}", label=_VAR_LABELS.get(var, var).replace(" (%)", ""))
            ok = np.isfinite(low) & np.isfinite(high)
            if ok.any():
                ax.errorbar(xvals[ok], centre[ok], yerr=[centre[ok] - low[ok], high[ok] - centre[ok]], fmt="none",
                            ecolor=f"C{j}", capsize=2, alpha=0.6)  # fmt: skip
        if logx and np.all(np.asarray(xvals) > 0):
            _log_axis(ax, "x", xs if k == 0 else None, base=2 if k == 0 and dim == "batch_size" else 10)
        ax.set_xlabel(dim.replace("_", " ") if k == 0 else _CLOCK_LABELS.get(clock, clock) + " reached")
        ax.set_ylabel("spread over $\\sigma_w$ (pp)")
        ax.set_ylim(bottom=0)
    axes.flat[0].legend()
    return _finish(fig, ds, title or f"Spread over sigma_w against {dim.replace('_', ' ')}")


# ----------------------------------------------------------------------------------------------
# 05: depth
# ----------------------------------------------------------------------------------------------
def depth_panels(ds: xr.Dataset, title: str | None = "Deeper ResNets against the initialisation scale"):
    """Three panels against sigma_w, one line per model: final training accuracy (with the 99.5 %
    interpolation line), tau_interp (runs that never interpolate are drawn at the top as crosses), and the
    selected and final test accuracy."""
    _check_dims(ds, "sigma_w", "model")
    fig, axes = _figure(3, width=3.8)
    models = list(ds["model"].values)
    max_epoch = float(ds["epoch"].max())
    for i, m in enumerate(models):
        sub = ds.sel(model=m)
        color = f"C{i}"
        x = sub["sigma_w"].values
        mean, half = _mean_ci(_reduce_other(sub["final_train_acc"], ("sigma_w", "seed")))
        axes[0, 0].errorbar(x, mean.values, yerr=np.nan_to_num(half.values), marker="o", color=color, capsize=2,
                            label=label(m))  # fmt: skip
        tau = _reduce_other(sub["tau_interp"], ("sigma_w", "seed"))
        tau_m = seed_mean(tau)
        never = ~np.isfinite(tau_m.values)
        axes[0, 1].plot(x[~never], tau_m.values[~never], marker="o", color=color, label=label(m))
        if never.any():
            axes[0, 1].plot(x[never], np.full(never.sum(), max_epoch * 1.05), "x", color=color, ms=7)
        sel, _ = _mean_ci(_reduce_other(sub["selected_test_acc"], ("sigma_w", "seed")))
        fin, _ = _mean_ci(_reduce_other(sub["final_test_acc"], ("sigma_w", "seed")))
        axes[0, 2].plot(x, sel.values, marker="o", color=color, label=f"{label(m)} selected")
        axes[0, 2].plot(x, fin.values, marker="s", ls="--", color=color, alpha=0.6, label=f"{label(m)} final")
    axes[0, 0].axhline(INTERPOLATION_THRESHOLD, color="k", lw=0.8, ls=":")
    axes[0, 0].set_ylabel(_VAR_LABELS["final_train_acc"])
    axes[0, 1].axhline(max_epoch, color="0.6", lw=0.8, ls=":")
    axes[0, 1].set_ylabel("tau_interp (epoch)")
    axes[0, 1].set_ylim(0, max_epoch * 1.12)
    axes[0, 2].set_ylabel("test acc. (%)")
    for ax in axes.flat:
        _log_axis(ax, "x", ds["sigma_w"].values)
        ax.set_xlabel(r"$\sigma_w$")
    axes[0, 0].legend()
    axes[0, 2].legend(fontsize=6.5, ncol=1)
    return _finish(fig, ds, title, f"dotted: {INTERPOLATION_THRESHOLD:g} % / last epoch; crosses: never interpolated")


# ----------------------------------------------------------------------------------------------
# 06: radial memory
# ----------------------------------------------------------------------------------------------
def norm_scatter(ds: xr.Dataset, hue: str = "optimizer", title: str | None = "Radial memory: final against initial kernel norm"):
    """Left: final against initial total kernel norm (log-log), one colour per ``hue`` value, every seed a
    point, the identity line dashed. Right: distance from initialisation ``||W_T - W_0||_F`` relative to the
    initial norm, against sigma_w."""
    from .analysis import last_finite

    _check_dims(ds, "sigma_w", "epoch")
    fig, axes = _figure(2)
    initial = ds["weight_norm"].isel(epoch=0)
    final = last_finite(ds["weight_norm"])
    dist = last_finite(ds["dist_from_init"]) / initial
    lo, hi = np.inf, 0.0
    for i, (value, _) in enumerate(_iter_hue(initial, hue)):
        pick = {hue: value} if value is not None else {}
        x = _reduce_other(initial.sel(pick), ("sigma_w", "seed")).values.ravel()
        y = _reduce_other(final.sel(pick), ("sigma_w", "seed")).values.ravel()
        color = _color(value, i)
        axes[0, 0].plot(x, y, "o", color=color, label=_hue_label(hue, value, ds), alpha=0.8)
        order = np.argsort(x)
        axes[0, 0].plot(x[order], y[order], "-", color=color, alpha=0.4, lw=1)
        finite = np.concatenate([x[np.isfinite(x)], y[np.isfinite(y)]])
        if finite.size:
            lo, hi = min(lo, finite.min()), max(hi, finite.max())
        d = _reduce_other(dist.sel(pick), ("sigma_w", "seed"))
        mean, half = _mean_ci(d)
        axes[0, 1].errorbar(d["sigma_w"].values, mean.values, yerr=np.nan_to_num(half.values), marker="o",
                            color=color, capsize=2, label=_hue_label(hue, value, ds))  # fmt: skip
    if np.isfinite(lo) and hi > 0:
        line = np.array([lo / 1.5, hi * 1.5])
        axes[0, 0].plot(line, line, "k--", lw=0.8, label="final = initial")
    _log_axis(axes[0, 0], "x")
    _log_axis(axes[0, 0], "y")
    axes[0, 0].set_xlabel("initial kernel norm $\\|W_0\\|_F$")
    axes[0, 0].set_ylabel("final kernel norm $\\|W_T\\|_F$")
    axes[0, 0].legend()
    _log_axis(axes[0, 1], "x", ds["sigma_w"].values)
    _log_axis(axes[0, 1], "y")
    axes[0, 1].set_xlabel(r"$\sigma_w$")
    axes[0, 1].set_ylabel("$\\|W_T - W_0\\|_F / \\|W_0\\|_F$")
    return _finish(fig, ds, title)


def norm_trajectories(ds: xr.Dataset, col: str = "optimizer", x: str = "epoch", title: str | None = None):
    """Total kernel norm during training, one panel per ``col`` value, one line per sigma_w (seed mean).
    ``x`` may be ``epoch`` or a clock (``T_SGD``, ``T_L2``, ``T_adapt``)."""
    return training_curves(ds, var="weight_norm", col=col, x=x, title=title or "Kernel norm during training")


# ----------------------------------------------------------------------------------------------
# 07: spread against the clocks
# ----------------------------------------------------------------------------------------------
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

    frame = pd.DataFrame(table)
    fig, axes = _figure(len(clocks), width=3.8)
    spread_col = f"{var}_spread_pp"
    from .analysis import FAMILY_CLOCK

    for ax, clock in zip(axes.flat, clocks):
        if frame.empty or clock not in frame:
            ax.set_title(f"{clock}: no data")
            continue
        values = frame[clock].to_numpy(float)
        positive = values[values > 0]
        floor = positive.min() / 3 if positive.size else 1e-6
        for (opt, family), rows in frame.groupby(["optimizer", "family"], sort=False):
            xs = rows[clock].to_numpy(float)
            xs = np.where(xs > 0, xs, floor)
            own = FAMILY_CLOCK.get(family) == clock
            color = _color(opt, 0)
            ax.scatter(xs, rows[spread_col].to_numpy(float), marker=_FAMILY_MARKERS.get(family, "o"), s=30,
                       facecolors=color if own else "none", edgecolors=color, linewidths=1.0,
                       label=f"{label(opt)} ({family})")  # fmt: skip
        _log_axis(ax, "x")
        ax.set_xlabel(_CLOCK_LABELS.get(clock, clock))
        ax.set_ylabel("spread over $\\sigma_w$ (pp)")
        ax.set_ylim(bottom=0)
        ax.set_title(clock)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        uniq = dict(zip(labels, handles))
        fig.legend(uniq.values(), uniq.keys(), loc="outside right upper", fontsize=7)
    extra = "filled: the clock of the point's own family; zero clocks drawn at the left edge"
    if note:
        extra += f"; {note}"
    if isinstance(source, Mapping):
        return _finish(fig, caption_many(source, extra), title)
    return _finish(fig, source, title, extra)
