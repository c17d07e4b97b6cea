"""Diagonal linear networks and Woodworth et al.'s ``Q_alpha`` (2020): how the init scale picks the implicit bias.

Conventions: :mod:`initmem.theory`.
"""

from __future__ import annotations

import logging

import numpy as np
from scipy import optimize

from .helpers import batch_indices

logger = logging.getLogger(__name__)

Array = np.ndarray


def make_sparse_regression(n: int = 12, d: int = 40, k: int = 3, seed: int = 0) -> tuple[Array, Array, Array]:
    """Underdetermined noiseless regression: ``X`` (n, d) Gaussian, ``w*`` k-sparse, ``y = X w*``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w_star = np.zeros(d)
    w_star[rng.choice(d, k, replace=False)] = rng.choice([-1.0, 1.0], k) * rng.uniform(1.0, 2.0, k)
    return X, X @ w_star, w_star


def diag_net_gd(
    X: Array,
    y: Array,
    alpha: Array,
    eta: float | Array,
    steps: int,
    b: int | None = None,
    seed: int = 0,
    record_every: int = 0,
) -> dict[str, Array]:
    """GD (or SGD with batch ``b``) on the diagonal linear network ``w = u*u - v*v``, ``u(0) = v(0) = alpha``.

    Loss ``L = ||X w - y||^2 / (2n)``. ``alpha`` (R,) runs side by side; ``eta`` a float or (R,) array (per run).
    Returns ``w`` (R, d) after ``steps``, ``loss`` (R,) at the end, and, if ``record_every > 0``, ``loss_path``
    of shape (n_rec, R).
    """
    n, d = X.shape
    alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    lr = np.broadcast_to(np.asarray(eta, dtype=np.float64), alpha.shape)[:, None]
    u = np.repeat(alpha[:, None], d, 1)
    v = u.copy()
    idx = None if b is None else batch_indices(n, b, steps, seed)
    path = []
    for k in range(steps):
        w = u * u - v * v
        if idx is None:
            gw = (w @ X.T - y) @ X / n
        else:
            Xb = X[idx[k]]
            gw = (w @ Xb.T - y[idx[k]]) @ Xb / len(idx[k])
        u, v = u - lr * 2 * u * gw, v + lr * 2 * v * gw
        if record_every and k % record_every == 0:
            path.append(0.5 * np.mean((w @ X.T - y) ** 2, -1))
    w = u * u - v * v
    out = {"w": w, "loss": 0.5 * np.mean((w @ X.T - y) ** 2, -1)}
    if record_every:
        out["loss_path"] = np.array(path)
    return out


def q_alpha(w: Array, alpha: float) -> Array:
    """Woodworth et al.'s potential (standard form) ``Q_alpha(w) = alpha^2 sum_i q(w_i / alpha^2)``,
    ``q(z) = 2 - sqrt(4 + z^2) + z arcsinh(z / 2)``; sums over the last axis."""
    z = np.asarray(w) / alpha**2
    return alpha**2 * np.sum(2 - np.sqrt(4 + z**2) + z * np.arcsinh(z / 2), axis=-1)


def solve_q_alpha(X: Array, y: Array, alpha: float) -> Array:
    """``argmin Q_alpha(w)`` subject to ``X w = y`` (shape (d,)), through the smooth convex dual.

    Optimality: ``q'(w_i/alpha^2) = arcsinh(w_i / (2 alpha^2)) = (X^T mu)_i``, so ``w = 2 alpha^2 sinh(X^T mu)`` with
    ``mu`` minimizing ``D(mu) = 2 alpha^2 sum_i cosh((X^T mu)_i) - <y, mu>`` (Newton trust region).
    """
    c = 2.0 * alpha**2

    def D(mu):
        return c * np.sum(np.cosh(X.T @ mu)) - y @ mu

    def jac(mu):
        return X @ (c * np.sinh(X.T @ mu)) - y

    def hess(mu):
        return (X * (c * np.cosh(X.T @ mu))) @ X.T

    res = optimize.minimize(
        D, np.zeros(X.shape[0]), jac=jac, hess=hess, method="trust-exact", options={"gtol": 1e-12, "maxiter": 2000}
    )
    w = c * np.sinh(X.T @ res.x)
    resid = np.linalg.norm(X @ w - y) / np.linalg.norm(y)
    logger.debug("solve_q_alpha(alpha=%g): %s, relative residual %.1e", alpha, res.message, resid)
    if resid > 1e-6:
        logger.warning("solve_q_alpha(alpha=%g): relative residual %.1e (%s)", alpha, resid, res.message)
    return w


def min_l2_interpolant(X: Array, y: Array) -> Array:
    """Minimum-Euclidean-norm solution of ``X w = y``."""
    return np.linalg.pinv(X) @ y


def min_l1_interpolant(X: Array, y: Array) -> Array:
    """Minimum-l1-norm solution of ``X w = y`` (linear program, ``w = p - q`` with ``p, q >= 0``)."""
    n, d = X.shape
    res = optimize.linprog(np.ones(2 * d), A_eq=np.hstack([X, -X]), b_eq=y, bounds=(0, None), method="highs")
    return res.x[:d] - res.x[d:]
