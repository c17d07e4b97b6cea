"""Analysis shared by the experiment notebooks (01-07, 99) and the book: pure functions of sweep Datasets.

Layout of the results of one preset (what :func:`run_experiment` reads and writes)::

    results/<preset>/<experiment>/runs/<hash>.nc    one file per run (the sweep cache)
    results/<preset>/<experiment>.nc                the combined sweep Dataset (attrs: spec, preset, ...)

Functions
---------
* :func:`run_experiment` -- load-or-run a sweep through its cache and save the combined Dataset (the one
  call every experiment notebook makes).
* :func:`load_results` -- every combined Dataset of a preset (for 07 and 99).
* :func:`last_finite` / :func:`final_clocks` -- the last recorded (finite) value of per-epoch variables, e.g.
  the forgetting clocks a run reached.
* :func:`within_horizons` -- the validation-selected predictor when selection is restricted to epochs
  ``<= T``, for several horizons T (experiment 02: one long run stands for many shorter ones).
* :func:`norm_coupling` -- the slope of log(final kernel norm) against log(initial norm) across sigma_w
  (radial memory: 1 = the final norm follows the initial one, 0 = a common final norm).
* :func:`spread_points` / :func:`clock_table` -- one row per configuration (everything but sigma_w and seed):
  its spread and the clocks it reached (experiment 07).
* :func:`reproduction_table` -- the "Paper vs this reproduction" table, one row per claim C1-C7, with the
  verdict rules in :data:`VERDICT_RULES`.

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
    "final_clocks",
    "within_horizons",
    "horizon_table",
    "norm_coupling",
    "t_interval",
    "spearman",
    "spread_points",
    "clock_table",
    "PAPER",
    "VERDICT_RULES",
    "reproduction_table",
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
    if stored is not None:
        return stored
    _write_atomic(ds, out)
    return ds


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


def final_clocks(ds: xr.Dataset) -> xr.Dataset:
    """T_SGD, T_L2 and T_adapt at the last recorded epoch of every run (no ``epoch`` dim)."""
    return xr.Dataset({name: last_finite(ds[name]) for name in CLOCKS if name in ds})


def t_interval(values: Sequence[float] | np.ndarray) -> tuple[float, float, float, int]:
    """``(mean, low, high, n)``: the mean of the finite ``values`` and its two-sided 95 % Student-t
    interval (NaN bounds with fewer than two values)."""
    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    from .sweeps import _t975

    half = _t975(n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half, n


# ----------------------------------------------------------------------------------------------
# Experiment 02: selection restricted to epochs <= T
# ----------------------------------------------------------------------------------------------
def within_horizons(ds: xr.Dataset, horizons: Sequence[int]) -> xr.Dataset:
    """What a run of ``T`` epochs would report, for each horizon ``T``, read off longer runs.

    With a schedule that does not depend on the total length (``constant``, as in experiment 02) and
    batches that depend only on (data_seed, epoch), the first T epochs of a long run *are* a T-epoch run.
    For each T: the recorded epoch ``<= T`` with the lowest validation loss (ties: the earliest) gives
    ``selected_test_acc`` and ``best_epoch``; the last recorded epoch ``<= T`` gives ``final_test_acc``,
    ``final_train_acc`` and the clocks. Returns a Dataset with a new dimension ``horizon`` (epochs) in
    place of ``epoch``.
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
        pieces = {
            "selected_test_acc": window["test_acc"].isel(epoch=best).where(~all_nan),
            "selected_val_acc": window["val_acc"].isel(epoch=best).where(~all_nan),
            "best_epoch": window["epoch"].isel(epoch=best).where(~all_nan).astype(float),
            "final_test_acc": last_finite(window["test_acc"]),
            "final_train_acc": last_finite(window["train_acc"]),
            "weight_norm": last_finite(window["weight_norm"]),
        }
        for name in CLOCKS:
            if name in window:
                pieces[name] = last_finite(window[name])
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


