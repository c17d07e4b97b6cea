"""Optimizers on the toys (:func:`sgd`, :func:`adam`, :func:`adamw`, :func:`muon`, :func:`ns5`) and the laws they are
checked against: the norm law, the equilibria, Adam's step bound.

Conventions: :mod:`initmem.theory`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from ..base.constants import NS_COEFFICIENTS
from .helpers import as_schedule, batch_indices

logger = logging.getLogger(__name__)

Array = np.ndarray


@dataclass
class Trajectory:
    """What a runner returns.

    Attributes:
        steps: recorded step indices, shape ``(n_rec,)`` (0 = the initial point, last = ``steps``).
        w: parameters at those steps, shape ``(n_rec, R, *shape)``.
        G: squared minibatch gradient norm *measured at unit weight norm* at every step,
            ``G_k = ||g_k||^2 ||w_k||^2`` (per-row norms summed for matrices), shape ``(steps, R)``.
        eta: the learning rate of each step, shape ``(steps,)``.
        extra: optimizer-specific per-step records (see each runner), each of shape ``(steps, R)``.
    """

    steps: Array
    w: Array
    G: Array
    eta: Array
    extra: dict[str, Array] = field(default_factory=dict)

    @property
    def final(self) -> Array:
        """Parameters after the last step, shape ``(R, *shape)``."""
        return self.w[-1]

    def sq_norm(self) -> Array:
        """``||w||^2`` at the recorded steps, shape ``(n_rec, R)`` (Frobenius for matrices)."""
        return np.sum(self.w**2, axis=tuple(range(2, self.w.ndim)))


def _prepare(problem, w0: Array) -> Array:
    w = np.array(w0, dtype=np.float64)
    if w.shape == problem.shape:
        w = w[None]
    if w.shape[1:] != problem.shape:
        raise ValueError(f"w0: expected shape {problem.shape} or (R, *{problem.shape}), got {w.shape}")
    return w


def _run(problem, w0, eta, b, steps, seed, record_every, batches, update) -> Trajectory:
    """Shared loop: ``update(k, w, g, lr) -> new w`` after computing the minibatch gradient ``g``.

    ``record_every``: an int (every that many steps) or an explicit sequence of steps to record;
    step 0 and the last step are always recorded (see :func:`~initmem.theory.helpers.log_record_steps`).
    """
    w = _prepare(problem, w0)
    lrs = as_schedule(eta, steps)
    idx = batch_indices(problem.N, b, steps, seed) if batches is None else batches
    axes = tuple(range(1, w.ndim))
    if np.ndim(record_every) == 0:
        rec_steps = sorted(set(range(0, steps + 1, int(record_every))) | {steps})
    else:
        rec_steps = sorted({int(k) for k in record_every if 0 <= k <= steps} | {0, steps})
    rec_set = set(rec_steps[1:])
    ws, G = [w.copy()], np.empty((steps, w.shape[0]))
    for k in range(steps):
        g = problem.grad(w, idx[k])
        G[k] = np.sum(g**2, axis=axes) * np.sum(w**2, axis=axes) if w.ndim == 2 else _row_G(g, w)
        w = update(k, w, g, lrs[k])
        if k + 1 in rec_set:
            ws.append(w.copy())
    return Trajectory(steps=np.array(rec_steps), w=np.stack(ws), G=G, eta=lrs)


def _row_G(g: Array, w: Array) -> Array:
    """Sum over rows of ``||g_j||^2 ||w_j||^2`` (unit-norm gradient size of a row-invariant matrix)."""
    return np.sum(np.sum(g**2, -1) * np.sum(w**2, -1), axis=tuple(range(1, w.ndim - 1)))


def sgd(
    problem,
    w0: Array,
    eta: float | Array,
    b: int,
    steps: int,
    lam: float = 0.0,
    momentum: float = 0.0,
    seed: int = 1,
    record_every: int = 1,
    batches: Array | None = None,
) -> Trajectory:
    """SGD in PyTorch's form, with L2 weight decay coupled into the momentum buffer::

        buf <- momentum * buf + g + lam * w;   w <- w - eta * buf

    (``momentum = 0``: ``w <- (1 - eta lam) w - eta g``.) ``w0``: ``(R, *shape)`` or ``shape``.
    ``extra["angular"]``: the angle (radians) between ``w_k`` and ``w_{k+1}``, shape ``(steps, R)``.
    """
    buf = [None]
    angular = []

    def update(k, w, g, lr):
        d = g + lam * w
        buf[0] = d if buf[0] is None or momentum == 0 else momentum * buf[0] + d
        w_new = w - lr * buf[0]
        angular.append(_angle(w, w_new))
        return w_new

    traj = _run(problem, w0, eta, b, steps, seed, record_every, batches, update)
    traj.extra["angular"] = np.array(angular)
    return traj


def _angle(a: Array, b: Array) -> Array:
    axes = tuple(range(1, a.ndim))
    cos = np.sum(a * b, axis=axes) / np.sqrt(np.sum(a**2, axis=axes) * np.sum(b**2, axis=axes))
    return np.arccos(np.clip(cos, -1.0, 1.0))


def adam(
    problem,
    w0: Array,
    eta: float | Array,
    b: int,
    steps: int,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    seed: int = 1,
    record_every: int = 1,
    batches: Array | None = None,
) -> Trajectory:
    """Adam (Kingma & Ba, with both bias corrections); ``adamw`` with ``lam = 0``.

    ``extra["max_update"]``: ``max_i |Delta theta_i| / eta_k`` per step (the normalized step size),
    ``extra["update_rms"]``: RMS over coordinates of ``u = m_hat / (sqrt(v_hat) + eps)``; both ``(steps, R)``.
    """
    return adamw(problem, w0, eta, b, steps, 0.0, beta1, beta2, eps, seed, record_every, batches)


def adamw(
    problem,
    w0: Array,
    eta: float | Array,
    b: int,
    steps: int,
    lam: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    seed: int = 1,
    record_every: int = 1,
    batches: Array | None = None,
) -> Trajectory:
    """AdamW with decoupled decay, as in ``torch.optim.AdamW``::

        m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;  u = m_hat / (sqrt(v_hat) + eps)
        w <- (1 - eta lam) w - eta u

    Records as :func:`adam`. ``max_update`` excludes the decay term (it is ``|u|_inf``).
    """
    state = {"m": 0.0, "v": 0.0}
    max_u, rms_u = [], []

    def update(k, w, g, lr):
        state["m"] = beta1 * state["m"] + (1 - beta1) * g
        state["v"] = beta2 * state["v"] + (1 - beta2) * g**2
        u = (state["m"] / (1 - beta1 ** (k + 1))) / (np.sqrt(state["v"] / (1 - beta2 ** (k + 1))) + eps)
        axes = tuple(range(1, w.ndim))
        max_u.append(np.max(np.abs(u), axis=axes))
        rms_u.append(np.sqrt(np.mean(u**2, axis=axes)))
        return (1 - lr * lam) * w - lr * u

    traj = _run(problem, w0, eta, b, steps, seed, record_every, batches, update)
    traj.extra.update(max_update=np.array(max_u), update_rms=np.array(rms_u))
    return traj


def adam_step_bound(t: int | Array, beta1: float = 0.9, beta2: float = 0.999) -> Array:
    """A rigorous bound ``C_t`` on ``|m_hat_t| / sqrt(v_hat_t)`` at step ``t >= 1`` (so ``|Delta theta_i| <= eta C_t``).

    Cauchy-Schwarz on ``m_t = (1-b1) sum_j b1^j g_{t-j}`` against ``v_t = (1-b2) sum_j b2^j g_{t-j}^2`` gives,
    with ``r = b1^2 / b2 < 1``::

        C_t = (1-b1)/sqrt(1-b2) * sqrt((1 - r^t)/(1 - r)) * sqrt(1 - b2^t) / (1 - b1^t)

    ``C_1 = 1`` (the first step is a sign step); ``C_t -> (1-b1)/sqrt((1-b2)(1-r))`` (7.27 at the defaults).
    """
    r = beta1**2 / beta2
    if r >= 1:
        raise ValueError(f"adam_step_bound needs beta1^2 < beta2, got beta1={beta1}, beta2={beta2}")
    t = np.asarray(t, dtype=np.float64)
    return (1 - beta1) / np.sqrt(1 - beta2) * np.sqrt((1 - r**t) / (1 - r)) * np.sqrt(1 - beta2**t) / (1 - beta1**t)


#: Muon's quintic Newton-Schulz coefficients (a, b, c) from the reference implementation (K. Jordan).
NS5_COEFFS = NS_COEFFICIENTS  # the coefficients of initmem.run.optim.muon's Muon, defined once in initmem.base


def ns5(G: Array, steps: int = 5, eps: float = 1e-7, coeffs: tuple[float, float, float] = NS5_COEFFS) -> Array:
    """Muon's approximate orthogonalization ``NS5(G) ~ U V^T`` (float64), for ``G`` of shape ``(..., m, n)``.

    ``X <- G / (||G||_F + eps)``, then ``steps`` times ``X <- a X + (b A + c A^2) X`` with ``A = X X^T``
    (on the wide orientation). Singular vectors are kept; each singular value ``x`` is mapped by the scalar
    quintic ``a x + b x^3 + c x^5`` iterated ``steps`` times (:func:`ns5_gain_bound`).
    """
    a, b_, c = coeffs
    tall = G.shape[-2] > G.shape[-1]
    X = np.swapaxes(G, -1, -2) if tall else np.array(G, dtype=np.float64)
    X = X / (np.linalg.norm(X, axis=(-2, -1), keepdims=True) + eps)
    for _ in range(steps):
        A = X @ np.swapaxes(X, -1, -2)
        X = a * X + (b_ * A + c * A @ A) @ X
    return np.swapaxes(X, -1, -2) if tall else X


def ns5_gain_bound(steps: int = 5, coeffs: tuple[float, float, float] = NS5_COEFFS, grid: int = 200_001) -> float:
    """``max_{x in [0, 1]}`` of the iterated NS5 quintic: the largest singular value ``NS5`` can output.

    After the Frobenius normalization every singular value lies in [0, 1], so ``||NS5(G)||_op`` is at most this
    (evaluated on a fine grid; about 1.2 for Muon's coefficients).
    """
    a, b_, c = coeffs
    x = np.linspace(0.0, 1.0, grid)
    for _ in range(steps):
        x = a * x + b_ * x**3 + c * x**5
    return float(np.max(x))


def operator_norm(W: Array) -> Array:
    """Spectral norm of each matrix in ``W`` of shape ``(..., m, n)``."""
    return np.linalg.norm(W, ord=2, axis=(-2, -1))


def muon(
    problem,
    W0: Array,
    eta: float | Array,
    b: int,
    steps: int,
    lam: float = 0.0,
    mu: float = 0.95,
    nesterov: bool = True,
    scale: float | None = None,
    seed: int = 1,
    record_every: int = 1,
    batches: Array | None = None,
    ns_eps: float = 1e-7,
) -> Trajectory:
    """Muon (K. Jordan et al.) on a matrix problem, with decoupled weight decay::

        B <- mu B + (1-mu) g;   M = (1-mu) g + mu B (Nesterov) or B;   O = NS5(M)
        W <- (1 - eta lam) W - eta s O,     s = sqrt(max(1, rows/cols)) unless ``scale`` is given

    ``ns_eps`` is the guard of the Frobenius normalization inside :func:`ns5` (0 makes the update exactly
    invariant to the gradient scale).

    ``extra``: ``op_norm`` (``||W_{k+1}||_op``) and ``update_op`` (``||O_k||_op``), each ``(steps, R)``.
    """
    state = {"B": 0.0}
    op_w, op_o = [], []

    def update(k, W, g, lr):
        state["B"] = mu * state["B"] + (1 - mu) * g
        M = (1 - mu) * g + mu * state["B"] if nesterov else state["B"]
        O = ns5(M, eps=ns_eps)
        s = np.sqrt(max(1.0, W.shape[-2] / W.shape[-1])) if scale is None else scale
        W_new = (1 - lr * lam) * W - lr * s * O
        op_o.append(operator_norm(O))
        op_w.append(operator_norm(W_new))
        return W_new

    traj = _run(problem, W0, eta, b, steps, seed, record_every, batches, update)
    traj.extra.update(op_norm=np.array(op_w), update_op=np.array(op_o))
    return traj


def norm_step_residual(sq_norm: Array, grad_sq: Array, eta: float | Array) -> Array:
    """Relative residual of the exact SGD norm step ``||w_{k+1}||^2 = ||w_k||^2 + eta_k^2 ||g_k||^2`` per step.

    ``sq_norm``: ``||w_k||^2`` for ``k = 0 .. K``, shape ``(K+1, ...)``; ``grad_sq``: ``||g_k||^2``, shape ``(K, ...)``;
    ``eta``: a float or shape ``(K,)``. Returns ``|(||w_{k+1}||^2 - ||w_k||^2) - eta_k^2 ||g_k||^2| / ||w_{k+1}||^2``,
    shape ``(K, ...)``: zero (to rounding) for plain SGD on a weight whose gradient is orthogonal to it.
    """
    sq, gsq = np.asarray(sq_norm, dtype=np.float64), np.asarray(grad_sq, dtype=np.float64)
    lrs = as_schedule(eta, gsq.shape[0]).reshape((-1,) + (1,) * (gsq.ndim - 1))
    return np.abs(sq[1:] - sq[:-1] - lrs**2 * gsq) / sq[1:]


def norm4_law_rhs(traj: Trajectory) -> Array:
    """``2 sum_{k<K} eta_k^2 G_k`` per run, shape ``(R,)``: the predicted ``||w_K||^4 - ||w_0||^4`` without decay."""
    return 2.0 * np.sum(traj.eta[:, None] ** 2 * traj.G, axis=0)


def sgd_equilibrium_norm4(eta: float, lam: float, G_mean: float | Array) -> Array:
    """SGD + weight decay on a scale-invariant block: ``||w_*||^4 = eta G / (lam (2 - eta lam))``."""
    return eta * np.asarray(G_mean) / (lam * (2.0 - eta * lam))


def adamw_equilibrium_norm(eta: float, lam: float, C: int) -> float:
    """AdamW equilibrium norm in the noise-dominated regime: ``sqrt(eta C / (2 lam))``, C = #elements."""
    return float(np.sqrt(eta * C / (2.0 * lam)))


def forgetting_step(x: Array, target: float | Array, rtol: float = 0.1) -> Array:
    """First index ``k`` (per column of ``x``, shape ``(n, R)``) from which ``|x_j - target| <= rtol * target``
    for all ``j >= k``; ``-1`` where that never happens."""
    x = np.asarray(x)
    ok = np.abs(x - target) <= rtol * np.asarray(target)
    # position after the last failure
    fails = ~ok
    last_fail = np.where(fails.any(0), x.shape[0] - 1 - np.argmax(fails[::-1], axis=0), -1)
    first = last_fail + 1
    return np.where(first < x.shape[0], first, -1)
