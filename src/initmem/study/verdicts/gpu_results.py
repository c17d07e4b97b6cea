"""The scale ladder's GPU rung (preset ``gpu``): reading it, and the ledger's column for it.

``benchmarks/gpu_oneshot.py`` trains one rung of chapter 11's ladder that a CPU cannot reach on one GPU within a time
budget, in the layout of every preset::

    results/gpu/<EXPERIMENT>/runs/<hash>[.stacked<K>].nc   one run file per finished run (each with its hardware)
    results/gpu/<EXPERIMENT>.nc                            the combined Dataset of the conditions that finished
    results/gpu/oneshot.json                                  throughput, parity, trainer, plan, per-run status
    results/gpu/summary.txt                                   the one-page summary the script printed

This module reads that folder; it trains nothing. The column reads the rung as chapter 11 reads a rung
(:func:`initmem.study.verdicts.ladder.rungs`): per condition, the spread on its carrying predictor (pp, calibrated interval)
and where it lies against the paper's band.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import xarray as xr

from ...base.numbers import decimal
from ..costs.results import load_results, run_attributes
from ..design.layout import results_paths
from ..experiments.e11_scale_ladder import EXPERIMENT as _LADDER
from . import ladder
from .preregistration import RuleStatus, declared

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "GPU_PRESET",
    "EXPERIMENT",
    "MANIFEST",
    "SUMMARY",
    "COLUMN",
    "load_rung",
    "load_manifest",
    "rung_scale",
    "rung_declaration",
    "ledger_column",
]

#: The preset of these results (``results/<GPU_PRESET>/``).
GPU_PRESET = "gpu"
#: The experiment the one-shot script trains a rung of: chapter 11's ladder.
EXPERIMENT = _LADDER.name
#: The script's record of the session (throughput, parity, trainer, plan, per-run status), JSON.
MANIFEST = "oneshot.json"
#: The one-page summary, as printed.
SUMMARY = "summary.txt"
#: The ledger column's name.
COLUMN = "the ladder's GPU rung"


def load_rung(results_dir: str | os.PathLike = "results") -> xr.Dataset | None:
    """The combined Dataset of the ladder's GPU rung under ``results_dir`` (its checksum verified,
    :func:`initmem.study.costs.results.load_results`); None if there is none."""
    return load_results(results_dir, GPU_PRESET, [EXPERIMENT]).get(EXPERIMENT)


def load_manifest(results_dir: str | os.PathLike = "results") -> dict[str, Any]:
    """``<results_dir>/gpu/oneshot.json`` as a dict ({} if absent or unreadable)."""
    path = results_paths(results_dir, GPU_PRESET, EXPERIMENT)[1].parent / MANIFEST
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def rung_scale(ds: xr.Dataset, climbed: Sequence[ladder.Rung]) -> str:
    """The rung in one line: ``"width 64, 45,000 images, 72 epochs, 5 seeds, NVIDIA H200"`` (its hardware as its
    runs record it; the run's status where it stopped early); ``climbed`` is ``ladder.rungs(ds)``."""
    if not climbed:
        return "no condition finished"
    first = climbed[0]
    parts = [
        f"width {first.width}",
        f"{first.train_size:,} images",
        f"{first.epochs} epochs",
        f"{ds.sizes.get('seed', 1)} seeds",
        str(ds.attrs.get("hardware", "hardware not recorded")),
    ]
    if ds.attrs.get("sweep_status", "complete") != "complete":
        parts.append(f"run {ds.attrs['sweep_status']}")
    return ", ".join(parts)


def rung_declaration(results_dir: str | os.PathLike, ds: xr.Dataset) -> RuleStatus:
    """The GPU rung's design against its runs: the commit that declared ``results_dir/gpu/11_scale_ladder/design.json``
    (``benchmarks/gpu_oneshot.py --declare``) and the creation times of the runs ``ds`` holds
    (:class:`initmem.study.verdicts.preregistration.RuleStatus`; its ``text()`` is what the ledger prints)."""
    folder = results_paths(results_dir, GPU_PRESET, EXPERIMENT)[1].parent / EXPERIMENT
    design = folder / "design.json"
    runs = run_attributes(ds, folder / "runs") if "run_hash" in ds else ()
    created = tuple(sorted(str(a.get("created", "")) for _, a in runs))
    declaration = declared(design) if design.is_file() else None
    return RuleStatus("GPU rung", declaration, True, created, EXPERIMENT)


def ledger_column(climbed: Sequence[ladder.Rung]) -> pd.Series:
    """The ledger's :data:`COLUMN` from the GPU rung's conditions (``ladder.rungs`` of :func:`load_rung`): for each
    ladder condition's ledger row (``"C1"``, ``"C2 Adam"``, ``"C4 larger lr"``), its spread on the carrying predictor
    with the calibrated interval and its reading against the band (pandas Series indexed by the row)."""
    import pandas as pd

    texts = {}
    for rung in climbed:
        s = rung.spread
        texts[ladder.CONDITIONS[rung.condition].row] = (
            f"{decimal(s.estimate)} pp [{decimal(s.low)}, {decimal(s.high)}] on the {rung.predictor} predictor, "
            f"{rung.size}"
        )
    return pd.Series(texts, name=COLUMN, dtype=object)
