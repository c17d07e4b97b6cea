"""Experiment 04's points and C5's fair comparisons: :func:`batch_points` (one per batch size and training length,
with the steps taken and whether every run interpolates) and :func:`batch_comparisons` (the pairs of interpolating
batch sizes at equal steps and at equal epochs)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from ...run.thresholds import INTERPOLATION_THRESHOLD
from .analysis import field_values, last_finite

__all__ = ["BatchPoint", "batch_points", "batch_comparisons"]


@dataclass(frozen=True)
class BatchPoint:
    """One (batch size, epochs) point of experiment 04: its runs ``ds`` (dims sigma_w and seed), the optimisation
    ``steps`` they took and whether every one of them interpolates (final train accuracy >= 99.5 %)."""

    batch_size: int
    epochs: int
    steps: int
    interpolates: bool
    ds: xr.Dataset

    @property
    def label(self) -> str:
        return f"b={self.batch_size}, {self.epochs} epochs ({self.steps} steps)"

    @property
    def selected_steps(self) -> float:
        """The mean over runs of the steps taken at the validation-selected checkpoint (the predictor the verdict
        judges; ``steps`` is the run's length); NaN where no run has one."""
        if "step" not in self.ds or "best_epoch" not in self.ds:
            return float("nan")
        at = self.ds["step"].where(self.ds["epoch"] == self.ds["best_epoch"]).max("epoch")
        return float(at.mean(skipna=True))

    @property
    def selected_T_SGD(self) -> float:
        """The mean over runs of T_SGD at the validation-selected checkpoint; NaN where not recorded."""
        return float(self.ds["selected_T_SGD"].mean(skipna=True)) if "selected_T_SGD" in self.ds else float("nan")


def batch_points(ds: xr.Dataset) -> list[BatchPoint]:
    """Every (batch size, epochs) point of an experiment-04 Dataset, sorted by batch size then epochs: a grid over
    both, or batch sizes zipped with their epochs (an ``epochs`` coordinate along ``batch_size``)."""
    if "epochs" in ds.dims:
        combos = [
            ({"batch_size": b, "epochs": e}, int(b), int(e))
            for b in ds["batch_size"].values
            for e in ds["epochs"].values
        ]
    else:
        epochs = field_values(ds, "epochs")
        if len(epochs) == 1:
            epochs = epochs * ds.sizes["batch_size"]
        combos = [({"batch_size": b}, int(b), int(e)) for b, e in zip(ds["batch_size"].values, epochs)]
    points = []
    for selection, b, e in combos:
        sub = ds.sel(selection)
        if "epochs" in sub.coords and "epochs" not in sub.dims:
            sub = sub.drop_vars("epochs")
        steps = int(np.nanmax(last_finite(sub["step"]).values)) if "step" in sub else 0
        train = sub["final_train_acc"]  # a diverged run (NaN) is left out, as every claim's premise leaves it
        interpolates = bool(train.notnull().any() and not (train < INTERPOLATION_THRESHOLD).any())
        points.append(BatchPoint(b, e, steps, interpolates, sub))
    return sorted(points, key=lambda p: (p.batch_size, p.epochs))


def batch_comparisons(ds: xr.Dataset, tolerance: float = 0.05) -> dict[str, tuple[BatchPoint, BatchPoint] | None]:
    """C5's two fair comparisons, each a (smaller batch, larger batch) pair of :func:`batch_points` whose runs all
    interpolate, or None where no such pair exists:

    * ``"equal steps"``: steps within ``tolerance`` of each other; the pair with the largest batch ratio (ties: the
      most steps);
    * ``"equal epochs"``: the same epochs; the pair with the largest batch ratio (ties: the most epochs).
    """
    usable = [p for p in batch_points(ds) if p.interpolates]
    pairs = [(a, b) for a in usable for b in usable if b.batch_size > a.batch_size]
    designs = {
        "equal steps": [(a, b) for a, b in pairs if abs(b.steps - a.steps) <= tolerance * max(a.steps, b.steps, 1)],
        "equal epochs": [(a, b) for a, b in pairs if a.epochs == b.epochs],
    }
    return {
        name: max(found, key=lambda ab: (ab[1].batch_size / ab[0].batch_size, ab[0].steps)) if found else None
        for name, found in designs.items()
    }
