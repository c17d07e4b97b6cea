"""Analysis shared by the experiment notebooks (01-09, 99) and the book: pure functions of sweep Datasets.

* :func:`spec_of` / :func:`field_value` -- the sweep spec of a Dataset and the value of a RunConfig field in it;
* :func:`last_finite` -- the last recorded (finite) value of per-epoch variables, e.g. the norm a run reached;
* :func:`within_horizons` -- the validation-selected predictor when selection stops at epoch T (chapter 02);
* :func:`norm_coupling` -- the slope of log(final kernel norm) against log(initial norm) across sigma_w
  (1 = the final norm follows the initial one, 0 = a common final norm);
* :func:`spread_points` / :func:`clock_table` -- each configuration's spread and the clocks it reached (chapter 07);
* :func:`smallest_spread` / :func:`against_reference` -- each optimizer's learning rate with the smallest spread,
  against the spread at a reference learning rate (chapter 09);
* :func:`calibration_table` / :func:`calibrated_logit_scale` -- when plain SGD interpolates for each logit factor,
  and the factor the presets use (chapter 08).

Results are loaded by :mod:`initmem.study.costs.results`; the ledger is :mod:`initmem.study.verdicts.claims`, the statistics over
seeds :mod:`initmem.study.statistics.stats`. Accuracies are in percent, spreads in percentage points (pp).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ...base.numbers import decimal, p_text
from ...run import optimizers
from ...run.variables import CLOCKS

__all__ = [
    "horizons_of",
    "spec_of",
    "field_value",
    "field_values",
    "last_finite",
    "within_horizons",
    "horizon_table",
    "norm_coupling",
    "norm_table",
    "spread_points",
    "smallest_spread",
    "learning_rates_of",
    "against_reference",
    "clock_table",
    "collapse_table",
    "collapse_text",
    "calibration_table",
    "calibrated_logit_scale",
]


# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------
def spec_of(ds: xr.Dataset | xr.DataArray) -> dict[str, Any]:
    """The sweep spec stored in ``ds.attrs["spec"]`` (empty parts if it is absent or not JSON)."""
    raw = ds.attrs.get("spec")
    try:
        spec = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        spec = {}
    return {"base": spec.get("base", {}) or {}, "grid": spec.get("grid", {}) or {}, "zip": spec.get("zip", {}) or {}}


def field_values(ds: xr.Dataset | xr.DataArray, field: str, default: Any = None) -> list[Any]:
    """Every value a RunConfig field takes in ``ds``: its coordinate's values if swept, else the spec's base value,
    else ``[default]`` (``[]`` without one)."""
    if field in ds.coords:
        return [v.item() if hasattr(v, "item") else v for v in np.atleast_1d(ds[field].values)]
    base = spec_of(ds)["base"]
    if field in base:
        return [base[field]]
    return [] if default is None else [default]


def field_value(ds: xr.Dataset, field: str) -> Any:
    """The value of a RunConfig field for a Dataset of one configuration: its (scalar) coordinate if
    swept, else the spec's base, else the RunConfig default."""
    if field in ds.coords and ds[field].size == 1:
        return ds[field].values.item()
    base = spec_of(ds)["base"]
    if field in base:
        return base[field]
    from ...run.config import RunConfig

    return getattr(RunConfig(), field, None)


