"""A synthetic sweep Dataset shaped like initmem.sweeps.driver.sweep() output, for tests that must not train."""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

EPOCHS = np.array([0, 2, 4, 6, 8, 10])
LAYERS = ["conv0", "conv1", "head"]


def fake_sweep(grid: dict, zipped: dict | None = None, base: dict | None = None, seed: int = 0) -> xr.Dataset:
    """A Dataset shaped like initmem.sweeps.driver.sweep() output: sweep dims, then epoch and layer.

    Accuracy falls with sigma_w for SGD-like optimizers and stays flat for adaptive ones; clocks grow with
    the epoch; the kernel norm follows sigma_w for SGD and converges for the others.
    """
    rng = np.random.default_rng(seed)
    zipped = zipped or {}
    base = {
        "model": "resnet9",
        "width": 8,
        "train_size": 500,
        "image_size": 16,
        "batch_size": 50,
        "epochs": 10,
        "data": "synthetic",
        "eval_every": 2,
        **(base or {}),
    }
    dims = [*grid, *list(zipped)[:1]]
    coords: dict = {d: np.asarray(grid[d]) for d in grid}
    if zipped:
        first = list(zipped)[0]
        coords[first] = np.asarray(zipped[first])
        for k in list(zipped)[1:]:
            coords[k] = (first, np.asarray(zipped[k]))
    shape = tuple(len(coords[d]) if not isinstance(coords[d], tuple) else len(coords[d][1]) for d in dims)
    sigma = np.asarray(grid.get("sigma_w", [1.0]), float)
    s_axis = dims.index("sigma_w") if "sigma_w" in dims else None

    def along_sigma(values):
        out = np.ones(shape)
        if s_axis is not None:
            view = [1] * len(shape)
            view[s_axis] = len(sigma)
            out = out * np.asarray(values).reshape(view)
        return out

    adaptive = np.zeros(shape, bool)
    if "optimizer" in dims:
        axis = dims.index("optimizer")
        view = [1] * len(shape)
        view[axis] = shape[axis]
        adaptive = adaptive | np.isin(np.asarray(coords["optimizer"]), ["adam", "adamw", "muon"]).reshape(view)
    acc = np.where(adaptive, 60.0, 60.0 - 8 * np.log(along_sigma(sigma) / sigma.min() + 1e-9)) + rng.normal(0, 1, shape)
    n_e = len(EPOCHS)
    frac = EPOCHS / EPOCHS[-1]
    curve = acc[..., None] * (0.3 + 0.7 * frac)
    init_norm = along_sigma(sigma * 10)
    final_norm = np.where(adaptive, 50.0, init_norm * 1.5)
    norm = init_norm[..., None] + (final_norm - init_norm)[..., None] * frac
    lr = 0.05
    steps = EPOCHS * 10.0
    full = lambda v: np.broadcast_to(v, shape + (n_e,)).copy()  # noqa: E731
    data = {
        "train_loss": full(2.3 * (1 - 0.9 * frac)),
        "train_acc": full(np.minimum(100.0, 20 + 85 * frac)),
        "val_loss": full(2.3 - 1.2 * frac + 0.8 * frac**2) + rng.normal(0, 0.01, shape + (n_e,)),
        "val_acc": curve + 1,
        "test_acc": curve,
        "test_loss": full(2.3 - frac),
        "weight_norm": norm,
        "dist_from_init": np.abs(norm - init_norm[..., None]) + 1.0 * frac,
        "scheduled_lr": full(np.full(n_e, lr)),
        "step": full(steps),
        "T_SGD": full(steps * lr**2 / 50),
        "T_L2": full(steps * lr * 1e-3),
        "T_adapt": full(steps * lr),
    }
    variables = {k: ((*dims, "epoch"), v) for k, v in data.items()}
    variables["layer_norm"] = ((*dims, "epoch", "layer"), np.repeat(norm[..., None], len(LAYERS), -1) / 2)
    scalars = {
        "best_epoch": np.full(shape, 8.0),
        "selected_test_acc": curve[..., -2],
        "selected_val_acc": curve[..., -2] + 1,
        "selected_train_acc": data["train_acc"][..., -2],
        **{f"selected_{c}": data[c][..., -2] for c in ("T_SGD", "T_L2", "T_adapt")},
        "final_epoch": np.full(shape, float(EPOCHS[-1])),
        "final_test_acc": curve[..., -1],
        "final_train_acc": np.full(shape, 100.0),
        **{f"final_{c}": data[c][..., -1] for c in ("T_SGD", "T_L2", "T_adapt")},
        "tau_interp": np.where(along_sigma(sigma) > 2, np.nan, 8.0),
        "repair_gap": np.zeros(shape),
        "diverged": np.zeros(shape),
        "wall_time_s": np.ones(shape),
    }
    variables.update({k: (tuple(dims), v) for k, v in scalars.items()})
    variables["run_hash"] = (tuple(dims), np.full(shape, "0123456789abcdef"))
    spec = {
        "base": base,
        "grid": {k: list(map(_py, v)) for k, v in grid.items()},
        "zip": {k: list(map(_py, v)) for k, v in zipped.items()},
    }
    ds = xr.Dataset(variables, coords={**coords, "epoch": EPOCHS, "layer": LAYERS})
    ds.attrs.update(spec=json.dumps(spec), preset="test", experiment="fake")
    return ds


