"""Which predictor carries a verdict: the interpolation premise checked on each predictor, and the one rule that
picks the predictor every row of the book is judged on (the ledger's C1, C2 and C4 rows and the scale ladder alike).

The validation-selected predictor (the paper's metric) carries where it meets the premise; else the final one does.
"""

from __future__ import annotations

from collections.abc import Mapping

import xarray as xr

from ...run.thresholds import INTERPOLATION_THRESHOLD

__all__ = ["PREDICTORS", "interpolation_premise", "carrying_predictor"]

#: The two predictors of a run: the validation-selected checkpoint and the last one.
PREDICTORS = ("selected", "final")


def interpolation_premise(runs: Mapping[str, xr.Dataset], predictor: str) -> str:
    """``""`` when every run of every ``runs`` (label -> Dataset) has ``predictor``'s train accuracy (``"selected"``
    or ``"final"``, %) at or above the interpolation threshold; else which do not, with the lowest accuracy and
    how many runs fall short."""
    short = []
    for label, ds in runs.items():
        train = ds[f"{predictor}_train_acc"]
        below = int((train < INTERPOLATION_THRESHOLD).sum())
        if below:
            short.append(f"{label} in {below} of {train.size} runs (lowest {float(train.min()):.1f} %)")
    if not short:
        return ""
    where = "validation-selected checkpoints" if predictor == "selected" else "final predictors"
    return f"the {where} do not all interpolate (train accuracy below {INTERPOLATION_THRESHOLD:g} %): " + "; ".join(
        short
    )


def carrying_predictor(premises: Mapping[str, str]) -> tuple[str, str]:
    """``(predictor, why)`` from each predictor's premise (:func:`interpolation_premise`, ``""`` where met): the
    selected predictor where its premise holds, else the final one; ``why`` says which and why."""
    if not premises["selected"]:
        return "selected", "the validation-selected predictor (the paper's metric) meets the premise and carries"
    if not premises["final"]:
        return "final", "the validation-selected predictor does not meet the premise; the final one carries"
    return "final", "neither predictor meets the premise; the final one carries"
