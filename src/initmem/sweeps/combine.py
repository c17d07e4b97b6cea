"""Combining runs: the per-run Datasets of a sweep -> one Dataset with a dimension per swept field.

Sweep dims come first (grid fields, then the zip dimension), followed by the per-run dims ``epoch`` and
``layer``; runs with other epochs or layers (depth sweeps) are NaN-filled to the union of both. Every variable
of :func:`initmem.run.training.train` is kept (NaN after a divergence, ``diverged`` = 1), except that the
per-epoch learning rate ``lr`` is called ``scheduled_lr`` here, because ``lr`` is the name of the swept
learning-rate coordinate; ``run_hash`` is the run's cache key. Attributes: ``spec`` (JSON), ``git_commit``,
``initmem_version``, ``torch_version``, ``hardware``, ``device``, ``data_source``, ``run_git_commit`` (the commit
that trained the runs) and the hardware facts of :data:`HARDWARE_ATTRS` (the distinct values over the runs). Combining runs of different device types is refused: they follow different floating-point paths.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from ..base.paths import git_commit
from ..base.version import __version__
from .spec import SweepSpec

__all__ = ["RENAMED_VARIABLES", "NUMERICS_ATTRS", "combine_runs"]

log = logging.getLogger(__name__)

#: Run variables renamed in a sweep Dataset because their name is a RunConfig field (a sweep coordinate).
RENAMED_VARIABLES = {"lr": "scheduled_lr"}


def combine_runs(spec: SweepSpec, runs: Sequence[xr.Dataset]) -> xr.Dataset:
    """One Dataset from the per-run Datasets of ``spec.configs()`` (same order).

    Sweep dims (:attr:`SweepSpec.dims`) come first, then ``epoch`` (the sorted union over the runs) and
    ``layer`` (the union, each run's order kept); whatever a run lacks is NaN, as is a point of the sweep's shape that
    none of its grids holds (``run_hash`` ""). Variables are float64,
    except ``run_hash``. Zipped fields other than the first are coordinates along the zip dimension.
    """
    points = spec.configs()
    if len(runs) != len(points):
        raise ValueError(f"runs: expected {len(points)} datasets (one per sweep point), got {len(runs)}")
    dims, shape = spec.dims, spec.shape
    epochs = np.array(sorted({int(e) for ds in runs for e in ds["epoch"].values}))
    layers = _merge_ordered([list(map(str, ds["layer"].values)) for ds in runs if "layer" in ds.coords])
    run_dims = {"epoch": epochs, "layer": np.array(layers, dtype=str)}

    names: dict[str, tuple[str, ...]] = {}
    var_attrs: dict[str, dict] = {}
    for ds in runs:
        for name, var in ds.data_vars.items():
            names.setdefault(name, var.dims)
            var_attrs.setdefault(name, dict(var.attrs))
    arrays = {name: np.full(shape + tuple(len(run_dims[d]) for d in vdims), np.nan) for name, vdims in names.items()}
    hashes = np.empty(shape, dtype=object)
    hashes[...] = ""  # a point of the union of ``also``'s grids that no grid holds
    for (coords, config), ds in zip(points, runs):
        index = spec.index(coords)
        aligned = ds.reindex({d: run_dims[d] for d in ds.dims if d in run_dims})
        for name, vdims in names.items():
            if name in aligned:
                arrays[name][index] = aligned[name].transpose(*vdims).values
        hashes[index] = ds.attrs.get("config_hash", config.hash())

    coords: dict[str, Any] = {dim: _coordinate(spec, dim) for dim in dims}
    if spec.zip:
        zip_dim = dims[-1]
        coords.update({name: (zip_dim, _coordinate(spec, name)) for name in list(spec.zip)[1:]})
    coords.update(run_dims)
    rename = {name: RENAMED_VARIABLES.get(name, name) for name in names}
    for name, new in rename.items():
        if new in coords:
            rename[name] = f"{new}_run"
            log.warning("run variable %r is also a sweep coordinate; it is called %r in the sweep", new, rename[name])
    variables = {rename[name]: ((*dims, *vdims), arrays[name], var_attrs[name]) for name, vdims in names.items()}
    variables["run_hash"] = (tuple(dims), hashes.astype(str), {"description": "cache key: <cache_dir>/<run_hash>.nc"})
    combined = xr.Dataset(variables, coords=coords)
    combined.attrs.update(_provenance(spec, runs))
    return combined


def _coordinate(spec: SweepSpec, name: str) -> np.ndarray:
    values = spec.coordinate(name)
    return np.array(values, dtype=str) if all(isinstance(v, str) for v in values) else np.array(values)


def _merge_ordered(lists: Sequence[Sequence[str]]) -> list[str]:
    """The union of ``lists``, each new name placed right after its predecessor in its own list."""
    merged: list[str] = []
    seen: set[str] = set()
    for names in lists:
        previous = None
        for name in names:
            if name not in seen:
                merged.insert(merged.index(previous) + 1 if previous is not None else 0, name)
                seen.add(name)
            previous = name
    return merged


def _distinct(runs: Sequence[xr.Dataset], attr: str) -> str:
    """The distinct values of a run attribute: the value itself if there is one, else a JSON list."""
    values = list(dict.fromkeys(str(ds.attrs.get(attr, "")) for ds in runs))
    return values[0] if len(values) == 1 else json.dumps(values)


#: Run attributes recording a floating-point path that neither the hash nor the file name covers; one sweep may
#: not mix them (stacked runs have files of their own, see :func:`run_path`).
NUMERICS_ATTRS = ("device_type",)
#: The runs' recorded hardware facts (:func:`initmem.run.records.hardware_facts`) kept, as distinct values, on the
#: combined Dataset.
HARDWARE_ATTRS = ("cpu_model", "cpu_capability", "machine", "onednn_version", "mkl_version", "gpu_model")


def _numerics(ds: xr.Dataset) -> dict[str, str]:
    return {"device_type": str(ds.attrs.get("device", "")).split(":")[0]}


def _provenance(spec: SweepSpec, runs: Sequence[xr.Dataset]) -> dict[str, Any]:
    for name in NUMERICS_ATTRS:
        values = sorted({_numerics(ds)[name] for ds in runs})
        if len(values) > 1:
            raise ValueError(
                f"runs: one sweep may not mix runs with different {name} ({', '.join(values)}): they follow "
                "different floating-point paths; combine them in separate sweeps"
            )

    return {
        "spec": spec.to_json(),
        "initmem_version": __version__,
        "git_commit": git_commit(),
        "torch_version": _distinct(runs, "torch_version"),
        "python_version": sys.version.split()[0],
        "hardware": _distinct(runs, "hardware"),
        "device": _distinct(runs, "device"),
        "data_source": _distinct(runs, "data_source"),
        "run_git_commit": _distinct(runs, "git_commit"),
        **{key: _distinct(runs, key) for key in HARDWARE_ATTRS if any(key in ds.attrs for ds in runs)},
    }
