"""Calibrated 95 % intervals for cross-fitted spreads and their contrasts (issue 31).

Per-seed cross-fitted spreads (:func:`initmem.study.statistics.stats.cross_fitted_spreads`) are correlated across seeds and
pulled towards 0, so a Student-t interval over them covers too little. :class:`CrossFitted` gives
``[m - c_low s / sqrt(n), m + c_high s / sqrt(n)]`` (``m``, ``s``: mean and sd of the ``n`` per-seed values) with
critical values (:func:`critical`) simulated for the design: ``n_sigma`` sigma_w values x ``n_seeds`` seeds,
Gaussian cell noise, memory linear in the sigma_w index (:func:`initmem.study.verdicts.error_rates.profile`) at the ratios
:data:`RATIOS`; kind ``"spread"`` is asymmetric (wider above), kind ``"contrast"`` symmetric. The ledger's page
explains the method ("How a claim is judged") and how the values are simulated (its dropdown "How the critical
values are simulated").

The record's designs are committed in ``critical_values.json`` beside this module (``scripts/critical_values.py``,
with its provenance), read with its shape checked (:func:`initmem.base.package_data.read_package_json`). A design
not in the table is computed by :func:`simulate_critical` at :data:`ON_THE_FLY_REPS` replicates with the same seed,
once per process, with a warning.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ...base.numbers import ACCURACY_DIFFERENCE, SPREAD_DIFFERENCE
from ...base.package_data import finite_numbers, read_package_json
from .stats import LEVEL, Interval, _cross_fit

__all__ = [
    "KINDS",
    "LABEL",
    "RATIOS",
    "SEED",
    "ON_THE_FLY_REPS",
    "TABLE_PATH",
    "Critical",
    "CrossFitted",
    "simulate_critical",
    "read_table",
    "committed_table",
    "critical",
]

log = logging.getLogger(__name__)

#: The two kinds of per-seed quantity: one condition's cross-fitted spread, or the difference of two conditions'.
KINDS = ("spread", "contrast")
#: The estimator's name printed beside its intervals (:meth:`initmem.study.statistics.stats.Interval.format`).
LABEL = "calibrated t, cross-fitted"
#: Memory-to-noise ratios (the profile's spread in noise standard deviations) over which the critical values hold.
RATIOS = (*(i / 8 for i in range(25)), 4.0, 5.0, 7.0, 10.0, 20.0)
#: The seed of every calibration simulation.
SEED = 20260529
#: Replicates of a simulation run on the fly for a design the committed table lacks.
ON_THE_FLY_REPS = 20_000
#: The committed table of critical values.
TABLE_PATH = Path(__file__).with_name("critical_values.json")


@dataclass(frozen=True)
class Critical:
    """Critical values of one design: the interval is ``[m - low * se, m + high * se]``, ``se = s / sqrt(n)``."""

    low: float
    high: float


def _key(n_sigma: int, n_seeds: int) -> str:
    return f"{int(n_sigma)}x{int(n_seeds)}"


def _studentized(values: np.ndarray, truth: float) -> np.ndarray:
    """``(mean - truth) / (sd / sqrt(n))`` along the last axis of ``values`` ``(reps, n)``."""
    n = values.shape[-1]
    return (values.mean(-1) - truth) / (values.std(-1, ddof=1) / math.sqrt(n))


def _profile(ratio: float, n_sigma: int) -> np.ndarray:
    """A linear memory profile of spread ``ratio`` (noise sds) over ``n_sigma`` values, shape ``(n_sigma, 1)``."""
    return (-ratio * np.arange(n_sigma) / (n_sigma - 1))[:, None]


def simulate_critical(
    kind: str, n_sigma: int, n_seeds: int, reps: int, seed: int = SEED, level: float = LEVEL
) -> Critical:
    """The critical values of a design by the rules of the module docstring, from ``reps`` simulated replicates per
    ratio of :data:`RATIOS` (the same noise draws at every ratio). ``kind``: one of :data:`KINDS`."""
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r}; allowed: {', '.join(KINDS)}")
    if n_sigma < 2 or n_seeds < 2:
        raise ValueError(f"a design needs at least 2 sigma_w values and 2 seeds; got {n_sigma} x {n_seeds}")
    rng = np.random.default_rng([seed, KINDS.index(kind), n_sigma, n_seeds])
    noise = rng.standard_normal((2 if kind == "contrast" else 1, reps, n_sigma, n_seeds))
    tail = (1 - level) / 2
    if kind == "contrast":
        c = max(
            float(
                np.quantile(
                    np.abs(
                        _studentized(
                            _cross_fit(_profile(r, n_sigma) + noise[0]) - _cross_fit(_profile(r, n_sigma) + noise[1]),
                            0.0,
                        )
                    ),
                    level,
                )
            )
            for r in RATIOS
        )
        return Critical(c, c)
    high = max(
        float(np.quantile(-_studentized(_cross_fit(_profile(r, n_sigma) + noise[0]), r), 1 - tail)) for r in RATIOS
    )
    t0 = _studentized(_cross_fit(noise[0]), 0.0)
    above = (1 - level) - float(np.mean(t0 < -high))  # what the upper tail may take at no memory
    return Critical(float(np.quantile(t0, 1 - above)), high)


def read_table(path: Path = TABLE_PATH) -> dict:
    """The committed table (JSON: ``provenance`` and, per kind, ``{"<n_sigma>x<n_seeds>": {"low", "high"}}``).

    Raises:
        initmem.base.package_data.PackageFileError: the file is truncated, not JSON or an entry is not two numbers
            (one line naming it and how to restore it).
    """
    return read_package_json(path, _table_problem)


def _table_problem(table: Any) -> str | None:
    """What makes ``table`` unusable as :func:`read_table` (a kind or an entry of another shape), or None."""
    if not isinstance(table, dict):
        return "is not a JSON object"
    for kind in KINDS:
        entries = table.get(kind, {})
        if not isinstance(entries, dict):
            return f"{kind} is not a mapping of designs"
        for key, entry in entries.items():
            if why := finite_numbers(entry, f"{kind}.{key}", ("low", "high")):
                return why
    return None


@functools.cache
def committed_table() -> dict:
    """The committed table (:func:`read_table`), read once per process; empty where there is none (every design is
    then simulated on the fly). A command reads it before it trains, so that a damaged file stops it before it
    writes anything."""
    return read_table(TABLE_PATH) if TABLE_PATH.exists() else {}


@functools.cache
def critical(kind: str, n_sigma: int, n_seeds: int) -> Critical:
    """The critical values of a design: from the committed table, else computed on the fly (logged)."""
    entry = committed_table().get(kind, {}).get(_key(n_sigma, n_seeds))
    if entry is not None:
        return Critical(float(entry["low"]), float(entry["high"]))
    log.warning(
        "critical values of the %s design %d x %d are not in %s: simulated now at %d replicates",
        kind,
        n_sigma,
        n_seeds,
        TABLE_PATH.name,
        ON_THE_FLY_REPS,
    )
    return simulate_critical(kind, n_sigma, n_seeds, ON_THE_FLY_REPS)


@dataclass(frozen=True)
class CrossFitted:
    """The interval estimator of the mean of per-seed cross-fitted spreads (``kind="spread"``) or of differences of
    two conditions' (``"contrast"``) over ``n_sigma`` sigma_w values; :meth:`interval` makes the interval and labels
    it :data:`LABEL`."""

    n_sigma: int
    kind: str = "spread"

    @property
    def label(self) -> str:
        return LABEL

    def spread(self) -> CrossFitted:
        """The estimator of one condition's spread over the same design (a contrast's size)."""
        return CrossFitted(self.n_sigma, "spread")

    def interval(self, values: Sequence[float] | np.ndarray | xr.DataArray) -> Interval:
        """Mean of the finite per-seed ``values`` (pp) with its calibrated :data:`~initmem.study.statistics.stats.LEVEL`
        interval, clipped to :attr:`limits` (:meth:`initmem.study.statistics.stats.Interval.clip`); no bounds with fewer than
        2 seeds."""
        x = np.asarray(values, dtype=float).ravel()
        x = x[np.isfinite(x)]
        n = len(x)
        if n < 2:
            return Interval(float(x.mean()) if n else math.nan, math.nan, math.nan, n, LABEL)
        c = critical(self.kind, self.n_sigma, n)
        mean, se = float(x.mean()), float(x.std(ddof=1)) / math.sqrt(n)
        return Interval(mean, mean - c.low * se, mean + c.high * se, n, LABEL).clip(self.limits)

    @property
    def limits(self) -> tuple[float, float]:
        """What the quantity can be (pp): a spread is a difference of two accuracies, within [-100, 100]; a contrast
        the difference of two spreads, within [-200, 200]. :meth:`interval` clips its bounds to them."""
        return ACCURACY_DIFFERENCE if self.kind == "spread" else SPREAD_DIFFERENCE
