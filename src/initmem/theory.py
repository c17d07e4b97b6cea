"""Toy models and exact laws behind the theory chapter (notebooks ``T1`` ... ``T7``).

Everything here is numpy (scipy where a solver is needed), float64, and small enough to run on a
laptop CPU in seconds. The notebooks import it as ``from initmem import theory``.

Conventions
-----------
* A *batch of runs* is an array with a leading run axis ``R``: parameters have shape ``(R, *shape)``
  (``shape = (d,)`` for vectors, ``(k, d)`` for matrices). Runs in one call share the minibatch
  sequence, so runs that differ only in ``sigma`` see exactly the same data order.
* ``eta`` is the learning rate per step (a float, or an array of shape ``(steps,)`` for a schedule),
  ``b`` the batch size, ``lam`` the weight-decay coefficient (per unit learning rate, as in PyTorch).
* The three forgetting clocks of the paper (also in :mod:`initmem.metrics`), accumulated over steps::

      T_SGD = (1/b) sum_k eta_k^2,   T_L2 = lam * sum_k eta_k,   T_adapt = sum_k eta_k .

* ``sigma`` (the init scale) multiplies a fixed standard direction drawn as N(0, 1/fan_in) per entry,
  so ``||w_0|| ~= sigma`` for vectors and each row of a matrix has norm ~= sigma.

Sections
--------
1. helpers: schedules, clocks, minibatch indices, log-log slopes
2. toys: :class:`NormalizedLogistic` (scale invariant; Appendix A of the theory notes),
   :class:`NormalizedSoftmax` (per-row normalized, the matrix analogue of a BN-fed layer) and
   :class:`LinearLoss` (a constant gradient plus minibatch noise, for adaptive-optimizer regimes)
3. optimizers on those toys: :func:`sgd`, :func:`adam`, :func:`adamw`, :func:`muon`, :func:`ns5`, and the
   laws they are checked against (norm law, equilibria, Adam's step bound)
4. diagonal linear networks and Woodworth et al.'s ``Q_alpha``
5. backward error analysis: modified flows, the Smith et al. SGD modified loss, heavy-ball roots
6. independent checks: finite-difference gradients (:func:`fd_gradient_error`) and a small PyTorch
   BatchNorm MLP trained by ``torch.optim.SGD`` (:func:`bn_mlp`, :func:`bn_mlp_sgd_record`), against which the
   toys' laws are tested without relying on the toys' closed-form gradients
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import linalg, optimize
from scipy.integrate import solve_ivp
from scipy.special import expit

logger = logging.getLogger(__name__)

__all__ = [
    # helpers
    "as_schedule",
    "clocks",
    "batch_indices",
    "loglog_slope",
    "log_record_steps",
    "time_average",
    "init_scaled",
    "direction_difference",
    # scale-invariant toys
    "NormalizedLogistic",
    "make_normalized_logistic",
    "NormalizedSoftmax",
    "make_normalized_softmax",
    "LinearLoss",
    "make_linear_loss",
    # optimizers
    "Trajectory",
    "sgd",
    "adam",
    "adamw",
    "adam_step_bound",
    "ns5",
    "ns5_gain_bound",
    "muon",
    "operator_norm",
    "norm4_law_rhs",
    "sgd_equilibrium_norm4",
    "adamw_equilibrium_norm",
    "forgetting_step",
    # diagonal linear networks
    "make_sparse_regression",
    "diag_net_gd",
    "q_alpha",
    "solve_q_alpha",
    "min_l2_interpolant",
    "min_l1_interpolant",
    # backward error analysis
    "TwoParamToy",
    "gd_endpoint",
    "flow_endpoint",
    "igr_field",
    "LinearRegression",
    "make_linear_regression",
    "sgd_epoch_mean",
    "linear_flow_endpoint",
    "heavy_ball_slow_root",
    "heavy_ball_rate_prediction",
]

Array = np.ndarray

# Separate random streams for data, initial directions and minibatch order: equal integer seeds
# passed to different helpers never produce correlated draws.
_INIT_STREAM, _BATCH_STREAM = 1, 2

# --------------------------------------------------------------------------------------------
# 1. Helpers
# --------------------------------------------------------------------------------------------


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


def _unit(w: Array, axes: tuple[int, ...]) -> Array:
    return w / np.sqrt(np.sum(w**2, axis=axes, keepdims=True))


def direction_difference(w1: Array, w2: Array) -> Array:
    """``|| w1/||w1|| - w2/||w2|| ||`` per run for arrays of shape ``(..., R, d)``; the angle-like gap."""
    return np.linalg.norm(_unit(w1, (-1,)) - _unit(w2, (-1,)), axis=-1)


# --------------------------------------------------------------------------------------------
# 2. Toys
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NormalizedLogistic:
    """Logistic regression on the *direction* of ``w``: ``L(w) = mean_i log(1 + exp(-s y_i <x_i, w/||w||>))``.

    ``L(c w) = L(w)`` for every ``c > 0`` -- the one-vector model of a BatchNorm-fed layer (Appendix A of
    the theory notes). Shapes: ``X`` (N, d), ``y`` (N,) in {-1, +1}; ``s`` is a fixed logit temperature.
    Parameters passed to the methods have shape ``(d,)`` or ``(R, d)`` (a batch of runs).
    """

    X: Array
    y: Array
    s: float = 5.0

    @property
    def N(self) -> int:
        return self.X.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.X.shape[1],)

    def _margins(self, w: Array, idx: Array | None) -> tuple[Array, Array, Array, Array]:
        X = self.X if idx is None else self.X[idx]
        y = self.y if idx is None else self.y[idx]
        u = _unit(w, (-1,))
        z = self.s * y * (u @ X.T)  # (..., b)
        return X, y, u, z

    def loss(self, w: Array, idx: Array | None = None) -> Array:
        """Mean loss over ``idx`` (all samples if None); shape ``w.shape[:-1]``."""
        _, _, _, z = self._margins(w, idx)
        return np.logaddexp(0.0, -z).mean(-1)

    def grad(self, w: Array, idx: Array | None = None) -> Array:
        """Minibatch gradient, same shape as ``w``; tangential (``<w, g> = 0``) and of size ``1/||w||``."""
        X, y, u, z = self._margins(w, idx)
        coef = -(self.s * y) * expit(-z)  # d loss_i / d <x_i, u>
        gu = coef @ X / X.shape[0]
        r = np.linalg.norm(w, axis=-1, keepdims=True)
        return (gu - u * np.sum(u * gu, axis=-1, keepdims=True)) / r

    def accuracy(self, w: Array, X: Array | None = None, y: Array | None = None) -> Array:
        """Fraction of samples with ``sign <x, w> == y`` (default: the training set)."""
        X = self.X if X is None else X
        y = self.y if y is None else y
        return np.mean(np.sign(w @ X.T) == y, axis=-1)

    def unit_sample_grads(self, w: Array) -> Array:
        """Per-sample gradients at the unit vector ``w/||w||``: shape ``(*w.shape[:-1], N, d)``."""
        X, y, u, z = self._margins(w, None)
        coef = -(self.s * y) * expit(-z)  # (..., N)
        gi = coef[..., None] * X  # (..., N, d)
        return gi - u[..., None, :] * np.sum(gi * u[..., None, :], axis=-1, keepdims=True)

    def unit_grad_stats(self, w: Array) -> tuple[Array, Array]:
        """``(||grad L(w_hat)||^2, tr Sigma(w_hat))`` at the unit vector, each of shape ``w.shape[:-1]``.

        ``Sigma`` is the per-sample gradient covariance (normalized by N). The expected squared minibatch
        gradient at unit norm is ``E G = ||grad L||^2 + (N-b)/(N-1) * tr Sigma / b``.
        """
        gi = self.unit_sample_grads(w)
        gbar = gi.mean(-2)
        tr = np.mean(np.sum((gi - gbar[..., None, :]) ** 2, axis=-1), axis=-1)
        return np.sum(gbar**2, axis=-1), tr


def make_normalized_logistic(
    N: int = 512, d: int = 50, s: float = 5.0, label_noise: float = 0.5, seed: int = 0
) -> NormalizedLogistic:
    """Appendix A's toy: Gaussian inputs, labels ``sign(<x, w_teacher> + label_noise * noise)``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    wt = rng.standard_normal(d)
    y = np.sign(X @ wt + label_noise * rng.standard_normal(N))
    y[y == 0] = 1.0
    return NormalizedLogistic(X=X, y=y, s=s)


