"""Hypothesis strategies for the judges' property tests (tests/test_judge_invariants.py): an experiment's combined
Dataset drawn around :func:`sweep_fakes.fake_sweep`, in the design each claim's judge reads (sigma_w x seeds, with
the optimizers, cells, batch sizes or models the claim compares), with diverged runs (NaN accuracies, ``diverged =
1``, as :mod:`initmem.run.records` writes them), missing cells (a run the combined Dataset lacks: NaN, not flagged)
and ties (accuracies on a half-pp grid, so that cells and seeds often tie exactly; a shift on the grid is exact).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import xarray as xr
from hypothesis import strategies as st

from initmem.run.optimizers import label
from sweep_fakes import fake_phase, fake_sweep  # tests/ is on sys.path under pytest

#: Accuracies lie on this grid (pp): ties are common, and a constant on the grid shifts them exactly.
GRID = 0.5
#: The accuracies of a run (test and validation; train accuracies carry the interpolation premise and stay apart).
TEST_ACCURACIES = ("selected_test_acc", "final_test_acc", "test_acc", "val_acc", "selected_val_acc")
#: What a diverged run records as NaN besides its per-epoch values after the divergence (its predictors).
_RUN_SCALARS = (
    "best_epoch",
    "selected_test_acc",
    "selected_val_acc",
    "selected_train_acc",
    "final_epoch",
    "final_test_acc",
    "final_train_acc",
    *(f"{w}_{c}" for w in ("selected", "final") for c in ("T_SGD", "T_L2", "T_adapt")),
)
#: The claims every strategy here can draw a design of, and the experiment each reads.
EXPERIMENTS = {
    "C1": "01_optimizers",
    "C2": "01_optimizers",
    "C3": "02_long_training",
    "C4": "03_lr_and_l2",
    "C5": "04_batch_size",
    "C6": "05_depth",
    "C7": "01_optimizers",
    "B1": "10_phase_diagram",
}


@dataclass
class Design:
    """A drawn design of ``claim``: its Dataset, the run-dimension selections of the two conditions a contrast row
    compares (``pair``, reference first; empty where the claim has no two conditions) and the condition every row
    of the claim reads (``shared``, where there is one)."""

    claim: str
    ds: xr.Dataset
    pair: tuple[dict, dict] | tuple = ()
    shared: dict = field(default_factory=dict)
    #: The row a swap of ``pair`` mirrors.
    contrast_row: str = ""

    @property
    def experiment(self) -> str:
        return EXPERIMENTS[self.claim]

    def results(self, ds: xr.Dataset | None = None) -> dict[str, xr.Dataset]:
        return {self.experiment: self.ds if ds is None else ds}


def on_grid(values: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(values, float) / GRID) * GRID


def _set(ds: xr.Dataset, var: str, da: xr.DataArray) -> None:
    ds[var] = da.broadcast_like(ds[var]).transpose(*ds[var].dims).astype(float)


def _profile(ds: xr.Dataset) -> xr.DataArray:
    k = ds.sizes["sigma_w"]
    return xr.DataArray(np.linspace(0.0, 1.0, k), dims="sigma_w", coords={"sigma_w": ds["sigma_w"].values})


def _fill_accuracies(ds: xr.Dataset, memory: xr.DataArray, noise: float, rng: np.random.Generator) -> None:
    """The test accuracies of every run: 60 pp falling linearly over the sigma_w index by ``memory`` (a DataArray
    over the condition dims), plus N(0, noise) per run, on the grid; the final predictor with its own noise; the
    per-epoch curves follow the final predictor, the validation accuracy 1 pp above."""
    target = ds["selected_test_acc"]
    mean = (60.0 - _profile(ds) * memory).broadcast_like(target).transpose(*target.dims)
    for var in ("selected_test_acc", "final_test_acc"):
        ds[var] = mean.copy(data=on_grid(mean.values + rng.normal(0.0, noise, mean.shape)))
    ds["selected_val_acc"] = ds["selected_test_acc"] + 1.0
    frac = xr.DataArray(np.linspace(0.3, 1.0, ds.sizes["epoch"]), dims="epoch", coords={"epoch": ds["epoch"]})
    product = ds["final_test_acc"] * frac
    curve = product.copy(data=on_grid(product.values))
    _set(ds, "test_acc", curve)
    _set(ds, "val_acc", curve + 1.0)


def _points(draw, ds: xr.Dataset, dims: tuple[str, ...], count) -> list[dict]:
    """``count`` distinct runs of ``ds`` (selections over ``dims``), drawn."""
    runs = [
        dict(zip(dims, values))
        for values in np.array(np.meshgrid(*[ds[d].values for d in dims], indexing="ij"), dtype=object)
        .reshape(len(dims), -1)
        .T
    ]
    return draw(st.lists(st.sampled_from(runs), min_size=count, max_size=count, unique_by=lambda r: str(r)))


def diverge(ds: xr.Dataset, at: dict, from_epoch: int = 2) -> None:
    """Make the run at ``at`` diverged as the trainer records it: ``diverged = 1``, its predictors NaN, every
    per-epoch value from ``from_epoch`` on NaN."""
    for var in _RUN_SCALARS:
        if var in ds:
            ds[var].loc[at] = np.nan
    for var in ds.data_vars:
        if "epoch" in ds[var].dims and var not in ("step", "scheduled_lr"):
            ds[var].loc[{**at, "epoch": ds["epoch"].values[ds["epoch"].values >= from_epoch]}] = np.nan
    ds["diverged"].loc[at] = 1.0


def miss(ds: xr.Dataset, at: dict) -> None:
    """A run the combined Dataset lacks (never trained, or its file left out): every value NaN, not flagged."""
    for var in ds.data_vars:
        if ds[var].dtype.kind == "f" and var != "diverged":
            ds[var].loc[at] = np.nan


def _damage(draw, ds: xr.Dataset, dims: tuple[str, ...], *, diverged: int = 1, missing: int = 1) -> None:
    """Up to ``diverged`` diverged runs and ``missing`` missing ones, drawn among the runs over ``dims``."""
    k_div = draw(st.integers(0, diverged))
    k_miss = draw(st.integers(0, missing))
    runs = _points(draw, ds, dims, k_div + k_miss)
    for at in runs[:k_div]:
        diverge(ds, at, draw(st.sampled_from([2, 6])))
    for at in runs[k_div:]:
        miss(ds, at)


def _interpolation(draw, ds: xr.Dataset, dims: tuple[str, ...]) -> None:
    """Every run's selected and final checkpoints at 100 % train accuracy; sometimes one falls short (99 %)."""
    ds["selected_train_acc"][:] = 100.0
    ds["final_train_acc"][:] = 100.0
    if draw(st.integers(0, 4)) == 0:
        (at,) = _points(draw, ds, dims, 1)
        var = draw(st.sampled_from(["selected_train_acc", "final_train_acc"]))
        ds[var].loc[at] = 99.0


