"""Tables for readers: human headers with units, one decimal for percentage points, intervals in one cell.

The analysis functions return wide DataFrames with machine names (``selected_spread_pp``, ``selected_ci95_low``,
...): good for code, unreadable on a page. :func:`present` turns such a table into one a reader can scan: a spread and
its interval become one cell (``21.2 [15.2, 27.1]``), headers say what and in which unit (``selected spread (pp),
95 % CI``), clocks keep three significant digits and p-values two. The result holds strings, so it renders the same
in HTML, in a notebook and in the PDF's plain text.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from ...base.numbers import ACCURACY_DIFFERENCE, decimal, p_text, significant

__all__ = ["LABELS", "INDEX_LABELS", "present", "format_value"]

#: Human headers of the columns the analysis tables use. A ``{v}_spread_pp`` column followed by its
#: ``{v}_ci95_low`` / ``_high`` is shown as one column "{v} spread (pp), 95 % CI".
LABELS: dict[str, str] = {
    "selected_spread_pp": "selected spread (pp)",
    "final_spread_pp": "final spread (pp)",
    "selected_raw_spread_pp": "selected raw spread (pp)",
    "final_raw_spread_pp": "final raw spread (pp)",
    "selected_null_p": "noise p (selected)",
    "final_null_p": "noise p (final)",
    "selected_null_p95_pp": "noise alone, 95th pct (pp)",
    "final_null_p95_pp": "noise alone, 95th pct, final (pp)",
    "selected_null_mean_pp": "noise alone, mean (pp)",
    "selected_n_seeds": "seeds",
    "selected_best_sigma_w": "best σ_w",
    "selected_worst_sigma_w": "worst σ_w",
    "selected_train_acc": "train acc, selected (%)",
    "final_train_acc": "train acc, final (%)",
    "min_selected_train_acc": "lowest selected train acc (%)",
    "min_final_train_acc": "lowest final train acc (%)",
    "selected_test_acc": "selected test acc (%)",
    "final_test_acc": "final test acc (%)",
    "tau_interp": "τ_interp (epochs)",
    "runs_interpolating": "runs interpolating",
    "T_SGD": "T_SGD, selected",
    "final_T_SGD": "T_SGD, end",
    "T_L2": "T_L2, selected",
    "final_T_L2": "T_L2, end",
    "T_adapt": "T_adapt, selected",
    "final_T_adapt": "T_adapt, end",
    "lr": "learning rate",
    "weight_decay": "λ",
    "aux_lr": "aux learning rate",
    "optimizer": "optimizer",
    "batch_size": "batch size",
    "epochs": "epochs",
    "model": "network",
    "width": "width",
    "logit_scale": "logit factor",
    "sigma_w": "σ_w",
    "horizon_epochs": "horizon (epochs)",
    "n_diverged": "diverged runs",
    "W0": "|W0|",
    "W_star": "|W*| (σ_w 0.1, end)",
    "W_top": "|W| (σ_w 2.5, end)",
    "log_ratio": "ln(|W0|/|W*|)",
    "x": "x = T_L2 − ln(|W0|/|W*|)",
    "selected_gap": "selected gap (pp)",
    "final_gap": "final gap (pp)",
    "experiment": "experiment",
    "family": "family",
    "configurations": "configurations",
    "slope": "slope",
    "initial_norm_ratio": "initial norm ratio",
    "final_norm_ratio": "final norm ratio",
    "final_norm_min": "smallest final norm",
    "final_norm_max": "largest final norm",
}
#: Human names of index levels.
INDEX_LABELS = LABELS

_PP_DIGITS = 1


def format_value(name: str, value: Any) -> str:
    """One cell in the book's number format (:mod:`initmem.base.numbers`): percentages and pp with one decimal,
    clocks and norms with three significant digits, p-values with two (below 0.001 as ``2e-4``), a negative number
    with the minus sign and never "−0.0", counts (and any integer value) as integers with thousands separators; NaN
    as an en dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (bool, str)) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    v = float(value)
    if math.isnan(v):
        return "–"
    if name.endswith("_p") or name.startswith("p "):
        return p_text(v)
    if name in (
        "selected_n_seeds",
        "n_diverged",
        "runs_interpolating",
        "configurations",
        "epochs",
        "batch_size",
        "width",
        "horizon_epochs",
    ):
        return f"{int(round(v))}"
    if name.endswith("_pp") or name.endswith("_acc") or name.endswith("_gap"):
        return decimal(v, _PP_DIGITS)
    return significant(v)


def present(
    table: Any,
    columns: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    intervals: bool = True,
) -> Any:
    """``table`` (a pandas DataFrame of an analysis function) for a page: the ``columns`` (default all) in order,
    formatted by :func:`format_value`, with headers from :data:`LABELS` (``labels`` adds or overrides). With
    ``intervals``, ``X_spread_pp`` (or ``X_gap``, ``slope``) followed by its ``X_ci95_low``/``_high``
    (``X_gap_low``/``_high``) becomes one cell ``"21.2 [15.2, 27.1]"`` headed "... , 95 % CI". The index is kept, its levels relabelled."""
    import pandas as pd

    names = {**LABELS, **(labels or {})}
    columns = [c for c in (columns or list(table.columns)) if c in table.columns]
    out: dict[str, list[str]] = {}
    skip: set[str] = set()
    for column in columns:
        if column in skip:
            continue
        low, high = _interval_columns(column, list(table.columns))
        if intervals and low in table.columns and high in table.columns:
            skip.update({low, high})
            cells = [_interval_cell(column, row[column], row[low], row[high]) for _, row in table.iterrows()]
            out[f"{names.get(column, column)}, 95 % CI"] = cells
        else:
            out[names.get(column, column)] = [format_value(column, v) for v in table[column]]
    frame = pd.DataFrame(out, index=table.index)
    labels_of = [names.get(n, n) if n else n for n in frame.index.names]
    frame.index = frame.index.rename(labels_of if frame.index.nlevels > 1 else labels_of[0])
    return frame


def _interval_columns(column: str, columns: Sequence[str] = ()) -> tuple[str, str]:
    """The names of the bounds of ``column``'s interval: ``X_ci95_low``/``_high`` for ``X_spread_pp`` and where
    ``columns`` has them (``slope_ci95_low``), else ``X_low``/``_high``."""
    if column.endswith("_spread_pp"):
        stem = column.removesuffix("_spread_pp")
        return f"{stem}_ci95_low", f"{stem}_ci95_high"
    if f"{column}_ci95_low" in columns:
        return f"{column}_ci95_low", f"{column}_ci95_high"
    return f"{column}_low", f"{column}_high"


def _interval_cell(name: str, value: Any, low: Any, high: Any) -> str:
    """``"21.2 [15.2, 27.1]"``; ``"61.1 [28.8, 100.0, clipped]"`` where a bound of an accuracy difference (pp) sits
    at what is possible (:data:`initmem.base.numbers.ACCURACY_DIFFERENCE`: the interval was clipped there)."""
    centre = format_value(name, value)
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (low, high)):
        return centre
    limits = ACCURACY_DIFFERENCE if name.endswith(("_pp", "_gap")) else (-math.inf, math.inf)
    clipped = ", clipped" if float(low) <= limits[0] or float(high) >= limits[1] else ""
    return f"{centre} [{format_value(name, low)}, {format_value(name, high)}{clipped}]"
