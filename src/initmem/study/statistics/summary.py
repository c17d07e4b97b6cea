"""The summary table of a sweep: its spread over sigma_w per configuration, with the interval of the printed
estimator (the ledger's calibrated one, :class:`initmem.study.statistics.calibration.CrossFitted`) and its noise null (:mod:`initmem.study.statistics.nulls`). Printed by ``initmem sweep``, shown in every experiment chapter.

Two views for readers: ``summary_table(ds, view="reader")`` (a few columns with human headers and units, one
decimal, each spread and its interval in one cell: :func:`initmem.study.statistics.tables.present`) and :func:`spread_lines`
(one sentence per configuration, e.g. ``"SGD, learning rate 0.02: spread 21.3 pp [17.1, 25.5] (95 % CI,
calibrated t; cross-fitted, 5 seeds)"``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from ...base.numbers import ACCURACY_DIFFERENCE, decimal
from ...run import optimizers
from .calibration import CrossFitted
from .nulls import spread_null
from .stats import LEVEL, SEED_DIM, cross_fitted_spreads, finite_runs, n_diverged, seed_mean
from .tables import LABELS, format_value, present

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["VIEWS", "summary_table", "spread_lines"]

#: The views of :func:`summary_table`: every column for code, or a few for readers.
VIEWS = ("full", "reader")


def summary_table(
    ds: xr.Dataset,
    over: str = "sigma_w",
    by: str | Sequence[str] | None = None,
    seed_dim: str = SEED_DIM,
    variables: Sequence[str] = ("selected_test_acc", "final_test_acc"),
    view: str = "full",
) -> pd.DataFrame:
    """The spread over ``over`` per combination of the ``by`` dims, as a pandas DataFrame (one row each).

    ``view="full"`` (the default) gives the numeric columns below, for code; ``view="reader"`` a table to read
    (:func:`_reader_view`).

    Seeds (see :mod:`initmem.study.statistics.stats` and :mod:`initmem.study.statistics.nulls`): for each row and variable ``v``
    (``selected`` = selected_test_acc, ``final`` = final_test_acc),

    * ``{v}_spread_pp``: the **cross-fitted spread**, the mean over seeds of each seed's accuracy at the best minus
      at the worst ``over`` value of the other seeds' mean curve (:func:`initmem.study.statistics.stats.cross_fitted_spreads`)
      -- the headline number, near 0 when there is no memory. With a single complete seed there is nothing to
      cross-fit on, and it is that seed's raw spread (``{v}_estimator`` says which);
    * ``{v}_ci95_low`` / ``_high``: its 95 % interval over seeds, the ledger's: calibrated by simulation for the
      design (:class:`initmem.study.statistics.calibration.CrossFitted`; asymmetric, since the estimate is pulled towards 0;
      NaN with one seed);
    * ``{v}_n_seeds``: seeds with a value at every ``over`` value (a seed with a diverged run drops out);
    * ``{v}_estimator``: ``"cross-fitted"`` or ``"raw (1 seed)"``;
    * ``{v}_raw_spread_pp``: max - min over ``over`` of the seed-mean accuracy (what one would read off the mean
      curve; noise alone makes it positive);
    * ``{v}_null_p``, ``{v}_null_mean_pp``, ``{v}_null_p95_pp``: the raw spread against ``over`` labels permuted
      within seeds (:func:`initmem.study.statistics.nulls.spread_null`): the p-value and the mean and 95th percentile of the
      spread that seed noise alone gives (this cell's noise floor);
    * ``{v}_best_{over}`` / ``{v}_worst_{over}``: where the seed-mean curve is highest / lowest.
    * ``n_diverged``: runs of the row that diverged. They are left out of every column above (their selected and
      final accuracies are NaN; :func:`finite_runs`).

    Args:
        ds: a sweep Dataset with dimension ``over``.
        by: dims indexing the rows; default every dim except ``over``, ``seed_dim``, ``epoch``, ``layer``.
            Any other dim of size > 1 raises ValueError (select a value first). Coordinates along a ``by`` dim
            (the other zipped fields, e.g. ``lr`` along ``optimizer``) become columns too.
        view: ``"full"`` or ``"reader"`` (:data:`VIEWS`); another value raises ValueError.
    """
    import pandas as pd

    if view not in VIEWS:
        raise ValueError(f"view: allowed values are {', '.join(map(repr, VIEWS))}; got {view!r}")
    if over not in ds.dims:
        raise ValueError(f"over: {over!r} is not a dimension; available: {', '.join(map(str, ds.dims))}")
    ignored = {over, seed_dim, "epoch", "layer"}
    if by is None:
        by = [d for d in ds[variables[0]].dims if d not in ignored]
    else:
        by = [by] if isinstance(by, str) else list(by)
    for dim in ds[variables[0]].dims:
        if dim not in ignored and dim not in by and ds.sizes[dim] > 1:
            raise ValueError(
                f"by: dimension {dim!r} (size {ds.sizes[dim]}) is neither over, {seed_dim!r} nor in by; "
                f"select one value (ds.sel({dim}=...)) or add it to by"
            )
    rows = []
    combos = itertools.product(*(ds[d].values for d in by)) if by else [()]
    for combo in combos:
        selection = ds.sel(dict(zip(by, combo))) if by else ds
        row: dict[str, Any] = dict(zip(by, combo))
        for dim in by:  # zipped fields along a row dim, e.g. lr(optimizer)
            along = [name for name, c in ds.coords.items() if c.dims == (dim,) and name != dim]
            row.update({name: selection[name].item() for name in along})
        row["n_diverged"] = n_diverged(selection)
        for var in variables:
            values = finite_runs(selection, var).squeeze(drop=True)
            row.update(_spread_stats(values, over, seed_dim, var.removesuffix("_test_acc")))
        rows.append(row)
    table = pd.DataFrame(rows)
    table = table.set_index(by) if by else table
    return _reader_view(table, over) if view == "reader" else table


def _reader_view(table: pd.DataFrame, over: str) -> pd.DataFrame:
    """The reader's view of a full :func:`summary_table`: the configuration (optimizers by the paper's names, the
    zipped fields such as the learning rate), the selected spread with its 95 % interval in one cell, its estimator
    and seeds, the noise p of the raw spread, the best and worst ``over`` value, the final spread with its interval,
    and the diverged runs where any run diverged. Cells are strings (:func:`initmem.study.statistics.tables.present`: one
    decimal for percentage points); a single index's name heads the index column (one header row)."""
    metrics = ["n_diverged"] + [c for c in table.columns if c.startswith(("selected_", "final_"))]
    configuration = [c for c in table.columns if c not in metrics]
    columns = [
        *configuration,
        "selected_spread_pp",
        "selected_estimator",
        "selected_n_seeds",
        "selected_null_p",
        f"selected_best_{over}",
        f"selected_worst_{over}",
        "final_spread_pp",
    ]
    if table["n_diverged"].any():
        columns.append("n_diverged")
    labels = {"selected_estimator": "estimator", f"selected_best_{over}": f"best {LABELS.get(over, over)}"}
    labels[f"selected_worst_{over}"] = f"worst {LABELS.get(over, over)}"
    if "optimizer" in table.index.names:
        table = table.rename(index=optimizers.label, level="optimizer")
    shown = present(table, columns, labels=labels)
    if shown.index.nlevels == 1 and shown.index.name:
        shown = shown.rename_axis(index=None, columns=shown.index.name)
    return shown


