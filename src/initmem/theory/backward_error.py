"""Backward error analysis: modified flows, the Smith et al. SGD modified loss, heavy-ball roots.

Conventions: :mod:`initmem.theory`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.integrate import solve_ivp

logger = logging.getLogger(__name__)

Array = np.ndarray


@dataclass(frozen=True)
class TwoParamToy:
    """``E(a, b) = (a b - 1)^2 / 2 + c a^2``: the two-parameter toy of check 1 (theta = (a, b))."""

    c: float = 0.05

    def loss(self, th: Array) -> float:
        a, b = th
        return 0.5 * (a * b - 1) ** 2 + self.c * a**2

    def grad(self, th: Array) -> Array:
        a, b = th
        r = a * b - 1
        return np.array([r * b + 2 * self.c * a, r * a])

    def hess(self, th: Array) -> Array:
        a, b = th
        return np.array([[b * b + 2 * self.c, 2 * a * b - 1], [2 * a * b - 1, a * a]])


def gd_endpoint(grad: Callable[[Array], Array], theta0: Array, h: float, n_steps: int) -> Array:
    """``theta_n`` of gradient descent ``theta <- theta - h grad(theta)``."""
    th = np.array(theta0, dtype=np.float64)
    for _ in range(n_steps):
        th = th - h * grad(th)
    return th


def flow_endpoint(field_fn: Callable[[Array], Array], theta0: Array, T: float) -> Array:
    """``theta(T)`` of the ODE ``d theta/dt = field_fn(theta)`` (DOP853, rtol 1e-12, atol 1e-14)."""
    sol = solve_ivp(
        lambda t, th: field_fn(th),
        (0.0, T),
        np.asarray(theta0, dtype=np.float64),
        method="DOP853",
        rtol=1e-12,
        atol=1e-14,
    )
    return sol.y[:, -1]


def igr_field(grad: Callable[[Array], Array], hess: Callable[[Array], Array], h: float) -> Callable[[Array], Array]:
    """The IGR modified flow ``-grad(E + h/4 ||grad E||^2) = -(grad E + h/2 H grad E)`` (h = 0: gradient flow)."""

    def f(th):
        g = grad(th)
        return -(g + 0.5 * h * hess(th) @ g)

    return f


@dataclass(frozen=True)
class LinearRegression:
    """``C(w) = (1/N) sum_i (x_i . w - y_i)^2 / 2`` with everything needed for the Smith et al. modified loss.

    ``X`` (N, d), ``y`` (N,). The per-sample gradient is ``A_i w - c_i`` with ``A_i = x_i x_i^T``, ``c_i = y_i x_i``.
    """

    X: Array
    y: Array

    @property
    def N(self) -> int:
        return self.X.shape[0]

    @property
    def H(self) -> Array:
        """Hessian ``(1/N) X^T X``, shape (d, d)."""
        return self.X.T @ self.X / self.N

    @property
    def cbar(self) -> Array:
        return self.X.T @ self.y / self.N

    def gamma_quadratic(self) -> tuple[Array, Array]:
        """``(M, p)`` with ``Gamma(w) = (1/N) sum_i ||grad C_i - grad C||^2 = w^T M w - 2 p^T w + const``."""
        A = self.X[:, :, None] * self.X[:, None, :] - self.H  # (N, d, d): A_i - H
        dc = self.X * self.y[:, None] - self.cbar  # (N, d): c_i - cbar
        return np.einsum("nij,njk->ik", A, A) / self.N, np.einsum("nij,nj->i", A, dc) / self.N

    def modified_linear_field(self, eps: float, B: int, igr: bool = True, noise: bool = True) -> tuple[Array, Array]:
        """``(A, c)`` such that the modified gradient is ``A w - c``.

        Modified loss (Smith et al., averaged over random partitions; our reconstruction)::

            C + (eps/4) ||grad C||^2 [igr] + (N-B)/(N-1) * eps/(4B) * Gamma [noise]
        """
        H, cbar = self.H, self.cbar
        A, c = H.copy(), cbar.copy()
        if igr:
            A, c = A + 0.5 * eps * H @ H, c + 0.5 * eps * H @ cbar
        if noise:
            M, p = self.gamma_quadratic()
            f = (self.N - B) / (self.N - 1) * eps / (4 * B)
            A, c = A + 2 * f * M, c + 2 * f * p
        return A, c


def make_linear_regression(N: int = 64, d: int = 4, seed: int = 0) -> LinearRegression:
    """Gaussian inputs with unequal scales, a Gaussian teacher and noisy targets (so Gamma != 0 at the optimum)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d)) * np.linspace(1.0, 0.5, d)
    y = X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(N)
    return LinearRegression(X=X, y=y)


