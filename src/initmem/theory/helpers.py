"""Helpers of the theory chapters: schedules, the three clocks, minibatch indices, log-log slopes, scaled initial directions.

Conventions: :mod:`initmem.theory`.
"""

from __future__ import annotations

import logging

import numpy as np

logger = logging.getLogger(__name__)

Array = np.ndarray

# Separate random streams for data, initial directions and minibatch order: equal integer seeds
# passed to different helpers never produce correlated draws.
_INIT_STREAM, _BATCH_STREAM = 1, 2


def as_schedule(eta: float | Array, steps: int) -> Array:
    """Learning rates per step, shape ``(steps,)``, from a constant or an explicit schedule."""
    eta = np.asarray(eta, dtype=np.float64)
    if eta.ndim == 0:
        return np.full(steps, float(eta))
    if eta.shape != (steps,):
        raise ValueError(f"eta: expected a float or an array of shape ({steps},), got shape {eta.shape}")
    return eta


def clocks(eta: float | Array, steps: int, b: int, lam: float = 0.0) -> dict[str, Array]:
    """Running forgetting clocks after each step, each of shape ``(steps,)``.

    ``T_SGD[k] = sum_{j<=k} eta_j^2 / b``, ``T_L2[k] = lam * sum_{j<=k} eta_j``,
    ``T_adapt[k] = sum_{j<=k} eta_j`` (dimensionless; eta in units of the toy's parameters).
    """
    lrs = as_schedule(eta, steps)
    cum = np.cumsum(lrs)
    return {"T_SGD": np.cumsum(lrs**2) / b, "T_L2": lam * cum, "T_adapt": cum}


def batch_indices(N: int, b: int, steps: int, seed: int) -> Array:
    """Minibatch indices, shape ``(steps, b)``: each row is ``b`` distinct samples out of ``N``.

    Rows are drawn independently (sampling without replacement inside a batch, with replacement
    across batches). ``b == N`` gives full-batch steps (every row is ``0 .. N-1``).
    """
    if not 1 <= b <= N:
        raise ValueError(f"b: expected 1 <= b <= N = {N}, got {b}")
    if b == N:
        return np.broadcast_to(np.arange(N), (steps, N))
    rng = np.random.default_rng((seed, _BATCH_STREAM))
    out = np.empty((steps, b), dtype=np.int64)
    chunk = max(1, 2_000_000 // N)  # bound the temporary (chunk, N) array
    for start in range(0, steps, chunk):
        keys = rng.random((min(chunk, steps - start), N))
        out[start : start + chunk] = np.argpartition(keys, b - 1, axis=1)[:, :b]
    return out


def log_record_steps(steps: int, n: int = 60) -> Array:
    """About ``n`` recording steps spaced logarithmically in ``[0, steps]`` (dense early, sparse late)."""
    return np.unique(np.concatenate([[0], np.geomspace(1, steps, n).astype(int), [steps]]))


def time_average(values: Array, rec_steps: Array) -> Array:
    """Trapezoidal average over ``[rec_steps[0], rec_steps[-1]]`` of ``values`` (shape ``(n_rec, ...)``) recorded at
    ``rec_steps`` (shape ``(n_rec,)``): the per-step mean of a slowly varying quantity from sparse records."""
    values = np.asarray(values, dtype=np.float64)
    t = np.asarray(rec_steps, dtype=np.float64).reshape((-1,) + (1,) * (values.ndim - 1))
    return np.sum(0.5 * (values[1:] + values[:-1]) * np.diff(t, axis=0), axis=0) / (t[-1] - t[0])


def loglog_slope(x: Array, y: Array) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (the measured order of a power law)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def init_scaled(shape: tuple[int, ...], sigmas: Array, seed: int) -> Array:
    """Initial parameters ``sigma_r * xi`` for each ``sigma_r``, shape ``(len(sigmas), *shape)``.

    ``xi`` is one draw of N(0, 1/fan_in) per entry (fan_in = ``shape[-1]``), shared by all runs, so the
    runs differ only in scale (the paper's sigma_w convention: W ~ N(0, sigma_w^2 / fan_in)). The draw
    uses its own random stream, independent of the data generators' stream for the same ``seed``.
    """
    xi = np.random.default_rng((seed, _INIT_STREAM)).standard_normal(shape) / np.sqrt(shape[-1])
    sigmas = np.atleast_1d(np.asarray(sigmas, dtype=np.float64))
    return sigmas.reshape((-1,) + (1,) * len(shape)) * xi


def unit_rows(w: Array, axes: tuple[int, ...]) -> Array:
    """``w`` divided by its Euclidean norm over ``axes`` (each row of a matrix, each vector of a batch)."""
    return w / np.sqrt(np.sum(w**2, axis=axes, keepdims=True))


def direction_difference(w1: Array, w2: Array) -> Array:
    """``|| w1/||w1|| - w2/||w2|| ||`` per run for arrays of shape ``(..., R, d)``; the angle-like gap."""
    return np.linalg.norm(unit_rows(w1, (-1,)) - unit_rows(w2, (-1,)), axis=-1)
