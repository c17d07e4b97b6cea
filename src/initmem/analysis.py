"""Analysis shared by the experiment notebooks (01-07, 99) and the book: pure functions of sweep Datasets.

Layout of the results of one preset (what :func:`run_experiment` reads and writes)::

    results/<preset>/<experiment>/runs/<hash>.nc    one file per run (the sweep cache)
    results/<preset>/<experiment>.nc                the combined sweep Dataset (attrs: spec, preset, ...)

Functions
---------
* :func:`run_experiment` -- load-or-run a sweep through its cache and save the combined Dataset (the one
  call every experiment notebook makes).
* :func:`load_results` -- every combined Dataset of a preset (for 07 and 99).
* :func:`last_finite` -- the last recorded (finite) value of per-epoch variables, e.g. the norm a run reached.
* :func:`within_horizons` -- the validation-selected predictor when selection is restricted to epochs
  ``<= T``, for several horizons T (experiment 02: one long run stands for many shorter ones).
* :func:`norm_coupling` -- the slope of log(final kernel norm) against log(initial norm) across sigma_w
  (radial memory: 1 = the final norm follows the initial one, 0 = a common final norm).
* :func:`spread_points` / :func:`clock_table` -- one row per configuration (everything but sigma_w and seed):
  its spread and the clocks it reached (experiment 07).
* :func:`calibration_table` / :func:`calibrated_logit_scale` -- experiment 08: when plain SGD interpolates for
  each logit factor, and the factor the presets use.

The claims ledger (C1-C7 and its verdict rules) is :mod:`initmem.claims`; the statistics over seeds are
:mod:`initmem.stats`.

Accuracies are in percent, spreads in percentage points (pp).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

__all__ = [
    "EXPERIMENTS",
    "CLOCKS",
    "ADAPTIVE",
    "SGD_FAMILY",
    "results_paths",
    "run_experiment",
    "read_results",
    "load_results",
    "measured_costs",
    "horizons_of",
    "spec_of",
    "field_value",
    "last_finite",
    "within_horizons",
    "horizon_table",
    "norm_coupling",
    "spread_points",
    "clock_table",
    "calibration_table",
    "calibrated_logit_scale",
]

#: The experiment notebooks whose combined results feed 07 and 99, in order.
EXPERIMENTS = ("01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth")
#: The three forgetting clocks recorded per epoch (see :mod:`initmem.metrics`).
CLOCKS = ("T_SGD", "T_L2", "T_adapt")
ADAPTIVE = ("adam", "adamw", "muon")
SGD_FAMILY = ("sgd", "sgd_momentum")


# ----------------------------------------------------------------------------------------------
# Load or run
# ----------------------------------------------------------------------------------------------
def results_paths(results_dir: str | os.PathLike, preset: str, name: str) -> tuple[Path, Path]:
    """``(runs_dir, combined_file)`` of experiment ``name`` at ``preset``."""
    base = Path(results_dir) / preset
    return base / name / "runs", base / f"{name}.nc"


#: Sweep attributes that change on every call (timings, cache counts) and so do not decide sameness.
_VOLATILE_ATTRS = {"created", "wall_time_s", "n_cached", "n_runs", "executor", "git_commit", "hardware"}


def _same_results(path: Path, ds: xr.Dataset) -> xr.Dataset | None:
    """The stored Dataset at ``path`` if it holds exactly the runs of ``ds`` (same spec, preset and run
    hashes); None otherwise. Keeping an unchanged file unchanged keeps the notebook runner's digest stable."""
    if not path.is_file():
        return None
    try:
        with xr.open_dataset(path, engine="h5netcdf") as stored:
            stored = stored.load()
    except Exception:  # unreadable: rewrite it
        return None
    keys = {"spec", "preset", "experiment"} | {k for k in ds.attrs if k not in _VOLATILE_ATTRS}
    if any(str(stored.attrs.get(k)) != str(ds.attrs.get(k)) for k in keys):
        return None
    if "run_hash" not in stored or stored["run_hash"].shape != ds["run_hash"].shape:
        return None
    if not np.array_equal(stored["run_hash"].values.astype(str), ds["run_hash"].values.astype(str)):
        return None
    return stored


def _write_atomic(ds: xr.Dataset, path: Path) -> None:
    from .sweeps import write_run  # atomic, and turns attributes into ones netCDF accepts

    write_run(ds, path)