def _spread_stats(values: xr.DataArray, over: str, seed_dim: str, prefix: str) -> dict[str, Any]:
    """The summary_table columns of one variable (``values`` has dims ``over`` and maybe ``seed_dim``)."""
    per_seed = values if seed_dim in values.dims else values.expand_dims(seed_dim)
    interval = CrossFitted(per_seed.sizes[over]).interval(cross_fitted_spreads(per_seed, over, seed_dim).values)
    null = spread_null(per_seed.transpose(over, seed_dim).values)
    curve = seed_mean(per_seed, seed_dim)
    finite = bool(np.isfinite(curve.values).any())
    sigmas = curve[over].values
    complete = int(per_seed.notnull().all(over).sum())
    raw = float(np.nanmax(curve) - np.nanmin(curve)) if finite else math.nan
    one_seed = complete == 1
    return {
        f"{prefix}_spread_pp": raw if one_seed else interval.estimate,
        f"{prefix}_ci95_low": interval.low,
        f"{prefix}_ci95_high": interval.high,
        f"{prefix}_n_seeds": complete,
        f"{prefix}_estimator": "raw (1 seed)" if one_seed else "cross-fitted",
        f"{prefix}_raw_spread_pp": raw,
        f"{prefix}_null_p": null.p_value,
        f"{prefix}_null_mean_pp": null.null_mean,
        f"{prefix}_null_p95_pp": null.null_p95,
        f"{prefix}_best_{over}": sigmas[np.nanargmax(curve.values)].item() if finite else math.nan,
        f"{prefix}_worst_{over}": sigmas[np.nanargmin(curve.values)].item() if finite else math.nan,
    }