def _momentum_effective(clocks: dict[str, float], mu: float) -> dict[str, float]:
    """Clocks of heavy-ball SGD in terms of its effective step ``lr / (1 - mu)``: T_L2 and T_adapt scale by
    ``1/(1 - mu)``, T_SGD by ``1/(1 - mu)^2``."""
    factor = 1.0 / (1.0 - mu) if mu < 1 else math.inf
    out = dict(clocks)
    for name, power in (("T_SGD", 2), ("T_L2", 1), ("T_adapt", 1)):
        if name in out:
            out[name] = out[name] * factor**power
    return out


def spread_points(
    ds: xr.Dataset, experiment: str = "", over: str = "sigma_w", seed_dim: str = "seed", effective_momentum: bool = True
) -> "Any":
    """One row per configuration of ``ds`` (every combination of its dims except ``over`` and seeds):

    ``experiment``, the RunConfig fields ``optimizer, lr, weight_decay, batch_size, model, epochs``, the
    spreads and seed intervals of :func:`initmem.sweeps.summary_table` (selected and final test accuracy),
    the clocks reached (mean over sigma_w and seeds of each run's last recorded value), the lowest final
    training accuracy over sigma_w and seeds, and ``family``: ``adaptive`` (adam, adamw, muon),
    ``SGD+L2`` (SGD with weight_decay > 0) or ``SGD``.

    ``effective_momentum``: the runs record their clocks from the raw learning rate; for ``sgd_momentum`` the
    step that matters is ``lr / (1 - momentum)`` (heavy ball at steady state), so its clocks are rescaled to
    that effective rate (T_SGD by ``1/(1-mu)^2``, the others by ``1/(1-mu)``), which puts it on the same axis
    as plain SGD.
    """
    import pandas as pd

    from .sweeps import summary_table

    if over not in ds.dims:
        raise ValueError(f"over: {over!r} is not a dimension of experiment {experiment!r}")
    by = [d for d in ds["selected_test_acc"].dims if d not in (over, seed_dim, "epoch", "layer")]
    table = summary_table(ds, over=over, by=by or None, seed_dim=seed_dim).reset_index()
    if "index" in table.columns and not by:
        table = table.drop(columns="index")
    clocks = final_clocks(ds)
    rows = []
    for i, row in table.iterrows():
        combo = {d: row[d] for d in by}
        sub = ds.sel(combo) if combo else ds
        sub_clocks = clocks.sel(combo) if combo else clocks
        info = {f: field_value(sub, f) for f in _INFO_FIELDS}
        extra = {name: float(sub_clocks[name].mean(skipna=True)) for name in sub_clocks.data_vars}
        if effective_momentum and info["optimizer"] == "sgd_momentum":
            extra = _momentum_effective(extra, float(field_value(sub, "momentum")))
        extra["min_final_train_acc"] = float(sub["final_train_acc"].min(skipna=True))
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

    Experiment 02 enters through :func:`within_horizons` at each of its recorded epochs that is a multiple
    of its ``eval_every`` (a horizon per row), 05 per model.
    """
    import pandas as pd

    frames = []
    for name, ds in datasets.items():
        if "sigma_w" not in ds.dims:
            continue
        if name.startswith("02"):
            frames.append(horizon_table(ds, horizons_of(ds), name).reset_index(drop=True))
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
        sub = h.sel(horizon=T).drop_vars("horizon")
        for name in CLOCKS:  # spread_points reads the clocks' last value along epoch
            if name in sub:
                sub[name] = sub[name].expand_dims(epoch=[int(T)])
        frame = spread_points(sub, experiment)
        frame["epochs"] = int(T)
        frame.insert(0, "horizon_epochs", int(T))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True).set_index("horizon_epochs")


# ----------------------------------------------------------------------------------------------
# 99: the paper against this reproduction
# ----------------------------------------------------------------------------------------------
#: The paper's numbers, with where they come from (the paper summary, shared/paper/000_*.txt).
PAPER: dict[str, dict[str, Any]] = {
    "C1": {"value": 26.5, "text": "26.5 pp spread, >= 99.5 % train accuracy (ResNet-9, b = 128, low-lr SGD)",
           "source": "summary, Key Results / Optimizer Dependence: 'SGD Remembers'"},
    "C2": {"value": 4.0, "text": "~4 pp spread for Muon; Adam and AdamW 'minimal'",
           "source": "summary, Key Results / Optimizer Dependence: 'Adaptive Methods Forget'"},
    "C3": {"value": None, "text": "5,000 epochs of low-lr SGD: spread 'essentially unchanged'",
           "source": "summary, Hyperparameter Dependence: 'Training Time is Insufficient'"},
    "C4": {"value": 0.0, "text": "larger lr / L2 decay: spread 'near zero'",
           "source": "summary, Hyperparameter Dependence: 'Regularization and Learning Rate'"},
    "C5": {"value": None, "text": "larger batches (16 -> 256): bigger spread",
           "source": "summary, Hyperparameter Dependence: 'Batch Size'"},
    "C6": {"value": 99.5, "text": "ResNet-56/110 fail to reach 99.5 % train accuracy at large sigma_w",
           "source": "summary, Depth and Architecture"},
    "C7": {"value": None, "text": "SGD's final norm coupled to the initial one; adaptive methods reach a common norm",
           "source": "summary, Key Results: final weight norm; 'converge to a common final norm scale'"},
}  # fmt: skip

#: The verdict rules, in words (rendered in the book); the code below applies exactly these.
VERDICT_RULES: dict[str, str] = {
    "C1": "direction: SGD spread >= 5 pp; size: also within a factor 2 of 26.5 pp (13.25-53 pp) and every "
    "SGD run reaches >= 99.5 % training accuracy",
    "C2": "direction: SGD's spread exceeds every adaptive optimizer's by >= 5 pp (the noise floor; the paper: "
    "26.5 against ~4 pp); size: also the largest adaptive spread <= 8 pp (twice the paper's ~4 pp) and <= half "
    "of SGD's",
    "C3": "r = spread at the longest horizon / spread at the reference length; direction: the reference spread "
    ">= 5 pp (there is memory to keep) and r >= 0.5 (most of it survives); size: also r >= 0.75 with a horizon "
    "ratio >= 4",
    "C4": "r = spread of the highest-lr, strongest-L2 cell / spread of the lowest-lr, no-L2 cell; direction: "
    "the former is >= 5 pp (the noise floor) below the latter; size: also r <= 0.25 or that spread <= 3 pp",
    "C5": "rho = Spearman correlation of spread with batch size; direction: spread(largest b) exceeds "
    "spread(smallest b) by >= 5 pp (the noise floor); size: also rho >= 0.8",
    "C6": "direction: the deepest model's final train accuracy at the largest sigma_w is below ResNet-9's "
    "(or its own at the smallest sigma_w) by >= 5 pp; size: also < 99.5 % there while ResNet-9 (or it, at "
    "the smallest sigma_w) reaches >= 99.5 %",
    "C7": "s = slope of log final vs log initial kernel norm across sigma_w; direction: s(SGD) > every "
    "adaptive s; size: also s(SGD) >= 0.5 and every adaptive s <= 0.25",
}

IN_SIZE, IN_DIRECTION, NOT_REPRODUCED, NOT_MEASURED = (
    "reproduced in size", "reproduced in direction", "not reproduced", "not measured",
)  # fmt: skip
_NOISE_FLOOR_PP = 5.0  # a spread below this is within what seeds and a small test set can produce


def _verdict(direction: bool, size: bool) -> str:
    if direction and size:
        return IN_SIZE
    return IN_DIRECTION if direction else NOT_REPRODUCED


def _spreads(ds: xr.Dataset, var: str = "selected_test_acc") -> xr.DataArray:
    """Spread of the seed-mean accuracy over sigma_w (other dims kept)."""
    from .metrics import spread

    values = ds[var]
    if "seed" in values.dims:
        values = values.mean("seed", skipna=True)
    return spread(values, "sigma_w")


def _seed_spreads(ds: xr.Dataset, var: str = "selected_test_acc") -> xr.DataArray:
    from .metrics import spread

    return spread(ds[var], "sigma_w")


def _fmt_ci(mean: float, low: float, high: float, unit: str = " pp", digits: int = 1) -> str:
    if not np.isfinite(mean):
        return "n/a"
    text = f"{mean:.{digits}f}{unit}"
    if np.isfinite(low) and np.isfinite(high):
        text += f" [95 % CI {low:.{digits}f}, {high:.{digits}f}]"
    return text


def _fmt_clocks(clocks: Mapping[str, float]) -> str:
    return ", ".join(f"{k} = {v:.3g}" for k, v in clocks.items() if v is not None and np.isfinite(v))


def _scale(ds: xr.Dataset) -> str:
    base = spec_of(ds)["base"]
    parts = [str(ds.attrs.get("preset", "?"))]
    model = field_value(ds, "model") if "model" not in ds.dims else "/".join(map(str, ds["model"].values))
    width = base.get("width")
    parts.append(f"{model}" + (f" w{width}" if width else ""))
    if base.get("train_size"):
        parts.append(f"n={base['train_size']}")
    if base.get("image_size") and base.get("image_size") != 32:
        parts.append(f"{base['image_size']}px")
    if "seed" in ds.dims:
        parts.append(f"{ds.sizes['seed']} seed{'s' if ds.sizes['seed'] > 1 else ''}")
    return ", ".join(parts)


def _clocks_of(ds: xr.Dataset, **sel: Any) -> dict[str, float]:
    clocks = final_clocks(ds.sel(sel) if sel else ds)
    return {k: float(clocks[k].mean(skipna=True)) for k in clocks.data_vars}


def _row(claim: str, ours: str, number: float, verdict: str, scale: str, clocks: str, note: str = "") -> dict:
    return {
        "claim": claim,
        "paper": PAPER[claim]["text"],
        "paper_source": PAPER[claim]["source"],
        "ours": ours,
        "ours_value": number,
        "scale": scale,
        "verdict": verdict,
        "rule": VERDICT_RULES[claim],
        "clocks_reached": clocks,
        "note": note,
    }


def _missing(claim: str, what: str) -> dict:
    return _row(claim, "n/a", math.nan, NOT_MEASURED, "", "", f"no results of {what} for this preset")


def _claim_c1(ds: xr.Dataset) -> dict:
    sgd = ds.sel(optimizer="sgd")
    spread = float(_spreads(sgd))
    mean, low, high, _ = t_interval(_seed_spreads(sgd).values)
    min_train = float(sgd["final_train_acc"].min())
    direction = spread >= _NOISE_FLOOR_PP
    size = direction and 0.5 * PAPER["C1"]["value"] <= spread <= 2 * PAPER["C1"]["value"] and min_train >= 99.5
    note = f"lowest final train accuracy {min_train:.1f} %"
    return _row("C1", _fmt_ci(spread, low, high) + f"; min train acc {min_train:.1f} %", spread,
                _verdict(direction, size), _scale(ds), _fmt_clocks(_clocks_of(sgd)), note)  # fmt: skip


def _claim_c2(ds: xr.Dataset) -> dict:
    spreads = _spreads(ds)
    present = [o for o in ADAPTIVE if o in ds["optimizer"].values]
    if "sgd" not in ds["optimizer"].values or not present:
        return _missing("C2", "SGD and an adaptive optimizer in 01_optimizers")
    sgd = float(spreads.sel(optimizer="sgd"))
    adaptive = {o: float(spreads.sel(optimizer=o)) for o in present}
    worst = max(adaptive, key=adaptive.get)
    _, low, high, _ = t_interval(_seed_spreads(ds).sel(optimizer=worst).values)
    direction = sgd - adaptive[worst] >= _NOISE_FLOOR_PP
    size = direction and adaptive[worst] <= 2 * PAPER["C2"]["value"] and adaptive[worst] <= 0.5 * sgd
    ours = "; ".join(f"{o} {v:.1f} pp" for o, v in adaptive.items()) + f" (SGD {sgd:.1f} pp; largest {worst}"
    ours += f" 95 % CI [{low:.1f}, {high:.1f}])" if np.isfinite(low) else ")"
    clocks = {f"T_adapt({o})": _clocks_of(ds, optimizer=o).get("T_adapt", math.nan) for o in present}
    note = ""
    if not direction and sgd < 2 * _NOISE_FLOOR_PP:
        note = (f"SGD's own spread ({sgd:.1f} pp) is within twice the 5 pp noise floor: at this budget SGD keeps too "
                "little memory for the adaptive optimizers to be seen erasing it")  # fmt: skip
    return _row("C2", ours, adaptive[worst], _verdict(direction, size), _scale(ds), _fmt_clocks(clocks), note)


def _claim_c3(ds: xr.Dataset) -> dict:
    horizons = horizons_of(ds)
    first, last = int(ds.attrs.get("reference_horizon", horizons[0])), horizons[-1]
    h = within_horizons(ds, [first, last])
    per_seed = _seed_spreads(h)  # (horizon, seed?)
    mean_spreads = _spreads(h)
    s0, s1 = float(mean_spreads.isel(horizon=0)), float(mean_spreads.isel(horizon=-1))
    ratio = s1 / s0 if s0 > 0 else math.nan
    seed_ratios = (per_seed.isel(horizon=-1) / per_seed.isel(horizon=0)).values
    _, low, high, _ = t_interval(seed_ratios)
    length = last / first
    direction = s0 >= _NOISE_FLOOR_PP and np.isfinite(ratio) and ratio >= 0.5
    size = direction and ratio >= 0.75 and length >= 4
    ours = f"spread {s0:.1f} pp at {first} epochs -> {s1:.1f} pp at {last} epochs (ratio {ratio:.2f}"
    ours += f", 95 % CI [{low:.2f}, {high:.2f}])" if np.isfinite(low) else ")"
    clocks = {f"T_SGD({first} ep)": float(h["T_SGD"].isel(horizon=0).mean()),
              f"T_SGD({last} ep)": float(h["T_SGD"].isel(horizon=-1).mean())}  # fmt: skip
    trained = float(h["final_train_acc"].isel(horizon=-1).min())
    note = f"lowest final train accuracy at {last} epochs {trained:.1f} %"
    if s0 < _NOISE_FLOOR_PP:
        note += "; the reference spread is below the 5 pp noise floor: nothing to keep"
    return _row("C3", ours, ratio, _verdict(direction, size), _scale(ds) + f", {last} epochs",
                _fmt_clocks(clocks), note)  # fmt: skip


def _claim_c4(ds: xr.Dataset) -> dict:
    spreads = _spreads(ds)
    lrs = sorted(float(v) for v in ds["lr"].values)
    wds = sorted(float(v) for v in ds["weight_decay"].values)
    base = float(spreads.sel(lr=lrs[0], weight_decay=wds[0]))
    forget = float(spreads.sel(lr=lrs[-1], weight_decay=wds[-1]))
    ratio = forget / base if base > 0 else math.nan
    _, low, high, _ = t_interval(_seed_spreads(ds).sel(lr=lrs[-1], weight_decay=wds[-1]).values)
    direction = base - forget >= _NOISE_FLOOR_PP
    size = direction and (ratio <= 0.25 or forget <= 3.0)
    ours = (f"{forget:.1f} pp at lr {lrs[-1]:g}, L2 {wds[-1]:g} vs {base:.1f} pp at lr {lrs[0]:g}, L2 {wds[0]:g}"
            + (f" (95 % CI of the former [{low:.1f}, {high:.1f}])" if np.isfinite(low) else ""))  # fmt: skip
    clocks = _clocks_of(ds, lr=lrs[-1], weight_decay=wds[-1])
    note = ""
    if not direction and base < 2 * _NOISE_FLOOR_PP:
        note = (f"the baseline spread ({base:.1f} pp) is within twice the 5 pp noise floor: at this budget SGD keeps "
                "too little memory for a larger lr or L2 to be seen erasing it")  # fmt: skip
    return _row("C4", ours, forget, _verdict(direction, size), _scale(ds), _fmt_clocks(clocks), note)


def _claim_c5(ds: xr.Dataset) -> dict:
    spreads = _spreads(ds)
    bs = [int(b) for b in ds["batch_size"].values]
    values = [float(spreads.sel(batch_size=b)) for b in bs]
    order = np.argsort(bs)
    bs, values = [bs[i] for i in order], [values[i] for i in order]
    rho = spearman(bs, values)
    diff = values[-1] - values[0]
    per_seed = _seed_spreads(ds)
    _, low, high, _ = t_interval((per_seed.sel(batch_size=bs[-1]) - per_seed.sel(batch_size=bs[0])).values)
    direction = diff >= _NOISE_FLOOR_PP
    size = direction and np.isfinite(rho) and rho >= 0.8
    ours = ", ".join(f"b={b}: {v:.1f} pp" for b, v in zip(bs, values)) + f" (Spearman {rho:.2f}"
    ours += f"; difference 95 % CI [{low:.1f}, {high:.1f}])" if np.isfinite(low) else ")"
    clocks = {f"T_SGD(b={b})": _clocks_of(ds, batch_size=b).get("T_SGD", math.nan) for b in (bs[0], bs[-1])}
    return _row("C5", ours, rho, _verdict(direction, size), _scale(ds), _fmt_clocks(clocks))


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation of ``x`` and ``y`` (finite pairs only; NaN with fewer than 3 or no variation).
    Ties are ranked by position (no tie correction)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        return math.nan
    rx = np.argsort(np.argsort(x[ok])).astype(float)
    ry = np.argsort(np.argsort(y[ok])).astype(float)
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _claim_c6(ds: xr.Dataset) -> dict:
    models = [str(m) for m in ds["model"].values]
    depth = {m: _depth(m) for m in models}
    deepest = max(models, key=depth.get)
    sig = sorted(float(s) for s in ds["sigma_w"].values)
    train = ds["final_train_acc"]
    if "seed" in train.dims:
        train = train.mean("seed")
    deep_hi = float(train.sel(model=deepest, sigma_w=sig[-1]))
    deep_lo = float(train.sel(model=deepest, sigma_w=sig[0]))
    ref_name = "resnet9" if "resnet9" in models and deepest != "resnet9" else None
    ref_hi = float(train.sel(model=ref_name, sigma_w=sig[-1])) if ref_name else deep_lo
    ref_label = f"ResNet-9 at sigma_w {sig[-1]:g}" if ref_name else f"itself at sigma_w {sig[0]:g}"
    direction = deep_hi <= ref_hi - 5.0
    size = direction and deep_hi < 99.5 <= ref_hi
    ours = (f"{deepest}: final train acc {deep_lo:.1f} % at sigma_w {sig[0]:g}, {deep_hi:.1f} % at {sig[-1]:g}; "
            f"reference ({ref_label}) {ref_hi:.1f} %")  # fmt: skip
    clocks = _clocks_of(ds, model=deepest)
    notes = []
    if ref_name and float(train.sel(model=ref_name, sigma_w=sig[0])) < 99.5:
        notes.append(f"the reference ResNet-9 does not interpolate even at sigma_w {sig[0]:g} "
                     f"({float(train.sel(model=ref_name, sigma_w=sig[0])):.1f} %): this budget is too small for it, "
                     "so the depth contrast cannot show")  # fmt: skip
    failing = [m for m in models if float(train.sel(model=m, sigma_w=sig[-1])) < 99.5]
    notes.append(f"below 99.5 % train accuracy at sigma_w {sig[-1]:g}: {', '.join(failing) or 'none'}")
    return _row("C6", ours, deep_hi, _verdict(direction, size), _scale(ds), _fmt_clocks(clocks), "; ".join(notes))


def _depth(model: str) -> int:
    return 9 if model == "resnet9" else int(model.removeprefix("resnet"))


def _claim_c7(ds: xr.Dataset) -> dict:
    slopes = norm_coupling(ds)
    mean_slopes = slopes.mean("seed") if "seed" in slopes.dims else slopes
    present = [o for o in ADAPTIVE if o in ds["optimizer"].values]
    if "sgd" not in ds["optimizer"].values or not present:
        return _missing("C7", "SGD and an adaptive optimizer in 01_optimizers")
    s_sgd = float(mean_slopes.sel(optimizer="sgd"))
    adaptive = {o: float(mean_slopes.sel(optimizer=o)) for o in present}
    _, low, high, _ = t_interval(slopes.sel(optimizer="sgd").values)
    direction = all(s_sgd > v for v in adaptive.values())
    size = direction and s_sgd >= 0.5 and all(v <= 0.25 for v in adaptive.values())
    ours = f"slope SGD {s_sgd:.2f}" + (f" [95 % CI {low:.2f}, {high:.2f}]" if np.isfinite(low) else "")
    ours += "; " + ", ".join(f"{o} {v:.2f}" for o, v in adaptive.items())
    clocks = {f"T_adapt({o})": _clocks_of(ds, optimizer=o).get("T_adapt", math.nan) for o in present}
    clocks["T_SGD(sgd)"] = _clocks_of(ds, optimizer="sgd").get("T_SGD", math.nan)
    return _row("C7", ours, s_sgd, _verdict(direction, size), _scale(ds), _fmt_clocks(clocks))


_CLAIMS = (
    ("C1", "01_optimizers", _claim_c1),
    ("C2", "01_optimizers", _claim_c2),
    ("C3", "02_long_training", _claim_c3),
    ("C4", "03_lr_and_l2", _claim_c4),
    ("C5", "04_batch_size", _claim_c5),
    ("C6", "05_depth", _claim_c6),
    ("C7", "01_optimizers", _claim_c7),
)


def reproduction_table(results: Mapping[str, xr.Dataset]) -> "Any":
    """The "Paper vs this reproduction" table: one row per claim C1-C7 (a pandas DataFrame indexed by claim).

    Columns: ``paper`` (the paper's number or statement), ``paper_source``, ``ours`` (with a 95 % CI where
    seeds allow), ``ours_value`` (the number the verdict is computed from), ``scale`` (preset, model, data,
    seeds), ``verdict`` (:data:`VERDICT_RULES`: reproduced in size / in direction / not reproduced / not
    measured), ``rule``, ``clocks_reached`` and ``note``. A claim whose experiment has no results, or whose
    results lack what the rule needs, is "not measured" with the reason in ``note``.
    """
    import pandas as pd

    rows = []
    for claim, name, compute in _CLAIMS:
        ds = results.get(name)
        if ds is None:
            rows.append(_missing(claim, name))
            continue
        try:
            rows.append(compute(ds))
        except (KeyError, ValueError, IndexError) as exc:
            rows.append(_row(claim, "n/a", math.nan, NOT_MEASURED, _scale(ds), "",
                             f"{name} lacks what the rule needs ({type(exc).__name__}: {exc})"))  # fmt: skip
    return pd.DataFrame(rows).set_index("claim")
