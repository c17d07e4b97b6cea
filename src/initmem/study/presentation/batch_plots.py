"""The figure of experiment 04: the spread against the batch size, at equal epochs and at equal steps.

:func:`batch_spreads` draws every (batch size, epochs) point of the sweep
(:func:`initmem.study.statistics.batches.batch_points`): left, the cross-fitted spread of the validation-selected predictor against the batch size, one line per
training length (a grid over batch size and epochs), or one line for batch sizes zipped with their epochs (equal
steps); right, the same spreads against the T_SGD clock each point reached. A point whose runs do not all interpolate
is drawn hollow: C5 compares only batch sizes that interpolate (:func:`initmem.study.statistics.batches.batch_comparisons`). On an
exploration's page the committed record's lines are drawn muted underneath (:mod:`initmem.study.presentation.plots.overlay`).
"""

from __future__ import annotations

import xarray as xr

from ..statistics.batches import batch_points
from ..statistics.stats import Interval, seed_mean
from .plots.captions import finish
from .plots.overlay import RECORD_LINE, record_handle, record_note
from .plots.seeds import interval_for, seed_spread
from .plots.style import MUTED, legend_in, log_axis, panels, styled

__all__ = ["batch_spreads"]


@styled
def batch_spreads(
    ds: xr.Dataset, title: str | None = "Spread against the batch size", record: xr.Dataset | None = None
):
    """See the module docstring; the seeds' mean with its 95 % calibrated interval (bars). ``record``: the committed record's
    Dataset, its line of every training length both have drawn muted underneath (:mod:`initmem.study.presentation.plots.overlay`)."""
    from matplotlib.lines import Line2D

    points = batch_points(ds)
    fig, axes, strips = panels(2, legend="below", sharey=True)
    groups = _groups(ds, points)
    theirs = dict(_groups(record, batch_points(record))) if record is not None else {}
    for label, _ in groups:
        if label in theirs:
            spreads = [_spread(point) for point in theirs[label]]
            axes[0, 0].plot(
                [p.batch_size for p in theirs[label]], [s.estimate for s in spreads], label="_record", **RECORD_LINE
            )
            axes[0, 1].plot(
                [_clock(p) for p in theirs[label]], [s.estimate for s in spreads], label="_record", **RECORD_LINE
            )
    for k, (label, group) in enumerate(groups):
        color = f"C{k}"
        xs, ys, clocks = [], [], []
        for point in group:
            interval = _spread(point)
            xs.append(point.batch_size)
            ys.append(interval.estimate)
            clocks.append(_clock(point))
            face = color if point.interpolates else "white"
            for ax, x in zip(axes[0], (point.batch_size, clocks[-1])):
                ax.errorbar(
                    [x],
                    [interval.estimate],
                    yerr=[[interval.estimate - interval.low], [interval.high - interval.estimate]]
                    if interval.has_bounds
                    else None,
                    fmt="o",
                    ms=5,
                    mfc=face,
                    mec=color,
                    color=color,
                    elinewidth=0.8,
                )
        axes[0, 0].plot(xs, ys, color=color, lw=1.0, label=label)
        axes[0, 1].plot(clocks, ys, color=color, lw=0.6, alpha=0.6)
    drawn = [*points, *(point for group in theirs.values() for point in group)]
    log_axis(axes[0, 0], "x", sorted({p.batch_size for p in drawn}), base=2)
    log_axis(axes[0, 1], "x")
    axes[0, 0].set_xlabel("batch size $b$")
    axes[0, 1].set_xlabel(r"$T_{\mathrm{SGD}}$ at the end")
    axes[0, 0].set_ylabel(r"cross-fitted spread over $\sigma_w$ (pp)")
    for ax in axes[0]:
        ax.axhline(0.0, color=MUTED, lw=0.6)
    hollow = Line2D([], [], color=MUTED, marker="o", mfc="white", ls="none", label="not every run interpolates")
    legend_in(strips[0], [axes[0, 0], hollow, *([record_handle()] if theirs else [])])
    steps = ", ".join(sorted({f"b={p.batch_size} x {p.epochs} ep: {p.steps} steps" for p in points}))
    extra = f"mean over seeds, 95 % calibrated interval; {steps}" if len(points) <= 6 else None
    return finish(fig, ds, title, record_note(record, extra) if theirs else extra)


def _groups(ds: xr.Dataset, points: list) -> list[tuple[str, list]]:
    """The lines of the figure: ``(label, points)``, one line for batch sizes zipped with their epochs (equal steps),
    else one per training length."""
    if "epochs" not in ds.dims:
        return [("equal steps (b zipped with its epochs)", points)]
    return [(f"{e} epochs", [p for p in points if p.epochs == e]) for e in sorted({p.epochs for p in points})]


def _spread(point) -> Interval:
    """The cross-fitted spread of a point's validation-selected predictor over its seeds (one seed: its raw
    spread), mean with its 95 % interval (the ledger's calibrated one, :func:`~initmem.study.presentation.plots.seeds.interval_for`)."""
    per_seed = seed_spread(point.ds, "selected_test_acc", ())
    return interval_for(per_seed)(per_seed.values)


def _clock(point) -> float:
    """The T_SGD clock a point's runs reached at the end (mean over sigma_w and seeds)."""
    return float(seed_mean(point.ds["final_T_SGD"]).mean())