def linear_flow_endpoint(A: Array, c: Array, w0: Array, T: float) -> Array:
    """Exact solution at time ``T`` of ``dw/dt = -(A w - c)`` (A invertible): ``w* + expm(-A T)(w0 - w*)``."""
    w_star = np.linalg.solve(A, c)
    return w_star + linalg.expm(-A * T) @ (np.asarray(w0) - w_star)


def sgd_epoch_mean(
    problem: LinearRegression, w0: Array, eps: float, B: int, reshuffles: int, seed: int = 0, chunk: int = 20_000
) -> tuple[Array, Array]:
    """Mean (and its standard error) over random reshuffles of the iterate after one epoch of SGD without
    replacement (``m = N/B`` steps of size ``eps``). Each permutation is paired with its reverse (antithetic
    sampling: both are equally likely, and pairing cancels most of the order-dependent variance).

    Returns ``(mean, sem)``, each of shape (d,).
    """
    N, d = problem.X.shape
    if N % B:
        raise ValueError(f"B={B} must divide N={N}")
    rng = np.random.default_rng(seed)
    total, total_sq, count = np.zeros(d), np.zeros(d), 0
    while count < reshuffles:
        r = min(chunk, reshuffles - count)
        perms = np.argsort(rng.random((r, N)), axis=1)
        ends = []
        for order in (perms, perms[:, ::-1]):
            w = np.broadcast_to(np.asarray(w0, dtype=np.float64), (r, d)).copy()
            for k in range(N // B):
                idx = order[:, k * B : (k + 1) * B]
                Xb, yb = problem.X[idx], problem.y[idx]  # (r, B, d), (r, B)
                resid = np.einsum("rbd,rd->rb", Xb, w) - yb
                w = w - eps * np.einsum("rb,rbd->rd", resid, Xb) / B
            ends.append(w)
        pair_mean = 0.5 * (ends[0] + ends[1])
        total += pair_mean.sum(0)
        total_sq += (pair_mean**2).sum(0)
        count += r
    mean = total / count
    var = total_sq / count - mean**2
    return mean, np.sqrt(np.maximum(var, 0.0) / count)


def heavy_ball_slow_root(eta_lam: float | Array, beta: float) -> Array:
    """Slow root ``mu`` of ``mu^2 - (1 + beta - h lam) mu + beta = 0`` with ``h lam = eta lam (1 - beta)``.

    Heavy ball in EMA form (``m <- beta m + (1-beta) g``, ``theta <- theta - eta m``) on one quadratic mode
    ``L = lam theta^2 / 2`` contracts by ``mu`` per step once the fast root has died out (real roots only).
    """
    hl = np.asarray(eta_lam, dtype=np.float64) * (1 - beta)
    p = 1 + beta - hl
    disc = p**2 - 4 * beta
    if np.any(disc < 0):
        raise ValueError("complex roots: the mode is underdamped (eta*lam too large for this beta)")
    return 0.5 * (p + np.sqrt(disc))


def heavy_ball_rate_prediction(eta_lam: float | Array, beta: float) -> Array:
    """Per-step decay rate ``-ln mu`` predicted by the modified flow, divided by ``eta lam``:
    ``1 + (eta lam / 2) (1 + beta)/(1 - beta)``."""
    return 1 + 0.5 * np.asarray(eta_lam) * (1 + beta) / (1 - beta)