memories = st.sampled_from([0.0, 1.0, 3.0, 6.0, 12.0, 26.0])
noises = st.sampled_from([0.0, 0.5, 1.5, 4.0])
seed_lists = st.integers(3, 5).map(lambda n: list(range(n)))
sigma_grids = st.sampled_from([[0.25, 2.5], [0.25, 1.0, 2.5], [0.1, 0.5, 1.0, 2.5]])


@st.composite
def optimizer_designs(draw, claim: str, damage: bool = True) -> Design:
    """01_optimizers: SGD and the adaptive optimizers C2 compares (C1: SGD and Adam; C7: SGD and Adam)."""
    others = ["adam"] if claim in ("C1", "C7") else draw(st.sampled_from([["adam"], ["adamw"], ["adam", "muon"]]))
    names = ["sgd", *others]
    sigmas, seeds = draw(sigma_grids), draw(seed_lists)
    ds = fake_sweep({"sigma_w": sigmas, "seed": seeds}, {"optimizer": names, "lr": [0.02] + [0.005] * len(others)})
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    memory = xr.DataArray([draw(memories) for _ in names], dims="optimizer", coords={"optimizer": names})
    _fill_accuracies(ds, memory, draw(noises), rng)
    _interpolation(draw, ds, ("optimizer", "sigma_w", "seed"))
    # the kernel norms: log final = beta * log initial + noise, each optimizer its own coupling beta
    initial = ds["weight_norm"].isel(epoch=0)
    beta = xr.DataArray([draw(st.sampled_from([0.0, 0.3, 1.0])) for _ in names], dims="optimizer",
                        coords={"optimizer": names})  # fmt: skip
    jitter = xr.DataArray(rng.normal(0.0, draw(st.sampled_from([0.01, 0.1])), initial.shape), dims=initial.dims,
                          coords=initial.coords)  # fmt: skip
    final = np.exp(beta * np.log(initial) + (1 - beta) * np.log(20.0) + jitter)
    frac = xr.DataArray(ds["epoch"].values / ds["epoch"].values[-1], dims="epoch", coords={"epoch": ds["epoch"]})
    _set(ds, "weight_norm", initial + (final - initial) * frac)
    if damage:
        _damage(draw, ds, ("optimizer", "sigma_w", "seed"))
    pair = ({"optimizer": "sgd"}, {"optimizer": others[0]})
    row = f"C2 {label(others[0])}" if claim == "C2" else claim
    return Design(claim, ds, pair if claim != "C1" else (), {"optimizer": "sgd"}, row)


