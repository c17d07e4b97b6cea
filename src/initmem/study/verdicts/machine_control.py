"""The scale ladder's machine control (chapter 11): which CPU trained which runs, and what a change of CPU alone does
to a run, measured on copies of first-rung runs re-trained on each other CPU model the ladder's runs record.

The copies are kept beside the ladder's runs as ``controls/<cpu folder>/<run hash>.nc`` (:func:`cpu_folder`), under
the hashes of the runs they copy. Which runs they are was declared as an amendment of the design before they were
trained (:data:`MACHINE_CONTROL_RULE`). The effect is printed beside the shifts; no shift is adjusted by it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from ...base.prose import in_words
from .carrier import PREDICTORS
from .ladder import CONDITIONS, as_ladder, condition_lrs
from .ledger import cross_fitted

#: The amendment that names the design's machine control (its ``machine`` rule: "two runs of the first rung are
#: re-trained on each" CPU type): which runs, where they are kept, what the page prints.
MACHINE_CONTROL = "machine_control"
#: The folder, beside the ladder's ``runs/``, of the control's copies: ``controls/<cpu folder>/<run hash>.nc``.
CONTROLS_DIR = "controls"
#: What the amendment :data:`MACHINE_CONTROL` declares (its record, committed beside the design record).
MACHINE_CONTROL_RULE = {
    "amends": "machine",
    "control": {"width": 8, "train_size": 5000, "epochs": 40, "seeds": [0], "conditions": ["sgd", "adam"]},
    "rule": "the machine control is four runs of the first rung (seed 0, low-lr SGD and Adam, both sigma_w: one "
    "seed's spread of each), re-trained from the design's commit on every CPU model the ladder's runs record other "
    "than the first rung's, into controls/<CPU model>/; beside the shifts the page prints, for each such CPU, every "
    "control run's change in test accuracy from the first rung's copy (final and selected predictor) and the change "
    "in each condition's seed-0 spread, and says which rungs and seeds each CPU trained; no shift is adjusted",
    "why": "rung 4's last 10 runs were trained on an AMD EPYC (AVX2), the ladder's other runs on an Intel Xeon "
    "(AVX-512); the design names two control runs without saying which, and two runs of one optimizer give the "
    "spread of one condition only",
}

Rung = tuple[int, int, int]


def cpu_folder(cpu_model: str) -> str:
    """A control folder's name for a CPU model: lower case, every run of other characters one ``-``
    (``"Intel(R) Xeon(R) Processor"`` -> ``"intel-r-xeon-r-processor"``)."""
    return re.sub(r"[^a-z0-9]+", "-", cpu_model.lower()).strip("-")


@dataclass(frozen=True)
class PlacedRun:
    """Where one run of a ladder sits (its rung, condition of :data:`~initmem.study.verdicts.ladder.CONDITIONS`,
    ``sigma_w`` and seed) and the CPU model its file records."""

    run_hash: str
    rung: Rung
    condition: str
    sigma_w: float
    seed: int
    cpu_model: str


def placed_runs(ds: xr.Dataset, cpu_models: Mapping[str, str]) -> list[PlacedRun]:
    """Every run of the ladder's combined Dataset ``ds`` whose hash ``cpu_models`` maps (run hash -> CPU model, as
    its file records it), with its place in ``ds``."""
    ds = as_ladder(ds)
    conditions = {lr: name for name, lr in condition_lrs(ds).items()}
    hashes = ds["run_hash"]
    out = []
    for index in np.ndindex(hashes.shape):
        value = hashes.values[index]
        if not (isinstance(value, str) and value in cpu_models):
            continue
        at = {d: ds[d].values[i] for d, i in zip(hashes.dims, index)}
        out.append(
            PlacedRun(
                value,
                (int(at["width"]), int(at["train_size"]), int(at["epochs"])),
                conditions[float(at["lr"])],
                float(at["sigma_w"]),
                int(at["seed"]),
                cpu_models[value],
            )
        )
    return out


def _ranges(values: Iterable[int]) -> str:
    """``[0, 1, 2, 4, 6, 7]`` -> ``"0 to 2, 4, 6 and 7"`` (three or more consecutive values as a range)."""
    runs: list[list[int]] = []
    for v in sorted(set(values)):
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return in_words(word for r in runs for word in ([f"{r[0]} to {r[-1]}"] if len(r) > 2 else map(str, r)))


def where_trained(runs: list[PlacedRun], rung_name: Mapping[Rung, str]) -> dict[str, str]:
    """Each CPU model -> which runs it trained, in words: every run of a rung it trained all of, else the seeds it
    trained whole (every sigma_w and condition) and the single ``(seed, sigma_w)`` points, in seed order
    (``"every run of width 8 on 5,000 images and width 16 on 5,000 images; seeds 0 to 4 and seed 5 at σ_w 0.1 of
    width 32 on 5,000 images"``).
    ``rung_name``: each rung's name, in the order to list them."""
    out = {}
    models = sorted({r.cpu_model for r in runs}, key=lambda m: -sum(r.cpu_model == m for r in runs))
    for model in models:
        said, whole_rungs = [], []
        for rung, name in rung_name.items():
            everyone = [r for r in runs if r.rung == rung]
            mine = [r for r in everyone if r.cpu_model == model]
            if not mine:
                continue
            if len(mine) == len(everyone):
                whole_rungs.append(name)
                continue
            seeds = sorted({r.seed for r in mine})
            whole = [s for s in seeds if all(r.cpu_model == model for r in everyone if r.seed == s)]
            points = sorted({(r.seed, r.sigma_w) for r in mine if r.seed not in whole})
            parts = ([(whole[0], f"seed{'s' if len(whole) > 1 else ''} {_ranges(whole)}")] if whole else []) + [
                (s, f"seed {s} at σ_w {v:g}") for s, v in points
            ]
            said.append(in_words(text for _, text in sorted(parts)) + f" of {name}")
        if whole_rungs:
            said.insert(0, f"every run of {in_words(whole_rungs)}")
        out[model] = "; ".join(said)
    return out


@dataclass(frozen=True)
class ControlRun:
    """One control copy: its condition, ``sigma_w`` and seed, and per predictor (``"selected"``, ``"final"``) its
    test accuracy minus that of the ladder's run it copies (pp; NaN where either diverged)."""

    condition: str
    sigma_w: float
    seed: int
    changes: Mapping[str, float]


@dataclass(frozen=True)
class MachineEffect:
    """The control on one CPU model: ``cpu_model`` (the copies'), ``reference`` (the CPU models of the runs they
    copy), ``runs`` and ``spread_changes``: ``(condition, seed, predictor)`` -> the change (pp) of that seed's
    cross-fitted spread on the first rung when its runs are replaced by their copies (the best and worst sigma_w are
    the other seeds', so the change is the copies' change at the best minus at the worst)."""

    cpu_model: str
    reference: tuple[str, ...]
    runs: tuple[ControlRun, ...]
    spread_changes: Mapping[tuple[str, int, str], float]


def machine_effects(
    ds: xr.Dataset, copies: Iterable[tuple[str, xr.Dataset]], runs: list[PlacedRun]
) -> list[MachineEffect]:
    """The control's effect per CPU model. ``ds``: the ladder's combined Dataset; ``copies``: (run hash, a control
    copy's run Dataset) (its ``cpu_model`` attribute, ``selected_test_acc``, ``final_test_acc``); ``runs``: the
    ladder's runs (:func:`placed_runs`), where each copy's original is looked up. A copy of no run of ``ds`` is left
    out."""
    ds = as_ladder(ds)
    lrs = condition_lrs(ds)
    original = {r.run_hash: r for r in runs}
    by_model: dict[str, list[tuple[PlacedRun, xr.Dataset]]] = {}
    for run_hash, copy in copies:
        if run_hash in original:
            by_model.setdefault(str(copy.attrs.get("cpu_model", "not recorded")), []).append((original[run_hash], copy))
    out = []
    for model, pairs in sorted(by_model.items()):
        control_runs, spread_changes = [], {}
        for placed, copy in sorted(pairs, key=lambda p: (p[0].condition, p[0].seed, p[0].sigma_w)):
            w, n, e = placed.rung
            cut = ds.sel(width=w, train_size=n, epochs=e, lr=lrs[placed.condition])
            at = {"sigma_w": placed.sigma_w, "seed": placed.seed}
            changes = {p: float(copy[f"{p}_test_acc"]) - float(cut[f"{p}_test_acc"].sel(at)) for p in PREDICTORS}
            control_runs.append(ControlRun(placed.condition, placed.sigma_w, placed.seed, changes))
        for condition, seed in sorted({(p.condition, p.seed) for p, _ in pairs}):
            mine = [(p, c) for p, c in pairs if (p.condition, p.seed) == (condition, seed)]
            w, n, e = mine[0][0].rung
            cut = ds.sel(width=w, train_size=n, epochs=e, lr=lrs[condition])
            if {p.sigma_w for p, _ in mine} != {float(v) for v in cut["sigma_w"].values}:
                continue  # a seed's spread needs every sigma_w's copy
            for predictor in PREDICTORS:
                var = f"{predictor}_test_acc"
                replaced = cut.copy(deep=True)
                for p, c in mine:
                    replaced[var].loc[{"sigma_w": p.sigma_w, "seed": seed}] = float(c[var])
                before, after = (float(cross_fitted(x, var).sel(seed=seed)) for x in (cut, replaced))
                spread_changes[(condition, seed, predictor)] = after - before
        reference = tuple(sorted({p.cpu_model for p, _ in pairs}))
        out.append(MachineEffect(model, reference, tuple(control_runs), spread_changes))
    return out


def read_copies(controls_dir: Path) -> list[tuple[str, xr.Dataset]]:
    """The control copies under ``controls_dir`` (``<cpu folder>/<run hash>.nc``): (run hash, run Dataset) each,
    read with their checksums verified (none where the folder is absent). The listings are noted
    (:func:`initmem.base.reads.listed`), so that a page reading them re-executes when a copy is added."""
    from ...base.reads import listed, note
    from ...sweeps.store import read_checked

    return [(path.stem, read_checked(note(path), require_checksum=True)) for path in listed(controls_dir, "*/*.nc")]


def effect_text(effects: list[MachineEffect], where: Mapping[str, str], first: Iterable[str]) -> str:
    """The page's lines on the machines: which CPU trained which runs (``where``, :func:`where_trained`), whether a
    control is due on a CPU model other than the first rung's (``first``) and, per control CPU, every copy's change
    and each seed spread's change on both predictors."""
    if len(where) <= 1:
        said = f"Every run was trained on one CPU model ({next(iter(where), 'not recorded')}): no machine effect "
        said += "enters the shifts. "
    else:
        said = f"The runs come from {len(where)} CPU models: " + "; ".join(f"{m} trained {r}" for m, r in where.items())
        said += ". "
    due = [m for m in where if m not in set(first) and m not in {e.cpu_model for e in effects}]
    if due:
        said += (
            f"The machine control ({MACHINE_CONTROL}) is not yet trained on {' or '.join(due)}: a shift between rungs "
            "of different CPUs cannot yet be told from the machine's own effect. "
        )
    for effect in effects:
        moves = ", ".join(
            f"{CONDITIONS[r.condition].label} at σ_w {r.sigma_w:g} "
            + " / ".join(f"{r.changes[p]:+.1f}" for p in PREDICTORS)
            for r in effect.runs
        )
        spreads = ", ".join(
            f"{CONDITIONS[c].label}'s (seed {s}) "
            + " / ".join(f"{effect.spread_changes[(c, s, p)]:+.1f}" for p in PREDICTORS)
            for c, s in dict.fromkeys((c, s) for c, s, _ in effect.spread_changes)
        )
        said += (
            f"Re-trained on {effect.cpu_model}, the machine control's {len(effect.runs)} runs of the first rung moved "
            f"in test accuracy from their copies on {', '.join(effect.reference)} by {moves} pp "
            f"({' / '.join(PREDICTORS)} predictor)"
            + (f", and the spread by {spreads} pp" if spreads else "")
            + ": a change of CPU alone moves a run this much, which a shift between rungs of different CPUs carries "
            "and its interval does not count. "
        )
    return said.strip()
