"""Noise nulls: how large an effect seed noise alone makes, by permutation (``scipy.stats.permutation_test``).

* :func:`spread_null` -- the sigma_w labels permuted within each seed: is there memory of sigma_w at all? Statistic:
  the raw spread, max - min over sigma_w of the seed-mean accuracy (:func:`raw_spread`).
* :func:`contrast_null` -- two conditions A and B swapped within each (sigma_w, seed) cell: is A's spread larger
  than B's by more than chance? Statistic: ``raw_spread(A) - raw_spread(B)``, or any function of the two arrays.

The p-value is one-sided (larger). The null is enumerated exactly up to :data:`MAX_EXACT` permutations (a contrast
up to :data:`MAX_EXACT_SWAPS` swaps), else drawn :data:`N_RESAMPLES` times with the seed :data:`NULL_SEED`
(p = (hits + 1) / (draws + 1)); a permutation within :data:`TIE` of the observed statistic is a hit;
:attr:`NullTest.smallest_p` is the smallest p the design can give at all. Arrays are
``(n_sigma, n_seeds)`` (accuracies in percent); seeds with a missing value (a diverged run) are dropped first. The
ledger's page ("How a claim is judged") says why every effect is set against its null.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...base.numbers import p_text

__all__ = [
    "MAX_EXACT",
    "MAX_EXACT_SWAPS",
    "N_RESAMPLES",
    "NULL_SEED",
    "TIE",
    "NullTest",
    "raw_spread",
    "spread_null",
    "contrast_null",
    "spread_null_floor",
    "contrast_null_floor",
]

#: Nulls with at most this many permutations are enumerated exactly (scipy enumerates swaps of two conditions more
#: slowly than it draws them, so a contrast is exact up to :data:`MAX_EXACT_SWAPS`).
MAX_EXACT = 20_000
MAX_EXACT_SWAPS = 4_096
#: Random permutations drawn otherwise.
N_RESAMPLES = 10_000
#: The seed of those draws (every null in the book is reproducible).
NULL_SEED = 20260529
#: Two statistics closer than this (in the statistic's units) are a tie. Rounding moves a statistic of centred
#: accuracies by about 1e-13 when a constant is added to every accuracy; a tie must not turn on that.
TIE = 1e-9


@dataclass(frozen=True)
class NullTest:
    """The observed statistic against its permutation null.

    ``p_value`` is one-sided (statistic at least as large as observed); ``null_mean`` and ``null_p95`` are the mean
    and the 95th percentile of the null distribution (the "noise floor" of this cell); ``permutations`` how many
    were evaluated, ``exact`` whether that is all of them; ``smallest_p`` the smallest p-value the design allows.
    All NaN (and ``permutations = 0``) when there is nothing to permute (fewer than 2 complete seeds or sigma_w
    values)."""

    observed: float
    p_value: float
    null_mean: float
    null_p95: float
    permutations: int
    exact: bool
    smallest_p: float

    @property
    def has_null(self) -> bool:
        return self.permutations > 0 and math.isfinite(self.p_value)

    def format(self, unit: str = " pp", digits: int = 1) -> str:
        """``"p = 0.014 (noise alone: mean 5.2 pp, 95th percentile 7.4 pp; 13,824 permutations, exact)"``."""
        if not self.has_null:
            return "no null (fewer than 2 complete seeds)"
        how = "exact" if self.exact else f"random, seed {NULL_SEED}"
        return (
            f"p = {p_text(self.p_value)} (noise alone: mean {self.null_mean:.{digits}f}{unit}, 95th percentile "
            f"{self.null_p95:.{digits}f}{unit}; {self.permutations:,} permutations, {how})"
        )

    def __str__(self) -> str:
        return self.format()


def raw_spread(acc: np.ndarray) -> np.ndarray:
    """The raw spread: max - min over sigma_w of the seed-mean accuracy, for ``acc`` of shape ``(..., n_sigma,
    n_seeds)``; the result has shape ``(...)``.

    >>> float(raw_spread(np.array([[60.0, 62.0], [40.0, 44.0]])))
    19.0
    """
    means = np.mean(acc, axis=-1)
    return np.max(means, axis=-1) - np.min(means, axis=-1)


def _complete(acc: np.ndarray) -> np.ndarray:
    acc = np.asarray(acc, dtype=float)
    if acc.ndim != 2:
        raise ValueError(f"acc: expected shape (n_sigma, n_seeds), got {acc.shape}")
    return acc[:, np.isfinite(acc).all(axis=0)]


def _empty(observed: float = math.nan) -> NullTest:
    return NullTest(observed, math.nan, math.nan, math.nan, 0, False, math.nan)


def _run(data: tuple[np.ndarray, ...], statistic: Callable, count: float, cap: int = MAX_EXACT) -> NullTest:
    from scipy import stats

    exact = count <= cap or count <= N_RESAMPLES  # scipy enumerates every permutation when it can draw as many
    result = stats.permutation_test(
        data,
        statistic,
        permutation_type="samples",
        vectorized=True,
        alternative="greater",
        n_resamples=np.inf if exact else N_RESAMPLES,
        rng=np.random.default_rng(NULL_SEED),
    )
    null = np.asarray(result.null_distribution, dtype=float)
    observed = float(result.statistic)
    hits = int(np.sum(null >= observed - TIE))  # scipy's own tie tolerance is relative to the statistic: too tight
    p_value = hits / null.size if exact else (hits + 1) / (null.size + 1)
    top = null.max() if null.size else math.nan
    # the smallest attainable p: exact, the share of permutations that reach the largest null value; random, one
    # hit among the draws (and never below the exact bound 1 / count)
    smallest = float(np.mean(null >= top - TIE)) if exact else max(1.0 / (N_RESAMPLES + 1), 1.0 / count)
    return NullTest(
        observed,
        p_value,
        float(null.mean()),
        float(np.percentile(null, 95)),
        int(null.size),
        exact,
        smallest,
    )


def spread_null(acc: np.ndarray) -> NullTest:
    """The raw spread of ``acc`` (shape ``(n_sigma, n_seeds)``) against sigma_w labels permuted within each seed
    (see :func:`_spread_null`; the same array is tested once per process)."""
    acc = _complete(acc)
    return _spread_null(acc.tobytes(), acc.shape)


@functools.lru_cache(maxsize=1024)
def _spread_null(buffer: bytes, shape: tuple[int, int]) -> NullTest:
    """The raw spread of ``acc`` (shape ``(n_sigma, n_seeds)``) against sigma_w labels permuted within each seed.

    >>> acc = np.array([[60.0, 61.0, 59.0], [40.0, 41.0, 39.0]])   # 2 sigma_w x 3 seeds, a 20 pp memory
    >>> test = spread_null(acc)
    >>> round(test.observed, 1), test.permutations, test.p_value, test.smallest_p
    (20.0, 8, 0.25, 0.25)
    """
    acc = np.frombuffer(buffer).reshape(shape)
    k, n = acc.shape
    if k < 2 or n < 2:
        return _empty(float(raw_spread(acc)) if acc.size else math.nan)

    def statistic(*samples, axis=-1):
        return raw_spread(np.stack(samples, axis=-2))

    return _run(tuple(acc), statistic, float(math.factorial(k)) ** n)


def contrast_null(
    a: np.ndarray,
    b: np.ndarray,
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    center: bool = True,
) -> NullTest:
    """``statistic(a, b)`` (default ``raw_spread(a) - raw_spread(b)``) against the two conditions swapped within
    each (sigma_w, seed) cell. ``a`` and ``b`` have the same shape ``(n_sigma, n_seeds)`` (seed j of both is one seed);
    ``statistic`` takes two arrays of shape ``(..., n_sigma, n_seeds)`` and returns ``(...)``. Seeds missing in either
    are dropped.

    ``center``: each condition's values are first centred per seed (their mean over sigma_w removed). A spread or a
    slope does not see a seed's level, but swapping cells of conditions at different levels (Adam's accuracies above
    SGD's, say) would mix the levels into the null and widen it; after centring, the swap is exchangeable exactly when
    the two conditions have the same profile over sigma_w, which is the null being tested. Give ``center=False`` for
    a statistic of one sigma_w value.

    >>> a = np.array([[60.0, 61.0, 59.0], [40.0, 41.0, 39.0]]); b = a * 0 + 50.0   # A remembers, B does not
    >>> test = contrast_null(a, b)
    >>> round(test.observed, 1), test.permutations, round(test.p_value, 4)
    (20.0, 64, 0.0156)
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"a, b: expected two arrays of one shape (n_sigma, n_seeds), got {a.shape} and {b.shape}")
    keep = np.isfinite(a).all(axis=0) & np.isfinite(b).all(axis=0)
    a, b = a[:, keep], b[:, keep]
    if center:
        a, b = a - a.mean(axis=0), b - b.mean(axis=0)
    statistic = statistic or (lambda x, y: raw_spread(x) - raw_spread(y))
    if a.shape[1] < 1 or a.size < 2:
        return _empty()
    shape = a.shape

    def vectorized(x, y, axis=-1):
        return statistic(x.reshape(*x.shape[:-1], *shape), y.reshape(*y.shape[:-1], *shape))

    return _run((a.ravel(), b.ravel()), vectorized, 2.0**a.size, MAX_EXACT_SWAPS)


def spread_null_floor(n_sigma: int, n_seeds: int) -> float:
    """The smallest p-value :func:`spread_null` can give with ``n_sigma`` values and ``n_seeds`` complete seeds.

    The raw spread depends only on which sigma_w holds each seed's top and bottom values: it is largest when one
    label holds every seed's top and another every seed's bottom, which ``n_sigma (n_sigma - 1)`` choices of the two
    labels and any order of the others reach, so the floor is ``(n_sigma (n_sigma - 1))^-(n_seeds - 1)``.

    >>> spread_null_floor(2, 3), spread_null_floor(4, 3)
    (0.25, 0.006944444444444444)
    """
    if n_sigma < 2 or n_seeds < 2:
        return 1.0
    return float(n_sigma * (n_sigma - 1)) ** -(n_seeds - 1)


def contrast_null_floor(n_cells: int) -> float:
    """The smallest p-value :func:`contrast_null` can give over ``n_cells`` (sigma_w, seed) cells: ``1 / 2^n_cells``
    for a statistic that changes sign when every cell is swapped (a difference).

    >>> contrast_null_floor(6)
    0.015625
    """
    return 1.0 / 2.0**n_cells