@st.composite
def long_training_designs(draw, damage: bool = True) -> Design:
    """02_long_training: one SGD cell, horizons 2 and 10 epochs; the memory at each (the curves' test accuracy)."""
    sigmas, seeds = draw(sigma_grids), draw(seed_lists)
    ds = fake_sweep({"sigma_w": sigmas, "seed": seeds})
    ds.attrs.update(horizons=json.dumps([2, 10]), reference_horizon=2)
    ds["train_acc"].loc[{"epoch": slice(2, None)}] = 100.0
    ds["val_loss"] = ds["val_loss"] * 0 + 3.0 - ds["epoch"] / 10  # the last epoch within a horizon is the best
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    early, late = draw(memories), draw(memories)
    noise = draw(noises)
    memory = xr.DataArray(np.where(ds["epoch"].values <= 2, early, late), dims="epoch", coords={"epoch": ds["epoch"]})
    mean = (60.0 - _profile(ds) * memory).broadcast_like(ds["test_acc"]).transpose(*ds["test_acc"].dims)
    ds["test_acc"] = mean.copy(data=on_grid(mean.values + rng.normal(0.0, noise, mean.shape)))
    ds["val_acc"] = ds["test_acc"] + 1.0
    if draw(st.booleans()):  # validation selects the same checkpoint at both horizons: the selected row's premise
        ds["val_loss"] = ds["val_loss"] * 0 + 3.0 + (ds["epoch"] - 2) ** 2 / 10
    if damage:
        _damage(draw, ds, ("sigma_w", "seed"))
    return Design("C3", ds)


@st.composite
def lr_l2_designs(draw, damage: bool = True) -> Design:
    """03_lr_and_l2: lr {0.02, 0.1} x L2 {0, 0.01}, a memory per cell; the L2 clock short or long (C4's premise)."""
    sigmas, seeds = draw(sigma_grids), draw(seed_lists)
    ds = fake_sweep({"lr": [0.02, 0.1], "weight_decay": [0.0, 0.01], "sigma_w": sigmas, "seed": seeds})
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    memory = xr.DataArray(
        [[draw(memories) for _ in range(2)] for _ in range(2)],
        dims=("lr", "weight_decay"),
        coords={"lr": [0.02, 0.1], "weight_decay": [0.0, 0.01]},
    )
    _fill_accuracies(ds, memory, draw(noises), rng)
    _interpolation(draw, ds, ("lr", "weight_decay", "sigma_w", "seed"))
    _set(ds, "final_T_L2", ds["weight_decay"] * draw(st.sampled_from([50.0, 250.0])))
    if damage:
        _damage(draw, ds, ("lr", "weight_decay", "sigma_w", "seed"))
    keep, larger = {"lr": 0.02, "weight_decay": 0.0}, {"lr": 0.1, "weight_decay": 0.0}
    return Design("C4", ds, (keep, larger), keep, "C4 larger lr")


