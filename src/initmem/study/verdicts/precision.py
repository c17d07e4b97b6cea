"""bf16 on the CPU against the fp32 record: does reduced precision keep the spreads and the verdicts?

The parity study of chapter 01 ("In bf16"), which states its declared design and rules: chapter 01's cpu SGD and
Adam (:data:`PARITY_OPTIMIZERS`) at the sigma_w :data:`PARITY_SIGMA_WS`, the record's seeds, ``bf16 = True``
(:func:`parity_spec`), against the record's fp32 runs of the same configurations.

* :func:`parity_verdict` -- per optimizer, the per-seed difference of the cross-fitted selected spread (bf16 minus
  fp32, pp) with the ledger's calibrated interval of a contrast: equivalent inside +-:data:`PARITY_MARGIN_PP`, not
  equivalent wholly outside, else inconclusive;
* :func:`parity_claims` -- whether the claims the design can decide keep their verdicts (C2 for Adam; C1's null
  cannot reach p < 0.05 on this design, :func:`smallest_p`);
* :func:`parity_outcome` -- the study's verdict: in parity, not in parity, or parity not established.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import xarray as xr

from ...base.numbers import p_text
from ..costs.results import run_experiment
from ..design.layout import results_paths
from ..design.registry import experiment_spec
from ..experiments import judged_by
from ..statistics.calibration import CrossFitted
from ..statistics.nulls import contrast_null_floor, spread_null_floor
from ..statistics.stats import Interval
from . import rules
from .ledger import cross_fitted, interval_of

__all__ = [
    "PARITY_MARGIN_PP",
    "PARITY_OPTIMIZERS",
    "PARITY_SIGMA_WS",
    "PARITY_PRESET",
    "PARITY_NAME",
    "PARITY_RUNS",
    "REPLAY_NAME",
    "EQUIVALENT",
    "NOT_EQUIVALENT",
    "INCONCLUSIVE",
    "IN_PARITY",
    "NOT_IN_PARITY",
    "NOT_ESTABLISHED",
    "parity_spec",
    "parity_verdict",
    "parity_rows",
    "smallest_p",
    "parity_claims",
    "parity_outcome",
    "claims_frame",
    "speedup",
    "bf16_results",
    "replay_spec",
    "replay_results",
    "parity_frame",
]

#: The equivalence margin of the bf16 - fp32 spread difference (pp), declared before the runs.
PARITY_MARGIN_PP = rules.MARGIN_PP
#: The optimizers of the parity study (chapter 01's names).
PARITY_OPTIMIZERS = ("sgd", "adam")
#: The initialization scales of the parity study (the ends of chapter 01's cpu grid).
PARITY_SIGMA_WS = (0.1, 2.5)

#: The preset whose record holds the parity study's runs, and the study's name in that record
#: (``results/<preset>/<name>/runs/``, combined in ``results/<preset>/<name>.nc``).
PARITY_PRESET = "cpu"
#: The number of bf16 runs of the design (optimizers x sigma_w x the record's five seeds).
PARITY_RUNS = len(PARITY_OPTIMIZERS) * len(PARITY_SIGMA_WS) * 5
PARITY_NAME = "bf16_parity"
#: The name of the fp32 replay beside the study (:func:`replay_spec`) in the record.
REPLAY_NAME = "fp32_replay"

EQUIVALENT = "equivalent"
NOT_EQUIVALENT = "not equivalent"
INCONCLUSIVE = "inconclusive"
#: The study's three verdicts (:func:`parity_outcome`).
IN_PARITY, NOT_IN_PARITY, NOT_ESTABLISHED = "in parity", "not in parity", "parity not established"


def parity_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Chapter 01's sweep spec (``base``, ``grid``, ``zip``: :func:`initmem.study.design.registry.experiment_spec`) cut to
    the parity design: bf16 autocast on, sigma_w :data:`PARITY_SIGMA_WS`, optimizers :data:`PARITY_OPTIMIZERS` with
    their own zipped settings. Raises ValueError when the spec lacks one of them."""
    out = copy.deepcopy(spec)
    out["base"]["bf16"] = True
    missing = [s for s in PARITY_SIGMA_WS if s not in out["grid"].get("sigma_w", [])]
    zipped = out.get("zip", {})
    names = list(zipped.get("optimizer", []))
    missing += [o for o in PARITY_OPTIMIZERS if o not in names]
    if missing:
        raise ValueError(
            f"spec: the parity design needs sigma_w {PARITY_SIGMA_WS} and {PARITY_OPTIMIZERS}; missing {missing}"
        )
    out["grid"]["sigma_w"] = list(PARITY_SIGMA_WS)
    keep = [names.index(o) for o in PARITY_OPTIMIZERS]
    out["zip"] = {key: [values[i] for i in keep] for key, values in zipped.items()}
    return out