@dataclass(frozen=True)
class NormalizedSoftmax:
    """Softmax regression whose logits use unit rows: ``logit_ij = s <x_i, w_j / ||w_j||>``.

    Parameters ``W`` have shape ``(k, d)`` or ``(R, k, d)``. Each row is scale invariant on its own, like
    a linear layer followed by a per-channel normalization; so ``L(c W) = L(W)`` and
    ``grad L(c W) = grad L(W) / c``. ``X`` (N, d), integer labels ``y`` (N,) in ``0 .. k-1``.
    """

    X: Array
    y: Array
    k: int
    s: float = 4.0

    @property
    def N(self) -> int:
        return self.X.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.k, self.X.shape[1])

    def _probs(self, W: Array, X: Array) -> tuple[Array, Array]:
        U = _unit(W, (-1,))
        logits = self.s * np.einsum("nd,...kd->...nk", X, U)
        logits = logits - logits.max(-1, keepdims=True)
        P = np.exp(logits)
        return U, P / P.sum(-1, keepdims=True)

    def predict_proba(self, W: Array, X: Array | None = None) -> Array:
        """Class probabilities, shape ``(..., N, k)``."""
        return self._probs(W, self.X if X is None else X)[1]

    def loss(self, W: Array, idx: Array | None = None) -> Array:
        """Mean cross-entropy over ``idx`` (all samples if None); shape ``W.shape[:-2]``."""
        X = self.X if idx is None else self.X[idx]
        y = self.y if idx is None else self.y[idx]
        P = self._probs(W, X)[1]
        return -np.log(np.take_along_axis(P, np.broadcast_to(y[:, None], P.shape[:-1] + (1,)), -1)[..., 0]).mean(-1)

    def grad(self, W: Array, idx: Array | None = None) -> Array:
        """Minibatch gradient, same shape as ``W``; each row is orthogonal to its weight row."""
        X = self.X if idx is None else self.X[idx]
        y = self.y if idx is None else self.y[idx]
        U, P = self._probs(W, X)
        P[..., np.arange(len(y)), y] -= 1.0
        gU = self.s * np.einsum("...nk,nd->...kd", P, X) / len(y)
        r = np.linalg.norm(W, axis=-1, keepdims=True)
        return (gU - U * np.sum(U * gU, axis=-1, keepdims=True)) / r

    def accuracy(self, W: Array, X: Array | None = None, y: Array | None = None) -> Array:
        """Fraction of samples whose largest logit is the label (default: the training set)."""
        X = self.X if X is None else X
        y = self.y if y is None else y
        return np.mean(np.argmax(self.predict_proba(W, X), -1) == y, axis=-1)