def run_experiment(
    name: str,
    spec: Mapping[str, Any],
    *,
    preset: str,
    results_dir: str | os.PathLike = "results",
    executor: str = "serial",
    workers: int | None = None,
    progress: bool = True,
    attrs: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Load-or-run the sweep ``spec`` of experiment ``name`` and save the combined Dataset.

    Runs are cached in ``results/<preset>/<name>/runs/``: a run already there is read, not trained. The
    combined Dataset
    gets the attributes ``preset`` and ``experiment`` and is written to ``results/<preset>/<name>.nc``,
    unless that file already holds exactly these runs (then the stored file is returned unchanged).

    Args:
        spec: a :class:`initmem.sweeps.SweepSpec` dict (``base``, ``grid``, ``zip``).
        executor, workers: passed to :func:`initmem.sweeps.sweep` (``processes`` with 2 workers on a
            2-core CPU; ``serial`` for the smoke preset).
        attrs: extra attributes stored with the combined Dataset (values: strings or numbers; anything
            else is stored as JSON), e.g. the horizons of experiment 02.
    """
    from .sweeps import sweep

    runs_dir, out = results_paths(results_dir, preset, name)
    with warnings.catch_warnings():  # tqdm.auto warns at import when ipywidgets is missing (executed notebooks)
        warnings.filterwarnings("ignore", message="IProgress not found")
        ds = sweep(spec, runs_dir, executor=executor, workers=workers, progress=progress)
    ds.attrs.update(preset=preset, experiment=name)
    extra = {k: v if isinstance(v, (str, int, float)) and not isinstance(v, bool) else json.dumps(v)
             for k, v in (attrs or {}).items()}  # fmt: skip
    ds.attrs.update(extra)
    stored = _same_results(out, ds)
    if stored is None:
        _write_atomic(ds, out)
        stored = _same_results(out, ds)  # as written: with its checksum, exactly what readers will see
    return stored


def read_results(results_dir: str | os.PathLike, preset: str, name: str, *, reader: str) -> xr.Dataset:
    """The combined Dataset of experiment ``name`` at ``preset``, for the notebook ``reader`` that analyses it.

    Raises:
        FileNotFoundError: naming the missing file and the command that makes it (nothing is trained here).
    """
    path = results_paths(results_dir, preset, name)[1]
    if not path.is_file():
        raise FileNotFoundError(
            f"{reader} reads the results of {name} at preset {preset!r}, but {path} does not exist; "
            f"make them first with: initmem experiments --preset {preset} --only {name[:2]}"
        )
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        return ds.load()


def load_results(
    results_dir: str | os.PathLike, preset: str, names: Iterable[str] = EXPERIMENTS
) -> dict[str, xr.Dataset]:
    """The combined Datasets of ``names`` that exist for ``preset`` (missing ones are left out)."""
    found: dict[str, xr.Dataset] = {}
    for name in names:
        path = results_paths(results_dir, preset, name)[1]
        if path.is_file():
            with xr.open_dataset(path, engine="h5netcdf") as ds:
                found[name] = ds.load()
    return found


def measured_costs(results_dir: str | os.PathLike, preset: str, names: Iterable[str] = EXPERIMENTS):
    """What the cached runs of ``preset`` cost, per experiment, read from the run files' provenance.

    Returns a :class:`pandas.DataFrame` indexed by experiment with columns ``runs``, ``core_hours`` (the sum of
    the runs' training wall times; every CPU-preset run uses one thread), ``minutes_per_run`` (their mean),
    ``hardware`` and ``torch`` (the distinct values recorded, joined by "; "). Experiments without runs are
    left out.
    """
    import pandas as pd

    rows = []
    for name in names:
        runs_dir = results_paths(results_dir, preset, name)[0]
        seconds, hardware, torch_versions = [], set(), set()
        for path in sorted(runs_dir.glob("*.nc")):
            with xr.open_dataset(path, engine="h5netcdf") as ds:
                seconds.append(float(ds["wall_time_s"]))
                hardware.add(str(ds.attrs.get("hardware", "?")))
                torch_versions.add(str(ds.attrs.get("torch_version", "?")))
        if seconds:
            rows.append({
                "experiment": name, "runs": len(seconds), "core_hours": sum(seconds) / 3600.0,
                "minutes_per_run": float(np.mean(seconds)) / 60.0, "hardware": "; ".join(sorted(hardware)),
                "torch": "; ".join(sorted(torch_versions)),
            })  # fmt: skip
    columns = ["experiment", "runs", "core_hours", "minutes_per_run", "hardware", "torch"]
    return pd.DataFrame(rows, columns=columns).set_index("experiment")


# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------
def spec_of(ds: xr.Dataset) -> dict[str, Any]:
    """The sweep spec stored in ``ds.attrs["spec"]`` (empty parts if absent)."""
    raw = ds.attrs.get("spec")
    spec = json.loads(raw) if isinstance(raw, str) and raw else {}
    return {"base": spec.get("base", {}) or {}, "grid": spec.get("grid", {}) or {}, "zip": spec.get("zip", {}) or {}}


def field_value(ds: xr.Dataset, field: str) -> Any:
    """The value of a RunConfig field for a Dataset of one configuration: its (scalar) coordinate if
    swept, else the spec's base, else the RunConfig default."""
    if field in ds.coords and ds[field].size == 1:
        return ds[field].values.item()
    base = spec_of(ds)["base"]
    if field in base:
        return base[field]
    from .config import RunConfig

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
def norm_coupling(ds: xr.Dataset, over: str = "sigma_w") -> xr.DataArray:
    """Slope of ``log(final weight_norm)`` against ``log(initial weight_norm)`` across ``over``.

    One least-squares slope per remaining combination (seeds kept). 1 means the final norm is proportional
    to the initial one (radial memory, the paper's SGD); 0 means every sigma_w ends at a common norm (the
    paper's adaptive methods).
    """
    initial = np.log(ds["weight_norm"].isel(epoch=0))
    final = np.log(last_finite(ds["weight_norm"]))

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


# ----------------------------------------------------------------------------------------------
# Experiment 07: spread against the clocks, over every sweep
# ----------------------------------------------------------------------------------------------
_INFO_FIELDS = ("optimizer", "lr", "weight_decay", "batch_size", "model", "epochs")


def spread_points(ds: xr.Dataset, experiment: str = "", over: str = "sigma_w", seed_dim: str = "seed") -> "Any":
    """One row per configuration of ``ds`` (every combination of its dims except ``over`` and seeds):

    ``experiment``, the RunConfig fields ``optimizer, lr, weight_decay, batch_size, model, epochs``, the
    spreads and seed intervals of :func:`initmem.sweeps.summary_table` (selected and final test accuracy),
    the clocks at the selected checkpoint (``T_SGD``, ``T_L2``, ``T_adapt``: mean over sigma_w and seeds) and at
    the end (``final_T_SGD``, ...), the mean training accuracy of the selected and of the final predictor and the
    lowest final one, and ``family``: ``adaptive`` (adam, adamw, muon), ``SGD+L2`` (SGD with weight_decay > 0) or
    ``SGD``. The clocks count the effective step (``lr / (1 - momentum)`` for ``sgd_momentum``, as recorded).
    """
    import pandas as pd

    from .sweeps import summary_table

    if over not in ds.dims:
        raise ValueError(f"over: {over!r} is not a dimension of experiment {experiment!r}")
    by = [d for d in ds["selected_test_acc"].dims if d not in (over, seed_dim, "epoch", "layer")]
    table = summary_table(ds, over=over, by=by or None, seed_dim=seed_dim).reset_index()
    if "index" in table.columns and not by:
        table = table.drop(columns="index")
    rows = []
    for i, row in table.iterrows():
        combo = {d: row[d] for d in by}
        sub = ds.sel(combo) if combo else ds
        info = {f: field_value(sub, f) for f in _INFO_FIELDS}
        extra = {}
        for name in CLOCKS:
            extra[name] = float(sub[f"selected_{name}"].mean(skipna=True))
            extra[f"final_{name}"] = float(sub[f"final_{name}"].mean(skipna=True))
        extra["selected_train_acc"] = float(sub["selected_train_acc"].mean(skipna=True))
        extra["final_train_acc"] = float(sub["final_train_acc"].mean(skipna=True))
        extra["min_final_train_acc"] = float(sub["final_train_acc"].min(skipna=True))
        extra["diverged_runs"] = int(sub["diverged"].sum())
        rows.append({"experiment": experiment, **info, **{k: v for k, v in row.items() if k not in info}, **extra})
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["family"] = [_family(o, w) for o, w in zip(frame["optimizer"], frame["weight_decay"])]
    return frame


def _family(optimizer: str, weight_decay: float) -> str:
    if optimizer in ADAPTIVE:
        return "adaptive"
    return "SGD+L2" if (weight_decay or 0) > 0 else "SGD"


#: The clock that the paper says governs each family's forgetting.
FAMILY_CLOCK = {"SGD": "T_SGD", "SGD+L2": "T_L2", "adaptive": "T_adapt"}


def clock_table(datasets: Mapping[str, xr.Dataset]) -> "Any":
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


def horizon_table(ds: xr.Dataset, horizons: Sequence[int], experiment: str = "02_long_training") -> "Any":
    """:func:`spread_points` at each horizon of :func:`within_horizons`: one row per (horizon, configuration),
    indexed by ``horizon_epochs``; the ``epochs`` column is the horizon and the clocks are those reached there."""
    import pandas as pd

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
def calibration_table(ds: xr.Dataset) -> "Any":
    """One row per (logit_scale, sigma_w) of experiment 08 (seed mean): ``tau_interp`` (epochs; NaN: never),
    ``final_train_acc``, ``selected_test_acc``, ``final_test_acc`` (%), and ``runs_interpolating`` (of the seeds)."""
    import pandas as pd

    from .metrics import INTERPOLATION_THRESHOLD
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
    from .metrics import INTERPOLATION_THRESHOLD

    for scale in sorted(float(v) for v in ds["logit_scale"].values):
        if bool((ds["final_train_acc"].sel(logit_scale=scale) >= INTERPOLATION_THRESHOLD).all()):
            return scale
    return None