def parity_verdict(difference: Interval, margin: float = PARITY_MARGIN_PP) -> str:
    """The declared rule on the bf16 - fp32 difference's interval (pp): equivalent, not equivalent or inconclusive."""
    if not difference.has_bounds:
        return INCONCLUSIVE
    if -margin < difference.low and difference.high < margin:
        return EQUIVALENT
    if difference.low >= margin or difference.high <= -margin:
        return NOT_EQUIVALENT
    return INCONCLUSIVE


def parity_rows(fp32: xr.Dataset, bf16: xr.Dataset) -> list[dict[str, Any]]:
    """One row per optimizer of :data:`PARITY_OPTIMIZERS`: the fp32 and bf16 cross-fitted selected spreads, the
    per-seed difference (bf16 - fp32) with its interval, and :func:`parity_verdict`.

    ``fp32`` and ``bf16`` are combined sweeps (dims ``optimizer``, ``sigma_w``, ``seed``); ``fp32`` may hold more
    (the record's four sigma_w): it is cut to the parity design's coordinates. Seeds pair by their coordinate.
    """
    rows = []
    for optimizer in PARITY_OPTIMIZERS:
        parts = [_design(ds, bf16["seed"].values).sel(optimizer=optimizer) for ds in (fp32, bf16)]
        spreads = [cross_fitted(part) for part in parts]
        estimator = CrossFitted(len(PARITY_SIGMA_WS), "contrast")
        difference = interval_of(spreads[1] - spreads[0], estimator)
        rows.append(
            {
                "optimizer": optimizer,
                "fp32": interval_of(spreads[0], estimator.spread()),
                "bf16": interval_of(spreads[1], estimator.spread()),
                "difference": difference,
                "verdict": parity_verdict(difference),
            }
        )
    return rows


def _design(ds: xr.Dataset, seeds: Any) -> xr.Dataset:
    """``ds`` cut to the parity design's optimizers, sigma_w and ``seeds``."""
    return ds.sel(optimizer=list(PARITY_OPTIMIZERS), sigma_w=list(PARITY_SIGMA_WS), seed=seeds)


def smallest_p(claim: str, n_seeds: int) -> float:
    """The smallest permutation p that ``claim``'s null (C1: sigma_w permuted within seeds; C2: the two optimizers
    swapped within (sigma_w, seed) cells, :mod:`initmem.study.statistics.nulls`) can give on the parity design with ``n_seeds``
    complete seeds.

    >>> smallest_p("C1", 5), smallest_p("C2", 5)
    (0.0625, 0.0009765625)
    """
    cells = len(PARITY_SIGMA_WS)
    return spread_null_floor(cells, n_seeds) if claim == "C1" else contrast_null_floor(cells * n_seeds)


def parity_claims(fp32: xr.Dataset, bf16: xr.Dataset) -> list[dict[str, Any]]:
    """The claims the parity design touches (C1; C2 for its adaptive optimizer), judged by
    :data:`initmem.study.verdicts.judges.RULES` in each precision on the design's runs: one dict per ledger row with ``row``
    (its key, e.g. ``"C2 Adam"``), ``fp32`` and ``bf16`` (the verdicts), ``smallest_p`` (:func:`smallest_p` at
    bf16's seeds) and ``decidable``: whether that p lies below :data:`initmem.study.verdicts.rules.ALPHA`, so that the claim's
    verdict can be anything but inconclusive and keeping it means something."""
    from .judges import RULES as judge

    seeds = bf16["seed"].values
    out = []
    for claim in ("C1", "C2"):
        floor = smallest_p(claim, len(seeds))
        verdicts = [{row.key: str(row.verdict) for row in judge[claim](_design(ds, seeds))} for ds in (fp32, bf16)]
        out += [
            {
                "row": key,
                "fp32": verdict,
                "bf16": verdicts[1].get(key, ""),
                "smallest_p": floor,
                "decidable": floor < rules.ALPHA,
            }
            for key, verdict in verdicts[0].items()
        ]
    return out


def parity_outcome(rows: list[dict[str, Any]], claims: list[dict[str, Any]]) -> tuple[str, str]:
    """The study's verdict (:data:`IN_PARITY`, :data:`NOT_IN_PARITY` or :data:`NOT_ESTABLISHED`, by the rule of the
    module docstring) from :func:`parity_rows` and :func:`parity_claims`, with the reason: what failed or was not
    decided, each optimizer's difference and each decidable claim's verdicts named."""
    apart = [r for r in rows if r["verdict"] == NOT_EQUIVALENT]
    undecided = [r for r in rows if r["verdict"] == INCONCLUSIVE]
    moved = [c for c in claims if c["decidable"] and c["fp32"] != c["bf16"]]
    margin = f"±{PARITY_MARGIN_PP:g} pp"
    difference = lambda r: f"{r['optimizer']}'s difference {r['difference'].brief()} pp"  # noqa: E731
    if apart:
        return NOT_IN_PARITY, "; ".join(f"{difference(r)} lies wholly outside {margin}" for r in apart)
    if not undecided and not moved:
        return IN_PARITY, f"every difference lies inside {margin} and every claim that can be decided keeps its verdict"
    why = [f"{difference(r)} reaches past {margin} (inconclusive)" for r in undecided]
    why += [f"{c['row']} is {c['fp32']} in fp32 and {c['bf16']} in bf16" for c in moved]
    return NOT_ESTABLISHED, "; ".join(why)