def make_normalized_softmax(
    N: int = 512, N_test: int = 2000, d: int = 20, k: int = 5, s: float = 4.0, label_noise: float = 1.0,
    seed: int = 0,
) -> tuple[NormalizedSoftmax, Array, Array]:
    """A teacher-labelled k-class problem: returns ``(problem, X_test, y_test)``.

    Inputs N(0, I_d); labels ``argmax_j (<x, w*_j> + label_noise * noise_j)`` with a Gaussian teacher.
    """
    rng = np.random.default_rng(seed)
    Wt = rng.standard_normal((k, d))

    def draw(n: int) -> tuple[Array, Array]:
        X = rng.standard_normal((n, d))
        return X, np.argmax(X @ Wt.T + label_noise * rng.standard_normal((n, k)), -1)

    X, y = draw(N)
    X_test, y_test = draw(N_test)
    return NormalizedSoftmax(X=X, y=y, k=k, s=s), X_test, y_test


@dataclass(frozen=True)
class LinearLoss:
    """``L(w) = mean_i <a_i, w>``: a gradient that does not depend on ``w`` (a stationary signal plus noise).

    The minibatch gradient is the mean of ``b`` rows of ``A`` (N, d): its mean is ``a_bar = A.mean(0)`` and each
    coordinate's variance is ``(N-b)/(N-1) * var_j / b``. With ``a_bar = 0`` every update is pure noise (the
    random-walk regime of an adaptive optimizer); with ``|a_bar_j|`` large against the noise, updates are coherent.
    """

    A: Array

    @property
    def N(self) -> int:
        return self.A.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.A.shape[1],)

    def grad(self, w: Array, idx: Array | None = None) -> Array:
        """Minibatch gradient broadcast to the shape of ``w``."""
        rows = self.A if idx is None else self.A[idx]
        return np.broadcast_to(rows.mean(0), w.shape).copy()


def make_linear_loss(N: int = 512, d: int = 50, mean: float = 0.0, seed: int = 0) -> LinearLoss:
    """Rows ``a_i = mean * 1 + xi_i`` with ``xi_i`` standard normal, centred so that ``A.mean(0) = mean * 1``
    exactly."""
    xi = np.random.default_rng(seed).standard_normal((N, d))
    return LinearLoss(A=mean + xi - xi.mean(0))