def spread_lines(
    data: xr.Dataset | pd.DataFrame,
    over: str = "sigma_w",
    by: str | Sequence[str] | None = None,
    seed_dim: str = SEED_DIM,
    variable: str = "selected",
    digits: int = 1,
) -> list[str]:
    """One sentence per configuration (a row of :func:`summary_table`): the spread over ``over`` of ``variable``
    (``"selected"`` or ``"final"`` test accuracy) with the 95 % interval the table computes for its estimator, e.g.
    ``"SGD, learning rate 0.02: spread 21.3 pp [17.1, 25.5] (95 % CI, calibrated t; cross-fitted, 5 seeds)"``; with one seed
    ``"...: spread 20.0 pp (raw, 1 seed: no interval)"``. Runs that diverged are counted at the end of the line.

    Args:
        data: a sweep Dataset (its :func:`summary_table` is computed with ``over``, ``by`` and ``seed_dim``), or a
            full-view table that :func:`summary_table` returned.
        variable: which accuracy's spread, ``"selected"`` (validation-selected) or ``"final"`` (last epoch).
        digits: decimals of the percentage points.

    Returns:
        The lines, in the table's row order; a configuration is named by the optimizer's paper name and the other
        dims and zipped fields as ``"name value"``; a table without configuration dims gives one line that starts
        with ``"spread"``.
    """
    if variable not in ("selected", "final"):
        raise ValueError(f"variable: allowed values are 'selected', 'final'; got {variable!r}")
    table = data if not isinstance(data, xr.Dataset) else summary_table(data, over, by, seed_dim)
    if f"{variable}_spread_pp" not in table.columns:
        raise ValueError(f"data: needs the {variable}_* columns of summary_table(..., view='full')")
    configuration = [c for c in table.columns if c != "n_diverged" and not c.startswith(("selected_", "final_"))]
    index_names = [n for n in table.index.names if n is not None]
    lines = []
    for key, row in zip(table.index, table.to_dict("records")):
        keys = dict(zip(index_names, key if isinstance(key, tuple) else (key,)))
        named = {**keys, **{c: row[c] for c in configuration}}
        parts = [_configuration_part(name, value) for name, value in named.items()]
        sentence = _spread_sentence(row, variable, digits)
        lines.append(f"{', '.join(parts)}: {sentence}" if parts else sentence)
    return lines


def _configuration_part(name: str, value: Any) -> str:
    """``"SGD"`` for an optimizer, else ``"learning rate 0.02"`` (the name as tables write it, the value as a cell)."""
    if name == "optimizer":
        return optimizers.label(str(value))
    return f"{LABELS.get(name, name)} {format_value(name, value)}"


def _spread_sentence(row: dict[str, Any], variable: str, digits: int) -> str:
    """``"spread 21.3 pp [17.1, 25.5] (95 % CI, calibrated t; cross-fitted, 5 seeds)"`` from one full summary_table row
    (negative numbers with the minus sign; a bound at what a spread can be, ±100 pp, is said to be clipped)."""
    estimate, low, high = (float(row[f"{variable}_{c}"]) for c in ("spread_pp", "ci95_low", "ci95_high"))
    seeds, estimator = int(row[f"{variable}_n_seeds"]), row[f"{variable}_estimator"]
    counted = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if not math.isfinite(estimate):
        text = "spread n/a (no seed has a value at every point)"
    elif math.isfinite(low) and math.isfinite(high):
        level = round(100 * LEVEL)
        clipped = ", clipped" if low <= ACCURACY_DIFFERENCE[0] or high >= ACCURACY_DIFFERENCE[1] else ""
        bounds = f"{decimal(low, digits)}, {decimal(high, digits)}{clipped}"
        text = f"spread {decimal(estimate, digits)} pp [{bounds}] ({level} % CI, calibrated t; {estimator}, {counted})"
    else:
        text = f"spread {decimal(estimate, digits)} pp ({estimator.split(' (')[0]}, {counted}: no interval)"
    diverged = int(row.get("n_diverged", 0))
    if diverged:
        text += f"; {diverged} run{'s' if diverged != 1 else ''} diverged, left out"
    return text
