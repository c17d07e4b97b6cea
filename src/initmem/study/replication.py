"""A replication check: a chapter's runs trained anew (``initmem experiments --fresh``) against the committed record.

Per configuration (a row of :func:`initmem.study.summary.summary_table`: an optimizer, a cell of the grid) the
spread of the selected predictor's test accuracy over sigma_w in the record and in the fresh runs, side by side with
their 95 % intervals over seeds, and whether they agree within the seed noise (:func:`verdict`); and how many runs
came out identical to the record's, bit for bit (:func:`identical_runs`: on the same software and CPU they should
all be).

>>> verdict(12.0, (8.0, 16.0), 14.0, (10.0, 18.0))
'agree (the intervals overlap)'
>>> verdict(3.0, (2.0, 4.0), 14.0, (10.0, 18.0))
'DIFFER (the intervals are apart)'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import xarray as xr

from .summary import summary_table

__all__ = ["verdict", "identical_runs", "replication_lines"]

#: The accuracy whose spread over sigma_w is compared.
VARIABLE = "selected_test_acc"


def verdict(record: float, record_ci: tuple[float, float], fresh: float, fresh_ci: tuple[float, float]) -> str:
    """Whether a fresh spread agrees with the record's: the 95 % intervals overlap; with one seed (no interval) only
    equal spreads say anything."""
    if any(math.isnan(v) for v in (*record_ci, *fresh_ci)):
        return "identical" if record == fresh else "one seed: no seed noise to judge by"
    if record_ci[0] <= fresh_ci[1] and fresh_ci[0] <= record_ci[1]:
        return "agree (the intervals overlap)"
    return "DIFFER (the intervals are apart)"


def identical_runs(fresh: xr.Dataset, record: xr.Dataset, variable: str = VARIABLE) -> tuple[int, int]:
    """``(identical, compared)``: runs at the coordinates both have, with a finite ``variable`` in both, and how many
    of them are equal bit for bit."""
    mine, theirs = xr.align(fresh[variable], record[variable], join="inner")
    both = np.isfinite(mine.values) & np.isfinite(theirs.values)
    return int((mine.values[both] == theirs.values[both]).sum()), int(both.sum())


def replication_lines(name: str, fresh: xr.Dataset, record: xr.Dataset) -> list[str]:
    """What ``initmem experiments --fresh`` prints for chapter ``name``: one line per configuration both have
    (``optimizer sgd: record 12.3 pp [8.1, 16.5], fresh 11.9 pp [7.4, 16.2]: agree (the intervals overlap)``), then
    the identical runs."""
    ours, theirs = summary_table(fresh, variables=(VARIABLE,)), summary_table(record, variables=(VARIABLE,))
    lines = [f"{name}: fresh runs against the committed record (spread of the selected test accuracy over sigma_w)"]
    for key in (k for k in ours.index if k in theirs.index):
        a, b = theirs.loc[key], ours.loc[key]
        low, high = "selected_ci95_low", "selected_ci95_high"
        record_ci, fresh_ci = (float(a[low]), float(a[high])), (float(b[low]), float(b[high]))
        spreads = float(a["selected_spread_pp"]), float(b["selected_spread_pp"])
        lines.append(
            f"  {_label(ours.index.names, key)}: record {_spread(spreads[0], record_ci)}, fresh "
            f"{_spread(spreads[1], fresh_ci)}: {verdict(spreads[0], record_ci, spreads[1], fresh_ci)}"
        )
    same, compared = identical_runs(fresh, record)
    lines.append(f"  runs identical to the record's, bit for bit: {same} of {compared}")
    return lines


def _label(names: list[Any], key: Any) -> str:
    """``optimizer sgd``, ``lr 0.02, weight_decay 0.01``: a row of the summary table."""
    values = key if isinstance(key, tuple) else (key,)
    return ", ".join(f"{n} {v}" for n, v in zip(names, values)) if names and names[0] is not None else "all runs"


def _spread(value: float, ci: tuple[float, float]) -> str:
    """``12.3 pp [8.1, 16.5]``, or ``12.3 pp`` without an interval."""
    interval = "" if any(math.isnan(v) for v in ci) else f" [{ci[0]:.1f}, {ci[1]:.1f}]"
    return f"{value:.1f} pp{interval}"
