"""Pre-registered designs: a study's design and its rules, written as a record and committed before its first run.

A design record is a JSON file (read with :func:`json.load`: no code runs on reading it) holding what the study
trains (rungs, conditions, sigma_w, seeds, epochs), what it judges (the predictor, the premise, the reading rule,
the smallest shift it must see) and what it expects before any run: the power of its rule at the record's measured
noise (:func:`shift_power`) and its cost by the package's cost model. Its declaration is the commit that added the
record's content (:func:`declared`): a run trained before that commit cannot have been judged by a rule declared in
advance, and a page flags such a run in words (:func:`undeclared_runs`).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..statistics.calibration import critical

__all__ = ["ShiftPower", "shift_power", "read_design", "Declaration", "declared", "undeclared_runs"]


@dataclass(frozen=True)
class ShiftPower:
    """What a paired shift between two rungs of ``n_seeds`` seeds can see, with per-seed cross-fitted spreads of
    standard deviation ``sd`` (pp) on each rung: the calibrated contrast interval's expected half-width (pp), the
    probability that the printed interval is at most ``2 * max_half_width`` pp wide, and the probability that it lies
    wholly above 0 when the true shift is ``shift`` (pp)."""

    n_seeds: int
    sd: float
    critical: float
    expected_half_width: float
    max_half_width: float
    p_narrow: float
    shift: float
    power: float

    def to_dict(self) -> dict[str, float]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def shift_power(
    sd: float,
    n_seeds: int,
    n_sigma: int = 2,
    shift: float = 5.0,
    max_half_width: float = 5.0,
    reps: int = 20_000,
    seed: int = 0,
) -> ShiftPower:
    """Simulate the calibrated contrast interval (:func:`initmem.study.statistics.calibration.critical`, kind ``"contrast"``) of
    a shift between two rungs whose per-seed spreads are independent Gaussians of standard deviation ``sd`` (pp): the
    per-seed difference has standard deviation ``sd * sqrt(2)``."""
    c = critical("contrast", n_sigma, n_seeds).high
    rng = np.random.default_rng(seed)
    diffs = rng.normal(shift, sd * math.sqrt(2.0), size=(reps, n_seeds))
    mean, s = diffs.mean(axis=1), diffs.std(axis=1, ddof=1)
    half = c * s / math.sqrt(n_seeds)
    return ShiftPower(
        n_seeds=n_seeds,
        sd=float(sd),
        critical=float(c),
        expected_half_width=float(half.mean()),
        max_half_width=float(max_half_width),
        p_narrow=float((half <= max_half_width).mean()),
        shift=float(shift),
        power=float((mean - half > 0).mean()),
    )


def read_design(path: str | Path) -> dict[str, Any]:
    """A design record (JSON)."""
    return json.loads(Path(path).read_text())


@dataclass(frozen=True)
class Declaration:
    """The commit that declared a design record's present content, and its time (UTC)."""

    commit: str
    date: _dt.datetime


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


def declared(path: str | Path, root: str | Path | None = None) -> Declaration | None:
    """The oldest commit whose version of ``path`` is its present content (None: not committed as it is now, or
    no git history here)."""
    path = Path(path).resolve()
    root = Path(root) if root is not None else path.parent
    try:
        top = Path(_git(root, "rev-parse", "--show-toplevel"))
        rel = path.relative_to(top).as_posix()
        content = path.read_bytes()
        found = None
        for line in _git(top, "log", "--format=%H %cI", "--", rel).splitlines():
            commit, date = line.split(" ", 1)
            blob = subprocess.run(["git", "-C", str(top), "show", f"{commit}:{rel}"], capture_output=True, check=False)
            if blob.returncode != 0 or blob.stdout != content:
                break
            found = Declaration(commit, _dt.datetime.fromisoformat(date))
        return found
    except (subprocess.CalledProcessError, OSError, ValueError):
        return None


def undeclared_runs(created: Iterable[str], declaration: Declaration | None) -> int:
    """How many runs (their ``created`` times, ISO 8601) are older than the declaration (all of them where there is
    none)."""
    times = [_dt.datetime.fromisoformat(t) for t in created]
    if declaration is None:
        return len(times)
    return sum(t < declaration.date for t in times)
