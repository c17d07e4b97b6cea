"""The summary table of a sweep: its spread over sigma_w per configuration, with the interval of the printed
estimator (:mod:`initmem.study.stats`) and its noise null (:mod:`initmem.study.nulls`). Printed by ``initmem sweep``, shown in every experiment chapter."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from .nulls import spread_null
from .stats import SEED_DIM, cross_fitted_spreads, finite_runs, mean_interval, n_diverged, seed_mean

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["summary_table"]


def summary_table(
    ds: xr.Dataset,
    over: str = "sigma_w",
    by: str | Sequence[str] | None = None,
    seed_dim: str = SEED_DIM,
    variables: Sequence[str] = ("selected_test_acc", "final_test_acc"),
) -> pd.DataFrame:
    """The spread over ``over`` per combination of the ``by`` dims, as a pandas DataFrame (one row each).

    Seeds (see :mod:`initmem.study.stats` and :mod:`initmem.study.nulls`): for each row and variable ``v``
    (``selected`` = selected_test_acc, ``final`` = final_test_acc),

    * ``{v}_spread_pp``: the **cross-fitted spread**, the mean over seeds of each seed's accuracy at the best minus
      at the worst ``over`` value of the other seeds' mean curve (:func:`initmem.study.stats.cross_fitted_spreads`)
      -- the headline number, near 0 when there is no memory. With a single complete seed there is nothing to
      cross-fit on, and it is that seed's raw spread (``{v}_estimator`` says which);
    * ``{v}_ci95_low`` / ``_high``: its 95 % Student-t interval over seeds (NaN with one seed);
    * ``{v}_n_seeds``: seeds with a value at every ``over`` value (a seed with a diverged run drops out);
    * ``{v}_estimator``: ``"cross-fitted"`` or ``"raw (1 seed)"``;
    * ``{v}_raw_spread_pp``: max - min over ``over`` of the seed-mean accuracy (what one would read off the mean
      curve; noise alone makes it positive);
    * ``{v}_null_p``, ``{v}_null_mean_pp``, ``{v}_null_p95_pp``: the raw spread against ``over`` labels permuted
      within seeds (:func:`initmem.study.nulls.spread_null`): the p-value and the mean and 95th percentile of the
      spread that seed noise alone gives (this cell's noise floor);
    * ``{v}_best_{over}`` / ``{v}_worst_{over}``: where the seed-mean curve is highest / lowest.
    * ``n_diverged``: runs of the row that diverged. They are left out of every column above (their selected and
      final accuracies are NaN; :func:`finite_runs`).

    Args:
        ds: a sweep Dataset with dimension ``over``.
        by: dims indexing the rows; default every dim except ``over``, ``seed_dim``, ``epoch``, ``layer``.
            Any other dim of size > 1 raises ValueError (select a value first). Coordinates along a ``by`` dim
            (the other zipped fields, e.g. ``lr`` along ``optimizer``) become columns too.
    """
    import pandas as pd

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
    return table.set_index(by) if by else table


def _spread_stats(values: xr.DataArray, over: str, seed_dim: str, prefix: str) -> dict[str, Any]:
    """The summary_table columns of one variable (``values`` has dims ``over`` and maybe ``seed_dim``)."""
    per_seed = values if seed_dim in values.dims else values.expand_dims(seed_dim)
    interval = mean_interval(cross_fitted_spreads(per_seed, over, seed_dim).values)
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