def speedup(fp32: xr.Dataset, bf16: xr.Dataset) -> float:
    """The median over matched runs (the same optimizer, sigma_w and seed, those both hold) of fp32 wall time / bf16
    wall time."""
    coords = {
        name: [v for v in bf16[name].values if v in fp32[name].values] for name in ("optimizer", "sigma_w", "seed")
    }
    ratio = fp32["wall_time_s"].sel(coords) / bf16["wall_time_s"].sel(coords)
    return float(np.nanmedian(ratio.values))


def replay_spec(parity: dict[str, Any]) -> dict[str, Any]:
    """The fp32 replay beside the study: the first sigma_w and seed of the ``parity`` spec (:func:`parity_spec`)
    for each optimizer, in fp32: configurations of the record, trained again by the study's commit on the study's
    CPU, which tell whether that path is the record's (a bit-for-bit replay) and time fp32 beside bf16 there."""
    out = copy.deepcopy(parity)
    out["base"]["bf16"] = False
    out["grid"].update(sigma_w=[PARITY_SIGMA_WS[0]], seed=[out["grid"]["seed"][0]])
    return out


def replay_results(results_dir: Any, preset: str, parameters: dict[str, Any]) -> xr.Dataset | None:
    """The fp32 replay's runs (:func:`replay_spec`) combined, as :func:`bf16_results` (None where there are none)."""
    return _study_results(REPLAY_NAME, results_dir, preset, parameters)


def bf16_results(results_dir: Any, preset: str, parameters: dict[str, Any]) -> xr.Dataset | None:
    """The parity study's bf16 runs for chapter 01 at ``parameters`` (its complete parameters), combined (and the
    combined file written, as every experiment's), or None where the record holds none: at another preset than
    :data:`PARITY_PRESET`, or in a results folder without the study's runs (an exploration). Never trains: a run of
    the design missing from the folder raises :class:`initmem.study.costs.results.TrainingRefused`, naming it."""
    return _study_results(PARITY_NAME, results_dir, preset, parameters)


def _study_results(name: str, results_dir: Any, preset: str, parameters: dict[str, Any]) -> xr.Dataset | None:
    """The runs of the study's part ``name`` (:data:`PARITY_NAME` or :data:`REPLAY_NAME`) at chapter 01's
    ``parameters``, combined without training; None at another preset or without its runs."""
    runs_dir, _ = results_paths(results_dir, preset, name)
    if preset != PARITY_PRESET or not runs_dir.is_dir():
        return None
    spec = parity_spec(experiment_spec(judged_by("C1"), parameters))
    spec = replay_spec(spec) if name == REPLAY_NAME else spec
    return run_experiment(name, spec, preset=preset, results_dir=results_dir, train_missing=False)


def parity_frame(rows: list[dict[str, Any]]) -> Any:
    """:func:`parity_rows` as a table for a page (a pandas DataFrame indexed by optimizer): each precision's
    cross-fitted spread and the paired difference, each with its interval, and the verdict of the declared rule."""
    import pandas as pd

    return pd.DataFrame(
        {
            "fp32 spread (pp)": [r["fp32"].brief() for r in rows],
            "bf16 spread (pp)": [r["bf16"].brief() for r in rows],
            "bf16 − fp32 (pp)": [r["difference"].brief() for r in rows],
            f"within ±{PARITY_MARGIN_PP:g} pp": [r["verdict"] for r in rows],
        },
        index=pd.Index([r["optimizer"] for r in rows], name="optimizer"),
    )


def claims_frame(claims: list[dict[str, Any]]) -> Any:
    """:func:`parity_claims` as a table for a page (a pandas DataFrame indexed by ledger row): each precision's
    verdict, the smallest p the claim's null can give on the design and whether the claim is part of the rule."""
    import pandas as pd

    return pd.DataFrame(
        {
            "fp32": [c["fp32"] for c in claims],
            "bf16": [c["bf16"] for c in claims],
            "smallest p on the design": [p_text(c["smallest_p"]) for c in claims],
            "in the rule": ["yes" if c["decidable"] else f"no: p cannot reach below {rules.ALPHA:g}" for c in claims],
        },
        index=pd.Index([c["row"] for c in claims], name="claim"),
    )