# --------------------------------------------------------------------------------------------
# 3. Optimizers on the toys
# --------------------------------------------------------------------------------------------


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
    step 0 and the last step are always recorded (see :func:`log_record_steps`).
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
    problem, w0: Array, eta: float | Array, b: int, steps: int, lam: float = 0.0, momentum: float = 0.0,
    seed: int = 1, record_every: int = 1, batches: Array | None = None,
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
    problem, w0: Array, eta: float | Array, b: int, steps: int, beta1: float = 0.9, beta2: float = 0.999,
    eps: float = 1e-8, seed: int = 1, record_every: int = 1, batches: Array | None = None,
) -> Trajectory:
    """Adam (Kingma & Ba, with both bias corrections); ``adamw`` with ``lam = 0``.

    ``extra["max_update"]``: ``max_i |Delta theta_i| / eta_k`` per step (the normalized step size),
    ``extra["update_rms"]``: RMS over coordinates of ``u = m_hat / (sqrt(v_hat) + eps)``; both ``(steps, R)``.
    """
    return adamw(problem, w0, eta, b, steps, 0.0, beta1, beta2, eps, seed, record_every, batches)


def adamw(
    problem, w0: Array, eta: float | Array, b: int, steps: int, lam: float, beta1: float = 0.9,
    beta2: float = 0.999, eps: float = 1e-8, seed: int = 1, record_every: int = 1,
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
    return (
        (1 - beta1) / np.sqrt(1 - beta2) * np.sqrt((1 - r**t) / (1 - r)) * np.sqrt(1 - beta2**t) / (1 - beta1**t)
    )


#: Muon's quintic Newton-Schulz coefficients (a, b, c) from the reference implementation (K. Jordan).
NS5_COEFFS = (3.4445, -4.7750, 2.0315)


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
    problem, W0: Array, eta: float | Array, b: int, steps: int, lam: float = 0.0, mu: float = 0.95,
    nesterov: bool = True, scale: float | None = None, seed: int = 1, record_every: int = 1,
    batches: Array | None = None, ns_eps: float = 1e-7,
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


# --------------------------------------------------------------------------------------------
# 4. Diagonal linear networks and Q_alpha (Woodworth et al. 2020)
# --------------------------------------------------------------------------------------------


def make_sparse_regression(n: int = 12, d: int = 40, k: int = 3, seed: int = 0) -> tuple[Array, Array, Array]:
    """Underdetermined noiseless regression: ``X`` (n, d) Gaussian, ``w*`` k-sparse, ``y = X w*``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w_star = np.zeros(d)
    w_star[rng.choice(d, k, replace=False)] = rng.choice([-1.0, 1.0], k) * rng.uniform(1.0, 2.0, k)
    return X, X @ w_star, w_star


def diag_net_gd(
    X: Array, y: Array, alpha: Array, eta: float | Array, steps: int, b: int | None = None, seed: int = 0,
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

    res = optimize.minimize(D, np.zeros(X.shape[0]), jac=jac, hess=hess, method="trust-exact",
                            options={"gtol": 1e-12, "maxiter": 2000})
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


# --------------------------------------------------------------------------------------------
# 5. Backward error analysis
# --------------------------------------------------------------------------------------------


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
    sol = solve_ivp(lambda t, th: field_fn(th), (0.0, T), np.asarray(theta0, dtype=np.float64),
                    method="DOP853", rtol=1e-12, atol=1e-14)
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


def sgd_epoch_mean(problem: LinearRegression, w0: Array, eps: float, B: int, reshuffles: int, seed: int = 0,
                   chunk: int = 20_000) -> tuple[Array, Array]:
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


# --------------------------------------------------------------------------------------------
# 6. Independent checks: finite differences and a PyTorch BatchNorm network
# --------------------------------------------------------------------------------------------


def fd_gradient(loss: Callable[[Array], float], w: Array, h: float = 1e-6) -> Array:
    """Central finite-difference gradient ``(L(w + h e_j) - L(w - h e_j)) / 2h`` of a scalar loss, every coordinate.

    ``w``: any shape (one run, not a batch of runs); returns an array of the same shape. Error: ``O(h^2)``
    truncation plus ``O(eps_machine |L| / h)`` rounding.
    """
    w = np.asarray(w, dtype=np.float64)
    out = np.empty(w.shape)
    for j in np.ndindex(w.shape):
        e = np.zeros(w.shape)
        e[j] = h
        out[j] = (float(loss(w + e)) - float(loss(w - e))) / (2 * h)
    return out


def fd_gradient_error(problem, w: Array, idx: Array | None = None, h: float = 1e-6) -> float:
    """``||g_fd - g|| / ||g||``: the toy's closed-form minibatch gradient ``problem.grad(w, idx)`` against central
    differences of its loss ``problem.loss(., idx)`` (:func:`fd_gradient`). ``w``: one run, shape ``problem.shape``.

    An independent check of the gradient code: the identities of a scale-invariant loss (orthogonality,
    ``-1``-homogeneity, ``H w = -g``) hold for the closed-form gradient by construction, and they are statements
    about the loss only if that gradient is the loss's gradient.
    """
    g = np.asarray(problem.grad(w, idx), dtype=np.float64)
    fd = fd_gradient(lambda v: problem.loss(v, idx), w, h)
    return float(np.linalg.norm(fd - g) / np.linalg.norm(g))


def bn_mlp(n_in: int = 16, width: int = 32, n_cls: int = 4, bn_eps: float = 1e-12):
    """A float64 PyTorch MLP ``Linear -> BN -> ReLU -> Linear -> BN -> ReLU -> Linear(head)``.

    The two hidden kernels (``"0.weight"``, ``"3.weight"``) have no bias and feed a BatchNorm, so in training
    mode the loss is invariant to scaling each of their rows (up to BatchNorm's ``bn_eps``; the PyTorch default
    ``1e-5`` is a small non-invariance). The head (``"6.weight"``, with a bias) is not scale invariant.
    Initialize it with :func:`initmem.init.init_sigma_w_`.
    """
    from torch import nn

    return nn.Sequential(
        nn.Linear(n_in, width, bias=False), nn.BatchNorm1d(width, eps=bn_eps), nn.ReLU(),
        nn.Linear(width, width, bias=False), nn.BatchNorm1d(width, eps=bn_eps), nn.ReLU(),
        nn.Linear(width, n_cls),
    ).double()


def bn_mlp_data(n: int = 256, n_in: int = 16, n_cls: int = 4, seed: int = 0):
    """Teacher data for :func:`bn_mlp`: ``X ~ N(0, I)`` of shape ``(n, n_in)`` (float64 tensor) and labels
    ``argmax(tanh(X T) + 0.3 noise)`` in ``0 .. n_cls-1`` (int64 tensor), for a Gaussian teacher ``T``."""
    import torch

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_in))
    teacher = rng.standard_normal((n_in, n_cls))
    y = np.argmax(np.tanh(X @ teacher) + 0.3 * rng.standard_normal((n, n_cls)), 1)
    return torch.tensor(X), torch.tensor(y)


def bn_mlp_sgd_record(model, X, y, eta: float, b: int, steps: int, seed: int = 0) -> dict[str, dict[str, Array]]:
    """Train ``model`` (training mode) with ``torch.optim.SGD(lr=eta)`` (no momentum, no decay) on cross-entropy over
    the minibatches :func:`batch_indices` ``(len(X), b, steps, seed)``; record every 2-d weight (the kernels).

    Returns ``{name: {"sq_norm": ||W_k||^2 (steps+1,), "inner": <W_k, g_k> (steps,), "grad_sq": ||g_k||^2 (steps,)}}``
    with ``g_k`` the autograd gradient at step ``k`` (Frobenius norms and inner products). Nothing here uses the
    toys' formulas: the norm law is tested on what PyTorch computes (:func:`norm_step_residual`).
    """
    import torch

    model.train()
    kernels = {name: p for name, p in model.named_parameters() if p.ndim == 2}
    opt = torch.optim.SGD(model.parameters(), lr=eta)
    order = batch_indices(len(X), b, steps, seed)
    rec = {name: {"sq_norm": [float(p.detach().pow(2).sum())], "inner": [], "grad_sq": []}
           for name, p in kernels.items()}
    for k in range(steps):
        idx = torch.as_tensor(order[k])
        loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        with torch.no_grad():
            for name, p in kernels.items():
                rec[name]["inner"].append(float((p * p.grad).sum()))
                rec[name]["grad_sq"].append(float(p.grad.pow(2).sum()))
        opt.step()
        with torch.no_grad():
            for name, p in kernels.items():
                rec[name]["sq_norm"].append(float(p.pow(2).sum()))
    return {name: {key: np.array(v) for key, v in r.items()} for name, r in rec.items()}