@st.composite
def batch_designs(draw, damage: bool = True) -> Design:
    """04_batch_size: batch sizes 16, 64, 256 zipped with their epochs at equal steps; a memory per batch size."""
    sigmas, seeds = draw(sigma_grids), draw(seed_lists)
    ds = fake_sweep({"sigma_w": sigmas, "seed": seeds}, {"batch_size": [16, 64, 256], "epochs": [2, 8, 32]})
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    memory = xr.DataArray([draw(memories) for _ in range(3)], dims="batch_size", coords={"batch_size": [16, 64, 256]})
    _fill_accuracies(ds, memory, draw(noises), rng)
    ds["final_train_acc"][:] = 100.0
    if damage:
        _damage(draw, ds, ("batch_size", "sigma_w", "seed"), diverged=0)
    # equal steps: the widest ratio, b = 16 against b = 256 (the row is the larger's memory minus the smaller's)
    return Design("C5", ds, ({"batch_size": 256}, {"batch_size": 16}), {}, "C5 equal steps")


@st.composite
def depth_designs(draw, damage: bool = True) -> Design:
    """05_depth: ResNet-9 and ResNet-56; the deep net's final train accuracy falls short by a gap growing over sigma_w
    (an interaction) or not; ResNet-9 sometimes fails to interpolate somewhere (C6's premise)."""
    sigmas, seeds = draw(sigma_grids), draw(seed_lists)
    ds = fake_sweep({"sigma_w": sigmas, "seed": seeds}, {"model": ["resnet9", "resnet56"]})
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    shortfall = xr.DataArray([0.0, draw(memories)], dims="model", coords={"model": ["resnet9", "resnet56"]})
    flat = xr.DataArray(
        [0.0, draw(st.sampled_from([0.0, 5.0]))], dims="model", coords={"model": ["resnet9", "resnet56"]}
    )
    mean = (100.0 - flat - _profile(ds) * shortfall).broadcast_like(ds["final_train_acc"])
    noisy = on_grid(mean.values - np.abs(rng.normal(0.0, draw(noises), mean.shape)))
    ds["final_train_acc"] = mean.copy(data=np.clip(noisy, 0.0, 100.0)).transpose(*ds["final_train_acc"].dims)
    ds["final_train_acc"].loc[{"model": "resnet9"}] = 100.0
    if draw(st.integers(0, 4)) == 0:
        (at,) = _points(draw, ds, ("sigma_w", "seed"), 1)
        ds["final_train_acc"].loc[{"model": "resnet9", **at}] = 99.0
    if damage:
        _damage(draw, ds, ("model", "sigma_w", "seed"))
    return Design("C6", ds, ({"model": "resnet9"}, {"model": "resnet56"}), {}, "C6")


@st.composite
def phase_designs(draw) -> Design:
    """10_phase_diagram (B1): a gap logistic in x with a drawn midpoint, height and noise (3 seeds, 3 x 3 cells)."""
    ds = fake_phase(
        midpoint=draw(st.sampled_from([-1.0, 0.0, 0.2, 1.0])),
        height=draw(st.sampled_from([3.0, 20.0])),
        width=draw(st.sampled_from([0.1, 0.3])),
        noise=draw(st.sampled_from([0.3, 3.0])),
        lrs=(0.02, 0.045, 0.1),
        weight_decays=(0.0, 0.005, 0.02),
    )
    return Design("B1", ds)


def designs(claim: str, damage: bool = True) -> st.SearchStrategy[Design]:
    """A design of ``claim``'s experiment (see the module docstring); ``damage``: with diverged and missing runs."""
    if claim in ("C1", "C2", "C7"):
        return optimizer_designs(claim, damage)
    return {
        "C3": long_training_designs(damage),
        "C4": lr_l2_designs(damage),
        "C5": batch_designs(damage),
        "C6": depth_designs(damage),
        "B1": phase_designs(),
    }[claim]
