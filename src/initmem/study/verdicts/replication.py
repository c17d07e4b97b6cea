"""A replication check: a chapter's runs trained anew (``initmem experiments --fresh``) against the committed record
(``results/<preset>/<chapter>.nc``); the book's Reproduce chapter shows how to run one.

* :func:`replication_lines` -- what ``--fresh`` prints, made of the following;
* per configuration (a row of :func:`initmem.study.statistics.summary.summary_table`), the spread over sigma_w in the record
  and in the fresh runs with their 95 % intervals over seeds, and whether they agree within the seed noise
  (:func:`verdict`);
* :func:`run_table` -- each run, committed against fresh: identical bit for bit, by how much it differs, or present
  in one only (on the same software and CPU they should all be identical);
* :func:`verdict_table` -- each verdict row of the chapter (:func:`initmem.study.verdicts.claims.chapter_table`) in both;
* :func:`replication_sentence` -- whether the chapter's verdicts replicate.

>>> verdict(12.0, (8.0, 16.0), 14.0, (10.0, 18.0))
'agree (the intervals overlap)'
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import xarray as xr

from ..statistics.summary import summary_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["verdict", "run_table", "verdict_table", "replication_sentence", "replication_lines"]

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


def run_table(fresh: xr.Dataset, record: xr.Dataset, variable: str = VARIABLE) -> pd.DataFrame:
    """One row per run of either sweep (a cell whose ``run_hash`` is set), indexed by its coordinates: ``committed``
    and ``fresh`` (``variable``, NaN where that sweep lacks the run) and ``same``: ``"identical"`` (bit for bit, NaN
    for NaN), the difference ``"fresh - committed = +1.5"`` or ``"only committed"`` / ``"only fresh"``."""
    import pandas as pd

    sides = {}
    for label, ds in (("committed", record), ("fresh", fresh)):
        values = ds[variable].to_series()
        runs = ds["run_hash"].to_series() != "" if "run_hash" in ds else values.notna()
        sides[label] = values[runs.reindex(values.index, fill_value=False)]
    table = pd.concat(sides, axis=1)

    def same(row: pd.Series) -> str:
        present = [label for label in sides if row.name in sides[label].index]
        if len(present) == 1:
            return f"only {present[0]}"
        a, b = row["committed"], row["fresh"]
        return "identical" if a == b or (math.isnan(a) and math.isnan(b)) else f"fresh - committed = {b - a:+.4g}"

    table["same"] = table.apply(same, axis=1)
    return table


def verdict_table(name: str, fresh: xr.Dataset, record: xr.Dataset) -> pd.DataFrame:
    """The page's numbers side by side: per verdict row of chapter ``name`` (:func:`initmem.study.verdicts.claims.chapter_table`
    of each Dataset), the effect with its 95 % interval (``"3.1 [1.2, 5.0]"``) and the verdict, committed and fresh;
    empty for a sweep that is no chapter of :mod:`initmem.study.experiments`."""
    import pandas as pd

    from .. import experiments
    from .claims import chapter_table

    if not experiments.exists(name):  # a sweep without a chapter's record: no claims
        return pd.DataFrame()
    columns = {}
    for label, ds in (("committed", record), ("fresh", fresh)):
        table = chapter_table(name, ds)
        columns[f"{label} effect"] = [_effect(row) for _, row in table.iterrows()]
        columns[f"{label} verdict"] = list(table["verdict"])
        index = table.index
    return pd.DataFrame(columns, index=index)


def replication_sentence(name: str, verdicts: pd.DataFrame, runs: pd.DataFrame) -> str:
    """One line: whether chapter ``name``'s verdicts replicate (every row of ``verdicts``, :func:`verdict_table`, the
    same committed and fresh), and how many of the runs both have (``runs``, :func:`run_table`) are identical."""
    both = runs[~runs["same"].str.startswith("only ")]
    identical = int((both["same"] == "identical").sum())
    counts = f"{identical} of {len(both)} runs both have identical, bit for bit"
    alone = len(runs) - len(both)
    counts += f"; {alone} run(s) in one sweep only" if alone else ""
    if verdicts.empty:
        return f"{name}: no verdict of its own to replicate ({counts})"
    differ = [key for key, row in verdicts.iterrows() if row["committed verdict"] != row["fresh verdict"]]
    if not differ:
        return f"{name}: the chapter's verdicts replicate: {len(verdicts)} of {len(verdicts)} the same ({counts})"
    return f"{name}: the chapter's verdicts do NOT replicate: {', '.join(map(str, differ))} differ ({counts})"


def replication_lines(name: str, fresh: xr.Dataset, record: xr.Dataset) -> list[str]:
    """What ``initmem experiments --fresh`` prints for chapter ``name``: one line per configuration both have
    (``optimizer sgd: record 12.3 pp [8.1, 16.5], fresh 11.9 pp [7.4, 16.2]: agree (the intervals overlap)``), the
    runs (:func:`run_table`), the page's numbers (:func:`verdict_table`) and, last, :func:`replication_sentence`."""
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
    runs, verdicts = run_table(fresh, record), verdict_table(name, fresh, record)
    lines += ["", f"each run's {VARIABLE}, committed and fresh:", runs.to_string(float_format=lambda v: f"{v:.4g}")]
    lines += ["", "the page's numbers (effect with its 95 % interval, verdict), committed and fresh:"]
    lines += [verdicts.to_string() if not verdicts.empty else "  (none: the chapter decides no claim)", ""]
    return [*lines, replication_sentence(name, verdicts, runs)]


def _effect(row: Any) -> str:
    """A verdict row's effect with its interval: ``3.1 [1.2, 5.0]``, or ``3.1`` without one."""
    low, high = float(row["effect_low"]), float(row["effect_high"])
    interval = "" if math.isnan(low) or math.isnan(high) else f" [{low:.1f}, {high:.1f}]"
    return f"{float(row['effect']):.1f}{interval}"


def _label(names: list[Any], key: Any) -> str:
    """``optimizer sgd``, ``lr 0.02, weight_decay 0.01``: a row of the summary table."""
    values = key if isinstance(key, tuple) else (key,)
    return ", ".join(f"{n} {v}" for n, v in zip(names, values)) if names and names[0] is not None else "all runs"


def _spread(value: float, ci: tuple[float, float]) -> str:
    """``12.3 pp [8.1, 16.5]``, or ``12.3 pp`` without an interval."""
    interval = "" if any(math.isnan(v) for v in ci) else f" [{ci[0]:.1f}, {ci[1]:.1f}]"
    return f"{value:.1f} pp{interval}"
