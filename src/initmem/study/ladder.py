"""The scale ladder (chapter 11): each optimizer's spread on every rung of width x training images, set against the
paper's number, and whether climbing a rung moves it there.

A rung is one ``(width, train_size)`` of a combined Dataset with ``width``, ``train_size``, ``optimizer``,
``sigma_w`` and ``seed`` dimensions (``initmem.study.experiments.e11_scale_ladder``); a rung no run holds is all NaN
and is left out. On each rung an optimizer's spread is the ledger's: the mean of the per-seed cross-fitted spreads of
the validation-selected test accuracy (:func:`initmem.study.ledger.cross_fitted`), with the interval calibrated for
the design (:class:`initmem.study.calibration.CrossFitted`). A rung's **shift** is its spread minus the first
rung's, paired by seed (the same seeds draw the same initial directions on every rung), with the calibrated interval
of a contrast; it moves **towards** the paper's number when that interval lies wholly on the paper's side of 0,
**away** when wholly on the other, and otherwise the seeds cannot tell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from .calibration import CrossFitted
from .ledger import PAPER, band, cross_fitted
from .stats import Interval

__all__ = ["TARGETS", "TOWARDS", "AWAY", "UNTOLD", "Rung", "rungs", "ladder_frame", "target"]

#: The paper's number each optimizer of the ladder is read against: ``optimizer -> (claim, part)`` of
#: :data:`initmem.study.ledger.PAPER` (SGD's 26.5-pp spread, C1; Adam's "minimal", C2).
TARGETS = {"sgd": ("C1", ""), "adam": ("C2", "Adam")}
TOWARDS = "towards the paper"
AWAY = "away from the paper"
UNTOLD = "no shift the seeds can tell"


@dataclass(frozen=True)
class Rung:
    """One optimizer on one rung: ``spread`` (pp, calibrated interval), ``shift`` from the first rung (pp, paired
    by seed; no bounds on the first rung itself) and its reading ``moves`` (:data:`TOWARDS`, :data:`AWAY`,
    :data:`UNTOLD`; empty on the first rung), ``in_band`` (the spread's interval inside the paper's band),
    ``train_acc`` (the final train accuracy, mean over runs, %), ``runs`` and ``core_seconds`` (the runs' recorded
    wall time, each on one thread)."""

    optimizer: str
    width: int
    train_size: int
    spread: Interval
    shift: Interval
    moves: str
    in_band: bool
    train_acc: float
    runs: int
    core_seconds: float


def target(optimizer: str) -> tuple[float, tuple[float, float]]:
    """The paper's number for ``optimizer`` (pp) and its band (:func:`initmem.study.ledger.band`)."""
    claim, part = TARGETS[optimizer]
    return PAPER[claim]["values"][part], band(claim, part)


def _present(ds: xr.Dataset) -> list[tuple[int, int]]:
    """The ``(width, train_size)`` rungs of ``ds`` (one optimizer's) that hold a finite selected test accuracy, in the
    Dataset's order."""
    acc = ds["selected_test_acc"]
    held = np.isfinite(acc).any([d for d in acc.dims if d not in ("width", "train_size")])
    return [
        (int(w), int(n))
        for w in ds["width"].values
        for n in ds["train_size"].values
        if bool(held.sel(width=w, train_size=n))
    ]


def _moves(shift: Interval, first: float, paper: float) -> str:
    if not shift.has_bounds:
        return UNTOLD
    side = 1.0 if paper >= first else -1.0  # the sign of a shift towards the paper's number
    if side * shift.low > 0 and side * shift.high > 0:
        return TOWARDS
    if side * shift.low < 0 and side * shift.high < 0:
        return AWAY
    return UNTOLD


def rungs(ds: xr.Dataset) -> list[Rung]:
    """Every optimizer of :data:`TARGETS` in ``ds`` on every rung that holds its runs, rung by rung in the Dataset's
    order (its first rung is the reference of its shifts)."""
    n_sigma = ds.sizes["sigma_w"]
    spread_of, shift_of = CrossFitted(n_sigma, "spread"), CrossFitted(n_sigma, "contrast")
    out = []
    for optimizer in (o for o in TARGETS if o in ds["optimizer"].values):
        present = _present(ds.sel(optimizer=optimizer))
        if not present:
            continue
        paper, (low, high) = target(optimizer)
        cut = {rung: ds.sel(optimizer=optimizer, width=rung[0], train_size=rung[1]) for rung in present}
        per_seed = {rung: cross_fitted(one) for rung, one in cut.items()}
        spreads = {rung: spread_of.interval(values) for rung, values in per_seed.items()}
        reference = present[0]
        for rung, one in cut.items():
            spread = spreads[rung]
            if rung == reference:
                shift, moves = Interval(0.0, math.nan, math.nan, spread.n, shift_of.label), ""
            else:
                shift = shift_of.interval(per_seed[rung] - per_seed[reference])
                moves = _moves(shift, spreads[reference].estimate, paper)
            wall = one["wall_time_s"].values
            out.append(
                Rung(
                    optimizer,
                    rung[0],
                    rung[1],
                    spread,
                    shift,
                    moves,
                    spread.has_bounds and low <= spread.low and spread.high <= high,
                    float(np.nanmean(one["final_train_acc"].values)),
                    int(np.isfinite(wall).sum()),
                    float(np.nansum(wall)),
                )
            )
    return out


def ladder_frame(ladder: list[Rung]) -> Any:
    """:func:`rungs` as a table for a page (pandas, indexed by optimizer and rung)."""
    import pandas as pd

    return pd.DataFrame(
        {
            "spread (pp)": [r.spread.brief() for r in ladder],
            "shift from the first rung (pp)": [r.shift.brief() if r.moves else "(reference)" for r in ladder],
            "reading": [r.moves or "" for r in ladder],
            "in the paper's band": ["yes" if r.in_band else "no" for r in ladder],
            "final train acc (%)": [f"{r.train_acc:.1f}" for r in ladder],
            "runs": [r.runs for r in ladder],
            "measured core-min": [f"{r.core_seconds / 60:.0f}" for r in ladder],
        },
        index=pd.MultiIndex.from_tuples(
            [(r.optimizer, f"width {r.width}, {r.train_size:,} images") for r in ladder], names=["optimizer", "rung"]
        ),
    )
