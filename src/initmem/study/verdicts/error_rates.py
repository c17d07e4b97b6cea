"""How often the ledger's rules err: their error rates measured by simulation on the record's designs.

It simulates per-seed accuracies of a design, ``(n_sigma, n_seeds)`` in percent, with a known memory profile
(:func:`profile`: linear in the sigma_w index, ``acc[i] = BASE - S i / (n_sigma - 1)``, spread ``S`` pp) and
independent Gaussian noise of sd ``noise_sd`` pp in each (sigma_w, seed) cell, judges them with the functions the
ledger calls (:mod:`initmem.study.verdicts.rules`, :mod:`initmem.study.statistics.calibration`, :mod:`initmem.study.statistics.nulls`), and counts
the coverage of the printed intervals without memory, the false "in size" at a band's upper edge, the false
positive without an effect and the power at the paper's number. A rate over ``reps`` replicates has the Monte-Carlo
standard error :func:`mc_error`; a null drawn ``draws`` times resolves a p-value to about ``1 / draws``.

The ledger's page prints the rates ("How often these rules err", ``scripts/error_rates.py``), and its dropdown "What
each error rate counts" defines each.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ..experiments import judged_by
from ..statistics import nulls
from ..statistics.calibration import CrossFitted
from ..statistics.stats import Interval, cross_fitted_spreads
from . import rules
from .ledger import band, claim_record

__all__ = [
    "BASE",
    "NOISE_SDS",
    "UNNUMBERED_FACTOR",
    "RATES",
    "Design",
    "DESIGNS",
    "profile",
    "interval_coverage",
    "simulate",
    "error_rates",
    "mc_error",
    "rates_table",
]

#: The accuracy (%) at the best sigma_w of every simulated profile.
BASE = 60.0
#: Within-cell noise standard deviations simulated (pp).
NOISE_SDS = (1.0, 2.5, 5.0, 8.0)
#: The rates :func:`simulate` returns (see the module docstring), with their column headers in the ledger's table.
RATES = {
    "false_in_size_at_edge": "false 'in size', size on the band's edge",
    "false_positive_no_effect": "direction holds with no effect",
    "coverage_spread": "coverage of the spread, no memory",
    "coverage_contrast": "coverage of the contrast, no effect",
    "power_at_paper": "best verdict at the paper's number",
}
_POSITIVE = (rules.IN_SIZE, rules.IN_DIRECTION, rules.SIZE_CONTRADICTED)
#: A claim without a number (C5) has its power measured at this multiple of its margin.
UNNUMBERED_FACTOR = 2


@dataclass(frozen=True)
class Design:
    """One claim's design in the record: ``n_sigma`` sigma_w values x ``n_seeds`` seeds.

    ``paper`` is the paper's number for the sized quantity (pp; None: no number, so at most "in direction");
    ``reference`` the true spread (pp) of the condition a contrast compares against (SGD's, C1's number; None:
    the claim is a single spread, judged against the sigma_w-permutation null as C1 is). ``unchanged``: the claim
    is that the contrast does not fall (C3, :func:`initmem.study.verdicts.rules.judge_unchanged`), not that it differs."""

    claim: str
    part: str
    experiment: str
    n_sigma: int
    n_seeds: int
    paper: float | None
    reference: float | None = None
    unchanged: bool = False

    @property
    def label(self) -> str:
        """``"C2 Adam (01, 4 x 5)"``."""
        name = f"{self.claim} {self.part}".strip()
        return f"{name} ({self.experiment[:2]}, {self.n_sigma} x {self.n_seeds})"

    @property
    def band(self) -> tuple[float, float] | None:
        return None if self.paper is None else band(self.claim, self.part)

    @property
    def power_target(self) -> tuple[float, str]:
        """``(truth, verdict)``: the true value at which the design's power is measured and the verdict that counts
        as passing: the paper's number and "in size"; no change and "in direction" for an unchanged claim; without a
        number, :data:`UNNUMBERED_FACTOR` times the margin and "in direction"."""
        if self.unchanged:
            return 0.0, rules.IN_DIRECTION
        if self.paper is not None:
            return float(self.paper), rules.IN_SIZE
        return UNNUMBERED_FACTOR * rules.MARGIN_PP, rules.IN_DIRECTION


#: The record's designs (issue 31): C1 and C2 on experiment 01 (4 sigma_w x 5 seeds), C4 on 03 (2 x 10), C5 on 04
#: (2 x 3). A sized contrast (C2, C4) compares SGD's memory (C1's number) with the other condition's.
_C1 = claim_record("C1")["values"][""]
DESIGNS = (
    Design("C1", "", judged_by("C1"), 4, 5, paper=_C1),
    Design("C2", "Adam", judged_by("C2"), 4, 5, paper=claim_record("C2")["values"]["Adam"], reference=_C1),
    Design("C4", "L2", judged_by("C4"), 2, 10, paper=claim_record("C4")["values"]["L2"], reference=_C1),
    Design("C5", "", judged_by("C5"), 2, 3, paper=None, reference=0.0),
)


def profile(spread: float, n_sigma: int) -> np.ndarray:
    """The noiseless accuracies (%) over ``n_sigma`` sigma_w values of a memory ``spread`` (pp), linear in the index:
    shape ``(n_sigma,)``.

    >>> profile(6.0, 4).tolist()
    [60.0, 58.0, 56.0, 54.0]
    """
    return BASE - spread * np.arange(n_sigma) / max(n_sigma - 1, 1)


def _draw(rng: np.random.Generator, spread: float, shape: tuple[int, int, int], noise_sd: float) -> np.ndarray:
    """``shape = (reps, n_sigma, n_seeds)`` accuracies (%): the profile of ``spread`` plus Gaussian cell noise."""
    return profile(spread, shape[1])[None, :, None] + noise_sd * rng.standard_normal(shape)


def _cross_fitted(acc: np.ndarray) -> np.ndarray:
    """Cross-fitted spreads (pp) of ``acc`` ``(reps, n_sigma, n_seeds)`` -> ``(reps, n_seeds)``."""
    return cross_fitted_spreads(xr.DataArray(acc, dims=("rep", "sigma_w", "seed"))).values


def interval_coverage(values: np.ndarray, truth: float, estimator: CrossFitted) -> float:
    """The share of rows of ``values`` ``(reps, n)`` whose interval by ``estimator`` (the ledger's) contains
    ``truth``."""
    return float(np.mean([_covers(estimator.interval(row), truth) for row in values]))


def _covers(interval: Interval, truth: float) -> bool:
    return interval.low <= truth <= interval.high


@contextmanager
def _draws(draws: int | None) -> Iterator[None]:
    """Random permutation nulls draw ``draws`` permutations inside the block (None: the ledger's number)."""
    kept = nulls.N_RESAMPLES
    nulls.N_RESAMPLES = kept if draws is None else int(draws)
    try:
        yield
    finally:
        nulls.N_RESAMPLES = kept


def _verdicts(design: Design, a: np.ndarray, b: np.ndarray | None) -> list[str]:
    """The verdict of each replicate, judged as the ledger judges the design's claim: ``a`` (and for a contrast
    ``b``) of shape ``(reps, n_sigma, n_seeds)``. A single spread: D = S = ``a``'s cross-fitted spread, against the
    sigma_w-permutation null. A contrast: D = ``a``'s minus ``b``'s, against the swap null, and S = ``b``'s own
    spread when the paper gives a number; an unchanged claim's D is judged by
    :func:`initmem.study.verdicts.rules.judge_unchanged`."""
    spread_a = _cross_fitted(a)
    spread_b = None if b is None else _cross_fitted(b)
    spread, contrast = CrossFitted(design.n_sigma), CrossFitted(design.n_sigma, "contrast")
    out = []
    for r in range(len(a)):
        if spread_b is None:
            direction = size = spread.interval(spread_a[r])
            null = nulls.spread_null(a[r])
        else:
            direction = contrast.interval(spread_a[r] - spread_b[r])
            size = spread.interval(spread_b[r]) if design.paper is not None else direction
            if design.unchanged:  # the claim is itself the null: no permutation test
                out.append(rules.judge_unchanged(direction).verdict)
                continue
            null = nulls.contrast_null(a[r], b[r])
        out.append(rules.judge(direction, null.p_value, size=size, band=design.band).verdict)
    return out


def _judged(design: Design, rng: np.random.Generator, judged: float, reps: int, noise_sd: float) -> list[str]:
    """Verdicts of ``reps`` replicates whose judged quantity has the true spread ``judged`` (pp): the single spread,
    or the other condition's spread of a sized contrast, or the difference of an unsized one."""
    shape = (reps, design.n_sigma, design.n_seeds)
    if design.reference is None:
        return _verdicts(design, _draw(rng, judged, shape, noise_sd), None)
    if design.paper is None:  # unsized: the difference itself is judged
        a, b = judged + design.reference, design.reference
    else:
        a, b = design.reference, judged
    return _verdicts(design, _draw(rng, a, shape, noise_sd), _draw(rng, b, shape, noise_sd))


def simulate(
    design: Design, noise_sd: float, reps: int, rng: np.random.Generator, draws: int | None = None
) -> dict[str, float]:
    """The rates of :data:`RATES` for ``design`` at within-cell noise ``noise_sd`` (pp), each over ``reps``
    replicates (a share in [0, 1]; NaN where the design has no such case: no band, no contrast). ``draws``: random
    permutations per null (None: :data:`initmem.study.statistics.nulls.N_RESAMPLES`)."""
    shape = (reps, design.n_sigma, design.n_seeds)
    with _draws(draws):
        rates = {name: math.nan for name in RATES}
        flat = _draw(rng, 0.0, shape, noise_sd)
        rates["coverage_spread"] = interval_coverage(_cross_fitted(flat), 0.0, CrossFitted(design.n_sigma))
        if design.reference is None:
            none = _verdicts(design, flat, None)
        else:
            same = _draw(rng, 0.0, shape, noise_sd)
            rates["coverage_contrast"] = interval_coverage(
                _cross_fitted(flat) - _cross_fitted(same), 0.0, CrossFitted(design.n_sigma, "contrast")
            )
            none = _verdicts(design, flat, same)
        rates["false_positive_no_effect"] = float(np.mean([v in _POSITIVE for v in none]))
        if design.band is not None:
            edge = _judged(design, rng, design.band[1], reps, noise_sd)
            rates["false_in_size_at_edge"] = float(np.mean([v == rules.IN_SIZE for v in edge]))
        target, best = design.power_target
        rates["power_at_paper"] = float(np.mean([v == best for v in _judged(design, rng, target, reps, noise_sd)]))
    return rates


def error_rates(
    designs: Sequence[Design] = DESIGNS,
    noise_sds: Sequence[float] = NOISE_SDS,
    reps: int = 200,
    seed: int = 0,
    draws: int | None = None,
) -> xr.Dataset:
    """:func:`simulate` over ``designs`` x ``noise_sds``: a Dataset with one variable per rate of :data:`RATES`
    (shares, dims ``(design, noise_sd)``; ``design`` coordinates are :attr:`Design.label`; the variable's
    ``description`` attribute is its column header), and the attributes
    ``reps``, ``seed`` and ``draws`` (0: the ledger's :data:`~initmem.study.statistics.nulls.N_RESAMPLES`). Each cell has its
    own generator, spawned from ``seed``, so a cell's rates do not depend on which others are run."""
    seeds = np.random.SeedSequence(seed).spawn(len(designs) * len(noise_sds))
    table = {name: np.full((len(designs), len(noise_sds)), np.nan) for name in RATES}
    for i, design in enumerate(designs):
        for j, noise_sd in enumerate(noise_sds):
            rng = np.random.default_rng(seeds[i * len(noise_sds) + j])
            for name, rate in simulate(design, noise_sd, reps, rng, draws).items():
                table[name][i, j] = rate
    coords = {"design": [d.label for d in designs], "noise_sd": np.asarray(noise_sds, dtype=float)}
    ds = xr.Dataset({name: (("design", "noise_sd"), values) for name, values in table.items()}, coords=coords)
    for name, text in RATES.items():
        ds[name].attrs["description"] = text
    ds["noise_sd"].attrs["units"] = "pp"
    ds.attrs.update(reps=int(reps), seed=int(seed), draws=int(draws or 0))
    return ds


def mc_error(rate: float | np.ndarray, reps: int) -> float | np.ndarray:
    """The Monte-Carlo standard error of a share ``rate`` over ``reps`` replicates: ``sqrt(p (1 - p) / reps)``.

    >>> round(mc_error(0.05, 200), 4)
    0.0154
    """
    error = np.sqrt(np.asarray(rate, dtype=float) * (1 - np.asarray(rate, dtype=float)) / reps)
    return float(error) if error.ndim == 0 else error


def rates_table(ds: xr.Dataset) -> str:
    """The ledger page's table "how often these rules err" (Markdown): one row per design x noise sd, columns the
    rates of :data:`RATES` in percent, each "± its Monte-Carlo standard error", and a line saying how they were made
    (replicates, permutation draws, commit)."""
    reps = int(ds.attrs["reps"])
    head = ["design", "noise sd (pp)", *(RATES[name] for name in RATES)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label in ds["design"].values:
        for noise_sd in ds["noise_sd"].values:
            cells = [str(label), f"{noise_sd:g}"]
            for name in RATES:
                rate = float(ds[name].sel(design=label, noise_sd=noise_sd))
                cells.append(
                    "n/a" if not math.isfinite(rate) else f"{100 * rate:.1f} ± {100 * mc_error(rate, reps):.1f}"
                )
            lines.append("| " + " | ".join(cells) + " |")
    draws = int(ds.attrs["draws"]) or nulls.N_RESAMPLES
    source = f"; commit {str(ds.attrs['commit'])[:12]}" if ds.attrs.get("commit") else ""
    lines.append(
        f"\nPercent of {reps} simulated replicates per cell (± one Monte-Carlo standard error), judged by the "
        f"ledger's rules with its calibrated intervals; random permutation nulls with {draws:,} draws{source}. The "
        "targets: at most 2.5 % false 'in size' on the band's edge, at most 5 % false direction, and 93-97 % coverage. "
        f"C5 has no number: its power is that of 'in direction' at a {UNNUMBERED_FACTOR * rules.MARGIN_PP:g} pp difference."
    )
    return "\n".join(lines)