def _py(v):
    return v.item() if hasattr(v, "item") else v


def ledger_results(seeds=(0, 1, 2)) -> dict[str, xr.Dataset]:
    """Fake results of experiments 01-05 in which every claim of the paper holds clearly (3 seeds)."""
    seeds = list(seeds)
    opt = fake_sweep(
        {"sigma_w": [0.25, 1.0, 2.5], "seed": seeds},
        {"optimizer": ["sgd", "adam", "adamw", "muon"], "lr": [0.02, 0.005, 0.005, 0.02]},
    )
    opt["selected_train_acc"][:] = 100.0  # the selected checkpoints interpolate: they carry C1 and C2
    long = fake_sweep({"sigma_w": [0.25, 1.0, 2.5], "seed": seeds})
    long.attrs.update(horizons=json.dumps([2, 10]), reference_horizon=2)
    long["train_acc"].loc[{"epoch": slice(2, None)}] = 100.0  # interpolates from epoch 2 on
    long["val_loss"] = long["val_loss"] * 0 + 3.0 - long["epoch"] / 10  # the last epoch within a horizon is the best
    lr = fake_sweep({"lr": [0.02, 0.1], "weight_decay": [0.0, 0.01], "sigma_w": [0.25, 2.5], "seed": seeds})
    lr["selected_test_acc"].loc[{"lr": 0.1, "weight_decay": 0.01}] = 60.0  # the forgetting cell: no spread
    lr["selected_train_acc"][:] = 100.0  # the selected checkpoints interpolate: they carry C4
    bs = fake_sweep({"sigma_w": [0.25, 2.5], "seed": seeds}, {"batch_size": [16, 64, 256], "epochs": [2, 8, 32]})
    scale = xr.DataArray([0.2, 0.5, 1.0], dims="batch_size", coords={"batch_size": [16, 64, 256]})
    low = bs["selected_test_acc"].sel(sigma_w=0.25)
    bs["selected_test_acc"] = low - (low - bs["selected_test_acc"]) * scale  # spread grows with b
    depth = fake_sweep({"sigma_w": [0.25, 2.5], "seed": seeds}, {"model": ["resnet9", "resnet56"]})
    depth["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 2.5}] = 60.0
    return {"01_optimizers": opt, "02_long_training": long, "03_lr_and_l2": lr, "04_batch_size": bs, "05_depth": depth}


def fake_phase(
    midpoint: float = 0.0,
    height: float = 20.0,
    width: float = 0.3,
    seeds=(0, 1, 2),
    noise: float = 0.3,
    lrs=(0.02, 0.03, 0.045, 0.067, 0.1),
    weight_decays=(0.0, 0.0025, 0.005, 0.01, 0.02),
) -> xr.Dataset:
    """A phase-diagram sweep (experiment 10) whose memory gap follows a known logistic in x = T_L2 - ln(|W0|/|W*|):
    ``gap = height / (1 + exp((x - midpoint) / width))`` plus N(0, noise) per run. T_L2 = lambda * lr * 2500; |W0| = 42.5
    at sigma_w 2.5; |W*| = 10 ((lr / 0.1) / (lambda / 0.01))^(1/4) with decay (T5's law), 6 (lr / 0.02)^(1/2) without."""
    rng = np.random.default_rng(11)
    ds = fake_sweep({"lr": list(lrs), "weight_decay": list(weight_decays), "sigma_w": [0.1, 2.5], "seed": list(seeds)})
    lr = ds["lr"] * xr.ones_like(ds["selected_test_acc"])
    wd = ds["weight_decay"] * xr.ones_like(ds["selected_test_acc"])
    t_l2 = wd * lr * 2500.0
    w_star = xr.where(wd > 0, 10.0 * ((lr / 0.1) / (wd.where(wd > 0, 1.0) / 0.01)) ** 0.25, 6.0 * (lr / 0.02) ** 0.5)
    x = t_l2 - np.log(42.5 / w_star)
    gap = height / (1.0 + np.exp((x - midpoint) / width))
    small = ds["sigma_w"] == 0.1
    for var in ("selected_test_acc", "final_test_acc"):
        jitter = xr.DataArray(rng.normal(0.0, noise, ds[var].shape), dims=ds[var].dims, coords=ds[var].coords)
        ds[var] = (60.0 - xr.where(small, 0.0, gap) + jitter).transpose(*ds[var].dims)
    initial = xr.where(small, 1.7, 42.5)
    final = xr.where(small, w_star, np.maximum(w_star, 42.5 * np.exp(-t_l2)))
    frac = xr.DataArray(EPOCHS / EPOCHS[-1], dims="epoch", coords={"epoch": EPOCHS})
    ds["weight_norm"] = (initial + (final - initial) * frac).transpose(*ds["weight_norm"].dims)
    ds["final_T_L2"] = t_l2.transpose(*ds["final_T_L2"].dims)
    ds["final_T_SGD"] = (lr**2 * 3000 / 64).transpose(*ds["final_T_SGD"].dims)
    ds["final_train_acc"][:] = 100.0
    return ds