def horizons_of(ds: xr.Dataset) -> list[int]:
    """The horizons (epochs) of experiment 02 stored in ``ds.attrs["horizons"]``; else six evenly spaced
    recorded epochs ending at the last one."""
    raw = ds.attrs.get("horizons")
    if raw:
        values = json.loads(raw) if isinstance(raw, str) else list(np.atleast_1d(raw))
        return sorted(int(v) for v in values)
    epochs = [int(e) for e in ds["epoch"].values if e > 0]
    step = max(1, len(epochs) // 6)
    return sorted(set(epochs[step - 1 :: step]) | {epochs[-1]})


def last_finite(da: xr.DataArray, dim: str = "epoch") -> xr.DataArray:
    """The last finite value of ``da`` along ``dim`` (NaN where none is finite), e.g. a diverged run's
    clocks at the last epoch it recorded."""

    def _last(values: np.ndarray) -> np.ndarray:
        finite = np.isfinite(values)
        index = np.where(finite.any(-1), values.shape[-1] - 1 - np.argmax(finite[..., ::-1], axis=-1), 0)
        out = np.take_along_axis(values, index[..., None], axis=-1)[..., 0]
        return np.where(finite.any(-1), out, np.nan)

    return xr.apply_ufunc(_last, da.astype(float), input_core_dims=[[dim]])


# ----------------------------------------------------------------------------------------------
# Experiment 02: selection restricted to epochs <= T
# ----------------------------------------------------------------------------------------------
def within_horizons(ds: xr.Dataset, horizons: Sequence[int]) -> xr.Dataset:
    """What a run of ``T`` epochs would report, for each horizon ``T``, read off longer runs.

    With a schedule that does not depend on the total length (``constant``, as in experiment 02) and
    batches that depend only on (data_seed, epoch), the first T epochs of a long run *are* a T-epoch run.
    For each T: the recorded epoch ``<= T`` with the lowest validation loss (ties: the earliest) gives
    ``best_epoch`` and the ``selected_*`` accuracies and clocks; the last recorded epoch ``<= T`` gives the
    ``final_*`` ones and ``weight_norm``. Returns a Dataset with a new dimension ``horizon`` (epochs) in place of
    ``epoch``.
    """
    horizons = sorted({int(h) for h in horizons})
    epochs = ds["epoch"].values
    if not horizons:
        raise ValueError("horizons: give at least one epoch")
    if horizons[0] < 1 or horizons[-1] > int(epochs.max()):
        raise ValueError(f"horizons: must lie in [1, {int(epochs.max())}] (the recorded epochs), got {horizons}")
    out: dict[str, list[xr.DataArray]] = {}
    for T in horizons:
        window = ds.sel(epoch=epochs[epochs <= T])
        val = window["val_loss"].fillna(np.inf)
        best = val.argmin("epoch")
        all_nan = window["val_loss"].isnull().all("epoch")
        last_epoch = last_finite(window["epoch"].astype(float).where(window["test_acc"].notnull()))
        pieces = {
            "best_epoch": window["epoch"].isel(epoch=best).where(~all_nan).astype(float),
            "final_epoch": last_epoch,
            "final_test_acc": last_finite(window["test_acc"]),
            "final_train_acc": last_finite(window["train_acc"]),
            "weight_norm": last_finite(window["weight_norm"]),
        }
        for name in ("test_acc", "val_acc", "train_acc", *CLOCKS):
            pieces[f"selected_{name}"] = window[name].isel(epoch=best).where(~all_nan)
        for name in CLOCKS:
            pieces[f"final_{name}"] = last_finite(window[name])
        pieces["diverged"] = ds["diverged"]
        for name, value in pieces.items():
            out.setdefault(name, []).append(value.drop_vars("epoch", errors="ignore"))
    index = xr.DataArray(horizons, dims="horizon", name="horizon", attrs={"units": "epochs"})
    result = xr.Dataset({name: xr.concat(values, dim=index) for name, values in out.items()})
    result.attrs.update(ds.attrs)
    return result


# ----------------------------------------------------------------------------------------------
# Radial memory (06)
# ----------------------------------------------------------------------------------------------
def final_norms(ds: xr.Dataset) -> xr.DataArray:
    """Each run's final kernel norm: its last finite ``weight_norm``, NaN for a diverged run
    (:func:`initmem.study.statistics.stats.diverged_runs`), whose last finite norm is where it blew up."""
    from .stats import diverged_runs

    return last_finite(ds["weight_norm"]).where(~diverged_runs(ds))


def norm_coupling(ds: xr.Dataset, over: str = "sigma_w") -> xr.DataArray:
    """Slope of ``log(final weight_norm)`` against ``log(initial weight_norm)`` across ``over``.

    One least-squares slope per remaining combination (seeds kept). 1 means the final norm is proportional
    to the initial one (radial memory, the paper's SGD); 0 means every sigma_w ends at a common norm (the
    paper's adaptive methods).
    """
    initial = np.log(ds["weight_norm"].isel(epoch=0))
    final = np.log(final_norms(ds))

    def _slope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        ok = np.isfinite(x) & np.isfinite(y)
        n = ok.sum(-1)
        xm = np.where(ok, x, 0).sum(-1) / np.maximum(n, 1)
        ym = np.where(ok, y, 0).sum(-1) / np.maximum(n, 1)
        dx = np.where(ok, x - xm[..., None], 0)
        dy = np.where(ok, y - ym[..., None], 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            slope = (dx * dy).sum(-1) / (dx * dx).sum(-1)
        return np.where(n >= 2, slope, np.nan)

    return xr.apply_ufunc(_slope, initial, final, input_core_dims=[[over], [over]]).rename("norm_coupling")


def norm_table(ds: xr.Dataset) -> Any:
    """Radial memory per optimizer (experiment 06), a :class:`pandas.DataFrame` indexed by optimizer: the coupling
    slope (:func:`norm_coupling`, mean over seeds, with its t-interval ``slope_ci95_low``/``_high``), the ratio of
    the largest to the smallest seed-mean kernel norm across sigma_w at initialisation and at the end, and the
    smallest and largest final norm."""
    import pandas as pd

    from .stats import mean_interval, seed_mean

    slopes = norm_coupling(ds)
    initial, final = ds["weight_norm"].isel(epoch=0), final_norms(ds)
    rows = []
    for opt in ds["optimizer"].values:
        slope = mean_interval(slopes.sel(optimizer=opt))
        f, i = seed_mean(final.sel(optimizer=opt)), seed_mean(initial.sel(optimizer=opt))
        rows.append(
            {
                "optimizer": str(opt),
                "slope": slope.estimate,
                "slope_ci95_low": slope.low,
                "slope_ci95_high": slope.high,
                "initial_norm_ratio": float(i.max() / i.min()),
                "final_norm_ratio": float(f.max() / f.min()),
                "final_norm_min": float(f.min()),
                "final_norm_max": float(f.max()),
            }
        )
    return pd.DataFrame(rows).set_index("optimizer")


# ----------------------------------------------------------------------------------------------
# Experiment 07: spread against the clocks, over every sweep
# ----------------------------------------------------------------------------------------------
_INFO_FIELDS = ("optimizer", "lr", "weight_decay", "batch_size", "model", "epochs")


def spread_points(ds: xr.Dataset, experiment: str = "", over: str = "sigma_w", seed_dim: str = "seed") -> Any:
    """One row per configuration of ``ds`` (every combination of its dims except ``over`` and seeds):

    ``experiment``, the RunConfig fields ``optimizer, lr, weight_decay, batch_size, model, epochs``, the
    spreads and seed intervals of :func:`initmem.study.statistics.summary.summary_table` (selected and final test accuracy),
    the clocks at the selected checkpoint (``T_SGD``, ``T_L2``, ``T_adapt``: mean over sigma_w and seeds) and at
    the end (``final_T_SGD``, ...), the mean training accuracy of the selected and of the final predictor and the
    lowest of each (``min_selected_train_acc``, ``min_final_train_acc``), and ``family``: ``adaptive`` (adam, adamw, muon), ``SGD+L2`` (SGD with weight_decay > 0) or
    ``SGD``. The clocks count the effective step (``lr / (1 - momentum)`` for ``sgd_momentum``, as recorded).
    """
    import pandas as pd

    from .summary import summary_table

    if over not in ds.dims:
        raise ValueError(f"over: {over!r} is not a dimension of experiment {experiment!r}")
    by = [d for d in ds["selected_test_acc"].dims if d not in (over, seed_dim, "epoch", "layer")]
    table = summary_table(ds, over=over, by=by or None, seed_dim=seed_dim).reset_index()
    if "index" in table.columns and not by:
        table = table.drop(columns="index")
    rows = []
    for _, row in table.iterrows():
        combo = {d: row[d] for d in by}
        sub = ds.sel(combo) if combo else ds
        info = {f: field_value(sub, f) for f in _INFO_FIELDS}
        extra = {}
        for name in CLOCKS:
            extra[name] = float(sub[f"selected_{name}"].mean(skipna=True))
            extra[f"final_{name}"] = float(sub[f"final_{name}"].mean(skipna=True))
        extra["selected_train_acc"] = float(sub["selected_train_acc"].mean(skipna=True))
        extra["final_train_acc"] = float(sub["final_train_acc"].mean(skipna=True))
        extra["min_selected_train_acc"] = float(sub["selected_train_acc"].min(skipna=True))
        extra["min_final_train_acc"] = float(sub["final_train_acc"].min(skipna=True))
        extra["diverged_runs"] = int(sub["diverged"].sum())
        rows.append({"experiment": experiment, **info, **{k: v for k, v in row.items() if k not in info}, **extra})
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["family"] = [_family(o, w) for o, w in zip(frame["optimizer"], frame["weight_decay"])]
    return frame


def smallest_spread(table: Any, by: str = "optimizer", var: str = "selected") -> Any:
    """The row of each ``by`` group of a :func:`spread_points` table with the smallest ``{var}_spread_pp`` (the
    configuration that forgot the most), in the table's order of groups; groups without a finite spread are left
    out. Experiment 09 uses it to name each adaptive optimizer's best learning rate."""
    column = f"{var}_spread_pp"
    finite = table[np.isfinite(table[column].astype(float))]
    rows = finite.loc[finite.groupby(by, sort=False)[column].idxmin()]
    return rows.reset_index(drop=True)


def learning_rates_of(ds: xr.Dataset) -> dict[str, float]:
    """Each optimizer's learning rate in a Dataset of experiment 01 (read off its results, so that a page and the
    ledger agree whatever parameters 01 was run with): ``{"sgd": 0.02, "adam": 0.008, ...}``."""
    optimizers, lrs = field_values(ds, "optimizer"), field_values(ds, "lr")
    return dict(zip(optimizers, lrs)) if len(lrs) == len(optimizers) else dict.fromkeys(optimizers, lrs[0])


def against_reference(table: Any, reference_lrs: Mapping[str, float], var: str = "selected") -> Any:
    """Each optimizer's smallest ``{var}`` spread of a :func:`spread_points` table set against its spread at the
    learning rate ``reference_lrs[optimizer]`` (experiment 09 against 01's learning rates).

    One row per optimizer that has a finite spread, in the table's order, with columns ``optimizer``, ``best_lr``,
    ``best_spread_pp``, ``best_low``, ``best_high`` (the smallest spread and its 95 % interval, pp),
    ``reference_lr``, ``reference_spread_pp``, ``reference_low``, ``reference_high`` (NaN where the table has no
    row at the reference learning rate) and ``measurably_lower``: whether the smallest spread's interval lies
    entirely below the reference's (False at the reference itself). The smallest of several noisy estimates is
    biased low; only an interval that separates says the learning rate changed the spread.
    """
    import pandas as pd

    spread, low, high = f"{var}_spread_pp", f"{var}_ci95_low", f"{var}_ci95_high"
    rows = []
    for _, best in smallest_spread(table, var=var).iterrows():
        optimizer = best["optimizer"]
        at = table[(table["optimizer"] == optimizer) & (table["lr"] == reference_lrs.get(optimizer, np.nan))]
        reference = at.iloc[0] if len(at) else pd.Series({"lr": np.nan, spread: np.nan, low: np.nan, high: np.nan})
        rows.append(
            {
                "optimizer": optimizer,
                "best_lr": float(best["lr"]),
                "best_spread_pp": float(best[spread]),
                "best_low": float(best[low]),
                "best_high": float(best[high]),
                "reference_lr": float(reference["lr"]),
                "reference_spread_pp": float(reference[spread]),
                "reference_low": float(reference[low]),
                "reference_high": float(reference[high]),
                "measurably_lower": bool(best[high] < reference[low]),
            }
        )
    return pd.DataFrame(rows)


def _family(optimizer: str, weight_decay: float) -> str:
    if optimizers.record(optimizer).family == "adaptive":
        return "adaptive"
    return "SGD+L2" if (weight_decay or 0) > 0 else "SGD"


#: The clock that the paper says governs each family's forgetting.
FAMILY_CLOCK = {"SGD": "T_SGD", "SGD+L2": "T_L2", "adaptive": "T_adapt"}


def clock_table(datasets: Mapping[str, xr.Dataset]) -> Any:
    """:func:`spread_points` of every Dataset in ``datasets`` (name -> Dataset), concatenated.

    Every configuration counts once: experiment 02 enters at its longest horizon only (its shorter horizons are
    prefixes of the same runs), 05 per model.
    """
    import pandas as pd

    frames = []
    for name, ds in datasets.items():
        if "sigma_w" not in ds.dims:
            continue
        if name.startswith("02"):
            frames.append(horizon_table(ds, horizons_of(ds)[-1:], name).reset_index(drop=True))
        else:
            frames.append(spread_points(ds, name))
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def collapse_table(table: Any) -> Any:
    """Does each family collapse on its own clock (experiment 07)? For each family of :data:`FAMILY_CLOCK`, over its
    configurations in ``table`` (a :func:`clock_table`): Spearman's rho between the selected spread and each clock
    (``rho(T_*)``), and for the family's own clock its one-sided permutation p (rho < 0), its 95 % bootstrap interval
    (:func:`initmem.study.statistics.stats.rank_test`) and the prediction: **held** only when rho < 0 with p < 0.05, **did not
    hold** when the interval lies above 0, **cannot tell** otherwise (too few configurations, or not significant).
    Indexed by family."""
    import pandas as pd

    from .stats import rank_correlation, rank_test

    rows = []
    for family, own in FAMILY_CLOCK.items():
        sub = table[table["family"] == family] if len(table) else table
        row: dict[str, Any] = {"family": family, "own clock": own, "configurations": len(sub)}
        for clock in CLOCKS:
            row[f"rho({clock})"] = rank_correlation(sub[clock], sub["selected_spread_pp"]) if len(sub) else math.nan
        test = rank_test(sub[own], sub["selected_spread_pp"]) if len(sub) else rank_test([], [])
        row.update({"p (rho < 0)": test.p_value, "rho low": test.low, "rho high": test.high})
        if test.rho < 0 and test.significant():
            row["prediction"] = f"held (rho {decimal(test.rho, 2)} < 0, p = {p_text(test.p_value)})"
        elif math.isfinite(test.low) and test.low > 0:
            row["prediction"] = "did not hold (the spread rises with its own clock)"
        elif not math.isfinite(test.rho):
            row["prediction"] = "cannot tell (fewer than 3 configurations or no variation)"
        else:
            row["prediction"] = (
                f"cannot tell (rho {decimal(test.rho, 2)}, p = {p_text(test.p_value)} is not below 0.05)"
            )
        rows.append(row)
    return pd.DataFrame(rows).set_index("family")


def collapse_text(collapse: Any, family: str) -> str:
    """One family's row of a :func:`collapse_table` as prose: its prediction (which gives rho and p where rho is
    defined), the number of configurations and the clock, e.g. ``"held (rho -0.93 < 0, p = 0.0001), over 20
    configurations against T_L2"``. Never a bare NaN: a family with fewer than three configurations reads "cannot
    tell (fewer than 3 configurations or no variation), over 2 configurations against T_L2"."""
    if family not in collapse.index or int(collapse.loc[family, "configurations"]) == 0:
        return f"no configurations (against {FAMILY_CLOCK.get(family, 'its clock')})"
    row = collapse.loc[family]
    n = int(row["configurations"])
    return f"{row['prediction']}, over {n} configuration{'s' if n != 1 else ''} against {row['own clock']}"


def horizon_table(ds: xr.Dataset, horizons: Sequence[int], experiment: str = "") -> Any:
    """:func:`spread_points` at each horizon of :func:`within_horizons`: one row per (horizon, configuration),
    indexed by ``horizon_epochs``; the ``epochs`` column is the horizon and the clocks are those reached there.
    ``experiment``: the ``experiment`` column (default: the one ``ds`` records in its attributes)."""
    import pandas as pd

    experiment = experiment or ds.attrs.get("experiment", "")
    h = within_horizons(ds, horizons)
    frames = []
    for T in h["horizon"].values:
        frame = spread_points(h.sel(horizon=T).drop_vars("horizon"), experiment)
        frame["epochs"] = int(T)
        frame.insert(0, "horizon_epochs", int(T))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True).set_index("horizon_epochs")


# ----------------------------------------------------------------------------------------------
# Experiment 08: calibration of the logit factor
# ----------------------------------------------------------------------------------------------
def calibration_table(ds: xr.Dataset) -> Any:
    """One row per (logit_scale, sigma_w) of experiment 08 (seed mean): ``tau_interp`` (epochs; NaN: never),
    ``final_train_acc``, ``selected_test_acc``, ``final_test_acc`` (%), and ``runs_interpolating`` (of the seeds)."""
    import pandas as pd

    from ...run.thresholds import INTERPOLATION_THRESHOLD
    from .stats import seed_mean

    rows = []
    for scale in ds["logit_scale"].values:
        for sigma in ds["sigma_w"].values:
            run = ds.sel(logit_scale=scale, sigma_w=sigma)
            row = {"logit_scale": float(scale), "sigma_w": float(sigma)}
            for name in ("tau_interp", "final_train_acc", "selected_test_acc", "final_test_acc"):
                row[name] = float(seed_mean(run[name]))
            row["runs_interpolating"] = int((run["final_train_acc"] >= INTERPOLATION_THRESHOLD).sum())
            rows.append(row)
    return pd.DataFrame(rows).set_index(["logit_scale", "sigma_w"])


def calibrated_logit_scale(ds: xr.Dataset) -> float | None:
    """The smallest logit factor of experiment 08 with which every run (every sigma_w and seed) interpolates
    within the budget; None if no factor does."""
    from ...run.thresholds import INTERPOLATION_THRESHOLD

    for scale in sorted(float(v) for v in ds["logit_scale"].values):
        if bool((ds["final_train_acc"].sel(logit_scale=scale) >= INTERPOLATION_THRESHOLD).all()):
            return scale
    return None
